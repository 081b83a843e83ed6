//! File roles: what a file is *for* — the code itself, its tests, its documentation, examples,
//! benchmarks, generated or vendored code, configuration — decided by each ecosystem's own
//! conventions (directory names, file-name patterns, generated-code markers).
//!
//! Roles let ranking answer "how does X work" with the implementation rather than with the README
//! or the test that repeats the question's words, and let a caller ask for one role explicitly.

use serde::{Deserialize, Serialize};

use crate::lang::Language;

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
    /// Prose: Markdown, reStructuredText, text files, anything under a documentation directory
    /// but the code of a package there.
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
    "cabal",
    "zon",
    "tfvars",
    "podspec",
    "opam",
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
    "package.swift",
    "podfile",
    "description",
    "rebar.config",
    "dune",
    "dune-project",
    "cabal.project",
    "setup.hs",
    "build.zig",
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
    "package.resolved",
    "podfile.lock",
    "manifest.toml",
    "rebar.lock",
    "pubspec.lock",
    ".terraform.lock.hcl",
    // Build tools' launcher scripts, written by the tool (`gradle wrapper`) or copied from it:
    // shell programs (read as such by their `#!` line) that are none of the project's code.
    "gradlew",
    "gradlew.bat",
    "mvnw",
    "mvnw.cmd",
    "mill",
    "millw",
    "sbt",
];
/// Extensions of code.
const CODE_EXTS: &[&str] = &[
    "rs", "py", "pyi", "pyx", "js", "mjs", "cjs", "jsx", "ts", "tsx", "mts", "cts", "go", "java",
    "kt", "kts", "scala", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx", "m", "mm", "cs", "fs",
    "rb", "php", "swift", "lua", "pl", "pm", "sh", "bash", "zsh", "fish", "ps1", "ex", "exs",
    "erl", "hrl", "hs", "ml", "mli", "clj", "cljs", "dart", "r", "jl", "zig", "nim", "v", "sql",
    "vue", "svelte", "elm", "groovy", "proto", "graphql", "css", "scss", "sass", "less", "html",
    "htm", "vim", "rake", "ksh", "bats", "tf", "hcl", "nomad",
];

/// Folders of test data: what tests read (inputs, expected outputs, sample projects), not
/// tests themselves. Their files are [`FileRole::Test`] by folder.
const TEST_DATA_DIRS: &[&str] = &[
    "testdata",
    "test_data",
    "test-data",
    "fixtures",
    "fixture",
    "__fixtures__",
    "__snapshots__",
];

/// Whether the file at `path` (relative, `/`-separated) is test data ([`TEST_DATA_DIRS`]): a
/// fixture says what a test feeds the code, never how the code does it, yet it reads like the
/// code (a sample script, a sample project) and matches its words.
pub fn is_test_data(path: &str) -> bool {
    path.rsplit_once('/').is_some_and(|(dirs, _)| {
        dirs.split('/')
            .any(|d| TEST_DATA_DIRS.iter().any(|t| d.eq_ignore_ascii_case(t)))
    })
}

/// Names of release notes: a project's record of what changed in each version.
const CHANGELOG_NAMES: &[&str] = &[
    "changelog",
    "changes",
    "history",
    "news",
    "releases",
    "release-notes",
    "release_notes",
    "releasenotes",
    "whatsnew",
];
/// Folders of release-note fragments (towncrier's `changelog.d/`, pytest's `changelog/`).
const CHANGELOG_DIRS: &[&str] = &[
    "changelog",
    "changelog.d",
    "changes",
    "newsfragments",
    "release-notes",
    "releasenotes",
];

/// Whether the file at `path` is release notes ([`CHANGELOG_NAMES`], or prose in a folder of
/// fragments, [`CHANGELOG_DIRS`]): prose about what changed and when, which names every part of
/// the program in a line each and so matches every question a little, yet answers none of how
/// the code works or how to use it. Source files of those names (`history.rs`) are not.
pub fn is_changelog(path: &str) -> bool {
    let (dirs, name) = path.rsplit_once('/').unwrap_or(("", path));
    let (stem, ext) = name.split_once('.').unwrap_or((name, ""));
    let prose = ext.is_empty() || DOC_EXTS.iter().any(|e| ext.eq_ignore_ascii_case(e));
    let prose_fragment = ext
        .rsplit('.')
        .next()
        .is_some_and(|e| DOC_EXTS.iter().any(|d| e.eq_ignore_ascii_case(d)));
    (prose && CHANGELOG_NAMES.iter().any(|n| stem.eq_ignore_ascii_case(n)))
        || (prose_fragment
            && dirs
                .rsplit('/')
                .next()
                .is_some_and(|d| CHANGELOG_DIRS.iter().any(|c| d.eq_ignore_ascii_case(c))))
}

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

    // CocoaPods' checked-in dependencies, as CocoaPods spells the folder (a `pods/` folder of
    // Kubernetes code is the project's own).
    let in_pods = path.starts_with("Pods/") || path.contains("/Pods/");
    if in_dir(VENDOR_DIRS) || in_pods {
        return FileRole::Vendored;
    }
    // Kotlin's binary-compatibility validator dumps each module's public API to `api/<m>.api`,
    // JVM signatures from its first line (`public final class io/mockk/…`); go-zero's hand-written
    // `.api` service definitions open with `syntax`, `info` or `type`.
    let api_dump = ext == "api"
        && dirs.last() == Some(&"api")
        && head.is_some_and(|h| h.starts_with("public "));
    if GENERATED_NAMES.contains(&name)
        || api_dump
        || is_generated_name(name, stem, ext)
        || head.is_some_and(is_generated_text)
        || matches!(ext, "html" | "htm" | "xhtml") && head.is_some_and(is_generated_html)
    {
        return FileRole::Generated;
    }
    let camel_stem = path
        .rsplit('/')
        .next()
        .map_or("", |n| n.split('.').next().unwrap_or(n));
    // Gradle's and Maven's main source sets (`src/main/`, Kotlin Multiplatform's
    // `src/commonMain/`, `src/jvmMain/`): the folders below them are packages, and a package
    // called `test` (`org/koin/test/` of the koin-test library) is the program's, not a tests
    // folder. A file named as a test (`InvoiceTest.kt`) is one wherever it is.
    let main_set = path
        .split('/')
        .collect::<Vec<_>>()
        .windows(2)
        .position(|w| {
            w[0] == "src"
                && (w[1] == "main"
                    || w[1].strip_suffix("Main").is_some_and(|set| {
                        !set.is_empty() && set.chars().all(|c| c.is_ascii_alphanumeric())
                    }))
        });
    let before_main = main_set.map_or(dirs.len(), |at| at.min(dirs.len()));
    let named_test = is_test_name(name, stem, ext) || is_camel_test_name(camel_stem, ext);
    // A tests folder inside a documentation folder (cowboy's `doc/src/specs/`, the HTTP
    // specifications it implements, in prose) holds documentation unless the file is code.
    let first_test_dir = dirs[..before_main]
        .iter()
        .position(|d| TEST_DIRS.contains(d));
    let docs_above_tests = first_test_dir.is_some_and(|t| {
        dirs[..t].iter().any(|d| DOC_DIRS.contains(d)) && !CODE_EXTS.contains(&ext)
    });
    if named_test
        || first_test_dir.is_some() && !docs_above_tests
        || in_test_project && main_set.is_none()
    {
        return FileRole::Test;
    }
    // A patch or diff holds changes to someone else's code (the fixes a build tool applies to
    // the sources it downloads): the project ships it, it did not write the code in its hunks.
    if matches!(ext, "patch" | "diff") {
        return FileRole::Vendored;
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
    let in_doc_dir = dirs
        .iter()
        .position(|d| DOC_DIRS.contains(d))
        .is_some_and(|at| !is_package_code(&dirs, at, ext, head));
    let site_page = matches!(ext, "html" | "htm") && head.is_some_and(has_front_matter);
    if is_doc_file || site_page || in_doc_dir && !CONFIG_NAMES.contains(&name) {
        return FileRole::Docs;
    }
    if CONFIG_NAMES.contains(&name)
        || CONFIG_EXTS.contains(&ext)
        // An Erlang application's resource file: `src/billing.app.src`.
        || name.ends_with(".app.src")
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
    // A program without an extension (`bin/tool`, `libexec/tool-run`) whose first line names
    // an interpreter Patina reads is code.
    if CODE_EXTS.contains(&ext) || ext.is_empty() && head.and_then(Language::from_shebang).is_some()
    {
        return FileRole::Source;
    }
    FileRole::Other
}

/// Whether a code file inside a documentation folder (`dirs[doc]`) is part of a package the
/// program is built from, by its language's package rules, rather than a sample the prose shows:
/// - Go: a package other than `main` (cobra's `doc/` is package `doc`, which generates man pages
///   and which other packages import); a `package main` program there is an example;
/// - Java, Kotlin, Scala, Groovy: the file's `package` declaration names the folder (`package
///   com.acme.docs;` in `com/acme/docs/`);
/// - Rust: the folder is inside a crate's `src/`, where every file is a module of the crate.
///
/// Prose files are documentation wherever they are; this only keeps code out of it.
fn is_package_code(dirs: &[&str], doc: usize, ext: &str, head: Option<&str>) -> bool {
    let declared = |keyword: &str| {
        head.into_iter()
            .flat_map(str::lines)
            .take(200)
            .find_map(|line| {
                let rest = line.trim_start().strip_prefix(keyword)?;
                rest.starts_with(char::is_whitespace).then(|| {
                    rest.trim()
                        .trim_end_matches(';')
                        .trim()
                        .to_ascii_lowercase()
                })
            })
    };
    match ext {
        "go" => declared("package").is_some_and(|p| !p.is_empty() && p != "main"),
        "java" | "kt" | "kts" | "scala" | "groovy" => {
            declared("package").is_some_and(|p| p.split('.').any(|segment| segment == dirs[doc]))
        }
        "rs" => dirs[..doc].contains(&"src"),
        _ => false,
    }
}

/// Test files by name: `test_x.py`, `x_test.py`, `conftest.py`, `x_test.go`, `x.test.ts`,
/// `x.spec.js`, `XTest.java`, `x_spec.rb`, Rust's `tests.rs`.
fn is_test_name(name: &str, stem: &str, ext: &str) -> bool {
    // Bats files are shell test suites.
    if name == "conftest.py" || name == "tests.rs" || name == "test.rs" || ext == "bats" {
        return true;
    }
    let code = CODE_EXTS.contains(&ext);
    // No shell test runner finds tests by a `test_` prefix (Bats by `.bats`): there the prefix
    // names a script that runs tests or a library of test helpers (bats-core's own
    // `lib/bats-core/test_functions.bash`).
    let prefixed = stem.starts_with("test_") && !SHELL_EXTS.contains(&ext);
    code && (prefixed || TEST_SUFFIXES.iter().any(|s| stem.ends_with(s)))
}

const SHELL_EXTS: &[&str] = &["sh", "bash", "zsh", "ksh"];

/// What a test file's stem ends with (`x_test.go`, `x.spec.ts`), the longer of two first.
const TEST_SUFFIXES: &[&str] = &["_tests", "_test", "_spec", ".test", ".spec"];
/// What a test class's name ends with where a file is named for its class, the longer first.
const CAMEL_TEST_SUFFIXES: &[&str] = &["Tests", "Test", "Spec", "Suite"];

/// Test classes by name where a file is named for its class (`ParserTest.java`,
/// `InvoiceTests.cs`, `CartTest.php`, `ShopSpec.kt`, `CartSuite.scala`, `CartSpec.hs`, XCTest's
/// `LedgerTests.m`), told by the case of the
/// stem as written: `Latest.java` and `Manifest.kt` are no tests.
fn is_camel_test_name(stem: &str, ext: &str) -> bool {
    matches!(
        ext,
        "java" | "kt" | "kts" | "cs" | "php" | "scala" | "groovy" | "swift" | "hs" | "m" | "mm"
    ) && CAMEL_TEST_SUFFIXES.iter().any(|suffix| {
        stem.strip_suffix(suffix)
            .is_some_and(|rest| !rest.is_empty())
    })
}

/// The name of the code a test file tests, by the test naming conventions [`classify`] knows:
/// `SafeAggregateSinkTests.cs` → `SafeAggregateSink`, `test_config.py` and `config_test.go` →
/// `config`, `session_spec.rb` and `spec_session.rb` → `session`, `router.test.ts` and
/// `__tests__/router.ts` → `router`, `deploy.bats` → `deploy`. `None` for a path whose name says
/// nothing of a subject (`conftest.py`, `helpers.rb` under `spec/`, `test_helper.rb`,
/// `tests.rs`): a fixture or a suite is no one file's test.
pub fn tested_stem(path: &str) -> Option<&str> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let (stem, ext) = name.rsplit_once('.').filter(|(s, _)| !s.is_empty())?;
    let ext = ext.to_ascii_lowercase();
    let lower = stem.to_ascii_lowercase();
    let class = stem.split('.').next().unwrap_or(stem);
    let subject = if is_camel_test_name(class, &ext) {
        CAMEL_TEST_SUFFIXES
            .iter()
            .find_map(|suffix| class.strip_suffix(suffix))?
    } else if !CODE_EXTS.contains(&ext.as_str()) {
        return None;
    } else if matches!(lower.as_str(), "test_helper" | "spec_helper") {
        // Minitest's and RSpec's shared setup, loaded by every test: no one file's test.
        return None;
    } else if lower.starts_with("test_") || lower.starts_with("spec_") {
        // `spec_` as Rack and other Minitest-spec projects name theirs: `test/spec_urlmap.rb`.
        &stem[5..]
    } else if let Some(subject) = without_test_suffix(stem, &lower) {
        subject
    } else if ext == "bats" || path.split('/').any(|d| d == "__tests__") {
        // A Bats suite is named for the script it runs (`test/deploy.bats` tests `deploy.sh`),
        // a file in Jest's `__tests__/` for the file beside the folder.
        stem
    } else if matches!(lower.as_str(), "test" | "tests" | "spec") {
        // Named for nothing but being tests, in a folder named for what it tests: Haskell's
        // `Store/Tests.hs` beside `Store.hs`, Rust's `rank/tests.rs` beside `rank.rs`.
        path.rsplit('/').nth(1)?
    } else {
        return None;
    };
    let generic = ["test", "tests", "spec", "specs", "testing", "__tests__"];
    (!subject.is_empty() && !generic.contains(&subject.to_ascii_lowercase().as_str()))
        .then_some(subject)
}

/// `stem` without the test suffix its lowercase form `lower` ends with, if any.
fn without_test_suffix<'a>(stem: &'a str, lower: &str) -> Option<&'a str> {
    TEST_SUFFIXES
        .iter()
        .find(|suffix| lower.ends_with(*suffix))
        .map(|suffix| &stem[..stem.len() - suffix.len()])
}

fn is_bench_name(stem: &str) -> bool {
    stem.starts_with("bench_")
        || stem.ends_with("_bench")
        || stem.ends_with(".bench")
        || stem.ends_with("_benchmark")
}

/// Generated by name: protobuf/gRPC output, minified bundles, `*.generated.*`, Dart's
/// build_runner outputs (`*.g.dart`, `*.freezed.dart`, `*.mocks.dart`).
fn is_generated_name(name: &str, stem: &str, ext: &str) -> bool {
    name.ends_with(".pb.go")
        || name.ends_with("_pb2.py")
        || name.ends_with("_pb2_grpc.py")
        || name.ends_with(".pb.h")
        || name.ends_with(".pb.cc")
        || stem.ends_with(".min") && matches!(ext, "js" | "css")
        || stem.ends_with(".generated")
        || stem.ends_with(".g") && matches!(ext, "dart" | "cs")
        || ext == "dart"
            && [".freezed", ".gr", ".mocks", ".pb", ".pbenum", ".pbgrpc"]
                .iter()
                .any(|suffix| stem.ends_with(suffix))
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

/// Whether a page opens with front matter (`---`, then `key: value` lines): the content page of a
/// static site (Jekyll, Hugo, Hakyll), prose its author wrote in HTML — a tutorial, a post — where
/// a page without it is a template or part of an application.
fn has_front_matter(head: &str) -> bool {
    let mut lines = head.lines();
    lines.next().is_some_and(|l| l.trim_end() == "---")
        && lines.next().is_some_and(|l| {
            l.split_once(':').is_some_and(|(key, _)| {
                !key.is_empty()
                    && key
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            })
        })
}

/// A page a documentation generator wrote (API references from doc comments: rustdoc, Doxygen,
/// javadoc, Sphinx, jazzy; static-site output): the generator's `<meta name="generator">` or
/// `<!-- Generated by … -->` in its head, or jazzy's own assets (it writes no meta tag). Such a page
/// repeats the doc comments of the code it documents, so it matches the same questions, yet it is
/// neither that code nor a guide anyone wrote. A template's footer ("Site proudly generated by
/// Hakyll") is not such a marker.
fn is_generated_html(head: &str) -> bool {
    let lower = head.to_ascii_lowercase();
    lower.contains("name=\"generator\"")
        || lower.contains("<!-- generated by")
        || lower.contains("/jazzy.css")
        || lower.contains("/jazzy.js")
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
mod tests;
