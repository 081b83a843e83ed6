//! Per-language knowledge for the chunker.
//!
//! [`Language`] recognises a file's language from its path. For the languages
//! parsed with tree-sitter, [`Language::syntax`] gives a [`Syntax`] table: the
//! grammar, which node kinds are definitions (and of which [`ChunkKind`]),
//! which of them contain member definitions, how a definition is named, which
//! nodes merely wrap a definition (`export`, decorators, templates), and which
//! nodes are leading trivia (comments, attributes) that belong to the
//! definition below them. The generic tree walk lives in `chunk.rs`.

use tree_sitter::Node;

use patina_core::ChunkKind;
pub use patina_core::Language;

mod conditional;
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
mod ruby;
mod sql;
mod swift;
mod zig;

pub(crate) use ocaml::documented_below as ocaml_documented_below;

/// `text` parsed with `language`'s grammar; `None` for Markdown and plain text (no grammar) or
/// when tree-sitter gives up. C# is parsed as one build, the first branch of each conditional
/// ([`conditional`]): the tree's offsets are the text's own. Each thread keeps one parser per language (a parser is reusable and
/// its allocation is not free), so chunking and fact extraction of many files pay for it once.
pub(crate) fn parse(language: Language, text: &str) -> Option<tree_sitter::Tree> {
    use std::cell::RefCell;
    use std::collections::HashMap;
    thread_local! {
        static PARSERS: RefCell<HashMap<Language, tree_sitter::Parser>> = RefCell::new(HashMap::new());
    }
    let syntax = syntax(language)?;
    PARSERS.with(|parsers| {
        let mut parsers = parsers.borrow_mut();
        let parser = match parsers.entry(language) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                let mut parser = tree_sitter::Parser::new();
                parser.set_language(&syntax.grammar()).ok()?;
                e.insert(parser)
            }
        };
        // A parse that was cut short leaves the parser mid-document; start the next one afresh.
        let tree = match language {
            Language::CSharp => parser.parse(conditional::first_branches(text).as_ref(), None),
            Language::Kotlin => {
                parser.parse(kotlin::without_context_parameters(text).as_ref(), None)
            }
            // Read as one build, without the macros the grammar cannot know.
            Language::ObjC => {
                let read = conditional::first_branches(text);
                let read = objc::without_attribute_macros(&read);
                parser.parse(objc::without_region_macros(&read).as_ref(), None)
            }
            _ => parser.parse(text, None),
        };
        if tree.is_none() {
            parser.reset();
        }
        tree
    })
}

/// The syntax table for languages chunked by parsing; `None` for Markdown and plain text.
pub(crate) fn syntax(language: Language) -> Option<&'static Syntax> {
    match language {
        Language::Rust => Some(&RUST),
        Language::Python => Some(&PYTHON),
        Language::JavaScript => Some(&JAVASCRIPT),
        Language::TypeScript => Some(&TYPESCRIPT),
        Language::Tsx => Some(&TSX),
        Language::Go => Some(&GO),
        Language::Java => Some(&JAVA),
        Language::C => Some(&C),
        Language::Cpp => Some(&CPP),
        Language::Ruby => Some(&ruby::RUBY),
        Language::Php => Some(&php::PHP),
        Language::CSharp => Some(&csharp::CSHARP),
        Language::Kotlin => Some(&kotlin::KOTLIN),
        Language::Lua => Some(&lua::LUA),
        Language::Bash => Some(&BASH),
        Language::Scala => Some(&SCALA),
        Language::Elixir => Some(&elixir::ELIXIR),
        Language::Swift => Some(&swift::SWIFT),
        Language::Haskell => Some(&haskell::HASKELL),
        Language::Zig => Some(&zig::ZIG),
        Language::Dart => Some(&dart::DART),
        Language::Protobuf => Some(&protobuf::PROTOBUF),
        Language::Hcl => Some(&hcl::HCL),
        Language::ObjC => Some(&objc::OBJC),
        Language::R => Some(&r::R),
        Language::Erlang => Some(&erlang::ERLANG),
        Language::Sql => Some(&sql::SQL),
        Language::Julia => Some(&julia::JULIA),
        Language::OCaml => Some(&ocaml::OCAML),
        Language::OCamlInterface => Some(&ocaml::OCAML_INTERFACE),
        Language::Markdown | Language::Text => None,
    }
}

/// A definition found in the syntax tree, as the chunker needs to know it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Definition {
    pub kind: ChunkKind,
    pub symbol: Option<String>,
    /// Owner named by the definition itself (a Go method's receiver type, the
    /// `Foo` of a C++ `Foo::bar` definition); takes precedence over the
    /// enclosing container.
    pub owner: Option<String>,
    /// Whether member definitions inside this one get chunks of their own.
    pub container: bool,
    /// The `parent` given to member definitions: usually the symbol, but the
    /// implementing type for a Rust `impl Trait for Type`.
    pub member_parent: Option<String>,
}

/// How one language's syntax tree is read by the chunker.
pub(crate) struct Syntax {
    grammar: fn() -> tree_sitter::Language,
    rules: &'static [Rule],
    /// Node kinds that wrap a single definition and belong to its chunk.
    wrappers: &'static [&'static str],
    /// Node kinds, besides comments, that attach to the definition below them.
    trivia: &'static [&'static str],
}

impl Syntax {
    pub(crate) fn grammar(&self) -> tree_sitter::Language {
        (self.grammar)()
    }

    /// Interprets `node` as a definition, or `None` if it is not one.
    /// `in_container` tells whether `node` lies inside a container definition.
    pub(crate) fn definition(
        &self,
        node: Node<'_>,
        src: &str,
        in_container: bool,
    ) -> Option<Definition> {
        let rule = self
            .rule(node.kind())
            .filter(|rule| in_container || !rule.member_only)?;
        let mut definition = Definition {
            kind: rule.kind,
            symbol: None,
            owner: None,
            container: rule.container,
            member_parent: None,
        };
        match rule.name {
            Name::Field(field) => definition.symbol = field_text(node, field, src),
            Name::WithBody(field) => {
                node.child_by_field_name("body")?;
                definition.symbol = field_text(node, field, src);
            }
            Name::RustImpl => {
                let implemented = node
                    .child_by_field_name("type")
                    .and_then(|ty| type_name(ty, src));
                definition.symbol = match field_text(node, "trait", src) {
                    Some(tr) => Some(format!(
                        "{tr} for {}",
                        implemented.as_deref().unwrap_or("?")
                    )),
                    None => implemented.clone(),
                };
                definition.member_parent = implemented;
            }
            Name::GoMethod => {
                definition.symbol = field_text(node, "name", src);
                definition.owner = node
                    .child_by_field_name("receiver")
                    .and_then(|receiver| first_named_child(receiver, "parameter_declaration"))
                    .and_then(|parameter| parameter.child_by_field_name("type"))
                    .and_then(|ty| type_name(ty, src));
            }
            Name::GoType => {
                definition.symbol = field_text(node, "name", src);
                definition.kind = match node.child_by_field_name("type").map(|ty| ty.kind()) {
                    Some("struct_type") => ChunkKind::Struct,
                    Some("interface_type") => ChunkKind::Interface,
                    _ => rule.kind,
                };
            }
            Name::JsVariable => {
                let mut cursor = node.walk();
                let mut declarators = node
                    .named_children(&mut cursor)
                    .filter(|child| child.kind() == "variable_declarator");
                let declarator = declarators.next()?;
                if declarators.next().is_some() {
                    return None;
                }
                definition.kind = js_value_kind(declarator.child_by_field_name("value")?)?;
                definition.symbol = field_text(declarator, "name", src);
            }
            Name::JsField => {
                if js_value_kind(node.child_by_field_name("value")?)? != ChunkKind::Function {
                    return None;
                }
                definition.symbol =
                    field_text(node, "property", src).or_else(|| field_text(node, "name", src));
            }
            Name::JsStatement => {
                let expr = node.named_child(0)?;
                match expr.kind() {
                    "assignment_expression" => {
                        definition.kind = js_value_kind(expr.child_by_field_name("right")?)?;
                        let left = expr.child_by_field_name("left")?;
                        match left.kind() {
                            "member_expression" => {
                                definition.symbol = field_text(left, "property", src);
                                definition.owner =
                                    js_owner(left.child_by_field_name("object")?, src);
                            }
                            "identifier" => definition.symbol = normalize(node_text(left, src)),
                            _ => return None,
                        }
                    }
                    "call_expression" => {
                        let arguments = expr.child_by_field_name("arguments")?;
                        let mut cursor = arguments.walk();
                        let mut named = arguments.named_children(&mut cursor).filter(|a| {
                            js_value_kind(*a) == Some(ChunkKind::Function)
                                && a.child_by_field_name("name").is_some()
                        });
                        let function = named.next()?;
                        if named.next().is_some() {
                            return None;
                        }
                        definition.symbol = field_text(function, "name", src);
                    }
                    _ => return None,
                }
                definition.symbol.as_ref()?;
            }
            Name::CFunction => {
                let (name, owner) = node
                    .child_by_field_name("declarator")
                    .map_or((None, None), |declarator| declarator_name(declarator, src));
                definition.symbol = name;
                if owner.is_some() {
                    definition.kind = ChunkKind::Method;
                    definition.owner = owner;
                }
            }
            Name::By(namer) => namer(node, src, in_container, &mut definition)?,
            Name::CTypedef => {
                definition.symbol = node
                    .child_by_field_name("declarator")
                    .and_then(|declarator| declarator_name(declarator, src).0);
                definition.kind = match node.child_by_field_name("type") {
                    Some(ty) if ty.child_by_field_name("body").is_some() => match ty.kind() {
                        "enum_specifier" => ChunkKind::Enum,
                        "struct_specifier" | "union_specifier" | "class_specifier" => {
                            ChunkKind::Struct
                        }
                        _ => rule.kind,
                    },
                    _ => rule.kind,
                };
            }
        }
        if definition.container && definition.member_parent.is_none() {
            definition.member_parent = definition.symbol.clone();
        }
        Some(definition)
    }

    /// Whether nodes of this kind may be definitions (without looking inside them).
    pub(crate) fn is_definition_kind(&self, kind: &str) -> bool {
        self.rule(kind).is_some()
    }

    /// Whether nodes of this kind wrap a definition (`export`, decorators, `template<…>`).
    pub(crate) fn is_wrapper(&self, kind: &str) -> bool {
        self.wrappers.contains(&kind)
    }

    /// Whether nodes of this kind are comments or attributes, which attach to the next definition.
    pub(crate) fn is_trivia(&self, kind: &str) -> bool {
        kind.ends_with("comment") || self.trivia.contains(&kind)
    }

    /// Whether nodes of this kind are equations: one after another with the same name, they
    /// make one definition (Haskell's functions by pattern).
    pub(crate) fn is_equation(&self, kind: &str) -> bool {
        self.rule(kind).is_some_and(|rule| rule.equation)
    }

    fn rule(&self, kind: &str) -> Option<&Rule> {
        self.rules.iter().find(|rule| rule.node == kind)
    }
}

/// One definition node kind.
struct Rule {
    node: &'static str,
    kind: ChunkKind,
    container: bool,
    /// Only a definition inside a container (JS methods: not in object literals).
    member_only: bool,
    /// Consecutive definitions of the same name are one ([`Syntax::is_equation`]).
    equation: bool,
    name: Name,
}

/// How a definition is named (and, for a few, refined or rejected).
#[derive(Clone, Copy)]
enum Name {
    /// The text of this field, if present.
    Field(&'static str),
    /// The text of this field; only a definition when the node has a `body`
    /// (so `mod foo;` and `struct foo *p;` are not).
    WithBody(&'static str),
    /// `impl Type` → "Type", `impl Trait for Type` → "Trait for Type"; members get parent "Type".
    RustImpl,
    /// The method name; the receiver's type becomes the owner.
    GoMethod,
    /// The type name; the kind follows the defined type (struct, interface, other).
    GoType,
    /// `const foo = () => …` / `= function …` / `= class …` with a single declarator.
    JsVariable,
    /// A class field initialised with a function.
    JsField,
    /// A statement that defines by assignment or callback, the CommonJS way:
    /// `res.redirect = function redirect(url) {…}` → "redirect" owned by `res`
    /// (`Foo.prototype.bar = …` → "bar" owned by `Foo`), and a named function
    /// passed to a call, `defineGetter(req, 'host', function host() {…})` → "host".
    JsStatement,
    /// The name inside a C/C++ declarator; a `Foo::` qualifier becomes the owner.
    CFunction,
    /// The typedef name; the kind follows the aliased struct/union/enum body, if any.
    CTypedef,
    /// A language's own reading, in its module (`ruby.rs`, …): it fills in the definition and
    /// answers `None` to reject the node.
    By(Namer),
}

/// Names (and may refine or reject, by answering `None`) a definition of the node kind it is
/// given for; `in_container` tells whether the node lies inside a container definition.
type Namer = fn(Node<'_>, &str, bool, &mut Definition) -> Option<()>;

/// A definition without member definitions of its own.
const fn leaf(node: &'static str, kind: ChunkKind, name: Name) -> Rule {
    Rule {
        node,
        kind,
        container: false,
        member_only: false,
        equation: false,
        name,
    }
}

/// A definition whose members get chunks of their own.
const fn container(node: &'static str, kind: ChunkKind, name: Name) -> Rule {
    Rule {
        container: true,
        ..leaf(node, kind, name)
    }
}

/// A definition by equations: consecutive ones of the same name make one definition.
const fn equation(node: &'static str, kind: ChunkKind, name: Name) -> Rule {
    Rule {
        equation: true,
        ..leaf(node, kind, name)
    }
}

/// A definition only when inside a container.
const fn member(node: &'static str, kind: ChunkKind, name: Name) -> Rule {
    Rule {
        member_only: true,
        ..leaf(node, kind, name)
    }
}

use ChunkKind::{
    Class, Const, Enum, Function, Impl, Interface, Method, Module, Struct, Trait, Type,
};
use Name::{
    CFunction, CTypedef, Field, GoMethod, GoType, JsField, JsStatement, JsVariable, RustImpl,
    WithBody,
};

static RUST: Syntax = Syntax {
    grammar: || tree_sitter_rust::LANGUAGE.into(),
    rules: &[
        leaf("function_item", Function, Field("name")),
        leaf("struct_item", Struct, Field("name")),
        leaf("union_item", Struct, Field("name")),
        leaf("enum_item", Enum, Field("name")),
        leaf("type_item", Type, Field("name")),
        leaf("const_item", Const, Field("name")),
        leaf("static_item", Const, Field("name")),
        container("trait_item", Trait, Field("name")),
        container("impl_item", Impl, RustImpl),
        container("mod_item", Module, WithBody("name")),
    ],
    wrappers: &[],
    trivia: &["attribute_item"],
};

static PYTHON: Syntax = Syntax {
    grammar: || tree_sitter_python::LANGUAGE.into(),
    rules: &[
        leaf("function_definition", Function, Field("name")),
        container("class_definition", Class, Field("name")),
    ],
    wrappers: &["decorated_definition"],
    trivia: &[],
};

/// Definitions shared by JavaScript and TypeScript.
macro_rules! javascript_rules {
    ($($extra:expr),* $(,)?) => {
        &[
            leaf("function_declaration", Function, Field("name")),
            leaf("generator_function_declaration", Function, Field("name")),
            leaf("lexical_declaration", Function, JsVariable),
            leaf("variable_declaration", Function, JsVariable),
            leaf("expression_statement", Function, JsStatement),
            member("method_definition", Method, Field("name")),
            member("field_definition", Method, JsField),
            container("class_declaration", Class, Field("name")),
            $($extra,)*
        ]
    };
}

static JAVASCRIPT: Syntax = Syntax {
    grammar: || tree_sitter_javascript::LANGUAGE.into(),
    rules: javascript_rules!(),
    wrappers: &["export_statement"],
    trivia: &["decorator"],
};

static TYPESCRIPT: Syntax = Syntax {
    grammar: || tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
    rules: TYPESCRIPT_RULES,
    wrappers: TYPESCRIPT_WRAPPERS,
    trivia: &["decorator"],
};

static TSX: Syntax = Syntax {
    grammar: || tree_sitter_typescript::LANGUAGE_TSX.into(),
    rules: TYPESCRIPT_RULES,
    wrappers: TYPESCRIPT_WRAPPERS,
    trivia: &["decorator"],
};

const TYPESCRIPT_RULES: &[Rule] = javascript_rules!(
    member("public_field_definition", Method, JsField),
    leaf("interface_declaration", Interface, Field("name")),
    leaf("type_alias_declaration", Type, Field("name")),
    leaf("enum_declaration", Enum, Field("name")),
    container("abstract_class_declaration", Class, Field("name")),
    container("internal_module", Module, Field("name")),
    container("module", Module, Field("name")),
);

const TYPESCRIPT_WRAPPERS: &[&str] = &["export_statement", "ambient_declaration"];

static GO: Syntax = Syntax {
    grammar: || tree_sitter_go::LANGUAGE.into(),
    rules: &[
        leaf("function_declaration", Function, Field("name")),
        leaf("method_declaration", Method, GoMethod),
        leaf("type_spec", Type, GoType),
        leaf("type_alias", Type, Field("name")),
    ],
    wrappers: &["type_declaration"],
    trivia: &[],
};

static JAVA: Syntax = Syntax {
    grammar: || tree_sitter_java::LANGUAGE.into(),
    rules: &[
        container("class_declaration", Class, Field("name")),
        container("interface_declaration", Interface, Field("name")),
        container("enum_declaration", Enum, Field("name")),
        container("record_declaration", Class, Field("name")),
        container("annotation_type_declaration", Interface, Field("name")),
        leaf("method_declaration", Function, WithBody("name")),
        leaf("constructor_declaration", Method, Field("name")),
        leaf("compact_constructor_declaration", Method, Field("name")),
    ],
    wrappers: &[],
    trivia: &[],
};

/// Shell scripts: functions (`f() { … }`, `function f { … }`); nothing else is a definition.
static BASH: Syntax = Syntax {
    grammar: || tree_sitter_bash::LANGUAGE.into(),
    rules: &[leaf("function_definition", Function, Field("name"))],
    wrappers: &[],
    trivia: &[],
};

/// Scala 2 and 3: classes, objects, traits and enums hold their `def`s (abstract ones too);
/// a package object holds what it defines; type aliases. Annotations are inside the definition.
static SCALA: Syntax = Syntax {
    grammar: || tree_sitter_scala::LANGUAGE.into(),
    rules: &[
        container("class_definition", Class, Field("name")),
        container("object_definition", Class, Field("name")),
        container("trait_definition", Trait, Field("name")),
        container("enum_definition", Enum, Field("name")),
        container("package_object", Module, Field("name")),
        leaf("function_definition", Function, Field("name")),
        leaf("function_declaration", Function, Field("name")),
        leaf("type_definition", Type, Field("name")),
    ],
    wrappers: &[],
    trivia: &[],
};

static C: Syntax = Syntax {
    grammar: || tree_sitter_c::LANGUAGE.into(),
    rules: &[
        leaf("function_definition", Function, CFunction),
        leaf("struct_specifier", Struct, WithBody("name")),
        leaf("union_specifier", Struct, WithBody("name")),
        leaf("enum_specifier", Enum, WithBody("name")),
        leaf("type_definition", Type, CTypedef),
    ],
    wrappers: &["declaration"],
    trivia: &[],
};

static CPP: Syntax = Syntax {
    grammar: || tree_sitter_cpp::LANGUAGE.into(),
    rules: &[
        leaf("function_definition", Function, CFunction),
        container("class_specifier", Class, WithBody("name")),
        container("struct_specifier", Struct, WithBody("name")),
        container("union_specifier", Struct, WithBody("name")),
        leaf("enum_specifier", Enum, WithBody("name")),
        leaf("type_definition", Type, CTypedef),
        leaf("alias_declaration", Type, Field("name")),
        container("namespace_definition", Module, Field("name")),
    ],
    wrappers: &["template_declaration", "declaration", "field_declaration"],
    trivia: &[],
};

/// Whether `node` is an inner doc comment (`//!`, `/*!`), which documents
/// what encloses it rather than the definition below it.
pub(crate) fn is_inner_doc_comment(node: Node<'_>, src: &str) -> bool {
    let text = node_text(node, src);
    text.starts_with("//!") || text.starts_with("/*!")
}

/// The source text of `node`.
fn node_text<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    src.get(node.byte_range()).unwrap_or_default()
}

/// The text of a field with whitespace runs collapsed; `None` if absent or empty.
fn field_text(node: Node<'_>, field: &str, src: &str) -> Option<String> {
    node.child_by_field_name(field)
        .map(|child| node_text(child, src))
        .and_then(normalize)
}

/// Collapses whitespace runs (names can span lines) into single spaces.
fn normalize(text: &str) -> Option<String> {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (!joined.is_empty()).then_some(joined)
}

/// Whether `node` spans more than one line (a value written over several lines is a
/// definition where one on a single line is code among the rest: Kotlin's top-level `val`s,
/// Ruby's constants).
fn multiline(node: Node<'_>) -> bool {
    node.start_position().row != node.end_position().row
}

pub(crate) fn first_named_child<'t>(node: Node<'t>, kind: &str) -> Option<Node<'t>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .find(|child| child.kind() == kind)
}

/// Names `definition` by `text` (normalised): `None`, which rejects the definition, when nothing
/// is left of it. What a language's namer ends with.
fn named(definition: &mut Definition, text: &str) -> Option<()> {
    definition.symbol = normalize(text);
    definition.symbol.as_ref().map(|_| ())
}

/// The bare name of a type: `&mut a::Foo<T>` → "Foo".
fn type_name(mut node: Node<'_>, src: &str) -> Option<String> {
    // Bounded: type nesting in real code is shallow, and a cap keeps hostile input cheap.
    for _ in 0..32 {
        let inner = match node.kind() {
            "generic_type" | "reference_type" | "qualified_type" | "pointer_type" => node
                .child_by_field_name("type")
                .or_else(|| node.child_by_field_name("name"))
                .or_else(|| last_named_child(node)),
            "scoped_type_identifier" | "template_type" => node.child_by_field_name("name"),
            _ => None,
        };
        match inner {
            Some(inner) => node = inner,
            None => break,
        }
    }
    normalize(node_text(node, src))
}

fn last_named_child(node: Node<'_>) -> Option<Node<'_>> {
    let count = u32::try_from(node.named_child_count()).ok()?;
    node.named_child(count.checked_sub(1)?)
}

/// The name declared by a C/C++ declarator, and the owner of a qualified name:
/// `*(*handler)(int)` → "handler", `Foo<T>::bar(int)` → ("bar", "Foo").
fn declarator_name(mut node: Node<'_>, src: &str) -> (Option<String>, Option<String>) {
    let mut owner = None;
    for _ in 0..32 {
        let inner = match node.kind() {
            "identifier" | "field_identifier" | "type_identifier" | "destructor_name"
            | "operator_name" | "operator_cast" | "primitive_type" => break,
            "qualified_identifier" => {
                if let Some(scope) = node.child_by_field_name("scope") {
                    owner = type_name(scope, src);
                }
                node.child_by_field_name("name")
            }
            "template_function" | "template_method" | "template_type" => {
                node.child_by_field_name("name")
            }
            _ => node
                .child_by_field_name("declarator")
                .or_else(|| last_named_child(node)),
        };
        match inner {
            Some(inner) => node = inner,
            None => break,
        }
    }
    (normalize(node_text(node, src)), owner)
}

/// The owner of `object.name = …`: the object when it is a plain name (`res`, `Router`), the
/// class of `Foo.prototype`; none for module plumbing (`exports`, `module.exports`, `this`).
fn js_owner(object: Node<'_>, src: &str) -> Option<String> {
    let object = if object.kind() == "member_expression"
        && field_text(object, "property", src).as_deref() == Some("prototype")
    {
        object.child_by_field_name("object")?
    } else {
        object
    };
    let name = node_text(object, src);
    (object.kind() == "identifier" && !matches!(name, "exports" | "module" | "window" | "global"))
        .then(|| name.to_string())
}

/// The kind of definition a variable or field initialiser makes, if any.
fn js_value_kind(value: Node<'_>) -> Option<ChunkKind> {
    match value.kind() {
        "arrow_function" | "function_expression" | "function" | "generator_function" => {
            Some(ChunkKind::Function)
        }
        "class" => Some(ChunkKind::Class),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
