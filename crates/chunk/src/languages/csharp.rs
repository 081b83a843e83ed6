//! C#: a namespace with braces holds its types (`namespace X;` is a statement the file's types
//! follow); classes, structs, interfaces and records hold their constructors, methods and
//! properties (a property is read as a method: it is code a caller runs); enums and delegates
//! stand alone. Attributes (`[Serializable]`) are inside the declaration's node. Conditional
//! compilation is read as one build ([`super::conditional`]).

use tree_sitter::Node;

use super::{Definition, Name::By, Name::Field, Syntax, container, field_text, leaf};
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
