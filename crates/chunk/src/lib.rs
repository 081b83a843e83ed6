//! `patina-chunk`: a file's text → the chunks Patina indexes and returns. Tree-sitter cuts code
//! at symbol level (Rust, Python, JavaScript, TypeScript/TSX, Go, Java, C, C++, Ruby, PHP,
//! C#, Kotlin, Scala, Elixir, Lua, shell scripts, Swift, Haskell, Zig, Dart, Protocol Buffers,
//! HCL, Objective-C, R, Erlang, SQL, Julia, OCaml), Markdown is cut into heading sections,
//! anything else into overlapping line windows; see [`chunk_file`]. [`extract_facts`] gives a file's graph facts (references, calls, imports, type
//! relations). [`Language`] recognises a file's language from its path.
//!
//! Architecture invariant: this crate only turns a string into chunks. It never does I/O (the
//! caller reads the file), knows nothing of the index, the store, repositories or the daemon, and
//! has no runtime (no tokio): every function is a pure, synchronous computation on its arguments.

mod chunk;
mod graph;
mod languages;

pub use chunk::{Chunk, ChunkKind, ChunkOptions, chunk_file};
pub use graph::{GRAPH_VERSION, extract_facts, mark_package_reexports};
pub use languages::Language;

/// [`chunk_file`] and [`extract_facts`] of one file from a single parse: what an index round
/// wants of every file when the graph is on (the same results as the two calls, at the cost of
/// one tree-sitter parse instead of two).
pub fn chunk_with_facts(
    language: Language,
    text: &str,
    opts: &ChunkOptions,
) -> (Vec<Chunk>, patina_core::FileFacts) {
    let tree = languages::parse(language, text);
    let chunks = chunk::chunk_parsed(language, text, tree.as_ref(), opts);
    let facts = tree
        .as_ref()
        .map(|t| graph::facts_of_tree(language, text, t))
        .unwrap_or_default();
    (chunks, facts)
}

/// The version of the chunking rules. Bump it whenever the chunks of some text change (boundaries,
/// symbols, kinds, parents): an index made with another version re-chunks every file at its next
/// full round, so an upgrade takes effect without the user removing and re-adding repositories.
///
/// 2: JavaScript definitions by assignment and by named callback.
/// 3: [`Chunk::prose_share`] (chunks of help text become documentation).
/// 4: Ruby definitions; a doc comment above a definition that opens a grouping node (Ruby's
///    class body) stays with it; lines of only `end` join the chunk above like closing brackets.
/// 5: PHP definitions.
/// 6: C# definitions.
/// 7: Kotlin definitions.
/// 8: Lua definitions.
/// 9: shell functions.
/// 10: Scala definitions.
/// 11: Elixir definitions; a dotted Ruby or C# name's owner is the part just before its last.
/// 12: Swift definitions.
/// 13: Haskell definitions; consecutive equations of one function are one definition.
/// 14: Zig definitions.
/// 15: Dart definitions.
/// 16: no chunk changes: a round re-examines every file so that code of a package in a docs folder
///     (`patina_core::role`) loses the docs role it was given.
/// 17: Protocol Buffers definitions.
/// 18: HCL definitions.
/// 19: a comment at the end of a line of a definition's leading trivia (Haddock's `-- ^` in a
///     signature) no longer cuts the trivia off the definition.
/// 20: C# read as one build (the first branch of each `#if`): a signature with variants is one
///     method; `#region`/`#pragma` lines open the member after them.
/// 21: Kotlin properties at the top of a file over several lines are definitions.
/// 22: (an experiment with Lua tables, not kept; indices it wrote are rounded again).
/// 23: a file without an extension is read in the language its `#!` line names; no shell file is
///     a test by a `test_` prefix (`patina_core::role`).
/// 24: C# operators, conversion operators, indexers and events with accessors are members.
/// 25: (an experiment with Swift properties, not kept; indices it wrote are rounded again).
/// 26: build tools' launcher scripts (`gradlew`, `mvnw`, `mill`) are generated, not source.
/// 27: a folder named like tests below a Gradle/Maven main source set is a package of the
///     program (`src/jvmMain/kotlin/org/koin/test/`).
/// 28: Ruby constants assigned over several lines are definitions.
/// 29: Kotlin classes without a body after a soft modifier (`annotation class Marker`), which the
///     grammar misreads as an infix call, are classes.
/// 30: a Markdown heading is named by its words: badges, images and HTML dropped, links as their
///     text (a README's `# Name [![build](…)](…)` named every section below it by its URLs).
/// 31: pages a documentation generator wrote (rustdoc, Doxygen, javadoc, jazzy) are generated.
/// 32: Markdown sections and line windows are split at their own length (`max_prose_lines`),
///     not at code's.
/// 33: an HTML page that opens with front matter (a static site's post or tutorial) is prose.
/// 34: Kotlin's context parameters lead their declaration (the file parses); patches and diffs
///     are vendored.
/// 35: Kotlin's API dumps (`api/<module>.api`) are generated.
/// 36: Objective-C definitions; `@end` joins the chunk above it.
/// 37: R definitions.
/// 38: Erlang definitions.
/// 39: SQL definitions.
/// 40: Julia definitions.
/// 41: OCaml definitions (implementations and interfaces).
/// 42: no chunk changes: a file that is not code in a tests folder inside a documentation folder
///     (`doc/src/specs/`) is documentation (`patina_core::role`).
/// 43: Objective-C read as one build (the first branch of each `#if`/`#ifdef`) and without the
///     availability macros that end a declaration (`API_AVAILABLE(ios(10))`).
/// 44: an OCaml doc comment right below a definition (an `.mli`'s `val` then its documentation)
///     is that definition's (ocamldoc's rule).
/// 45: a program without definitions opens with its header comment as a chunk of its own (a
///     script's summary and usage), then windows.
/// 46: an Elixir behaviour's `@callback`s and `@macrocallback`s are definitions (typespecs of
///     their module, with their `@doc`), no longer trivia of the next `def`.
pub const VERSION: u32 = 46;

#[cfg(test)]
mod tests {
    use super::*;

    /// One parse gives exactly what the two separate calls give, in every language.
    #[test]
    fn chunk_with_facts_equals_chunking_and_extracting_apart() {
        let sources = [
            (
                Language::Rust,
                "use crate::a::b;\n/// Doc.\npub fn f(x: u32) -> u32 { g(x) }\nimpl T for S { fn m(&self) { f(1); } }\n",
            ),
            (
                Language::Python,
                "import os\nfrom .m import k as j\n\nclass A(B):\n    def run(self):\n        return j(os.getcwd())\n",
            ),
            (
                Language::Go,
                "package p\n\nimport \"fmt\"\n\nfunc F() { fmt.Println(G()) }\n",
            ),
            (
                Language::TypeScript,
                "import { x } from './x';\nexport class C extends D { m() { return x(); } }\n",
            ),
            (
                Language::Ruby,
                "require_relative 'b'\n\nclass A < B\n  def run\n    helper(1)\n  end\nend\n",
            ),
            (
                Language::Php,
                "<?php\nuse App\\B;\n\nclass A extends B\n{\n    public function run() { return helper(1); }\n}\n",
            ),
            (
                Language::CSharp,
                "using Acme.B;\n\nclass A : B\n{\n    int Run() => Helper(1);\n}\n",
            ),
            (
                Language::Kotlin,
                "import a.b.B\n\nclass A : B() {\n    fun run() = helper(1)\n}\n",
            ),
            (
                Language::Lua,
                "local b = require(\"b\")\n\nfunction M.run()\n  return b.helper(1)\nend\n",
            ),
            (Language::Bash, "source ./b.sh\n\nrun() {\n  helper 1\n}\n"),
            (
                Language::Scala,
                "import a.b.B\n\nclass A extends B {\n  def run(): Int = helper(1)\n}\n",
            ),
            (
                Language::Elixir,
                "defmodule A do\n  alias B.C\n\n  def run(x), do: C.helper(x)\nend\n",
            ),
            (
                Language::Swift,
                "import Shop\n\nclass A: B {\n    func run() -> Int { helper(1) }\n}\n",
            ),
            (
                Language::Haskell,
                "import B (helper)\n\nrun :: Int -> Int\nrun x = helper x\n",
            ),
            (
                Language::Zig,
                "const b = @import(\"b.zig\");\n\npub const A = struct {\n    fn run() u32 {\n        return b.helper(1);\n    }\n};\n",
            ),
            (
                Language::Dart,
                "import 'b.dart';\n\nclass A extends B {\n  int run() => helper(1);\n}\n",
            ),
            (
                Language::Protobuf,
                "syntax = \"proto3\";\nimport \"b.proto\";\n\nmessage A {\n  B b = 1;\n}\n",
            ),
            (
                Language::Hcl,
                "variable \"region\" {}\n\nresource \"aws_s3_bucket\" \"logs\" {\n  bucket = var.region\n}\n",
            ),
            (
                Language::ObjC,
                "#import \"B.h\"\n\n@implementation A\n- (int)run {\n  return [b helper:1];\n}\n@end\n",
            ),
            (
                Language::R,
                "source(\"b.R\")\n\nrun <- function(x) {\n  helper(x)\n}\n",
            ),
            (
                Language::Erlang,
                "-module(a).\n-import(b, [helper/1]).\n\nrun(X) ->\n    helper(X).\n",
            ),
            (
                Language::Sql,
                "CREATE TABLE a (id INT REFERENCES b (id));\n\nSELECT count(*) FROM a;\n",
            ),
            (
                Language::Julia,
                "include(\"b.jl\")\n\nfunction run(x)\n    helper(x)\nend\n",
            ),
            (Language::OCaml, "open B\n\nlet run x =\n  B.helper x\n"),
            (Language::OCamlInterface, "type t\n\nval run : int -> t\n"),
            (Language::Markdown, "# T\n\ntext\n\n## U\n\nmore\n"),
            (Language::Text, "a\nb\n"),
        ];
        for (language, text) in sources {
            let opts = ChunkOptions::default();
            let (chunks, facts) = chunk_with_facts(language, text, &opts);
            let apart = chunk_file(language, text, &opts);
            assert_eq!(chunks.len(), apart.len(), "{language:?}");
            for (a, b) in chunks.iter().zip(&apart) {
                assert_eq!(
                    (a.start_line, a.end_line, &a.symbol, &a.text),
                    (b.start_line, b.end_line, &b.symbol, &b.text),
                    "{language:?}"
                );
            }
            assert_eq!(facts, extract_facts(language, text), "{language:?}");
        }
    }
}
