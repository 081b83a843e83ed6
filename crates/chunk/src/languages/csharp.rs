//! C#: a namespace with braces holds its types (`namespace X;` is a statement the file's types
//! follow); classes, structs, interfaces and records hold their constructors, methods and
//! properties, indexers, events with accessors and operators (read as methods: code a caller
//! runs; an operator is named as written, `operator +`, `operator bool`); enums and delegates
//! stand alone. Attributes (`[Serializable]`) are inside the declaration's node. Conditional
//! compilation is read as one build ([`super::conditional`]).

use tree_sitter::Node;

use super::{
    Definition, Name::By, Name::Field, Syntax, container, field_text, leaf, node_text, normalize,
};
use patina_core::ChunkKind::{Class, Enum, Interface, Method, Module, Struct, Type};

pub(super) static CSHARP: Syntax = Syntax {
    grammar: || tree_sitter_c_sharp::LANGUAGE.into(),
    rules: &[
        container("namespace_declaration", Module, By(namespace)),
        container("class_declaration", Class, Field("name")),
        container("record_declaration", Class, Field("name")),
        container("struct_declaration", Struct, Field("name")),
        container("interface_declaration", Interface, Field("name")),
        leaf("enum_declaration", Enum, Field("name")),
        leaf("delegate_declaration", Type, Field("name")),
        leaf("method_declaration", Method, Field("name")),
        leaf("constructor_declaration", Method, Field("name")),
        leaf("destructor_declaration", Method, Field("name")),
        leaf("property_declaration", Method, Field("name")),
        leaf("indexer_declaration", Method, By(indexer)),
        leaf("event_declaration", Method, Field("name")),
        leaf("operator_declaration", Method, By(operator)),
        leaf("conversion_operator_declaration", Method, By(conversion)),
    ],
    wrappers: &[],
    // `#region Name` and `#pragma warning disable …` open what follows.
    trivia: &["preproc_region", "preproc_pragma"],
};

/// `namespace Acme.Billing` → "Billing" owned by `Acme` (`A.B.C` → "C" in "B", as if nested):
/// a dotted name is looked up as its last name inside the one before (`Acme.Billing`,
/// `Billing.Invoice`), as for every language.
fn namespace(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let name = node.child_by_field_name("name")?;
    if name.kind() == "qualified_name" {
        definition.symbol = field_text(name, "name", src);
        definition.owner = field_text(name, "qualifier", src)
            .map(|scope| scope.rsplit('.').next().unwrap_or(&scope).to_string());
    } else {
        definition.symbol = field_text(node, "name", src);
    }
    definition.symbol.as_ref().map(|_| ())
}

/// `this[int index]` is named `this`, as C# writes it.
fn indexer(_: Node<'_>, _: &str, _: bool, definition: &mut Definition) -> Option<()> {
    definition.symbol = Some("this".to_string());
    Some(())
}

/// `public static Money operator +(Money a, Money b)` → "operator +".
fn operator(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let symbol = node_text(node.child_by_field_name("operator")?, src);
    definition.symbol = Some(format!("operator {symbol}"));
    Some(())
}

/// `public static explicit operator bool(JToken value)` → "operator bool".
fn conversion(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let ty = normalize(node_text(node.child_by_field_name("type")?, src))?;
    definition.symbol = Some(format!("operator {ty}"));
    Some(())
}
