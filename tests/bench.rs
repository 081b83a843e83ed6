//! `patina bench retrieval` on a real repository (`--repo-dir`): queries tied to commits run at
//! their commit, in commit-date order, against the daemon's live index of the clone; the clone is
//! put back where it was; a clone with uncommitted changes is refused.

use std::path::Path;

use crate::util::*;

const GIZMO_PY: &str = r#"def calibrate_gizmo(gizmo):
    """Zanzibar calibration of a gizmo: align it before use."""
    return gizmo.align("zanzibar")
"#;

const WIDGET_PY: &str = r#"def render_widget(widget):
    """Draw the widget on the screen."""
    return widget.draw()
"#;

const TELEPORT_PY: &str = r#"def engage_teleporter(quokka):
    """Beam the quokka through the teleporter."""
    return quokka.beam()
"#;

/// A repository with two commits: `old` (gizmo + widget) and, a day later, `new` (adds
/// `src/teleport.py`); HEAD is branch `main` at `new`.
struct TwoCommits {
    repo: Repo,
    old: String,
    new: String,
}

fn two_commits() -> TwoCommits {
    let repo = git_repo(&[
        ("src/gizmo.py", GIZMO_PY.as_bytes()),
        ("src/widget.py", WIDGET_PY.as_bytes()),
        ("docs/guide.md", b"# Guide\n\nInstall the widget first.\n"),
    ]);
    let old = git_out(repo.path(), &["rev-parse", "HEAD"], None);
    let t: i64 = git_out(repo.path(), &["log", "-1", "--format=%ct"], None)
        .parse()
        .unwrap();
    std::fs::write(repo.path().join("src/teleport.py"), TELEPORT_PY).unwrap();
    git_out(repo.path(), &["add", "-A"], None);
    let later = format!("@{} +0000", t + 86_400);
    git_out(
        repo.path(),
        &["commit", "-q", "-m", "teleporter"],
        Some(&later),
    );
    let new = git_out(repo.path(), &["rev-parse", "HEAD"], None);
    TwoCommits { repo, old, new }
}

/// The query set: the newer commit's query comes first in the file, so the run order shows that
/// commits are visited by date. `old-teleport` asks, at the older commit, for the file only the
/// newer commit has: the index at that commit must not know it.
fn write_queries(dir: &Path, f: &TwoCommits) -> std::path::PathBuf {
    let q = |id: &str, commit: &str, text: &str, rel: &str| {
        serde_json::json!({"id": id, "repo": "test/fixture", "commit": commit, "query": text,
                           "relevant": [{"path": rel}], "kind": "issue_to_files"})
        .to_string()
    };
    let lines = [
        q(
            "new-teleport",
            &f.new,
            "quokka teleporter beam",
            "src/teleport.py",
        ),
        q(
            "old-gizmo",
            &f.old,
            "zanzibar gizmo calibration",
            "src/gizmo.py",
        ),
        q(
            "old-teleport",
            &f.old,
            "quokka teleporter beam",
            "src/teleport.py",
        ),
    ];
    let path = dir.join("queries.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// `patina bench retrieval` of `queries` on the clone `repo_dir`, waiting up to a minute for
/// each checkout, with `rest` after.
fn retrieval_args<'a>(queries: &'a str, repo_dir: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "bench",
        "retrieval",
        "--queries",
        queries,
        "--repo-dir",
        repo_dir,
        "--fresh-ms",
        "60000",
    ];
    args.extend_from_slice(rest);
    args
}

fn close(a: &serde_json::Value, b: f64) -> bool {
    a.as_f64().is_some_and(|a| (a - b).abs() < 1e-9)
}

#[test]
fn bench_on_a_repository_evaluates_each_query_at_its_commit_and_restores_head() {
    let env = TestEnv::started();
    let f = two_commits();
    let dir = tempfile::tempdir().unwrap();
    let queries = write_queries(dir.path(), &f);
    let repo_dir = f.repo.key();
    let args = retrieval_args(
        queries.to_str().unwrap(),
        &repo_dir,
        &["--oracle", "lexical", "--oracle", "lexical,symbol"],
    );

    let mut json_args = args.to_vec();
    json_args.push("--json");
    let out = env.patina(&json_args);
    assert_eq!(out.code(), 0, "{out:?}");
    let v: serde_json::Value =
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"));

    // One checkout per commit, shared by both subsets; the catch-up time is reported.
    assert_eq!(v["repo"]["checkouts"], 2, "{v:#}");
    assert!(v["repo"]["catch_up_total_s"].as_f64().is_some(), "{v:#}");
    assert_eq!(v["repo"]["original_head"], "main", "{v:#}");

    let lexical = &v["subsets"][0];
    assert_eq!(lexical["oracles"], "lexical", "{v:#}");
    let results = lexical["queries"].as_array().unwrap();
    let ids: Vec<&str> = results.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        ["old-gizmo", "old-teleport", "new-teleport"],
        "the older commit runs first"
    );
    let by_id = |id: &str| results.iter().find(|r| r["id"] == id).unwrap();
    assert_eq!(by_id("old-gizmo")["rank"], 1, "{v:#}");
    assert_eq!(by_id("new-teleport")["rank"], 1, "{v:#}");
    // At the older commit the file added later does not exist for the index.
    let old_teleport = by_id("old-teleport");
    assert!(old_teleport["rank"].is_null(), "{v:#}");
    for r in results.iter().filter(|r| r["commit"] == f.old.as_str()) {
        for h in r["hits"].as_array().unwrap() {
            assert_ne!(
                h["path"], "src/teleport.py",
                "seen at the older commit: {v:#}"
            );
        }
    }

    // Metrics: two of three queries find their file first, one not at all.
    let row = &v["rows"][0];
    assert_eq!(row["oracles"], "lexical");
    assert_eq!(row["queries"], 3);
    for key in [
        "recall@1",
        "recall@5",
        "recall@10",
        "mrr@10",
        "ndcg@10",
        "chunk_ndcg@10",
    ] {
        assert!(close(&row[key], 2.0 / 3.0), "{key}: {row:#}");
    }
    assert_eq!(
        v["rows"].as_array().unwrap().len(),
        2,
        "one row per subset, one kind: {v:#}"
    );
    assert_eq!(lexical["misses"], 1);
    assert_eq!(lexical["miss_top1_roles"]["none"], 1, "{lexical:#}");

    // The clone is back on its branch, untouched.
    assert_eq!(
        git_out(f.repo.path(), &["symbolic-ref", "--short", "HEAD"], None),
        "main"
    );
    assert_eq!(git_out(f.repo.path(), &["rev-parse", "HEAD"], None), f.new);
    assert_eq!(git_out(f.repo.path(), &["status", "--porcelain"], None), "");

    // --verbose lists the miss: its id, relevant path not found, and that nothing came back.
    let mut verbose_args = args.to_vec();
    verbose_args.push("--verbose");
    let out = env.patina(&verbose_args);
    assert_eq!(out.code(), 0, "{out:?}");
    let misses = out
        .stdout
        .split_once("== misses: lexical ==")
        .unwrap_or_else(|| panic!("{out:?}"))
        .1;
    assert!(misses.contains("old-teleport"), "{out:?}");
    assert!(misses.contains("quokka teleporter beam"), "{out:?}");
    assert!(
        misses.contains("src/teleport.py (not in top 10)"),
        "{out:?}"
    );
    assert!(
        !misses.contains("old-gizmo"),
        "a hit at rank 1 is no miss: {out:?}"
    );
    assert!(out.stdout.contains("catch-up after 2 checkouts"), "{out:?}");
}

#[test]
fn bench_refuses_a_clone_with_uncommitted_changes() {
    let env = TestEnv::started();
    let f = two_commits();
    let dir = tempfile::tempdir().unwrap();
    let queries = write_queries(dir.path(), &f);
    let edited = format!("{GIZMO_PY}# work in progress\n");
    std::fs::write(f.repo.path().join("src/gizmo.py"), &edited).unwrap();

    let out = env.patina(&[
        "bench",
        "retrieval",
        "--queries",
        queries.to_str().unwrap(),
        "--repo-dir",
        &f.repo.key(),
    ]);
    assert_eq!(out.code(), 2, "{out:?}");
    assert!(out.stderr.contains("uncommitted changes"), "{out:?}");
    assert!(out.stderr.contains("--force"), "names the way out: {out:?}");
    assert_eq!(f.repo.read("src/gizmo.py"), edited, "the edit survives");
    assert_eq!(git_out(f.repo.path(), &["rev-parse", "HEAD"], None), f.new);
}

/// `--features FILE`: one line per query and subset, each file hit (today's order) with every
/// ranking feature by name and its label; the figures are those of the run without it.
#[test]
fn bench_features_log_each_file_hit_with_its_features_and_its_label() {
    let env = TestEnv::started();
    let f = two_commits();
    let dir = tempfile::tempdir().unwrap();
    let queries = write_queries(dir.path(), &f);
    let log = dir.path().join("features.jsonl");
    let repo_dir = f.repo.key();
    let args = retrieval_args(
        queries.to_str().unwrap(),
        &repo_dir,
        &["--oracle", "lexical,symbol", "--json"],
    );
    let plain = env.patina(&args);
    assert_eq!(plain.code(), 0, "{plain:?}");
    let mut logged_args = args.to_vec();
    logged_args.extend(["--features", log.to_str().unwrap()]);
    let logged = env.patina(&logged_args);
    assert_eq!(logged.code(), 0, "{logged:?}");

    // Asking for the features changes no figure and no hit.
    let figures = |out: &Output| {
        let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        let q: Vec<_> = v["subsets"][0]["queries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| (q["id"].clone(), q["rank"].clone(), q["hits"].clone()))
            .collect();
        (v["rows"][0]["mrr@10"].clone(), q)
    };
    assert_eq!(figures(&plain), figures(&logged));

    let text = std::fs::read_to_string(&log).expect("the features file");
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "one line per query: {text}");
    let names = [
        "score",
        "place",
        "lexical",
        "symbol",
        "agreement",
        "unanimous_first",
        "role_factor",
        "test",
        "module_root",
        "lexical_long",
    ];
    for line in &lines {
        assert_eq!(line["subset"], "lexical+symbol", "{line:#}");
        let relevant: Vec<&str> = line["relevant"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap())
            .collect();
        let hits = line["hits"].as_array().unwrap();
        let mut last = f64::INFINITY;
        for (i, h) in hits.iter().enumerate() {
            let path = h["path"].as_str().unwrap();
            assert_eq!(h["relevant"], relevant.contains(&path), "{line:#}");
            let feats = h["features"].as_object().unwrap();
            assert_eq!(feats.len(), 29, "every feature, by name: {h:#}");
            for n in names {
                assert!(feats[n].as_f64().is_some_and(f64::is_finite), "{n}: {h:#}");
            }
            // Today's order: places count up, scores against the first never rise.
            assert!(close(&feats["place"], 1.0 / (i + 1) as f64), "{h:#}");
            let score = feats["score"].as_f64().unwrap();
            assert!(score <= last && score <= 0.0, "{line:#}");
            last = score;
        }
    }
    let gizmo = lines.iter().find(|l| l["id"] == "old-gizmo").unwrap();
    let first = &gizmo["hits"][0];
    assert_eq!(first["path"], "src/gizmo.py", "{gizmo:#}");
    assert_eq!(first["relevant"], true);
    assert!(close(&first["features"]["score"], 0.0), "{first:#}");
    assert!(
        close(&first["features"]["lexical"], 1.0),
        "lexical's first: {first:#}"
    );
    assert!(
        close(&first["features"]["semantic"], 0.0),
        "not asked: {first:#}"
    );
    // At the older commit the later file is in no line.
    let old = lines.iter().find(|l| l["id"] == "old-teleport").unwrap();
    assert!(
        old["hits"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["path"] != "src/teleport.py"),
        "{old:#}"
    );
}

/// `patina bench load`: concurrent clients on their own connections, while a file of the
/// repository is rewritten; every query is counted, none fails, and the edits end up indexed.
#[test]
fn bench_load_runs_concurrent_clients_while_a_file_changes() {
    let env = TestEnv::started();
    let repo = git_repo(&[
        ("src/gizmo.py", GIZMO_PY.as_bytes()),
        ("src/widget.py", WIDGET_PY.as_bytes()),
    ]);
    env.add_repo(repo.path());
    let edited = repo.path().join("src/edited.py");
    let out = env.patina(&[
        "bench",
        "load",
        "--repo",
        &repo.path().to_string_lossy(),
        "--clients",
        "6",
        "--queries",
        "25",
        "--edit",
        &edited.to_string_lossy(),
        "--edit-ms",
        "20",
        "--json",
    ]);
    assert_eq!(out.code(), 0, "{out:?}");
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["queries"], 150, "{v}");
    assert_eq!(v["errors"], 0, "{v}");
    // Latencies were measured (the figures themselves are the benchmark's, not the test's).
    assert!(v["p50_ms"].as_f64().is_some_and(|p| p > 0.0), "{v}");
    assert!(edited.is_file(), "the writer ran");
    // The writes end up indexed: the last version's function is found where it was written
    // (`fresh_timeout_ms`: the query indexes what changed on disk first).
    let text = std::fs::read_to_string(&edited).expect("reading the edited file");
    let name = text
        .split_whitespace()
        .find_map(|w| w.strip_suffix("():").filter(|n| n.starts_with("edited_")))
        .unwrap_or_else(|| panic!("the writer's function in {text:?}"))
        .to_string();
    let mut req = query(&name);
    req.repos = vec![repo.key()];
    req.fresh_timeout_ms = 30_000;
    let resp = env.query(req).expect("answered");
    assert!(
        resp.hits
            .first()
            .is_some_and(|h| h.path == "src/edited.py" && h.symbol == name),
        "the last write is indexed: {:?}",
        resp.hits
            .iter()
            .map(|h| (&h.path, &h.symbol))
            .collect::<Vec<_>>()
    );

    let bad = env.patina(&["bench", "load", "--repo", "/nonexistent/repo", "--json"]);
    assert_eq!(bad.code(), 2, "{bad:?}");
    assert!(bad.stderr.contains("cannot query"), "{bad:?}");
}
