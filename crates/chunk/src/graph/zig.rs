//! Zig's facts: calls of a name or of `a.b(…)` (read by the common rules); `const m =
//! @import("m.zig")` imports that file (or package) under the constant's name, and a constant's
//! own name is no reference. Zig has no inheritance.

use tree_sitter::Node;

use super::Extractor;

impl<'a> Extractor<'a> {
    pub(super) fn zig(&mut self, node: Node<'_>) {
        match node.kind() {
            "variable_declaration" => {
                let mut c = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut c).collect();
                let Some(name) = children.iter().find(|n| n.kind() == "identifier") else {
                    return;
                };
                self.skip.insert(name.id());
                let import = children
                    .iter()
                    .find(|n| n.kind() == "builtin_function")
                    .and_then(|b| self.zig_imported(*b).map(|m| (*b, m)));
                if let Some((builtin, module)) = import {
                    let alias = self.text(*name);
                    self.import(module, None, Some(alias), node);
                    self.skip_all(builtin);
                }
            }
            "builtin_function" if !self.skip.contains(&node.id()) => {
                if let Some(module) = self.zig_imported(node) {
                    self.import(module, None, None, node);
                    self.skip_all(node);
                }
            }
            _ => {}
        }
    }

    /// The path or package of an `@import("…")`.
    fn zig_imported(&self, builtin: Node<'_>) -> Option<&'a str> {
        let mut c = builtin.walk();
        let mut children = builtin.named_children(&mut c);
        let id = children.next()?;
        if self.text(id) != "@import" {
            return None;
        }
        let arguments = children.next()?;
        let string = arguments.named_child(0)?;
        let content = string.named_child(0)?;
        (content.kind() == "string_content").then(|| self.text(content))
    }
}
