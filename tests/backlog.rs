//! The embedding backlog, on the real model: several repositories share one embedding worker,
//! and it serves them in the order users need — a small repository added beside a large one is
//! fully covered first instead of waiting for the large one's whole backlog, and within a
//! repository the files answers returned are embedded before the rest.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::util::*;

/// A Python repository of `files` modules of `defs` small functions each.
fn python_repo(files: usize, defs: usize, word: &str) -> Repo {
    let texts: Vec<(String, Vec<u8>)> = (0..files)
        .map(|f| {
            let mut s = String::new();
            for d in 0..defs {
                s.push_str(&format!(
                    "def {word}_{f}_{d}(value):\n    \"\"\"Return the {word} of value number {d}.\"\"\"\n    return value * {d} + {f}\n\n\n"
                ));
            }
            (format!("pkg/{word}_{f}.py"), s.into_bytes())
        })
        .collect();
    let refs: Vec<(&str, &[u8])> = texts
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_slice()))
        .collect();
    git_repo(&refs)
}

/// How long a backlog of a few hundred chunks may take to embed on a busy machine.
const COVERED: Duration = Duration::from_secs(300);

fn covered(env: &TestEnv, root: &Path) -> (bool, u64) {
    let info = env.repo_info(root);
    (
        info.chunks > 0 && info.embed_backlog == 0 && info.vectors == info.chunks,
        info.embed_backlog,
    )
}

#[test]
fn two_repositories_added_together_both_reach_coverage_the_smaller_first() {
    let mut env = TestEnv::with_model();
    let gate = env.embed_gate();
    env.start_daemon();
    let large = python_repo(150, 5, "velocity");
    let small = python_repo(3, 2, "temperature");
    env.add_repo(large.path());
    env.add_repo(small.path());
    // Both wait in full when the model starts (the gate held it back): the order is the policy's.
    gate.open();
    let mut small_done: Option<(Instant, u64)> = None;
    let large_done = poll(COVERED, "both repositories are covered", || {
        let (small_ok, _) = covered(&env, small.path());
        let (large_ok, large_backlog) = covered(&env, large.path());
        if small_ok && small_done.is_none() {
            small_done = Some((Instant::now(), large_backlog));
        }
        if large_ok {
            return Ok(Instant::now());
        }
        Err(format!(
            "small {:?}, large {:?}",
            env.repo_info(small.path()),
            env.repo_info(large.path())
        ))
    });
    let (small_at, large_backlog_then) =
        small_done.expect("the small repository was covered before the large one");
    assert!(small_at <= large_done);
    assert!(
        large_backlog_then > 0,
        "the small repository should be covered while the large one still waits"
    );
    // Both answer semantically once covered.
    let info = env.repo_info(small.path());
    assert_eq!(info.vectors, info.chunks);
}

#[test]
fn two_copies_of_the_same_code_added_together_are_embedded_once() {
    // A clone or a worktree beside its original: the second is queued before the first is
    // embedded, so its chunks find nothing in the cache when they are queued. The worker looks
    // again when it reaches them, and takes the vectors the first copy's batches computed.
    let mut env = TestEnv::with_model();
    let gate = env.embed_gate();
    env.start_daemon();
    let original = python_repo(150, 5, "velocity");
    let copy = python_repo(150, 5, "velocity");
    for repo in [&original, &copy] {
        let out = env.patina(&["add", "--no-wait", &repo.key()]);
        assert_eq!(out.code(), 0, "{out:?}");
    }
    // Wait until the copy is indexed: its chunks then all wait (the gate holds the model back), so
    // the test tells the two behaviours apart on any machine.
    let queued = poll(COVERED, "the copy is indexed", || {
        let list = env.list();
        let info = list
            .repos
            .iter()
            .find(|r| r.root == copy.path().to_string_lossy());
        info.filter(|i| i.chunks > 0 && !i.indexing)
            .cloned()
            .ok_or(format!("{info:?}"))
    });
    gate.open();
    eventually_within(COVERED, "both copies are covered", || {
        covered(&env, original.path()).0 && covered(&env, copy.path()).0
    });
    let chunks = env.repo_info(original.path()).chunks;
    assert_eq!(env.repo_info(copy.path()).vectors, chunks);
    assert!(
        queued.embed_backlog > chunks / 4,
        "the copy should have been queued before its original was embedded: {queued:?}"
    );
    // Commit messages are embedded after the chunks (one each): a few more at most.
    let computed = env.assert_healthy().embeddings_computed;
    assert!(
        computed <= chunks + 4,
        "{computed} embeddings computed for two copies of {chunks} chunks"
    );
}

/// `patina status` says how long the model's pass has left: unknown while it has no pace (the
/// gate holds it back), then the backlog over the recent pace, then nothing once it is done.
#[test]
fn status_shows_the_time_the_model_pass_has_left_once_it_has_a_pace() {
    let mut env = TestEnv::with_model();
    let gate = env.embed_gate();
    env.start_daemon();
    let repo = python_repo(300, 5, "pressure");
    env.add_repo(repo.path());
    let held = env.repo_info(repo.path());
    let stage = held
        .embed_eta
        .clone()
        .unwrap_or_else(|| panic!("a backlog without a stage: {held:?}"));
    assert_eq!(stage.left, held.embed_backlog);
    assert!(stage.left > 0 && stage.per_sec == 0.0, "{stage:?}");
    let text = env.patina(&["status"]).stdout;
    assert!(
        text.contains(&format!(
            "model vectors: {} chunks left, time left not known yet",
            stage.left
        )),
        "{text}"
    );

    gate.open();
    let (left, per_sec, eta_ms) = poll(COVERED, "the model's pass has a pace", || {
        let info = env.repo_info(repo.path());
        match &info.embed_eta {
            Some(s) if s.per_sec > 0.0 && s.left > 0 => Ok((s.left, s.per_sec, s.eta_ms)),
            _ => Err(format!("{info:?}")),
        }
    });
    let expected = left as f64 / per_sec * 1000.0;
    assert!(
        (eta_ms as f64 - expected).abs() <= 1.0 + expected * 0.001,
        "{left} chunks at {per_sec}/s should take {expected} ms, not {eta_ms}"
    );
    eventually_within(COVERED, "the repository is covered", || {
        covered(&env, repo.path()).0
    });
    let done = env.repo_info(repo.path());
    assert_eq!(
        done.embed_eta, None,
        "a drained backlog has no stage left: {done:?}"
    );
    assert!(!env.patina(&["status"]).stdout.contains("model vectors:"));
}

/// `[semantic] model_pass = false`: every chunk keeps its static vector, the model embeds none,
/// and status says why the model's stage does not advance.
#[test]
fn with_the_model_pass_off_chunks_keep_their_static_vectors() {
    let mut env = TestEnv::with_model();
    env.append_config("\n[semantic]\nmodel_pass = false\n");
    env.start_daemon();
    let repo = python_repo(20, 3, "humidity");
    env.add_repo(repo.path());
    let info = poll(COVERED, "every chunk has a static vector", || {
        let info = env.repo_info(repo.path());
        (info.chunks > 0 && info.static_vectors == info.chunks)
            .then_some(info.clone())
            .ok_or(format!("{info:?}"))
    });
    assert_eq!(info.vectors, 0, "{info:?}");
    assert_eq!(env.assert_healthy().embeddings_computed, 0);
    let stage = info.embed_eta.expect("the model's stage, waiting");
    assert!(stage.waiting.contains("model_pass"), "{stage:?}");
}

#[test]
fn the_files_an_answer_returned_get_the_models_vectors_before_the_rest() {
    let mut env = TestEnv::with_model();
    let gate = env.embed_gate();
    // Static vectors count less than the model's, so an answer says how many of the semantic
    // oracle's leading hits have one.
    env.append_config("[retrieval]\nstatic_weight = 0.5\n");
    env.start_daemon();
    // 750 chunks of look-alike functions, and one module of twelve about something else.
    let mut texts: Vec<(String, Vec<u8>)> = (0..150)
        .map(|f| {
            let body: String = (0..5)
                .map(|d| {
                    format!(
                        "def velocity_{f}_{d}(value):\n    \"\"\"Return the velocity of value number {d}.\"\"\"\n    return value * {d} + {f}\n\n\n"
                    )
                })
                .collect();
            (format!("pkg/velocity_{f}.py"), body.into_bytes())
        })
        .collect();
    let thumbs: String = [
        "load", "store", "evict", "resize", "lookup", "expire", "count", "clear", "warm", "key",
        "path", "size",
    ]
    .iter()
    .map(|verb| {
        format!(
            "def thumbnail_cache_{verb}(image, width, height):\n    \"\"\"The {verb} step of the cache of thumbnails kept for each image at each width and height.\"\"\"\n    return (image.id, width, height, \"{verb}\")\n\n\n"
        )
    })
    .collect();
    texts.push(("media/thumbnails.py".into(), thumbs.into_bytes()));
    let refs: Vec<(&str, &[u8])> = texts
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_slice()))
        .collect();
    let repo = git_repo(&refs);
    env.add_repo(repo.path());
    // The model is held back: every chunk waits with its static vector.
    poll(
        Duration::from_secs(60),
        "static vectors for the backlog",
        || {
            let info = env.repo_info(repo.path());
            (info.static_vectors > 0 && info.embed_backlog > 700 && !info.indexing)
                .then_some(())
                .ok_or(format!("{info:?}"))
        },
    );
    let question = "the cache of thumbnails kept for each image size";
    // The notice that some of the semantic oracle's leading hits (its first ten chunks) have
    // static vectors, not the repository's backlog notice.
    const LEADING_STATIC: &str = "hits have static vectors";
    let semantic = |env: &TestEnv| {
        env.query(QueryRequest {
            repos: vec![repo.path().to_string_lossy().into_owned()],
            oracles: vec!["semantic".into()],
            ..query(question)
        })
        .unwrap_or_else(|s| panic!("query {question:?}: {s}"))
    };
    // An answer returns the thumbnails module (static vectors served it).
    let first = semantic(&env);
    assert_eq!(
        first.hits.first().map(|h| h.path.as_str()),
        Some("media/thumbnails.py"),
        "{:?}",
        first.hits
    );
    assert!(
        first.notices.iter().any(|n| n.contains(LEADING_STATIC)),
        "{:?}",
        first.notices
    );
    // Let the model run until it has computed a first batch, then hold it back again.
    gate.open();
    poll(COVERED, "the model's first vectors", || {
        let info = env.repo_info(repo.path());
        (info.vectors >= 12)
            .then_some(())
            .ok_or(format!("{info:?}"))
    });
    gate.close();
    let info = env.repo_info(repo.path());
    assert!(
        info.embed_backlog > 300,
        "the look-alike modules still wait: {info:?}"
    );
    // The module the answer returned has the model's vectors: none of the semantic oracle's
    // leading hits (its twelve functions) is served by a static vector any more.
    let after = semantic(&env);
    assert_eq!(
        after.hits.first().map(|h| h.path.as_str()),
        Some("media/thumbnails.py")
    );
    assert!(
        !after.notices.iter().any(|n| n.contains(LEADING_STATIC)),
        "the answered module was embedded first: {:?} ({info:?})",
        after.notices
    );
}
