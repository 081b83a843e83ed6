//! OCaml's facts: a value applied (`shipping inv`, `List.fold_left f …`) is a call of its name
//! through its module path, a value named without being applied a reference; a type named
//! (`invoice list`, `Support.Money.t`) is a reference. `open M` and `include M` import all of
//! module `M`; `module S = Support.Money` imports that module under the name `S`. `inherit
//! Base.printer` relates a class to the class it inherits. The names bindings, types, modules and
//! classes define are no references (they are no paths).

use tree_sitter::Node;

use super::Extractor;
use crate::languages::first_named_child;

impl Extractor<'_> {
    pub(super) fn ocaml(&mut self, node: Node<'_>) {
        match node.kind() {
            "application_expression" => {
                if let Some(f) = node
                    .child_by_field_name("function")
                    .filter(|f| f.kind() == "value_path")
                {
                    self.ocaml_path(f, "value_name", true);
                }
            }
            "value_path" if !self.skip.contains(&node.id()) => {
                self.ocaml_path(node, "value_name", false);
            }
            "type_constructor_path" if !self.skip.contains(&node.id()) => {
                self.ocaml_path(node, "type_constructor", false);
            }
            "open_module" | "include_module" => {
                if let Some(module) = node.child_by_field_name("module") {
                    let module = self.text(module).to_string();
                    self.import(&module, Some("*"), None, node);
                }
                self.skip_all(node);
            }
            "module_binding" => {
                let body = node
                    .child_by_field_name("body")
                    .filter(|b| matches!(b.kind(), "module_path" | "extended_module_path"));
                let name = first_named_child(node, "module_name");
                if let (Some(body), Some(name)) = (body, name) {
                    let (module, alias) =
                        (self.text(body).to_string(), self.text(name).to_string());
                    self.import(&module, None, Some(&alias), node);
                    self.skip_all(body);
                }
            }
            "inheritance_definition" => {
                let class = node.child_by_field_name("class");
                let owner = node
                    .parent()
                    .and_then(|object| object.parent())
                    .filter(|b| b.kind() == "class_binding")
                    .and_then(|b| first_named_child(b, "class_name"));
                if let (Some(class), Some(owner)) = (class, owner) {
                    let (child, parent) = (self.text(owner), self.text(class));
                    self.relation(child, parent, node);
                }
            }
            _ => {}
        }
    }

    /// `M.N.name`: a reference to `name` (the child of `kind`) through `M.N`.
    fn ocaml_path(&mut self, path: Node<'_>, kind: &str, call: bool) {
        self.skip.insert(path.id());
        let Some(name) = first_named_child(path, kind) else {
            return;
        };
        let qualifier = first_named_child(path, "module_path")
            .or_else(|| first_named_child(path, "extended_module_path"))
            .map(|m| self.text(m).to_string());
        self.reference(name, call, qualifier);
    }
}
