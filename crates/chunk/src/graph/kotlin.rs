//! Kotlin's facts: calls are `call_expression`s of a name or of `a.b` (navigation), constructor
//! calls included; `import a.b.C [as D]` imports `C` from `a.b`, `import a.b.*` all of it; the
//! supertypes after a class's or object's `:` are its parent types.

use tree_sitter::Node;

use super::{Extractor, last_segment};

impl Extractor<'_> {
    pub(super) fn kotlin(&mut self, node: Node<'_>) {
        match node.kind() {
            "call_expression" => {
                if let Some(callee) = node.named_child(0) {
                    self.kotlin_callee(callee);
                }
            }
            "import" => {
                self.kotlin_import(node);
                self.skip_all(node);
            }
            "package_header" => self.skip_all(node),
            "class_declaration" | "object_declaration" => self.kotlin_supertypes(node),
            _ => {}
        }
    }

    /// `f(…)`, `a.b.f(…)`: the name called and what it was reached through.
    fn kotlin_callee(&mut self, callee: Node<'_>) {
        match callee.kind() {
            "identifier" => {
                self.skip.insert(callee.id());
                self.reference(callee, true, None);
            }
            "navigation_expression" => {
                let count = callee.named_child_count();
                let (Some(receiver), Some(name)) = (
                    callee.named_child(0),
                    u32::try_from(count)
                        .ok()
                        .and_then(|c| c.checked_sub(1))
                        .and_then(|last| callee.named_child(last)),
                ) else {
                    return;
                };
                if name.kind() != "identifier" || receiver.id() == name.id() {
                    return;
                }
                let q = last_segment(self.text(receiver)).to_string();
                self.skip.insert(name.id());
                self.reference(name, true, Some(q));
            }
            _ => {}
        }
    }

    fn kotlin_import(&mut self, node: Node<'_>) {
        let mut c = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut c).collect();
        let Some(path) = children
            .iter()
            .find(|n| matches!(n.kind(), "qualified_identifier" | "identifier"))
        else {
            return;
        };
        let full = self.text(*path);
        let wildcard = children.iter().any(|n| n.kind() == "*");
        let alias = children
            .iter()
            .filter(|n| n.kind() == "identifier" && n.id() != path.id())
            .map(|n| self.text(*n))
            .next_back();
        match (wildcard, full.rsplit_once('.')) {
            (true, _) | (false, None) => self.import(full, Some("*"), None, node),
            (false, Some((module, name))) => self.import(module, Some(name), alias, node),
        }
    }

    /// `class A : B(), C, D by d` → A's parents B, C and D.
    fn kotlin_supertypes(&mut self, node: Node<'_>) {
        let Some(child) = self.field_text(node, "name") else {
            return;
        };
        let mut c = node.walk();
        let Some(specifiers) = node
            .named_children(&mut c)
            .find(|n| n.kind() == "delegation_specifiers")
        else {
            return;
        };
        let mut parents = Vec::new();
        let mut stack = vec![specifiers];
        while let Some(n) = stack.pop() {
            if n.kind() == "user_type" {
                let text = self.text(n);
                parents.push(text.split('<').next().unwrap_or(text));
                continue;
            }
            if matches!(
                n.kind(),
                "delegation_specifiers"
                    | "delegation_specifier"
                    | "constructor_invocation"
                    | "explicit_delegation"
            ) {
                let mut c = n.walk();
                stack.extend(n.named_children(&mut c));
            }
        }
        for parent in parents {
            self.relation(child, parent, node);
        }
    }
}
