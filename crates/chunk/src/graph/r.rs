//! R's facts: calls by the common rules, and `pkg::f(…)` a call of `f` through `pkg`;
//! `library(pkg)`, `require(pkg)` and `requireNamespace("pkg")` import a package (outside the
//! repository unless it is the repository), `source("R/money.R")` a file. An assignment's name
//! is a binding, not a use. S4's `setClass("B", contains = "A")`, `setRefClass(…, contains =)`
//! and R6's `R6Class("B", inherit = A)` relate the class to its parent.

use tree_sitter::Node;

use super::Extractor;

impl Extractor<'_> {
    pub(super) fn r(&mut self, node: Node<'_>) {
        match node.kind() {
            "binary_operator" => {
                let assigns = node
                    .child_by_field_name("operator")
                    .is_some_and(|o| matches!(self.text(o), "<-" | "<<-" | "=" | ":="));
                if let Some(lhs) = node
                    .child_by_field_name("lhs")
                    .filter(|l| assigns && l.kind() == "identifier")
                {
                    self.skip.insert(lhs.id());
                    self.r_class(node.child_by_field_name("rhs"), Some(self.text(lhs)));
                }
            }
            "call" => {
                let Some(f) = node.child_by_field_name("function") else {
                    return;
                };
                if f.kind() == "namespace_operator" {
                    if let (Some(pkg), Some(name)) =
                        (f.child_by_field_name("lhs"), f.child_by_field_name("rhs"))
                    {
                        self.skip.insert(pkg.id());
                        self.skip.insert(name.id());
                        let q = self.text(pkg).to_string();
                        self.reference(name, true, Some(q));
                    }
                    return;
                }
                if f.kind() != "identifier" {
                    return;
                }
                let first = self.r_first_argument(node);
                match self.text(f) {
                    "library" | "require" | "requireNamespace" | "loadNamespace" => {
                        if let Some(pkg) = first {
                            let module = self.text(pkg).trim_matches(['"', '\'']).to_string();
                            self.import(&module, Some("*"), None, node);
                            self.skip_all(pkg);
                        }
                    }
                    "source" | "sys.source" => {
                        if let Some(path) = first.filter(|p| p.kind() == "string") {
                            let module = self.text(path).trim_matches(['"', '\'']).to_string();
                            self.import(&module, Some("*"), None, node);
                        }
                    }
                    "setClass" | "setRefClass"
                        if node.parent().is_none_or(|p| p.kind() != "binary_operator") =>
                    {
                        let name = first
                            .filter(|p| p.kind() == "string")
                            .map(|p| self.text(p).trim_matches(['"', '\'']));
                        self.r_class(Some(node), name);
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }

    /// The first unnamed argument's value of a call.
    fn r_first_argument<'t>(&self, call: Node<'t>) -> Option<Node<'t>> {
        let arguments = call.child_by_field_name("arguments")?;
        let mut c = arguments.walk();
        arguments
            .named_children(&mut c)
            .filter(|a| a.kind() == "argument" && a.child_by_field_name("name").is_none())
            .find_map(|a| a.child_by_field_name("value"))
    }

    /// The parent a class-making call names (`inherit = A`, `contains = "A"`) of class `name`.
    fn r_class(&mut self, call: Option<Node<'_>>, name: Option<&str>) {
        let (Some(call), Some(name)) = (call.filter(|c| c.kind() == "call"), name) else {
            return;
        };
        let Some(arguments) = call.child_by_field_name("arguments") else {
            return;
        };
        let mut c = arguments.walk();
        let parents: Vec<Node<'_>> = arguments
            .named_children(&mut c)
            .filter(|a| {
                a.child_by_field_name("name")
                    .is_some_and(|n| matches!(self.text(n), "inherit" | "contains"))
            })
            .filter_map(|a| a.child_by_field_name("value"))
            .collect();
        for p in parents {
            let parent = self.text(p).trim_matches(['"', '\'']).to_string();
            if !parent.is_empty()
                && parent
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
            {
                let name = name.to_string();
                self.relation(&name, &parent, call);
            }
        }
    }
}
