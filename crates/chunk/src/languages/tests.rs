use super::*;
use std::path::Path;

#[test]
fn detects_languages_from_paths() {
    let cases = [
        ("src/main.rs", Language::Rust),
        ("a/b.pyi", Language::Python),
        ("BUILD.bazel", Language::Python),
        ("web/app.mjs", Language::JavaScript),
        ("web/App.jsx", Language::JavaScript),
        ("web/api.cts", Language::TypeScript),
        ("web/App.tsx", Language::Tsx),
        ("cmd/main.go", Language::Go),
        ("Main.java", Language::Java),
        ("lib/x.h", Language::C),
        ("lib/x.hxx", Language::Cpp),
        ("lib/shop/cart.rb", Language::Ruby),
        ("Rakefile", Language::Ruby),
        ("shop.gemspec", Language::Ruby),
        ("src/Billing/Invoice.php", Language::Php),
        ("src/Acme/Invoice.cs", Language::CSharp),
        ("src/main/kotlin/Invoice.kt", Language::Kotlin),
        ("build.gradle.kts", Language::Kotlin),
        ("lua/shop/init.lua", Language::Lua),
        ("scripts/deploy.sh", Language::Bash),
        ("test/deploy.bats", Language::Bash),
        ("home/.bashrc", Language::Bash),
        ("src/main/scala/Invoice.scala", Language::Scala),
        ("build.sbt", Language::Scala),
        ("lib/acme/invoice.ex", Language::Elixir),
        ("test/acme/invoice_test.exs", Language::Elixir),
        ("Sources/Shop/Cart.swift", Language::Swift),
        ("src/Acme/Billing.hs", Language::Haskell),
        ("src/main.zig", Language::Zig),
        ("build.zig.zon", Language::Zig),
        ("lib/src/cart.dart", Language::Dart),
        ("proto/acme/billing.proto", Language::Protobuf),
        ("infra/main.tf", Language::Hcl),
        ("prod.tfvars", Language::Hcl),
        ("Sources/Ledger.m", Language::ObjC),
        ("Sources/Bridge.mm", Language::ObjC),
        ("R/invoice.R", Language::R),
        ("tests/testthat/test-invoice.r", Language::R),
        ("src/invoice.erl", Language::Erlang),
        ("include/records.hrl", Language::Erlang),
        ("db/migrations/0001_invoices.sql", Language::Sql),
        ("src/Billing.jl", Language::Julia),
        ("lib/invoice.ml", Language::OCaml),
        ("lib/invoice.mli", Language::OCamlInterface),
        ("README.md", Language::Markdown),
        ("docs/Guide.MARKDOWN", Language::Markdown),
        ("Makefile", Language::Text),
        (".gitignore", Language::Text),
        ("notes.txt", Language::Text),
    ];
    for (path, expected) in cases {
        assert_eq!(Language::from_path(Path::new(path)), expected, "{path}");
    }
}

#[test]
fn every_grammar_loads() {
    let code = Language::ALL
        .into_iter()
        .filter(|l| !matches!(l, Language::Markdown | Language::Text));
    for language in code {
        let syntax = syntax(language).expect("code language has a syntax table");
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&syntax.grammar())
            .unwrap_or_else(|err| panic!("{}: {err}", language.name()));
    }
    assert!(syntax(Language::Markdown).is_none());
    assert!(syntax(Language::Text).is_none());
}

#[test]
fn names_match_serialized_form() {
    for language in [Language::JavaScript, Language::Tsx, Language::Cpp] {
        let json = serde_json::to_string(&language).unwrap();
        assert_eq!(json, format!("\"{}\"", language.name()));
    }
}

#[test]
fn an_ocaml_doc_comment_below_a_definition_is_its_unless_it_leads_the_next() {
    let lines = [
        "val use : 'a t -> unit",               // 0
        "  (** [use p] takes one (* nested *)", // 1
        "      element. *)",                    // 2
        "",                                     // 3
        "val clear : 'a t -> unit",             // 4
        "(** Between two: the next's. *)",      // 5
        "val size : 'a t -> int",               // 6
        "(** Code after it. *) let x = 1",      // 7
        "(* A plain comment. *)",               // 8
    ];
    // Nested comments close with the outer one.
    assert_eq!(ocaml_documented_below(&lines, 0, Some(4)), Some(2));
    // Touching the next definition, it documents that one.
    assert_eq!(ocaml_documented_below(&lines, 4, Some(5)), None);
    // Code sharing its last line, or a comment that is no doc comment: nothing.
    assert_eq!(ocaml_documented_below(&lines, 6, None), None);
    assert_eq!(ocaml_documented_below(&lines, 7, None), None);
    // Past the end of the file.
    assert_eq!(ocaml_documented_below(&lines, 8, None), None);
}
