//! Portable index snapshots: a snapshot taken by one daemon, restored by another for a clone at
//! another path, answers the same queries with the same results and embeds nothing; two daemons
//! snapshotting the same commit write the same digest; damage and a wrong commit are refused
//! with a clear error and register nothing.

use std::path::{Path, PathBuf};

use crate::util::*;
use patina_proto::v1::{Granularity, QueryRequest, QueryResponse};

const FILES: &[(&str, &[u8])] = FOUR_MEANINGS;

fn ask(env: &TestEnv, root: &Path, text: &str, oracles: &[&str]) -> Vec<(String, u32, u32)> {
    let r: QueryResponse = env
        .query(QueryRequest {
            repos: vec![root.to_string_lossy().into_owned()],
            oracles: oracles.iter().map(|s| s.to_string()).collect(),
            granularity: Granularity::Chunk as i32,
            ..query(text)
        })
        .unwrap_or_else(|s| panic!("query {text:?}: {s}"));
    r.hits
        .iter()
        .map(|h| (h.path.clone(), h.start_line, h.end_line))
        .collect()
}

fn json(out: &Output) -> serde_json::Value {
    assert_eq!(out.code(), 0, "{out:?}");
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"))
}

fn clone_of(src: &Path, into: &Path) -> PathBuf {
    clone_repo(src, into)
}

/// A daemon with the model and `repo` registered and fully embedded.
fn embedded_env(repo: &Path) -> TestEnv {
    let mut env = TestEnv::with_model();
    env.start_daemon();
    env.add_repo(repo);
    env.embedded(repo);
    env
}

/// `patina snapshot ARGS… --json`, which must succeed.
fn snapshot(env: &TestEnv, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["snapshot"];
    all.extend_from_slice(args);
    all.push("--json");
    json(&env.patina(&all))
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

#[test]
fn a_snapshot_restored_for_a_clone_elsewhere_answers_the_same_and_embeds_nothing() {
    let repo = git_repo(FILES);
    let scratch = tempfile::tempdir().unwrap();
    let file = scratch.path().join("repo.patina-snapshot");

    let a = embedded_env(repo.path());
    let created = snapshot(&a, &["create", &s(repo.path()), "--out", &s(&file)]);
    let chunks = created["chunks"].as_u64().unwrap();
    assert!(chunks >= 4, "{created}");
    assert_eq!(created["vectors"], created["chunks"], "{created}");
    let digest = created["digest"].as_str().unwrap().to_string();
    assert_eq!(digest.len(), 64);

    // Another daemon, another state root, a clone at another path.
    let mut b = TestEnv::with_model();
    b.start_daemon();
    let clone = clone_of(repo.path(), &scratch.path().join("elsewhere"));
    let restored = snapshot(&b, &["restore", &s(&file), "--into", &s(&clone)]);
    assert_eq!(
        restored["vectors_imported"].as_u64(),
        Some(chunks),
        "{restored}"
    );
    b.embedded(&clone);
    assert_eq!(
        b.assert_healthy().embeddings_computed,
        0,
        "every vector came from the snapshot"
    );
    for (text, oracles) in [
        ("american weather thermometer scale", &["semantic"][..]),
        (
            "send a message by electronic post",
            &["lexical", "symbol", "semantic"][..],
        ),
        ("bubble_sort", &[][..]),
    ] {
        let here = ask(&a, repo.path(), text, oracles);
        assert!(!here.is_empty(), "{text}");
        assert_eq!(here, ask(&b, &clone, text, oracles), "{text} {oracles:?}");
    }

    // The same commit snapshotted by the other daemon, from the other path: the same digest.
    let again = scratch.path().join("again.patina-snapshot");
    let second = snapshot(&b, &["create", &s(&clone), "--out", &s(&again)]);
    assert_eq!(second["digest"].as_str(), Some(digest.as_str()));
    assert_eq!(
        std::fs::read(&file).unwrap(),
        std::fs::read(&again).unwrap()
    );

    let verified = snapshot(&b, &["verify", &s(&file)]);
    assert_eq!(verified["digest"].as_str(), Some(digest.as_str()));
}

#[test]
fn damage_and_a_clone_at_another_commit_are_refused_and_register_nothing() {
    let repo = git_repo(FILES);
    let scratch = tempfile::tempdir().unwrap();
    let file = scratch.path().join("repo.patina-snapshot");
    let env = embedded_env(repo.path());

    // Not inside the repository, and not while it has uncommitted changes.
    let inside = repo.path().join("x.patina-snapshot");
    let out = env.patina(&[
        "snapshot",
        "create",
        &repo.path().to_string_lossy(),
        "--out",
        &inside.to_string_lossy(),
    ]);
    assert_eq!(out.code(), 2, "{out:?}");
    assert!(out.stderr.contains("outside the repository"), "{out:?}");
    std::fs::write(repo.path().join("scratch.py"), "X = 1\n").unwrap();
    let out = env.patina(&[
        "snapshot",
        "create",
        &repo.path().to_string_lossy(),
        "--out",
        &file.to_string_lossy(),
    ]);
    assert_eq!(out.code(), 2, "{out:?}");
    assert!(out.stderr.contains("not committed"), "{out:?}");
    std::fs::remove_file(repo.path().join("scratch.py")).unwrap();
    env.query(QueryRequest {
        fresh_timeout_ms: 10_000,
        repos: vec![repo.path().to_string_lossy().into_owned()],
        ..query("x")
    })
    .unwrap();
    snapshot(&env, &["create", &s(repo.path()), "--out", &s(&file)]);

    let bytes = std::fs::read(&file).unwrap();
    let flipped = scratch.path().join("flipped.patina-snapshot");
    let mut b = bytes.clone();
    let mid = b.len() / 2;
    b[mid] ^= 0x10;
    std::fs::write(&flipped, &b).unwrap();
    let truncated = scratch.path().join("truncated.patina-snapshot");
    std::fs::write(&truncated, &bytes[..bytes.len() - 100]).unwrap();
    let not_one = scratch.path().join("notes.txt");
    std::fs::write(&not_one, "hello").unwrap();

    let clone = clone_of(repo.path(), &scratch.path().join("clone"));
    let registered = |env: &TestEnv| {
        let list = json(&env.patina(&["repos", "--json"]));
        let mut roots: Vec<String> = list
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["root"].as_str().unwrap().to_string())
            .collect();
        roots.sort();
        roots
    };
    let before = registered(&env);
    for (bad, says) in [
        (&flipped, "damaged"),
        (&truncated, "damaged"),
        (&not_one, "not a Patina snapshot"),
    ] {
        let out = env.patina(&["snapshot", "verify", &bad.to_string_lossy()]);
        assert_eq!(out.code(), 2, "{out:?}");
        assert!(out.stderr.contains(says), "{says}: {out:?}");
        let out = env.patina(&[
            "snapshot",
            "restore",
            &bad.to_string_lossy(),
            "--into",
            &clone.to_string_lossy(),
        ]);
        assert_eq!(out.code(), 2, "{out:?}");
        assert!(out.stderr.contains(says), "{says}: {out:?}");
    }
    // A clone at another commit: told which commit to check out.
    std::fs::write(clone.join("new.py"), "def newer():\n    return 2\n").unwrap();
    git(&clone, &["add", "-A"]);
    git(&clone, &["commit", "-qm", "newer"]);
    let out = env.patina(&[
        "snapshot",
        "restore",
        &file.to_string_lossy(),
        "--into",
        &clone.to_string_lossy(),
    ]);
    assert_eq!(out.code(), 2, "{out:?}");
    assert!(out.stderr.contains("checkout"), "{out:?}");
    assert_eq!(registered(&env), before, "nothing was registered");
}

#[test]
fn a_snapshot_takes_the_vectors_the_index_holds_when_the_cache_has_lost_them() {
    let repo = git_repo(FILES);
    let scratch = tempfile::tempdir().unwrap();
    let (first, second) = (
        scratch.path().join("first.patina-snapshot"),
        scratch.path().join("second.patina-snapshot"),
    );
    let mut env = embedded_env(repo.path());
    let before = snapshot(&env, &["create", &s(repo.path()), "--out", &s(&first)]);

    // The embedding cache is a cache: deleted (or its tail cut after a crash), the index still
    // holds every vector, and the repository is still fully embedded.
    env.stop_daemon();
    std::fs::remove_dir_all(env.home().join("state").join("embeddings")).unwrap();
    env.start_daemon();
    env.embedded(repo.path());

    let after = snapshot(&env, &["create", &s(repo.path()), "--out", &s(&second)]);
    assert_eq!(after["vectors"], before["vectors"], "{after}");
    assert_eq!(
        after["digest"], before["digest"],
        "the same vectors: {after}"
    );
    assert_eq!(
        env.assert_healthy().embeddings_computed,
        0,
        "taken from the index, not embedded again"
    );
}
