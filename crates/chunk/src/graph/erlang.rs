//! Erlang's facts: a call of a function by name, and `ledger:record(…)` a call of `record`
//! through module `ledger` (the file `ledger.erl`); `fun f/1` and `fun m:f/1` refer to
//! functions; `#line{…}` to a record and `?SHIPPING` to a macro. The types a `-spec`, `-type` or
//! record field names are references, not calls. `-import(money, [add/2])` imports `add` from
//! `money`, `-include("x.hrl")` and `-include_lib(…)` every definition of that header.
//! `-behaviour(gen_server)` relates the module to the behaviour it implements. Atoms and
//! variables are otherwise data, never references.

use tree_sitter::Node;

use super::Extractor;

/// Node kinds in which a call-shaped `name()` is a type, not a call.
const TYPE_CONTEXTS: &[&str] = &["spec", "type_alias", "opaque", "callback", "field_type"];

impl Extractor<'_> {
    pub(super) fn erlang(&mut self, node: Node<'_>) {
        match node.kind() {
            "call" => {
                let Some(expr) = node.child_by_field_name("expr") else {
                    return;
                };
                if expr.kind() == "atom" && !self.skip.contains(&expr.id()) {
                    let call = !in_type(node);
                    self.reference(expr, call, None);
                }
            }
            "remote" => {
                let module = node
                    .child_by_field_name("module")
                    .and_then(|m| m.child_by_field_name("module"))
                    .filter(|m| m.kind() == "atom");
                let fun = node.child_by_field_name("fun");
                let name = match fun {
                    Some(f) if f.kind() == "call" => f.child_by_field_name("expr"),
                    other => other,
                };
                if let (Some(module), Some(name)) = (module, name.filter(|n| n.kind() == "atom")) {
                    let q = self.text(module).to_string();
                    self.skip.insert(name.id());
                    let call = !in_type(node);
                    self.reference(name, call, Some(q));
                }
            }
            "internal_fun" | "external_fun" => {
                if let Some(name) = node
                    .child_by_field_name("fun")
                    .filter(|n| n.kind() == "atom")
                {
                    let q = node
                        .child_by_field_name("module")
                        .map(|m| self.text(m).to_string());
                    self.reference(name, false, q);
                }
            }
            "record_expr" | "record_update_expr" | "record_index_expr" | "record_field_expr" => {
                let name = node
                    .child_by_field_name("name")
                    .and_then(|n| n.named_child(0).or(Some(n)));
                if let Some(name) = name.filter(|n| n.kind() == "atom") {
                    self.reference(name, false, None);
                }
            }
            "macro_call_expr" => {
                if let Some(name) = node.child_by_field_name("name") {
                    self.reference(name, false, None);
                }
            }
            "import_attribute" => {
                let Some(module) = node.child_by_field_name("module") else {
                    return;
                };
                let module = self.text(module).to_string();
                let mut c = node.walk();
                let funs: Vec<Node<'_>> = node.children_by_field_name("funs", &mut c).collect();
                for fa in funs {
                    if let Some(f) = fa.child_by_field_name("fun") {
                        let name = self.text(f).to_string();
                        self.import(&module, Some(&name), None, fa);
                    }
                }
                self.skip_all(node);
            }
            "pp_include" | "pp_include_lib" => {
                if let Some(file) = node.child_by_field_name("file") {
                    let path = self.text(file).to_string();
                    self.import(&path, Some("*"), None, node);
                }
                self.skip_all(node);
            }
            "behaviour_attribute" => {
                let Some(behaviour) = node.child_by_field_name("name") else {
                    return;
                };
                let module = node.parent().and_then(|root| {
                    let mut c = root.walk();
                    root.named_children(&mut c)
                        .find(|n| n.kind() == "module_attribute")
                        .and_then(|m| m.child_by_field_name("name"))
                });
                if let Some(module) = module {
                    let (child, parent) = (self.text(module), self.text(behaviour));
                    self.relation(child, parent, node);
                }
            }
            _ => {}
        }
    }
}

/// Whether `node` stands in a type (`-spec`, `-type`, a record field's type).
fn in_type(node: Node<'_>) -> bool {
    let mut at = node.parent();
    while let Some(n) = at {
        if TYPE_CONTEXTS.contains(&n.kind()) {
            return true;
        }
        if matches!(n.kind(), "fun_decl" | "source_file") {
            return false;
        }
        at = n.parent();
    }
    false
}
