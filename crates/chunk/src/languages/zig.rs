//! Zig: functions, and the types a file declares as constants (`const Invoice = struct { … }`,
//! `enum`, `union`, `opaque`), which hold their functions; a plain constant (`const std =
//! @import("std")`) is no definition. `test "name" { … }` blocks are functions named by their
//! string. `///` doc comments attach as comments.

use tree_sitter::Node;

use super::{Definition, Name::By, Name::Field, Syntax, container, leaf, node_text, normalize};
use patina_core::ChunkKind::{Enum, Function, Struct, Type};

pub(super) static ZIG: Syntax = Syntax {
    grammar: || tree_sitter_zig::LANGUAGE.into(),
    rules: &[
        leaf("function_declaration", Function, Field("name")),
        container("variable_declaration", Struct, By(type_constant)),
        leaf("test_declaration", Function, By(test)),
    ],
    wrappers: &[],
    trivia: &[],
};

/// `const Invoice = struct { … }` (or `enum`, `union`, `opaque`): a type named by the constant.
fn type_constant(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let mut cursor = node.walk();
    let mut children = node.named_children(&mut cursor);
    let name = children.find(|c| c.kind() == "identifier")?;
    let value = children.find(|c| c.kind().ends_with("_declaration"))?;
    definition.kind = match value.kind() {
        "struct_declaration" => Struct,
        "enum_declaration" => Enum,
        "union_declaration" => Struct,
        "opaque_declaration" => Type,
        _ => return None,
    };
    definition.symbol = normalize(node_text(name, src));
    definition.symbol.as_ref().map(|_| ())
}

/// `test "total of nothing" { … }` → "total of nothing"; `test total { … }` → "total".
fn test(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let mut cursor = node.walk();
    let name = node
        .named_children(&mut cursor)
        .find(|c| matches!(c.kind(), "string" | "identifier"))?;
    let text = node_text(name, src).trim_matches('"');
    definition.symbol = normalize(text);
    definition.symbol.as_ref().map(|_| ())
}
