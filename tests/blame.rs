//! Blame attribution: asked for (`--blame`, `QueryRequest.blame`), each hit says which commit last
//! changed its lines — per hit, not per file — and uncommitted edits say so.

use std::path::Path;

use crate::util::{EVENTUALLY, TestEnv, git, git_out, git_repo, poll, query};

fn commit(root: &Path, rel: &str, text: &str, message: &str, date: &str) -> String {
    std::fs::create_dir_all(root.join(rel).parent().unwrap()).unwrap();
    std::fs::write(root.join(rel), text).unwrap();
    git(root, &["add", "-A"]);
    git_out(root, &["commit", "-q", "-m", message], Some(date));
    git_out(root, &["rev-parse", "HEAD"], None)
}

const V1: &str = "pub fn alpha_total(xs: &[u32]) -> u32 {\n    xs.iter().sum()\n}\n\n\
pub fn beta_render(name: &str) -> String {\n    name.to_string()\n}\n";
const V2: &str = "pub fn alpha_total(xs: &[u32]) -> u32 {\n    xs.iter().sum()\n}\n\n\
pub fn beta_render(title: &str) -> String {\n    format!(\"<b>{title}</b>\")\n} // bold\n";
const V3: &str = "pub fn alpha_total(values: &[u32]) -> u64 {\n    values.iter().map(|v| *v as u64).sum()\n} // wide\n\n\
pub fn beta_render(title: &str) -> String {\n    format!(\"<b>{title}</b>\")\n} // bold\n";

fn blame_of<'a>(v: &'a serde_json::Value, symbol: &str) -> &'a serde_json::Value {
    let hit = v["hits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["symbol"] == symbol)
        .unwrap_or_else(|| panic!("no hit for {symbol}: {v}"));
    &hit["blame"]
}

#[test]
fn each_hit_names_the_commit_that_last_changed_its_lines() {
    let env = TestEnv::started();
    let repo = git_repo(&[("README.md", b"# fixture\n")]);
    let root = repo.path();
    let _added = commit(
        root,
        "src/lib.rs",
        V1,
        "Add alpha and beta",
        "2024-01-01T00:00:00Z",
    );
    let beta = commit(
        root,
        "src/lib.rs",
        V2,
        "Render beta in bold",
        "2024-02-01T00:00:00Z",
    );
    let alpha = commit(
        root,
        "src/lib.rs",
        V3,
        "Widen alpha totals to u64",
        "2024-03-01T00:00:00Z",
    );
    env.add_repo(root);

    let out = env.patina_in(
        root,
        &["q", "--json", "--blame", "alpha_total", "beta_render"],
    );
    assert!(out.status.success(), "{out:?}");
    let v = out.q_json();
    let a = blame_of(&v, "alpha_total");
    assert_eq!(a["commit"], alpha.as_str(), "{a}");
    assert_eq!(a["short"], &alpha[..10]);
    assert_eq!(a["subject"], "Widen alpha totals to u64");
    assert_eq!(a["date"], "2024-03-01");
    assert_eq!(a["author"], "t");
    let b = blame_of(&v, "beta_render");
    assert_eq!(b["commit"], beta.as_str(), "{b}");
    assert_eq!(b["subject"], "Render beta in bold");
    assert_eq!(b["date"], "2024-02-01");

    // Not asked: no blame (it costs a git call per hit).
    let out = env.patina_in(root, &["q", "--json", "alpha_total"]);
    let v = out.q_json();
    assert!(blame_of(&v, "alpha_total").is_null(), "{v}");

    // The text output says it under the hit.
    let out = env.patina_in(root, &["q", "--blame", "beta_render"]);
    assert!(
        out.stdout.contains(&format!(
            "last changed 2024-02-01 {} t: Render beta in bold",
            &beta[..10]
        )),
        "{out:?}"
    );

    // An uncommitted edit of beta: the working tree is what is blamed.
    std::fs::write(root.join("src/lib.rs"), V3.replace("<b>", "<strong>")).unwrap();
    let mut req = query("beta_render");
    req.repos = vec![repo.key()];
    req.blame = true;
    req.fresh_timeout_ms = 10_000;
    let resp = env.query(req).unwrap();
    let hit = resp
        .hits
        .iter()
        .find(|h| h.symbol == "beta_render")
        .expect("beta hit");
    let b = hit.blame.as_ref().expect("blame asked for");
    assert_eq!(b.commit, "", "{b:?}");
    assert_eq!(b.subject, "not committed yet");
    assert_eq!(b.lines, 1);
    assert_eq!(b.commits, 2, "{b:?}");

    // Committed: the same question (its blamed answer may have been cached) names the commit.
    git(root, &["add", "-A"]);
    git_out(
        root,
        &["commit", "-q", "-m", "Strong beta"],
        Some("2024-04-01T00:00:00Z"),
    );
    let strong = git_out(root, &["rev-parse", "HEAD"], None);
    let mut req = query("beta_render");
    req.repos = vec![repo.key()];
    req.blame = true;
    poll(EVENTUALLY, "the blame names the new commit", || {
        let resp = env.query(req.clone()).unwrap();
        let b = resp
            .hits
            .iter()
            .find(|h| h.symbol == "beta_render")
            .and_then(|h| h.blame.clone())
            .expect("blame");
        if b.commit == strong {
            assert_eq!(b.subject, "Strong beta");
            return Ok(());
        }
        assert!(!resp.cached, "a cached blame outlived the commit: {b:?}");
        Err(format!("{b:?}"))
    });
}
