//! The vocabulary of a file's language and of what a chunk holds: decided from a path or by the
//! chunker, stored in the index, shown on the wire.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// Language of a file, detected from its extension (and a few well-known file names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Rust,
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Go,
    Java,
    C,
    Cpp,
    Ruby,
    Php,
    CSharp,
    Kotlin,
    Lua,
    Bash,
    Scala,
    Elixir,
    Swift,
    Haskell,
    Zig,
    Dart,
    Protobuf,
    Hcl,
    /// Objective-C (`.m`, `.mm`, and a `.h` that declares Objective-C).
    ObjC,
    R,
    Erlang,
    Sql,
    Julia,
    /// OCaml implementations (`.ml`).
    OCaml,
    /// OCaml interfaces (`.mli`), which have a grammar of their own.
    #[serde(rename = "ocaml_interface")]
    OCamlInterface,
    Markdown,
    Text,
}

impl Language {
    /// Every language, in declaration order.
    pub const ALL: [Language; 32] = [
        Language::Rust,
        Language::Python,
        Language::JavaScript,
        Language::TypeScript,
        Language::Tsx,
        Language::Go,
        Language::Java,
        Language::C,
        Language::Cpp,
        Language::Ruby,
        Language::Php,
        Language::CSharp,
        Language::Kotlin,
        Language::Lua,
        Language::Bash,
        Language::Scala,
        Language::Elixir,
        Language::Swift,
        Language::Haskell,
        Language::Zig,
        Language::Dart,
        Language::Protobuf,
        Language::Hcl,
        Language::ObjC,
        Language::R,
        Language::Erlang,
        Language::Sql,
        Language::Julia,
        Language::OCaml,
        Language::OCamlInterface,
        Language::Markdown,
        Language::Text,
    ];

    /// Detects the language from the file name and, for a file without an extension, from the
    /// interpreter its first line names (`#!/usr/bin/env bash`: the `bin/` and `libexec/`
    /// programs of a project are often scripts without one).
    pub fn detect(path: &Path, text: &str) -> Language {
        match Language::from_path(path) {
            Language::Text if !has_extension(path) => {
                Language::from_shebang(text).unwrap_or(Language::Text)
            }
            Language::C if declares_objc(path, text) => Language::ObjC,
            language => language,
        }
    }

    /// The language of the interpreter a script's first line (`#!…`) names, if Patina reads it:
    /// `#!/bin/sh`, `#!/usr/bin/env python3`, `#!/usr/bin/env -S node --flag`.
    pub fn from_shebang(text: &str) -> Option<Language> {
        let line = text.strip_prefix("#!")?.lines().next()?;
        let mut words = line.split_whitespace();
        let mut program = words.next()?.rsplit('/').next()?;
        if program == "env" {
            program = words.find(|w| !w.starts_with('-') && !w.contains('='))?;
        }
        // `python3.12`, `ruby2.7`: the version is no part of the name.
        let name = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
        Some(match name {
            "sh" | "bash" | "zsh" | "ksh" | "dash" | "ash" | "mksh" | "bats" => Language::Bash,
            "python" | "pypy" => Language::Python,
            "node" | "nodejs" | "deno" | "bun" => Language::JavaScript,
            "ts-node" | "tsx" => Language::TypeScript,
            "ruby" | "jruby" => Language::Ruby,
            "php" => Language::Php,
            "lua" | "luajit" => Language::Lua,
            "elixir" => Language::Elixir,
            "runhaskell" | "runghc" => Language::Haskell,
            "kscript" => Language::Kotlin,
            "scala" | "amm" => Language::Scala,
            "swift" => Language::Swift,
            "dart" => Language::Dart,
            "Rscript" => Language::R,
            "escript" => Language::Erlang,
            "julia" => Language::Julia,
            "ocaml" => Language::OCaml,
            _ => return None,
        })
    }

    /// Detects the language from the file name; anything unrecognised is [`Language::Text`].
    pub fn from_path(path: &Path) -> Language {
        let Some(file_name) = path.file_name().and_then(|name| name.to_str()) else {
            return Language::Text;
        };
        // Starlark build files parse well as Python.
        if matches!(
            file_name,
            "BUILD" | "BUILD.bazel" | "WORKSPACE" | "WORKSPACE.bazel" | "SConstruct" | "SConscript"
        ) {
            return Language::Python;
        }
        // Shells' start-up files are shell scripts.
        if matches!(
            file_name,
            ".bashrc" | ".bash_profile" | ".bash_aliases" | ".profile" | ".zshrc" | ".zprofile"
        ) {
            return Language::Bash;
        }
        // Ruby's build and dependency files are Ruby programs.
        if matches!(
            file_name,
            "Rakefile" | "Gemfile" | "Guardfile" | "Vagrantfile" | "Capfile"
        ) {
            return Language::Ruby;
        }
        let Some((_, extension)) = file_name.rsplit_once('.') else {
            return Language::Text;
        };
        match extension.to_ascii_lowercase().as_str() {
            "rs" => Language::Rust,
            "py" | "pyi" | "pyw" | "bzl" => Language::Python,
            "js" | "mjs" | "cjs" | "jsx" => Language::JavaScript,
            "ts" | "mts" | "cts" => Language::TypeScript,
            "tsx" => Language::Tsx,
            "go" => Language::Go,
            "java" => Language::Java,
            "c" | "h" => Language::C,
            "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => Language::Cpp,
            "rb" | "rake" | "gemspec" | "ru" => Language::Ruby,
            "php" | "phtml" | "php3" | "php4" | "php5" | "php7" | "phps" => Language::Php,
            "cs" | "csx" => Language::CSharp,
            "kt" | "kts" => Language::Kotlin,
            "lua" | "rockspec" => Language::Lua,
            "sh" | "bash" | "zsh" | "ksh" | "bats" => Language::Bash,
            "scala" | "sc" | "sbt" => Language::Scala,
            "ex" | "exs" => Language::Elixir,
            "swift" => Language::Swift,
            "hs" | "hs-boot" => Language::Haskell,
            "zig" | "zon" => Language::Zig,
            "dart" => Language::Dart,
            "proto" => Language::Protobuf,
            "tf" | "tfvars" | "hcl" | "nomad" => Language::Hcl,
            "m" | "mm" => Language::ObjC,
            "r" => Language::R,
            "erl" | "hrl" | "escript" => Language::Erlang,
            "sql" | "psql" => Language::Sql,
            "jl" => Language::Julia,
            "ml" => Language::OCaml,
            "mli" => Language::OCamlInterface,
            "md" | "markdown" => Language::Markdown,
            _ => Language::Text,
        }
    }

    /// Stable lowercase name, also used as the serialized form.
    pub fn name(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::Python => "python",
            Language::JavaScript => "javascript",
            Language::TypeScript => "typescript",
            Language::Tsx => "tsx",
            Language::Go => "go",
            Language::Java => "java",
            Language::C => "c",
            Language::Cpp => "cpp",
            Language::Ruby => "ruby",
            Language::Php => "php",
            Language::CSharp => "csharp",
            Language::Kotlin => "kotlin",
            Language::Lua => "lua",
            Language::Bash => "bash",
            Language::Scala => "scala",
            Language::Elixir => "elixir",
            Language::Swift => "swift",
            Language::Haskell => "haskell",
            Language::Zig => "zig",
            Language::Dart => "dart",
            Language::Protobuf => "protobuf",
            Language::Hcl => "hcl",
            Language::ObjC => "objc",
            Language::R => "r",
            Language::Erlang => "erlang",
            Language::Sql => "sql",
            Language::Julia => "julia",
            Language::OCaml => "ocaml",
            Language::OCamlInterface => "ocaml_interface",
            Language::Markdown => "markdown",
            Language::Text => "text",
        }
    }
}

/// What a chunk holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChunkKind {
    Function,
    Method,
    Class,
    /// A struct or union.
    Struct,
    Enum,
    Trait,
    Interface,
    Impl,
    /// A module or namespace.
    Module,
    /// A type alias or typedef.
    Type,
    /// A constant or static.
    Const,
    /// A Markdown section: a heading and the text up to the next heading.
    Section,
    /// Code outside any definition: imports, top-level statements, loose members.
    Block,
    /// A window of lines of a file without recognised structure.
    Window,
}

/// The half of a module a file is, where a language splits a module into two files of one stem:
/// the interface (a C or C++ header, an OCaml `.mli`) declares what the implementation (`.c`,
/// `.cpp`, an Objective-C `.m`, an OCaml `.ml`) defines. `None` for every other file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModuleHalf {
    Interface,
    Implementation,
}

impl ModuleHalf {
    /// Which half `path` is, by its extension.
    pub fn of(path: &str) -> Option<ModuleHalf> {
        let name = path.rsplit('/').next().unwrap_or(path);
        let (_, extension) = name.rsplit_once('.')?;
        match extension.to_ascii_lowercase().as_str() {
            "h" | "hh" | "hpp" | "hxx" | "mli" => Some(ModuleHalf::Interface),
            "c" | "cc" | "cpp" | "cxx" | "m" | "mm" | "ml" => Some(ModuleHalf::Implementation),
            _ => None,
        }
    }

    /// Whether a chunk of `kind` in the file at `path` only declares what the implementation half
    /// defines: every chunk of an `.mli` (a `val` is a function's type, not its body), and a
    /// header's containers and types (a class's `@interface`, a C++ class whose members have
    /// chunks of their own) — not a function or method chunk of a header, which has a body (an
    /// inline or template definition: the code itself).
    pub fn declares(path: &str, kind: ChunkKind) -> bool {
        match ModuleHalf::of(path) {
            Some(ModuleHalf::Interface) => {
                path.rsplit_once('.')
                    .is_some_and(|(_, extension)| extension.eq_ignore_ascii_case("mli"))
                    || !matches!(kind, ChunkKind::Function | ChunkKind::Method)
            }
            _ => false,
        }
    }

    /// The implementation an interface file that holds no code stands for as a whole, when it
    /// sits beside it: the `.ml` of an `.mli` (every line of an `.mli` is a type, a signature or
    /// documentation). A header's unnamed blocks are macros and prototypes — code of their own —
    /// and its implementation need not share its folder: `None`.
    pub fn implementation_beside(path: &str) -> Option<String> {
        let (rest, extension) = path.rsplit_once('.')?;
        (extension.eq_ignore_ascii_case("mli") && !rest.ends_with('/'))
            .then(|| format!("{rest}.{}", &extension[..2]))
    }

    /// The stem two halves share: the file name without its last extension
    /// (`UIKit/UIImageView+Cache.h` -> `UIImageView+Cache`).
    pub fn stem(path: &str) -> &str {
        let name = path.rsplit('/').next().unwrap_or(path);
        name.rsplit_once('.').map_or(name, |(stem, _)| stem)
    }
}

impl ChunkKind {
    /// Whether a chunk of this kind declares and runs nothing: an enum, an interface, a type
    /// alias (an option's vocabulary, not the code acting on it).
    pub fn declares_only(self) -> bool {
        matches!(
            self,
            ChunkKind::Enum | ChunkKind::Interface | ChunkKind::Type
        )
    }

    /// Stable lowercase name, also used as the serialized form.
    pub fn name(self) -> &'static str {
        match self {
            ChunkKind::Function => "function",
            ChunkKind::Method => "method",
            ChunkKind::Class => "class",
            ChunkKind::Struct => "struct",
            ChunkKind::Enum => "enum",
            ChunkKind::Trait => "trait",
            ChunkKind::Interface => "interface",
            ChunkKind::Impl => "impl",
            ChunkKind::Module => "module",
            ChunkKind::Type => "type",
            ChunkKind::Const => "const",
            ChunkKind::Section => "section",
            ChunkKind::Block => "block",
            ChunkKind::Window => "window",
        }
    }
}

/// Whether a header (`.h`, which C, C++ and Objective-C share) is Objective-C: a line of it
/// opens with `@interface`, `@protocol`, `@class`, `@import` or `#import`, none of which C has.
fn declares_objc(path: &Path, text: &str) -> bool {
    let header = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("h"));
    header
        && text.lines().take(2000).any(|line| {
            let line = line.trim_start();
            ["@interface", "@protocol", "@class", "@import", "#import"]
                .iter()
                .any(|w| line.starts_with(w))
        })
}

/// Whether the file name has an extension (`.bashrc` has none: a leading dot starts a name).
fn has_extension(path: &Path) -> bool {
    path.file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| name.trim_start_matches('.').contains('.'))
}

#[cfg(test)]
mod tests {
    use super::{Language, ModuleHalf};
    use std::path::Path;

    #[test]
    fn headers_and_interfaces_pair_with_the_implementation_of_their_stem() {
        use ModuleHalf::{Implementation, Interface};
        for (path, half, stem) in [
            (
                "UIKit+AFNetworking/UIImageView+AFNetworking.h",
                Some(Interface),
                "UIImageView+AFNetworking",
            ),
            (
                "UIKit+AFNetworking/UIImageView+AFNetworking.m",
                Some(Implementation),
                "UIImageView+AFNetworking",
            ),
            ("include/net/socket.hpp", Some(Interface), "socket"),
            ("src/net/socket.cpp", Some(Implementation), "socket"),
            ("src/lwt.mli", Some(Interface), "lwt"),
            ("src/lwt.ml", Some(Implementation), "lwt"),
            ("lib/parse.C", Some(Implementation), "parse"),
            ("src/lib.rs", None, "lib"),
            ("Makefile", None, "Makefile"),
            ("archive.tar.h", Some(Interface), "archive.tar"),
        ] {
            assert_eq!(ModuleHalf::of(path), half, "{path}");
            assert_eq!(ModuleHalf::stem(path), stem, "{path}");
        }
        // A header's inline function is code; its class and an `.mli`'s `val` declare.
        use super::ChunkKind::{Class, Function, Method, Type};
        assert!(ModuleHalf::declares("Tiles/TileCache.h", Class));
        assert!(ModuleHalf::declares("include/fmt/format.h", Type));
        assert!(!ModuleHalf::declares("include/fmt/format.h", Function));
        assert!(!ModuleHalf::declares("include/fmt/format.h", Method));
        assert!(ModuleHalf::declares("src/lwt.mli", Function));
        assert!(!ModuleHalf::declares("src/lwt.ml", Function));
        assert!(!ModuleHalf::declares("Tiles/TileCache.m", Class));
        // An `.mli`'s documentation stands for the `.ml` beside it; a header's blocks do not.
        assert_eq!(
            ModuleHalf::implementation_beside("src/core/lwt_pool.mli").as_deref(),
            Some("src/core/lwt_pool.ml")
        );
        assert_eq!(
            ModuleHalf::implementation_beside("lib/X.MLI").as_deref(),
            Some("lib/X.ML")
        );
        assert_eq!(ModuleHalf::implementation_beside("Tiles/TileCache.h"), None);
        assert_eq!(ModuleHalf::implementation_beside("src/lwt_pool.ml"), None);
        assert_eq!(ModuleHalf::implementation_beside("src/.mli"), None);
    }

    #[test]
    fn a_script_without_an_extension_is_read_in_its_interpreters_language() {
        let detect = |path: &str, text: &str| Language::detect(Path::new(path), text);
        assert_eq!(
            detect(
                "libexec/bats-exec-test",
                "#!/usr/bin/env bash
"
            ),
            Language::Bash
        );
        assert_eq!(
            detect(
                "bin/serve",
                "#!/usr/bin/env -S node --no-warnings
"
            ),
            Language::JavaScript
        );
        assert_eq!(
            detect(
                "bin/tool",
                "#!/usr/local/bin/python3.12 -u
"
            ),
            Language::Python
        );
        assert_eq!(
            detect(
                "bin/rails",
                "#!/usr/bin/env ruby
"
            ),
            Language::Ruby
        );
        assert_eq!(
            detect(
                "script",
                "#!/bin/sh
"
            ),
            Language::Bash
        );
        // An interpreter Patina does not read, or no first line naming one.
        assert_eq!(
            detect(
                "bin/tool",
                "#!/usr/bin/perl
"
            ),
            Language::Text
        );
        assert_eq!(
            detect(
                "NOTES",
                "# #!/bin/sh
"
            ),
            Language::Text
        );
        // A file's extension decides before its first line does.
        assert_eq!(
            detect(
                "notes.txt",
                "#!/bin/sh
"
            ),
            Language::Text
        );
        assert_eq!(
            detect(
                "run.py",
                "#!/bin/sh
"
            ),
            Language::Python
        );
        assert_eq!(
            detect(
                ".bashrc",
                "alias ll='ls -l'
"
            ),
            Language::Bash
        );
    }

    #[test]
    fn a_header_that_declares_objective_c_is_objective_c() {
        let detect = |path: &str, text: &str| Language::detect(Path::new(path), text);
        assert_eq!(
            detect(
                "Ledger.h",
                "#import <Foundation/Foundation.h>\n@interface Ledger : NSObject\n@end\n"
            ),
            Language::ObjC
        );
        assert_eq!(detect("Ledger.m", ""), Language::ObjC);
        // A C header stays C, even one whose comment mentions `@interface`.
        assert_eq!(
            detect(
                "ledger.h",
                "#include <stdio.h>\n/* see @interface in Ledger.h */\nint total(void);\n"
            ),
            Language::C
        );
    }
}
