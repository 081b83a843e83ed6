//! PHP's facts. Identifiers are `name` nodes (variables, `$x`, are no references); calls are
//! function calls, `->` and `::` method calls and `new`; `use A\B\C` (grouped too) imports `C`
//! from `A\B`; a class's `extends`, `implements` and the traits it uses are its parent types.

use tree_sitter::Node;

use super::Extractor;

impl Extractor<'_> {
    pub(super) fn php(&mut self, node: Node<'_>, field: Option<&str>) {
        match node.kind() {
            "name" if field != Some("name") && !self.skip.contains(&node.id()) => {
                self.reference(node, false, None)
            }
            // `$x` is a variable, not a definition of the repository; `App\Models\User` is
            // `User`; a namespace's own name is no reference.
            "variable_name" => self.skip_all(node),
            "qualified_name" => {
                if let Some(prefix) = node.child_by_field_name("prefix") {
                    self.skip_all(prefix);
                }
            }
            "namespace_definition" => {
                if let Some(name) = node.child_by_field_name("name") {
                    self.skip_all(name);
                }
            }
            "function_call_expression" => {
                if let Some(function) = node.child_by_field_name("function") {
                    self.php_callee(function, None);
                }
            }
            "member_call_expression" | "nullsafe_member_call_expression" => {
                let object = node.child_by_field_name("object").map(|o| self.text(o));
                let qualifier = object.map(|o| {
                    let last = o.rsplit("->").next().unwrap_or(o);
                    last.trim_start_matches(['$', '?']).to_string()
                });
                if let Some(name) = node.child_by_field_name("name") {
                    self.php_callee(name, qualifier);
                }
            }
            "scoped_call_expression" => {
                let scope = node.child_by_field_name("scope").map(|s| self.text(s));
                let qualifier = scope.map(|s| s.rsplit('\\').next().unwrap_or(s).to_string());
                if let Some(name) = node.child_by_field_name("name") {
                    self.php_callee(name, qualifier);
                }
            }
            "object_creation_expression" => {
                let mut c = node.walk();
                let class = node
                    .named_children(&mut c)
                    .find(|n| matches!(n.kind(), "name" | "qualified_name"));
                if let Some(class) = class {
                    self.php_callee(class, None);
                }
            }
            "namespace_use_declaration" => {
                self.php_use(node);
                self.skip_all(node);
            }
            "class_declaration" | "interface_declaration" | "enum_declaration" => {
                self.php_parents(node)
            }
            _ => {}
        }
    }

    /// A called name (`f`, `App\f`, the `m` of `$x->m()`): its last `name`, a call.
    fn php_callee(&mut self, callee: Node<'_>, qualifier: Option<String>) {
        let name = match callee.kind() {
            "name" => callee,
            "qualified_name" => {
                let mut c = callee.walk();
                let Some(last) = callee
                    .named_children(&mut c)
                    .filter(|n| n.kind() == "name")
                    .last()
                else {
                    return;
                };
                last
            }
            _ => return,
        };
        self.skip.insert(name.id());
        self.reference(name, true, qualifier);
    }

    /// `use A\B\C;`, `use A\B\C as D;`, `use function A\f;`, `use A\{B, C as D};`.
    fn php_use(&mut self, node: Node<'_>) {
        let mut c = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut c).collect();
        let prefix = children
            .iter()
            .find(|n| n.kind() == "namespace_name")
            .map(|n| self.text(*n).trim_start_matches('\\'));
        let mut clauses: Vec<Node<'_>> = children
            .iter()
            .copied()
            .filter(|n| n.kind() == "namespace_use_clause")
            .collect();
        if let Some(group) = node.child_by_field_name("body") {
            let mut c = group.walk();
            clauses.extend(
                group
                    .named_children(&mut c)
                    .filter(|n| n.kind() == "namespace_use_clause"),
            );
        }
        for clause in clauses {
            let mut c = clause.walk();
            let Some(path) = clause
                .named_children(&mut c)
                .find(|n| matches!(n.kind(), "name" | "qualified_name"))
            else {
                continue;
            };
            let path = self.text(path).trim_start_matches('\\');
            let full = match prefix {
                Some(p) => format!("{p}\\{path}"),
                None => path.to_string(),
            };
            let alias = self.field_text(clause, "alias");
            match full.rsplit_once('\\') {
                Some((module, name)) => self.import(module, Some(name), alias, clause),
                None => self.import("", Some(&full), alias, clause),
            }
        }
    }

    /// `class A extends B implements C, D { use T; }` → A's parents B, C, D and T.
    fn php_parents(&mut self, node: Node<'_>) {
        let Some(child) = self.field_text(node, "name") else {
            return;
        };
        let mut parents = Vec::new();
        let mut c = node.walk();
        for part in node.named_children(&mut c) {
            match part.kind() {
                "base_clause" | "class_interface_clause" => parents.push(part),
                "declaration_list" => {
                    let mut c = part.walk();
                    parents.extend(
                        part.named_children(&mut c)
                            .filter(|n| n.kind() == "use_declaration"),
                    );
                }
                _ => {}
            }
        }
        for clause in parents {
            let mut c = clause.walk();
            let names: Vec<&str> = clause
                .named_children(&mut c)
                .filter(|n| matches!(n.kind(), "name" | "qualified_name"))
                .map(|n| self.text(n))
                .collect();
            for parent in names {
                self.relation(child, parent, node);
            }
        }
    }
}
