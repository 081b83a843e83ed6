//! Kotlin: classes (interfaces and enum classes are `class_declaration`s too) and objects hold
//! their functions and secondary constructors; a companion object is no definition of its own
//! (its functions are the class's, called through it). An extension function `fun T.f()` is
//! owned by its receiver type `T`. A property at the top of a file that takes several lines is a
//! definition too: Kotlin builds things by DSL there (`val appModule = module { … }`, Compose's
//! `val LocalTheme = compositionLocalOf { … }`, `val Context.koin: Koin get() = …`); a one-line
//! `val` stays with the code around it, as a class's properties stay in its header.

use tree_sitter::Node;

use super::{
    Definition, Name::By, Name::Field, Syntax, container, field_text, leaf, multiline, node_text,
    normalize,
};
use patina_core::ChunkKind::{Class, Const, Enum, Function, Interface, Method, Type};

pub(super) static KOTLIN: Syntax = Syntax {
    grammar: || tree_sitter_kotlin_ng::LANGUAGE.into(),
    rules: &[
        container("class_declaration", Class, By(class)),
        container("object_declaration", Class, Field("name")),
        leaf("function_declaration", Function, By(function)),
        leaf("secondary_constructor", Method, By(constructor)),
        leaf("type_alias", Type, Field("type")),
        leaf("property_declaration", Const, By(top_level_property)),
        leaf("infix_expression", Class, By(misread_class)),
    ],
    // The grammar reads `@DslMarker annotation class Marker` (no body) as an annotated
    // expression: the annotation belongs to the class inside it.
    wrappers: &["annotated_expression"],
    trivia: &[],
};

/// `class`, `data class`, `interface`, `enum class`: one node kind, told apart by a keyword child
/// or the enum's body.
fn class(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    definition.symbol = field_text(node, "name", src);
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        match child.kind() {
            "interface" => definition.kind = Interface,
            "enum_class_body" => definition.kind = Enum,
            _ => {}
        }
    }
    definition.symbol.as_ref().map(|_| ())
}

/// `fun f()`; `fun Invoice.print()` is an extension: a method owned by its receiver type, which
/// is the type written before the name (the return type comes after the parameters).
fn function(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let name = node.child_by_field_name("name")?;
    definition.symbol = normalize(node_text(name, src));
    let mut cursor = node.walk();
    let receiver = node
        .named_children(&mut cursor)
        .take_while(|child| child.id() != name.id())
        .find(|child| {
            matches!(
                child.kind(),
                "user_type" | "nullable_type" | "parenthesized_type"
            )
        });
    if let Some(receiver) = receiver {
        definition.kind = Method;
        definition.owner = receiver_name(receiver, src);
    }
    definition.symbol.as_ref().map(|_| ())
}

/// `List<T>?` → "List", `a.b.Foo` → "Foo".
fn receiver_name(ty: Node<'_>, src: &str) -> Option<String> {
    let text = node_text(ty, src);
    let bare = text.split('<').next().unwrap_or(text);
    let bare = bare.trim_matches(['(', ')', '?', ' ']);
    normalize(bare.rsplit('.').next().unwrap_or(bare))
}

/// A secondary constructor has no name of its own: it is the class's `constructor`, as written.
fn constructor(_: Node<'_>, _: &str, _: bool, definition: &mut Definition) -> Option<()> {
    definition.symbol = Some("constructor".to_string());
    Some(())
}

/// A property outside any class or object, written over several lines; an extension property
/// (`val Context.koin`) is owned by its receiver.
fn top_level_property(
    node: Node<'_>,
    src: &str,
    in_container: bool,
    definition: &mut Definition,
) -> Option<()> {
    if in_container || !multiline(node) {
        return None;
    }
    let mut cursor = node.walk();
    let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
    let variable = children
        .iter()
        .find(|child| child.kind() == "variable_declaration")?;
    let mut cursor = variable.walk();
    let name = variable
        .named_children(&mut cursor)
        .find(|child| child.kind() == "identifier")?;
    definition.symbol = normalize(node_text(name, src));
    definition.owner = children
        .iter()
        .take_while(|child| child.id() != variable.id())
        .find(|child| matches!(child.kind(), "user_type" | "nullable_type"))
        .and_then(|receiver| receiver_name(*receiver, src));
    definition.symbol.as_ref().map(|_| ())
}

/// A class without a body after a soft modifier — `annotation class Marker`, `data class P` on a
/// line of its own after an annotation — which the grammar misreads as an infix call
/// `annotation class(Marker)`: three names, the middle one `class`, `interface` or `object`.
fn misread_class(
    node: Node<'_>,
    src: &str,
    in_container: bool,
    definition: &mut Definition,
) -> Option<()> {
    if in_container || node.named_child_count() != 3 {
        return None;
    }
    let mut cursor = node.walk();
    let words: Vec<&str> = node
        .named_children(&mut cursor)
        .map(|c| (c.kind() == "identifier").then(|| node_text(c, src)))
        .collect::<Option<_>>()?;
    let modifiers = [
        "annotation",
        "data",
        "enum",
        "value",
        "sealed",
        "open",
        "abstract",
        "inner",
        "private",
        "internal",
        "public",
        "expect",
        "actual",
    ];
    if !modifiers.contains(&words[0]) || !matches!(words[1], "class" | "interface" | "object") {
        return None;
    }
    if words[1] == "interface" {
        definition.kind = Interface;
    }
    definition.symbol = normalize(words[2]);
    definition.symbol.as_ref().map(|_| ())
}
