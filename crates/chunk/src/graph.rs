//! Graph facts of a source file ([`extract_facts`]): the names it references (call sites marked),
//! its imports / uses / includes, and the type relations it declares (`impl Trait for T`, class
//! inheritance, interface embedding). A pure function of the text, like chunking; resolving the
//! names to definitions needs the whole repository and happens in `patina-index`.

use std::collections::{BTreeSet, HashSet};

use patina_core::{FileFacts, Import, Language, Reference, TypeRelation};
use tree_sitter::{Node, Tree};

use crate::languages::parse;

mod bash;
mod csharp;
mod dart;
mod elixir;
mod erlang;
mod haskell;
mod hcl;
mod julia;
mod kotlin;
mod lua;
mod objc;
mod ocaml;
mod php;
mod protobuf;
mod r;
mod reexports;
mod ruby;
mod scala;
mod sql;
mod swift;
mod zig;
pub use reexports::mark_package_reexports;

/// The version of the fact extraction rules. Bump it whenever the facts of some text change: an
/// index made with another version extracts them again at its next full round.
///
/// 1: calls, references, imports and type relations for the eight parsed languages.
/// 2: re-exports ([`Import::reexport`]): `pub use`, `export … from`, names exported again
///    (`export { B }`, `module.exports = { B }`, `__all__`), Go type aliases of another package.
/// 3: Ruby: calls, `require`/`require_relative`, superclasses.
/// 4: PHP: calls, `use` imports, `extends`/`implements`/trait uses.
/// 5: C#: calls, `using` directives, base lists.
/// 6: Kotlin: calls, imports, supertypes.
/// 7: Lua: calls, `require`.
/// 8: shell scripts: commands as calls, `source`/`.`.
/// 9: Scala: calls, imports, `extends`/`with`.
/// 10: Elixir: calls, `alias`/`import`/`require`/`use`, `defimpl`.
/// 11: Swift: calls, `import`, inheritance clauses.
/// 12: Haskell: applications as calls, `import`, instances.
/// 13: Zig: calls (and `a.b()` by the `object`/`member` fields), `@import`.
/// 14: Dart: calls, `import`, `extends`/`with`/`implements`.
/// 15: Protocol Buffers: types named by fields and rpcs, `import`.
/// 16: HCL: Terraform addresses as references, function calls.
/// 17: C# facts of the first branch of each `#if` (one build), not of every variant at once.
/// 18: Objective-C: message sends as calls, `#import`/`@import`, superclasses and protocols.
/// 19: R: calls (`pkg::f` through `pkg`), `library`/`require`/`source`, class parents.
/// 20: Erlang: calls (`m:f` through `m`), funs, records, macros, `-import`/`-include`,
///     `-behaviour`.
/// 21: SQL: tables, views and types a statement names; functions invoked.
/// 22: Julia: calls (`M.f` through `M`), macros, `using`/`import`/`include`, supertypes.
/// 23: OCaml: applications as calls through module paths, types, `open`/`include`, module
///     aliases, `inherit`.
pub const GRAPH_VERSION: u32 = 23;

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
    "simple_identifier",
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
        exported: HashSet::new(),
    };
    x.walk(tree.root_node());
    x.mark_exported();
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
    /// Local names the file exports again without saying where from (`export { B }`,
    /// `module.exports = { B }`, `__all__ = ["B"]`): its imports of them are re-exports.
    exported: HashSet<String>,
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
        if self.language == Language::Php {
            return self.php(node, field);
        }
        // SQL's identifiers are mostly columns and aliases: only the objects it names count.
        if self.language == Language::Sql {
            return self.sql(node);
        }
        if IDENTS.contains(&kind) {
            if field == Some("name") && !self.skip.contains(&node.id()) {
                // A definition's or declaration's own name is not a reference, except where the
                // `name` field is a use (Java's `method_invocation`: handled as a call, skipped).
            } else if !self.skip.contains(&node.id()) {
                self.reference(node, false, None);
            }
            return;
        }
        match self.language {
            Language::Ruby => return self.ruby(node),
            Language::CSharp => return self.csharp(node),
            Language::Kotlin => return self.kotlin(node),
            Language::Lua => return self.lua(node),
            Language::Bash => return self.bash(node),
            Language::Scala => return self.scala(node),
            Language::Elixir => return self.elixir(node),
            Language::Swift => return self.swift(node),
            Language::Haskell => return self.haskell(node, field),
            Language::Protobuf => return self.protobuf(node),
            Language::Hcl => return self.hcl(node),
            Language::Erlang => return self.erlang(node),
            // Zig's calls are read by the common rules below.
            Language::Zig => self.zig(node),
            Language::Dart => self.dart(node),
            // C's calls and includes are read by the common rules below.
            Language::ObjC => self.objc(node),
            // And R's plain calls.
            Language::R => self.r(node),
            Language::Julia => return self.julia(node),
            Language::OCaml | Language::OCamlInterface => return self.ocaml(node),
            _ => {}
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
        let before = self.facts.imports.len();
        self.imports(node);
        self.reexports(node, before);
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

    /// The node's own `identifier` children name what it declares (a field, a block, a selector's
    /// keywords), not uses: they are no references.
    fn skip_identifier_children(&mut self, node: Node<'_>) {
        let mut c = node.walk();
        let names: Vec<usize> = node
            .named_children(&mut c)
            .filter(|n| n.kind() == "identifier")
            .map(|n| n.id())
            .collect();
        self.skip.extend(names);
    }

    fn reference(&mut self, node: Node<'_>, call: bool, qualifier: Option<String>) {
        let name = self.text(node);
        if name.is_empty() || STOP.contains(&name) || name.len() > 200 {
            return;
        }
        self.refs.insert(Reference {
            name: name.into(),
            line: line(node),
            call,
            qualifier: qualifier
                .filter(|q| !q.is_empty() && q.len() <= 100)
                .map(Into::into),
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
                callee
                    .child_by_field_name("field")
                    .or_else(|| callee.child_by_field_name("member")),
                callee
                    .child_by_field_name("value")
                    .or_else(|| callee.child_by_field_name("argument"))
                    .or_else(|| callee.child_by_field_name("object")),
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
            reexport: false,
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
            (Language::C | Language::Cpp | Language::ObjC, "preproc_include") => {
                if let Some(path) = self.field_text(node, "path") {
                    // Objective-C's `#import` brings every declaration of the header (and of its
                    // implementation) into scope.
                    let all = (self.language == Language::ObjC).then_some("*");
                    self.import(path, all, None, node);
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
mod tests;
