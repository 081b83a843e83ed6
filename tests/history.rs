//! The repository's memory: the history oracle (commit messages vote for the files they touched),
//! `patina log` (only commits reachable from HEAD), renames followed, and co-change
//! (`patina related`).

use std::path::Path;

use crate::util::{TestEnv, git, git_out, git_repo, oracle_name, query};

fn commit(root: &Path, files: &[(&str, &str)], message: &str, date: &str) {
    for (rel, text) in files {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    git(root, &["add", "-A"]);
    git_out(root, &["commit", "-q", "-m", message], Some(date));
}

fn json(out: &crate::util::Output) -> serde_json::Value {
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", out.stdout))
}

fn subjects(v: &serde_json::Value) -> Vec<String> {
    v["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["subject"].as_str().unwrap().to_string())
        .collect()
}

const FILES: &[(&str, &[u8])] = &[
    (
        "src/session.rs",
        b"pub fn open_session(addr: &str) -> Session {\n    Session::connect(addr)\n}\n",
    ),
    (
        "src/render.rs",
        b"pub fn render_page(title: &str) -> String {\n    format!(\"<h1>{title}</h1>\")\n}\n",
    ),
    (
        "src/store.rs",
        b"pub fn put(key: &str, value: &[u8]) {\n    let _ = (key, value);\n}\n",
    ),
];

#[test]
fn the_history_oracle_finds_the_file_a_past_commit_message_describes() {
    let env = TestEnv::started();
    let repo = git_repo(FILES);
    let root = repo.path();
    commit(
        root,
        &[(
            "src/session.rs",
            "pub fn open_session(addr: &str) -> Session {\n    let s = Session::connect(addr);\n    s.backoff(3);\n    s\n}\n",
        )],
        "Stop the thundering herd of clients when the broker restarts\n\nWait with jitter.",
        "2024-01-01T00:00:00Z",
    );
    commit(
        root,
        &[
            (
                "src/session.rs",
                "pub fn open_session(addr: &str) -> Session {\n    Session::connect(addr)\n}\n",
            ),
            (
                "src/store.rs",
                "pub fn put(key: &str) {\n    let _ = key;\n}\n",
            ),
        ],
        "Broker restarts: keep the herd of writers calm",
        "2024-01-01T12:00:00Z",
    );
    commit(
        root,
        &[(
            "src/render.rs",
            "pub fn render_page(t: &str) -> String {\n    t.to_string()\n}\n",
        )],
        "Simplify page output",
        "2024-01-02T00:00:00Z",
    );
    env.add_repo(root);
    let mut req = query("thundering herd when the broker restarts");
    req.repos = vec![repo.key()];
    req.oracles = vec!["history".into()];
    let resp = env.query(req.clone()).expect("history query");
    assert_eq!(
        resp.hits.first().map(|h| h.path.as_str()),
        Some("src/session.rs"),
        "{resp:?}"
    );
    assert_eq!(oracle_name(resp.hits[0].provenance[0].oracle), "history");
    // The words are in no file: lexical alone finds nothing; fused, the file is found.
    req.oracles = vec!["lexical".into()];
    assert!(env.query(req.clone()).unwrap().hits.is_empty());
    req.oracles = vec!["lexical".into(), "history".into()];
    let fused = env.query(req).unwrap();
    assert_eq!(fused.hits[0].path, "src/session.rs");
    // A path filter applies to the history oracle as well.
    let mut req = query("thundering herd broker");
    req.repos = vec![repo.key()];
    req.oracles = vec!["history".into()];
    req.path_globs = vec!["src/store.rs".into()];
    let filtered = env.query(req).unwrap();
    assert_eq!(filtered.hits.len(), 1, "{filtered:?}");
    assert_eq!(filtered.hits[0].path, "src/store.rs");
}

#[test]
fn an_issue_text_matches_commits_by_its_prose_not_by_its_logs() {
    let env = TestEnv::started();
    let repo = git_repo(FILES);
    let root = repo.path();
    commit(
        root,
        &[(
            "src/session.rs",
            "pub fn open_session(addr: &str) -> Session {\n    Session::connect(addr).retry(2)\n}\n",
        )],
        "Reconnect the session after the broker drops it",
        "2024-01-01T00:00:00Z",
    );
    commit(
        root,
        &[(
            "src/store.rs",
            "pub fn put(key: &str, value: &[u8]) {\n    let _ = (key, value, 1);\n}\n",
        )],
        "Pin wheelhouse certifi urllib3 boto3 docutils versions for packaging",
        "2024-01-02T00:00:00Z",
    );
    env.add_repo(root);
    // A bug report: a title and prose, then the reporter's package list in a code block, whose
    // rare names are exactly the words of an unrelated packaging commit.
    let mut text = String::from(
        "Session is not reconnected after the broker drops it\n\n\
         When the broker restarts, the session stays closed and every call fails until the \
         process is restarted. I expected the client to reconnect on its own.\n\n\
         Package list:\n\n```\n",
    );
    for _ in 0..6 {
        text.push_str(
            "wheelhouse 1.0\ncertifi 2019.3.9\nurllib3 1.25\nboto3 1.9.51\ndocutils 0.14\n",
        );
    }
    text.push_str("```\n");
    let mut req = query(&text);
    req.repos = vec![repo.key()];
    req.oracles = vec!["history".into()];
    let resp = env.query(req).expect("history query");
    let paths: Vec<&str> = resp.hits.iter().map(|h| h.path.as_str()).collect();
    assert_eq!(paths.first(), Some(&"src/session.rs"), "{paths:?}");
    assert!(
        !paths.contains(&"src/store.rs"),
        "the package list voted: {paths:?}"
    );
}

#[test]
fn log_only_sees_commits_reachable_from_head() {
    let env = TestEnv::started();
    let repo = git_repo(FILES);
    let root = repo.path();
    let first = git_out(root, &["rev-parse", "HEAD"], None);
    commit(
        root,
        &[("src/store.rs", "pub fn put(k: &str) { zebra(k) }\n")],
        "Introduce the zebra cache in front of the store",
        "2024-02-01T00:00:00Z",
    );
    env.add_repo(root);
    let log = |args: &[&str]| {
        let mut a = vec!["log", "--json"];
        a.extend_from_slice(args);
        env.patina_in(root, &a)
    };
    let out = log(&["zebra", "cache"]);
    assert!(out.status.success(), "{out:?}");
    let v = json(&out);
    assert_eq!(
        subjects(&v),
        vec!["Introduce the zebra cache in front of the store"]
    );
    assert_eq!(v["commits"][0]["files"][0], "src/store.rs");

    // Back in time: the later commit is not searchable, by `log` or by the oracle.
    git(root, &["checkout", "-q", &first]);
    let out = log(&["zebra", "cache"]);
    assert_eq!(out.code(), 1, "{out:?}");
    assert!(subjects(&json(&out)).is_empty());
    let mut req = query("zebra cache in front of the store");
    req.repos = vec![repo.key()];
    req.oracles = vec!["history".into()];
    assert!(env.query(req.clone()).unwrap().hits.is_empty());

    // Forward again, and a new commit is searchable at once.
    git(root, &["checkout", "-q", "main"]);
    assert_eq!(subjects(&json(&log(&["zebra"]))).len(), 1);
    commit(
        root,
        &[("src/render.rs", "pub fn render_page() {}\n")],
        "Render pages without a zebra",
        "2024-03-01T00:00:00Z",
    );
    let v = json(&log(&["zebra", "--since", "2024-02-15"]));
    assert_eq!(subjects(&v), vec!["Render pages without a zebra"]);
    let v = json(&log(&["zebra", "--path", "src/store.rs"]));
    assert_eq!(
        subjects(&v),
        vec!["Introduce the zebra cache in front of the store"]
    );
}

#[test]
fn log_file_follows_renames_and_related_finds_co_changed_files() {
    let env = TestEnv::started();
    let repo = git_repo(FILES);
    let root = repo.path();
    commit(
        root,
        &[
            ("src/lexer.rs", "pub fn lex() {}\n"),
            ("src/parser.rs", "pub fn parse() {}\n"),
        ],
        "Add lexer and parser",
        "2024-01-01T00:00:00Z",
    );
    commit(
        root,
        &[
            ("src/lexer.rs", "pub fn lex() { 1 }\n"),
            ("src/parser.rs", "pub fn parse() { 1 }\n"),
        ],
        "Tokens carry spans",
        "2024-01-02T00:00:00Z",
    );
    commit(
        root,
        &[("src/lexer.rs", "pub fn lex() { 2 }\n")],
        "Faster lexer",
        "2024-01-03T00:00:00Z",
    );
    git(root, &["mv", "src/lexer.rs", "src/scan.rs"]);
    git_out(
        root,
        &["commit", "-q", "-m", "Rename the lexer to scan"],
        Some("2024-01-04T00:00:00Z"),
    );
    env.add_repo(root);

    let out = env.patina_in(root, &["log", "--file", "src/scan.rs", "--json"]);
    assert!(out.status.success(), "{out:?}");
    let mut s = subjects(&json(&out));
    s.sort();
    assert_eq!(
        s,
        vec![
            "Add lexer and parser",
            "Faster lexer",
            "Rename the lexer to scan",
            "Tokens carry spans"
        ],
        "the commits before the rename count for the file's current name"
    );

    let out = env.patina_in(root, &["related", "src/scan.rs", "--json"]);
    assert!(out.status.success(), "{out:?}");
    let v = json(&out);
    assert_eq!(v["files"][0]["path"], "src/parser.rs", "{v}");
    assert_eq!(v["files"][0]["support"], 2);
    assert_eq!(v["commits"], 4);
    // Relative to the working directory.
    let out = env.patina_in(&root.join("src"), &["related", "parser.rs"]);
    let text = &out.stdout;
    assert!(text.starts_with("src/scan.rs\t2 of 2 commits"), "{text}");
}

fn hashes(v: &serde_json::Value) -> Vec<String> {
    let mut h: Vec<String> = v["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["hash"].as_str().unwrap().to_string())
        .collect();
    h.sort();
    h
}

#[test]
fn the_commit_index_follows_a_rebase_rewritten_commits_replace_old_ones_dropped_ones_vanish() {
    let env = TestEnv::started();
    let repo = git_repo(FILES);
    let root = repo.path();
    git(root, &["checkout", "-q", "-b", "feature"]);
    commit(
        root,
        &[("src/store.rs", "pub fn put() { walrus() }\n")],
        "Introduce the walrus allocator",
        "2024-01-01T00:00:00Z",
    );
    commit(
        root,
        &[("src/store.rs", "pub fn put() { walrus(); walrus() }\n")],
        "Tune the walrus pool size",
        "2024-01-02T00:00:00Z",
    );
    let before: Vec<String> = ["HEAD~1", "HEAD"]
        .iter()
        .map(|r| git_out(root, &["rev-parse", r], None))
        .collect();
    git(root, &["checkout", "-q", "main"]);
    commit(
        root,
        &[("src/render.rs", "pub fn render_page() {}\n")],
        "Render pages plainly",
        "2024-01-03T00:00:00Z",
    );
    git(root, &["checkout", "-q", "feature"]);
    env.add_repo(root);
    let log = |q: &str| json(&env.patina_in(root, &["log", "--json", q]));
    let mut expected = before.clone();
    expected.sort();
    assert_eq!(hashes(&log("walrus")), expected);

    // Rebased onto main: the same messages under new hashes, the old ones gone.
    git_out(
        root,
        &["rebase", "-q", "main"],
        Some("2024-01-04T00:00:00Z"),
    );
    let after = hashes(&log("walrus"));
    assert_eq!(after.len(), 2, "{after:?}");
    assert!(
        after.iter().all(|h| !before.contains(h)),
        "rewritten commits replace the old ones: {after:?} vs {before:?}"
    );
    assert_eq!(
        subjects(&log("plainly")),
        vec!["Render pages plainly"],
        "main's commit is now reachable"
    );

    // The last commit dropped, the first reworded: the dropped one vanishes, the old wording too.
    git(root, &["reset", "-q", "--hard", "HEAD~1"]);
    git_out(
        root,
        &[
            "commit",
            "-q",
            "--amend",
            "-m",
            "Introduce the narwhal allocator",
        ],
        Some("2024-01-05T00:00:00Z"),
    );
    let out = env.patina_in(root, &["log", "--json", "walrus"]);
    assert_eq!(out.code(), 1, "{out:?}");
    assert!(subjects(&json(&out)).is_empty());
    assert_eq!(
        subjects(&log("narwhal")),
        vec!["Introduce the narwhal allocator"]
    );
    // The history oracle agrees.
    let mut req = query("walrus pool size");
    req.repos = vec![repo.key()];
    req.oracles = vec!["history".into()];
    assert!(env.query(req).unwrap().hits.is_empty());
}
