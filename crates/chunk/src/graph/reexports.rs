//! Re-exports: the imports a file makes public again under its own path ([`Import::reexport`]).
//! A library's users import `B` from where it is re-exported (`use crate::B` after `pub use
//! parser::B`, `from pkg import B` after `from .parser import B` in `pkg/__init__.py`, `import
//! { B } from './lib'` after `export { B } from './parser'`), so that line is where they look for
//! `B` beside its definition. Told apart per language from the syntax; a Python package's
//! `__init__.py` is told apart by its path ([`mark_package_reexports`]).

use patina_core::{FileFacts, Language};
use tree_sitter::Node;

use super::Extractor;

/// Python modules whose imports are never a package's public names.
const NOT_REEXPORTED: &[&str] = &["__future__", "typing", "typing_extensions"];

/// A Python package's `__init__.py` is what `import pkg` runs: every name it imports from a module
/// (`from .parser import B`, `from pkg.parser import B`) is `pkg.B` to its users — the path they
/// import it by. Other files keep their facts as extracted. (The path is not part of the text
/// the facts are extracted from, so the index round calls this with it.)
pub fn mark_package_reexports(path: &str, facts: &mut FileFacts) {
    let name = path.rsplit('/').next().unwrap_or(path);
    if name != "__init__.py" {
        return;
    }
    for i in &mut facts.imports {
        if i.name.is_some() && !NOT_REEXPORTED.contains(&i.module.as_str()) {
            i.reexport = true;
        }
    }
}

fn unquote(s: &str) -> &str {
    s.trim().trim_matches(['"', '\'', '`'])
}

impl<'a> Extractor<'a> {
    /// The re-export forms of `node`; `before` is how many imports the file had before `node`'s
    /// own were recorded (a `pub use` is recorded as an import first, then marked here).
    pub(super) fn reexports(&mut self, node: Node<'_>, before: usize) {
        match (self.language, node.kind()) {
            (Language::Rust, "use_declaration") => {
                let mut c = node.walk();
                let public = node
                    .children(&mut c)
                    .any(|n| n.kind() == "visibility_modifier");
                if public {
                    self.mark_since(before);
                }
            }
            (Language::JavaScript | Language::TypeScript | Language::Tsx, "export_statement") => {
                self.js_export(node)
            }
            (
                Language::JavaScript | Language::TypeScript | Language::Tsx,
                "assignment_expression",
            ) => self.commonjs_export(node),
            (Language::Python, "assignment" | "augmented_assignment") => {
                if self.field_text(node, "left") != Some("__all__") {
                    return;
                }
                let Some(right) = node.child_by_field_name("right") else {
                    return;
                };
                let mut c = right.walk();
                let names: Vec<String> = right
                    .named_children(&mut c)
                    .filter(|n| n.kind() == "string")
                    .map(|n| unquote(self.text(n)).to_string())
                    .collect();
                self.exported.extend(names);
            }
            (Language::Go, "type_alias") => {
                // `type B = search.B`: the package's users reach `search.B` as `B` here.
                let Some(local) = self.field_text(node, "name") else {
                    return;
                };
                let Some(ty) = node
                    .child_by_field_name("type")
                    .filter(|t| t.kind() == "qualified_type")
                else {
                    return;
                };
                let (Some(package), Some(name)) =
                    (self.field_text(ty, "package"), self.field_text(ty, "name"))
                else {
                    return;
                };
                let alias = (local != name).then_some(local);
                self.import(package, Some(name), alias, node);
                self.mark_since(before);
            }
            _ => {}
        }
    }

    /// `export { B, C as D } from './x'`, `export * from './x'`, `export * as ns from './x'`;
    /// without a source, `export { B }` exports a local name (an import's, if it is one).
    fn js_export(&mut self, node: Node<'_>) {
        let source = self.field_text(node, "source");
        let mut c = node.walk();
        let parts: Vec<Node<'_>> = node.children(&mut c).collect();
        let Some(source) = source else {
            for clause in parts.iter().filter(|p| p.kind() == "export_clause") {
                let mut c = clause.walk();
                for spec in clause.named_children(&mut c) {
                    if let Some(name) = self.field_text(spec, "name") {
                        self.exported.insert(unquote(name).to_string());
                    }
                }
            }
            return;
        };
        let before = self.facts.imports.len();
        for part in &parts {
            match part.kind() {
                "*" => self.import(source, Some("*"), None, node),
                "namespace_export" => {
                    let ns = part.named_child(0).map(|n| unquote(self.text(n)));
                    self.import(source, None, ns, node);
                }
                "export_clause" => {
                    let mut c = part.walk();
                    let specs: Vec<Node<'_>> = part
                        .named_children(&mut c)
                        .filter(|s| s.kind() == "export_specifier")
                        .collect();
                    for spec in specs {
                        let name = self.field_text(spec, "name").map(unquote);
                        let alias = self.field_text(spec, "alias").map(unquote);
                        self.import(source, name, alias, spec);
                    }
                }
                _ => {}
            }
        }
        self.mark_since(before);
        self.skip_all(node);
    }

    /// `module.exports = { B, C: C }`, `module.exports = B`, `module.exports.B = B`,
    /// `exports.B = B`: the names exported; `module.exports = require('./x')` re-exports all
    /// of `./x`.
    fn commonjs_export(&mut self, node: Node<'_>) {
        let (Some(left), Some(right)) = (
            node.child_by_field_name("left"),
            node.child_by_field_name("right"),
        ) else {
            return;
        };
        let target = self.text(left);
        let whole = target == "module.exports";
        let member = left.kind() == "member_expression"
            && matches!(
                self.field_text(left, "object"),
                Some("module.exports" | "exports")
            );
        if !whole && !member {
            return;
        }
        match right.kind() {
            "identifier" => {
                self.exported.insert(self.text(right).to_string());
            }
            "object" if whole => {
                let mut c = right.walk();
                let props: Vec<Node<'_>> = right.named_children(&mut c).collect();
                for p in props {
                    match p.kind() {
                        "shorthand_property_identifier" => {
                            self.exported.insert(self.text(p).to_string());
                        }
                        "pair" => {
                            if let Some(v) = p
                                .child_by_field_name("value")
                                .filter(|v| v.kind() == "identifier")
                            {
                                self.exported.insert(self.text(v).to_string());
                            }
                        }
                        _ => {}
                    }
                }
            }
            "call_expression" if whole && self.field_text(right, "function") == Some("require") => {
                let Some(arg) = right
                    .child_by_field_name("arguments")
                    .and_then(|a| a.named_child(0))
                    .filter(|a| a.kind() == "string")
                else {
                    return;
                };
                let before = self.facts.imports.len();
                let source = self.text(arg);
                self.import(source, Some("*"), None, node);
                self.mark_since(before);
            }
            _ => {}
        }
    }

    /// The imports recorded since the first `from` are re-exports.
    fn mark_since(&mut self, from: usize) {
        for i in &mut self.facts.imports[from..] {
            i.reexport = true;
        }
    }

    /// After the walk: an import whose local name the file exports again is a re-export.
    pub(super) fn mark_exported(&mut self) {
        if self.exported.is_empty() {
            return;
        }
        for i in &mut self.facts.imports {
            if i.name.as_deref() != Some("*") && self.exported.contains(i.local_name()) {
                i.reexport = true;
            }
        }
    }
}
