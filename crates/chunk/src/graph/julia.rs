//! Julia's facts: `f(x)` calls `f`, `M.f(x)` calls `f` through `M`, `@m x` calls macro `m`;
//! `using M`, `using M: f`, `import M: f` import a module or its names (packages are outside the
//! repository), `include("x.jl")` every definition of that file; `struct A <: B` and `abstract
//! type A <: B` relate `A` to its supertype. The names functions, macros and types define are no
//! references.

use tree_sitter::Node;

use super::Extractor;
use crate::languages::first_named_child;

impl Extractor<'_> {
    pub(super) fn julia(&mut self, node: Node<'_>) {
        match node.kind() {
            "call_expression" | "broadcast_call_expression" => {
                let Some(callee) = node.named_child(0) else {
                    return;
                };
                if callee.kind() == "identifier" && self.text(callee) == "include" {
                    let path = node
                        .named_child(1)
                        .and_then(|args| args.named_child(0))
                        .filter(|a| a.kind() == "string_literal");
                    if let Some(path) = path {
                        let module = self.text(path).trim_matches('"').to_string();
                        self.import(&module, Some("*"), None, node);
                        self.skip.insert(callee.id());
                        return;
                    }
                }
                self.julia_call(callee);
            }
            // `@m x`, `Base.@m x`: a call of the macro's name.
            "macrocall_expression" => {
                let mut head = node.named_child(0);
                if let Some(f) = head.filter(|h| h.kind() == "field_expression") {
                    head = f.named_child((f.named_child_count() as u32).saturating_sub(1));
                }
                let name = head
                    .filter(|h| h.kind() == "macro_identifier")
                    .and_then(|m| m.named_child(0))
                    .filter(|n| n.kind() == "identifier");
                if let Some(name) = name {
                    self.skip.insert(name.id());
                    self.reference(name, true, None);
                }
            }
            "function_definition" | "macro_definition" => {
                let signature = first_named_child(node, "signature");
                if let Some(head) = signature.and_then(|s| s.named_child(0)) {
                    self.julia_skip_defined(head);
                }
            }
            "assignment" => {
                if let Some(lhs) = node
                    .named_child(0)
                    .filter(|l| matches!(l.kind(), "call_expression" | "where_expression"))
                {
                    self.julia_skip_defined(lhs);
                }
            }
            "struct_definition" | "abstract_definition" | "primitive_definition" => {
                let Some(head) = first_named_child(node, "type_head") else {
                    return;
                };
                let Some(first) = head.named_child(0) else {
                    return;
                };
                let (name, parent) = if first.kind() == "binary_expression" {
                    (first.named_child(0), first.named_child(2))
                } else {
                    (Some(first), None)
                };
                let name = name.map(|n| {
                    if n.kind() == "curly_expression" {
                        n.named_child(0).unwrap_or(n)
                    } else {
                        n
                    }
                });
                if let Some(name) = name.filter(|n| n.kind() == "identifier") {
                    self.skip.insert(name.id());
                    if let Some(parent) = parent {
                        let (child, parent) = (self.text(name), self.text(parent));
                        let parent = parent.split('{').next().unwrap_or(parent);
                        self.relation(child, parent, node);
                    }
                }
            }
            "using_statement" | "import_statement" => {
                let mut c = node.walk();
                for part in node.named_children(&mut c) {
                    match part.kind() {
                        "selected_import" => {
                            let mut c = part.walk();
                            let mut names = part.named_children(&mut c);
                            let Some(module) = names.next() else {
                                continue;
                            };
                            let module = self.text(module).to_string();
                            for name in names {
                                let name = self.text(name).to_string();
                                self.import(&module, Some(&name), None, part);
                            }
                        }
                        _ => {
                            let module = self.text(part).to_string();
                            self.import(&module, Some("*"), None, part);
                        }
                    }
                }
                self.skip_all(node);
            }
            _ => {}
        }
    }

    /// The callee of a call: `f` or `M.f` (through `M`).
    fn julia_call(&mut self, callee: Node<'_>) {
        match callee.kind() {
            "identifier" if !self.skip.contains(&callee.id()) => {
                self.skip.insert(callee.id());
                self.reference(callee, true, None);
            }
            "field_expression" => {
                let mut c = callee.walk();
                let name = callee
                    .named_children(&mut c)
                    .filter(|n| n.kind() == "identifier")
                    .last();
                let value = callee.child_by_field_name("value");
                if let Some(name) = name.filter(|n| {
                    Some(n.id()) != value.map(|v| v.id()) && !self.skip.contains(&n.id())
                }) {
                    self.skip.insert(name.id());
                    let q = value.map(|v| self.text(v).to_string());
                    self.reference(name, true, q);
                }
            }
            "curly_expression" => {
                if let Some(inner) = callee.named_child(0) {
                    self.julia_call(inner);
                }
            }
            _ => {}
        }
    }

    /// The name a function definition's head defines (`f` of `f(x)`, `show` of `Base.show(…)`).
    fn julia_skip_defined(&mut self, head: Node<'_>) {
        let mut at = head;
        loop {
            match at.kind() {
                "where_expression" | "typed_expression" | "call_expression"
                | "curly_expression" => match at.named_child(0) {
                    Some(n) => at = n,
                    None => return,
                },
                "field_expression" => {
                    let mut c = at.walk();
                    if let Some(last) = at
                        .named_children(&mut c)
                        .filter(|n| n.kind() == "identifier")
                        .last()
                    {
                        self.skip.insert(last.id());
                    }
                    return;
                }
                "identifier" => {
                    self.skip.insert(at.id());
                    return;
                }
                _ => return,
            }
        }
    }
}
