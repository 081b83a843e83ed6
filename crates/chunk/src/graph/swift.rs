//! Swift's facts: calls of a name (initialisers included: `Invoice(…)`) or of `a.b(…)`;
//! `import M` makes every public name of module `M` visible (a wildcard), `import class M.C` one
//! of them; a type's inheritance clause (`class A: B, P`, `extension A: P`) gives its parents.

use tree_sitter::Node;

use super::{Extractor, last_segment};

impl Extractor<'_> {
    pub(super) fn swift(&mut self, node: Node<'_>) {
        match node.kind() {
            "call_expression" => {
                if let Some(callee) = node.named_child(0) {
                    self.swift_callee(callee);
                }
            }
            "import_declaration" => {
                self.swift_import(node);
                self.skip_all(node);
            }
            "class_declaration" | "protocol_declaration" => self.swift_parents(node),
            _ => {}
        }
    }

    /// `f(…)`, `a.b.f(…)`: the name called and what it was reached through.
    fn swift_callee(&mut self, callee: Node<'_>) {
        match callee.kind() {
            "simple_identifier" => {
                self.skip.insert(callee.id());
                self.reference(callee, true, None);
            }
            "navigation_expression" => {
                let (Some(target), Some(name)) = (
                    callee.child_by_field_name("target"),
                    callee
                        .child_by_field_name("suffix")
                        .and_then(|s| s.child_by_field_name("suffix")),
                ) else {
                    return;
                };
                if name.kind() != "simple_identifier" {
                    return;
                }
                let q = last_segment(self.text(target)).to_string();
                self.skip.insert(name.id());
                self.reference(name, true, Some(q));
            }
            _ => {}
        }
    }

    /// `import Foundation` (all of it), `@testable import Shop`, `import class UIKit.UIView`.
    fn swift_import(&mut self, node: Node<'_>) {
        let mut c = node.walk();
        let Some(path) = node
            .named_children(&mut c)
            .find(|n| n.kind() == "identifier")
        else {
            return;
        };
        let full = self.text(path);
        let mut c = node.walk();
        let one_symbol = node.children(&mut c).any(|n| {
            matches!(
                n.kind(),
                "class" | "struct" | "enum" | "protocol" | "typealias" | "func" | "var" | "let"
            )
        });
        match full.rsplit_once('.') {
            Some((module, name)) if one_symbol => self.import(module, Some(name), None, node),
            _ => self.import(full, Some("*"), None, node),
        }
    }

    /// `class A: B, P` → A's parents B and P; `extension A: P` → P.
    fn swift_parents(&mut self, node: Node<'_>) {
        let Some(child) = node.child_by_field_name("name").map(|n| self.text(n)) else {
            return;
        };
        let child = child.split('<').next().unwrap_or(child).trim();
        let mut c = node.walk();
        let parents: Vec<&str> = node
            .named_children(&mut c)
            .filter(|n| n.kind() == "inheritance_specifier")
            .filter_map(|n| n.child_by_field_name("inherits_from"))
            .map(|t| {
                let text = self.text(t);
                text.split('<').next().unwrap_or(text)
            })
            .collect();
        for parent in parents {
            self.relation(last_segment(child), parent, node);
        }
    }
}
