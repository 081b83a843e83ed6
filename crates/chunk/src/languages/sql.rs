//! SQL: the statements that create something named are definitions — `CREATE TABLE` (a struct),
//! `CREATE VIEW` and `CREATE MATERIALIZED VIEW` (types, as derived tables), `CREATE TYPE` (an enum
//! for `AS ENUM`, else a type), `CREATE FUNCTION` and `CREATE TRIGGER` (functions) — named by
//! the object they create without its schema (`billing.invoices` → `invoices`). Comments above
//! attach. Other statements (`ALTER`, `INSERT`, `CREATE INDEX`, …) are lines of the file.

use tree_sitter::Node;

use super::{Definition, Name::By, Syntax, first_named_child, leaf, named, node_text};
use patina_core::ChunkKind::{Enum, Function, Struct, Type};

pub(super) static SQL: Syntax = Syntax {
    grammar: || tree_sitter_sequel::LANGUAGE.into(),
    rules: &[
        leaf("create_table", Struct, By(object)),
        leaf("create_view", Type, By(object)),
        leaf("create_materialized_view", Type, By(object)),
        leaf("create_type", Type, By(object)),
        leaf("create_function", Function, By(object)),
        leaf("create_trigger", Function, By(object)),
    ],
    wrappers: &["statement"],
    trivia: &[],
};

/// The object a `CREATE …` statement creates: its first object reference's name (or, for a
/// trigger, its first identifier).
fn object(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let name = match first_named_child(node, "object_reference") {
        Some(reference) if node.kind() != "create_trigger" => {
            reference.child_by_field_name("name")?
        }
        _ => first_named_child(node, "identifier")?,
    };
    if node.kind() == "create_type" && first_named_child(node, "enum_elements").is_some() {
        definition.kind = Enum;
    }
    named(
        definition,
        node_text(name, src).trim_matches(['"', '`', '[', ']']),
    )
}
