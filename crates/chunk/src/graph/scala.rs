//! Scala's facts: calls of a name, of `a.f` and `f[T]`, and `new T(…)`; `import a.b.C`,
//! `import a.b.{C, D => E}`, `import a.b._` (or `*`, or Scala 3's `C as E`) import from `a.b`;
//! the types after `extends` and `with` are a definition's parents.

use tree_sitter::Node;

use super::{Extractor, last_segment};

impl Extractor<'_> {
    pub(super) fn scala(&mut self, node: Node<'_>) {
        match node.kind() {
            "call_expression" => {
                if let Some(function) = node.child_by_field_name("function") {
                    self.scala_callee(function);
                }
            }
            "instance_expression" => {
                let mut c = node.walk();
                let ty = node
                    .named_children(&mut c)
                    .find(|n| matches!(n.kind(), "type_identifier" | "generic_type"));
                let name = ty.and_then(|t| {
                    if t.kind() == "generic_type" {
                        t.child_by_field_name("type")
                    } else {
                        Some(t)
                    }
                });
                if let Some(name) = name.filter(|n| n.kind() == "type_identifier") {
                    self.skip.insert(name.id());
                    self.reference(name, true, None);
                }
            }
            "import_declaration" => {
                self.scala_import(node);
                self.skip_all(node);
            }
            "package_clause" => {
                if let Some(name) = node.child_by_field_name("name") {
                    self.skip_all(name);
                }
            }
            "class_definition" | "object_definition" | "trait_definition" | "enum_definition" => {
                self.scala_parents(node)
            }
            _ => {}
        }
    }

    fn scala_callee(&mut self, callee: Node<'_>) {
        let (name, value) = match callee.kind() {
            "identifier" => (Some(callee), None),
            "field_expression" => (
                callee.child_by_field_name("field"),
                callee.child_by_field_name("value"),
            ),
            "generic_function" => {
                if let Some(function) = callee.child_by_field_name("function") {
                    self.scala_callee(function);
                }
                return;
            }
            _ => (None, None),
        };
        let Some(name) = name.filter(|n| n.kind() == "identifier") else {
            return;
        };
        let q = value.map(|v| last_segment(self.text(v)).to_string());
        self.skip.insert(name.id());
        self.reference(name, true, q);
    }

    fn scala_import(&mut self, node: Node<'_>) {
        let mut c = node.walk();
        let path: Vec<&str> = node
            .children_by_field_name("path", &mut c)
            .filter(|n| n.is_named())
            .map(|n| self.text(n))
            .collect();
        let mut c = node.walk();
        let rest: Vec<Node<'_>> = node
            .named_children(&mut c)
            .filter(|n| {
                matches!(
                    n.kind(),
                    "namespace_selectors" | "namespace_wildcard" | "as_renamed_identifier"
                )
            })
            .collect();
        let module = path.join(".");
        if rest.is_empty() {
            match path.split_last() {
                Some((name, init)) if !init.is_empty() => {
                    self.import(&init.join("."), Some(name), None, node)
                }
                _ => self.import(&module, Some("*"), None, node),
            }
            return;
        }
        for part in rest {
            match part.kind() {
                "namespace_wildcard" => self.import(&module, Some("*"), None, node),
                "as_renamed_identifier" => self.scala_renamed(&module, part, node),
                _ => {
                    let mut c = part.walk();
                    let selectors: Vec<Node<'_>> = part.named_children(&mut c).collect();
                    for s in selectors {
                        match s.kind() {
                            "identifier" => self.import(&module, Some(self.text(s)), None, s),
                            "arrow_renamed_identifier" | "as_renamed_identifier" => {
                                self.scala_renamed(&module, s, node)
                            }
                            "namespace_wildcard" => self.import(&module, Some("*"), None, s),
                            _ => {}
                        }
                    }
                }
            }
        }
    }

    /// `C => D`, `C as D`; a renaming to `_` hides the name, which imports nothing.
    fn scala_renamed(&mut self, module: &str, renamed: Node<'_>, at: Node<'_>) {
        let name = self.field_text(renamed, "name");
        let alias = self.field_text(renamed, "alias");
        if alias != Some("_") {
            self.import(module, name, alias, at);
        }
    }

    /// `class A extends B with C[T]` → A's parents B and C.
    fn scala_parents(&mut self, node: Node<'_>) {
        let (Some(child), Some(extends)) = (
            self.field_text(node, "name"),
            node.child_by_field_name("extend"),
        ) else {
            return;
        };
        let mut c = extends.walk();
        let parents: Vec<&str> = extends
            .children_by_field_name("type", &mut c)
            .filter(|n| n.is_named())
            .map(|n| {
                let text = self.text(n);
                text.split('[').next().unwrap_or(text)
            })
            .collect();
        for parent in parents {
            self.relation(child, parent, node);
        }
    }
}
