//! The query cache: a repeated question is answered from the cache, and never after anything it
//! was computed from changed (an edit indexed, a checkout, a session note).

use crate::util::{EVENTUALLY, QueryRequest, TestEnv, git_repo, poll, query};
use patina_proto::v1 as pb;

const FILES: &[(&str, &[u8])] = &[
    (
        "src/a.rs",
        b"pub fn cache_probe_alpha() -> u32 {\n    1\n}\n",
    ),
    ("src/b.rs", b"pub fn unrelated_beta() -> u32 {\n    2\n}\n"),
];

fn paths(r: &crate::util::QueryResponse) -> Vec<&str> {
    r.hits.iter().map(|h| h.path.as_str()).collect()
}

#[test]
fn a_repeated_query_is_cached_until_an_edit_is_indexed() {
    let env = TestEnv::started();
    let repo = git_repo(FILES);
    env.add_repo(repo.path());
    let req = QueryRequest {
        repos: vec![repo.key()],
        ..query("cache_probe_alpha")
    };
    let first = env.query(req.clone()).unwrap();
    assert_eq!(paths(&first), vec!["src/a.rs"]);
    assert!(!first.cached);
    let again = env.query(req.clone()).unwrap();
    assert!(again.cached, "the same question again is a lookup");
    assert_eq!(paths(&again), paths(&first));
    assert!(!again.query_id.is_empty() && again.query_id != first.query_id);
    assert!(
        again.freshness[0].fresh,
        "freshness is of now: {:?}",
        again.freshness
    );
    // Asked not to, it computes.
    let computed = env
        .query(QueryRequest {
            no_cache: true,
            ..req.clone()
        })
        .unwrap();
    assert!(!computed.cached);

    // The definition moves to b.rs: once the round has run, the answer follows.
    std::fs::write(repo.path().join("src/a.rs"), "pub fn other_alpha() {}\n").unwrap();
    std::fs::write(
        repo.path().join("src/b.rs"),
        "pub fn cache_probe_alpha() -> u32 {\n    3\n}\n",
    )
    .unwrap();
    poll(EVENTUALLY, "the edit shows", || {
        let r = env.query(req.clone()).unwrap();
        if paths(&r).first() == Some(&"src/b.rs") {
            assert!(!r.cached, "the first answer after the round is computed");
            return Ok(());
        }
        // Until the round has run, the old answer is what the index says: never after.
        Err(format!("{r:?}"))
    });
    // The two writes may reach the index in two rounds (and the watcher may report the second
    // only after an answer called the index fresh): once the index is quiet, the same question
    // is a lookup again, and every answer on the way says b.rs.
    poll(EVENTUALLY, "the answer is served from the cache", || {
        let r = env.query(req.clone()).unwrap();
        assert_eq!(paths(&r)[0], "src/b.rs", "{r:?}");
        if r.cached {
            Ok(())
        } else {
            Err(format!("{r:?}"))
        }
    });

    // Search.Context is cached by the same rules.
    let ctx = |env: &TestEnv| {
        env.call("Search.Context", async {
            pb::search_client::SearchClient::new(env.channel().await)
                .context(pb::ContextRequest {
                    query: "cache_probe_alpha".into(),
                    repos: vec![repo.key()],
                    ..Default::default()
                })
                .await
                .expect("Search.Context")
                .into_inner()
        })
    };
    let c1 = ctx(&env);
    assert!(!c1.cached && !c1.query_id.is_empty());
    assert_eq!(c1.items[0].path, "src/b.rs");
    let c2 = ctx(&env);
    assert!(c2.cached, "{c2:?}");
    assert_eq!(c2.text, c1.text);
    assert_ne!(c2.query_id, c1.query_id);

    // Read-your-writes queries never come from the cache.
    std::fs::write(
        repo.path().join("src/a.rs"),
        "pub fn cache_probe_alpha() {}\n",
    )
    .unwrap();
    std::fs::write(repo.path().join("src/b.rs"), "pub fn gone() {}\n").unwrap();
    let fresh = env
        .query(QueryRequest {
            fresh_timeout_ms: 10_000,
            ..req.clone()
        })
        .unwrap();
    assert!(!fresh.cached);
    assert_eq!(paths(&fresh), vec!["src/a.rs"], "{fresh:?}");
    // The context follows the edit too (the round ran for the fresh query).
    let c3 = ctx(&env);
    assert!(!c3.cached);
    assert_eq!(c3.items[0].path, "src/a.rs", "{c3:?}");
}

#[test]
fn a_session_note_invalidates_cached_answers() {
    let env = TestEnv::started();
    let repo = git_repo(FILES);
    env.add_repo(repo.path());
    let req = query("zanzibar handshake quirk");
    let before = env.query(req.clone()).unwrap();
    assert!(before.hits.is_empty(), "{before:?}");
    assert!(env.query(req.clone()).unwrap().cached);
    env.call("Sessions", async {
        let mut s = pb::sessions_client::SessionsClient::new(env.channel().await);
        s.start(pb::StartSessionRequest {
            name: "s1".into(),
            ..Default::default()
        })
        .await
        .expect("Sessions.Start");
        s.note(pb::NoteRequest {
            session: "s1".into(),
            text: "the zanzibar handshake quirk lives in src/a.rs".into(),
            ..Default::default()
        })
        .await
        .expect("Sessions.Note");
    });
    let after = env.query(req).unwrap();
    assert!(!after.cached);
    assert_eq!(after.hits.len(), 1, "{after:?}");
    assert_eq!(after.hits[0].kind, "note");
}

#[test]
fn a_checkout_invalidates_cached_history_answers() {
    let env = TestEnv::started();
    let repo = git_repo(FILES);
    let root = repo.path();
    let first = crate::util::git_out(root, &["rev-parse", "HEAD"], None);
    std::fs::write(
        root.join("src/b.rs"),
        "pub fn unrelated_beta() -> u32 {\n    7\n}\n",
    )
    .unwrap();
    crate::util::git(root, &["add", "-A"]);
    crate::util::git_out(
        root,
        &["commit", "-q", "-m", "Teach the walrus gateway to retry"],
        Some("2024-01-01T00:00:00Z"),
    );
    env.add_repo(root);
    let req = QueryRequest {
        repos: vec![repo.key()],
        oracles: vec!["history".into()],
        ..query("walrus gateway retry")
    };
    assert_eq!(paths(&env.query(req.clone()).unwrap()), vec!["src/b.rs"]);
    assert!(env.query(req.clone()).unwrap().cached);
    // Back before that commit: the cached answer (which knew the future) is never served again.
    crate::util::git(root, &["checkout", "-q", &first]);
    poll(EVENTUALLY, "the index catches up with the checkout", || {
        let r = env.query(req.clone()).unwrap();
        if r.freshness[0].fresh {
            assert!(
                r.hits.is_empty(),
                "a fresh answer after the checkout: {r:?}"
            );
            return Ok(());
        }
        assert!(r.hits.is_empty() || !r.cached, "{r:?}");
        Err(format!("{r:?}"))
    });
    // Once caught up, the answer is cached again (polled: a last round of the checkout may still
    // bump the generation after the first fresh answer on a busy machine).
    poll(EVENTUALLY, "the fresh answer is cached", || {
        let again = env.query(req.clone()).unwrap();
        assert!(again.hits.is_empty(), "{again:?}");
        if again.cached {
            Ok(())
        } else {
            Err(format!("{again:?}"))
        }
    });
}
