//! SQL's facts: a table, view or type a statement names (`FROM invoices`, `JOIN`, `INSERT INTO`,
//! `UPDATE`, `REFERENCES customers (id)`, `ALTER TABLE`, a column of a custom type) is a
//! reference to it, by its name without the schema; a function invoked is a call. The object a
//! `CREATE …` statement creates is no reference, nor are columns, aliases and literals. SQL has
//! no imports and no inheritance.

use tree_sitter::Node;

use super::Extractor;
use crate::languages::first_named_child;

/// `CREATE …` statements whose first object reference is the object they create.
const CREATES: &[&str] = &[
    "create_table",
    "create_view",
    "create_materialized_view",
    "create_type",
    "create_function",
    "create_sequence",
];

impl Extractor<'_> {
    pub(super) fn sql(&mut self, node: Node<'_>) {
        match node.kind() {
            kind if CREATES.contains(&kind) => {
                if let Some(created) = first_named_child(node, "object_reference") {
                    self.skip_all(created);
                }
            }
            "invocation" => {
                let function = first_named_child(node, "object_reference");
                if let Some(name) = function.and_then(|f| f.child_by_field_name("name")) {
                    if let Some(f) = function {
                        self.skip_all(f);
                    }
                    self.reference(name, true, None);
                }
            }
            // A column, `c.email`: its qualifier is mostly an alias, not an object.
            "field" => self.skip_all(node),
            "object_reference" if !self.skip.contains(&node.id()) => {
                if let Some(name) = node.child_by_field_name("name") {
                    let schema = node
                        .child_by_field_name("schema")
                        .map(|s| self.text(s).to_string());
                    self.reference(name, false, schema);
                }
                self.skip_all(node);
            }
            _ => {}
        }
    }
}
