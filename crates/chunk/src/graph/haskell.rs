//! Haskell's facts: an application `f x` calls `f` (a constructor `T x` included; `M.f x` through
//! `M`), other names are references; `import M (a, b)` imports those names of module `M`,
//! `import M` or `import M hiding (…)` all of it, `import qualified M as N` binds `N`;
//! `instance C T` relates `T` to its class `C`.

use tree_sitter::Node;

use super::Extractor;

impl<'a> Extractor<'a> {
    pub(super) fn haskell(&mut self, node: Node<'_>, field: Option<&str>) {
        match node.kind() {
            "variable" | "name" | "constructor"
                if field != Some("name") && !self.skip.contains(&node.id()) =>
            {
                self.reference(node, false, None);
            }
            "qualified" if !self.skip.contains(&node.id()) => {
                self.haskell_qualified(node, false);
            }
            "apply" => {
                if let Some(function) = node.child_by_field_name("function") {
                    match function.kind() {
                        "variable" | "constructor" => {
                            self.skip.insert(function.id());
                            self.reference(function, true, None);
                        }
                        "qualified" => self.haskell_qualified(function, true),
                        _ => {}
                    }
                }
            }
            "import" => {
                self.haskell_import(node);
                self.skip_all(node);
            }
            // The module's own name and its export list are no uses.
            "header" => self.skip_all(node),
            "instance" => {
                let class = node
                    .child_by_field_name("name")
                    .map(|n| self.text(n))
                    .unwrap_or("");
                if let Some(ty) = node
                    .child_by_field_name("patterns")
                    .and_then(|p| self.haskell_first_name(p))
                {
                    self.relation(ty, class, node);
                }
            }
            _ => {}
        }
    }

    /// `M.f`: the name `f`, reached through `M`.
    fn haskell_qualified(&mut self, node: Node<'_>, call: bool) {
        self.skip_all(node);
        let (Some(module), Some(id)) = (
            node.child_by_field_name("module"),
            node.child_by_field_name("id"),
        ) else {
            return;
        };
        let q = self.text(module).trim_end_matches('.').to_string();
        self.reference(id, call, Some(q));
    }

    fn haskell_import(&mut self, node: Node<'_>) {
        let Some(module) = node.child_by_field_name("module").map(|m| self.text(m)) else {
            return;
        };
        let alias = node.child_by_field_name("alias").map(|a| self.text(a));
        let mut c = node.walk();
        let qualified = node.children(&mut c).any(|n| n.kind() == "qualified");
        let list = node.child_by_field_name("names");
        let hiding = list.is_some_and(|l| {
            let mut c = l.walk();
            l.children(&mut c).any(|n| n.kind() == "hiding")
        });
        match list.filter(|_| !hiding) {
            Some(list) => {
                let mut c = list.walk();
                let names: Vec<&str> = list
                    .children_by_field_name("name", &mut c)
                    .filter_map(|n| n.named_child(0))
                    .map(|n| self.text(n))
                    .collect();
                for name in names {
                    self.import(module, Some(name), None, node);
                }
                if alias.is_some() {
                    self.import(module, None, alias, node);
                }
            }
            None if qualified => self.import(module, None, alias, node),
            None => self.import(module, Some("*"), alias, node),
        }
    }

    /// The first type constructor named in a type pattern (`(Tree a)` → `Tree`).
    fn haskell_first_name(&self, node: Node<'_>) -> Option<&'a str> {
        let mut stack = vec![node];
        for _ in 0..64 {
            let n = stack.pop()?;
            if n.kind() == "name" {
                return Some(self.text(n));
            }
            let mut c = n.walk();
            let children: Vec<Node<'_>> = n.named_children(&mut c).collect();
            stack.extend(children.into_iter().rev());
        }
        None
    }
}
