//! Swift: `class`, `struct`, `enum`, `actor` and `extension` are one node kind told apart by
//! their keyword; they and protocols hold their functions, initialisers and subscripts. An
//! `extension T` is an impl of `T` whose members are `T`'s. Attributes (`@available`) are inside
//! the declaration's node; `///` doc comments attach as comments.

use tree_sitter::Node;

use super::{Definition, Name::By, Name::Field, Syntax, container, field_text, leaf, node_text};
use patina_core::ChunkKind::{Class, Enum, Function, Impl, Interface, Method, Struct, Type};

pub(super) static SWIFT: Syntax = Syntax {
    grammar: || tree_sitter_swift::LANGUAGE.into(),
    rules: &[
        container("class_declaration", Class, By(declaration)),
        container("protocol_declaration", Interface, Field("name")),
        leaf("function_declaration", Function, Field("name")),
        leaf("protocol_function_declaration", Method, Field("name")),
        leaf("init_declaration", Method, By(keyword)),
        leaf("deinit_declaration", Method, By(keyword)),
        leaf("subscript_declaration", Method, By(keyword)),
        leaf("typealias_declaration", Type, Field("name")),
    ],
    wrappers: &[],
    trivia: &[],
};

/// `class`/`actor` (a class), `struct`, `enum`, and `extension T` (an impl of `T`, whose members
/// are `T`'s): the keyword in the `declaration_kind` field says which.
fn declaration(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let keyword = node
        .child_by_field_name("declaration_kind")
        .map_or("class", |k| node_text(k, src));
    definition.kind = match keyword {
        "struct" => Struct,
        "enum" => Enum,
        "extension" => Impl,
        _ => Class,
    };
    let name = node.child_by_field_name("name")?;
    // `extension Array where Element: Numeric`, `extension Foo.Bar`: the extended type's name.
    let text = node_text(name, src);
    let bare = text.split('<').next().unwrap_or(text);
    let bare = bare.rsplit('.').next().unwrap_or(bare).trim();
    definition.symbol = (!bare.is_empty()).then(|| bare.to_string());
    if definition.kind == Impl {
        definition.member_parent = definition.symbol.clone();
    }
    definition.symbol.as_ref().map(|_| ())
}

/// `init`, `deinit`, `subscript`: named by their keyword, as written.
fn keyword(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let first = node.child(0)?;
    let first = if first.kind() == "modifiers" || first.kind() == "attribute" {
        let mut cursor = node.walk();
        node.children(&mut cursor)
            .find(|c| matches!(c.kind(), "init" | "deinit" | "subscript"))?
    } else {
        first
    };
    definition.symbol = match first.kind() {
        "init" | "deinit" | "subscript" => Some(first.kind().to_string()),
        _ => field_text(node, "name", src),
    };
    definition.symbol.as_ref().map(|_| ())
}
