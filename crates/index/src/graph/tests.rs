use super::*;
use patina_core::Language;

/// A repository in memory: files' texts → chunks and facts, as the index round makes them.
pub(crate) fn table(files: &[(&str, &str)]) -> GraphTable {
    let mut chunks = HashMap::new();
    let mut facts = HashMap::new();
    let mut id = 0u64;
    for (path, text) in files {
        let lang = Language::detect(std::path::Path::new(path), text);
        for c in patina_chunk::chunk_file(lang, text, &patina_chunk::ChunkOptions::default()) {
            id += 1;
            chunks.insert(
                id,
                ChunkMeta {
                    path: (*path).into(),
                    start_line: c.start_line,
                    end_line: c.end_line,
                    symbol: c.symbol,
                    kind: c.kind,
                    parent: c.parent,
                    language: lang,
                    hash: Default::default(),
                    role: None,
                    licence: None,
                },
            );
        }
        let mut f = patina_chunk::extract_facts(lang, text);
        patina_chunk::mark_package_reexports(path, &mut f);
        facts.insert(Arc::<str>::from(*path), Arc::new(f));
    }
    GraphTable::build(chunks.iter(), facts)
}

fn refs(t: &GraphTable, sym: &str) -> Vec<(String, u32, Resolution)> {
    t.references(sym, false)
        .into_iter()
        .map(|e| (e.site.path.to_string(), e.site.line, e.resolution))
        .collect()
}

#[test]
fn a_package_reexport_leads_to_the_definition() {
    let t = table(&[
        ("src/pkg/__init__.py", "from .helpers import url_for\n"),
        ("src/pkg/helpers.py", "def url_for(e):\n    return e\n"),
        (
            "src/pkg/app.py",
            "class App:\n    def url_for(self, e):\n        return e\n",
        ),
        (
            "tests/test_x.py",
            "import pkg\nfrom pkg import url_for\n\n\ndef test_a():\n    pkg.url_for('a')\n    url_for('b')\n",
        ),
    ]);
    let got: Vec<(String, u32, Resolution)> = refs(&t, "url_for")
        .into_iter()
        .filter(|r| r.0 == "tests/test_x.py")
        .collect();
    assert_eq!(
        got,
        [
            ("tests/test_x.py".into(), 6, Resolution::Import),
            ("tests/test_x.py".into(), 7, Resolution::Import)
        ]
    );
    let e = t.references("url_for", false);
    assert!(
        e.iter()
            .filter(|e| *e.site.path == *"tests/test_x.py")
            .all(|e| &*e.to.path == "src/pkg/helpers.py")
    );
}

#[test]
fn names_reached_through_modules_outside_the_repository_stay_unresolved() {
    let t = table(&[
        (
            "pkg/ctx.py",
            "class Globals:\n    def get(self, k):\n        return k\n",
        ),
        ("pkg/codec.py", "def loads(s):\n    return s\n"),
        (
            "pkg/config.py",
            "import os\nfrom json import loads\n\n\ndef read(v):\n    os.environ.get(v)\n    return loads(v)\n",
        ),
    ]);
    assert_eq!(refs(&t, "get"), [], "os.environ.get is not Globals.get");
    assert_eq!(refs(&t, "loads"), [], "json.loads is not codec.loads");
}

#[test]
fn python_imports_aliases_and_shadowing() {
    let t = table(&[
        ("pkg/util.py", "def helper(x):\n    return x\n"),
        ("other/util.py", "def helper(x):\n    return 2\n"),
        (
            "pkg/app.py",
            "from .util import helper as h\n\n\ndef run(p):\n    return h(p)\n",
        ),
        (
            "other/main.py",
            "from other.util import helper\n\n\ndef go():\n    helper(1)\n",
        ),
        (
            "pkg/local.py",
            "def helper(x):\n    return 3\n\n\ndef use():\n    return helper(0)\n",
        ),
    ]);
    let defs = t.defs("helper");
    assert_eq!(defs.len(), 3);
    // The alias resolves through the relative import to pkg/util.py.
    let site = Site {
        path: "pkg/app.py".into(),
        line: 5,
        call: true,
        qualifier: None,
    };
    let (c, r) = t.resolve("h", &site);
    assert_eq!((&*c[0].path, r), ("pkg/util.py", Resolution::Import));
    // The absolute import reaches other/util.py, not pkg/util.py.
    let site = Site {
        path: "other/main.py".into(),
        line: 5,
        call: true,
        qualifier: None,
    };
    let (c, r) = t.resolve("helper", &site);
    assert_eq!((&*c[0].path, r), ("other/util.py", Resolution::Import));
    assert_eq!(c.len(), 1);
    // A file's own helper shadows the others.
    let site = Site {
        path: "pkg/local.py".into(),
        line: 6,
        call: true,
        qualifier: None,
    };
    let (c, r) = t.resolve("helper", &site);
    assert_eq!((&*c[0].path, r), ("pkg/local.py", Resolution::Exact));
    // Callers of other/util.py's helper: only other/main.py.
    let callers: Vec<_> = t
        .references("helper", true)
        .into_iter()
        .filter(|e| &*e.to.path == "other/util.py")
        .map(|e| (e.site.path.to_string(), e.from.map(|d| d.symbol)))
        .collect();
    assert_eq!(callers, vec![("other/main.py".into(), Some("go".into()))]);
}

#[test]
fn rust_use_paths_and_go_packages() {
    let t = table(&[
        ("src/store.rs", "pub fn open() {}\n"),
        ("src/other.rs", "pub fn open() {}\n"),
        (
            "src/lib.rs",
            "mod store;\nuse crate::store::open;\n\npub fn main() {\n    open();\n}\n",
        ),
        (
            "util/parse.go",
            "package util\n\nfunc Parse() int { return 1 }\n",
        ),
        (
            "cmd/root.go",
            "package cmd\n\nimport \"github.com/o/r/util\"\n\nfunc Run() {\n\tutil.Parse()\n\tlocal()\n}\n",
        ),
        ("cmd/local.go", "package cmd\n\nfunc local() {}\n"),
    ]);
    assert_eq!(
        refs(&t, "open"),
        vec![("src/lib.rs".into(), 5, Resolution::Import)]
    );
    assert_eq!(
        refs(&t, "Parse"),
        vec![("cmd/root.go".into(), 6, Resolution::Import)]
    );
    assert_eq!(
        refs(&t, "local"),
        vec![("cmd/root.go".into(), 7, Resolution::Exact)]
    );
    let run = t.defs("Run").remove(0);
    let callees: Vec<_> = t
        .calls_in(&run)
        .into_iter()
        .map(|e| e.to.symbol.to_string())
        .collect();
    assert_eq!(callees, vec!["Parse", "local"]);
}

#[test]
fn javascript_relative_imports_and_inheritance() {
    let t = table(&[
        (
            "lib/utils.js",
            "function merge(a, b) { return a; }\nmodule.exports = { merge };\n",
        ),
        ("test/utils.js", "function merge(a, b) { return b; }\n"),
        (
            "lib/app.js",
            "const { merge } = require('./utils');\nclass Base {}\nclass App extends Base {\n  run() { return merge(1, 2); }\n}\n",
        ),
    ]);
    let r = refs(&t, "merge");
    assert!(
        r.contains(&("lib/app.js".into(), 4, Resolution::Import)),
        "{r:?}"
    );
    assert!(!r.iter().any(|(p, _, _)| p == "test/utils.js"));
    let app = t.defs("App").remove(0);
    let n: Vec<_> = t
        .type_neighbours(&app)
        .into_iter()
        .map(|(d, _)| d.symbol.to_string())
        .collect();
    assert_eq!(n, vec!["Base"]);
}

#[test]
fn method_calls_through_objects_do_not_reach_functions() {
    let t = table(&[
        ("a.py", "def get(x):\n    return x\n"),
        (
            "b.py",
            "class Store:\n    def get(self, k):\n        return k\n\n\ndef use(s):\n    return s.get(1)\n",
        ),
    ]);
    let site = Site {
        path: "b.py".into(),
        line: 7,
        call: true,
        qualifier: Some("s".into()),
    };
    let (c, _) = t.resolve("get", &site);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].parent.as_deref(), Some("Store"));
    assert_eq!(split_qualified("Store.get"), (Some("Store"), "get"));
    assert_eq!(t.defs("Store.get").len(), 1);
}

/// (path, line, chunk start line) of `name`'s re-exports.
fn reexports(t: &GraphTable, name: &str) -> Vec<(String, u32, Option<u32>)> {
    t.reexports_of(name)
        .into_iter()
        .map(|(r, chunk)| {
            (
                r.path.to_string(),
                r.import.line,
                chunk.map(|c| c.start_line),
            )
        })
        .collect()
}

#[test]
fn reexports_of_a_name_in_every_form_with_their_chunks() {
    let t = table(&[
        (
            "src/lib.rs",
            "pub mod parser;\npub use parser::QueryParser;\npub use parser::Lexer as Scanner;\n",
        ),
        (
            "src/parser.rs",
            "pub struct QueryParser;\npub struct Lexer;\nuse crate::QueryParser as Q;\n",
        ),
        ("src/prelude.rs", "pub use crate::parser::*;\n"),
        ("src/other.rs", "pub use crate::elsewhere::*;\n"),
        ("pkg/__init__.py", "from .core import Engine\n"),
        ("pkg/core.py", "class Engine:\n    pass\n"),
        ("pkg/api.py", "from .core import Engine\n"),
        ("web/index.js", "export { Router } from './router';\n"),
        ("web/router.js", "export class Router {}\n"),
    ]);
    assert_eq!(
        reexports(&t, "QueryParser"),
        [
            ("src/lib.rs".into(), 2, Some(1)),
            ("src/prelude.rs".into(), 1, Some(1)),
        ]
    );
    // Any case; an alias answers for both names; a plain import is no re-export.
    assert_eq!(reexports(&t, "queryparser").len(), 2);
    assert_eq!(
        reexports(&t, "Scanner"),
        [("src/lib.rs".into(), 3, Some(1))]
    );
    assert_eq!(reexports(&t, "Lexer")[0], ("src/lib.rs".into(), 3, Some(1)));
    assert_eq!(reexports(&t, "Q"), []);
    assert_eq!(
        reexports(&t, "Engine"),
        [("pkg/__init__.py".into(), 1, Some(1))]
    );
    assert_eq!(
        reexports(&t, "Router"),
        [("web/index.js".into(), 1, Some(1))]
    );
    assert_eq!(reexports(&t, "Nothing"), []);
}

#[test]
fn a_file_ties_its_folder_when_it_imports_or_is_imported_by_most_of_it() {
    let t = table(&[
        (
            "web/search/engine.js",
            "import { a } from './a';\nimport { b } from './b';\nimport { c } from './c';\n",
        ),
        ("web/search/a.js", "export function a() {}\n"),
        ("web/search/b.js", "export function b() {}\n"),
        ("web/search/c.js", "export function c() {}\n"),
        ("lib/util/core.py", "def shared():\n    pass\n"),
        ("lib/util/one.py", "from .core import shared\n"),
        ("lib/util/two.py", "from .core import shared\n"),
        ("lib/util/three.py", "def alone():\n    pass\n"),
        ("lone/x.py", "from .y import z\n"),
        ("lone/y.py", "def z():\n    pass\n"),
    ]);
    assert!(t.ties_its_folder("web/search/engine.js"));
    assert!(!t.ties_its_folder("web/search/a.js"));
    assert!(t.ties_its_folder("lib/util/core.py"));
    assert!(!t.ties_its_folder("lib/util/one.py"));
    // One tie is no folder's root.
    assert!(!t.ties_its_folder("lone/x.py"));
}

#[test]
fn ruby_requires_reach_the_files_they_load() {
    let t = table(&[
        ("lib/shop/cart.rb", "class Cart\nend\n"),
        ("lib/shop/pricing.rb", "module Pricing\nend\n"),
        ("app/json.rb", "module Json\nend\n"),
        (
            "lib/shop.rb",
            "require \"json\"\nrequire \"shop/pricing\"\nrequire_relative \"shop/cart\"\n",
        ),
    ]);
    let files: Vec<(String, u32)> = t
        .imported_files("lib/shop.rb")
        .into_iter()
        .map(|(p, l)| (p.to_string(), l))
        .collect();
    // `json` is a gem, not the repository's `app/json.rb`: only the load path (`lib/`) and the
    // requiring file's folder are searched.
    assert_eq!(
        files,
        [
            ("lib/shop/pricing.rb".to_string(), 2),
            ("lib/shop/cart.rb".to_string(), 3)
        ]
    );
}

#[test]
fn php_uses_name_classes_not_files_so_their_names_still_resolve() {
    let t = table(&[
        (
            "app/Support/Money.php",
            "<?php\nnamespace App\\Support;\n\nclass Money\n{\n    public static function of(int $c): self\n    {\n        return new self();\n    }\n}\n",
        ),
        (
            "app/Billing/Invoice.php",
            "<?php\nnamespace App\\Billing;\n\nuse App\\Support\\Money;\n\nfunction total(): Money\n{\n    return Money::of(1);\n}\n",
        ),
    ]);
    let site = Site {
        path: "app/Billing/Invoice.php".into(),
        line: 8,
        call: true,
        qualifier: Some("Money".into()),
    };
    let (c, _) = t.resolve("of", &site);
    assert_eq!(
        c.iter().map(|d| &*d.path).collect::<Vec<_>>(),
        ["app/Support/Money.php"]
    );
    assert!(t.imported_files("app/Billing/Invoice.php").is_empty());
}

#[test]
fn csharp_usings_name_namespaces_so_their_names_still_resolve() {
    let t = table(&[
        (
            "src/Support/Money.cs",
            "namespace Acme.Support;\n\npublic class Money\n{\n    public static Money Of(decimal d) => new Money();\n}\n",
        ),
        (
            "src/Billing/Invoice.cs",
            "using Acme.Support;\n\nnamespace Acme.Billing;\n\npublic class Invoice\n{\n    public Money Total() => Money.Of(1);\n}\n",
        ),
    ]);
    let site = Site {
        path: "src/Billing/Invoice.cs".into(),
        line: 7,
        call: true,
        qualifier: Some("Money".into()),
    };
    let (c, _) = t.resolve("Of", &site);
    assert_eq!(
        c.iter().map(|d| &*d.path).collect::<Vec<_>>(),
        ["src/Support/Money.cs"]
    );
}

#[test]
fn kotlin_imports_reach_files_named_for_them_and_names_resolve_beyond() {
    let t = table(&[
        (
            "src/main/kotlin/com/acme/support/Money.kt",
            "package com.acme.support\n\nclass Money {\n    fun plus(o: Money): Money = o\n}\n",
        ),
        (
            "src/main/kotlin/com/acme/support/Helpers.kt",
            "package com.acme.support\n\nfun cents(n: Long): Money = Money()\n",
        ),
        (
            "src/main/kotlin/com/acme/billing/Invoice.kt",
            "package com.acme.billing\n\nimport com.acme.support.Money\nimport com.acme.support.cents\n\nfun total(): Money = cents(1)\n",
        ),
    ]);
    let files: Vec<String> = t
        .imported_files("src/main/kotlin/com/acme/billing/Invoice.kt")
        .into_iter()
        .map(|(p, _)| p.to_string())
        .collect();
    assert_eq!(files, ["src/main/kotlin/com/acme/support/Money.kt"]);
    // `cents` lives in a file not named for it: the import reaches no file, the name still
    // resolves.
    let site = Site {
        path: "src/main/kotlin/com/acme/billing/Invoice.kt".into(),
        line: 6,
        call: true,
        qualifier: None,
    };
    let (c, _) = t.resolve("cents", &site);
    assert_eq!(
        c.iter().map(|d| &*d.path).collect::<Vec<_>>(),
        ["src/main/kotlin/com/acme/support/Helpers.kt"]
    );
}

#[test]
fn lua_requires_reach_modules_on_the_package_path() {
    let t = table(&[
        (
            "lua/shop/util.lua",
            "local M = {}\n\nfunction M.sum(xs)\n  return 0\nend\n\nreturn M\n",
        ),
        (
            "lua/shop/init.lua",
            "local M = {}\n\nfunction M.setup() end\n\nreturn M\n",
        ),
        (
            "lua/other.lua",
            "local M = {}\n\nfunction M.sum(xs)\n  return 1\nend\n\nreturn M\n",
        ),
        (
            "lua/cart.lua",
            "local util = require(\"shop.util\")\nlocal shop = require \"shop\"\nlocal json = require \"json\"\n\nlocal function total(c)\n  return util.sum(c)\nend\n",
        ),
    ]);
    let files: Vec<String> = t
        .imported_files("lua/cart.lua")
        .into_iter()
        .map(|(p, _)| p.to_string())
        .collect();
    assert_eq!(files, ["lua/shop/util.lua", "lua/shop/init.lua"]);
    let site = Site {
        path: "lua/cart.lua".into(),
        line: 6,
        call: true,
        qualifier: Some("util".into()),
    };
    let (c, r) = t.resolve("sum", &site);
    assert_eq!(
        (c.iter().map(|d| &*d.path).collect::<Vec<_>>(), r),
        (vec!["lua/shop/util.lua"], Resolution::Import)
    );
}

#[test]
fn shell_sources_reach_the_files_they_name() {
    let t = table(&[
        ("scripts/lib/log.sh", "log_info() {\n  echo \"$1\"\n}\n"),
        ("config/defaults.sh", "defaults() {\n  :\n}\n"),
        (
            "scripts/deploy.sh",
            "source ./lib/log.sh\n. config/defaults.sh\nsource /etc/profile\n\nmain() {\n  log_info hi\n}\n",
        ),
    ]);
    let files: Vec<String> = t
        .imported_files("scripts/deploy.sh")
        .into_iter()
        .map(|(p, _)| p.to_string())
        .collect();
    assert_eq!(files, ["scripts/lib/log.sh", "config/defaults.sh"]);
    let site = Site {
        path: "scripts/deploy.sh".into(),
        line: 6,
        call: true,
        qualifier: None,
    };
    let (c, _) = t.resolve("log_info", &site);
    assert_eq!(
        c.iter().map(|d| &*d.path).collect::<Vec<_>>(),
        ["scripts/lib/log.sh"]
    );
}

#[test]
fn scala_imports_reach_files_named_for_them() {
    let t = table(&[
        (
            "src/main/scala/com/acme/support/Money.scala",
            "package com.acme.support\n\nobject Money {\n  def sum(xs: List[Long]): Long = 0\n}\n",
        ),
        (
            "src/main/scala/com/acme/other/Totals.scala",
            "package com.acme.other\n\nobject Totals {\n  def sum(xs: List[Long]): Long = 1\n}\n",
        ),
        (
            "src/main/scala/com/acme/billing/Invoice.scala",
            "package com.acme.billing\n\nimport com.acme.support.Money\nimport com.acme.support.Money.sum\n\nclass Invoice {\n  def total: Long = sum(Nil)\n}\n",
        ),
    ]);
    let files: Vec<String> = t
        .imported_files("src/main/scala/com/acme/billing/Invoice.scala")
        .into_iter()
        .map(|(p, _)| p.to_string())
        .collect();
    assert_eq!(files, ["src/main/scala/com/acme/support/Money.scala"]);
    // A member imported from an object is found in the object's file.
    let site = Site {
        path: "src/main/scala/com/acme/billing/Invoice.scala".into(),
        line: 7,
        call: true,
        qualifier: None,
    };
    let (c, r) = t.resolve("sum", &site);
    assert_eq!(
        (c.iter().map(|d| &*d.path).collect::<Vec<_>>(), r),
        (
            vec!["src/main/scala/com/acme/support/Money.scala"],
            Resolution::Import
        )
    );
}

#[test]
fn elixir_aliases_reach_files_by_mix_convention() {
    let t = table(&[
        (
            "lib/acme/support/money.ex",
            "defmodule Acme.Support.Money do\n  def sum(xs), do: Enum.sum(xs)\nend\n",
        ),
        (
            "lib/acme/http_client.ex",
            "defmodule Acme.HTTPClient do\n  def get(url), do: url\nend\n",
        ),
        (
            "lib/acme/other.ex",
            "defmodule Acme.Other do\n  def sum(xs), do: 0\nend\n",
        ),
        (
            "lib/acme/billing/invoice.ex",
            "defmodule Acme.Billing.Invoice do\n  alias Acme.Support.Money\n  import Acme.HTTPClient\n  require Logger\n\n  def total(i), do: Money.sum(i)\nend\n",
        ),
    ]);
    let files: Vec<String> = t
        .imported_files("lib/acme/billing/invoice.ex")
        .into_iter()
        .map(|(p, _)| p.to_string())
        .collect();
    assert_eq!(
        files,
        ["lib/acme/support/money.ex", "lib/acme/http_client.ex"]
    );
    let site = Site {
        path: "lib/acme/billing/invoice.ex".into(),
        line: 6,
        call: true,
        qualifier: Some("Money".into()),
    };
    let (c, r) = t.resolve("sum", &site);
    assert_eq!(
        (c.iter().map(|d| &*d.path).collect::<Vec<_>>(), r),
        (vec!["lib/acme/support/money.ex"], Resolution::Import)
    );
}

#[test]
fn swift_imports_reach_their_target_and_a_target_is_one_namespace() {
    let t = table(&[
        (
            "Sources/Support/Money.swift",
            "struct Money {\n    static func sum(_ c: [Int]) -> Int { 0 }\n}\n",
        ),
        (
            "Sources/Support/Util/Round.swift",
            "func round(_ n: Int) -> Int { n }\n",
        ),
        (
            "Sources/Billing/Invoice.swift",
            "import Foundation\nimport Support\n\nfunc total() -> Int {\n    return round(Money.sum([]))\n}\n",
        ),
        (
            "Sources/Billing/Tax.swift",
            "func tax() -> Int { total() }\n",
        ),
    ]);
    let mut files: Vec<String> = t
        .imported_files("Sources/Billing/Invoice.swift")
        .into_iter()
        .map(|(p, _)| p.to_string())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "Sources/Support/Money.swift",
            "Sources/Support/Util/Round.swift"
        ]
    );
    // Through the imported module, in a folder below the target's.
    let site = |path: &str, line| Site {
        path: path.into(),
        line,
        call: true,
        qualifier: None,
    };
    let (c, how) = t.resolve("round", &site("Sources/Billing/Invoice.swift", 5));
    assert_eq!(
        c.iter().map(|d| &*d.path).collect::<Vec<_>>(),
        ["Sources/Support/Util/Round.swift"]
    );
    assert_eq!(how, Resolution::Import);
    // The same target needs no import.
    let (c, how) = t.resolve("total", &site("Sources/Billing/Tax.swift", 1));
    assert_eq!(
        c.iter().map(|d| &*d.path).collect::<Vec<_>>(),
        ["Sources/Billing/Invoice.swift"]
    );
    assert_eq!(how, Resolution::Exact);
    assert_eq!(
        modules::swift_module("Pkg/Sources/Shop/Models/Cart.swift"),
        "Pkg/Sources/Shop"
    );
    assert_eq!(modules::swift_module("App/View.swift"), "App");
}

#[test]
fn haskell_imports_reach_the_module_file() {
    let t = table(&[
        (
            "src/Acme/Support/Money.hs",
            "module Acme.Support.Money where\n\nsumMoney :: [Int] -> Int\nsumMoney = sum\n",
        ),
        (
            "src/Acme/Billing.hs",
            "module Acme.Billing where\n\nimport Data.List (sort)\nimport Acme.Support.Money\n\ntotal xs = sumMoney (sort xs)\n",
        ),
    ]);
    let files: Vec<String> = t
        .imported_files("src/Acme/Billing.hs")
        .into_iter()
        .map(|(p, _)| p.to_string())
        .collect();
    assert_eq!(files, ["src/Acme/Support/Money.hs"]);
    let site = |line| Site {
        path: "src/Acme/Billing.hs".into(),
        line,
        call: true,
        qualifier: None,
    };
    let (c, how) = t.resolve("sumMoney", &site(6));
    assert_eq!(
        c.iter().map(|d| &*d.path).collect::<Vec<_>>(),
        ["src/Acme/Support/Money.hs"]
    );
    assert_eq!(how, Resolution::Import);
    // `sort` comes from a module outside the repository: nothing is guessed.
    assert!(t.resolve("sort", &site(6)).0.is_empty());
}

#[test]
fn zig_imports_reach_the_file_beside() {
    let t = table(&[
        (
            "src/support/money.zig",
            "pub fn sum(xs: []const u64) u64 {\n    return 0;\n}\n",
        ),
        (
            "src/invoice.zig",
            "const std = @import(\"std\");\nconst money = @import(\"support/money.zig\");\n\npub fn total() u64 {\n    return money.sum(&.{}) + std.math.sum(1);\n}\n",
        ),
    ]);
    let files: Vec<String> = t
        .imported_files("src/invoice.zig")
        .into_iter()
        .map(|(p, _)| p.to_string())
        .collect();
    assert_eq!(files, ["src/support/money.zig"]);
    let site = |q: &str| Site {
        path: "src/invoice.zig".into(),
        line: 5,
        call: true,
        qualifier: Some(q.into()),
    };
    let (c, how) = t.resolve("sum", &site("money"));
    assert_eq!(
        c.iter().map(|d| &*d.path).collect::<Vec<_>>(),
        ["src/support/money.zig"]
    );
    assert_eq!(how, Resolution::Import);
    // Through the standard library: outside the repository, nothing is guessed.
    assert!(t.resolve("sum", &site("std.math")).0.is_empty());
}

#[test]
fn dart_imports_reach_package_libraries_and_relative_files() {
    let t = table(&[
        (
            "lib/src/money.dart",
            "class Money {\n  static int sum(List<int> c) => 0;\n}\n",
        ),
        ("lib/src/util.dart", "int helper(int n) => n;\n"),
        (
            "lib/src/invoice.dart",
            "import 'package:acme/src/money.dart';\nimport 'util.dart' show helper;\nimport 'dart:math';\n\nint total() => helper(Money.sum([]) + max(1, 2));\n",
        ),
    ]);
    let mut files: Vec<String> = t
        .imported_files("lib/src/invoice.dart")
        .into_iter()
        .map(|(p, _)| p.to_string())
        .collect();
    files.sort();
    assert_eq!(files, ["lib/src/money.dart", "lib/src/util.dart"]);
    let site = |q: Option<&str>| Site {
        path: "lib/src/invoice.dart".into(),
        line: 5,
        call: true,
        qualifier: q.map(Into::into),
    };
    let (c, how) = t.resolve("helper", &site(None));
    assert_eq!(
        c.iter().map(|d| &*d.path).collect::<Vec<_>>(),
        ["lib/src/util.dart"]
    );
    assert_eq!(how, Resolution::Import);
    let (c, _) = t.resolve("sum", &site(Some("Money")));
    assert_eq!(
        c.iter().map(|d| &*d.path).collect::<Vec<_>>(),
        ["lib/src/money.dart"]
    );
    // `max` comes from the SDK: nothing in the repository is guessed for it.
    assert!(t.resolve("max", &site(None)).0.is_empty());
}

#[test]
fn protobuf_imports_reach_the_file_from_an_include_folder() {
    let t = table(&[
        (
            "proto/acme/support/money.proto",
            "syntax = \"proto3\";\npackage acme.support;\n\nmessage Money {\n  int64 cents = 1;\n}\n",
        ),
        (
            "proto/acme/billing/invoice.proto",
            "syntax = \"proto3\";\nimport \"acme/support/money.proto\";\nimport \"google/protobuf/timestamp.proto\";\n\nmessage Invoice {\n  acme.support.Money total = 1;\n}\n",
        ),
    ]);
    let files: Vec<String> = t
        .imported_files("proto/acme/billing/invoice.proto")
        .into_iter()
        .map(|(p, _)| p.to_string())
        .collect();
    assert_eq!(files, ["proto/acme/support/money.proto"]);
    let refs = refs(&t, "Money");
    assert_eq!(
        refs,
        [(
            "proto/acme/billing/invoice.proto".to_string(),
            6,
            Resolution::Import
        )]
    );
}

#[test]
fn terraform_addresses_name_the_blocks_of_their_module_folder() {
    let t = table(&[
        (
            "infra/variables.tf",
            "variable \"logs\" {\n  type = string\n}\n",
        ),
        (
            "infra/main.tf",
            "resource \"aws_s3_bucket\" \"logs\" {\n  bucket = var.logs\n}\n\noutput \"arn\" {\n  value = aws_s3_bucket.logs.arn\n}\n",
        ),
        ("other/main.tf", "variable \"logs\" {}\n"),
    ]);
    let got = refs(&t, "logs");
    assert!(
        got.contains(&("infra/main.tf".to_string(), 2, Resolution::Exact)),
        "{got:?}"
    );
    let site = |line, q: &str| Site {
        path: "infra/main.tf".into(),
        line,
        call: false,
        qualifier: Some(q.into()),
    };
    // `var.logs` is the variable of this folder, `aws_s3_bucket.logs` the bucket.
    let (c, how) = t.resolve("logs", &site(2, "var"));
    assert_eq!(
        c.iter()
            .map(|d| (&*d.path, d.start_line))
            .collect::<Vec<_>>(),
        [("infra/variables.tf", 1)]
    );
    assert_eq!(how, Resolution::Exact);
    let (c, _) = t.resolve("logs", &site(6, "aws_s3_bucket"));
    assert_eq!(
        c.iter()
            .map(|d| (&*d.path, d.start_line))
            .collect::<Vec<_>>(),
        [("infra/main.tf", 1)]
    );
}

#[test]
fn namesakes_resolve_in_the_same_order_in_every_process() {
    // One Go package, a helper per platform (build tags): eight candidates of the same rank, a
    // tie the first wins. The table is built from hash maps whose order differs with every
    // instance, as it does between two daemon processes.
    let platforms = [
        "aix", "darwin", "freebsd", "js", "linux", "netbsd", "plan9", "windows",
    ];
    let mut files: Vec<(String, String)> = platforms
        .iter()
        .map(|os| {
            (
                format!("pkg/helper_{os}.go"),
                "package pkg\n\nfunc helper() {}\n".to_string(),
            )
        })
        .collect();
    files.push((
        "pkg/run.go".into(),
        "package pkg\n\nfunc run() {\n\thelper()\n}\n".into(),
    ));
    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let site = Site {
        path: "pkg/run.go".into(),
        line: 4,
        call: true,
        qualifier: None,
    };
    let order = |t: &GraphTable| -> Vec<String> {
        t.resolve("helper", &site)
            .0
            .iter()
            .map(|d| d.path.to_string())
            .collect()
    };
    let first = order(&table(&borrowed));
    assert_eq!(first.len(), 8, "{first:?}");
    assert_eq!(first[0], "pkg/helper_aix.go", "{first:?}");
    for _ in 0..20 {
        assert_eq!(order(&table(&borrowed)), first);
    }
}

#[test]
fn callers_are_the_resolved_call_sites_and_a_hub_has_none() {
    let t = table(&[
        ("app/check.py", "def check(x):\n    return x\n"),
        (
            "app/use.py",
            "from app.check import check\n\n\ndef one():\n    return check(1)\n\n\ndef two():\n    check(2)\n    return check(3)\n",
        ),
    ]);
    let def = t
        .defs("check")
        .into_iter()
        .next()
        .expect("check is defined");
    let callers = t.callers(&def, 200);
    let from: Vec<Option<String>> = callers
        .iter()
        .map(|(chunk, _)| {
            chunk.and_then(|id| {
                t.chunks_in("app/use.py")
                    .iter()
                    .find(|d| d.chunk_id == id)
                    .map(|d| d.symbol.to_string())
            })
        })
        .collect();
    assert_eq!(
        from,
        [Some("one".into()), Some("two".into()), Some("two".into())]
    );
    assert!(
        callers.iter().all(|(_, r)| *r == Resolution::Import),
        "{callers:?}"
    );
    assert_eq!(t.caller_count(&def, 200), 3);
    // Asked again: the same answer, remembered.
    assert_eq!(t.callers(&def, 200).len(), 3);
    // Called from more sites than the hub limit: no callers resolved, the sites counted.
    assert!(t.callers(&def, 2).is_empty());
    assert_eq!(t.caller_count(&def, 2), 3);
}

#[test]
fn objc_imports_reach_the_header_and_its_implementation() {
    let t = table(&[
        (
            "Sources/Invoice.h",
            "#import <Foundation/Foundation.h>\n\n@interface Invoice : NSObject\n- (void)markPaid:(NSInteger)method;\n@end\n",
        ),
        (
            "Sources/Invoice.m",
            "#import \"Invoice.h\"\n\n@implementation Invoice\n- (void)markPaid:(NSInteger)method {\n    self.paid = YES;\n}\n@end\n",
        ),
        (
            "Sources/Ledger.m",
            "#import \"Invoice.h\"\n@import UIKit;\n\n@implementation Ledger\n- (void)settle:(Invoice *)invoice {\n    [invoice markPaid:1];\n}\n@end\n",
        ),
    ]);
    let mut files: Vec<String> = t
        .imported_files("Sources/Ledger.m")
        .into_iter()
        .map(|(p, _)| p.to_string())
        .collect();
    files.sort();
    // The header and, by its stem, its implementation; the framework is outside.
    assert_eq!(files, ["Sources/Invoice.h", "Sources/Invoice.m"]);
    let refs = refs(&t, "markPaid");
    assert_eq!(
        refs,
        [("Sources/Ledger.m".to_string(), 6, Resolution::Import)]
    );
}

#[test]
fn r_package_files_share_a_namespace_and_source_reaches_a_file() {
    let t = table(&[
        (
            "R/shipping.R",
            "shipping_fee <- function(lines) {\n  if (nrow(lines) > 3) 0 else 450\n}\n",
        ),
        (
            "R/invoice.R",
            "invoice_total <- function(lines) {\n  sum(lines$cents) + shipping_fee(lines)\n}\n",
        ),
        (
            "scripts/report.R",
            "source(\"R/shipping.R\")\nlibrary(jsonlite)\n\nreport <- function(x) shipping_fee(x)\n",
        ),
    ]);
    let mut refs = refs(&t, "shipping_fee");
    refs.sort();
    assert_eq!(
        refs,
        [
            // The package's `R/` folder is one namespace.
            ("R/invoice.R".to_string(), 2, Resolution::Exact),
            // `source(…)` reads the file.
            ("scripts/report.R".to_string(), 4, Resolution::Import),
        ]
    );
    // `library(jsonlite)` leads to no file of the repository.
    let files: Vec<String> = t
        .imported_files("scripts/report.R")
        .into_iter()
        .map(|(p, _)| p.to_string())
        .collect();
    assert_eq!(files, ["R/shipping.R"]);
}

#[test]
fn erlang_modules_are_their_files() {
    let t = table(&[
        (
            "apps/billing/src/ledger.erl",
            "-module(ledger).\n-export([record/2]).\n\nrecord(Invoice, Method) ->\n    {Invoice, Method}.\n",
        ),
        (
            "apps/billing/src/money.erl",
            "-module(money).\n-export([add/2]).\n\nadd(A, B) -> A + B.\n",
        ),
        (
            "apps/billing/include/records.hrl",
            "-record(line, {cents = 0}).\n",
        ),
        (
            "apps/billing/src/invoice.erl",
            "-module(invoice).\n-import(money, [add/2]).\n-include(\"records.hrl\").\n\nsettle(I, M) ->\n    ledger:record(I, M),\n    add(1, 2),\n    lists:map(fun add/2, []),\n    #line{cents = 1}.\n",
        ),
    ]);
    // `ledger:record(…)`: module `ledger` is `ledger.erl`.
    assert_eq!(
        refs(&t, "record"),
        [(
            "apps/billing/src/invoice.erl".to_string(),
            6,
            Resolution::Import
        )]
    );
    // `-import(money, [add/2])`.
    let add = refs(&t, "add");
    assert!(
        add.contains(&(
            "apps/billing/src/invoice.erl".to_string(),
            7,
            Resolution::Import
        )),
        "{add:?}"
    );
    // `-include("records.hrl")` reaches the application's include folder.
    assert_eq!(
        refs(&t, "line"),
        [(
            "apps/billing/src/invoice.erl".to_string(),
            9,
            Resolution::Import
        )]
    );
    // `lists:map` is outside the repository: nothing is guessed for it.
    let site = Site {
        path: "apps/billing/src/invoice.erl".into(),
        line: 8,
        call: true,
        qualifier: Some("lists".into()),
    };
    assert!(t.resolve("add", &site).0.is_empty());
}

#[test]
fn julia_includes_and_package_folders() {
    let t = table(&[
        (
            "src/Orchard.jl",
            "module Orchard\n\ninclude(\"models/tree.jl\")\ninclude(\"picking.jl\")\n\nharvest(trees) = sum(pick_apples, trees) + tree_age(trees)\n\nend\n",
        ),
        (
            "src/picking.jl",
            "pick_apples(tree) = tree.apples\n\nripe(tree) = tree.ripe\n",
        ),
        ("src/models/tree.jl", "tree_age(trees) = length(trees)\n"),
        (
            "test/runtests.jl",
            "using Orchard\nusing Test\n\n@test Orchard.harvest([]) == 0\n",
        ),
        ("src/grading.jl", "grade(tree) = ripe(tree) ? :a : :b\n"),
    ]);
    // `include("models/tree.jl")` reaches the file.
    assert_eq!(
        refs(&t, "tree_age"),
        [("src/Orchard.jl".to_string(), 6, Resolution::Import)]
    );
    // The package's `src/` is one module.
    assert_eq!(
        refs(&t, "pick_apples"),
        [("src/Orchard.jl".to_string(), 6, Resolution::Exact)]
    );
    assert_eq!(
        refs(&t, "ripe"),
        [("src/grading.jl".to_string(), 1, Resolution::Exact)]
    );
    // `using Orchard` reaches the package's main file.
    let files: Vec<String> = t
        .imported_files("test/runtests.jl")
        .into_iter()
        .map(|(p, _)| p.to_string())
        .collect();
    assert_eq!(files, ["src/Orchard.jl"]);
}

#[test]
fn ocaml_modules_are_their_files() {
    let t = table(&[
        ("lib/money.ml", "let add a b = a + b\n"),
        ("lib/money.mli", "val add : int -> int -> int\n"),
        (
            "lib/invoice.ml",
            "let total xs = Money.add 1 xs\n\nmodule M = Money\nlet twice xs = M.add xs xs\n\nmodule Ledger = struct\n  let post x = x\nend\n\nlet posted = Ledger.post 1\n",
        ),
        ("bin/main.ml", "open Money\n\nlet () = ignore (add 5 6)\n"),
    ]);
    let mut add = refs(&t, "add");
    add.sort();
    assert_eq!(
        add,
        [
            // `open Money`.
            ("bin/main.ml".to_string(), 3, Resolution::Import),
            // `Money.add`: module `Money` is `money.ml`; `M.add` through the alias.
            ("lib/invoice.ml".to_string(), 1, Resolution::Import),
            ("lib/invoice.ml".to_string(), 4, Resolution::Import),
        ]
    );
    // A module of the same file.
    assert_eq!(
        refs(&t, "post"),
        [("lib/invoice.ml".to_string(), 10, Resolution::Exact)]
    );
    // `List.map`: the standard library is outside the repository.
    let site = Site {
        path: "lib/invoice.ml".into(),
        line: 1,
        call: true,
        qualifier: Some("List".into()),
    };
    assert!(t.resolve("add", &site).0.is_empty());
}
