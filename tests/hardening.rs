//! What a hostile or merely unlucky machine does to Patina (the torture run's findings): file
//! names that are not UTF-8 or hold newlines, FIFOs, glob bombs, backwards line ranges and
//! checkouts that delete whole directory trees. Each is answered with a reason, never silently
//! and never as an internal error.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::util::*;

fn status_json(env: &TestEnv, root: &Path) -> serde_json::Value {
    let out = env.patina_in(root, &["status", "--json"]);
    assert!(out.status.success(), "{out:?}");
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stdout))
}

#[test]
fn files_the_walk_cannot_index_are_counted_in_status_with_their_reason() {
    let env = TestEnv::started();
    let repo = git_repo(&[("src/lib.rs", b"pub fn ordinary() {}\n")]);
    let root = repo.path();
    std::fs::write(
        root.join(std::ffi::OsStr::from_bytes(b"caf\xe9.rs")),
        "pub fn latin1_name() {}\n",
    )
    .unwrap();
    let fifo = std::ffi::CString::new(root.join("events.pipe").as_os_str().as_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    env.add_repo(root);

    let status = status_json(&env, root);
    let repos = status["repos"].as_array().expect("repos in status --json");
    let skipped = repos[0]["skipped"].as_array().expect("skipped").clone();
    let reason = |r: &str| {
        skipped
            .iter()
            .find(|s| s["reason"] == r)
            .unwrap_or_else(|| panic!("no {r} in {skipped:?}"))
            .clone()
    };
    assert_eq!(reason("invalid_name")["files"], 1);
    assert_eq!(reason("invalid_name")["examples"][0], "caf\\xe9.rs");
    assert_eq!(reason("not_regular")["files"], 1);
    assert_eq!(reason("not_regular")["examples"][0], "events.pipe");

    let human = env.patina_in(root, &["status"]);
    assert!(
        human
            .stdout
            .contains("skipped invalid_name: 1 (e.g. caf\\xe9.rs)"),
        "{}",
        human.stdout
    );
}

#[test]
fn a_glob_bomb_is_an_invalid_argument_naming_the_problem() {
    let env = TestEnv::started();
    let repo = git_repo(&[("src/lib.rs", b"pub fn ordinary() {}\n")]);
    env.add_repo(repo.path());
    let bomb = format!("{}*.rs{}", "{".repeat(500), "}".repeat(500));
    let err = env
        .query(QueryRequest {
            path_globs: vec![bomb],
            ..query("ordinary")
        })
        .expect_err("a glob nested 500 deep is refused");
    assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
    assert!(err.message().contains("500 deep"), "{}", err.message());
}

#[test]
fn a_line_range_that_ends_before_it_starts_is_an_invalid_argument() {
    let env = TestEnv::started();
    let repo = git_repo(&[("src/lib.rs", b"one\ntwo\nthree\nfour\n")]);
    env.add_repo(repo.path());
    let get = |start, end| {
        env.get_file(GetFileRequest {
            repo: repo.key(),
            path: "src/lib.rs".into(),
            start_line: start,
            end_line: end,
        })
    };
    let err = get(3, 2).expect_err("3-2 is backwards");
    assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
    assert!(err.message().contains("3-2"), "{}", err.message());
    assert_eq!(get(2, 3).unwrap().text, "two\nthree");
    assert_eq!(get(3, 0).unwrap().text, "three\nfour", "0 is the last line");
}

#[test]
fn a_file_name_with_a_newline_is_printed_escaped_on_one_line() {
    let env = TestEnv::started();
    let repo = git_repo(&[("src/lib.rs", b"pub fn ordinary() {}\n")]);
    let root = repo.path();
    std::fs::write(
        root.join("forged\nfake.rs:1-1 function.rs"),
        "pub fn newline_named_function() {}\n",
    )
    .unwrap();
    env.add_repo(root);
    let out = env.patina_in(root, &["q", "newline_named_function"]);
    assert!(out.status.success(), "{out:?}");
    let first = out.stdout.lines().next().unwrap_or("");
    assert!(
        first.starts_with("forged\\nfake.rs:1-1 function.rs:1-1"),
        "{}",
        out.stdout
    );
    assert!(
        !out.stdout.lines().any(|l| l.starts_with("fake.rs")),
        "no forged line: {}",
        out.stdout
    );
    // JSON carries the real name.
    let json = env.patina_in(root, &["q", "--json", "newline_named_function"]);
    assert!(json.stdout.contains("forged\\nfake.rs"), "{}", json.stdout);
}

#[test]
fn a_checkout_that_deletes_directories_logs_no_watch_warnings() {
    let env = TestEnv::started();
    let repo = git_repo(&[("src/lib.rs", b"pub fn ordinary() {}\n")]);
    let root = repo.path();
    git(root, &["checkout", "-q", "-b", "many-dirs"]);
    for i in 0..40 {
        let dir = root.join(format!("pkg{i}/inner"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("mod.rs"), format!("pub fn deep_{i}() {{}}\n")).unwrap();
    }
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "many directories"]);
    env.add_repo(root);
    let deep = |env: &TestEnv| {
        let r = env.search("deep_7", &[root]);
        r.hits.iter().any(|h| h.path.starts_with("pkg"))
    };
    assert!(deep(&env));
    // The watches are set once a saved file reaches the index.
    std::fs::write(root.join("probe.rs"), "pub fn watch_probe_ready() {}\n").unwrap();
    eventually("the watcher sees a saved file", || {
        !env.search("watch_probe_ready", &[root]).hits.is_empty()
    });

    git(root, &["checkout", "-q", "-"]);
    eventually("the deleted directories leave the index", || !deep(&env));
    // The watcher reads its events in order: once a file saved after the checkout is indexed,
    // the deletions' events before it have been handled (and any warning they caused logged).
    std::fs::write(root.join("probe2.rs"), "pub fn after_the_checkout() {}\n").unwrap();
    eventually("the watcher sees a file saved after the checkout", || {
        !env.search("after_the_checkout", &[root]).hits.is_empty()
    });
    let logs = env.logs();
    let warnings = logs.lines().filter(|l| l.contains("WatchNotFound")).count();
    assert_eq!(warnings, 0, "{logs}");
}

/// A daemon whose lexical oracle sleeps `delay_ms` before answering (the test hook
/// `PATINA_TEST_SLOW_ORACLE`), with `oracle_timeout_ms` as the base budget.
fn slow_lexical(delay_ms: u64, timeout_ms: u64) -> TestEnv {
    let mut env = TestEnv::new();
    env.append_config(&format!(
        "\n[retrieval]\noracle_timeout_ms = {timeout_ms}\n"
    ));
    env.next_daemon_env("PATINA_TEST_SLOW_ORACLE", format!("lexical={delay_ms}"));
    env.start_daemon();
    env
}

const SLOW_FILES: &[(&str, &[u8])] = &[
    ("src/lib.rs", b"pub fn parse_config() {}\n"),
    ("README.md", b"# Demo\n\nParsing the configuration file.\n"),
];

fn lexical_status(r: &QueryResponse) -> String {
    r.oracles
        .iter()
        .find(|o| oracle_name(o.oracle) == "lexical")
        .map(|o| status_name(o.status).to_string())
        .unwrap_or_default()
}

#[test]
fn an_oracle_that_times_out_is_named_and_complete_turns_it_into_an_error() {
    let env = slow_lexical(3000, 300);
    let repo = git_repo(SLOW_FILES);
    env.add_repo(repo.path());

    // Best effort: an answer without the lexical oracle, which is named.
    let r = env.search("parse_config", &[repo.path()]);
    assert_eq!(lexical_status(&r), "timeout", "{:?}", r.oracles);
    assert!(
        r.notices
            .iter()
            .any(|n| n.contains("lexical oracle timed out") && n.contains("300 ms")),
        "{:?}",
        r.notices
    );
    assert!(
        r.hits.iter().any(|h| h.symbol == "parse_config"),
        "the other oracles still answer: {:?}",
        r.hits
    );

    // Complete or error.
    let err = env
        .query(QueryRequest {
            repos: vec![repo.key()],
            complete: true,
            ..query("parse_config")
        })
        .expect_err("an incomplete answer is refused when a complete one is asked for");
    assert_eq!(err.code(), Code::Aborted, "{err:?}");
    assert!(
        err.message().contains("lexical oracle timed out"),
        "{}",
        err.message()
    );

    // The shell client: notices on stderr, `degraded` in --json, --complete fails.
    let out = env.patina_in(repo.path(), &["q", "parse_config"]);
    assert!(out.stderr.contains("lexical oracle timed out"), "{out:?}");
    let json = env.patina_in(repo.path(), &["q", "--json", "parse_config"]);
    let v = json.q_json();
    assert_eq!(v["degraded"], serde_json::json!(["lexical"]), "{v}");
    let out = env.patina_in(repo.path(), &["q", "--complete", "parse_config"]);
    assert!(!out.status.success(), "{out:?}");
    assert!(out.stderr.contains("lexical oracle timed out"), "{out:?}");
}

#[test]
fn oracle_budgets_grow_with_the_length_of_the_query() {
    // 2 s of delay: over the 1 s budget of a short query (a sleep cannot be shorter), within the
    // 4 s of a long one with 2 s to spare for a busy machine.
    let env = slow_lexical(2000, 1000);
    let repo = git_repo(SLOW_FILES);
    env.add_repo(repo.path());
    let short = env.search("parse_config", &[repo.path()]);
    assert_eq!(lexical_status(&short), "timeout", "{:?}", short.oracles);
    let long_text = format!(
        "parse_config fails when the configuration file is read. {}",
        "The configuration parser reads every section of the file again. ".repeat(100)
    );
    assert!(long_text.len() > 6144, "{}", long_text.len());
    let long = env.search(&long_text, &[repo.path()]);
    assert_eq!(lexical_status(&long), "ok", "{:?}", long.oracles);
}
