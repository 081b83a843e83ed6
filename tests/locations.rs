//! Exact where the user points: a pasted `path:line`, a stack trace in any common format, a
//! compiler or linter error, or a pytest node id lands on the chunk that holds that line (or
//! defines that test), first; the frames of a trace follow in the trace's order; frames outside
//! the repository, and lines or paths that are not there, are said so in a notice.

use std::fmt::Write as _;

use crate::util::{Repo, TestEnv, git, git_out, git_repo, query, seen};

/// `n` functions named by `names`, in a language's syntax, each with a dozen body lines so every
/// definition is a chunk of its own; the marker `<name>-here` sits in the middle of each body.
fn functions(lang: &str, names: &[&str]) -> String {
    let mut s = String::new();
    for name in names {
        let body = |s: &mut String, indent: &str, stmt: &dyn Fn(usize) -> String| {
            for i in 0..12 {
                let _ = writeln!(s, "{indent}{}", stmt(i));
                if i == 6 {
                    let _ = writeln!(s, "{indent}{}", marker(lang, name));
                }
            }
        };
        match lang {
            "rs" => {
                let _ = writeln!(s, "pub fn {name}(x: u64) -> u64 {{");
                body(&mut s, "    ", &|i| format!("let v{i} = x + {i};"));
                let _ = writeln!(s, "    x\n}}\n");
            }
            "py" => {
                let _ = writeln!(s, "def {name}(x):");
                body(&mut s, "    ", &|i| format!("v{i} = x + {i}"));
                let _ = writeln!(s, "    return x\n\n");
            }
            "go" => {
                let _ = writeln!(s, "func {name}(x int) int {{");
                body(&mut s, "\t", &|i| format!("v{i} := x + {i}; _ = v{i}"));
                let _ = writeln!(s, "\treturn x\n}}\n");
            }
            "js" | "ts" => {
                let _ = writeln!(s, "function {name}(x) {{");
                body(&mut s, "  ", &|i| format!("const v{i} = x + {i};"));
                let _ = writeln!(s, "  return x;\n}}\n");
            }
            "java" => {
                let _ = writeln!(s, "    public int {name}(int x) {{");
                body(&mut s, "        ", &|i| format!("int v{i} = x + {i};"));
                let _ = writeln!(s, "        return x;\n    }}\n");
            }
            // Languages cut into line windows: long enough that the middle one is not the first.
            "cs" => {
                let _ = writeln!(s, "    public int {name}(int x)\n    {{");
                for i in 0..40 {
                    let _ = writeln!(s, "        var v{i} = x + {i};");
                    if i == 20 {
                        let _ = writeln!(s, "        {}", marker(lang, name));
                    }
                }
                let _ = writeln!(s, "        return x;\n    }}\n");
            }
            "rb" => {
                let _ = writeln!(s, "  def {name}(x)");
                for i in 0..40 {
                    let _ = writeln!(s, "    v{i} = x + {i}");
                    if i == 20 {
                        let _ = writeln!(s, "    {}", marker(lang, name));
                    }
                }
                let _ = writeln!(s, "    x\n  end\n");
            }
            "ex" => {
                let _ = writeln!(s, "  def {name}(x) do");
                for i in 0..40 {
                    let _ = writeln!(s, "    _v{i} = x + {i}");
                    if i == 20 {
                        let _ = writeln!(s, "    {}", marker(lang, name));
                    }
                }
                let _ = writeln!(s, "    x\n  end\n");
            }
            other => panic!("no template for {other}"),
        }
    }
    s
}

/// A line that names `name`'s body, as a comment of `lang`.
fn marker(lang: &str, name: &str) -> String {
    match lang {
        "py" | "rb" | "ex" => format!("# {name}-here"),
        _ => format!("// {name}-here"),
    }
}

const NAMES: &[&str] = &["opening", "pricing", "closing"];

/// One repository with a file per language, each defining `opening`, `pricing`, `closing`.
fn polyglot() -> Repo {
    let java = format!(
        "package org.shop;\n\npublic class Cart {{\n{}}}\n",
        functions("java", NAMES)
    );
    let cs = format!(
        "namespace Shop\n{{\n    public class Billing\n    {{\n{}    }}\n}}\n",
        functions("cs", NAMES)
    );
    let rb = format!("class Cart\n{}end\n", functions("rb", NAMES));
    let ex = format!("defmodule Shop.Cart do\n{}end\n", functions("ex", NAMES));
    let tests_py = "def test_empty():\n    assert True\n\n\ndef test_total():\n    total = 3\n    assert total == 3\n\n\ndef test_discount():\n    assert 1 < 2\n";
    git_repo(&[
        ("src/engine.rs", functions("rs", NAMES).as_bytes()),
        ("app/service.py", functions("py", NAMES).as_bytes()),
        (
            "app/main.py",
            "from app.service import pricing\n\n\ndef main():\n    return pricing(1)\n".as_bytes(),
        ),
        (
            "cmd/run.go",
            format!("package main\n\n{}", functions("go", NAMES)).as_bytes(),
        ),
        ("web/cart.js", functions("js", NAMES).as_bytes()),
        ("web/app.ts", functions("ts", NAMES).as_bytes()),
        ("src/main/java/org/shop/Cart.java", java.as_bytes()),
        ("Shop/Billing.cs", cs.as_bytes()),
        ("lib/shop/cart.rb", rb.as_bytes()),
        ("lib/shop/cart.ex", ex.as_bytes()),
        ("tests/test_cart.py", tests_py.as_bytes()),
    ])
}

/// The repository indexed by a fresh daemon (no model: locations are exact evidence).
fn indexed() -> (TestEnv, Repo) {
    let env = TestEnv::started();
    let repo = polyglot();
    env.add_repo(repo.path());
    (env, repo)
}

/// The line of `pricing`'s marker in `path`.
fn pricing_line(repo: &Repo, path: &str) -> u32 {
    marker_line(repo, path, "pricing")
}

/// The line of `name`'s marker in `path`.
fn marker_line(repo: &Repo, path: &str, name: &str) -> u32 {
    let ext = path.rsplit('.').next().expect("an extension");
    repo.line_of(path, &marker(ext, name))
}

/// Ask `text`; the first hit must be `path` and hold `line`. Returns the answer.
fn lands(
    env: &TestEnv,
    repo: &Repo,
    text: &str,
    path: &str,
    line: u32,
) -> patina_proto::v1::QueryResponse {
    let mut req = query(text);
    req.repos = vec![repo.key()];
    let resp = env.query(req).expect("the query is answered");
    let first = resp
        .hits
        .first()
        .unwrap_or_else(|| panic!("no hit for {text:?}: {:?}", resp.notices));
    let seen = seen(&resp);
    assert!(
        first.path == path && first.start_line <= line && line <= first.end_line,
        "{text:?} must land on {path}:{line} first, got {seen:#?}"
    );
    resp
}

#[test]
fn a_pasted_path_and_line_lands_on_the_chunk_that_holds_it() {
    let (env, repo) = indexed();
    let line = marker_line(&repo, "src/engine.rs", "closing");
    let resp = lands(
        &env,
        &repo,
        &format!("src/engine.rs:{line}"),
        "src/engine.rs",
        line,
    );
    assert_eq!(resp.hits[0].symbol, "closing");
    // With a column too, and through the shell client.
    lands(
        &env,
        &repo,
        &format!("src/engine.rs:{line}:9"),
        "src/engine.rs",
        line,
    );
    let out = env.patina_in(
        repo.path(),
        &["q", &format!("src/engine.rs:{line}"), "-n", "1"],
    );
    let text = &out.stdout;
    assert!(
        text.contains("src/engine.rs:") && text.contains("closing"),
        "{text}"
    );
}

#[test]
fn a_rust_panic_and_backtrace_land_on_their_frames_in_order() {
    let (env, repo) = indexed();
    let line = pricing_line(&repo, "src/engine.rs");
    lands(
        &env,
        &repo,
        &format!("thread 'main' panicked at src/engine.rs:{line}:5:\nattempt to add with overflow"),
        "src/engine.rs",
        line,
    );
    let go = pricing_line(&repo, "cmd/run.go");
    let opening = repo.line_of("src/engine.rs", &marker("rs", "opening"));
    let resp = lands(
        &env,
        &repo,
        &format!(
            "stack backtrace:\n   0: shop::engine::pricing\n             at ./src/engine.rs:{line}:17\n   1: shop::engine::opening\n             at ./src/engine.rs:{opening}:9\n   2: core::ops::function::FnOnce::call_once\n             at /rustc/59807616e1fa/library/core/src/ops/function.rs:250:5"
        ),
        "src/engine.rs",
        line,
    );
    assert!(go > 0);
    assert_eq!(
        (resp.hits[1].path.as_str(), resp.hits[1].symbol.as_str()),
        ("src/engine.rs", "opening"),
        "the next frame follows: {:?}",
        resp.hits
            .iter()
            .take(3)
            .map(|h| &h.symbol)
            .collect::<Vec<_>>()
    );
    assert!(
        resp.notices
            .iter()
            .any(|n| n.contains("outside") && n.contains("function.rs")),
        "the standard library's frame is set aside, said so: {:?}",
        resp.notices
    );
}

#[test]
fn a_rust_compiler_error_and_a_linter_error_land_on_their_line() {
    let (env, repo) = indexed();
    let line = pricing_line(&repo, "src/engine.rs");
    lands(
        &env,
        &repo,
        &format!(
            "error[E0308]: mismatched types\n  --> src/engine.rs:{line}:13\n   |\n   = note: expected `u64`"
        ),
        "src/engine.rs",
        line,
    );
    let ts = marker_line(&repo, "web/app.ts", "closing");
    lands(
        &env,
        &repo,
        &format!("web/app.ts:{ts}:7: error TS2304: Cannot find name 'total'."),
        "web/app.ts",
        ts,
    );
}

#[test]
fn a_python_traceback_lands_on_its_innermost_frame_first() {
    let (env, repo) = indexed();
    let line = pricing_line(&repo, "app/service.py");
    let main = repo.line_of("app/main.py", "return pricing(1)");
    let resp = lands(
        &env,
        &repo,
        &format!(
            "Traceback (most recent call last):\n  File \"/usr/lib/python3.11/runpy.py\", line 198, in _run_module_as_main\n    return _run_code(code, main_globals, None)\n  File \"/home/dev/shop/app/main.py\", line {main}, in main\n    return pricing(1)\n  File \"/home/dev/shop/app/service.py\", line {line}, in pricing\n    v7 = x + 7\nTypeError: unsupported operand type(s)"
        ),
        "app/service.py",
        line,
    );
    assert_eq!(
        resp.hits[1].path, "app/main.py",
        "the calling frame follows"
    );
    assert!(
        resp.notices.iter().any(|n| n.contains("runpy.py")),
        "the interpreter's frame is set aside, said so: {:?}",
        resp.notices
    );
}

#[test]
fn a_go_panic_lands_on_its_frame() {
    let (env, repo) = indexed();
    let line = marker_line(&repo, "cmd/run.go", "closing");
    lands(
        &env,
        &repo,
        &format!(
            "panic: runtime error: index out of range [3] with length 3\n\ngoroutine 1 [running]:\nmain.main.func1()\n\t/home/dev/shop/cmd/run.go:{line} +0x1d\nmain.main()\n\t/home/dev/shop/cmd/run.go:4 +0x25\nexit status 2"
        ),
        "cmd/run.go",
        line,
    );
}

#[test]
fn a_node_stack_lands_on_its_frame() {
    let (env, repo) = indexed();
    let line = marker_line(&repo, "web/cart.js", "closing");
    lands(
        &env,
        &repo,
        &format!(
            "TypeError: Cannot read properties of undefined (reading 'total')\n    at /srv/shop/web/cart.js:{line}:11\n    at Object.<anonymous> (/srv/shop/web/cart.js:2:1)\n    at Module._compile (node:internal/modules/cjs/loader:1554:14)"
        ),
        "web/cart.js",
        line,
    );
}

#[test]
fn a_java_stack_lands_on_its_frame_by_file_name() {
    let (env, repo) = indexed();
    let path = "src/main/java/org/shop/Cart.java";
    let line = marker_line(&repo, path, "closing");
    lands(
        &env,
        &repo,
        &format!(
            "Exception in thread \"main\" java.lang.IllegalStateException: empty\n\tat org.shop.Cart.lambda$closing$0(Cart.java:{line})\n\tat org.shop.Main.main(Main.java:9)"
        ),
        path,
        line,
    );
}

#[test]
fn a_dotnet_stack_lands_on_its_frame() {
    let (env, repo) = indexed();
    let line = pricing_line(&repo, "Shop/Billing.cs");
    lands(
        &env,
        &repo,
        &format!(
            "Unhandled exception. System.InvalidOperationException: empty cart\n   at Shop.Billing.pricing(Int32 x) in /home/dev/shop/Shop/Billing.cs:line {line}\n   at Shop.Program.Main() in /home/dev/shop/Shop/Program.cs:line 12"
        ),
        "Shop/Billing.cs",
        line,
    );
}

#[test]
fn a_ruby_backtrace_lands_on_its_frame() {
    let (env, repo) = indexed();
    let line = pricing_line(&repo, "lib/shop/cart.rb");
    lands(
        &env,
        &repo,
        &format!(
            "lib/shop/cart.rb:{line}:in 'pricing': undefined method 'total' for nil (NoMethodError)\n\tfrom lib/shop/cart.rb:3:in 'opening'\n\tfrom bin/shop:5:in '<main>'"
        ),
        "lib/shop/cart.rb",
        line,
    );
}

#[test]
fn an_elixir_stacktrace_lands_on_its_frame() {
    let (env, repo) = indexed();
    let line = pricing_line(&repo, "lib/shop/cart.ex");
    lands(
        &env,
        &repo,
        &format!(
            "** (ArithmeticError) bad argument in arithmetic expression\n    (shop 0.1.0) lib/shop/cart.ex:{line}: Shop.Cart.pricing/1\n    (elixir 1.17.2) lib/enum.ex:987: Enum.\"-map/2-lists^map/1-1-\"/2"
        ),
        "lib/shop/cart.ex",
        line,
    );
}

#[test]
fn a_pytest_node_id_lands_on_the_test_it_names() {
    let (env, repo) = indexed();
    let line = repo.line_of("tests/test_cart.py", "def test_total");
    let resp = lands(
        &env,
        &repo,
        "tests/test_cart.py::test_total",
        "tests/test_cart.py",
        line,
    );
    assert_eq!(resp.hits[0].symbol, "test_total");
}

#[test]
fn a_line_past_the_end_or_a_missing_file_is_said_not_silently_replaced() {
    let (env, repo) = indexed();
    let mut req = query("src/engine.rs:99999");
    req.repos = vec![repo.key()];
    let resp = env.query(req).expect("answered");
    assert!(
        resp.notices
            .iter()
            .any(|n| n.contains("src/engine.rs") && n.contains("99999") && n.contains("lines")),
        "a line past the end is said: {:?}",
        resp.notices
    );
    let mut req = query("src/nowhere.rs:12");
    req.repos = vec![repo.key()];
    let resp = env.query(req).expect("answered");
    assert!(
        resp.notices
            .iter()
            .any(|n| n.contains("src/nowhere.rs") && n.contains("no file")),
        "a path that is not in the repository is said: {:?}",
        resp.notices
    );
}

#[test]
fn a_commit_id_answers_with_that_commit_and_the_chunks_it_changed_as_they_are_now() {
    let env = TestEnv::started();
    let repo = polyglot();
    let root = repo.path();
    // The commit asked about changes `closing`; a later one moves every line of the file down.
    let engine = repo.read("src/engine.rs");
    let changed = engine.replace(
        "let v6 = x + 6;\n    // closing-here",
        "let v6 = x * 6;\n    // closing-here",
    );
    assert_ne!(changed, engine, "the fixture has the line to change");
    std::fs::write(root.join("src/engine.rs"), &changed).expect("writing");
    git(root, &["commit", "-q", "-am", "engine: closing multiplies"]);
    let hash = git_out(root, &["rev-parse", "--short=8", "HEAD"], None);
    let moved = format!("// Prices and totals.\n// (moved down)\n\n{changed}");
    std::fs::write(root.join("src/engine.rs"), moved).expect("writing");
    git(root, &["commit", "-q", "-am", "engine: a header"]);
    env.add_repo(root);

    for rev in [hash.as_str(), "HEAD~1"] {
        let mut req = query(rev);
        req.repos = vec![repo.key()];
        let resp = env.query(req).expect("answered");
        let first = resp
            .hits
            .first()
            .unwrap_or_else(|| panic!("no hit for {rev}: {:?}", resp.notices));
        assert_eq!(
            (first.path.as_str(), first.symbol.as_str()),
            ("src/engine.rs", "closing"),
            "{rev} answers with the chunk it changed, where it is now: {:?}",
            resp.hits
                .iter()
                .take(3)
                .map(|h| format!("{}:{}-{} {}", h.path, h.start_line, h.end_line, h.symbol))
                .collect::<Vec<_>>()
        );
        let line_now = repo.line_of("src/engine.rs", "let v6 = x * 6;");
        assert!(first.start_line <= line_now && line_now <= first.end_line);
        assert!(
            resp.notices
                .iter()
                .any(|n| n.contains("engine: closing multiplies") && n.contains(&hash)),
            "the answer says which commit it is: {:?}",
            resp.notices
        );
    }
    // `patina log` answers the same commit, first, by the same id.
    let out = env.patina_in(root, &["log", "--json", &hash]);
    assert_eq!(out.code(), 0, "{out:?}");
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("log --json is JSON");
    assert_eq!(
        v["commits"][0]["subject"], "engine: closing multiplies",
        "log of the id is that commit: {v}"
    );
    // A hex word that names no commit is an ordinary query.
    let mut req = query("deadbeef42");
    req.repos = vec![repo.key()];
    let resp = env.query(req).expect("answered");
    assert!(
        !resp.notices.iter().any(|n| n.starts_with("commit ")),
        "{:?}",
        resp.notices
    );
}
