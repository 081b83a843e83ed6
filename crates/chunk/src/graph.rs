//! Graph facts of a source file ([`extract_facts`]): the names it references (call sites marked),
//! its imports / uses / includes, and the type relations it declares (`impl Trait for T`, class
//! inheritance, interface embedding). A pure function of the text, like chunking; resolving the
//! names to definitions needs the whole repository and happens in `patina-index`.

use std::collections::{BTreeSet, HashSet};

use patina_core::{FileFacts, Import, Language, Reference, TypeRelation};
use tree_sitter::{Node, Tree};

use crate::languages::parse;

/// The version of the fact extraction rules. Bump it whenever the facts of some text change: an
/// index made with another version extracts them again at its next full round.
///
/// 1: calls, references, imports and type relations for the eight parsed languages.
pub const GRAPH_VERSION: u32 = 1;

/// Names never recorded as references: receivers and literals that every file uses.
const STOP: &[&str] = &[
    "self",
    "Self",
    "this",
    "cls",
    "super",
    "true",
    "false",
    "None",
    "True",
    "False",
    "nil",
    "null",
    "undefined",
    "_",
];

/// Identifier node kinds that may name a definition.
const IDENTS: &[&str] = &[
    "identifier",
    "type_identifier",
    "field_identifier",
    "property_identifier",
    "package_identifier",
    "constant",
];

/// The graph facts of `text` in `language` (nothing for Markdown and plain text, or on a parse
/// failure).
pub fn extract_facts(language: Language, text: &str) -> FileFacts {
    match parse(language, text) {
        Some(tree) => facts_of_tree(language, text, &tree),
        None => FileFacts::default(),
    }
}

/// [`extract_facts`] over a tree already parsed from `text`.
pub(crate) fn facts_of_tree(language: Language, text: &str, tree: &Tree) -> FileFacts {
    let mut x = Extractor {
        language,
        src: text,
        refs: BTreeSet::new(),
        skip: HashSet::new(),
        facts: FileFacts::default(),
    };
    x.walk(tree.root_node());
    x.facts.refs = x.refs.into_iter().collect();
    x.facts
}

struct Extractor<'a> {
    language: Language,
    src: &'a str,
    refs: BTreeSet<Reference>,
    /// Identifier nodes already recorded (callees, definition names, import parts).
    skip: HashSet<usize>,
    facts: FileFacts,
}

fn line(node: Node<'_>) -> u32 {
    node.start_position().row as u32 + 1
}

/// The last path segment of a qualified name: `a::b::C` → `C`, `a.b` → `b`, `"x/y.h"` → `y.h`.
fn last_segment(s: &str) -> &str {
    s.rsplit(['.', ':', '/', '\\'])
        .find(|p| !p.is_empty())
        .unwrap_or(s)
}

impl<'a> Extractor<'a> {
    fn text(&self, node: Node<'_>) -> &'a str {
        node.utf8_text(self.src.as_bytes()).unwrap_or("")
    }

    fn field_text(&self, node: Node<'_>, field: &str) -> Option<&'a str> {
        node.child_by_field_name(field).map(|n| self.text(n))
    }

    fn walk(&mut self, root: Node<'_>) {
        let mut cursor = root.walk();
        // Depth-first, parents before children, without asking tree-sitter for parents.
        loop {
            let node = cursor.node();
            let field = cursor.field_name();
            self.visit(node, field);
            if cursor.goto_first_child() {
                continue;
            }
            loop {
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return;
                }
            }
        }
    }

    fn visit(&mut self, node: Node<'_>, field: Option<&str>) {
        let kind = node.kind();
        if IDENTS.contains(&kind) {
            if field == Some("name") && !self.skip.contains(&node.id()) {
                // A definition's or declaration's own name is not a reference, except where the
                // `name` field is a use (Java's `method_invocation`: handled as a call, skipped).
            } else if !self.skip.contains(&node.id()) {
                self.reference(node, false, None);
            }
            return;
        }
        match kind {
            "call_expression" | "call" | "new_expression" => {
                let callee = node
                    .child_by_field_name("function")
                    .or_else(|| node.child_by_field_name("constructor"));
                if let Some(callee) = callee {
                    self.call(callee);
                }
            }
            "method_invocation" => {
                if let Some(name) = node.child_by_field_name("name") {
                    let q = node
                        .child_by_field_name("object")
                        .map(|o| last_segment(self.text(o)).to_string());
                    self.skip.insert(name.id());
                    self.reference(name, true, q);
                }
            }
            "object_creation_expression" => {
                if let Some(ty) = node.child_by_field_name("type") {
                    self.call(ty);
                }
            }
            "macro_invocation" => {
                // `println!` is not a definition of the repository; its arguments are walked.
                if let Some(m) = node.child_by_field_name("macro") {
                    self.skip_all(m);
                }
            }
            _ => {}
        }
        self.imports(node);
        self.relations(node);
    }

    fn skip_all(&mut self, node: Node<'_>) {
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            self.skip.insert(n.id());
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
    }

    fn reference(&mut self, node: Node<'_>, call: bool, qualifier: Option<String>) {
        let name = self.text(node);
        if name.is_empty() || STOP.contains(&name) || name.len() > 200 {
            return;
        }
        self.refs.insert(Reference {
            name: name.to_string(),
            line: line(node),
            call,
            qualifier: qualifier.filter(|q| !q.is_empty() && q.len() <= 100),
        });
    }

    /// The callee of a call: its name (the member of `a.b`, the last segment of `a::b`) and what
    /// it was reached through.
    fn call(&mut self, callee: Node<'_>) {
        let (name, qualifier): (Option<Node<'_>>, Option<Node<'_>>) = match callee.kind() {
            k if IDENTS.contains(&k) => (Some(callee), None),
            "scoped_identifier" | "qualified_identifier" | "scoped_type_identifier" => (
                callee.child_by_field_name("name"),
                callee
                    .child_by_field_name("path")
                    .or_else(|| callee.child_by_field_name("scope")),
            ),
            "field_expression" => (
                callee.child_by_field_name("field"),
                callee
                    .child_by_field_name("value")
                    .or_else(|| callee.child_by_field_name("argument")),
            ),
            "member_expression" => (
                callee.child_by_field_name("property"),
                callee.child_by_field_name("object"),
            ),
            "attribute" => (
                callee.child_by_field_name("attribute"),
                callee.child_by_field_name("object"),
            ),
            "selector_expression" => (
                callee.child_by_field_name("field"),
                callee.child_by_field_name("operand"),
            ),
            "generic_function" | "template_function" | "generic_type" => {
                if let Some(inner) = callee
                    .child_by_field_name("function")
                    .or_else(|| callee.child_by_field_name("name"))
                    .or_else(|| callee.named_child(0))
                {
                    self.call(inner);
                }
                return;
            }
            _ => (None, None),
        };
        let Some(name) = name else { return };
        // `a::b::c()` names `c`; a nested scoped name inside is not walked again as a reference.
        if name.kind() == "scoped_identifier" || name.kind() == "qualified_identifier" {
            return self.call(name);
        }
        self.skip.insert(name.id());
        let q = qualifier.map(|q| {
            let t = self.text(q);
            // `os.path` stays whole (a module), `a.b().c` keeps its last simple part.
            if t.chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == ':')
            {
                t.to_string()
            } else {
                last_segment(t).to_string()
            }
        });
        self.reference(name, true, q);
    }

    fn import(&mut self, module: &str, name: Option<&str>, alias: Option<&str>, at: Node<'_>) {
        let module = module.trim().trim_matches(['"', '\'', '`', '<', '>']);
        if module.is_empty() && name.is_none() {
            return;
        }
        self.facts.imports.push(Import {
            module: module.to_string(),
            name: name.map(str::to_string),
            alias: alias.map(str::to_string),
            line: line(at),
        });
    }

    fn imports(&mut self, node: Node<'_>) {
        match (self.language, node.kind()) {
            (Language::Python, "import_statement") => {
                let mut c = node.walk();
                for n in node.children_by_field_name("name", &mut c) {
                    match n.kind() {
                        "aliased_import" => {
                            let m = self.field_text(n, "name").unwrap_or("");
                            let a = self.field_text(n, "alias");
                            self.import(m, None, a, n);
                        }
                        _ => self.import(self.text(n), None, None, n),
                    }
                }
                self.skip_all(node);
            }
            (Language::Python, "import_from_statement") => {
                let module = self.field_text(node, "module_name").unwrap_or("");
                let mut c = node.walk();
                let names: Vec<Node<'_>> = node.children_by_field_name("name", &mut c).collect();
                if names.is_empty() {
                    self.import(module, Some("*"), None, node);
                }
                for n in names {
                    match n.kind() {
                        "aliased_import" => {
                            let m = self.field_text(n, "name");
                            let a = self.field_text(n, "alias");
                            self.import(module, m, a, n);
                        }
                        _ => self.import(module, Some(self.text(n)), None, n),
                    }
                }
                self.skip_all(node);
            }
            (Language::Rust, "use_declaration") => {
                if let Some(arg) = node.child_by_field_name("argument") {
                    self.rust_use(arg, "", node);
                }
                self.skip_all(node);
            }
            (Language::Rust, "mod_item") if node.child_by_field_name("body").is_none() => {
                if let Some(name) = self.field_text(node, "name") {
                    self.import(&format!("self::{name}"), None, None, node);
                }
            }
            (Language::JavaScript | Language::TypeScript | Language::Tsx, "import_statement") => {
                let source = self.field_text(node, "source").unwrap_or("");
                let mut c = node.walk();
                let clause = node
                    .named_children(&mut c)
                    .find(|n| n.kind() == "import_clause");
                match clause {
                    None => self.import(source, None, None, node),
                    Some(clause) => {
                        let mut c = clause.walk();
                        for part in clause.named_children(&mut c) {
                            match part.kind() {
                                "identifier" => self.import(
                                    source,
                                    Some("default"),
                                    Some(self.text(part)),
                                    part,
                                ),
                                "namespace_import" => {
                                    let a = part.named_child(0).map(|n| self.text(n));
                                    self.import(source, None, a, part)
                                }
                                "named_imports" => {
                                    let mut c = part.walk();
                                    for spec in part.named_children(&mut c) {
                                        if spec.kind() != "import_specifier" {
                                            continue;
                                        }
                                        let n = self.field_text(spec, "name");
                                        let a = self.field_text(spec, "alias");
                                        self.import(source, n, a, spec);
                                    }
                                }
                                _ => {}
                            }
                        }
                    }
                }
                self.skip_all(node);
            }
            (
                Language::JavaScript | Language::TypeScript | Language::Tsx,
                "variable_declarator",
            ) => {
                // `const x = require('./x')`, `const { a, b } = require('./x')`.
                let Some(value) = node.child_by_field_name("value") else {
                    return;
                };
                if value.kind() != "call_expression"
                    || self.field_text(value, "function") != Some("require")
                {
                    return;
                }
                let Some(arg) = value
                    .child_by_field_name("arguments")
                    .and_then(|a| a.named_child(0))
                    .filter(|a| a.kind() == "string")
                else {
                    return;
                };
                let source = self.text(arg);
                let Some(target) = node.child_by_field_name("name") else {
                    return;
                };
                match target.kind() {
                    "identifier" => self.import(source, None, Some(self.text(target)), node),
                    "object_pattern" => {
                        let mut c = target.walk();
                        for p in target.named_children(&mut c) {
                            match p.kind() {
                                "shorthand_property_identifier_pattern" => {
                                    self.import(source, Some(self.text(p)), None, p)
                                }
                                "pair_pattern" => {
                                    let k = self.field_text(p, "key");
                                    let v = self.field_text(p, "value");
                                    self.import(source, k, v, p)
                                }
                                _ => {}
                            }
                        }
                    }
                    _ => {}
                }
            }
            (Language::Go, "import_spec") => {
                let path = self.field_text(node, "path").unwrap_or("");
                let alias = self.field_text(node, "name");
                self.import(path, None, alias, node);
                self.skip_all(node);
            }
            (Language::Java, "import_declaration") => {
                let mut c = node.walk();
                let path = node
                    .named_children(&mut c)
                    .find(|n| matches!(n.kind(), "scoped_identifier" | "identifier"));
                if let Some(path) = path {
                    let full = self.text(path);
                    let wildcard = self.text(node).contains('*');
                    match (wildcard, full.rsplit_once('.')) {
                        (true, _) | (false, None) => self.import(full, Some("*"), None, node),
                        (false, Some((m, n))) => self.import(m, Some(n), None, node),
                    }
                }
                self.skip_all(node);
            }
            (Language::C | Language::Cpp, "preproc_include") => {
                if let Some(path) = self.field_text(node, "path") {
                    self.import(path, None, None, node);
                }
                self.skip_all(node);
            }
            _ => {}
        }
    }

    /// Flatten a Rust use tree: `a::{b, c::D as E}` → `a::b`, `a::c` + `D` as `E`.
    fn rust_use(&mut self, node: Node<'_>, prefix: &str, at: Node<'_>) {
        let join = |p: &str, s: &str| {
            if p.is_empty() {
                s.to_string()
            } else if s.is_empty() {
                p.to_string()
            } else {
                format!("{p}::{s}")
            }
        };
        match node.kind() {
            "scoped_identifier" | "identifier" | "crate" | "self" | "super" => {
                let full = join(prefix, self.text(node));
                match full.rsplit_once("::") {
                    Some((m, n)) if n != "self" => self.import(m, Some(n), None, at),
                    Some((m, _)) => self.import(m, None, None, at),
                    None => self.import(&full, None, None, at),
                }
            }
            "use_as_clause" => {
                let alias = self.field_text(node, "alias");
                let path = self.field_text(node, "path").unwrap_or("");
                let full = join(prefix, path);
                match full.rsplit_once("::") {
                    Some((m, n)) => self.import(m, Some(n), alias, at),
                    None => self.import(&full, None, alias, at),
                }
            }
            "use_wildcard" => {
                let t = self
                    .text(node)
                    .trim_end_matches("::*")
                    .trim_end_matches('*');
                self.import(&join(prefix, t), Some("*"), None, at);
            }
            "scoped_use_list" => {
                let p = join(prefix, self.field_text(node, "path").unwrap_or(""));
                if let Some(list) = node.child_by_field_name("list") {
                    self.rust_use(list, &p, at);
                }
            }
            "use_list" => {
                let mut c = node.walk();
                let items: Vec<Node<'_>> = node.named_children(&mut c).collect();
                for item in items {
                    self.rust_use(item, prefix, at);
                }
            }
            _ => {}
        }
    }

    fn relation(&mut self, child: &str, parent: &str, at: Node<'_>) {
        let parent = last_segment(parent.trim());
        if child.is_empty() || parent.is_empty() || child == parent {
            return;
        }
        self.facts.relations.push(TypeRelation {
            child: child.to_string(),
            parent: parent.to_string(),
            line: line(at),
        });
    }

    /// Type names inside `node`, without descending into type arguments or keyword arguments.
    fn type_names(&self, node: Node<'_>) -> Vec<&'a str> {
        let mut out = Vec::new();
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            match n.kind() {
                "type_arguments" | "type_parameters" | "keyword_argument" | "arguments" => {
                    continue;
                }
                "identifier" | "type_identifier" => {
                    out.push(self.text(n));
                    continue;
                }
                "scoped_type_identifier"
                | "qualified_identifier"
                | "attribute"
                | "member_expression"
                | "dotted_name"
                | "qualified_type" => {
                    out.push(last_segment(self.text(n)));
                    continue;
                }
                _ => {}
            }
            let mut c = n.walk();
            let children: Vec<Node<'_>> = n.named_children(&mut c).collect();
            stack.extend(children.into_iter().rev());
        }
        out
    }

    fn relations(&mut self, node: Node<'_>) {
        let name = || self.field_text(node, "name").unwrap_or("");
        match (self.language, node.kind()) {
            (Language::Rust, "impl_item") => {
                if let (Some(tr), Some(ty)) = (
                    node.child_by_field_name("trait"),
                    node.child_by_field_name("type"),
                ) {
                    let ty = self.type_names(ty).first().copied().unwrap_or("");
                    let tr = self.type_names(tr).first().copied().unwrap_or("");
                    self.relation(ty, tr, node);
                }
            }
            (Language::Rust, "trait_item") => {
                if let Some(bounds) = node.child_by_field_name("bounds") {
                    let child = name();
                    for p in self.type_names(bounds) {
                        self.relation(child, p, node);
                    }
                }
            }
            (Language::Python, "class_definition") => {
                if let Some(sup) = node.child_by_field_name("superclasses") {
                    let child = name();
                    for p in self.type_names(sup) {
                        self.relation(child, p, node);
                    }
                }
            }
            (
                Language::JavaScript | Language::TypeScript | Language::Tsx,
                "class_declaration"
                | "class"
                | "abstract_class_declaration"
                | "interface_declaration",
            ) => {
                let child = name();
                let mut c = node.walk();
                let heritage: Vec<Node<'_>> = node
                    .named_children(&mut c)
                    .filter(|n| matches!(n.kind(), "class_heritage" | "extends_type_clause"))
                    .collect();
                for h in heritage {
                    for p in self.type_names(h) {
                        self.relation(child, p, node);
                    }
                }
            }
            (Language::Go, "type_spec") => {
                let child = name();
                let Some(ty) = node.child_by_field_name("type") else {
                    return;
                };
                let mut embedded = Vec::new();
                let mut stack = vec![ty];
                while let Some(n) = stack.pop() {
                    match n.kind() {
                        "field_declaration" if n.child_by_field_name("name").is_none() => {
                            if let Some(t) = n.child_by_field_name("type") {
                                embedded.extend(self.type_names(t));
                            }
                        }
                        "type_elem" | "constraint_elem" => embedded.extend(self.type_names(n)),
                        "struct_type" | "interface_type" | "field_declaration_list" => {
                            let mut c = n.walk();
                            stack.extend(n.named_children(&mut c));
                        }
                        _ => {}
                    }
                }
                for p in embedded {
                    self.relation(child, p, node);
                }
            }
            (
                Language::Java,
                "class_declaration" | "interface_declaration" | "enum_declaration",
            ) => {
                let child = name();
                let mut c = node.walk();
                let heritage: Vec<Node<'_>> = node
                    .named_children(&mut c)
                    .filter(|n| {
                        matches!(
                            n.kind(),
                            "superclass" | "super_interfaces" | "extends_interfaces"
                        )
                    })
                    .collect();
                for h in heritage {
                    for p in self.type_names(h) {
                        self.relation(child, p, node);
                    }
                }
            }
            (Language::Cpp, "class_specifier" | "struct_specifier") => {
                let child = name();
                let mut c = node.walk();
                let bases: Vec<Node<'_>> = node
                    .named_children(&mut c)
                    .filter(|n| n.kind() == "base_class_clause")
                    .collect();
                for b in bases {
                    for p in self.type_names(b) {
                        self.relation(child, p, node);
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(name: &str) -> String {
        std::fs::read_to_string(format!(
            "{}/testdata/graph/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    fn calls(f: &FileFacts) -> Vec<(String, u32)> {
        f.refs
            .iter()
            .filter(|r| r.call)
            .map(|r| (r.name.clone(), r.line))
            .collect()
    }

    fn has_call(f: &FileFacts, name: &str, line: u32) -> bool {
        f.refs
            .iter()
            .any(|r| r.call && r.name == name && r.line == line)
    }

    fn has_import(f: &FileFacts, module: &str, name: Option<&str>, alias: Option<&str>) -> bool {
        f.imports
            .iter()
            .any(|i| i.module == module && i.name.as_deref() == name && i.alias.as_deref() == alias)
    }

    fn has_relation(f: &FileFacts, child: &str, parent: &str) -> bool {
        f.relations
            .iter()
            .any(|r| r.child == child && r.parent == parent)
    }

    #[test]
    fn python_calls_imports_and_bases() {
        let f = extract_facts(Language::Python, &sample("app.py"));
        assert!(has_import(&f, "os", None, None), "{:?}", f.imports);
        assert!(has_import(&f, "pkg.util", Some("helper"), Some("h")));
        assert!(has_import(&f, ".models", Some("Model"), None));
        assert!(has_call(&f, "h", 9), "{:?}", calls(&f));
        assert!(has_call(&f, "validate", 10), "{:?}", calls(&f));
        assert!(has_relation(&f, "App", "Model"), "{:?}", f.relations);
        assert!(has_relation(&f, "App", "Mixin"));
        let join = f.refs.iter().find(|r| r.name == "join").unwrap();
        assert_eq!(join.qualifier.as_deref(), Some("os.path"));
        // Definition names are not references of themselves.
        assert!(!f.refs.iter().any(|r| r.name == "run" && r.line == 8));
        // Imports are not references either.
        assert!(!f.refs.iter().any(|r| r.name == "helper"));
    }

    #[test]
    fn rust_calls_uses_and_impls() {
        let f = extract_facts(Language::Rust, &sample("lib.rs"));
        assert!(
            has_import(&f, "crate::store", Some("Store"), None),
            "{:?}",
            f.imports
        );
        assert!(has_import(
            &f,
            "std::collections",
            Some("HashMap"),
            Some("Map")
        ));
        assert!(has_import(&f, "self::walk", None, None));
        assert!(has_import(&f, "super::util", Some("*"), None));
        assert!(has_call(&f, "open", 9), "{:?}", calls(&f));
        assert!(has_call(&f, "helper", 10));
        assert!(has_call(&f, "flush", 11));
        assert!(!calls(&f).iter().any(|(n, _)| n == "println"));
        assert!(has_relation(&f, "Index", "Display"), "{:?}", f.relations);
        let open = f.refs.iter().find(|r| r.name == "open").unwrap();
        assert_eq!(open.qualifier.as_deref(), Some("Store"));
    }

    #[test]
    fn javascript_and_typescript_imports_and_classes() {
        let f = extract_facts(Language::JavaScript, &sample("app.js"));
        assert!(
            has_import(&f, "./router", None, Some("Router")),
            "{:?}",
            f.imports
        );
        assert!(has_import(&f, "./utils", Some("merge"), None));
        assert!(has_import(&f, "./view", Some("default"), Some("View")));
        assert!(has_call(&f, "merge", 7), "{:?}", calls(&f));
        assert!(has_call(&f, "Router", 8));
        assert!(has_call(&f, "render", 9));
        assert!(has_relation(&f, "App", "Emitter"), "{:?}", f.relations);
        let t = extract_facts(Language::TypeScript, &sample("shapes.ts"));
        assert!(
            has_import(&t, "./base", Some("Shape"), Some("S")),
            "{:?}",
            t.imports
        );
        assert!(has_relation(&t, "Circle", "S"), "{:?}", t.relations);
        assert!(has_relation(&t, "Circle", "Drawable"));
        assert!(has_relation(&t, "Drawable", "Named"));
        assert!(has_call(&t, "area", 9), "{:?}", calls(&t));
    }

    #[test]
    fn go_packages_calls_and_embedding() {
        let f = extract_facts(Language::Go, &sample("cmd.go"));
        assert!(
            has_import(&f, "github.com/o/r/util", None, None),
            "{:?}",
            f.imports
        );
        assert!(has_import(&f, "fmt", None, Some("f")));
        assert!(has_call(&f, "Parse", 13), "{:?}", calls(&f));
        let parse = f.refs.iter().find(|r| r.name == "Parse").unwrap();
        assert_eq!(parse.qualifier.as_deref(), Some("util"));
        assert!(has_call(&f, "run", 14));
        assert!(has_relation(&f, "Command", "Base"), "{:?}", f.relations);
        assert!(has_relation(&f, "Runner", "Named"));
    }

    #[test]
    fn java_c_and_cpp() {
        let j = extract_facts(Language::Java, &sample("Shop.java"));
        assert!(
            has_import(&j, "com.acme.util", Some("Prices"), None),
            "{:?}",
            j.imports
        );
        assert!(has_call(&j, "total", 8), "{:?}", calls(&j));
        assert!(has_call(&j, "Cart", 7));
        assert!(has_relation(&j, "Shop", "Store"), "{:?}", j.relations);
        assert!(has_relation(&j, "Shop", "Closeable"));
        let c = extract_facts(Language::C, &sample("main.c"));
        assert!(has_import(&c, "util.h", None, None), "{:?}", c.imports);
        assert!(has_import(&c, "stdio.h", None, None));
        assert!(has_call(&c, "parse", 5), "{:?}", calls(&c));
        let p = extract_facts(Language::Cpp, &sample("shape.cpp"));
        assert!(has_relation(&p, "Square", "Shape"), "{:?}", p.relations);
        assert!(has_call(&p, "area", 9), "{:?}", calls(&p));
    }

    #[test]
    fn text_and_markdown_have_no_facts() {
        assert_eq!(
            extract_facts(Language::Markdown, "# x\n"),
            FileFacts::default()
        );
        assert_eq!(extract_facts(Language::Text, "x()"), FileFacts::default());
    }
}
