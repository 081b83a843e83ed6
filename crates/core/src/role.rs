//! File roles: what a file is *for* — the code itself, its tests, its documentation, examples,
//! benchmarks, generated or vendored code, configuration — decided by each ecosystem's own
//! conventions (directory names, file-name patterns, generated-code markers).
//!
//! Roles let ranking answer "how does X work" with the implementation rather than with the README
//! or the test that repeats the question's words, and let a caller ask for one role explicitly.

use serde::{Deserialize, Serialize};

/// What a file (or a chunk of one) is for.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum FileRole {
    /// The implementation: code that is neither a test, an example, a benchmark nor generated.
    #[default]
    Source,
    /// Tests, test fixtures and test data.
    Test,
    /// Prose: Markdown, reStructuredText, text files, anything under a documentation directory.
    Docs,
    /// Examples, samples and demos.
    Example,
    /// Benchmarks.
    Benchmark,
    /// Generated code (`@generated`, `DO NOT EDIT`, protobuf output, lock files, minified files).
    Generated,
    /// Third-party code copied into the repository (`vendor/`, `third_party/`, `node_modules/`).
    Vendored,
    /// Configuration and build files: manifests, CI definitions, `*.toml`/`*.yaml`/`*.json`.
    Config,
    /// Text of no recognised kind (data files, scripts without an extension, …).
    Other,
}

impl FileRole {
    /// Every role, in declaration order.
    pub const ALL: [FileRole; 9] = [
        FileRole::Source,
        FileRole::Test,
        FileRole::Docs,
        FileRole::Example,
        FileRole::Benchmark,
        FileRole::Generated,
        FileRole::Vendored,
        FileRole::Config,
        FileRole::Other,
    ];

    /// Stable lowercase name (also the serialized form and the CLI's spelling).
    pub fn name(self) -> &'static str {
        match self {
            FileRole::Source => "source",
            FileRole::Test => "test",
            FileRole::Docs => "docs",
            FileRole::Example => "example",
            FileRole::Benchmark => "benchmark",
            FileRole::Generated => "generated",
            FileRole::Vendored => "vendored",
            FileRole::Config => "config",
            FileRole::Other => "other",
        }
    }

    /// Parse a role name as users type it (`tests`, `doc`, `examples` and `bench` are accepted).
    pub fn parse(s: &str) -> Option<FileRole> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "source" | "src" | "code" => FileRole::Source,
            "test" | "tests" => FileRole::Test,
            "docs" | "doc" | "documentation" => FileRole::Docs,
            "example" | "examples" => FileRole::Example,
            "benchmark" | "benchmarks" | "bench" => FileRole::Benchmark,
            "generated" => FileRole::Generated,
            "vendored" | "vendor" => FileRole::Vendored,
            "config" | "build" => FileRole::Config,
            "other" => FileRole::Other,
            _ => return None,
        })
    }
}

impl std::fmt::Display for FileRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Directories whose content is third-party code.
const VENDOR_DIRS: &[&str] = &[
    "vendor",
    "vendored",
    "third_party",
    "thirdparty",
    "third-party",
    "node_modules",
    "bower_components",
];
/// Directories of tests and test data.
const TEST_DIRS: &[&str] = &[
    "test",
    "tests",
    "testing",
    "__tests__",
    "spec",
    "specs",
    "testdata",
    "test_data",
    "test-data",
    "fixtures",
    "__fixtures__",
    "__mocks__",
    "e2e",
    "integration_tests",
    "unittests",
];
const EXAMPLE_DIRS: &[&str] = &[
    "example",
    "examples",
    "_examples",
    "sample",
    "samples",
    "demo",
    "demos",
    "cookbook",
];
const BENCH_DIRS: &[&str] = &["bench", "benches", "benchmark", "benchmarks", "perf"];
const DOC_DIRS: &[&str] = &[
    "doc",
    "docs",
    "documentation",
    "changelog",
    "changes",
    "man",
    "website",
    "site",
];
/// Extensions of prose.
const DOC_EXTS: &[&str] = &[
    "md", "markdown", "mdx", "rst", "adoc", "asciidoc", "org", "rdoc", "txt", "tex", "pod",
];
/// Files without an extension that are prose.
const DOC_NAMES: &[&str] = &[
    "readme",
    "changelog",
    "changes",
    "contributing",
    "license",
    "licence",
    "copying",
    "authors",
    "notice",
    "history",
    "news",
    "todo",
    "faq",
    "install",
    "security",
    "code_of_conduct",
    "maintainers",
];
/// Extensions of configuration, data and build files.
const CONFIG_EXTS: &[&str] = &[
    "toml",
    "yaml",
    "yml",
    "json",
    "jsonc",
    "json5",
    "ini",
    "cfg",
    "conf",
    "properties",
    "xml",
    "plist",
    "gradle",
    "cmake",
    "mk",
    "lock",
    "editorconfig",
    "gitignore",
    "gitattributes",
    "dockerignore",
    "npmignore",
    "env",
    "gemspec",
    "rockspec",
    "sbt",
];
/// Build and tooling files known by name.
const CONFIG_NAMES: &[&str] = &[
    "makefile",
    "gnumakefile",
    "dockerfile",
    "containerfile",
    "cmakelists.txt",
    "justfile",
    "rakefile",
    "gemfile",
    "procfile",
    "vagrantfile",
    "build.bazel",
    "workspace",
    "build",
    "meson.build",
    "requirements.txt",
    "setup.cfg",
    "tox.ini",
    "noxfile.py",
    "pyproject.toml",
    "package.json",
    "tsconfig.json",
    "go.mod",
    "go.sum",
    "cargo.toml",
    "build.rs",
    "build.gradle.kts",
    "settings.gradle.kts",
    "mix.exs",
    "codecov.yml",
    ".travis.yml",
    "appveyor.yml",
    "rustfmt.toml",
    "clippy.toml",
    "deny.toml",
];
/// Lock files and other files a tool writes.
const GENERATED_NAMES: &[&str] = &[
    "cargo.lock",
    "package-lock.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "poetry.lock",
    "pipfile.lock",
    "composer.lock",
    "gemfile.lock",
    "go.sum",
    "uv.lock",
    "npm-shrinkwrap.json",
    "mix.lock",
];
/// Extensions of code.
const CODE_EXTS: &[&str] = &[
    "rs", "py", "pyi", "pyx", "js", "mjs", "cjs", "jsx", "ts", "tsx", "mts", "cts", "go", "java",
    "kt", "kts", "scala", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx", "m", "mm", "cs", "fs",
    "rb", "php", "swift", "lua", "pl", "pm", "sh", "bash", "zsh", "fish", "ps1", "ex", "exs",
    "erl", "hrl", "hs", "ml", "mli", "clj", "cljs", "dart", "r", "jl", "zig", "nim", "v", "sql",
    "vue", "svelte", "elm", "groovy", "proto", "graphql", "css", "scss", "sass", "less", "html",
    "htm", "vim", "rake", "ksh", "bats",
];

/// The role of the file at `path` (relative to its repository, `/`-separated), looking at the first
/// lines of its content when given (`head`: generated-code markers, minified code).
pub fn classify(path: &str, head: Option<&str>) -> FileRole {
    let lower = path.to_ascii_lowercase();
    let (dirs, name) = match lower.rsplit_once('/') {
        Some((d, n)) => (d, n),
        None => ("", lower.as_str()),
    };
    let dirs: Vec<&str> = dirs.split('/').filter(|d| !d.is_empty()).collect();
    let (stem, ext) = match name.rsplit_once('.') {
        Some((s, e)) if !s.is_empty() => (s, e),
        _ => (name, ""),
    };
    let in_dir = |set: &[&str]| dirs.iter().any(|d| set.contains(d));
    // .NET test projects: `Acme.Billing.Tests/`, `Acme.UnitTests/`; Gradle's test source sets
    // beside `src/test`: `src/androidTest/`, `src/commonTest/`, `src/integrationTest/`.
    let in_test_project = dirs.iter().any(|d| {
        d.rsplit_once('.')
            .is_some_and(|(_, last)| last.ends_with("tests") || last == "test" || last == "specs")
    }) || path.split('/').collect::<Vec<_>>().windows(2).any(|w| {
        w[0] == "src"
            && w[1].strip_suffix("Test").is_some_and(|set| {
                !set.is_empty() && set.chars().all(|c| c.is_ascii_alphanumeric())
            })
    });

    if in_dir(VENDOR_DIRS) {
        return FileRole::Vendored;
    }
    if GENERATED_NAMES.contains(&name)
        || is_generated_name(name, stem, ext)
        || head.is_some_and(is_generated_text)
    {
        return FileRole::Generated;
    }
    let camel_stem = path
        .rsplit('/')
        .next()
        .map_or("", |n| n.split('.').next().unwrap_or(n));
    if is_test_name(name, stem, ext)
        || is_camel_test_name(camel_stem, ext)
        || in_dir(TEST_DIRS)
        || in_test_project
    {
        return FileRole::Test;
    }
    if in_dir(BENCH_DIRS) || is_bench_name(stem) {
        return FileRole::Benchmark;
    }
    if in_dir(EXAMPLE_DIRS) {
        return FileRole::Example;
    }
    let is_doc_file = DOC_EXTS.contains(&ext)
        && !CONFIG_NAMES.contains(&name)
        && !stem.starts_with("requirements")
        && !stem.starts_with("constraints")
        || (ext.is_empty() && DOC_NAMES.contains(&stem))
        || DOC_NAMES.contains(&stem) && DOC_EXTS.contains(&ext);
    if is_doc_file || in_dir(DOC_DIRS) && !CONFIG_NAMES.contains(&name) {
        return FileRole::Docs;
    }
    if CONFIG_NAMES.contains(&name)
        || CONFIG_EXTS.contains(&ext)
        || dirs.first().is_some_and(|d| {
            matches!(
                *d,
                ".github" | ".circleci" | ".gitlab" | ".buildkite" | ".devcontainer"
            )
        })
        || name.starts_with(".") && ext.is_empty()
    {
        return FileRole::Config;
    }
    if CODE_EXTS.contains(&ext) {
        return FileRole::Source;
    }
    FileRole::Other
}

/// Test files by name: `test_x.py`, `x_test.py`, `conftest.py`, `x_test.go`, `x.test.ts`,
/// `x.spec.js`, `XTest.java`, `x_spec.rb`, Rust's `tests.rs`.
fn is_test_name(name: &str, stem: &str, ext: &str) -> bool {
    // Bats files are shell test suites.
    if name == "conftest.py" || name == "tests.rs" || name == "test.rs" || ext == "bats" {
        return true;
    }
    let code = CODE_EXTS.contains(&ext);
    code && (stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_tests")
        || stem.ends_with("_spec")
        || stem.ends_with(".test")
        || stem.ends_with(".spec"))
}

/// Test classes by name where a file is named for its class (`ParserTest.java`,
/// `InvoiceTests.cs`, `CartTest.php`, `ShopSpec.kt`, `CartSuite.scala`), told by the case of the
/// stem as written: `Latest.java` and `Manifest.kt` are no tests.
fn is_camel_test_name(stem: &str, ext: &str) -> bool {
    matches!(
        ext,
        "java" | "kt" | "kts" | "cs" | "php" | "scala" | "groovy" | "swift"
    ) && ["Test", "Tests", "Spec", "Suite"].iter().any(|suffix| {
        stem.strip_suffix(suffix)
            .is_some_and(|rest| !rest.is_empty())
    })
}

fn is_bench_name(stem: &str) -> bool {
    stem.starts_with("bench_")
        || stem.ends_with("_bench")
        || stem.ends_with(".bench")
        || stem.ends_with("_benchmark")
}

/// Generated by name: protobuf/gRPC output, minified bundles, `*.generated.*`.
fn is_generated_name(name: &str, stem: &str, ext: &str) -> bool {
    name.ends_with(".pb.go")
        || name.ends_with("_pb2.py")
        || name.ends_with("_pb2_grpc.py")
        || name.ends_with(".pb.h")
        || name.ends_with(".pb.cc")
        || stem.ends_with(".min") && matches!(ext, "js" | "css")
        || stem.ends_with(".generated")
        || stem.ends_with(".g") && matches!(ext, "dart" | "cs")
        || stem.ends_with("_generated")
}

/// Generated by content: a marker in the first lines (`@generated`, `DO NOT EDIT`, `Code generated
/// … DO NOT EDIT.`, `autogenerated`), or minified code (very long lines).
fn is_generated_text(head: &str) -> bool {
    let mut lines = 0;
    for line in head.lines().take(10) {
        lines += 1;
        if line.len() > 1000 {
            return true;
        }
        let l = line.to_ascii_lowercase();
        if l.contains("@generated")
            || l.contains("do not edit")
            || l.contains("code generated by")
            || l.contains("autogenerated")
            || l.contains("auto-generated")
            || l.contains("automatically generated")
        {
            return true;
        }
    }
    lines == 1 && head.len() > 1000
}

/// A source chunk at least this much prose literal ([`chunk_role`]) is documentation.
pub const PROSE_DOCS_SHARE: f32 = 0.75;

/// The role of a chunk of a file of role `file_role`, where it differs from its file's:
/// - test code of its own: Rust's inline `#[cfg(test)] mod tests { … }` (a chunk inside a module
///   named `tests`, or one carrying `#[cfg(test)]`); Python's `TestX` classes and `test_x`
///   functions inside source files are left to their file, since they are rare there;
/// - documentation: a source chunk that is mostly text the program prints — help texts, usage
///   templates — (`prose_share`, the share of its bytes in prose string literals, at least
///   [`PROSE_DOCS_SHARE`]). It answers "what does this do" as a manual does, not as the code
///   that does it.
pub fn chunk_role(
    file_role: FileRole,
    language_is_rust: bool,
    parent: Option<&str>,
    symbol: Option<&str>,
    text: &str,
    prose_share: f32,
) -> FileRole {
    if file_role != FileRole::Source {
        return file_role;
    }
    if prose_share >= PROSE_DOCS_SHARE {
        return FileRole::Docs;
    }
    if !language_is_rust {
        return file_role;
    }
    let in_test_module = matches!(parent, Some("tests" | "test"));
    let is_test_module = matches!(symbol, Some("tests" | "test"));
    let cfg_test = text
        .lines()
        .take(3)
        .any(|l| l.trim_start().starts_with("#[cfg(test)]"));
    if in_test_module || is_test_module || cfg_test {
        FileRole::Test
    } else {
        file_role
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn role(path: &str) -> FileRole {
        classify(path, None)
    }

    #[test]
    fn tests_across_ecosystems() {
        for p in [
            "cmd/root_test.go",
            "tests/test_config.py",
            "testing/python/fixtures.py",
            "src/app/test_views.py",
            "pkg/foo_test.py",
            "conftest.py",
            "src/components/__tests__/Button.tsx",
            "src/button.spec.ts",
            "lib/router.test.js",
            "tokio/tests/io_read.rs",
            "src/main/java/org/x/ParserTest.java",
            "spec/models/user_spec.rb",
            "src/fs/tests.rs",
            "internal/testdata/input.go",
        ] {
            assert_eq!(role(p), FileRole::Test, "{p}");
        }
    }

    #[test]
    fn tests_of_ruby() {
        for p in [
            "spec/models/user_spec.rb",
            "spec/spec_helper.rb",
            "test/models/user_test.rb",
            "test/test_helper.rb",
            "lib/shop/cart_spec.rb",
            "test/integration/checkout_flow.rb",
        ] {
            assert_eq!(role(p), FileRole::Test, "{p}");
        }
        for p in [
            "lib/shop/cart.rb",
            "app/models/user.rb",
            "Rakefile.rb",
            "shop.gemspec",
        ] {
            assert_ne!(role(p), FileRole::Test, "{p}");
        }
        assert_eq!(role("app/models/contest.rb"), FileRole::Source);
        assert_eq!(role("lib/tasks/db.rake"), FileRole::Source);
        assert_eq!(role("shop.gemspec"), FileRole::Config);
    }

    #[test]
    fn tests_of_php() {
        for p in [
            "tests/Unit/InvoiceTest.php",
            "src/Billing/InvoiceTest.php",
            "tests/bootstrap.php",
        ] {
            assert_eq!(role(p), FileRole::Test, "{p}");
        }
        for p in [
            "src/Billing/Invoice.php",
            "src/Http/Latest.php",
            "src/Test.php",
        ] {
            assert_eq!(role(p), FileRole::Source, "{p}");
        }
    }

    #[test]
    fn tests_of_csharp() {
        for p in [
            "tests/Acme.Billing.Tests/InvoiceTests.cs",
            "src/Acme.Billing.Tests/Fakes.cs",
            "src/Acme.UnitTests/Money.cs",
            "src/Acme.Billing/InvoiceTest.cs",
        ] {
            assert_eq!(role(p), FileRole::Test, "{p}");
        }
        for p in [
            "src/Acme.Billing/Invoice.cs",
            "src/Acme.Billing/Manifest.cs",
            "src/Acme.Testing.Tools/Runner.cs",
        ] {
            assert_eq!(role(p), FileRole::Source, "{p}");
        }
    }

    #[test]
    fn tests_of_kotlin() {
        for p in [
            "src/test/kotlin/com/acme/InvoiceTest.kt",
            "src/main/kotlin/com/acme/InvoiceTest.kt",
            "app/src/androidTest/java/com/acme/MainScreen.kt",
            "shared/src/commonTest/kotlin/com/acme/Fakes.kt",
            "src/jvmTest/kotlin/ShopSpec.kt",
        ] {
            assert_eq!(role(p), FileRole::Test, "{p}");
        }
        for p in [
            "src/main/kotlin/com/acme/Invoice.kt",
            "shared/src/commonMain/kotlin/com/acme/Manifest.kt",
            "src/latest/Main.kt",
        ] {
            assert_eq!(role(p), FileRole::Source, "{p}");
        }
        assert_eq!(role("build.gradle.kts"), FileRole::Config);
    }

    #[test]
    fn tests_of_lua() {
        for p in [
            "spec/cart_spec.lua",
            "lua/shop/cart_spec.lua",
            "test/test_cart.lua",
        ] {
            assert_eq!(role(p), FileRole::Test, "{p}");
        }
        assert_eq!(role("lua/shop/cart.lua"), FileRole::Source);
        assert_eq!(role("shop-1.0-1.rockspec"), FileRole::Config);
    }

    #[test]
    fn tests_of_shell_scripts() {
        for p in [
            "test/deploy.bats",
            "scripts/deploy.bats",
            "tests/run.sh",
            "lib/log_test.sh",
        ] {
            assert_eq!(role(p), FileRole::Test, "{p}");
        }
        assert_eq!(role("scripts/deploy.sh"), FileRole::Source);
    }

    #[test]
    fn tests_of_scala() {
        for p in [
            "src/test/scala/com/acme/InvoiceSpec.scala",
            "core/src/main/scala/com/acme/InvoiceSuite.scala",
            "modules/core/src/test/scala/Fixtures.scala",
        ] {
            assert_eq!(role(p), FileRole::Test, "{p}");
        }
        assert_eq!(
            role("src/main/scala/com/acme/Invoice.scala"),
            FileRole::Source
        );
        assert_eq!(role("build.sbt"), FileRole::Config);
    }

    #[test]
    fn tests_of_elixir() {
        for p in [
            "test/acme/billing/invoice_test.exs",
            "test/support/fixtures.ex",
            "apps/billing/test/test_helper.exs",
        ] {
            assert_eq!(role(p), FileRole::Test, "{p}");
        }
        assert_eq!(role("lib/acme/billing/invoice.ex"), FileRole::Source);
        assert_eq!(role("mix.exs"), FileRole::Config);
        assert_eq!(role("mix.lock"), FileRole::Generated);
    }

    #[test]
    fn source_is_code_outside_special_places() {
        for p in [
            "src/_pytest/fixtures.py",
            "command.go",
            "tokio/src/runtime/mod.rs",
            "lib/router/index.js",
            "src/flask/config.py",
            "crates/core/src/lib.rs",
            "src/attestation.py",
            "contest.py",
        ] {
            assert_eq!(role(p), FileRole::Source, "{p}");
        }
    }

    #[test]
    fn docs_examples_benchmarks() {
        assert_eq!(role("README.md"), FileRole::Docs);
        assert_eq!(role("README"), FileRole::Docs);
        assert_eq!(role("docs/config.rst"), FileRole::Docs);
        assert_eq!(role("site/content/completions/_index.md"), FileRole::Docs);
        assert_eq!(role("changelog/1234.bugfix.rst"), FileRole::Docs);
        assert_eq!(role("docs/conf.py"), FileRole::Docs);
        assert_eq!(role("examples/hello.rs"), FileRole::Example);
        assert_eq!(role("docs/examples/app.py"), FileRole::Example);
        assert_eq!(role("benches/sync_mpsc.rs"), FileRole::Benchmark);
        assert_eq!(role("bench_parse.py"), FileRole::Benchmark);
    }

    #[test]
    fn config_generated_vendored_other() {
        assert_eq!(role("Cargo.toml"), FileRole::Config);
        assert_eq!(role("requirements.txt"), FileRole::Config);
        assert_eq!(role("CMakeLists.txt"), FileRole::Config);
        assert_eq!(role(".github/workflows/ci.yml"), FileRole::Config);
        assert_eq!(role("Makefile"), FileRole::Config);
        assert_eq!(role("Cargo.lock"), FileRole::Generated);
        assert_eq!(role("api/v1/service.pb.go"), FileRole::Generated);
        assert_eq!(role("static/app.min.js"), FileRole::Generated);
        assert_eq!(
            classify(
                "gen/types.go",
                Some("// Code generated by stringer. DO NOT EDIT.\npackage x")
            ),
            FileRole::Generated
        );
        assert_eq!(
            classify("x.js", Some(&"a".repeat(5000))),
            FileRole::Generated
        );
        assert_eq!(role("vendor/github.com/x/y.go"), FileRole::Vendored);
        assert_eq!(role("web/node_modules/react/index.js"), FileRole::Vendored);
        assert_eq!(role("data/words.csv"), FileRole::Other);
    }

    #[test]
    fn rust_inline_test_modules() {
        let r =
            |parent, symbol, text| chunk_role(FileRole::Source, true, parent, symbol, text, 0.0);
        assert_eq!(
            r(Some("tests"), Some("parses"), "fn parses() {}"),
            FileRole::Test
        );
        assert_eq!(
            r(None, Some("tests"), "#[cfg(test)]\nmod tests {"),
            FileRole::Test
        );
        assert_eq!(
            r(Some("Parser"), Some("parse"), "fn parse() {}"),
            FileRole::Source
        );
        assert_eq!(
            chunk_role(FileRole::Source, false, Some("tests"), None, "", 0.0),
            FileRole::Source
        );
        assert_eq!(
            chunk_role(FileRole::Docs, true, Some("tests"), None, "", 0.0),
            FileRole::Docs
        );
    }

    #[test]
    fn source_chunks_of_help_text_are_documentation() {
        let r = |share| chunk_role(FileRole::Source, false, None, Some("Glob"), "", share);
        assert_eq!(r(0.8), FileRole::Docs);
        assert_eq!(r(PROSE_DOCS_SHARE), FileRole::Docs);
        assert_eq!(r(0.6), FileRole::Source);
        // Only source chunks: a test full of fixture prose stays a test.
        assert_eq!(
            chunk_role(FileRole::Test, false, None, None, "", 0.9),
            FileRole::Test
        );
    }

    #[test]
    fn names_round_trip() {
        for r in FileRole::ALL {
            assert_eq!(FileRole::parse(r.name()), Some(r));
        }
        assert_eq!(FileRole::parse("tests"), Some(FileRole::Test));
        assert_eq!(FileRole::parse("nope"), None);
    }
}
