//! Languages beyond the first eight, through the real daemon: each one's definitions are found by
//! name (`patina defs`) with their kind and lines, `-t/--type` keeps a query to its files, and its
//! calls lead to the definitions they reach (`patina callers`).

use serde_json::Value;

use crate::util::{TestEnv, git_repo};

/// `patina defs NAME --json` as `(path, line, end_line, kind)`.
fn defs(env: &TestEnv, repo: &std::path::Path, name: &str) -> Vec<(String, u64, u64, String)> {
    let out = env.patina_in(repo, &["defs", name, "--json"]);
    assert_eq!(out.code(), 0, "defs {name}: {out:?}");
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["path"].as_str().unwrap().to_string(),
                s["line"].as_u64().unwrap(),
                s["end_line"].as_u64().unwrap(),
                s["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Every `(name, path, line, end_line, kind)` is a definition the symbol table finds by name.
fn assert_defs(env: &TestEnv, repo: &std::path::Path, expected: &[(&str, &str, u64, u64, &str)]) {
    for &(name, path, line, end, kind) in expected {
        let found = defs(env, repo, name);
        assert!(
            found.contains(&(path.to_string(), line, end, kind.to_string())),
            "defs {name}: {found:?}"
        );
    }
}

/// The files `patina q QUERY --files -t TYPE` lists.
fn typed_files(env: &TestEnv, repo: &std::path::Path, query: &str, ty: &str) -> Vec<String> {
    let out = env.patina_in(repo, &["q", query, "--files", "-n", "50", "-t", ty]);
    assert_eq!(out.code(), 0, "q -t {ty}: {out:?}");
    out.stdout
        .lines()
        .filter_map(|l| l.split(':').next())
        .map(str::to_string)
        .collect()
}

/// The `(path, language, role)` of each hit of `patina q QUERY --json`.
fn hits(env: &TestEnv, repo: &std::path::Path, query: &str) -> Vec<(String, String, String)> {
    let out = env.patina_in(repo, &["q", query, "--json", "-n", "50"]);
    assert_eq!(out.code(), 0, "q {query}: {out:?}");
    out.stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "hit")
        .map(|v| {
            let field = |k: &str| v[k].as_str().unwrap_or_default().to_string();
            (field("repo_path"), field("language"), field("role"))
        })
        .collect()
}

/// The `(path, symbol)` of each caller of `name`.
fn callers(env: &TestEnv, repo: &std::path::Path, name: &str) -> Vec<(String, String)> {
    let out = env.patina_in(repo, &["callers", name, "--json"]);
    assert_eq!(out.code(), 0, "callers {name}: {out:?}");
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["path"].as_str().unwrap().to_string(),
                s["symbol"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

const RUBY: &[(&str, &[u8])] = &[
    (
        "lib/shop/pricing.rb",
        b"# Prices of the catalogue.
module Pricing
  # The price of each item.
  def self.lookup(items)
    items.map { |i| CATALOGUE.fetch(i) }
  end
end
",
    ),
    (
        "lib/shop/checkout.rb",
        b"require \"shop/pricing\"

module Shop
  # Totals a cart.
  class Checkout < Service
    attr_reader :cart

    def initialize(cart)
      @cart = cart
    end

    def total
      Pricing.lookup(cart.items).sum
    end
  end
end
",
    ),
    (
        "spec/shop/checkout_spec.rb",
        b"require_relative \"../../lib/shop/checkout\"

describe Shop::Checkout do
  it \"totals\" do
    expect(Shop::Checkout.new([]).total).to eq(0)
  end
end
",
    ),
    ("tools/checkout.py", b"def total(cart):\n    return 0\n"),
];

#[test]
fn ruby_definitions_types_and_calls() {
    let env = TestEnv::started();
    let repo = git_repo(RUBY);
    env.add_repo(repo.path());
    assert_defs(
        &env,
        repo.path(),
        &[
            ("Pricing", "lib/shop/pricing.rb", 1, 2, "module"),
            ("lookup", "lib/shop/pricing.rb", 3, 7, "method"),
            ("Shop", "lib/shop/checkout.rb", 3, 3, "module"),
            ("Checkout", "lib/shop/checkout.rb", 4, 5, "class"),
            ("cart", "lib/shop/checkout.rb", 6, 6, "method"),
            ("initialize", "lib/shop/checkout.rb", 8, 10, "method"),
            ("total", "lib/shop/checkout.rb", 12, 16, "method"),
        ],
    );
    let files = typed_files(&env, repo.path(), "total", "ruby");
    assert!(
        !files.is_empty() && files.iter().all(|f| f.ends_with(".rb")),
        "{files:?}"
    );
    let found = callers(&env, repo.path(), "lookup");
    assert!(
        found.contains(&("lib/shop/checkout.rb".to_string(), "total".to_string())),
        "{found:?}"
    );
    let found = hits(&env, repo.path(), "Checkout");
    for (path, role) in [
        ("spec/shop/checkout_spec.rb", "test"),
        ("lib/shop/checkout.rb", "source"),
    ] {
        let hit = (path.to_string(), "ruby".to_string(), role.to_string());
        assert!(found.contains(&hit), "{hit:?} in {found:?}");
    }
}

const PHP: &[(&str, &[u8])] = &[
    (
        "src/Support/Money.php",
        b"<?php
namespace App\\Support;

/** An amount in cents. */
final class Money
{
    public static function of(int $cents): self
    {
        return new self($cents);
    }
}
",
    ),
    (
        "src/Billing/Invoice.php",
        b"<?php
namespace App\\Billing;

use App\\Support\\Money;

interface Billable
{
    public function total(): Money;
}

trait Logs
{
    protected function log(string $m): void {}
}

class Invoice implements Billable
{
    use Logs;

    public function total(): Money
    {
        return Money::of(100);
    }
}

function invoice_total(Invoice $i): Money
{
    return $i->total();
}
",
    ),
    (
        "src/Billing/InvoiceTest.php",
        b"<?php\nclass InvoiceTest extends TestCase\n{\n    public function testTotal(): void {}\n}\n",
    ),
    ("tools/total.py", b"def total(cart):\n    return 0\n"),
];

#[test]
fn php_definitions_types_and_calls() {
    let env = TestEnv::started();
    let repo = git_repo(PHP);
    env.add_repo(repo.path());
    assert_defs(
        &env,
        repo.path(),
        &[
            ("Money", "src/Support/Money.php", 4, 6, "class"),
            ("of", "src/Support/Money.php", 7, 11, "method"),
            ("Billable", "src/Billing/Invoice.php", 6, 7, "interface"),
            ("Logs", "src/Billing/Invoice.php", 11, 12, "trait"),
            ("log", "src/Billing/Invoice.php", 13, 14, "method"),
            ("Invoice", "src/Billing/Invoice.php", 16, 18, "class"),
            ("total", "src/Billing/Invoice.php", 20, 24, "method"),
            (
                "invoice_total",
                "src/Billing/Invoice.php",
                26,
                29,
                "function",
            ),
            ("InvoiceTest", "src/Billing/InvoiceTest.php", 2, 3, "class"),
        ],
    );
    let files = typed_files(&env, repo.path(), "total", "php");
    assert!(
        !files.is_empty() && files.iter().all(|f| f.ends_with(".php")),
        "{files:?}"
    );
    // `use App\Support\Money` names a class, not a file: `Money::of` still reaches it.
    let found = callers(&env, repo.path(), "of");
    assert!(
        found.contains(&("src/Billing/Invoice.php".to_string(), "total".to_string())),
        "{found:?}"
    );
    let found = hits(&env, repo.path(), "Invoice");
    for (path, role) in [
        ("src/Billing/InvoiceTest.php", "test"),
        ("src/Billing/Invoice.php", "source"),
    ] {
        let hit = (path.to_string(), "php".to_string(), role.to_string());
        assert!(found.contains(&hit), "{hit:?} in {found:?}");
    }
}

const CSHARP: &[(&str, &[u8])] = &[
    (
        "src/Acme.Support/Money.cs",
        b"namespace Acme.Support;

/// <summary>An amount in cents.</summary>
public readonly struct Money
{
    public static Money Of(long cents) => new Money();
}
",
    ),
    (
        "src/Acme.Billing/Invoice.cs",
        b"using Acme.Support;

namespace Acme.Billing
{
    public interface IBillable
    {
        Money Total();
    }

    public record Line(string Sku, long Cents);

    public enum Status { Draft, Paid }

    [Serializable]
    public class Invoice : IBillable
    {
        public string Number { get; init; }

        public Money Total()
        {
            return Money.Of(100);
        }
    }
}
",
    ),
    (
        "tests/Acme.Billing.Tests/InvoiceTests.cs",
        b"public class InvoiceTests\n{\n    [Fact]\n    public void TotalIsPositive() { }\n}\n",
    ),
    ("tools/total.py", b"def total(cart):\n    return 0\n"),
    // One method, two signatures by target framework.
    (
        "src/Acme.Billing/Binder.cs",
        b"namespace Acme.Billing;

public class Binder
{
#if FEATURE_SPAN
    public int Bind(ReadOnlySpan<object> args)
#else
    public int Bind(object[] args)
#endif
    {
        return 0;
    }
}
",
    ),
];

#[test]
fn csharp_definitions_types_and_calls() {
    let env = TestEnv::started();
    let repo = git_repo(CSHARP);
    env.add_repo(repo.path());
    assert_defs(
        &env,
        repo.path(),
        &[
            ("Money", "src/Acme.Support/Money.cs", 3, 5, "struct"),
            ("Of", "src/Acme.Support/Money.cs", 6, 7, "method"),
            (
                "Acme.Billing",
                "src/Acme.Billing/Invoice.cs",
                3,
                4,
                "module",
            ),
            (
                "IBillable",
                "src/Acme.Billing/Invoice.cs",
                5,
                6,
                "interface",
            ),
            ("Line", "src/Acme.Billing/Invoice.cs", 10, 10, "class"),
            ("Status", "src/Acme.Billing/Invoice.cs", 12, 12, "enum"),
            ("Invoice", "src/Acme.Billing/Invoice.cs", 14, 16, "class"),
            ("Number", "src/Acme.Billing/Invoice.cs", 17, 17, "method"),
            ("Total", "src/Acme.Billing/Invoice.cs", 19, 24, "method"),
            (
                "TotalIsPositive",
                "tests/Acme.Billing.Tests/InvoiceTests.cs",
                3,
                5,
                "method",
            ),
        ],
    );
    let files = typed_files(&env, repo.path(), "Total", "csharp");
    assert!(
        !files.is_empty() && files.iter().all(|f| f.ends_with(".cs")),
        "{files:?}"
    );
    // Conditional compilation is read as one build: one `Bind`, the class's, from its first
    // signature; the directive's symbol is no method.
    let found = defs(&env, repo.path(), "Binder.Bind");
    assert!(
        found.len() == 1
            && found[0].0 == "src/Acme.Billing/Binder.cs"
            && found[0].1 == 6
            && found[0].3 == "method",
        "{found:?}"
    );
    let out = env.patina_in(repo.path(), &["defs", "FEATURE_SPAN", "--json"]);
    assert_eq!(
        out.code(),
        1,
        "a directive's symbol is no definition: {out:?}"
    );
    // `using Acme.Support` names a namespace, not a file: `Money.Of` still reaches it.
    let found = callers(&env, repo.path(), "Of");
    assert!(
        found.contains(&(
            "src/Acme.Billing/Invoice.cs".to_string(),
            "Total".to_string()
        )),
        "{found:?}"
    );
    let found = hits(&env, repo.path(), "Invoice");
    for (path, role) in [
        ("tests/Acme.Billing.Tests/InvoiceTests.cs", "test"),
        ("src/Acme.Billing/Invoice.cs", "source"),
    ] {
        let hit = (path.to_string(), "csharp".to_string(), role.to_string());
        assert!(found.contains(&hit), "{hit:?} in {found:?}");
    }
}

const KOTLIN: &[(&str, &[u8])] = &[
    (
        "src/main/kotlin/com/acme/support/Money.kt",
        b"package com.acme.support

/** An amount in cents. */
data class Money(val cents: Long) {
    companion object {
        fun of(cents: Long): Money = Money(cents)
    }
}
",
    ),
    (
        "src/main/kotlin/com/acme/billing/Invoice.kt",
        b"package com.acme.billing

import com.acme.support.Money

interface Billable {
    fun total(): Money
}

class Invoice : Billable {
    override fun total(): Money {
        return Money.of(100)
    }
}

object Registry {
    fun find(number: String): Invoice? = null
}

fun Invoice.describe(): String = \"invoice\"
",
    ),
    (
        "src/test/kotlin/com/acme/billing/InvoiceTest.kt",
        b"class InvoiceTest {\n    @Test\n    fun totalIsPositive() {}\n}\n",
    ),
    (
        "src/main/kotlin/com/acme/billing/Modules.kt",
        b"package com.acme.billing\n\nval billingModule = module {\n    single { Registry }\n}\n",
    ),
    ("tools/total.py", b"def total(cart):\n    return 0\n"),
];

#[test]
fn kotlin_definitions_types_and_calls() {
    let env = TestEnv::started();
    let repo = git_repo(KOTLIN);
    env.add_repo(repo.path());
    let support = "src/main/kotlin/com/acme/support/Money.kt";
    let billing = "src/main/kotlin/com/acme/billing/Invoice.kt";
    assert_defs(
        &env,
        repo.path(),
        &[
            ("Money", support, 3, 5, "class"),
            ("Money.of", support, 6, 8, "method"),
            ("Billable", billing, 5, 5, "interface"),
            ("Invoice", billing, 9, 9, "class"),
            ("Invoice.total", billing, 10, 13, "method"),
            ("Registry", billing, 15, 15, "class"),
            ("find", billing, 16, 17, "method"),
            // An extension function is its receiver's.
            ("Invoice.describe", billing, 19, 19, "method"),
            // A module built by DSL at the top of a file.
            (
                "billingModule",
                "src/main/kotlin/com/acme/billing/Modules.kt",
                3,
                5,
                "const",
            ),
            (
                "totalIsPositive",
                "src/test/kotlin/com/acme/billing/InvoiceTest.kt",
                2,
                4,
                "method",
            ),
        ],
    );
    let files = typed_files(&env, repo.path(), "total", "kotlin");
    assert!(
        !files.is_empty() && files.iter().all(|f| f.ends_with(".kt")),
        "{files:?}"
    );
    let found = callers(&env, repo.path(), "of");
    assert!(
        found.contains(&(billing.to_string(), "total".to_string())),
        "{found:?}"
    );
    let found = hits(&env, repo.path(), "Invoice");
    for (path, role) in [
        ("src/test/kotlin/com/acme/billing/InvoiceTest.kt", "test"),
        (billing, "source"),
    ] {
        let hit = (path.to_string(), "kotlin".to_string(), role.to_string());
        assert!(found.contains(&hit), "{hit:?} in {found:?}");
    }
}

const LUA: &[(&str, &[u8])] = &[
    (
        "lua/shop/util.lua",
        b"local M = {}

--- The sum of the prices.
function M.sum(prices)
  local total = 0
  for _, p in ipairs(prices) do total = total + p end
  return total
end

return M
",
    ),
    (
        "lua/shop/cart.lua",
        b"local util = require(\"shop.util\")

local Cart = {}

function Cart:total()
  return util.sum(self.prices)
end

local function empty()
  return setmetatable({ prices = {} }, Cart)
end

return Cart
",
    ),
    (
        "spec/cart_spec.lua",
        b"describe(\"cart\", function()\n  it(\"totals\", function() end)\nend)\n",
    ),
    ("tools/total.py", b"def total(cart):\n    return 0\n"),
];

#[test]
fn lua_definitions_types_and_calls() {
    let env = TestEnv::started();
    let repo = git_repo(LUA);
    env.add_repo(repo.path());
    assert_defs(
        &env,
        repo.path(),
        &[
            ("M.sum", "lua/shop/util.lua", 3, 8, "function"),
            ("Cart.total", "lua/shop/cart.lua", 5, 7, "method"),
            ("empty", "lua/shop/cart.lua", 9, 11, "function"),
        ],
    );
    let files = typed_files(&env, repo.path(), "total", "lua");
    assert!(
        !files.is_empty() && files.iter().all(|f| f.ends_with(".lua")),
        "{files:?}"
    );
    let found = callers(&env, repo.path(), "sum");
    assert!(
        found.contains(&("lua/shop/cart.lua".to_string(), "total".to_string())),
        "{found:?}"
    );
    let found = hits(&env, repo.path(), "cart");
    for (path, role) in [
        ("spec/cart_spec.lua", "test"),
        ("lua/shop/cart.lua", "source"),
    ] {
        let hit = (path.to_string(), "lua".to_string(), role.to_string());
        assert!(found.contains(&hit), "{hit:?} in {found:?}");
    }
}

const BASH: &[(&str, &[u8])] = &[
    (
        "scripts/lib/log.sh",
        b"# Logs to stderr with a level.
log_info() {
  echo \"info: $*\" >&2
}
",
    ),
    (
        "scripts/deploy.sh",
        b"#!/usr/bin/env bash
source ./lib/log.sh

function build {
  log_info \"building\"
  cargo build --release
}

deploy() {
  build
}

deploy \"$@\"
",
    ),
    (
        "test/deploy.bats",
        b"@test \"deploy builds\" {\n  run ./scripts/deploy.sh\n}\n",
    ),
    ("tools/build.py", b"def build():\n    return 0\n"),
    // A program without an extension, read by its `#!` line; a library of test helpers that is
    // no test by its `test_` prefix.
    (
        "libexec/shop-release",
        b"#!/usr/bin/env bash
set -e

publish_release() {
  echo \"publishing $1\"
}

publish_release \"$@\"
",
    ),
    (
        "lib/test_helpers.bash",
        b"assert_published() {\n  [ -n \"$1\" ]\n}\n",
    ),
];

#[test]
fn shell_definitions_types_and_calls() {
    let env = TestEnv::started();
    let repo = git_repo(BASH);
    env.add_repo(repo.path());
    assert_defs(
        &env,
        repo.path(),
        &[
            ("log_info", "scripts/lib/log.sh", 1, 4, "function"),
            ("build", "scripts/deploy.sh", 4, 7, "function"),
            ("deploy", "scripts/deploy.sh", 9, 11, "function"),
            ("publish_release", "libexec/shop-release", 4, 6, "function"),
            (
                "assert_published",
                "lib/test_helpers.bash",
                1,
                3,
                "function",
            ),
        ],
    );
    let found = hits(&env, repo.path(), "publish_release");
    let hit = (
        "libexec/shop-release".to_string(),
        "bash".to_string(),
        "source".to_string(),
    );
    assert!(found.contains(&hit), "{hit:?} in {found:?}");
    let found = hits(&env, repo.path(), "assert_published");
    let hit = (
        "lib/test_helpers.bash".to_string(),
        "bash".to_string(),
        "source".to_string(),
    );
    assert!(found.contains(&hit), "{hit:?} in {found:?}");
    let files = typed_files(&env, repo.path(), "build", "sh");
    assert!(
        !files.is_empty()
            && files
                .iter()
                .all(|f| f.ends_with(".sh") || f.ends_with(".bats")),
        "{files:?}"
    );
    // `source ./lib/log.sh` leads to the file from the script's folder.
    let found = callers(&env, repo.path(), "log_info");
    assert!(
        found.contains(&("scripts/deploy.sh".to_string(), "build".to_string())),
        "{found:?}"
    );
    let found = hits(&env, repo.path(), "deploy");
    for (path, role) in [
        ("test/deploy.bats", "test"),
        ("scripts/deploy.sh", "source"),
    ] {
        let hit = (path.to_string(), "bash".to_string(), role.to_string());
        assert!(found.contains(&hit), "{hit:?} in {found:?}");
    }
}

const SCALA: &[(&str, &[u8])] = &[
    (
        "src/main/scala/com/acme/support/Money.scala",
        b"package com.acme.support

/** Sums of cents. */
object Money {
  def sum(cents: List[Long]): Long = cents.sum
}
",
    ),
    (
        "src/main/scala/com/acme/billing/Invoice.scala",
        b"package com.acme.billing

import com.acme.support.Money

trait Billable {
  def total: Long
}

case class Invoice(lines: List[Long]) extends Billable {
  def total: Long = Money.sum(lines)
}
",
    ),
    (
        "src/test/scala/com/acme/billing/InvoiceSpec.scala",
        b"class InvoiceSpec extends AnyFunSuite {\n  test(\"total\") {\n    assert(Invoice(Nil).total == 0)\n  }\n}\n",
    ),
    ("tools/total.py", b"def total(cart):\n    return 0\n"),
];

#[test]
fn scala_definitions_types_and_calls() {
    let env = TestEnv::started();
    let repo = git_repo(SCALA);
    env.add_repo(repo.path());
    let support = "src/main/scala/com/acme/support/Money.scala";
    let billing = "src/main/scala/com/acme/billing/Invoice.scala";
    assert_defs(
        &env,
        repo.path(),
        &[
            ("Money", support, 3, 4, "class"),
            ("Money.sum", support, 5, 6, "method"),
            ("Billable", billing, 5, 5, "trait"),
            ("Invoice", billing, 9, 9, "class"),
            ("Invoice.total", billing, 10, 11, "method"),
            (
                "InvoiceSpec",
                "src/test/scala/com/acme/billing/InvoiceSpec.scala",
                1,
                5,
                "class",
            ),
        ],
    );
    let files = typed_files(&env, repo.path(), "total", "scala");
    assert!(
        !files.is_empty() && files.iter().all(|f| f.ends_with(".scala")),
        "{files:?}"
    );
    let found = callers(&env, repo.path(), "sum");
    assert!(
        found.contains(&(billing.to_string(), "total".to_string())),
        "{found:?}"
    );
    let found = hits(&env, repo.path(), "Invoice");
    for (path, role) in [
        ("src/test/scala/com/acme/billing/InvoiceSpec.scala", "test"),
        (billing, "source"),
    ] {
        let hit = (path.to_string(), "scala".to_string(), role.to_string());
        assert!(found.contains(&hit), "{hit:?} in {found:?}");
    }
}

const ELIXIR: &[(&str, &[u8])] = &[
    (
        "lib/acme/support/money.ex",
        b"defmodule Acme.Support.Money do
  @moduledoc \"Sums of cents.\"

  @doc \"The sum of the cents.\"
  def sum(cents), do: Enum.sum(cents)
end
",
    ),
    (
        "lib/acme/billing/invoice.ex",
        b"defmodule Acme.Billing.Invoice do
  alias Acme.Support.Money

  defstruct lines: []

  def total(%__MODULE__{lines: lines}) do
    Money.sum(lines)
  end

  defp check(invoice) when is_map(invoice), do: invoice
end
",
    ),
    (
        "lib/acme/billing/store.ex",
        b"defmodule Acme.Billing.Store do
  @moduledoc \"Where invoices are kept.\"

  @doc \"Saves an invoice.\"
  @callback save(invoice :: term) :: :ok | {:error, term}
end
",
    ),
    (
        "test/acme/billing/invoice_test.exs",
        b"defmodule Acme.Billing.InvoiceTest do\n  use ExUnit.Case\n\n  test \"total\" do\n    assert Acme.Billing.Invoice.total(%Acme.Billing.Invoice{}) == 0\n  end\nend\n",
    ),
    ("tools/total.py", b"def total(cart):\n    return 0\n"),
];

#[test]
fn elixir_definitions_types_and_calls() {
    let env = TestEnv::started();
    let repo = git_repo(ELIXIR);
    env.add_repo(repo.path());
    let support = "lib/acme/support/money.ex";
    let billing = "lib/acme/billing/invoice.ex";
    let store = "lib/acme/billing/store.ex";
    assert_defs(
        &env,
        repo.path(),
        &[
            ("Money", support, 1, 2, "module"),
            ("Support.Money", support, 1, 2, "module"),
            ("Money.sum", support, 4, 6, "function"),
            ("Billing.Invoice", billing, 1, 4, "module"),
            ("Invoice.total", billing, 6, 8, "function"),
            ("check", billing, 10, 11, "function"),
            // A behaviour's callback is a definition: a typespec of its module.
            ("Billing.Store", store, 1, 2, "module"),
            ("Store.save", store, 4, 6, "type"),
            (
                "InvoiceTest",
                "test/acme/billing/invoice_test.exs",
                1,
                7,
                "module",
            ),
        ],
    );
    let files = typed_files(&env, repo.path(), "total", "elixir");
    assert!(
        !files.is_empty()
            && files
                .iter()
                .all(|f| f.ends_with(".ex") || f.ends_with(".exs")),
        "{files:?}"
    );
    let found = callers(&env, repo.path(), "sum");
    assert!(
        found.contains(&(billing.to_string(), "total".to_string())),
        "{found:?}"
    );
    let found = hits(&env, repo.path(), "Invoice");
    for (path, role) in [
        ("test/acme/billing/invoice_test.exs", "test"),
        (billing, "source"),
    ] {
        let hit = (path.to_string(), "elixir".to_string(), role.to_string());
        assert!(found.contains(&hit), "{hit:?} in {found:?}");
    }
}

/// The `(path, symbol)` of the first hit of `patina q QUERY --json`.
fn first_hit(env: &TestEnv, repo: &std::path::Path, query: &str) -> (String, String) {
    let out = env.patina_in(repo, &["q", query, "--json", "-n", "5"]);
    assert_eq!(out.code(), 0, "q {query}: {out:?}");
    out.stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["type"] == "hit")
        .map(|v| {
            let field = |k: &str| v[k].as_str().unwrap_or_default().to_string();
            (field("repo_path"), field("symbol"))
        })
        .unwrap_or_default()
}

/// One repository of the later languages (Swift, Haskell, Zig, Dart), each with a vocabulary of
/// its own, so that a name and a question each have one right answer.
const POLYGLOT: &[(&str, &[u8])] = &[
    (
        "Package.swift",
        b"// swift-tools-version:5.9\nimport PackageDescription\n\nlet package = Package(name: \"Shop\")\n",
    ),
    (
        "Sources/Shipping/Parcel.swift",
        b"/// Postage of parcels.
struct Parcel {
    let grams: Int

    /// The postage fee of a parcel, from its weight in grams.
    static func postageFee(grams: Int) -> Int {
        return grams / 100 + 3
    }
}
",
    ),
    (
        "Sources/Checkout/Basket.swift",
        b"import Foundation
import Shipping

final class Basket: Container {
    init() {}

    func charge(grams: Int) -> Int {
        return Parcel.postageFee(grams: grams)
    }
}

extension Basket: CustomStringConvertible {
    var description: String { \"basket\" }
}
",
    ),
    (
        "Tests/CheckoutTests/BasketTests.swift",
        b"import XCTest\n@testable import Checkout\n\nfinal class BasketTests: XCTestCase {\n    func testCharge() { XCTAssertEqual(Basket().charge(grams: 0), 3) }\n}\n",
    ),
    ("acme.cabal", b"cabal-version: 3.0\nname: acme\nversion: 0.1\n"),
    (
        "src/Acme/Rates.hs",
        b"module Acme.Rates (exchangeRate) where

-- | The exchange rate between two currencies, in basis points.
exchangeRate :: String -> String -> Int
exchangeRate \"EUR\" \"USD\" = 10800
exchangeRate _ _ = 10000
",
    ),
    (
        "src/Acme/Convert.hs",
        b"module Acme.Convert (convert) where

import Acme.Rates (exchangeRate)

convert :: Int -> Int
convert cents = cents * exchangeRate \"EUR\" \"USD\" `div` 10000
",
    ),
    (
        "test/Acme/RatesSpec.hs",
        b"module Acme.RatesSpec (spec) where\n\nspec :: Spec\nspec = it \"rates\" (exchangeRate \"A\" \"B\" `shouldBe` 10000)\n",
    ),
    (
        "build.zig",
        b"const std = @import(\"std\");\n\npub fn build(b: *std.Build) void {\n    _ = b;\n}\n",
    ),
    (
        "src/tax/vat.zig",
        b"/// The value-added tax owed on a net amount, in cents.
pub fn vatOwed(net: u64) u64 {
    return net / 5;
}
",
    ),
    (
        "src/till.zig",
        b"const vat = @import(\"tax/vat.zig\");

pub const Till = struct {
    pub fn ring(net: u64) u64 {
        return net + vat.vatOwed(net);
    }
};

test \"ring adds tax\" {
    _ = Till.ring(100);
}
",
    ),
    (
        "test/till_test.zig",
        b"const till = @import(\"../src/till.zig\");\n\ntest \"till rings\" {\n    _ = till.Till.ring(1);\n}\n",
    ),
    ("pubspec.yaml", b"name: acme\nenvironment:\n  sdk: ^3.0.0\n"),
    (
        "lib/src/loyalty.dart",
        b"/// Loyalty points a customer earns.
class Loyalty {
  /// The loyalty points earned for spending an amount of cents.
  static int pointsEarned(int cents) {
    return cents ~/ 100;
  }
}
",
    ),
    (
        "lib/src/receipt.dart",
        b"import 'package:acme/src/loyalty.dart';

class Receipt extends Printable {
  final int cents;

  Receipt(this.cents);

  String render() {
    final points = Loyalty.pointsEarned(cents);
    return 'points: $points';
  }
}
",
    ),
    (
        "test/receipt_test.dart",
        b"import 'package:acme/src/receipt.dart';\n\nvoid main() {\n  test('render', () => Receipt(1).render());\n}\n",
    ),
    (
        "proto/acme/support/money.proto",
        b"syntax = \"proto3\";
package acme.support;

// A sum of money in cents, with its currency code.
message Money {
  string currency_code = 1;
  int64 cents = 2;
}
",
    ),
    (
        "proto/acme/billing/ledger.proto",
        b"syntax = \"proto3\";
package acme.billing;

import \"acme/support/money.proto\";

message LedgerEntry {
  acme.support.Money amount = 1;
}
",
    ),
    (
        "infra/variables.tf",
        b"# How many days the access logs are retained before they expire.
variable \"retention_days\" {
  type    = number
  default = 30
}
",
    ),
    (
        "infra/main.tf",
        b"resource \"aws_s3_bucket\" \"access_logs\" {
  bucket = \"acme-access-logs\"
}

resource \"aws_s3_bucket_lifecycle_configuration\" \"expiry\" {
  bucket = aws_s3_bucket.access_logs.id
  days   = var.retention_days
}
",
    ),
    (
        "Courier/ACMECourier.h",
        b"#import <Foundation/Foundation.h>

NS_ASSUME_NONNULL_BEGIN

/// A courier that takes crates away.
@interface ACMECourier : NSObject
- (void)dispatchCrate:(NSInteger)weight;
@end

NS_ASSUME_NONNULL_END
",
    ),
    (
        "Courier/ACMECourier.m",
        b"#import \"ACMECourier.h\"

@implementation ACMECourier

/// Hands a wooden crate to the courier for overnight delivery.
- (void)dispatchCrate:(NSInteger)weight {
    self.load += weight;
}

@end
",
    ),
    (
        "Courier/ACMEDepot.m",
        b"#import \"ACMECourier.h\"

@implementation ACMEDepot

- (void)loadTruck:(ACMECourier *)courier {
    [courier dispatchCrate:3];
}

@end
",
    ),
    (
        "CourierTests/ACMEDepotTests.m",
        b"#import <XCTest/XCTest.h>
#import \"ACMECourier.h\"

@interface ACMEDepotTests : XCTestCase
@end

@implementation ACMEDepotTests

- (void)testLoadTruckDispatchesACrate {
    [[ACMEDepot new] loadTruck:[ACMECourier new]];
}

@end
",
    ),
    (
        "R/humidity.R",
        b"#' Mean relative humidity of a greenhouse over its sensor readings.
#'
#' @param readings A numeric vector of readings.
#' @export
greenhouse_humidity <- function(readings) {
  mean(clamp_reading(readings))
}
",
    ),
    (
        "R/clamp.R",
        b"clamp_reading <- function(x) {
  pmin(pmax(x, 0), 100)
}
",
    ),
    (
        "R/sensor.R",
        b"Sensor <- R6::R6Class(\"Sensor\",
  public = list(
    calibrate = function(offset) {
      private$offset <- offset
    }
  )
)
",
    ),
    (
        "tests/testthat/test-humidity.R",
        b"test_that(\"humidity is a mean\", {
  expect_equal(greenhouse_humidity(c(40, 60)), 50)
})
",
    ),
    (
        "apps/apiary/src/hive.erl",
        b"-module(hive).
-export([honey_yield/1]).

%% @doc Kilograms of honey a beehive yields from its frames at harvest.
-spec honey_yield([integer()]) -> integer().
honey_yield([]) ->
    0;
honey_yield([Frame | Rest]) ->
    comb:weigh(Frame) + honey_yield(Rest).
",
    ),
    (
        "apps/apiary/src/comb.erl",
        b"-module(comb).
-export([weigh/1]).

weigh(Frame) ->
    Frame * 2.
",
    ),
    (
        "apps/apiary/test/hive_SUITE.erl",
        b"-module(hive_SUITE).
-export([all/0, yield_test/1]).

all() -> [yield_test].

yield_test(_Config) ->
    4 = hive:honey_yield([1, 1]).
",
    ),
    (
        "db/schema.sql",
        b"-- Lighthouses along the coast, with the range of their lamps.
CREATE TABLE lighthouses (
    id SERIAL PRIMARY KEY,
    lamp_range_nm INTEGER NOT NULL
);
",
    ),
    (
        "db/migrations/0002_keepers.sql",
        b"CREATE TABLE keepers (
    id SERIAL PRIMARY KEY,
    lighthouse_id INTEGER REFERENCES lighthouses (id)
);
",
    ),
    (
        "src/Tides.jl",
        "module Tides

include(\"moon.jl\")

\"\"\"
    tide_height(hour)

Height of the sea tide in metres at a given hour of the lunar day.
\"\"\"
function tide_height(hour)
    amplitude() * cos(lunar_phase(hour))
end

end
"
        .as_bytes(),
    ),
    (
        "src/moon.jl",
        "lunar_phase(hour) = 2π * hour / 24.84

amplitude() = 1.8
"
        .as_bytes(),
    ),
    (
        "test/runtests.jl",
        "using Tides
using Test

@test Tides.tide_height(0) ≈ 1.8
"
        .as_bytes(),
    ),
    (
        "lib/glacier.ml",
        b"(** Metres of ice a glacier loses to melting over a summer of warm weeks. *)
let melt_loss temps = Thermo.thaw_sum temps *. 0.004
",
    ),
    (
        "lib/glacier.mli",
        b"(** Metres of ice a glacier loses to melting over a summer of warm weeks. *)
val melt_loss : float list -> float
",
    ),
    (
        "lib/thermo.ml",
        b"let thaw_sum temps = List.fold_left ( +. ) 0. temps
",
    ),
    (
        "test/test_glacier.ml",
        b"let () = assert (Glacier.melt_loss [] = 0.)
",
    ),
];

#[test]
fn later_languages_definitions_questions_and_calls() {
    let env = TestEnv::started();
    let repo = git_repo(POLYGLOT);
    env.add_repo(repo.path());
    let parcel = "Sources/Shipping/Parcel.swift";
    let basket = "Sources/Checkout/Basket.swift";
    assert_defs(
        &env,
        repo.path(),
        &[
            ("Parcel", parcel, 1, 3, "struct"),
            ("Parcel.postageFee", parcel, 5, 9, "method"),
            ("Basket", basket, 4, 4, "class"),
            ("init", basket, 5, 5, "method"),
            ("Basket.charge", basket, 7, 10, "method"),
        ],
    );
    let files = typed_files(&env, repo.path(), "charge", "swift");
    assert!(
        !files.is_empty() && files.iter().all(|f| f.ends_with(".swift")),
        "{files:?}"
    );
    // `import Shipping` reaches the target's folder: `Parcel.postageFee` is called from there.
    let found = callers(&env, repo.path(), "postageFee");
    assert!(
        found.contains(&(basket.to_string(), "charge".to_string())),
        "{found:?}"
    );
    for query in ["postageFee", "what is the postage fee of a parcel"] {
        assert_eq!(
            first_hit(&env, repo.path(), query),
            (parcel.to_string(), "postageFee".to_string()),
            "{query}"
        );
    }
    let found = hits(&env, repo.path(), "Basket");
    for (path, role) in [
        ("Tests/CheckoutTests/BasketTests.swift", "test"),
        (basket, "source"),
    ] {
        let hit = (path.to_string(), "swift".to_string(), role.to_string());
        assert!(found.contains(&hit), "{hit:?} in {found:?}");
    }
    haskell(&env, repo.path());
    zig(&env, repo.path());
    dart(&env, repo.path());
    protobuf(&env, repo.path());
    terraform(&env, repo.path());
    objc(&env, repo.path());
    r(&env, repo.path());
    erlang(&env, repo.path());
    sql(&env, repo.path());
    julia(&env, repo.path());
    ocaml(&env, repo.path());
    // `patina status` counts the files of each language.
    let out = env.patina(&["status"]);
    assert_eq!(out.code(), 0, "{out:?}");
    for count in [
        "swift 4",
        "haskell 3",
        "zig 4",
        "dart 3",
        "protobuf 2",
        "hcl 2",
        // The header is Objective-C by what it declares.
        "objc 4",
        "r 4",
        "erlang 3",
        "sql 2",
        "julia 3",
        "ocaml 3",
        "ocaml_interface 1",
    ] {
        assert!(out.stdout.contains(count), "{count}: {}", out.stdout);
    }
}

/// The name, a question, `-t`, callers through an import list and roles, in Haskell.
fn haskell(env: &TestEnv, repo: &std::path::Path) {
    let rates = "src/Acme/Rates.hs";
    let convert = "src/Acme/Convert.hs";
    // The equations, signature and Haddock comment are one definition.
    assert_defs(
        env,
        repo,
        &[
            ("exchangeRate", rates, 3, 6, "function"),
            ("convert", convert, 5, 6, "function"),
        ],
    );
    let files = typed_files(env, repo, "exchangeRate", "haskell");
    assert!(
        !files.is_empty() && files.iter().all(|f| f.ends_with(".hs")),
        "{files:?}"
    );
    let found = callers(env, repo, "exchangeRate");
    assert!(
        found.contains(&(convert.to_string(), "convert".to_string())),
        "{found:?}"
    );
    for query in [
        "exchangeRate",
        "what is the exchange rate between two currencies",
    ] {
        assert_eq!(
            first_hit(env, repo, query),
            (rates.to_string(), "exchangeRate".to_string()),
            "{query}"
        );
    }
    let found = hits(env, repo, "exchangeRate");
    for (path, role) in [("test/Acme/RatesSpec.hs", "test"), (rates, "source")] {
        let hit = (path.to_string(), "haskell".to_string(), role.to_string());
        assert!(found.contains(&hit), "{hit:?} in {found:?}");
    }
}

/// The name, a question, `-t`, callers through `@import` and roles, in Zig.
fn zig(env: &TestEnv, repo: &std::path::Path) {
    let vat = "src/tax/vat.zig";
    let till = "src/till.zig";
    assert_defs(
        env,
        repo,
        &[
            ("vatOwed", vat, 1, 4, "function"),
            ("Till", till, 3, 3, "struct"),
            ("Till.ring", till, 4, 7, "method"),
            ("ring adds tax", till, 9, 11, "function"),
        ],
    );
    let files = typed_files(env, repo, "ring", "zig");
    assert!(
        !files.is_empty() && files.iter().all(|f| f.ends_with(".zig")),
        "{files:?}"
    );
    let found = callers(env, repo, "vatOwed");
    assert!(
        found.contains(&(till.to_string(), "ring".to_string())),
        "{found:?}"
    );
    for query in [
        "vatOwed",
        "how much value-added tax is owed on a net amount",
    ] {
        assert_eq!(
            first_hit(env, repo, query),
            (vat.to_string(), "vatOwed".to_string()),
            "{query}"
        );
    }
    let found = hits(env, repo, "ring");
    for (path, role) in [("test/till_test.zig", "test"), (till, "source")] {
        let hit = (path.to_string(), "zig".to_string(), role.to_string());
        assert!(found.contains(&hit), "{hit:?} in {found:?}");
    }
}

/// The name, a question, `-t`, callers through a package import and roles, in Dart.
fn dart(env: &TestEnv, repo: &std::path::Path) {
    let loyalty = "lib/src/loyalty.dart";
    let receipt = "lib/src/receipt.dart";
    assert_defs(
        env,
        repo,
        &[
            ("Loyalty", loyalty, 1, 2, "class"),
            ("Loyalty.pointsEarned", loyalty, 3, 7, "method"),
            ("Receipt", receipt, 3, 4, "class"),
            ("Receipt.Receipt", receipt, 6, 6, "method"),
            ("Receipt.render", receipt, 8, 12, "method"),
        ],
    );
    let files = typed_files(env, repo, "render", "dart");
    assert!(
        !files.is_empty() && files.iter().all(|f| f.ends_with(".dart")),
        "{files:?}"
    );
    let found = callers(env, repo, "pointsEarned");
    assert!(
        found.contains(&(receipt.to_string(), "render".to_string())),
        "{found:?}"
    );
    for query in [
        "pointsEarned",
        "how many loyalty points are earned for spending cents",
    ] {
        assert_eq!(
            first_hit(env, repo, query),
            (loyalty.to_string(), "pointsEarned".to_string()),
            "{query}"
        );
    }
    let found = hits(env, repo, "Receipt");
    for (path, role) in [("test/receipt_test.dart", "test"), (receipt, "source")] {
        let hit = (path.to_string(), "dart".to_string(), role.to_string());
        assert!(found.contains(&hit), "{hit:?} in {found:?}");
    }
}

/// The name, a question, `-t` and references through an import, in Protocol Buffers.
fn protobuf(env: &TestEnv, repo: &std::path::Path) {
    let money = "proto/acme/support/money.proto";
    let ledger = "proto/acme/billing/ledger.proto";
    assert_defs(
        env,
        repo,
        &[
            ("Money", money, 4, 8, "struct"),
            ("LedgerEntry", ledger, 6, 8, "struct"),
        ],
    );
    let files = typed_files(env, repo, "Money", "protobuf");
    assert!(
        !files.is_empty() && files.iter().all(|f| f.ends_with(".proto")),
        "{files:?}"
    );
    let out = env.patina_in(repo, &["refs", "Money"]);
    assert!(
        out.stdout
            .contains(&format!("{ledger}\n  7  in LedgerEntry  [import]")),
        "{}",
        out.stdout
    );
    for query in ["Money", "a sum of money in cents with its currency code"] {
        assert_eq!(
            first_hit(env, repo, query),
            (money.to_string(), "Money".to_string()),
            "{query}"
        );
    }
}

/// The name, a question, `-t` and references by address, in Terraform's HCL.
fn terraform(env: &TestEnv, repo: &std::path::Path) {
    let variables = "infra/variables.tf";
    let main = "infra/main.tf";
    assert_defs(
        env,
        repo,
        &[
            ("retention_days", variables, 1, 5, "const"),
            ("var.retention_days", variables, 1, 5, "const"),
            ("aws_s3_bucket.access_logs", main, 1, 3, "struct"),
        ],
    );
    let files = typed_files(env, repo, "retention_days", "tf");
    assert!(
        !files.is_empty() && files.iter().all(|f| f.ends_with(".tf")),
        "{files:?}"
    );
    let out = env.patina_in(repo, &["refs", "retention_days"]);
    assert!(
        out.stdout
            .contains(&format!("{main}\n  7  in expiry  [exact]")),
        "{}",
        out.stdout
    );
    for query in [
        "retention_days",
        "how many days are the access logs retained",
    ] {
        assert_eq!(
            first_hit(env, repo, query),
            (variables.to_string(), "retention_days".to_string()),
            "{query}"
        );
    }
}

/// The name, a question, `-t`, callers through `#import` and roles, in Objective-C.
fn objc(env: &TestEnv, repo: &std::path::Path) {
    let header = "Courier/ACMECourier.h";
    let courier = "Courier/ACMECourier.m";
    let depot = "Courier/ACMEDepot.m";
    assert_defs(
        env,
        repo,
        &[
            // `NS_ASSUME_NONNULL_BEGIN` before it does not hide the declaration.
            ("ACMECourier", header, 5, 8, "class"),
            ("ACMECourier", courier, 3, 3, "impl"),
            ("ACMECourier.dispatchCrate", courier, 5, 10, "method"),
        ],
    );
    let files = typed_files(env, repo, "dispatchCrate", "objc");
    assert!(
        !files.is_empty() && files.iter().all(|f| f.ends_with(".m") || f.ends_with(".h")),
        "{files:?}"
    );
    // `#import "ACMECourier.h"` reaches the header and its implementation.
    let found = callers(env, repo, "dispatchCrate");
    assert!(
        found.contains(&(depot.to_string(), "loadTruck".to_string())),
        "{found:?}"
    );
    let out = env.patina_in(repo, &["refs", "dispatchCrate"]);
    assert!(
        out.stdout
            .contains(&format!("{depot}\n  6  in loadTruck  [import]")),
        "{}",
        out.stdout
    );
    let (path, symbol) = first_hit(env, repo, "dispatchCrate");
    assert!(
        [header, courier].contains(&path.as_str()) && symbol == "dispatchCrate",
        "{path} {symbol}"
    );
    assert_eq!(
        first_hit(
            env,
            repo,
            "hand a wooden crate to the courier for overnight delivery"
        ),
        (courier.to_string(), "dispatchCrate".to_string())
    );
    let found = hits(env, repo, "loadTruck");
    for (path, role) in [("CourierTests/ACMEDepotTests.m", "test"), (depot, "source")] {
        let hit = (path.to_string(), "objc".to_string(), role.to_string());
        assert!(found.contains(&hit), "{hit:?} in {found:?}");
    }
}

/// The name, a question, `-t`, callers within a package and roles, in R.
fn r(env: &TestEnv, repo: &std::path::Path) {
    let humidity = "R/humidity.R";
    let sensor = "R/sensor.R";
    assert_defs(
        env,
        repo,
        &[
            ("greenhouse_humidity", humidity, 1, 7, "function"),
            ("Sensor", sensor, 1, 2, "class"),
            ("Sensor.calibrate", sensor, 3, 7, "method"),
        ],
    );
    let files = typed_files(env, repo, "clamp_reading", "r");
    assert!(
        !files.is_empty() && files.iter().all(|f| f.ends_with(".R")),
        "{files:?}"
    );
    // The package's `R/` folder is one namespace.
    let found = callers(env, repo, "clamp_reading");
    assert!(
        found.contains(&(humidity.to_string(), "greenhouse_humidity".to_string())),
        "{found:?}"
    );
    let out = env.patina_in(repo, &["refs", "clamp_reading"]);
    assert!(
        out.stdout
            .contains(&format!("{humidity}\n  6  in greenhouse_humidity  [exact]")),
        "{}",
        out.stdout
    );
    for query in [
        "greenhouse_humidity",
        "mean relative humidity of a greenhouse",
    ] {
        assert_eq!(
            first_hit(env, repo, query),
            (humidity.to_string(), "greenhouse_humidity".to_string()),
            "{query}"
        );
    }
    let found = hits(env, repo, "greenhouse_humidity");
    for (path, role) in [
        ("tests/testthat/test-humidity.R", "test"),
        (humidity, "source"),
    ] {
        let hit = (path.to_string(), "r".to_string(), role.to_string());
        assert!(found.contains(&hit), "{hit:?} in {found:?}");
    }
}

/// The name, a question, `-t`, callers through a module and roles, in Erlang.
fn erlang(env: &TestEnv, repo: &std::path::Path) {
    let hive = "apps/apiary/src/hive.erl";
    // Its comment, its `-spec` and both clauses.
    assert_defs(env, repo, &[("honey_yield", hive, 4, 9, "function")]);
    let files = typed_files(env, repo, "weigh", "erlang");
    assert!(
        !files.is_empty() && files.iter().all(|f| f.ends_with(".erl")),
        "{files:?}"
    );
    // `comb:weigh(…)`: module `comb` is `comb.erl`.
    let found = callers(env, repo, "weigh");
    assert!(
        found.contains(&(hive.to_string(), "honey_yield".to_string())),
        "{found:?}"
    );
    let out = env.patina_in(repo, &["refs", "weigh"]);
    assert!(
        out.stdout
            .contains(&format!("{hive}\n  9  in honey_yield  [import]")),
        "{}",
        out.stdout
    );
    for query in [
        "honey_yield",
        "kilograms of honey a beehive yields at harvest",
    ] {
        assert_eq!(
            first_hit(env, repo, query),
            (hive.to_string(), "honey_yield".to_string()),
            "{query}"
        );
    }
    let found = hits(env, repo, "honey_yield");
    for (path, role) in [
        ("apps/apiary/test/hive_SUITE.erl", "test"),
        (hive, "source"),
    ] {
        let hit = (path.to_string(), "erlang".to_string(), role.to_string());
        assert!(found.contains(&hit), "{hit:?} in {found:?}");
    }
}

/// The name, a question, `-t` and references, in SQL.
fn sql(env: &TestEnv, repo: &std::path::Path) {
    let schema = "db/schema.sql";
    let keepers = "db/migrations/0002_keepers.sql";
    assert_defs(
        env,
        repo,
        &[
            ("lighthouses", schema, 1, 5, "struct"),
            ("keepers", keepers, 1, 4, "struct"),
        ],
    );
    let files = typed_files(env, repo, "lighthouses", "sql");
    assert!(
        !files.is_empty() && files.iter().all(|f| f.ends_with(".sql")),
        "{files:?}"
    );
    // A foreign key names the table; across files only by its name (SQL has no imports).
    let out = env.patina_in(repo, &["refs", "lighthouses"]);
    assert!(
        out.stdout
            .contains(&format!("{keepers}\n  3  in keepers  [name_only]")),
        "{}",
        out.stdout
    );
    for query in [
        "lighthouses",
        "the range of the lamps of lighthouses along the coast",
    ] {
        assert_eq!(
            first_hit(env, repo, query),
            (schema.to_string(), "lighthouses".to_string()),
            "{query}"
        );
    }
}

/// The name, a question, `-t`, callers within a package and roles, in Julia.
fn julia(env: &TestEnv, repo: &std::path::Path) {
    let tides = "src/Tides.jl";
    // Its docstring with it; the module's function.
    assert_defs(
        env,
        repo,
        &[
            ("tide_height", tides, 5, 14, "function"),
            ("Tides", tides, 1, 3, "module"),
        ],
    );
    let files = typed_files(env, repo, "lunar_phase", "julia");
    assert!(
        !files.is_empty() && files.iter().all(|f| f.ends_with(".jl")),
        "{files:?}"
    );
    // A package's `src/` is one module.
    let found = callers(env, repo, "lunar_phase");
    assert!(
        found.contains(&(tides.to_string(), "tide_height".to_string())),
        "{found:?}"
    );
    let out = env.patina_in(repo, &["refs", "lunar_phase"]);
    assert!(
        out.stdout
            .contains(&format!("{tides}\n  11  in tide_height  [exact]")),
        "{}",
        out.stdout
    );
    for query in [
        "tide_height",
        "height of the sea tide at an hour of the lunar day",
    ] {
        assert_eq!(
            first_hit(env, repo, query),
            (tides.to_string(), "tide_height".to_string()),
            "{query}"
        );
    }
    let found = hits(env, repo, "tide_height");
    for (path, role) in [("test/runtests.jl", "test"), (tides, "source")] {
        let hit = (path.to_string(), "julia".to_string(), role.to_string());
        assert!(found.contains(&hit), "{hit:?} in {found:?}");
    }
}

/// The name, a question, `-t`, callers through a module and roles, in OCaml.
fn ocaml(env: &TestEnv, repo: &std::path::Path) {
    let glacier = "lib/glacier.ml";
    let interface = "lib/glacier.mli";
    // The implementation and the interface, each with its doc comment.
    assert_defs(
        env,
        repo,
        &[
            ("melt_loss", glacier, 1, 2, "function"),
            ("melt_loss", interface, 1, 2, "function"),
        ],
    );
    let files = typed_files(env, repo, "thaw_sum", "ocaml");
    assert!(
        !files.is_empty()
            && files
                .iter()
                .all(|f| f.ends_with(".ml") || f.ends_with(".mli")),
        "{files:?}"
    );
    // `Thermo.thaw_sum`: module `Thermo` is `thermo.ml`.
    let found = callers(env, repo, "thaw_sum");
    assert!(
        found.contains(&(glacier.to_string(), "melt_loss".to_string())),
        "{found:?}"
    );
    let out = env.patina_in(repo, &["refs", "thaw_sum"]);
    assert!(
        out.stdout
            .contains(&format!("{glacier}\n  2  in melt_loss  [import]")),
        "{}",
        out.stdout
    );
    for query in [
        "melt_loss",
        "metres of ice a glacier loses to melting over a summer",
    ] {
        let (path, symbol) = first_hit(env, repo, query);
        assert!(
            [glacier, interface].contains(&path.as_str()) && symbol == "melt_loss",
            "{query}: {path} {symbol}"
        );
    }
    let found = hits(env, repo, "melt_loss");
    for (path, role) in [("test/test_glacier.ml", "test"), (glacier, "source")] {
        let hit = (path.to_string(), "ocaml".to_string(), role.to_string());
        assert!(found.contains(&hit), "{hit:?} in {found:?}");
    }
}

/// cobra's layout: `doc/` is a Go package (it generates man pages) that the commands import.
const GO_DOC_PACKAGE: &[(&str, &[u8])] = &[
    (
        "doc/man_docs.go",
        b"package doc\n\n// GenManTree writes a man page for every command.\nfunc GenManTree(dir string) error {\n\treturn nil\n}\n",
    ),
    (
        "cmd/gen/main.go",
        b"package main\n\nimport \"example.com/cli/doc\"\n\nfunc main() {\n\t_ = doc.GenManTree(\"man\")\n}\n",
    ),
    (
        "doc/README.md",
        b"# Generating man pages\n\nCall GenManTree with a folder.\n",
    ),
    ("doc/py/__init__.py", b"from .pages import render_pages\n"),
    (
        "doc/py/pages.py",
        b"def render_pages(tree):\n    \"\"\"GenManTree for Python users.\"\"\"\n    return tree\n",
    ),
    ("docs/conf.py", b"project = \"GenManTree\"\n"),
    (
        "docs/snippets/hello.go",
        b"package main\n\nfunc main() { println(\"GenManTree\") }\n",
    ),
];

#[test]
fn a_go_package_in_a_doc_folder_is_source_and_its_prose_docs() {
    let env = TestEnv::started();
    let repo = git_repo(GO_DOC_PACKAGE);
    env.add_repo(repo.path());
    let found = hits(&env, repo.path(), "GenManTree");
    for (path, language, role) in [
        ("doc/man_docs.go", "go", "source"),
        ("doc/README.md", "markdown", "docs"),
        ("docs/snippets/hello.go", "go", "docs"),
        // Python's rule: a folder with an `__init__.py` is a package.
        ("doc/py/pages.py", "python", "source"),
        ("docs/conf.py", "python", "docs"),
    ] {
        let hit = (path.to_string(), language.to_string(), role.to_string());
        assert!(found.contains(&hit), "{hit:?} in {found:?}");
    }
}
