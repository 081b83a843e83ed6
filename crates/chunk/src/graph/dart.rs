//! Dart's facts: calls are read by the common rules (`f(…)`, `a.f(…)`, constructors); an import
//! makes every public name of the library visible (a wildcard) unless it says which (`show a`)
//! or binds a prefix (`as p`); a class's `extends`, `with` and `implements` give its parents, a
//! mixin's `on` and `implements` too.

use tree_sitter::Node;

use super::Extractor;

impl Extractor<'_> {
    pub(super) fn dart(&mut self, node: Node<'_>) {
        match node.kind() {
            "import_specification" => {
                self.dart_import(node);
                self.skip_all(node);
            }
            "library_export" | "part_directive" | "part_of_directive" | "library_name" => {
                self.skip_all(node);
            }
            "class_declaration" | "mixin_declaration" | "enum_declaration" => {
                self.dart_parents(node);
            }
            _ => {}
        }
    }

    /// `import 'package:a/b.dart'`, `… as p`, `… show A, B`, `… hide C`.
    fn dart_import(&mut self, node: Node<'_>) {
        let Some(uri) = node.child_by_field_name("uri") else {
            return;
        };
        let module = self.text(uri).trim().trim_matches(['\'', '"']);
        let alias = node.child_by_field_name("alias").map(|a| self.text(a));
        let mut c = node.walk();
        let shown: Vec<&str> = node
            .named_children(&mut c)
            .filter(|n| n.kind() == "combinator" && self.text(*n).starts_with("show"))
            .flat_map(|n| {
                let mut c = n.walk();
                n.named_children(&mut c)
                    .map(|i| self.text(i))
                    .collect::<Vec<_>>()
            })
            .collect();
        if alias.is_some() {
            self.import(module, None, alias, node);
        } else if shown.is_empty() {
            self.import(module, Some("*"), None, node);
        }
        for name in shown {
            if alias.is_none() {
                self.import(module, Some(name), None, node);
            }
        }
    }

    /// `class A extends B with M implements I` → A's parents B, M and I.
    fn dart_parents(&mut self, node: Node<'_>) {
        let Some(child) = self.field_text(node, "name") else {
            return;
        };
        let mut parents = Vec::new();
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            let mut c = n.walk();
            for k in n.named_children(&mut c) {
                match k.kind() {
                    "superclass" | "mixins" | "interfaces" => stack.push(k),
                    "type" if n.id() != node.id() => {
                        let text = self.text(k);
                        parents.push(text.split('<').next().unwrap_or(text).trim());
                    }
                    _ => {}
                }
            }
        }
        for parent in parents {
            self.relation(child, parent, node);
        }
    }
}
