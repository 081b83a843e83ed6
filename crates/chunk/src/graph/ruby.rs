//! Ruby's facts: calls are `call` nodes named by their `method` (reached through their
//! `receiver`); `require 'x'` and `require_relative 'x'` are imports, the latter spelled as the
//! relative path it is (`./x`) so resolution can tell it from a load-path name; a class's
//! superclass is its parent type.

use tree_sitter::Node;

use super::{Extractor, last_segment};

impl Extractor<'_> {
    pub(super) fn ruby(&mut self, node: Node<'_>) {
        match node.kind() {
            "call" => self.ruby_call(node),
            "class" => {
                let (Some(name), Some(superclass)) = (
                    node.child_by_field_name("name"),
                    node.child_by_field_name("superclass"),
                ) else {
                    return;
                };
                let child = last_segment(self.text(name));
                let parent = self.text(superclass).trim_start_matches('<');
                self.relation(child, parent, node);
            }
            _ => {}
        }
    }

    fn ruby_call(&mut self, node: Node<'_>) {
        let Some(method) = node.child_by_field_name("method") else {
            return;
        };
        let receiver = node.child_by_field_name("receiver");
        let name = self.text(method);
        if receiver.is_none() && matches!(name, "require" | "require_relative") {
            let argument = node
                .child_by_field_name("arguments")
                .and_then(|a| a.named_child(0))
                .filter(|a| a.kind() == "string" && a.named_child_count() <= 1);
            if let Some(argument) = argument {
                let path = self.text(argument).trim_matches(['"', '\'']);
                if name == "require_relative" && !path.starts_with('.') {
                    self.import(&format!("./{path}"), None, None, node);
                } else {
                    self.import(path, None, None, node);
                }
                self.skip_all(node);
                return;
            }
        }
        let qualifier = receiver.map(|r| last_segment(self.text(r)).to_string());
        self.skip.insert(method.id());
        self.reference(method, true, qualifier);
    }
}
