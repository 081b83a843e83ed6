use super::*;

const RUST: &str = include_str!("../../testdata/rust.rs");
const PYTHON: &str = include_str!("../../testdata/python.py");
const JAVASCRIPT: &str = include_str!("../../testdata/javascript.js");
const TYPESCRIPT: &str = include_str!("../../testdata/typescript.ts");
const TSX: &str = include_str!("../../testdata/tsx.tsx");
const GO: &str = include_str!("../../testdata/go.go");
const JAVA: &str = include_str!("../../testdata/java.java");
const C: &str = include_str!("../../testdata/c.c");
const CPP: &str = include_str!("../../testdata/cpp.cpp");
const RUBY: &str = include_str!("../../testdata/ruby.rb");
const PHP: &str = include_str!("../../testdata/php.php");
const CSHARP: &str = include_str!("../../testdata/csharp.cs");
const KOTLIN: &str = include_str!("../../testdata/kotlin.kt");
const LUA: &str = include_str!("../../testdata/lua.lua");
const BASH: &str = include_str!("../../testdata/bash.sh");
const SCALA: &str = include_str!("../../testdata/scala.scala");
const ELIXIR: &str = include_str!("../../testdata/elixir.ex");
const SWIFT: &str = include_str!("../../testdata/swift.swift");
const HASKELL: &str = include_str!("../../testdata/haskell.hs");
const ZIG: &str = include_str!("../../testdata/zig.zig");
const DART: &str = include_str!("../../testdata/dart.dart");
const PROTOBUF: &str = include_str!("../../testdata/protobuf.proto");
const HCL: &str = include_str!("../../testdata/hcl.tf");
const OBJC: &str = include_str!("../../testdata/objc.m");
const R: &str = include_str!("../../testdata/r.R");
const ERLANG: &str = include_str!("../../testdata/erlang.erl");
const SQL: &str = include_str!("../../testdata/sql.sql");
const JULIA: &str = include_str!("../../testdata/julia.jl");
const OCAML: &str = include_str!("../../testdata/ocaml.ml");
const OCAML_INTERFACE: &str = include_str!("../../testdata/ocaml.mli");
const MARKDOWN: &str = include_str!("../../testdata/markdown.md");

/// `(start_line, end_line, kind, symbol, parent)`
type Summary<'a> = (u32, u32, ChunkKind, Option<&'a str>, Option<&'a str>);

fn summarize(chunks: &[Chunk]) -> Vec<Summary<'_>> {
    chunks
        .iter()
        .map(|chunk| {
            (
                chunk.start_line,
                chunk.end_line,
                chunk.kind,
                chunk.symbol.as_deref(),
                chunk.parent.as_deref(),
            )
        })
        .collect()
}

fn checked(language: Language, text: &str) -> Vec<Chunk> {
    checked_with(language, text, &ChunkOptions::default())
}

fn checked_with(language: Language, text: &str, opts: &ChunkOptions) -> Vec<Chunk> {
    let chunks = chunk_file(language, text, opts);
    assert_invariants(text, &chunks);
    chunks
}

/// Every non-blank line is in some chunk, each chunk's text is exactly its
/// lines, and chunks are sorted.
fn assert_invariants(text: &str, chunks: &[Chunk]) {
    let lines: Vec<&str> = text.lines().collect();
    let mut covered = vec![false; lines.len()];
    for chunk in chunks {
        assert!(
            1 <= chunk.start_line && chunk.start_line <= chunk.end_line,
            "{chunk:?}"
        );
        let start = chunk.start_line as usize - 1;
        let end = chunk.end_line as usize - 1;
        assert!(end < lines.len(), "{chunk:?} past the last line");
        assert_eq!(chunk.text, lines[start..=end].join("\n"));
        covered[start..=end].fill(true);
    }
    for (row, line) in lines.iter().enumerate() {
        assert!(
            covered[row] || line.trim().is_empty(),
            "line {} not covered: {line:?}",
            row + 1
        );
    }
    assert!(chunks.is_sorted_by_key(|chunk| (chunk.start_line, chunk.end_line)));
}

use ChunkKind::*;

fn share_of(language: Language, text: &str, symbol: &str) -> f32 {
    let chunks = checked(language, text);
    let c = chunks
        .iter()
        .find(|c| c.symbol.as_deref() == Some(symbol))
        .unwrap_or_else(|| panic!("no chunk {symbol} in {chunks:?}"));
    c.prose_share
}

#[test]
fn help_text_in_a_string_literal_is_prose_data_and_docstrings_are_not() {
    let rust = r##"
impl Flag for Glob {
fn name_long(&self) -> &'static str { "glob" }
fn doc_long(&self) -> &'static str {
    r"
Include or exclude files and directories for searching that match the given
glob. This always overrides any other ignore logic. Multiple glob flags may
be used. Globbing rules match .gitignore globs. Precede a glob with a ! to
exclude it. If multiple globs match a file or directory, the glob given later
in the command line takes precedence.
"
}
}

fn parse(args: &[&str]) -> Vec<String> {
let mut out = Vec::new();
for a in args {
    if a.starts_with('-') { out.push(a.to_string()); }
}
out
}
"##;
    assert!(share_of(Language::Rust, rust, "doc_long") > 0.5);
    assert_eq!(share_of(Language::Rust, rust, "name_long"), 0.0);
    assert_eq!(share_of(Language::Rust, rust, "parse"), 0.0);
    // Short strings are data (`"*.rs"`), however many there are.
    let table = "fn types() -> Vec<(&'static str, &'static str)> {\n    vec![(\"rust\", \"*.rs\"), (\"go\", \"*.go\"), (\"py\", \"*.py\")]\n}\n";
    assert_eq!(share_of(Language::Rust, table, "types"), 0.0);
    let python = r#"
def load(path):
"""Load the configuration file at path. Values in the file override the defaults,
and unknown keys are reported with the line they were found on, so that typos
surface early instead of being ignored silently by the application."""
with open(path) as f:
    return parse(f.read())
"#;
    assert_eq!(share_of(Language::Python, python, "load"), 0.0);
    // Elixir's documentation attributes are its docstrings; a message it prints is prose.
    let elixir = r#"
defmodule Config do
  @doc """
  Loads the configuration file at path. Values in the file override the defaults,
  and unknown keys are reported with the line they were found on.
  """
  def load(path), do: File.read!(path)

  def usage do
    IO.puts("usage: config PATH -- loads the configuration file at PATH and prints every key it sets")
  end
end
"#;
    assert_eq!(share_of(Language::Elixir, elixir, "load"), 0.0);
    assert!(share_of(Language::Elixir, elixir, "usage") > 0.5);
}

#[test]
fn rust_items_impls_and_modules() {
    let chunks = checked(Language::Rust, RUST);
    assert_eq!(
        summarize(&chunks),
        [
            (1, 2, Block, None, None),
            (4, 8, Struct, Some("Point"), None),
            (10, 10, Impl, Some("Point"), None),
            (11, 14, Method, Some("new"), Some("Point")),
            (16, 19, Method, Some("x"), Some("Point")),
            (21, 21, Impl, Some("fmt::Display for Point"), None),
            (22, 25, Method, Some("fmt"), Some("Point")),
            (27, 31, Function, Some("parse_args"), None),
            (33, 35, Module, Some("tests"), None),
            (37, 39, Function, Some("works"), Some("tests")),
        ]
    );
    assert!(
        chunks[3]
            .text
            .starts_with("    /// Makes one.\n    pub fn new")
    );
    assert!(chunks[7].text.contains("fn nested() {}"));
}

#[test]
fn comments_attach_only_when_directly_above() {
    let text = "//! Inner docs.\n/// Outer docs.\nfn a() {}\n\n// Detached.\n\nfn b() {} // trailing\n// Attached.\nfn c() {}\n";
    assert_eq!(
        summarize(&checked(Language::Rust, text)),
        [
            (1, 1, Block, None, None),
            (2, 3, Function, Some("a"), None),
            (5, 5, Block, None, None),
            (7, 7, Function, Some("b"), None),
            (8, 9, Function, Some("c"), None),
        ]
    );
}

#[test]
fn python_classes_and_decorated_functions() {
    assert_eq!(
        summarize(&checked(Language::Python, PYTHON)),
        [
            (1, 2, Block, None, None),
            (5, 8, Class, Some("Greeter"), None),
            (10, 11, Method, Some("__init__"), Some("Greeter")),
            (13, 16, Method, Some("message"), Some("Greeter")),
            (19, 23, Function, Some("shout"), None),
            (26, 27, Block, None, None),
        ]
    );
}

#[test]
fn javascript_classes_and_function_constants() {
    assert_eq!(
        summarize(&checked(Language::JavaScript, JAVASCRIPT)),
        [
            (1, 1, Block, None, None),
            (3, 4, Class, Some("Widget"), None),
            (5, 8, Method, Some("constructor"), Some("Widget")),
            (10, 12, Method, Some("render"), Some("Widget")),
            (14, 17, Method, Some("onClick"), Some("Widget")),
            (19, 20, Function, Some("add"), None),
            (22, 24, Function, Some("double"), None),
            // Object literal methods are not definitions of their own.
            (26, 30, Block, None, None),
            // Definitions by assignment and by a named callback (CommonJS style).
            (32, 34, Function, Some("redirect"), Some("res")),
            (36, 36, Function, Some("route"), Some("Router")),
            (38, 40, Function, Some("compile"), None),
            (42, 44, Function, Some("host"), None),
            // Anonymous callbacks (test suites) are not.
            (46, 48, Block, None, None),
        ]
    );
}

#[test]
fn typescript_interfaces_aliases_and_classes() {
    assert_eq!(
        summarize(&checked(Language::TypeScript, TYPESCRIPT)),
        [
            (1, 1, Block, None, None),
            (3, 7, Interface, Some("Options"), None),
            (9, 9, Type, Some("Handler"), None),
            (11, 14, Enum, Some("Method"), None),
            (16, 18, Function, Some("createClient"), None),
            (20, 22, Class, Some("Client"), None),
            (24, 26, Method, Some("constructor"), Some("Client")),
            (28, 31, Method, Some("send"), Some("Client")),
        ]
    );
}

#[test]
fn tsx_components() {
    assert_eq!(
        summarize(&checked(Language::Tsx, TSX)),
        [
            (1, 1, Block, None, None),
            (3, 3, Type, Some("Props"), None),
            (5, 7, Function, Some("List"), None),
            (9, 11, Function, Some("Page"), None),
        ]
    );
}

#[test]
fn go_functions_methods_and_types() {
    assert_eq!(
        summarize(&checked(Language::Go, GO)),
        [
            (1, 3, Block, None, None),
            (5, 8, Struct, Some("Server"), None),
            (10, 10, Block, None, None),
            (11, 14, Interface, Some("Handler"), None),
            (15, 16, Type, Some("ID"), None),
            (18, 21, Method, Some("Start"), Some("Server")),
            (23, 23, Method, Some("Push"), Some("Stack")),
            (25, 27, Function, Some("New"), None),
        ]
    );
}

#[test]
fn java_classes_constructors_and_methods() {
    assert_eq!(
        summarize(&checked(Language::Java, JAVA)),
        [
            (1, 3, Block, None, None),
            (5, 7, Class, Some("Account"), None),
            (9, 12, Method, Some("Account"), Some("Account")),
            (14, 17, Method, Some("toString"), Some("Account")),
            (19, 22, Interface, Some("Listener"), Some("Account")),
        ]
    );
}

#[test]
fn c_functions_structs_and_typedefs() {
    assert_eq!(
        summarize(&checked(Language::C, C)),
        [
            (1, 1, Block, None, None),
            (3, 7, Struct, Some("point"), None),
            (9, 11, Struct, Some("conn_t"), None),
            (13, 13, Type, Some("handler_t"), None),
            (15, 15, Block, None, None),
            (17, 20, Function, Some("alloc_ints"), None),
            (22, 24, Function, Some("main"), None),
        ]
    );
}

#[test]
fn cpp_namespaces_classes_and_out_of_line_methods() {
    assert_eq!(
        summarize(&checked(Language::Cpp, CPP)),
        [
            (1, 1, Block, None, None),
            (3, 3, Module, Some("geo"), None),
            (5, 8, Class, Some("Shape"), Some("geo")),
            (10, 12, Method, Some("area"), Some("Shape")),
            (14, 16, Block, None, Some("Shape")),
            (18, 18, Method, Some("Shape"), Some("Shape")),
            (20, 25, Function, Some("clamp"), Some("geo")),
            (27, 29, Method, Some("perimeter"), Some("Shape")),
        ]
    );
}

#[test]
fn ruby_modules_classes_methods_and_accessors() {
    assert_eq!(
        summarize(&checked(Language::Ruby, RUBY)),
        [
            (1, 2, Block, None, None),
            (4, 5, Module, Some("Billing"), None),
            (6, 7, Class, Some("Invoice"), Some("Billing")),
            (8, 8, Method, Some("number"), Some("Invoice")),
            (9, 9, Method, Some("lines"), Some("Invoice")),
            (11, 15, Method, Some("initialize"), Some("Invoice")),
            (17, 19, Method, Some("total"), Some("Invoice")),
            (21, 23, Method, Some("parse"), Some("Invoice")),
            (25, 25, Block, None, Some("Invoice")),
            // `end`s close like brackets: they join the chunk above.
            (26, 30, Method, Some("blank"), Some("Invoice")),
            (32, 35, Method, Some("currency"), Some("Billing")),
            (37, 37, Class, Some("Reminder"), Some("Billing")),
            (38, 41, Method, Some("send_to"), Some("Reminder")),
            (43, 43, Method, Some("helper"), Some("Billing")),
            (45, 47, Function, Some("main"), None),
        ]
    );
}

#[test]
fn php_interfaces_traits_classes_enums_and_functions() {
    assert_eq!(
        summarize(&checked(Language::Php, PHP)),
        [
            // The opening tag, a `namespace X;` statement and the `use` lines.
            (1, 6, Block, None, None),
            (8, 12, Interface, Some("Billable"), None),
            (13, 14, Method, Some("amount"), Some("Billable")),
            (16, 17, Trait, Some("Logs"), None),
            (18, 22, Method, Some("log"), Some("Logs")),
            // The attribute is the class's; trait uses and properties are in its header.
            (24, 29, Class, Some("Invoice"), None),
            (31, 33, Method, Some("__construct"), Some("Invoice")),
            (35, 39, Method, Some("amount"), Some("Invoice")),
            (41, 45, Method, Some("blank"), Some("Invoice")),
            (47, 50, Enum, Some("Status"), None),
            (52, 55, Function, Some("format_amount"), None),
        ]
    );
    // A namespace with braces holds its definitions.
    let braced = "<?php\nnamespace App {\n    function helper() {}\n}\n";
    assert_eq!(
        summarize(&checked(Language::Php, braced)),
        [
            (1, 1, Block, None, None),
            (2, 2, Module, Some("App"), None),
            (3, 4, Function, Some("helper"), Some("App")),
        ]
    );
}

#[test]
fn csharp_namespaces_types_members_and_properties() {
    assert_eq!(
        summarize(&checked(Language::CSharp, CSHARP)),
        [
            (1, 2, Block, None, None),
            (4, 5, Module, Some("Billing"), Some("Acme")),
            (6, 8, Interface, Some("IBillable"), Some("Billing")),
            (9, 10, Method, Some("Total"), Some("IBillable")),
            // The attribute is the class's; fields are in its header.
            (12, 15, Class, Some("Invoice"), Some("Billing")),
            (17, 20, Method, Some("Invoice"), Some("Invoice")),
            (22, 22, Method, Some("Number"), Some("Invoice")),
            (24, 25, Method, Some("Total"), Some("Invoice")),
            (27, 28, Method, Some("Blank"), Some("Invoice")),
            (30, 30, Class, Some("Line"), Some("Billing")),
            (32, 35, Struct, Some("Money"), Some("Billing")),
            (37, 37, Enum, Some("Status"), Some("Billing")),
            (39, 40, Type, Some("Paid"), Some("Billing")),
        ]
    );
    // A file-scoped namespace is a statement: the types after it are the file's.
    let scoped = "namespace Acme;\n\npublic class A\n{\n    void Run() {}\n}\n";
    assert_eq!(
        summarize(&checked(Language::CSharp, scoped)),
        [
            (1, 1, Block, None, None),
            (3, 4, Class, Some("A"), None),
            (5, 6, Method, Some("Run"), Some("A")),
        ]
    );
}

#[test]
fn csharp_conditional_compilation_is_read_as_one_build() {
    // Variants of one signature, and default interface members compiled on some targets only:
    // each is one method of its class, named for itself, its text holding every variant.
    let text = "\
class Binder
{
#if FEATURE_SPAN
    int Bind(ReadOnlySpan<object> args)
#else
    int Bind(object[] args)
#endif
    {
        return 0;
    }
}

interface ILogger
{
    void Write(string template)
#if FEATURE_DEFAULT_INTERFACE
        => Write(null, template)
#endif
    ;

    #region Verbose
    void Verbose(string template);
    #endregion
}
";
    let chunks = checked(Language::CSharp, text);
    assert_eq!(
        summarize(&chunks),
        [
            (1, 3, Class, Some("Binder"), None),
            (4, 11, Method, Some("Bind"), Some("Binder")),
            (13, 14, Interface, Some("ILogger"), None),
            (15, 19, Method, Some("Write"), Some("ILogger")),
            // A region opens what follows it.
            (21, 22, Method, Some("Verbose"), Some("ILogger")),
            (23, 24, Block, None, Some("ILogger")),
        ]
    );
    let bind = &chunks[1].text;
    assert!(bind.contains("ReadOnlySpan<object> args") && bind.contains("object[] args"));
}

#[test]
fn csharp_operators_indexers_and_events_are_members() {
    let text = "\
public struct Money
{
    public static Money operator +(Money a, Money b)
    {
        return new Money(a.Cents + b.Cents);
    }

    public static explicit operator long(Money m) => m.Cents;

    public long this[int i]
    {
        get { return Cents; }
    }

    public event EventHandler Changed
    {
        add { }
        remove { }
    }
}
";
    assert_eq!(
        summarize(&checked(Language::CSharp, text)),
        [
            (1, 2, Struct, Some("Money"), None),
            (3, 6, Method, Some("operator +"), Some("Money")),
            (8, 8, Method, Some("operator long"), Some("Money")),
            (10, 13, Method, Some("this"), Some("Money")),
            (15, 20, Method, Some("Changed"), Some("Money")),
        ]
    );
}

#[test]
fn kotlin_top_level_properties_over_several_lines_are_definitions() {
    let text = "\
package acme

val short = 1

val appModule = module {
    single { Repo() }
}

val Context.koin: Koin
    get() = (applicationContext as KoinComponent).getKoin()

class A {
    val inside = listOf(
        1,
    )
}
";
    assert_eq!(
        summarize(&checked(Language::Kotlin, text)),
        [
            (1, 3, Block, None, None),
            (5, 7, Const, Some("appModule"), None),
            (9, 10, Const, Some("koin"), Some("Context")),
            (12, 16, Class, Some("A"), None),
        ]
    );
}

#[test]
fn ruby_constants_over_several_lines_are_definitions() {
    let text = "\
module Rack
  module Mime
    VERSION = \"1\"

    MIME_TYPES = {
      \".html\" => \"text/html\",
    }

    def mime_type(ext)
      MIME_TYPES[ext]
    end
  end
end
";
    assert_eq!(
        summarize(&checked(Language::Ruby, text)),
        [
            (1, 1, Module, Some("Rack"), None),
            (2, 3, Module, Some("Mime"), Some("Rack")),
            (5, 7, Const, Some("MIME_TYPES"), Some("Mime")),
            (9, 13, Method, Some("mime_type"), Some("Mime")),
        ]
    );
}

#[test]
fn kotlin_classes_without_a_body_after_an_annotation_are_classes() {
    let text = "\
package a

@DslMarker
annotation class KoinDslMarker

fun pair() = 1 to 2

/** A marker. */
@Retention(AnnotationRetention.BINARY)
annotation class Other
";
    assert_eq!(
        summarize(&checked(Language::Kotlin, text)),
        [
            (1, 1, Block, None, None),
            (3, 4, Class, Some("KoinDslMarker"), None),
            (6, 6, Function, Some("pair"), None),
            (8, 10, Class, Some("Other"), None),
        ]
    );
}

#[test]
fn kotlin_context_parameters_do_not_hide_the_declarations_they_qualify() {
    // Kotlin 2.2's context parameters are newer than the grammar: the whole file used to fall
    // into errors and line windows. A test DSL's `context("…") { }` call is left as written.
    let text = "\
package a

context(logger: Logger, raise: Raise<DomainError>)
fun fetchUser(id: String): User = load(id)

inline fun <reified C1 : Any> Scope.withContext(
    noinline block: context(C1) () -> Any?,
): Any? = block(any())

class Repo {
    context(Tx)
    suspend fun save(u: User) { write(u) }
}

val spec = describe {
    context(\"when empty\") { check() }
}
";
    assert_eq!(
        summarize(&checked(Language::Kotlin, text)),
        [
            (1, 1, Block, None, None),
            (3, 4, Function, Some("fetchUser"), None),
            (6, 8, Method, Some("withContext"), Some("Scope")),
            (10, 10, Class, Some("Repo"), None),
            (11, 13, Method, Some("save"), Some("Repo")),
            (15, 17, Const, Some("spec"), None),
        ]
    );
    // The chunk's text is the file's own, context list included.
    let chunks = checked(Language::Kotlin, text);
    assert!(chunks[1].text.starts_with("context(logger: Logger"));
}

#[test]
fn kotlin_classes_objects_and_extension_functions() {
    assert_eq!(
        summarize(&checked(Language::Kotlin, KOTLIN)),
        [
            (1, 5, Block, None, None),
            (7, 8, Interface, Some("Billable"), None),
            (9, 10, Method, Some("total"), Some("Billable")),
            // The annotation is the class's; properties are in its header.
            (12, 14, Class, Some("Invoice"), None),
            (16, 16, Method, Some("constructor"), Some("Invoice")),
            (18, 19, Method, Some("total"), Some("Invoice")),
            // A companion object's functions are the class's.
            (21, 21, Block, None, Some("Invoice")),
            (22, 24, Method, Some("blank"), Some("Invoice")),
            (26, 26, Enum, Some("Status"), None),
            (28, 28, Class, Some("Registry"), None),
            (29, 30, Method, Some("find"), Some("Registry")),
            (32, 32, Type, Some("Amount"), None),
            // An extension function is owned by its receiver.
            (34, 36, Method, Some("print"), Some("Invoice")),
            (38, 40, Function, Some("main"), None),
        ]
    );
}

#[test]
fn lua_functions_declared_and_assigned() {
    assert_eq!(
        summarize(&checked(Language::Lua, LUA)),
        [
            (1, 6, Block, None, None),
            (8, 11, Function, Some("new"), Some("Cart")),
            (13, 15, Method, Some("add"), Some("Cart")),
            (17, 19, Function, Some("total"), Some("Cart")),
            (21, 23, Function, Some("encode"), None),
            (25, 27, Function, Some("decode"), None),
            (29, 29, Block, None, None),
        ]
    );
}

#[test]
fn bash_functions() {
    assert_eq!(
        summarize(&checked(Language::Bash, BASH)),
        [
            (1, 5, Block, None, None),
            (7, 10, Function, Some("usage"), None),
            (12, 15, Function, Some("build"), None),
            (17, 20, Function, Some("deploy"), None),
            (22, 25, Function, Some("main"), None),
            (27, 27, Block, None, None),
        ]
    );
}

#[test]
fn scala_traits_classes_objects_and_defs() {
    assert_eq!(
        summarize(&checked(Language::Scala, SCALA)),
        [
            (1, 4, Block, None, None),
            (6, 7, Trait, Some("Billable"), None),
            (8, 9, Method, Some("total"), Some("Billable")),
            // The annotation is the class's; vals are in its header.
            (11, 13, Class, Some("Invoice"), None),
            (15, 16, Method, Some("total"), Some("Invoice")),
            (18, 19, Method, Some("toString"), Some("Invoice")),
            // The companion object.
            (21, 21, Class, Some("Invoice"), None),
            (22, 23, Method, Some("blank"), Some("Invoice")),
            (25, 27, Enum, Some("Status"), None),
            (29, 29, Type, Some("Amount"), None),
            (31, 32, Function, Some("format"), None),
        ]
    );
}

#[test]
fn elixir_modules_protocols_and_functions() {
    assert_eq!(
        summarize(&checked(Language::Elixir, ELIXIR)),
        [
            // The module's header: its doc, aliases, imports and struct.
            (1, 10, Module, Some("Invoice"), Some("Billing")),
            // `@doc` and `@spec` are the function's.
            (12, 16, Function, Some("total"), Some("Invoice")),
            (18, 18, Function, Some("blank"), Some("Invoice")),
            (20, 22, Function, Some("log"), Some("Invoice")),
            (24, 27, Function, Some("paid?"), Some("Invoice")),
            (29, 29, Interface, Some("Billable"), Some("Acme")),
            (30, 31, Method, Some("amount"), Some("Billable")),
            (33, 33, Impl, Some("Billable for Invoice"), None),
            (34, 35, Method, Some("amount"), Some("Invoice")),
            // A behaviour's callbacks are typespecs of it, each with its `@doc`.
            (37, 38, Module, Some("Store"), Some("Acme")),
            (40, 41, Type, Some("save"), Some("Store")),
            (43, 43, Type, Some("query"), Some("Store")),
            (44, 44, Type, Some("count"), Some("Store")),
            (46, 47, Function, Some("default"), Some("Store")),
        ]
    );
}

#[test]
fn swift_types_extensions_and_initialisers() {
    assert_eq!(
        summarize(&checked(Language::Swift, SWIFT)),
        [
            (1, 2, Block, None, None),
            (4, 5, Interface, Some("Billable"), None),
            (6, 7, Method, Some("total"), Some("Billable")),
            // The doc comment and the attribute are the class's.
            (9, 12, Class, Some("Invoice"), None),
            (14, 16, Method, Some("init"), Some("Invoice")),
            (18, 22, Method, Some("total"), Some("Invoice")),
            (24, 25, Struct, Some("Line"), None),
            (26, 27, Method, Some("doubled"), Some("Line")),
            (29, 30, Enum, Some("Status"), None),
            (31, 32, Method, Some("label"), Some("Status")),
            // An extension's members are the extended type's.
            (34, 35, Impl, Some("Invoice"), None),
            (36, 39, Method, Some("describe"), Some("Invoice")),
            (41, 41, Type, Some("Amount"), None),
            (43, 45, Function, Some("main"), None),
        ]
    );
}

#[test]
fn haskell_types_classes_instances_and_equations() {
    assert_eq!(
        summarize(&checked(Language::Haskell, HASKELL)),
        [
            (1, 10, Block, None, None),
            // The grammar puts this Haddock comment at the end of the imports: it is the data
            // type's all the same.
            (12, 16, Struct, Some("Invoice"), None),
            (18, 18, Type, Some("Cents"), None),
            (20, 20, Type, Some("Amount"), None),
            (22, 24, Trait, Some("Billable"), None),
            (26, 26, Impl, Some("Billable Invoice"), None),
            // An instance's methods are its type's.
            (27, 27, Method, Some("bill"), Some("Invoice")),
            // A function is its Haddock comment, its signature and its equations.
            (29, 31, Function, Some("total"), None),
            (33, 35, Function, Some("main"), None),
            (37, 41, Function, Some("fib"), None),
        ]
    );
}

#[test]
fn haskell_comments_above_the_first_declaration_are_its_own() {
    let text = "module A (f) where\n\n-- | Doc.\nf :: Int\nf = 1\n";
    assert_eq!(
        summarize(&checked(Language::Haskell, text)),
        [(1, 1, Block, None, None), (3, 5, Function, Some("f"), None)]
    );
}

#[test]
fn a_signature_with_comments_on_its_lines_stays_with_its_function() {
    // Haddock's `-- ^` documents each argument at the end of its line of the signature; the
    // Haddock comment and the signature above still belong to the function.
    let text = "module A where\n\n\
                ----------\n\
                -- | Pipe through a program.\n\
                run :: String    -- ^ Program\n\
                \x20   -> IO String -- ^ Output\n\
                run = go\n\
                \x20 where\n\
                \x20   go = undefined\n";
    assert_eq!(
        summarize(&checked(Language::Haskell, text)),
        [
            (1, 1, Block, None, None),
            (3, 9, Function, Some("run"), None)
        ]
    );
}

#[test]
fn zig_functions_type_constants_and_tests() {
    assert_eq!(
        summarize(&checked(Language::Zig, ZIG)),
        [
            (1, 2, Block, None, None),
            // A constant holding a struct is the struct, its functions are its methods.
            (4, 7, Struct, Some("Invoice"), None),
            (9, 13, Method, Some("total"), Some("Invoice")),
            (15, 15, Enum, Some("Status"), None),
            (17, 17, Struct, Some("Value"), None),
            (19, 23, Function, Some("main"), None),
            // A test block is named by its string.
            (25, 27, Function, Some("total of nothing"), None),
        ]
    );
}

#[test]
fn dart_classes_mixins_extensions_and_constructors() {
    assert_eq!(
        summarize(&checked(Language::Dart, DART)),
        [
            (1, 3, Block, None, None),
            (5, 6, Class, Some("Billable"), None),
            (7, 8, Method, Some("total"), Some("Billable")),
            // The doc comment and the annotation are the class's; fields are in its header.
            (10, 13, Class, Some("Invoice"), None),
            // Constructors: the unnamed one by the class's name, named ones by their own.
            (15, 15, Method, Some("Invoice"), Some("Invoice")),
            (17, 17, Method, Some("blank"), Some("Invoice")),
            (19, 19, Method, Some("parse"), Some("Invoice")),
            (21, 25, Method, Some("total"), Some("Invoice")),
            (27, 28, Method, Some("label"), Some("Invoice")),
            (30, 30, Trait, Some("Logs"), None),
            (31, 32, Method, Some("log"), Some("Logs")),
            // An extension's members are its type's.
            (34, 34, Impl, Some("Describe"), None),
            (35, 36, Method, Some("describe"), Some("Invoice")),
            (38, 38, Enum, Some("Status"), None),
            (40, 40, Type, Some("Amount"), None),
            (42, 42, Function, Some("add"), None),
            (44, 46, Function, Some("main"), None),
        ]
    );
}

#[test]
fn protobuf_messages_services_and_rpcs() {
    assert_eq!(
        summarize(&checked(Language::Protobuf, PROTOBUF)),
        [
            (1, 5, Block, None, None),
            (7, 10, Struct, Some("Invoice"), None),
            // A nested message is its message's.
            (12, 17, Struct, Some("Line"), Some("Invoice")),
            (19, 22, Enum, Some("Status"), None),
            (24, 25, Interface, Some("Billing"), None),
            (26, 27, Method, Some("GetInvoice"), Some("Billing")),
            (28, 29, Method, Some("ListInvoices"), Some("Billing")),
        ]
    );
}

#[test]
fn hcl_blocks_named_as_terraform_addresses_them() {
    assert_eq!(
        summarize(&checked(Language::Hcl, HCL)),
        [
            (1, 3, Struct, Some("terraform"), None),
            // `var.region`, with the comment above it.
            (5, 9, Const, Some("region"), Some("var")),
            // `aws_s3_bucket.logs`, its nested blocks inside it.
            (11, 18, Struct, Some("logs"), Some("aws_s3_bucket")),
            (20, 22, Struct, Some("ubuntu"), Some("aws_ami")),
            (24, 26, Module, Some("vpc"), Some("module")),
            (28, 30, Const, Some("logs_arn"), None),
        ]
    );
}

#[test]
fn objc_conditionals_and_availability_macros_do_not_lose_the_file() {
    // Two things AFNetworking's sources do that cut the rest of a file into anonymous blocks: a
    // condition that switches the head of an `if` (read as one build: the first branch), and an
    // availability macro ending a property.
    let text = "@interface Task ()\n#if HAS_METRICS\n@property (nonatomic, strong) NSObject *sessionTaskMetrics AF_API_AVAILABLE(ios(10), macosx(10.12));\n#endif\n@end\n\n@implementation Task\n\n- (void)start {\n#if USE_AVAILABLE\n    if (@available(macOS 10.11, *))\n#else\n    if ([self respondsToSelector:@selector(resume)])\n#endif\n    {\n        [self resume];\n    }\n}\n\n- (void)stop {\n    [self cancel];\n}\n\n@end\n";
    assert_eq!(
        summarize(&checked(Language::ObjC, text)),
        [
            (1, 5, Impl, Some("Task"), None),
            (7, 7, Impl, Some("Task"), None),
            (9, 18, Method, Some("start"), Some("Task")),
            (20, 24, Method, Some("stop"), Some("Task")),
        ]
    );
}

#[test]
fn objc_classes_categories_protocols_and_selectors() {
    assert_eq!(
        summarize(&checked(Language::ObjC, OBJC)),
        [
            (1, 3, Block, None, None),
            // `typedef NS_ENUM(NSInteger, PaymentMethod) { … }`, its doc comment with it.
            (5, 9, Enum, Some("PaymentMethod"), None),
            (11, 11, Interface, Some("Printable"), None),
            // `@end` joins the member above it.
            (12, 13, Method, Some("render"), Some("Printable")),
            // The methods a class's `@interface` declares are lines of it (a header's summary).
            (15, 20, Class, Some("Ledger"), None),
            // A category is an impl of its class.
            (22, 24, Impl, Some("Ledger"), None),
            (26, 30, Function, Some("sum"), None),
            (32, 32, Impl, Some("Ledger"), None),
            // Defined methods are the class's, named by their selector's first keyword.
            (34, 38, Method, Some("addInvoice"), Some("Ledger")),
            (40, 43, Method, Some("sharedLedger"), Some("Ledger")),
            (45, 49, Method, Some("render"), Some("Ledger")),
            // A class extension (`@interface Ledger ()`) is an impl too.
            (51, 53, Impl, Some("Ledger"), None),
        ]
    );
}

#[test]
fn r_functions_r6_classes_and_s4() {
    assert_eq!(
        summarize(&checked(Language::R, R)),
        [
            (1, 2, Block, None, None),
            // A function assigned to a name, its roxygen comment with it.
            (4, 10, Function, Some("invoice_total"), None),
            (12, 14, Function, Some("shipping_fee"), None),
            // An R6 class holds the functions of its lists as methods.
            (16, 18, Class, Some("Ledger"), None),
            (19, 24, Method, Some("add"), Some("Ledger")),
            (26, 26, Class, Some("Invoice"), None),
            (28, 28, Function, Some("settle"), None),
            // `setMethod("settle", "Invoice", …)`: a method of `Invoice`.
            (30, 33, Method, Some("settle"), Some("Invoice")),
            // A constant is a line of the file.
            (35, 35, Block, None, None),
            // testthat's `test_that("…", { … })`: a test named by its description.
            (
                37,
                39,
                Function,
                Some("a settled invoice totals nothing"),
                None
            ),
        ]
    );
}

#[test]
fn erlang_functions_by_clauses_records_types_and_macros() {
    assert_eq!(
        summarize(&checked(Language::Erlang, ERLANG)),
        [
            // `-module`, `-behaviour`, `-export`, `-import`, `-include`.
            (1, 6, Block, None, None),
            (8, 8, Struct, Some("line"), None),
            (9, 9, Type, Some("status"), None),
            (10, 10, Const, Some("SHIPPING"), None),
            // Both clauses are one function, its comment and `-spec` with it.
            (12, 17, Function, Some("total"), None),
            (19, 21, Function, Some("settle"), None),
            (23, 23, Function, Some("init"), None),
            // A behaviour's callbacks of one name are one declaration.
            (25, 26, Function, Some("handle"), None),
        ]
    );
}

#[test]
fn sql_tables_views_types_and_functions() {
    assert_eq!(
        summarize(&checked(Language::Sql, SQL)),
        [
            // A table, its comment with it.
            (1, 5, Struct, Some("customers"), None),
            (7, 11, Struct, Some("invoices"), None),
            // An index is a line of the file.
            (13, 13, Block, None, None),
            (15, 15, Enum, Some("invoice_status"), None),
            (17, 22, Type, Some("balances"), None),
            (24, 26, Function, Some("invoice_total"), None),
            // `ALTER TABLE` and `INSERT` are lines of the file.
            (28, 30, Block, None, None),
        ]
    );
}

#[test]
fn julia_modules_functions_structs_and_docstrings() {
    assert_eq!(
        summarize(&checked(Language::Julia, JULIA)),
        [
            (1, 7, Module, Some("Billing"), None),
            // A docstring attaches to the definition below it.
            (9, 16, Struct, Some("Invoice"), Some("Billing")),
            (18, 20, Struct, Some("Ledger"), Some("Billing")),
            (22, 22, Type, Some("AbstractDocument"), Some("Billing")),
            (24, 27, Function, Some("total"), Some("Billing")),
            // The short form, and a method added to another module's function.
            (29, 29, Function, Some("shipping"), Some("Billing")),
            (31, 31, Function, Some("show"), Some("Billing")),
            (33, 35, Function, Some("cents"), Some("Billing")),
            // A constant is a line of the module.
            (37, 39, Block, None, Some("Billing")),
            // `@testset "totals" begin … end`: a test named by its description.
            (41, 43, Function, Some("totals"), None),
        ]
    );
}

#[test]
fn ocaml_bindings_types_modules_and_classes() {
    assert_eq!(
        summarize(&checked(Language::OCaml, OCAML)),
        [
            // `open` and a module alias are lines of the file.
            (1, 2, Block, None, None),
            // A record is a struct, its doc comment with it; a variant an enum.
            (4, 5, Struct, Some("invoice"), None),
            (7, 7, Enum, Some("status"), None),
            (9, 9, Type, Some("Unpaid"), None),
            (11, 11, Function, Some("shipping"), None),
            (13, 15, Function, Some("total"), None),
            // Each binding of `let rec … and …` is a definition.
            (17, 17, Function, Some("even"), None),
            (18, 18, Function, Some("odd"), None),
            (20, 20, Const, Some("max_lines"), None),
            (22, 22, Module, Some("Ledger"), None),
            (23, 23, Struct, Some("t"), Some("Ledger")),
            (25, 25, Function, Some("add"), Some("Ledger")),
            (27, 28, Function, Some("settle"), Some("Ledger")),
            // A module type is an interface of its `val`s.
            (30, 30, Interface, Some("PRINTABLE"), None),
            (31, 32, Method, Some("render"), Some("PRINTABLE")),
            (34, 35, Class, Some("printer"), None),
            (36, 37, Method, Some("print"), Some("printer")),
            // `let () = …` is a line of the file.
            (39, 39, Block, None, None),
        ]
    );
    assert_eq!(
        summarize(&checked(Language::OCamlInterface, OCAML_INTERFACE)),
        [
            (1, 1, Block, None, None),
            (3, 3, Type, Some("invoice"), None),
            // A `val` with its doc comment.
            (5, 6, Function, Some("total"), None),
            (8, 8, Module, Some("Ledger"), None),
            (9, 9, Type, Some("t"), Some("Ledger")),
            (10, 11, Function, Some("add"), Some("Ledger")),
            // The doc comment below a `val` or a type documents it (ocamldoc's rule).
            (13, 15, Function, Some("settle"), None),
            (17, 18, Type, Some("status"), None),
        ]
    );
}

#[test]
fn markdown_sections_follow_headings_outside_fences() {
    assert_eq!(
        summarize(&checked(Language::Markdown, MARKDOWN)),
        [
            (1, 1, Section, None, None),
            (3, 5, Section, Some("Patina"), None),
            (7, 12, Section, Some("Install"), Some("Patina")),
            (14, 18, Section, Some("From source"), Some("Install")),
            (20, 22, Section, Some("Usage"), Some("Patina")),
        ]
    );
}

#[test]
fn setext_headings_and_a_front_matter_title_name_sections() {
    let page = "---\ntitle: \"Scopes\"\nsidebar: 2\n---\n\nIntro.\n\n## Closing\n\nText.\n\n\
                ignore\n======\nThe crate.\n\nUsage\n-----\n\n- item\n---\n\nA paragraph\nof two lines\n---\n";
    assert_eq!(
        summarize(&checked(Language::Markdown, page)),
        [
            (1, 6, Section, Some("Scopes"), None),
            (8, 10, Section, Some("Closing"), Some("Scopes")),
            (12, 14, Section, Some("ignore"), Some("Scopes")),
            (16, 24, Section, Some("Usage"), Some("ignore")),
        ]
    );
    // A `---` after a blank line is a rule, at the top of a page without its closing line text.
    let rules = "---\nNo front matter here.\n\n---\n\nText.\n";
    assert_eq!(
        summarize(&checked(Language::Markdown, rules)),
        [(1, 6, Section, None, None)]
    );
}

#[test]
fn plain_text_is_cut_into_overlapping_windows() {
    let text: String = (1..=130).map(|n| format!("line {n}\n")).collect();
    let chunks = checked(Language::Text, &text);
    assert_eq!(
        summarize(&chunks),
        [
            (1, 60, Window, None, None),
            (51, 110, Window, None, None),
            (101, 130, Window, None, None)
        ]
    );
    assert!(chunks[2].text.ends_with("line 130"));
}

#[test]
fn code_without_definitions_falls_back_to_windows() {
    let script = "import sys\n\nprint(sys.argv)\nsys.exit(0)\n";
    assert_eq!(
        summarize(&checked(Language::Python, script)),
        [(1, 4, Window, None, None)]
    );
}

#[test]
fn a_script_without_definitions_opens_with_its_header_comment_as_a_chunk() {
    let body: String = (1..=70).map(|n| format!("echo {n}\n")).collect();
    let script = format!(
        "#!/usr/bin/env bash\n# Summary: Print the latest installed version\n# Usage: tool latest <prefix>\n\nset -e\n{body}"
    );
    let chunks = checked(Language::Bash, &script);
    assert_eq!(
        summarize(&chunks),
        [
            (1, 3, Block, None, None),
            (5, 63, Window, None, None),
            (54, 75, Window, None, None)
        ]
    );
    assert!(chunks[0].text.contains("Summary: Print the latest"));
    // No header of three lines, or a file that fits in one window: windows only.
    let short = format!("#!/usr/bin/env bash\n# Prints.\nset -e\n{body}");
    assert_eq!(checked(Language::Bash, &short)[0].kind, Window);
    let small = "#!/usr/bin/env bash\n# Summary: x\n# Usage: y\nset -e\necho hi\n";
    assert_eq!(
        summarize(&checked(Language::Bash, small)),
        [(1, 5, Window, None, None)]
    );
    // An opening comment longer than a window (a crate's documentation) keeps its windows.
    let guide: String = (1..=70).map(|n| format!("# guide line {n}\n")).collect();
    let documented = format!("{guide}set -e\n{body}");
    assert!(
        checked(Language::Bash, &documented)
            .iter()
            .all(|c| c.kind == Window)
    );
    // Code that follows on the same line as the comment, or no code at all: windows only.
    let only: String = (1..=70).map(|n| format!("# note {n}\n")).collect();
    assert!(
        checked(Language::Bash, &only)
            .iter()
            .all(|c| c.kind == Window)
    );
}

#[test]
fn long_definitions_are_split_into_overlapping_pieces() {
    let body: String = (0..200).map(|n| format!("    let v{n} = {n};\n")).collect();
    let text = format!("/// Long.\nfn long() {{\n{body}}}\n");
    assert_eq!(
        summarize(&checked(Language::Rust, &text)),
        [
            (1, 80, Function, Some("long"), None),
            (71, 150, Function, Some("long"), None),
            (141, 203, Function, Some("long"), None),
        ]
    );
    // A section of prose as long is one chunk: its author cut it.
    let prose: String = (0..120).map(|n| format!("Sentence {n}.\n")).collect();
    assert_eq!(
        summarize(&checked(Language::Markdown, &format!("# Notes\n{prose}"))),
        [(1, 121, Section, Some("Notes"), None)]
    );
}

#[test]
fn long_sections_are_split_too() {
    let body: String = (0..40).map(|n| format!("para {n}\n")).collect();
    let text = format!("# Big\n{body}");
    let opts = ChunkOptions {
        max_lines: 5,
        max_prose_lines: 20,
        window_lines: 10,
        window_overlap: 5,
    };
    assert_eq!(
        summarize(&checked_with(Language::Markdown, &text, &opts)),
        [
            (1, 20, Section, Some("Big"), None),
            (16, 35, Section, Some("Big"), None),
            (31, 41, Section, Some("Big"), None),
        ]
    );
}

#[test]
fn definitions_sharing_lines_make_one_chunk() {
    let text = "impl Foo { fn a() {} fn b() {} }\nfn x() {} fn y() {}\n";
    assert_eq!(
        summarize(&checked(Language::Rust, text)),
        [
            (1, 1, Impl, Some("Foo"), None),
            (2, 2, Function, Some("x"), None)
        ]
    );
}

#[test]
fn empty_and_blank_input_yield_nothing() {
    for language in ALL_LANGUAGES {
        for text in ["", "\n", "  \n\t\n", "\r\n\r\n"] {
            assert!(chunk_file(language, text, &ChunkOptions::default()).is_empty());
        }
    }
}

#[test]
fn crlf_line_breaks_give_the_same_chunks() {
    for (language, text) in SAMPLES {
        let crlf = text.replace('\n', "\r\n");
        assert_eq!(
            checked(language, &crlf),
            checked(language, text),
            "{}",
            language.name()
        );
    }
}

#[test]
fn missing_final_newline_is_fine() {
    let text = RUST.trim_end();
    assert_eq!(checked(Language::Rust, text), checked(Language::Rust, RUST));
}

#[test]
fn huge_single_line() {
    let line = "x".repeat(1 << 20);
    let chunks = checked(Language::Text, &line);
    assert_eq!(summarize(&chunks), [(1, 1, Window, None, None)]);
    assert_eq!(chunks[0].text.len(), 1 << 20);

    // Minified code: thousands of definitions on one line make one chunk.
    let minified: String = (0..20_000)
        .map(|n| format!("function f{n}(a){{return a+{n}}}"))
        .collect();
    let chunks = checked(Language::JavaScript, &minified);
    assert_eq!(summarize(&chunks), [(1, 1, Function, Some("f0"), None)]);
}

#[test]
fn garbage_never_panics() {
    let deep =
        |open: &str, close: &str, depth| format!("{}{}", open.repeat(depth), close.repeat(3));
    let inputs = [
        "}}}{{{(((\n)))]]]".to_owned(),
        "fn (\nclass {\ndef\n#\n```\nstruct ;;; impl for".to_owned(),
        "\0\u{1}\u{7f}ü€𝄞\r\r\n\t\u{feff}".to_owned(),
        "/* unterminated comment\nfn a() {}".to_owned(),
        "\"unterminated string\nfn a() {}".to_owned(),
        "@@@\n@decorator\n@".to_owned(),
        "# \n## \n###### x ######\n####### seven\n```\nunclosed fence".to_owned(),
        deep("(", ")", 20_000),
        deep("{", "}", 20_000),
        deep("[", "]", 20_000),
        // Error recovery makes these slow to parse; they are deep enough as it is.
        deep("fn a() {", "}", 2_000),
        deep("class A:\n", "", 2_000),
    ];
    for language in ALL_LANGUAGES {
        for input in &inputs {
            checked(language, input);
        }
    }
}

#[test]
fn coverage_holds_for_every_sample_in_every_language() {
    let tiny = ChunkOptions {
        max_lines: 3,
        max_prose_lines: 3,
        window_lines: 4,
        window_overlap: 9,
    };
    for (_, text) in SAMPLES {
        for language in ALL_LANGUAGES {
            checked(language, text);
            checked_with(language, text, &tiny);
        }
    }
}

#[test]
fn kind_names_match_serialized_form() {
    for kind in [Function, Method, Const, Section, Block, Window] {
        let json = serde_json::to_string(&kind).unwrap();
        assert_eq!(json, format!("\"{}\"", kind.name()));
    }
}

const ALL_LANGUAGES: [Language; Language::ALL.len()] = Language::ALL;

const SAMPLES: [(Language, &str); 31] = [
    (Language::Rust, RUST),
    (Language::Python, PYTHON),
    (Language::JavaScript, JAVASCRIPT),
    (Language::TypeScript, TYPESCRIPT),
    (Language::Tsx, TSX),
    (Language::Go, GO),
    (Language::Java, JAVA),
    (Language::C, C),
    (Language::Cpp, CPP),
    (Language::Ruby, RUBY),
    (Language::Php, PHP),
    (Language::CSharp, CSHARP),
    (Language::Kotlin, KOTLIN),
    (Language::Lua, LUA),
    (Language::Bash, BASH),
    (Language::Scala, SCALA),
    (Language::Elixir, ELIXIR),
    (Language::Swift, SWIFT),
    (Language::Haskell, HASKELL),
    (Language::Zig, ZIG),
    (Language::Dart, DART),
    (Language::Protobuf, PROTOBUF),
    (Language::Hcl, HCL),
    (Language::ObjC, OBJC),
    (Language::R, R),
    (Language::Erlang, ERLANG),
    (Language::Sql, SQL),
    (Language::Julia, JULIA),
    (Language::OCaml, OCAML),
    (Language::OCamlInterface, OCAML_INTERFACE),
    (Language::Markdown, MARKDOWN),
];
