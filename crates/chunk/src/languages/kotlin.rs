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

/// `text` with Kotlin's context parameters and receivers (`context(Logger, Raise<E>) fun f()`,
/// `block: context(C) () -> R`) read as the annotations they stand where (`@ontext(         )`: the
/// keyword's first letter becomes `@`, the list inside the parentheses spaces, line breaks kept),
/// so the declaration parses with its context list leading it as an annotation would; borrowed
/// when there are none. The grammar predates them (Kotlin 2.2): a file that declares one fell
/// apart into errors and was cut into line windows, without a single definition. Offsets and
/// lines stay the file's own, and a chunk's text, cut from the file, still holds them. A call of a
/// function named `context` (a test DSL's `context("when empty") { … }`) is no declaration's
/// prefix and stays as written.
pub(crate) fn without_context_parameters(text: &str) -> std::borrow::Cow<'_, str> {
    const WORD: &str = "context(";
    if !text.contains(WORD) {
        return std::borrow::Cow::Borrowed(text);
    }
    let bytes = text.as_bytes();
    let mut blank: Vec<(usize, usize)> = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find(WORD).map(|i| from + i) {
        from = at + WORD.len();
        let word_start = at == 0 || !is_ident_byte(bytes[at - 1]);
        if !word_start {
            continue;
        }
        let Some(close) = closing_paren(bytes, at + WORD.len() - 1) else {
            continue;
        };
        if declares_after(&text[close + 1..]) {
            blank.push((at, close + 1));
            from = close + 1;
        }
    }
    if blank.is_empty() {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = bytes.to_vec();
    for (start, end) in blank {
        out[start] = b'@';
        for b in &mut out[start + WORD.len()..end - 1] {
            if *b != b'\n' && *b != b'\r' {
                *b = b' ';
            }
        }
    }
    // Only bytes of a parenthesised list became spaces; a multi-byte character inside one (a type
    // named in another script) was blanked whole, so the text is still UTF-8.
    std::borrow::Cow::Owned(String::from_utf8(out).unwrap_or_else(|_| text.to_string()))
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// The index of the `)` closing the `(` at `open`, within 1,000 bytes.
fn closing_paren(bytes: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &b) in bytes.iter().enumerate().skip(open).take(1_000) {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            b'{' | b'}' | b';' | b'"' => return None,
            _ => {}
        }
    }
    None
}

/// Whether what follows a `context(…)` is what it qualifies: a declaration (its modifiers,
/// annotations or keyword), another context list, or a function type's parameter list.
fn declares_after(rest: &str) -> bool {
    let rest = rest.trim_start();
    if rest.starts_with('(') || rest.starts_with('@') || rest.starts_with("context(") {
        return true;
    }
    let word: &str = rest
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .next()
        .unwrap_or("");
    matches!(
        word,
        "fun"
            | "val"
            | "var"
            | "class"
            | "interface"
            | "object"
            | "public"
            | "private"
            | "internal"
            | "protected"
            | "override"
            | "open"
            | "abstract"
            | "final"
            | "suspend"
            | "inline"
            | "operator"
            | "infix"
            | "tailrec"
            | "external"
            | "data"
            | "sealed"
            | "enum"
            | "value"
            | "annotation"
            | "expect"
            | "actual"
            | "const"
            | "lateinit"
    )
}
