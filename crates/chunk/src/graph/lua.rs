//! Lua's facts: calls of a name, of `t.f` and `t:m` (a declared name is no reference of its
//! own); `require "a.b"` imports module `a.b`, under the local name it is assigned to
//! (`local b = require("a.b")`). Lua has no declared types, so no type relations.

use tree_sitter::Node;

use super::{Extractor, last_segment};

impl<'a> Extractor<'a> {
    pub(super) fn lua(&mut self, node: Node<'_>) {
        match node.kind() {
            "function_call" => {
                if self.skip.contains(&node.id()) {
                    return;
                }
                if let Some(module) = self.lua_required(node) {
                    self.import(module, None, None, node);
                    self.skip_all(node);
                    return;
                }
                if let Some(name) = node.child_by_field_name("name") {
                    self.lua_callee(name);
                }
            }
            "assignment_statement" => self.lua_require_binding(node),
            "function_declaration" => {
                // `function M.f` names `f` in `M`: neither is a reference.
                if let Some(name) = node.child_by_field_name("name") {
                    self.skip_all(name);
                }
            }
            _ => {}
        }
    }

    /// The module of a `require "a.b"` / `require("a.b")` call.
    fn lua_required(&self, call: Node<'_>) -> Option<&'a str> {
        let name = call.child_by_field_name("name")?;
        if name.kind() != "identifier" || self.text(name) != "require" {
            return None;
        }
        let arguments = call.child_by_field_name("arguments")?;
        let string = if arguments.kind() == "string" {
            arguments
        } else {
            arguments.named_child(0)?
        };
        if string.kind() != "string" {
            return None;
        }
        string
            .child_by_field_name("content")
            .map(|content| self.text(content))
    }

    /// `local b = require("a.b")`: the import, bound to `b`.
    fn lua_require_binding(&mut self, node: Node<'_>) {
        let mut c = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut c).collect();
        let (Some(names), Some(values)) = (
            children.iter().find(|n| n.kind() == "variable_list"),
            children.iter().find(|n| n.kind() == "expression_list"),
        ) else {
            return;
        };
        if names.named_child_count() != 1 || values.named_child_count() != 1 {
            return;
        }
        let (Some(name), Some(value)) = (names.named_child(0), values.named_child(0)) else {
            return;
        };
        if name.kind() != "identifier" || value.kind() != "function_call" {
            return;
        }
        if let Some(module) = self.lua_required(value) {
            let alias = self.text(name);
            self.import(module, None, Some(alias), value);
            self.skip_all(value);
        }
    }

    fn lua_callee(&mut self, callee: Node<'_>) {
        let (name, table) = match callee.kind() {
            "identifier" => (Some(callee), None),
            "dot_index_expression" => (
                callee.child_by_field_name("field"),
                callee.child_by_field_name("table"),
            ),
            "method_index_expression" => (
                callee.child_by_field_name("method"),
                callee.child_by_field_name("table"),
            ),
            _ => (None, None),
        };
        let Some(name) = name else { return };
        let q = table.map(|t| last_segment(self.text(t)).to_string());
        self.skip.insert(name.id());
        self.reference(name, true, q);
    }
}
