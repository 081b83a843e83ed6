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
        .map(|r| (r.name.to_string(), r.line))
        .collect()
}

fn has_call(f: &FileFacts, name: &str, line: u32) -> bool {
    f.refs
        .iter()
        .any(|r| r.call && &*r.name == name && r.line == line)
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
    let join = f.refs.iter().find(|r| &*r.name == "join").unwrap();
    assert_eq!(join.qualifier.as_deref(), Some("os.path"));
    // Definition names are not references of themselves.
    assert!(!f.refs.iter().any(|r| &*r.name == "run" && r.line == 8));
    // Imports are not references either.
    assert!(!f.refs.iter().any(|r| &*r.name == "helper"));
}

#[test]
fn ruby_calls_requires_and_superclasses() {
    let f = extract_facts(Language::Ruby, &sample("shop.rb"));
    assert!(has_import(&f, "json", None, None), "{:?}", f.imports);
    assert!(
        has_import(&f, "./models/cart", None, None),
        "{:?}",
        f.imports
    );
    assert!(
        has_import(&f, "../lib/pricing.rb", None, None),
        "{:?}",
        f.imports
    );
    assert!(has_relation(&f, "Checkout", "Service"), "{:?}", f.relations);
    assert!(has_call(&f, "lookup", 7), "{:?}", calls(&f));
    assert!(has_call(&f, "apply_discount", 8), "{:?}", calls(&f));
    let lookup = f.refs.iter().find(|r| &*r.name == "lookup").unwrap();
    assert_eq!(lookup.qualifier.as_deref(), Some("Pricing"));
    // `require` is an import, not a call; a definition's name is not a reference.
    assert!(
        !f.refs
            .iter()
            .any(|r| &*r.name == "require" || &*r.name == "total")
    );
}

#[test]
fn php_calls_uses_and_parents() {
    let f = extract_facts(Language::Php, &sample("billing.php"));
    assert!(
        has_import(&f, "App\\Models", Some("Customer"), None),
        "{:?}",
        f.imports
    );
    assert!(has_import(
        &f,
        "Psr\\Log",
        Some("LoggerInterface"),
        Some("Logger")
    ));
    assert!(
        has_import(&f, "App\\Support", Some("Money"), None),
        "{:?}",
        f.imports
    );
    assert!(has_import(&f, "App\\Support", Some("Clock"), Some("Time")));
    assert!(has_import(&f, "App\\Support", Some("format_amount"), None));
    for parent in ["Document", "Billable", "Countable", "Logs"] {
        assert!(
            has_relation(&f, "Invoice", parent),
            "{parent}: {:?}",
            f.relations
        );
    }
    assert!(has_call(&f, "sum", 15), "{:?}", calls(&f));
    assert!(has_call(&f, "log", 16), "{:?}", calls(&f));
    assert!(has_call(&f, "format_amount", 16), "{:?}", calls(&f));
    assert!(has_call(&f, "of", 17), "{:?}", calls(&f));
    assert!(has_call(&f, "Currency", 17), "{:?}", calls(&f));
    let of = f.refs.iter().find(|r| &*r.name == "of").unwrap();
    assert_eq!(of.qualifier.as_deref(), Some("Money"));
    let sum = f.refs.iter().find(|r| &*r.name == "sum").unwrap();
    assert_eq!(sum.qualifier.as_deref(), Some("lines"));
    // Types named in signatures are references; variables, namespaces and definitions are not.
    assert!(
        f.refs
            .iter()
            .any(|r| &*r.name == "Customer" && r.line == 13)
    );
    assert!(
        !f.refs
            .iter()
            .any(|r| ["sum", "customer", "App", "Billing", "total"].contains(&&*r.name) && !r.call),
        "{:?}",
        f.refs
    );
}

#[test]
fn csharp_calls_usings_and_bases() {
    let f = extract_facts(Language::CSharp, &sample("Billing.cs"));
    assert!(has_import(&f, "System", None, None), "{:?}", f.imports);
    assert!(
        has_import(&f, "Acme.Support", None, None),
        "{:?}",
        f.imports
    );
    assert!(has_import(
        &f,
        "System.Text.Json.JsonSerializer",
        None,
        Some("Json")
    ));
    assert!(
        has_import(&f, "System.Math", Some("*"), None),
        "{:?}",
        f.imports
    );
    for parent in ["Document", "IBillable", "IComparable"] {
        assert!(
            has_relation(&f, "Invoice", parent),
            "{parent}: {:?}",
            f.relations
        );
    }
    assert!(has_relation(&f, "Line", "Entry"), "{:?}", f.relations);
    assert!(has_call(&f, "Sum", 12), "{:?}", calls(&f));
    assert!(has_call(&f, "Log", 13), "{:?}", calls(&f));
    assert!(has_call(&f, "Serialize", 13), "{:?}", calls(&f));
    assert!(has_call(&f, "Round", 14), "{:?}", calls(&f));
    assert!(has_call(&f, "Of", 14), "{:?}", calls(&f));
    assert!(has_call(&f, "Currency", 14), "{:?}", calls(&f));
    let of = f.refs.iter().find(|r| &*r.name == "Of").unwrap();
    assert_eq!(of.qualifier.as_deref(), Some("Money"));
    // Types in signatures are references; namespaces, usings and definitions are not.
    assert!(
        f.refs
            .iter()
            .any(|r| &*r.name == "Money" && r.line == 10 && !r.call)
    );
    assert!(
        !f.refs
            .iter()
            .any(|r| ["Acme", "Billing", "Support", "Total", "Math"].contains(&&*r.name)),
        "{:?}",
        f.refs
    );
}

#[test]
fn kotlin_calls_imports_and_supertypes() {
    let f = extract_facts(Language::Kotlin, &sample("Billing.kt"));
    assert!(
        has_import(&f, "com.acme.support", Some("Money"), None),
        "{:?}",
        f.imports
    );
    assert!(has_import(
        &f,
        "com.acme.support",
        Some("Clock"),
        Some("Time")
    ));
    assert!(
        has_import(&f, "kotlinx.coroutines", Some("*"), None),
        "{:?}",
        f.imports
    );
    for parent in ["Document", "Billable", "Comparable"] {
        assert!(
            has_relation(&f, "Invoice", parent),
            "{parent}: {:?}",
            f.relations
        );
    }
    assert!(
        has_relation(&f, "Registry", "Repository"),
        "{:?}",
        f.relations
    );
    assert!(has_call(&f, "sum", 9), "{:?}", calls(&f));
    assert!(has_call(&f, "log", 10), "{:?}", calls(&f));
    assert!(has_call(&f, "now", 10), "{:?}", calls(&f));
    assert!(has_call(&f, "Currency", 11), "{:?}", calls(&f));
    assert!(has_call(&f, "convert", 11), "{:?}", calls(&f));
    let sum = f.refs.iter().find(|r| &*r.name == "sum" && r.call).unwrap();
    assert_eq!(sum.qualifier.as_deref(), Some("Money"));
    // Packages, imports and definitions are not references.
    assert!(
        !f.refs
            .iter()
            .any(|r| ["acme", "billing", "support", "total", "coroutines"].contains(&&*r.name)),
        "{:?}",
        f.refs
    );
}

#[test]
fn lua_calls_and_requires() {
    let f = extract_facts(
        Language::Lua,
        "local json = require(\"json\")\nrequire \"shop.setup\"\n\nfunction Cart:add(item)\n  table.insert(self.items, json.encode(item))\n  self:touch()\n  log(item)\nend\n",
    );
    assert!(
        has_import(&f, "json", None, Some("json")),
        "{:?}",
        f.imports
    );
    assert!(has_import(&f, "shop.setup", None, None), "{:?}", f.imports);
    assert_eq!(f.imports.len(), 2, "{:?}", f.imports);
    assert!(has_call(&f, "insert", 5), "{:?}", calls(&f));
    assert!(has_call(&f, "encode", 5), "{:?}", calls(&f));
    assert!(has_call(&f, "touch", 6), "{:?}", calls(&f));
    assert!(has_call(&f, "log", 7), "{:?}", calls(&f));
    let insert = f.refs.iter().find(|r| &*r.name == "insert").unwrap();
    assert_eq!(insert.qualifier.as_deref(), Some("table"));
    assert!(
        !f.refs
            .iter()
            .any(|r| ["require", "add", "Cart"].contains(&&*r.name)),
        "{:?}",
        f.refs
    );
}

#[test]
fn shell_commands_and_sources() {
    let f = extract_facts(
        Language::Bash,
        &std::fs::read_to_string(format!("{}/testdata/bash.sh", env!("CARGO_MANIFEST_DIR")))
            .unwrap(),
    );
    assert!(
        has_import(&f, "./lib/log.sh", None, None),
        "{:?}",
        f.imports
    );
    assert!(
        has_import(&f, "config/defaults.sh", None, None),
        "{:?}",
        f.imports
    );
    assert_eq!(f.imports.len(), 2, "{:?}", f.imports);
    assert!(has_call(&f, "log_info", 14), "{:?}", calls(&f));
    assert!(has_call(&f, "build", 18), "{:?}", calls(&f));
    assert!(has_call(&f, "usage", 23), "{:?}", calls(&f));
    assert!(has_call(&f, "deploy", 24), "{:?}", calls(&f));
    assert!(has_call(&f, "main", 27), "{:?}", calls(&f));
    // A variable-built path is not an import; a definition is not a call.
    let f = extract_facts(Language::Bash, "source \"$DIR/x.sh\"\nf() { :; }\n");
    assert!(f.imports.is_empty(), "{:?}", f.imports);
    assert!(!f.refs.iter().any(|r| &*r.name == "f"), "{:?}", f.refs);
}

#[test]
fn scala_calls_imports_and_parents() {
    let f = extract_facts(
        Language::Scala,
        "package com.acme.billing\n\nimport com.acme.support.{Money, Clock => Time, Hidden => _}\nimport scala.collection.mutable._\nimport com.acme.tax.Rates\n\nclass Invoice(lines: List[Money]) extends Document with Billable with Ordered[Invoice] {\n  def total: Money = Money.sum(lines)\n  def log(): Unit = println(Time.now())\n  def copy(): Invoice = new Invoice(Nil)\n}\n",
    );
    assert!(
        has_import(&f, "com.acme.support", Some("Money"), None),
        "{:?}",
        f.imports
    );
    assert!(has_import(
        &f,
        "com.acme.support",
        Some("Clock"),
        Some("Time")
    ));
    assert!(!has_import(
        &f,
        "com.acme.support",
        Some("Hidden"),
        Some("_")
    ));
    assert!(
        has_import(&f, "scala.collection.mutable", Some("*"), None),
        "{:?}",
        f.imports
    );
    assert!(
        has_import(&f, "com.acme.tax", Some("Rates"), None),
        "{:?}",
        f.imports
    );
    for parent in ["Document", "Billable", "Ordered"] {
        assert!(
            has_relation(&f, "Invoice", parent),
            "{parent}: {:?}",
            f.relations
        );
    }
    assert!(has_call(&f, "sum", 8), "{:?}", calls(&f));
    assert!(has_call(&f, "println", 9), "{:?}", calls(&f));
    assert!(has_call(&f, "now", 9), "{:?}", calls(&f));
    assert!(has_call(&f, "Invoice", 10), "{:?}", calls(&f));
    let sum = f.refs.iter().find(|r| &*r.name == "sum").unwrap();
    assert_eq!(sum.qualifier.as_deref(), Some("Money"));
    assert!(
        !f.refs
            .iter()
            .any(|r| ["acme", "billing", "mutable", "total"].contains(&&*r.name)),
        "{:?}",
        f.refs
    );
}

#[test]
fn elixir_calls_aliases_and_impls() {
    let f = extract_facts(
        Language::Elixir,
        &std::fs::read_to_string(format!("{}/testdata/elixir.ex", env!("CARGO_MANIFEST_DIR")))
            .unwrap(),
    );
    assert!(
        has_import(&f, "Acme.Support", Some("Money"), None),
        "{:?}",
        f.imports
    );
    assert!(
        has_import(&f, "Acme.Support", Some("Clock"), None),
        "{:?}",
        f.imports
    );
    assert!(
        has_import(&f, "Acme.Format", Some("*"), None),
        "{:?}",
        f.imports
    );
    assert!(has_import(&f, "Logger", None, None), "{:?}", f.imports);
    assert!(has_relation(&f, "Invoice", "Billable"), "{:?}", f.relations);
    assert!(has_call(&f, "sum", 15), "{:?}", calls(&f));
    assert!(has_call(&f, "info", 21), "{:?}", calls(&f));
    assert!(has_call(&f, "cents", 21), "{:?}", calls(&f));
    assert!(has_call(&f, "total", 21), "{:?}", calls(&f));
    assert!(has_call(&f, "total", 34), "{:?}", calls(&f));
    let sum = f.refs.iter().find(|r| &*r.name == "sum").unwrap();
    assert_eq!(sum.qualifier.as_deref(), Some("Money"));
    // Definitions' heads, special forms and the definers are no calls.
    assert!(!has_call(&f, "total", 14), "{:?}", calls(&f));
    assert!(
        !f.refs
            .iter()
            .any(|r| ["def", "defmodule", "quote", "alias", "log"].contains(&&*r.name)),
        "{:?}",
        f.refs
    );
    let f = extract_facts(Language::Elixir, "alias Acme.Support.Money, as: M\n");
    assert!(
        has_import(&f, "Acme.Support", Some("Money"), Some("M")),
        "{:?}",
        f.imports
    );
}

#[test]
fn swift_calls_imports_and_inheritance() {
    let f = extract_facts(Language::Swift, &sample("Billing.swift"));
    assert!(
        has_import(&f, "Foundation", Some("*"), None),
        "{:?}",
        f.imports
    );
    assert!(
        has_import(&f, "Support", Some("*"), None),
        "{:?}",
        f.imports
    );
    assert!(
        has_import(&f, "UIKit", Some("UIView"), None),
        "{:?}",
        f.imports
    );
    for parent in ["Document", "Billable", "CustomStringConvertible"] {
        assert!(
            has_relation(&f, "Invoice", parent),
            "{parent}: {:?}",
            f.relations
        );
    }
    assert!(has_call(&f, "sum", 7), "{:?}", calls(&f));
    assert!(has_call(&f, "log", 8), "{:?}", calls(&f));
    assert!(has_call(&f, "now", 8), "{:?}", calls(&f));
    assert!(has_call(&f, "Currency", 9), "{:?}", calls(&f));
    assert!(has_call(&f, "convert", 9), "{:?}", calls(&f));
    assert!(has_call(&f, "format", 14), "{:?}", calls(&f));
    let sum = f.refs.iter().find(|r| &*r.name == "sum" && r.call).unwrap();
    assert_eq!(sum.qualifier.as_deref(), Some("Money"));
    // Imports and definitions are not references.
    assert!(
        !f.refs
            .iter()
            .any(|r| ["Foundation", "Support", "UIKit", "total"].contains(&&*r.name)),
        "{:?}",
        f.refs
    );
}

#[test]
fn haskell_applications_imports_and_instances() {
    let f = extract_facts(Language::Haskell, &sample("Billing.hs"));
    assert!(
        has_import(&f, "Data.List", Some("foldl'"), None),
        "{:?}",
        f.imports
    );
    assert!(
        has_import(&f, "Data.Map", None, Some("Map")),
        "{:?}",
        f.imports
    );
    assert!(has_import(&f, "Acme.Support.Money", Some("sumMoney"), None));
    assert!(has_import(&f, "Acme.Support.Money", Some("Money"), None));
    assert!(has_import(&f, "Acme.Support.Clock", Some("*"), None));
    assert!(has_relation(&f, "Invoice", "Billable"), "{:?}", f.relations);
    assert!(has_call(&f, "total", 9), "{:?}", calls(&f));
    assert!(has_call(&f, "sumMoney", 12), "{:?}", calls(&f));
    assert!(has_call(&f, "lines", 12), "{:?}", calls(&f));
    assert!(has_call(&f, "lookup", 15), "{:?}", calls(&f));
    let lookup = f.refs.iter().find(|r| &*r.name == "lookup").unwrap();
    assert_eq!(lookup.qualifier.as_deref(), Some("Map"));
    // Type names in signatures are references; definitions, imports and exports are not.
    assert!(f.refs.iter().any(|r| &*r.name == "Money" && r.line == 11));
    assert!(
        !f.refs
            .iter()
            .any(|r| ["Acme", "foldl'", "bill"].contains(&&*r.name)
                || &*r.name == "total" && r.line != 9
                || &*r.name == "lookupRate"),
        "{:?}",
        f.refs
    );
}

#[test]
fn zig_calls_and_imports() {
    let f = extract_facts(Language::Zig, &sample("billing.zig"));
    assert!(has_import(&f, "std", None, Some("std")), "{:?}", f.imports);
    assert!(
        has_import(&f, "support/money.zig", None, Some("money")),
        "{:?}",
        f.imports
    );
    assert!(has_call(&f, "sum", 7), "{:?}", calls(&f));
    assert!(has_call(&f, "print", 13), "{:?}", calls(&f));
    assert!(has_call(&f, "total", 13), "{:?}", calls(&f));
    let sum = f.refs.iter().find(|r| &*r.name == "sum" && r.call).unwrap();
    assert_eq!(sum.qualifier.as_deref(), Some("money"));
    let print = f
        .refs
        .iter()
        .find(|r| &*r.name == "print" && r.call)
        .unwrap();
    assert_eq!(print.qualifier.as_deref(), Some("std.debug"));
    // A constant's own name is no reference; a use of it is.
    assert!(!f.refs.iter().any(|r| &*r.name == "Invoice" && r.line == 4));
    assert!(f.refs.iter().any(|r| &*r.name == "Invoice" && r.line == 12));
}

#[test]
fn dart_calls_imports_and_parents() {
    let f = extract_facts(Language::Dart, &sample("billing.dart"));
    assert!(
        has_import(&f, "package:acme/support/money.dart", Some("*"), None),
        "{:?}",
        f.imports
    );
    assert!(
        has_import(&f, "dart:math", None, Some("math")),
        "{:?}",
        f.imports
    );
    assert!(
        has_import(&f, "../util.dart", Some("helper"), None),
        "{:?}",
        f.imports
    );
    for parent in ["Document", "Logs", "Billable"] {
        assert!(
            has_relation(&f, "Invoice", parent),
            "{parent}: {:?}",
            f.relations
        );
    }
    assert!(has_call(&f, "sum", 9), "{:?}", calls(&f));
    assert!(has_call(&f, "helper", 10), "{:?}", calls(&f));
    assert!(has_call(&f, "max", 10), "{:?}", calls(&f));
    assert!(has_call(&f, "Invoice", 15), "{:?}", calls(&f));
    let sum = f.refs.iter().find(|r| &*r.name == "sum" && r.call).unwrap();
    assert_eq!(sum.qualifier.as_deref(), Some("Money"));
    // Imports and definitions are not references.
    assert!(
        !f.refs
            .iter()
            .any(|r| &*r.name == "total" && !r.call || r.name.contains("dart")),
        "{:?}",
        f.refs
    );
}

#[test]
fn protobuf_types_and_imports() {
    let f = extract_facts(Language::Protobuf, PROTO);
    assert!(
        has_import(&f, "acme/support/money.proto", Some("*"), None),
        "{:?}",
        f.imports
    );
    let money = f.refs.iter().find(|r| &*r.name == "Money").unwrap();
    assert_eq!((money.line, money.call), (7, false));
    let req = f
        .refs
        .iter()
        .find(|r| &*r.name == "GetInvoiceRequest")
        .unwrap();
    assert_eq!(req.line, 12);
    // What an rpc returns is a reference too.
    assert!(f.refs.iter().any(|r| &*r.name == "Invoice" && r.line == 12));
    // A package-qualified type is the type's name.
    let ts = f.refs.iter().find(|r| &*r.name == "Timestamp").unwrap();
    assert_eq!((ts.line, ts.qualifier.as_deref()), (8, None));
    // Names of definitions and fields, packages and options are no references.
    assert!(
        !f.refs.iter().any(|r| [
            "total",
            "acme",
            "billing",
            "Billing",
            "GetInvoice",
            "java_package"
        ]
        .contains(&&*r.name)
            || &*r.name == "Invoice" && r.line == 6
            || r.call),
        "{:?}",
        f.refs
    );
}

const PROTO: &str = "syntax = \"proto3\";
package acme.billing;
import \"acme/support/money.proto\";
option java_package = \"com.acme\";

message Invoice {
  Money total = 1;
  google.protobuf.Timestamp issued = 2;
}

service Billing {
  rpc GetInvoice(GetInvoiceRequest) returns (Invoice);
}
";

#[test]
fn hcl_addresses_and_function_calls() {
    let f = extract_facts(
        Language::Hcl,
        "resource \"aws_s3_bucket\" \"logs\" {\n  bucket = var.bucket_name\n  policy = file(\"p.json\")\n  ami    = data.aws_ami.ubuntu.id\n  vpc    = module.network.vpc_id\n  tags   = local.tags\n}\n\noutput \"arn\" {\n  value = aws_s3_bucket.logs.arn\n}\n",
    );
    let addressed = |name: &str, q: &str, line: u32| {
        f.refs.iter().any(|r| {
            &*r.name == name && r.qualifier.as_deref() == Some(q) && r.line == line && !r.call
        })
    };
    assert!(addressed("bucket_name", "var", 2), "{:?}", f.refs);
    assert!(addressed("ubuntu", "aws_ami", 4), "{:?}", f.refs);
    assert!(addressed("network", "module", 5), "{:?}", f.refs);
    assert!(addressed("logs", "aws_s3_bucket", 10), "{:?}", f.refs);
    assert!(has_call(&f, "file", 3), "{:?}", calls(&f));
    // Block types, labels, attribute names and locals are no references.
    assert!(
        !f.refs.iter().any(|r| [
            "resource", "bucket", "policy", "tags", "local", "value", "arn", "vpc_id", "id"
        ]
        .contains(&&*r.name)),
        "{:?}",
        f.refs
    );
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
    let open = f.refs.iter().find(|r| &*r.name == "open").unwrap();
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
    let parse = f.refs.iter().find(|r| &*r.name == "Parse").unwrap();
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

/// The imports of `f` marked as re-exports: (module, name, alias).
fn reexports(f: &FileFacts) -> Vec<(String, Option<String>, Option<String>)> {
    f.imports
        .iter()
        .filter(|i| i.reexport)
        .map(|i| (i.module.clone(), i.name.clone(), i.alias.clone()))
        .collect()
}

fn rx(m: &str, n: Option<&str>, a: Option<&str>) -> (String, Option<String>, Option<String>) {
    (m.into(), n.map(Into::into), a.map(Into::into))
}

#[test]
fn rust_pub_use_is_a_reexport_and_use_is_not() {
    let f = extract_facts(
        Language::Rust,
        "use crate::store::Store;\npub use parser::Parser;\npub use crate::a::{B, c::D as E};\n\
         pub(crate) use self::walk::*;\nmod parser;\n",
    );
    assert_eq!(
        reexports(&f),
        vec![
            rx("parser", Some("Parser"), None),
            rx("crate::a", Some("B"), None),
            rx("crate::a::c", Some("D"), Some("E")),
            rx("self::walk", Some("*"), None),
        ],
        "{:?}",
        f.imports
    );
    assert!(has_import(&f, "crate::store", Some("Store"), None));
    assert!(
        !f.imports
            .iter()
            .any(|i| i.name.as_deref() == Some("Store") && i.reexport)
    );
}

#[test]
fn javascript_export_from_and_names_exported_again_are_reexports() {
    let f = extract_facts(
        Language::JavaScript,
        "export { Parser } from './parser';\nexport { Lexer as Scanner, tokenize } from './lexer.js';\n\
         export * from './util';\nexport * as shapes from './shapes';\n\
         import { Store } from './store';\nimport { helper } from './helper';\nexport { Store };\n",
    );
    assert_eq!(
        reexports(&f),
        vec![
            rx("./parser", Some("Parser"), None),
            rx("./lexer.js", Some("Lexer"), Some("Scanner")),
            rx("./lexer.js", Some("tokenize"), None),
            rx("./util", Some("*"), None),
            rx("./shapes", None, Some("shapes")),
            rx("./store", Some("Store"), None),
        ],
        "{:?}",
        f.imports
    );
    assert!(has_import(&f, "./helper", Some("helper"), None));
    // The names of an `export … from` are not references of the file.
    assert!(!f.refs.iter().any(|r| &*r.name == "Parser"), "{:?}", f.refs);
    let t = extract_facts(
        Language::TypeScript,
        "export { Shape } from './base';\nexport type { Named } from './named';\n",
    );
    assert!(
        reexports(&t).contains(&rx("./base", Some("Shape"), None)),
        "{:?}",
        t.imports
    );
    assert!(
        reexports(&t).contains(&rx("./named", Some("Named"), None)),
        "{:?}",
        t.imports
    );
}

#[test]
fn commonjs_module_exports_of_required_names_are_reexports() {
    let f = extract_facts(
        Language::JavaScript,
        "const { Parser } = require('./parser');\nconst Lexer = require('./lexer');\n\
         const { unused } = require('./unused');\nfunction own() {}\n\
         module.exports = { Parser, Scanner: Lexer, own };\n",
    );
    assert_eq!(
        reexports(&f),
        vec![
            rx("./parser", Some("Parser"), None),
            rx("./lexer", None, Some("Lexer")),
        ],
        "{:?}",
        f.imports
    );
    let all = extract_facts(
        Language::JavaScript,
        "module.exports = require('./impl');\n",
    );
    assert_eq!(reexports(&all), vec![rx("./impl", Some("*"), None)]);
    let one = extract_facts(
        Language::JavaScript,
        "const { Parser } = require('./parser');\nexports.Parser = Parser;\n",
    );
    assert_eq!(reexports(&one), vec![rx("./parser", Some("Parser"), None)]);
}

#[test]
fn python_all_and_a_package_init_make_reexports() {
    let text = "from __future__ import annotations\nimport os\nfrom .parser import Parser\n\
                from .lexer import Lexer as Scanner\nfrom pkg.util import helper\n";
    let mut plain = extract_facts(Language::Python, text);
    assert!(reexports(&plain).is_empty(), "{:?}", plain.imports);
    // The same text as a module: nothing changes.
    mark_package_reexports("pkg/api.py", &mut plain);
    assert!(reexports(&plain).is_empty());
    // As the package's __init__.py: every name imported from a module is public.
    let mut init = extract_facts(Language::Python, text);
    mark_package_reexports("src/pkg/__init__.py", &mut init);
    assert_eq!(
        reexports(&init),
        vec![
            rx(".parser", Some("Parser"), None),
            rx(".lexer", Some("Lexer"), Some("Scanner")),
            rx("pkg.util", Some("helper"), None),
        ],
        "{:?}",
        init.imports
    );
    // `__all__` names what a module exports, wherever it is.
    let all = extract_facts(
        Language::Python,
        "from .parser import Parser\nfrom .lexer import Lexer\n__all__ = ['Parser', \"own\"]\n\
         __all__ += ('Lexer',)\n",
    );
    assert_eq!(
        reexports(&all),
        vec![
            rx(".parser", Some("Parser"), None),
            rx(".lexer", Some("Lexer"), None)
        ]
    );
}

#[test]
fn go_type_aliases_of_another_package_are_reexports() {
    let f = extract_facts(
        Language::Go,
        "package api\n\nimport \"example.com/m/search\"\n\ntype Searcher = search.Searcher\n\
         type Finder = search.Searcher\ntype Local = int\ntype Own struct{}\n",
    );
    assert_eq!(
        reexports(&f),
        vec![
            rx("search", Some("Searcher"), None),
            rx("search", Some("Searcher"), Some("Finder")),
        ],
        "{:?}",
        f.imports
    );
    assert!(has_import(&f, "example.com/m/search", None, None));
}

#[test]
fn other_languages_have_no_reexports() {
    for (language, text) in [
        (Language::Java, "import com.acme.util.Prices;\nclass A {}\n"),
        (Language::C, "#include \"util.h\"\n"),
        (Language::Cpp, "#include <vector>\nusing std::vector;\n"),
    ] {
        let f = extract_facts(language, text);
        assert!(reexports(&f).is_empty(), "{language:?}: {:?}", f.imports);
    }
}

#[test]
fn objc_message_sends_imports_and_protocols() {
    let f = extract_facts(Language::ObjC, include_str!("../../testdata/objc.m"));
    assert!(
        has_import(&f, "Foundation/Foundation.h", Some("*"), None),
        "{:?}",
        f.imports
    );
    assert!(
        has_import(&f, "Invoice.h", Some("*"), None),
        "{:?}",
        f.imports
    );
    assert!(has_import(&f, "UIKit", Some("*"), None), "{:?}", f.imports);
    for parent in ["NSObject", "Printable"] {
        assert!(
            has_relation(&f, "Ledger", parent),
            "{parent}: {:?}",
            f.relations
        );
    }
    assert!(
        has_relation(&f, "Printable", "NSObject"),
        "{:?}",
        f.relations
    );
    // A message send calls its selector's first keyword, through its receiver.
    assert!(has_call(&f, "addObject", 36), "{:?}", calls(&f));
    let paid = f.refs.iter().find(|r| &*r.name == "markPaid").unwrap();
    assert_eq!((paid.line, paid.call), (37, true));
    assert_eq!(paid.qualifier.as_deref(), Some("invoice"));
    assert!(has_call(&f, "stringWithFormat", 46), "{:?}", calls(&f));
    // C's calls inside a method are calls too.
    assert!(has_call(&f, "sum", 46), "{:?}", calls(&f));
    // Declared names (classes, categories, selectors, properties) and imports are no references.
    assert!(
        !f.refs.iter().any(|r| [
            "Foundation",
            "UIKit",
            "Totals",
            "paidWith",
            "sharedLedger",
            "name"
        ]
        .contains(&&*r.name)
            || &*r.name == "addInvoice"
            || &*r.name == "Ledger" && r.line == 16),
        "{:?}",
        f.refs
    );
}

#[test]
fn r_calls_packages_sources_and_class_parents() {
    let f = extract_facts(Language::R, include_str!("../../testdata/r.R"));
    assert!(
        has_import(&f, "jsonlite", Some("*"), None),
        "{:?}",
        f.imports
    );
    assert!(
        has_import(&f, "R/money.R", Some("*"), None),
        "{:?}",
        f.imports
    );
    assert!(has_relation(&f, "Ledger", "Book"), "{:?}", f.relations);
    assert!(has_relation(&f, "Invoice", "Document"), "{:?}", f.relations);
    assert!(has_call(&f, "sum", 9), "{:?}", calls(&f));
    assert!(has_call(&f, "shipping_fee", 9), "{:?}", calls(&f));
    assert!(has_call(&f, "standardGeneric", 28), "{:?}", calls(&f));
    // `R6::R6Class(…)` calls `R6Class` through the package.
    let r6 = f.refs.iter().find(|r| &*r.name == "R6Class").unwrap();
    assert_eq!(
        (r6.line, r6.call, r6.qualifier.as_deref()),
        (16, true, Some("R6"))
    );
    // The names assignments bind and the packages imported are no references.
    assert!(
        !f.refs
            .iter()
            .any(
                |r| ["invoice_total", "jsonlite", "R6", "MAX_LINES"].contains(&&*r.name)
                    || &*r.name == "shipping_fee" && r.line == 12
                    || &*r.name == "Ledger" && r.line == 16
            ),
        "{:?}",
        f.refs
    );
}

#[test]
fn erlang_calls_remote_calls_records_macros_and_attributes() {
    let f = extract_facts(Language::Erlang, include_str!("../../testdata/erlang.erl"));
    assert!(
        has_import(&f, "money", Some("add"), None),
        "{:?}",
        f.imports
    );
    assert!(
        has_import(&f, "records.hrl", Some("*"), None),
        "{:?}",
        f.imports
    );
    assert!(
        has_relation(&f, "invoice", "gen_server"),
        "{:?}",
        f.relations
    );
    assert!(has_call(&f, "add", 17), "{:?}", calls(&f));
    assert!(has_call(&f, "total", 17), "{:?}", calls(&f));
    // `ledger:record(…)` calls `record` through module `ledger`.
    let record = f.refs.iter().find(|r| &*r.name == "record").unwrap();
    assert_eq!(
        (record.line, record.call, record.qualifier.as_deref()),
        (20, true, Some("ledger"))
    );
    // A macro and a record are referred to, not called; so are the types of a `-spec`.
    let find = |name: &str, line: u32| f.refs.iter().find(|r| &*r.name == name && r.line == line);
    assert!(
        find("SHIPPING", 15).is_some_and(|r| !r.call),
        "{:?}",
        f.refs
    );
    assert!(find("line", 16).is_some_and(|r| !r.call), "{:?}", f.refs);
    assert!(find("integer", 13).is_some_and(|r| !r.call), "{:?}", f.refs);
    assert!(find("binary", 8).is_some_and(|r| !r.call), "{:?}", f.refs);
    // Atoms and variables are data; attributes name no references.
    assert!(
        !f.refs.iter().any(|r| [
            "invoice",
            "gen_server",
            "money",
            "ok",
            "paid",
            "Invoice",
            "Rest"
        ]
        .contains(&&*r.name)),
        "{:?}",
        f.refs
    );
}

#[test]
fn sql_tables_views_and_functions_named() {
    let f = extract_facts(Language::Sql, include_str!("../../testdata/sql.sql"));
    let find = |name: &str, line: u32| f.refs.iter().find(|r| &*r.name == name && r.line == line);
    // A foreign key, a view's FROM and JOIN, a function's body, ALTER and INSERT name tables.
    for (name, line) in [
        ("customers", 9),
        ("customers", 20),
        ("invoices", 21),
        ("invoices", 25),
        ("invoices", 28),
        ("invoice_status", 28),
        ("customers", 30),
    ] {
        assert!(
            find(name, line).is_some_and(|r| !r.call),
            "{name} {line}: {:?}",
            f.refs
        );
    }
    assert!(has_call(&f, "sum", 19), "{:?}", calls(&f));
    // What a statement creates, columns and aliases are no references.
    assert!(
        !f.refs
            .iter()
            .any(
                |r| ["email", "total_cents", "c", "i", "owed", "balances"].contains(&&*r.name)
                    || &*r.name == "customers" && r.line == 2
                    || &*r.name == "invoices" && r.line == 7
            ),
        "{:?}",
        f.refs
    );
}

#[test]
fn julia_calls_imports_includes_and_supertypes() {
    let f = extract_facts(Language::Julia, include_str!("../../testdata/julia.jl"));
    assert!(
        has_import(&f, "LinearAlgebra", Some("*"), None),
        "{:?}",
        f.imports
    );
    assert!(
        has_import(&f, "Base", Some("show"), None),
        "{:?}",
        f.imports
    );
    assert!(
        has_import(&f, "money.jl", Some("*"), None),
        "{:?}",
        f.imports
    );
    assert!(
        has_relation(&f, "Invoice", "AbstractDocument"),
        "{:?}",
        f.relations
    );
    assert!(has_call(&f, "sum", 26), "{:?}", calls(&f));
    assert!(has_call(&f, "shipping", 26), "{:?}", calls(&f));
    assert!(has_call(&f, "total", 31), "{:?}", calls(&f));
    assert!(has_call(&f, "esc", 34), "{:?}", calls(&f));
    // A macro call calls the macro.
    assert!(has_call(&f, "testset", 41), "{:?}", calls(&f));
    assert!(has_call(&f, "test", 42), "{:?}", calls(&f));
    // Definitions' own names are no references.
    assert!(
        !f.refs.iter().any(|r| (&*r.name == "total" && r.line == 25)
            || (&*r.name == "shipping" && r.line == 29)
            || (&*r.name == "show" && r.line == 31)
            || (&*r.name == "cents" && r.line == 33)
            || (&*r.name == "Invoice" && r.line == 14)
            || &*r.name == "Ledger"
            || &*r.name == "include"),
        "{:?}",
        f.refs
    );
}

#[test]
fn ocaml_applications_types_opens_and_inheritance() {
    let f = extract_facts(Language::OCaml, include_str!("../../testdata/ocaml.ml"));
    assert!(has_import(&f, "Printf", Some("*"), None), "{:?}", f.imports);
    assert!(
        has_import(&f, "Support.Money", None, Some("S")),
        "{:?}",
        f.imports
    );
    assert!(
        has_relation(&f, "printer", "formatter"),
        "{:?}",
        f.relations
    );
    assert!(has_call(&f, "shipping", 15), "{:?}", calls(&f));
    assert!(has_call(&f, "odd", 17), "{:?}", calls(&f));
    assert!(has_call(&f, "printf", 36), "{:?}", calls(&f));
    // `List.fold_left …` calls `fold_left` through `List`; `S.zero` through the alias.
    let fold = f.refs.iter().find(|r| &*r.name == "fold_left").unwrap();
    assert_eq!(
        (fold.line, fold.call, fold.qualifier.as_deref()),
        (15, true, Some("List"))
    );
    let zero = f.refs.iter().find(|r| &*r.name == "zero").unwrap();
    assert_eq!(zero.qualifier.as_deref(), Some("S"));
    // A type named is a reference, not a call.
    assert!(
        f.refs
            .iter()
            .any(|r| &*r.name == "invoice" && r.line == 23 && !r.call),
        "{:?}",
        f.refs
    );
    // What bindings, types, modules and classes define are no references.
    assert!(
        !f.refs.iter().any(|r| (&*r.name == "total" && r.line == 14)
            || (&*r.name == "shipping" && r.line == 11)
            || &*r.name == "max_lines"
            || &*r.name == "Ledger"
            || &*r.name == "Printf"
            || (&*r.name == "invoice" && r.line == 5)),
        "{:?}",
        f.refs
    );
}
