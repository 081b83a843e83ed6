//! Dart: classes, mixins, enums and extensions hold their methods, getters, setters, operators
//! and constructors (named ones by their own name: `Invoice.blank` is "blank"; the unnamed one by
//! the class's); an `extension E on T` is an impl whose members are `T`'s. Fields are no
//! definitions. Annotations are inside the declaration; `///` comments attach as comments.

use tree_sitter::Node;

use super::{
    Definition, Name::By, Name::Field, Syntax, container, field_text, leaf, node_text, normalize,
};
use patina_core::ChunkKind::{Class, Enum, Function, Impl, Method, Trait, Type};

pub(super) static DART: Syntax = Syntax {
    grammar: || tree_sitter_dart::LANGUAGE.into(),
    rules: &[
        container("class_declaration", Class, Field("name")),
        container("mixin_declaration", Trait, Field("name")),
        container("enum_declaration", Enum, Field("name")),
        container("extension_declaration", Impl, By(extension)),
        container("extension_type_declaration", Class, Field("name")),
        leaf("member_declaration", Method, By(member)),
        leaf("function_declaration", Function, By(function)),
        leaf("type_alias", Type, By(type_alias)),
    ],
    wrappers: &[],
    trivia: &["annotation"],
};

/// `extension Describe on Invoice` → "Describe", whose members are `Invoice`'s; an unnamed
/// extension is named by its type.
fn extension(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let on = node.child_by_field_name("class").and_then(|ty| {
        let text = node_text(ty, src);
        normalize(text.split('<').next().unwrap_or(text))
    });
    definition.symbol = field_text(node, "name", src).or_else(|| on.clone());
    definition.member_parent = on;
    definition.symbol.as_ref().map(|_| ())
}

/// A member with code: a method, getter, setter, operator or constructor (abstract ones too);
/// fields are none.
fn member(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let mut cursor = node.walk();
    let inner = node
        .named_children(&mut cursor)
        .find(|c| matches!(c.kind(), "method_declaration" | "declaration"))?;
    let signature = match inner.kind() {
        "method_declaration" => inner.child_by_field_name("signature")?.named_child(0)?,
        _ => {
            let mut cursor = inner.walk();
            inner
                .named_children(&mut cursor)
                .find(|c| c.kind().ends_with("_signature"))?
        }
    };
    definition.symbol = signature_name(signature, src);
    definition.symbol.as_ref().map(|_| ())
}

/// A top-level function, named in its signature.
fn function(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    definition.symbol = signature_name(node.child_by_field_name("signature")?, src);
    definition.symbol.as_ref().map(|_| ())
}

/// `typedef Amount = int;` → "Amount".
fn type_alias(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let mut cursor = node.walk();
    let name = node
        .named_children(&mut cursor)
        .find(|c| c.kind() == "type_identifier")?;
    definition.symbol = normalize(node_text(name, src));
    definition.symbol.as_ref().map(|_| ())
}

/// The name a signature declares: its last `name` (a named constructor `Invoice.blank(…)` is
/// "blank"; `Invoice(…)` is "Invoice"); an operator is `operator +`.
fn signature_name(signature: Node<'_>, src: &str) -> Option<String> {
    if signature.kind() == "operator_signature" {
        let mut cursor = signature.walk();
        let operator = signature
            .children(&mut cursor)
            .find(|c| c.kind().ends_with("operator") || c.kind() == "binary_operator")
            .map(|c| node_text(c, src).to_string());
        return operator.map(|op| format!("operator {op}"));
    }
    let mut cursor = signature.walk();
    let name = signature
        .children_by_field_name("name", &mut cursor)
        .last()
        .map(|n| node_text(n, src));
    name.and_then(normalize)
}
