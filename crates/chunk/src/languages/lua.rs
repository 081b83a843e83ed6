//! Lua: functions, named as declared (`function M.new` is "new" owned by the module table `M`,
//! `function M:add` a method of `M`) or as assigned (`M.total = function … end`,
//! `local decode = function … end`). Lua has no classes: a table with functions is a module or
//! a class by convention only, so tables are no definitions.

use tree_sitter::Node;

use super::{Definition, Name::By, Syntax, field_text, leaf, node_text, normalize};
use patina_core::ChunkKind::{Function, Method};

pub(super) static LUA: Syntax = Syntax {
    grammar: || tree_sitter_lua::LANGUAGE.into(),
    rules: &[
        leaf("function_declaration", Function, By(declared)),
        leaf("assignment_statement", Function, By(assigned)),
    ],
    wrappers: &["variable_declaration"],
    trivia: &[],
};

/// `function f`, `function M.f`, `function M:f`.
fn declared(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    name_from(node.child_by_field_name("name")?, src, definition)
}

/// `x = function … end` with one name and one value.
fn assigned(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let mut cursor = node.walk();
    let (mut names, mut values) = (None, None);
    for child in node.named_children(&mut cursor) {
        match child.kind() {
            "variable_list" => names = Some(child),
            "expression_list" => values = Some(child),
            _ => {}
        }
    }
    let (names, values) = (names?, values?);
    if names.named_child_count() != 1 || values.named_child_count() != 1 {
        return None;
    }
    if values.named_child(0)?.kind() != "function_definition" {
        return None;
    }
    name_from(names.named_child(0)?, src, definition)
}

/// The definition's name and owner from the expression it is bound to.
fn name_from(name: Node<'_>, src: &str, definition: &mut Definition) -> Option<()> {
    match name.kind() {
        "identifier" => definition.symbol = normalize(node_text(name, src)),
        "dot_index_expression" => {
            definition.symbol = field_text(name, "field", src);
            definition.owner = table_name(name, src);
        }
        "method_index_expression" => {
            definition.symbol = field_text(name, "method", src);
            definition.owner = table_name(name, src);
            definition.kind = Method;
        }
        _ => return None,
    }
    definition.symbol.as_ref().map(|_| ())
}

/// `a.b.C` of `a.b.C.f` → "C".
fn table_name(index: Node<'_>, src: &str) -> Option<String> {
    let table = field_text(index, "table", src)?;
    normalize(table.rsplit(['.', ':']).next().unwrap_or(&table))
}
