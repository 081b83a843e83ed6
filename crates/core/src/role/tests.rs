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
fn a_tests_folder_inside_the_documentation_holds_documentation() {
    // cowboy's HTTP specifications, in prose, under `doc/src/specs/`.
    assert_eq!(role("doc/src/specs/rfc7230_server.ezdoc"), FileRole::Docs);
    assert_eq!(role("docs/spec/protocol.md"), FileRole::Docs);
    // Code there is still a test, and a test folder's data is still test data.
    assert_eq!(role("docs/tests/test_links.py"), FileRole::Test);
    assert_eq!(role("docs/tests/conftest.py"), FileRole::Test);
    assert_eq!(role("tests/data/sample.txt"), FileRole::Test);
    assert_eq!(role("spec/fixtures/readme.md"), FileRole::Test);
}

#[test]
fn tests_of_erlang() {
    for p in [
        "test/invoice_SUITE.erl",
        "apps/billing/test/ledger_tests.erl",
        "src/ledger_tests.erl",
    ] {
        assert_eq!(role(p), FileRole::Test, "{p}");
    }
    for p in ["src/ledger.erl", "apps/billing/include/records.hrl"] {
        assert_eq!(role(p), FileRole::Source, "{p}");
    }
    assert_eq!(role("rebar.config"), FileRole::Config);
    assert_eq!(role("src/billing.app.src"), FileRole::Config);
    assert_eq!(role("rebar.lock"), FileRole::Generated);
}

#[test]
fn tests_of_ocaml() {
    for p in ["test/test_invoice.ml", "lib/invoice_test.ml", "test/dune"] {
        assert_eq!(role(p), FileRole::Test, "{p}");
    }
    assert_eq!(role("lib/invoice.ml"), FileRole::Source);
    assert_eq!(role("lib/invoice.mli"), FileRole::Source);
    for p in ["dune-project", "lib/dune", "billing.opam"] {
        assert_eq!(role(p), FileRole::Config, "{p}");
    }
}

#[test]
fn tests_of_julia() {
    assert_eq!(role("test/runtests.jl"), FileRole::Test);
    assert_eq!(role("src/Tides.jl"), FileRole::Source);
    assert_eq!(role("Project.toml"), FileRole::Config);
    assert_eq!(role("Manifest.toml"), FileRole::Generated);
}

#[test]
fn tests_of_r() {
    for p in ["tests/testthat/test-invoice.R", "tests/testthat.R"] {
        assert_eq!(role(p), FileRole::Test, "{p}");
    }
    assert_eq!(role("R/invoice.R"), FileRole::Source);
    assert_eq!(role("DESCRIPTION"), FileRole::Config);
}

#[test]
fn tests_of_objc() {
    for p in [
        "LedgerTests/LedgerTests.m",
        "Tests/SettleTest.mm",
        "Ledger/LedgerTests.m",
    ] {
        assert_eq!(role(p), FileRole::Test, "{p}");
    }
    for p in ["Ledger/Ledger.m", "Ledger/Ledger.h", "Ledger/Contest.m"] {
        assert_eq!(role(p), FileRole::Source, "{p}");
    }
    assert_eq!(role("Podfile"), FileRole::Config);
    assert_eq!(role("Ledger.podspec"), FileRole::Config);
    assert_eq!(role("Podfile.lock"), FileRole::Generated);
    assert_eq!(
        role("Pods/AFNetworking/AFNetworking/AFURLSessionManager.m"),
        FileRole::Vendored
    );
}

#[test]
fn tests_of_swift() {
    for p in [
        "Tests/ShopTests/CartTests.swift",
        "Tests/ShopTests/Fixtures.swift",
        "App/CartTests.swift",
        "AppUITests/LaunchTests.swift",
    ] {
        assert_eq!(role(p), FileRole::Test, "{p}");
    }
    for p in ["Sources/Shop/Cart.swift", "App/Contest.swift"] {
        assert_eq!(role(p), FileRole::Source, "{p}");
    }
    assert_eq!(role("Package.swift"), FileRole::Config);
    assert_eq!(role("Package.resolved"), FileRole::Generated);
    assert_eq!(
        role("Pods/Alamofire/Source/Session.swift"),
        FileRole::Vendored
    );
    assert_eq!(role("pkg/kubelet/pods/manager.go"), FileRole::Source);
}

#[test]
fn tests_of_haskell() {
    for p in [
        "test/Spec.hs",
        "test/Acme/BillingSpec.hs",
        "src/Acme/BillingTest.hs",
    ] {
        assert_eq!(role(p), FileRole::Test, "{p}");
    }
    for p in ["src/Acme/Billing.hs", "app/Main.hs", "src/Acme/Inspect.hs"] {
        assert_eq!(role(p), FileRole::Source, "{p}");
    }
    for p in ["acme.cabal", "stack.yaml", "cabal.project", "Setup.hs"] {
        assert_eq!(role(p), FileRole::Config, "{p}");
    }
}

#[test]
fn roles_of_zig() {
    for p in ["src/main.zig", "src/std/testing.zig"] {
        assert_eq!(role(p), FileRole::Source, "{p}");
    }
    assert_eq!(role("test/behavior/cast.zig"), FileRole::Test);
    for p in ["build.zig", "build.zig.zon"] {
        assert_eq!(role(p), FileRole::Config, "{p}");
    }
}

#[test]
fn roles_of_dart() {
    for p in [
        "test/cart_test.dart",
        "lib/src/cart_test.dart",
        "test/helpers.dart",
    ] {
        assert_eq!(role(p), FileRole::Test, "{p}");
    }
    for p in ["lib/src/cart.dart", "lib/cart.dart", "bin/main.dart"] {
        assert_eq!(role(p), FileRole::Source, "{p}");
    }
    for p in [
        "lib/src/cart.g.dart",
        "lib/src/cart.freezed.dart",
        "test/cart_test.mocks.dart",
        "lib/src/proto/cart.pb.dart",
        "pubspec.lock",
    ] {
        assert_eq!(role(p), FileRole::Generated, "{p}");
    }
    for p in ["pubspec.yaml", "analysis_options.yaml"] {
        assert_eq!(role(p), FileRole::Config, "{p}");
    }
}

#[test]
fn code_of_a_package_in_a_docs_folder_is_source() {
    let go = |path: &str, head: &str| classify(path, Some(head));
    // cobra's `doc/`: a package other packages import, which generates man pages.
    assert_eq!(
        go(
            "doc/man_docs.go",
            "// Copyright\n\npackage doc\n\nimport \"fmt\"\n"
        ),
        FileRole::Source
    );
    // A program shown by the docs is an example of them.
    assert_eq!(
        go("docs/snippets/hello.go", "package main\n\nfunc main() {}\n"),
        FileRole::Docs
    );
    assert_eq!(
        go(
            "src/main/java/com/acme/docs/Renderer.java",
            "package com.acme.docs;\n\npublic class Renderer {}\n"
        ),
        FileRole::Source
    );
    assert_eq!(
        go("docs/snippets/Hello.java", "public class Hello {}\n"),
        FileRole::Docs
    );
    assert_eq!(go("src/doc/mod.rs", "//! Docs.\n"), FileRole::Source);
    assert_eq!(go("docs/src/lib.rs", "fn x() {}\n"), FileRole::Docs);
    // Without the text (a path alone), and for prose, the folder decides.
    assert_eq!(role("doc/man_docs.go"), FileRole::Docs);
    assert_eq!(go("doc/README.md", "package doc\n"), FileRole::Docs);
    assert_eq!(go("docs/conf.py", "project = 'x'\n"), FileRole::Docs);
}

#[test]
fn roles_of_terraform() {
    for p in ["main.tf", "modules/vpc/variables.tf", "jobs/web.nomad"] {
        assert_eq!(role(p), FileRole::Source, "{p}");
    }
    assert_eq!(role("envs/prod.tfvars"), FileRole::Config);
    assert_eq!(role(".terraform.lock.hcl"), FileRole::Generated);
    assert_eq!(role("examples/basic/main.tf"), FileRole::Example);
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
fn patches_to_other_projects_code_are_vendored() {
    // python-build's fixes to the CPython sources it downloads.
    assert_eq!(
        role("plugins/python-build/share/python-build/patches/3.6.15/Python-3.6.15/0001-fix.patch"),
        FileRole::Vendored
    );
    assert_eq!(role("debian/patches/fix-build.diff"), FileRole::Vendored);
    // A module's public API as Kotlin's binary-compatibility validator dumps it.
    assert_eq!(
        classify(
            "modules/mockk-dsl/api/mockk-dsl.api",
            Some("public final class io/mockk/MockKDsl {\n")
        ),
        FileRole::Generated
    );
    // go-zero's service definitions are written by hand.
    assert_ne!(
        classify(
            "service/api/user.api",
            Some("syntax = \"v1\"\n\ntype Request {\n")
        ),
        FileRole::Generated
    );
    // A diff kept as test data stays the tests'.
    assert_eq!(role("tests/fixtures/change.patch"), FileRole::Test);
    assert_eq!(role("src/patch.rs"), FileRole::Source);
}

#[test]
fn rust_inline_test_modules() {
    let r = |parent, symbol, text| chunk_role(FileRole::Source, true, parent, symbol, text, 0.0);
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

#[test]
fn a_test_file_names_the_code_it_tests() {
    for (test, subject) in [
        (
            "test/Serilog.Tests/Core/SafeAggregateSinkTests.cs",
            "SafeAggregateSink",
        ),
        ("src/commonTest/kotlin/org/koin/core/ScopeTest.kt", "Scope"),
        ("Tests/SessionSpec.swift", "Session"),
        ("tests/test_config.py", "config"),
        ("cmd/root_test.go", "root"),
        ("spec/models/user_spec.rb", "user"),
        ("test/spec_urlmap.rb", "urlmap"),
        ("test/plug/conn_test.exs", "conn"),
        ("lib/router.test.js", "router"),
        ("src/button.spec.ts", "button"),
        ("test/deploy.bats", "deploy"),
        ("src/components/__tests__/Button.tsx", "Button"),
        ("test/deploy_test.bats", "deploy"),
        // Named for nothing but being tests, in a folder named for what they test.
        ("tests/Hakyll/Core/Store/Tests.hs", "Store"),
        ("src/fs/tests.rs", "fs"),
    ] {
        assert_eq!(tested_stem(test), Some(subject), "{test}");
    }
    for fixture in [
        "conftest.py",
        "tests/tests.rs",
        "crates/matcher/tests/tests.rs",
        "Tests.hs",
        "spec/spec_helper.rb",
        "test/test_helper.rb",
        "test/support/helpers.ex",
        "src/Latest.java",
        "docs/test_plan.md",
        "test_.py",
        "test/helpers.js",
    ] {
        assert_eq!(tested_stem(fixture), None, "{fixture}");
    }
}

#[test]
fn a_program_without_an_extension_is_code_by_its_interpreter() {
    let bash = "#!/usr/bin/env bash\nset -e\nrun() { :; }\n";
    assert_eq!(
        classify("libexec/bats-core/bats-exec-test", Some(bash)),
        FileRole::Source
    );
    assert_eq!(
        classify("bin/tool", Some("#!/usr/bin/python3\nimport sys\n")),
        FileRole::Source
    );
    // An interpreter Patina does not read, no interpreter, or a test folder: as before.
    assert_eq!(
        classify("bin/tool", Some("#!/usr/bin/perl\nuse strict;\n")),
        FileRole::Other
    );
    assert_eq!(classify("bin/tool", Some("plain words\n")), FileRole::Other);
    assert_eq!(classify("test/bin/helper", Some(bash)), FileRole::Test);
    // Build tools' launchers are the tool's, not the project's.
    for launcher in ["gradlew", "projects/gradlew", "mvnw", "mill"] {
        assert_eq!(
            classify(launcher, Some("#!/bin/sh\n")),
            FileRole::Generated,
            "{launcher}"
        );
    }
    assert_eq!(classify("LICENSE", None), FileRole::Docs);
}

#[test]
fn shell_names_tests_by_folder_and_bats_not_by_a_test_prefix() {
    // bats-core's library of the functions tests call, sourced by its runner.
    assert_eq!(role("lib/bats-core/test_functions.bash"), FileRole::Source);
    assert_eq!(role("test/helpers.bash"), FileRole::Test);
    assert_eq!(role("scripts/install_test.sh"), FileRole::Test);
    assert_eq!(role("test/run.bats"), FileRole::Test);
    assert_eq!(role("src/test_config.py"), FileRole::Test);
}

#[test]
fn test_data_is_told_from_tests_by_its_folder() {
    for p in [
        "test/fixtures/bats/skipped.bats",
        "internal/testdata/input.go",
        "src/__fixtures__/app.js",
        "tests/Fixtures/Sample.php",
    ] {
        assert!(is_test_data(p), "{p}");
    }
    for p in [
        "test/run.bats",
        "fixtures.py",
        "src/fixtures_test.go",
        "testing/python/fixtures.py",
    ] {
        assert!(!is_test_data(p), "{p}");
    }
}

#[test]
fn a_main_source_set_is_the_program_whatever_its_packages_are_called() {
    for p in [
        "projects/core/koin-test/src/jvmMain/kotlin/org/koin/test/verify/Verification.kt",
        "koin-test/src/commonMain/kotlin/org/koin/test/mock/Declare.kt",
        "spring-test/src/main/java/org/springframework/test/web/MockMvc.java",
    ] {
        assert_eq!(role(p), FileRole::Source, "{p}");
    }
    for p in [
        "koin-test/src/jvmTest/kotlin/org/koin/test/VerifyTest.kt",
        "core/src/test/java/org/acme/InvoiceTest.java",
        "tests/fixtures/app/src/main/java/App.java",
    ] {
        assert_eq!(role(p), FileRole::Test, "{p}");
    }
}

#[test]
fn release_notes_are_told_from_code_of_the_same_name() {
    for p in [
        "CHANGELOG.md",
        "History.md",
        "CHANGES.rst",
        "NEWS",
        "pkgs/shelf/CHANGELOG.md",
        "docs/changelog.md",
        "changelog/1234.bugfix.rst",
        "newsfragments/99.feature.md",
        "RELEASE-NOTES.txt",
    ] {
        assert!(is_changelog(p), "{p}");
    }
    for p in [
        "src/history.rs",
        "lib/Hakyll/Core/History.hs",
        "changelog/generate.py",
        "docs/changelog-format.md",
        "README.md",
        "doc/news/index.html",
    ] {
        assert!(!is_changelog(p), "{p}");
    }
}

#[test]
fn pages_a_documentation_generator_wrote_are_generated() {
    let jazzy = "<!DOCTYPE html>\n<html lang=\"en\">\n  <head>\n    <title>Session Class Reference</title>\n    <link rel=\"stylesheet\" type=\"text/css\" href=\"../css/jazzy.css\" />\n";
    let rustdoc = "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"generator\" content=\"rustdoc\">";
    let javadoc = "<!DOCTYPE HTML>\n<!-- Generated by javadoc (17) -->\n<html lang=\"en\">";
    for head in [jazzy, rustdoc, javadoc] {
        assert_eq!(
            classify("docs/Classes/Session.html", Some(head)),
            FileRole::Generated,
            "{head}"
        );
    }
    // A template whose footer credits the site generator is the project's own page.
    let template = "<html>\n<body>\n$body$\n<footer>Site proudly generated by <a href=\"x\">hakyll</a>.</footer>";
    assert_ne!(
        classify("web/templates/default.html", Some(template)),
        FileRole::Generated
    );
    // The markers count in pages only.
    assert_ne!(
        classify(
            "src/gen.rs",
            Some("// meta name=\"generator\" is written below")
        ),
        FileRole::Generated
    );
}

#[test]
fn a_static_site_page_with_front_matter_is_prose() {
    let post = "---\ntitle: 'Pt. 3: Generating RSS and Atom XML Feeds'\nauthor: Robert\n---\n<p>In this post…</p>\n";
    assert_eq!(
        classify("web/tutorials/feeds.html", Some(post)),
        FileRole::Docs
    );
    // A template or an application's page has none.
    let template = "<h1>Tutorial: $title$</h1>\n\n$body$\n";
    assert_eq!(
        classify("web/templates/tutorial.html", Some(template)),
        FileRole::Source
    );
    assert_eq!(
        classify("templates/index.html", Some("---\n<hr>\n")),
        FileRole::Source
    );
}
