//! `patina tune`: weights learned from the repository's own history. A fixture history whose
//! answers are known — each commit message speaks of one topic, in words only its past commits
//! share, and changes that topic's module, whose code never uses those words; a glossary holds
//! every topic word — so the words alone point at the glossary and only the history points at the
//! module. Tuning must find that, measure it on the newer commits it did not fit on, store it, and
//! the next query must use it.

use std::path::Path;

use patina_proto::v1 as pb;

use crate::util::{EVENTUALLY, TestEnv, git, git_out, git_repo, oracle_name, poll, query};

const TOPICS: [[&str; 5]; 6] = [
    ["lantern", "harbor", "meadow", "beacon", "ferry"],
    ["granite", "violin", "orchard", "saddle", "comet"],
    ["tundra", "pepper", "glacier", "magnet", "quiver"],
    ["falcon", "cobalt", "thimble", "prairie", "lagoon"],
    ["walnut", "crimson", "anchor", "mosaic", "canyon"],
    ["velvet", "sprocket", "island", "marble", "thistle"],
];

fn module(t: usize) -> String {
    format!("src/mod_{t}.rs")
}

/// 48 commits, one a day, topic `i % 6`, each changing that topic's module only.
fn history(root: &Path) {
    for i in 0..48usize {
        let t = i % 6;
        let w = &TOPICS[t];
        let path = root.join(module(t));
        let mut code = std::fs::read_to_string(&path).unwrap();
        code.push_str(&format!(
            "pub fn step_{i}(x: u64) -> u64 {{\n    x * {i} + {t}\n}}\n"
        ));
        std::fs::write(&path, code).unwrap();
        git(root, &["add", "-A"]);
        let message = format!(
            "Rework {} {} and {} when the {} changes",
            w[i % 5],
            w[(i + 1) % 5],
            w[(i + 2) % 5],
            w[(i + 3) % 5]
        );
        let date = format!("2024-{:02}-{:02}T12:00:00Z", 1 + i / 28, 1 + i % 28);
        git_out(root, &["commit", "-q", "-m", &message], Some(&date));
    }
}

fn fixture() -> crate::util::Repo {
    let glossary: String = TOPICS
        .iter()
        .map(|w| format!("- {}\n", w.join(", ")))
        .collect();
    let mut files: Vec<(String, Vec<u8>)> = (0..6)
        .map(|t| {
            (
                module(t),
                format!("pub fn base_{t}() -> u64 {{\n    {t}\n}}\n").into_bytes(),
            )
        })
        .collect();
    files.push((
        "docs/glossary.md".into(),
        format!("# Words\n\n{glossary}").into_bytes(),
    ));
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_slice()))
        .collect();
    let repo = git_repo(&refs);
    history(repo.path());
    repo
}

fn tune_client(env: &TestEnv) -> pb::tune_client::TuneClient<tonic::transport::Channel> {
    env.block_on(async { pb::tune_client::TuneClient::new(env.channel().await) })
}

fn wait_tuned(env: &TestEnv, key: &str) -> pb::TuneState {
    let s = poll(EVENTUALLY, "tuning ends", || {
        let s = env
            .block_on(tune_client(env).status(pb::TuneStatusRequest { repo: key.into() }))
            .expect("Tune.Status")
            .into_inner()
            .repos
            .remove(0);
        if s.running {
            Err(format!("{s:?}"))
        } else {
            Ok(s)
        }
    });
    assert!(s.error.is_empty(), "tuning failed: {}", s.error);
    s
}

fn ask(env: &TestEnv, repo: &Path, text: &str) -> pb::QueryResponse {
    let mut q = query(text);
    q.repos = vec![repo.to_string_lossy().into_owned()];
    env.query(q).expect("Search.Query")
}

fn history_weight(resp: &pb::QueryResponse) -> Option<f64> {
    resp.oracles
        .iter()
        .find(|o| oracle_name(o.oracle) == "history")
        .map(|o| o.weight)
}

#[test]
fn tuning_learns_from_history_stores_its_gain_and_the_next_query_uses_it() {
    let mut env = TestEnv::new();
    let cfg = env.home().join("config.toml");
    let mut text = std::fs::read_to_string(&cfg).unwrap_or_default();
    text.push_str("\n[tune]\nqueries = 16\n");
    std::fs::write(&cfg, text).unwrap();
    env.start_daemon();
    let repo = fixture();
    let root = repo.path();
    env.add_repo(root);
    let key = root.to_string_lossy().into_owned();

    // Before tuning: the history oracle does not run by default and the words find the glossary.
    let question = "Rework lantern beacon and harbor when the ferry changes";
    let before = ask(&env, root, question);
    assert_eq!(history_weight(&before), None, "{:?}", before.oracles);
    assert_eq!(before.hits[0].path, "docs/glossary.md");

    // Feedback on an answer joins the training questions.
    let fb = env
        .block_on(async {
            pb::feedback_client::FeedbackClient::new(env.channel().await)
                .record(pb::FeedbackRequest {
                    query_id: before.query_id.clone(),
                    used: vec![module(0)],
                    ..Default::default()
                })
                .await
        })
        .expect("Feedback.Record")
        .into_inner();
    assert!(fb.known_query);

    let out = env.patina(&["tune", &key]);
    assert!(out.status.success(), "{out:?}");
    assert!(out.stdout.contains("background"), "{}", out.stdout);
    let state = wait_tuned(&env, &key);
    let r = state.result.expect("a stored result");
    assert_eq!(r.heldout_queries, 16);
    assert_eq!(
        r.train_queries,
        16 + 1,
        "16 older commits and the feedback question"
    );
    assert_eq!(r.feedback_queries, 1);
    assert!(
        r.train_after >= r.train_before,
        "never worse than the defaults on its own training slice: {r:?}"
    );
    assert!(
        r.heldout_after > r.heldout_before + 0.3,
        "the history is what answers these questions: {r:?}"
    );
    assert!(r.applied, "{r:?}");
    assert_eq!(r.overrides["history.by_default"], 1.0, "{r:?}");
    assert_eq!(r.defaults["history.by_default"], 0.0);

    // The next query (naming no oracles) runs the history oracle with the stored weight, and the
    // module the history points at comes first.
    let after = ask(&env, root, question);
    let tuned = history_weight(&after).expect("the history oracle runs now");
    // The stored weight when the run changed it, else the configured one (README: 0.1).
    let stored = r.overrides.get("weight.history").copied().unwrap_or(0.1);
    assert_eq!(
        tuned, stored,
        "the stored weight: {r:?} {:?}",
        after.oracles
    );
    assert!(tuned > 0.0);
    assert!(!after.cached, "tuning invalidates cached answers");
    assert_eq!(after.hits[0].path, module(0), "{:?}", after.hits);

    // `patina status` shows the measured gain; so does `tune --status --json`.
    let status = env.patina(&["status"]);
    assert!(
        status.stdout.contains("tuned: held-out MRR@10"),
        "{}",
        status.stdout
    );
    let js = env.patina(&["tune", "--status", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&js.stdout).expect("JSON");
    assert_eq!(v["repos"][0]["result"]["applied"], true);

    // The stored settings survive a restart.
    env.stop_daemon();
    env.start_daemon();
    assert_eq!(history_weight(&ask(&env, root, question)), Some(tuned));

    // Reset: back to the configuration.
    let out = env.patina(&["tune", &key, "--reset"]);
    assert!(out.status.success(), "{out:?}");
    let reset = ask(&env, root, question);
    assert_eq!(history_weight(&reset), None, "{:?}", reset.oracles);
}

#[test]
fn tuning_a_repository_without_enough_history_says_why() {
    let env = TestEnv::started();
    let repo = git_repo(&[("src/lib.rs", b"pub fn one() -> u32 {\n    1\n}\n")]);
    env.add_repo(repo.path());
    let key = repo.path().to_string_lossy().into_owned();
    let out = env.patina(&["tune", &key, "--wait"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        out.stdout.contains("too few informative commits"),
        "{out:?}"
    );
    let out = env.patina(&["tune", "/no/such/repository"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

/// With the model on, the history oracle also matches commits by the meaning of their messages:
/// a question sharing no word with a past commit's message still finds the file it changed.
#[test]
fn commit_messages_are_matched_by_meaning_with_the_model() {
    let mut env = TestEnv::with_model();
    env.start_daemon();
    let repo = git_repo(&[
        (
            "src/link.rs",
            b"pub fn poll_link() -> bool {\n    true\n}\n",
        ),
        ("src/paint.rs", b"pub fn draw() -> u8 {\n    0\n}\n"),
    ]);
    let root = repo.path();
    std::fs::write(
        root.join("src/link.rs"),
        "pub fn poll_link() -> bool {\n    false\n}\n",
    )
    .unwrap();
    git(root, &["add", "-A"]);
    git_out(
        root,
        &[
            "commit",
            "-q",
            "-m",
            "Stop crashing when the network cable is unplugged",
        ],
        Some("2024-01-01T00:00:00Z"),
    );
    std::fs::write(
        root.join("src/paint.rs"),
        "pub fn draw() -> u8 {\n    1\n}\n",
    )
    .unwrap();
    git(root, &["add", "-A"]);
    git_out(
        root,
        &[
            "commit",
            "-q",
            "-m",
            "Use brighter colours for the toolbar icons",
        ],
        Some("2024-01-02T00:00:00Z"),
    );
    env.add_repo(root);
    let question = "survive losing the ethernet connection";
    poll(EVENTUALLY, "the unplugged-cable commit is matched", || {
        let mut q = query(question);
        q.repos = vec![root.to_string_lossy().into_owned()];
        q.oracles = vec!["history".into()];
        q.no_cache = true;
        let resp = env.query(q).expect("Search.Query");
        match resp.hits.first().map(|h| h.path.as_str()) {
            Some("src/link.rs") => Ok(()),
            _ => Err(format!("{:?}", resp.hits)),
        }
    });
}

/// `patina tune` measures what search does: for each feedback question, the first ten files the
/// tuner's replay of the ranking pipeline gives under the settings the repository now answers
/// with are the first ten files a live search gives. Questions about code (which run the graph
/// stage and the subject steps), about tests, and prose ones whose answer only the history knows.
#[test]
fn the_tuners_replay_and_a_live_search_give_the_same_first_ten_files() {
    let mut env = TestEnv::new();
    env.append_config("\n[tune]\nqueries = 16\n\n[retrieval.weights]\ngraph = 0.5\n");
    let dump = env.home().join("replay.jsonl");
    env.next_daemon_env("PATINA_TEST_TUNE_REPLAY", &dump);
    env.start_daemon();
    let repo = fixture();
    let root = repo.path();
    // Callers of the modules' code, for the graph stage to find.
    std::fs::write(
        root.join("src/glue.rs"),
        "use crate::mod_1::base_1;\nuse crate::mod_3::base_3;\n\npub fn total() -> u64 {\n    base_3() + base_1()\n}\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join("tests")).unwrap();
    std::fs::write(
        root.join("tests/mod_2_test.rs"),
        "#[test]\nfn glacier_steps_add_up() {\n    assert_eq!(mod_2::step_2(1), 4);\n}\n",
    )
    .unwrap();
    git(root, &["add", "-A"]);
    git_out(
        root,
        &["commit", "-q", "-m", "test"],
        Some("2024-03-01T12:00:00Z"),
    );
    env.add_repo(root);
    let key = root.to_string_lossy().into_owned();
    let ask_files = |text: &str| -> (pb::QueryResponse, Vec<String>) {
        let mut q = query(text);
        q.repos = vec![key.clone()];
        q.granularity = pb::Granularity::File as i32;
        q.limit = 10;
        q.no_cache = true;
        let resp = env.query(q).expect("Search.Query");
        let files = resp.hits.iter().map(|h| h.path.clone()).collect();
        (resp, files)
    };
    let questions = [
        "Rework lantern beacon and harbor when the ferry changes",
        "how does total add the bases together",
        "base_3",
        "tests for the glacier steps",
        "where are the granite violin words listed",
    ];
    for (i, question) in questions.iter().enumerate() {
        let (resp, _) = ask_files(question);
        env.block_on(async {
            pb::feedback_client::FeedbackClient::new(env.channel().await)
                .record(pb::FeedbackRequest {
                    query_id: resp.query_id.clone(),
                    used: vec![module(i % 6)],
                    ..Default::default()
                })
                .await
        })
        .expect("Feedback.Record");
    }
    let out = env.patina(&["tune", &key]);
    assert!(out.status.success(), "{out:?}");
    wait_tuned(&env, &key);

    let text = std::fs::read_to_string(&dump).expect("the tuner's replays");
    let replays: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("JSON"))
        .filter(|r| r["slice"] == "feedback")
        .collect();
    assert_eq!(replays.len(), 2 * questions.len(), "{text}");
    let mut graph_ran = Vec::new();
    let mut compare = |settings: &str| {
        for r in replays.iter().filter(|r| r["settings"] == settings) {
            let question = r["question"].as_str().expect("question");
            let replayed: Vec<String> = r["files"]
                .as_array()
                .expect("files")
                .iter()
                .map(|f| f.as_str().unwrap_or_default().to_string())
                .collect();
            let (resp, live) = ask_files(question);
            graph_ran.extend(
                resp.oracles
                    .iter()
                    .filter(|o| oracle_name(o.oracle) == "graph")
                    .map(|o| (question.to_string(), o.hits)),
            );
            assert!(!live.is_empty(), "{question}");
            assert_eq!(
                replayed, live,
                "{question} ({settings}): the replay and the live search differ"
            );
        }
    };
    // The settings tuning stored (it finds that the history answers these questions)...
    compare("now");
    // ...and the configuration's, once the tuned settings are dropped.
    let out = env.patina(&["tune", &key, "--reset"]);
    assert!(out.status.success(), "{out:?}");
    compare("defaults");
    assert!(
        graph_ran.iter().any(|(_, hits)| *hits > 0),
        "a question about code ran the graph stage: {graph_ran:?}"
    );
}
