//! C#'s facts: calls are invocations (of a name, `a.M()`, `M<T>()`) and `new T(…)`; `using A.B;`
//! imports a namespace, `using X = A.B;` under an alias, `using static A.B;` its members; the
//! base list of a class, struct, interface or record names its parent types.

use tree_sitter::Node;

use super::{Extractor, last_segment};

impl Extractor<'_> {
    pub(super) fn csharp(&mut self, node: Node<'_>) {
        match node.kind() {
            "invocation_expression" => {
                if let Some(function) = node.child_by_field_name("function") {
                    self.csharp_callee(function);
                }
            }
            "object_creation_expression" => {
                if let Some(ty) = node.child_by_field_name("type") {
                    self.csharp_callee(ty);
                }
            }
            "using_directive" => {
                self.csharp_using(node);
                self.skip_all(node);
            }
            "namespace_declaration" | "file_scoped_namespace_declaration" => {
                if let Some(name) = node.child_by_field_name("name") {
                    self.skip_all(name);
                }
            }
            "class_declaration"
            | "struct_declaration"
            | "interface_declaration"
            | "record_declaration" => self.csharp_parents(node),
            _ => {}
        }
    }

    /// The name a call reaches: `M`, the `M` of `a.M` / `A.B.M` / `M<T>`, with what it was
    /// reached through.
    fn csharp_callee(&mut self, callee: Node<'_>) {
        let (name, qualifier) = match callee.kind() {
            "identifier" => (Some(callee), None),
            "member_access_expression" => (
                callee.child_by_field_name("name"),
                callee.child_by_field_name("expression"),
            ),
            "qualified_name" => (
                callee.child_by_field_name("name"),
                callee.child_by_field_name("qualifier"),
            ),
            "generic_name" => {
                let mut c = callee.walk();
                let name = callee
                    .named_children(&mut c)
                    .find(|n| n.kind() == "identifier");
                (name, None)
            }
            _ => (None, None),
        };
        let Some(name) = name else { return };
        if name.kind() == "generic_name" {
            let mut c = name.walk();
            let Some(inner) = name
                .named_children(&mut c)
                .find(|n| n.kind() == "identifier")
            else {
                return;
            };
            return self.csharp_call(inner, qualifier);
        }
        if name.kind() == "identifier" {
            self.csharp_call(name, qualifier);
        }
    }

    fn csharp_call(&mut self, name: Node<'_>, qualifier: Option<Node<'_>>) {
        let q = qualifier.map(|q| last_segment(self.text(q)).to_string());
        self.skip.insert(name.id());
        self.reference(name, true, q);
    }

    fn csharp_using(&mut self, node: Node<'_>) {
        let mut c = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut c).collect();
        let is_static = children.iter().any(|n| n.kind() == "static");
        let alias = node.child_by_field_name("name").map(|n| self.text(n));
        let target = children.iter().rev().find(|n| {
            n.is_named()
                && node.child_by_field_name("name") != Some(**n)
                && matches!(
                    n.kind(),
                    "identifier" | "qualified_name" | "generic_name" | "alias_qualified_name"
                )
        });
        let Some(target) = target else { return };
        let module = self.text(*target);
        let name = is_static.then_some("*");
        self.import(module, name, alias, node);
    }

    /// `class A : B, IC<T>` → A's parents B and IC.
    fn csharp_parents(&mut self, node: Node<'_>) {
        let Some(child) = self.field_text(node, "name") else {
            return;
        };
        let mut c = node.walk();
        let Some(bases) = node
            .named_children(&mut c)
            .find(|n| n.kind() == "base_list")
        else {
            return;
        };
        let mut c = bases.walk();
        let mut parents = Vec::new();
        for base in bases.named_children(&mut c) {
            let ty = if base.kind() == "primary_constructor_base_type" {
                base.named_child(0)
            } else {
                Some(base)
            };
            let Some(ty) = ty else { continue };
            let text = self.text(ty);
            let bare = text.split('<').next().unwrap_or(text);
            parents.push(bare);
        }
        for parent in parents {
            self.relation(child, parent, node);
        }
    }
}
