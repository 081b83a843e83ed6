//! A team's shared store on a real PostgreSQL with pgvector (the pinned `pgserver` wheel): a
//! repository published by one daemon gives a teammate's daemon its vectors, so the teammate
//! embeds only what it changed; the engine's roles decide who sees a repository at all; a
//! publish cut off before its commit leaves no partial commit; with the engine down, everything
//! local works and `patina status` says why. Credentials never reach status or logs.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::util::*;
use patina_proto::v1::{Granularity, QueryRequest};

const REMOTE: &str = "https://git.example.com/acme/units.git";

const FILES: &[(&str, &[u8])] = FOUR_MEANINGS;

/// A server with a publishing role, a developer in the `team_backend` group, and an outsider.
fn server() -> PgServer {
    let pg = PgServer::start();
    pg.psql(
        "CREATE ROLE publisher LOGIN; GRANT CREATE ON DATABASE postgres TO publisher;
         CREATE ROLE team_backend; CREATE ROLE dev LOGIN IN ROLE team_backend;
         CREATE ROLE outsider LOGIN;",
    );
    pg
}

/// A daemon with the model whose store is `url`.
fn daemon_with_store(url: &str) -> TestEnv {
    let mut env = TestEnv::with_model();
    env.append_config(&format!("[team]\nurl = \"{url}\"\n"));
    env.start_daemon();
    env
}

fn json_of(out: &Output) -> serde_json::Value {
    assert_eq!(out.code(), 0, "{out:?}");
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"))
}

fn publish(env: &TestEnv, repo: &Path, readers: &[&str]) -> serde_json::Value {
    let mut args = vec!["publish".to_string(), repo.to_string_lossy().into_owned()];
    for r in readers {
        args.push("--reader".into());
        args.push(r.to_string());
    }
    args.push("--json".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    json_of(&env.patina(&args))
}

fn published_repo() -> Repo {
    let repo = git_repo(FILES);
    git(repo.path(), &["remote", "add", "origin", REMOTE]);
    repo
}

/// A teammate's clone of `src` at `into`, with the same remote.
fn clone_of(src: &Path, into: &Path) -> PathBuf {
    let clone = clone_repo(src, into);
    git(&clone, &["remote", "set-url", "origin", REMOTE]);
    clone
}

fn count(pg: &PgServer, table: &str) -> u64 {
    pg.psql(&format!("SELECT count(*) FROM patina.{table}"))
        .parse()
        .unwrap()
}

fn first_files(env: &TestEnv, root: &Path, text: &str) -> Vec<String> {
    env.query(QueryRequest {
        repos: vec![root.to_string_lossy().into_owned()],
        oracles: vec!["semantic".into()],
        granularity: Granularity::File as i32,
        ..query(text)
    })
    .unwrap_or_else(|s| panic!("{text}: {s}"))
    .hits
    .iter()
    .map(|h| h.path.clone())
    .collect()
}

#[test]
fn a_teammate_takes_the_published_vectors_and_embeds_only_what_it_changed() {
    let pg = server();
    let repo = published_repo();
    let a = daemon_with_store(&pg.url("publisher"));
    a.add_repo(repo.path());
    let info = a.embedded(repo.path());

    let first = publish(&a, repo.path(), &["team_backend"]);
    assert_eq!(first["remote"], "git.example.com/acme/units", "{first}");
    assert_eq!(first["already"], false, "{first}");
    assert_eq!(first["files_sent"], first["files"], "{first}");
    assert_eq!(first["vectors_sent"].as_u64(), Some(info.chunks), "{first}");
    // More vectors than the store held: they went in first, the vector index was built after.
    assert_eq!(first["bulk_load"], true, "{first}");
    assert_eq!(
        pg.psql("SELECT count(*) FROM pg_indexes WHERE indexname = 'vectors_near'"),
        "1"
    );
    // The graph facts went with the files: the engine itself says which file imports smtplib.
    assert_eq!(
        pg.psql(
            "SELECT f.path FROM patina.imports i JOIN patina.files f USING (repo_id, file_key)
             WHERE i.module = 'smtplib'"
        ),
        "mail.py"
    );
    assert_eq!(
        pg.psql("SELECT facts IS NOT NULL FROM patina.files WHERE path = 'mail.py'"),
        "t",
        "the file's facts, whole"
    );
    // Published again: the store has it all, nothing is sent.
    let again = publish(&a, repo.path(), &["team_backend"]);
    assert_eq!(again["already"], true, "{again}");
    assert_eq!(count(&pg, "commits"), 1);

    // A teammate (another role, another state, another path) changes one function on a branch.
    let scratch = tempfile::tempdir().unwrap();
    let clone = clone_of(repo.path(), &scratch.path().join("mine"));
    std::fs::write(
        clone.join("lines.py"),
        "def read_lines(path):\n    with open(path, encoding='utf-8') as f:\n        return f.read().splitlines()\n",
    )
    .unwrap();
    git(&clone, &["commit", "-qam", "read lines as UTF-8"]);
    let secret = "hunter2-do-not-show";
    let b = daemon_with_store(&format!("{} password={secret}", pg.url("dev")));
    b.add_repo(&clone);
    let mine = b.embedded(&clone);
    let h = b.assert_healthy();
    assert!(
        h.embeddings_computed >= 1,
        "the changed chunk is embedded here: {h:?}"
    );
    assert_eq!(
        h.embeddings_computed + h.embeddings_from_team,
        mine.chunks,
        "every other chunk came from the store: {h:?}"
    );
    assert!(h.embeddings_from_team >= mine.chunks - 1, "{h:?}");
    assert!(h.team_store.contains("PostgreSQL"), "{h:?}");
    assert_eq!(h.team_trouble, "", "{h:?}");

    // The same meaning, found the same way, from vectors computed by the other daemon.
    for text in [
        "american weather thermometer scale",
        "send a message by electronic post",
    ] {
        let theirs = first_files(&a, repo.path(), text);
        assert!(!theirs.is_empty());
        assert_eq!(theirs[0], first_files(&b, &clone, text)[0], "{text}");
    }

    let list = json_of(&b.patina(&["published", "--json"]));
    let repos = list["repos"].as_array().unwrap();
    assert_eq!(repos.len(), 1, "{list}");
    assert_eq!(repos[0]["name"], "acme/units", "{list}");
    assert_eq!(repos[0]["cloned"], true, "{list}");

    // The password is in the URL, and nowhere the user or a log can see.
    let status = b.patina(&["status", "--json"]);
    assert_eq!(status.code(), 0, "{status:?}");
    assert!(!status.stdout.contains(secret), "{}", status.stdout);
    assert!(status.stdout.contains("PostgreSQL"), "{}", status.stdout);
    let doctor = b.patina(&["doctor"]);
    assert!(
        doctor
            .stdout
            .lines()
            .any(|l| l.starts_with("[ok  ] team") && l.contains("1 repositories")),
        "{doctor:?}"
    );
    assert!(!doctor.stdout.contains(secret), "{doctor:?}");
    assert!(!b.logs().contains(secret), "the password reached the log");
}

#[test]
fn a_role_without_the_grant_sees_nothing_of_a_published_repository() {
    let pg = server();
    let repo = published_repo();
    let a = daemon_with_store(&pg.url("publisher"));
    a.add_repo(repo.path());
    let info = a.embedded(repo.path());
    publish(&a, repo.path(), &["team_backend"]);

    // Even with SELECT on every table, row-level security hides every row of the repository.
    pg.psql(
        "GRANT USAGE ON SCHEMA patina TO outsider;
         GRANT SELECT ON ALL TABLES IN SCHEMA patina TO outsider;",
    );
    for table in [
        "repos",
        "grants",
        "files",
        "chunks",
        "vectors",
        "commits",
        "commit_files",
        "imports",
    ] {
        assert_eq!(
            pg.psql_as("outsider", &format!("SELECT count(*) FROM patina.{table}")),
            "0",
            "{table}"
        );
        assert_ne!(
            pg.psql_as("dev", &format!("SELECT count(*) FROM patina.{table}")),
            "0",
            "{table}"
        );
    }

    let scratch = tempfile::tempdir().unwrap();
    let clone = clone_of(repo.path(), &scratch.path().join("theirs"));
    let c = daemon_with_store(&pg.url("outsider"));
    let list = json_of(&c.patina(&["published", "--json"]));
    assert_eq!(list["repos"].as_array().map(Vec::len), Some(0), "{list}");
    let own = git_repo(&[(
        "notes.md",
        b"# Weather\n\nThermometer scales, Celsius and Fahrenheit.\n",
    )]);
    c.add_repo(own.path());
    let own_chunks = c.embedded(own.path()).chunks;
    let (hits, summary) = ask(
        &c,
        own.path(),
        &["--org", "american weather thermometer scale"],
    );
    assert!(published_hits(&hits).is_empty(), "{hits:?}");
    assert!(
        summary["degraded"].as_array().unwrap().is_empty(),
        "{summary}"
    );
    c.add_repo(&clone);
    c.embedded(&clone);
    let h = c.assert_healthy();
    assert_eq!(h.embeddings_from_team, 0, "{h:?}");
    assert_eq!(h.embeddings_computed, info.chunks + own_chunks, "{h:?}");
}

/// A publisher's daemon, killed at the crash point `at` of its first publish of
/// [`published_repo`]: the server, the repository, the (stopped) daemon and what it indexed.
fn publish_killed_at(at: &str) -> (PgServer, Repo, TestEnv, RepoInfo) {
    let pg = server();
    let repo = published_repo();
    let mut a = TestEnv::with_model();
    a.append_config(&format!("[team]\nurl = \"{}\"\n", pg.url("publisher")));
    a.crash_next_daemon_at(at);
    a.start_daemon();
    a.add_repo(repo.path());
    let info = a.embedded(repo.path());
    let out = a.patina(&["publish", &repo.key(), "--reader", "team_backend"]);
    assert_ne!(out.code(), 0, "{out:?}");
    a.wait_daemon_exit(Duration::from_secs(30));
    (pg, repo, a, info)
}

#[test]
fn a_publish_cut_off_before_its_commit_leaves_no_partial_commit() {
    let (pg, repo, mut a, info) = publish_killed_at("publish-before-commit");
    // The content is there (content-addressed, harmless); the commit is not, in any part.
    assert!(count(&pg, "files") > 0);
    assert_eq!(count(&pg, "commits"), 0);
    assert_eq!(count(&pg, "commit_files"), 0);

    // Published again: only the commit is written.
    a.start_daemon();
    a.embedded(repo.path());
    let done = publish(&a, repo.path(), &["team_backend"]);
    assert_eq!(done["already"], false, "{done}");
    assert_eq!(done["files_sent"], 0, "{done}");
    assert_eq!(done["vectors_sent"], 0, "{done}");
    assert_eq!(done["bulk_load"], false, "{done}");
    assert_eq!(
        done["vectors_present"].as_u64(),
        Some(info.chunks),
        "{done}"
    );
    assert_eq!(count(&pg, "commits"), 1);
    assert_eq!(count(&pg, "commit_files"), done["files"].as_u64().unwrap());
}

#[test]
fn a_publish_cut_off_in_its_bulk_load_leaves_the_vector_index_to_the_next_publish() {
    let (pg, repo, mut a, info) = publish_killed_at("publish-before-index");
    // Killed between the load and the build: the vectors are in, their index is not, and no
    // commit is visible.
    let indexed = "SELECT count(*) FROM pg_indexes WHERE indexname = 'vectors_near'";
    assert_eq!(pg.psql(indexed), "0");
    assert_eq!(count(&pg, "vectors"), info.chunks);
    assert_eq!(count(&pg, "commits"), 0);

    // The next publish finds the index missing and builds it; the commit goes in whole.
    a.start_daemon();
    a.embedded(repo.path());
    let done = publish(&a, repo.path(), &["team_backend"]);
    assert_eq!(done["already"], false, "{done}");
    assert_eq!(done["vectors_sent"], 0, "{done}");
    assert_eq!(pg.psql(indexed), "1");
    assert_eq!(count(&pg, "commits"), 1);
    // And it serves: a teammate's --org question is answered by meaning from the store.
    let b = daemon_with_store(&pg.url("dev"));
    let mine = git_repo(&[("notes.md", b"# Notes\n\nNothing about weather here.\n")]);
    b.add_repo(mine.path());
    b.embedded(mine.path());
    let (hits, summary) = ask(
        &b,
        mine.path(),
        &["--org", "american weather thermometer scale"],
    );
    let found = published_hits(&hits);
    assert!(!found.is_empty(), "{hits:?} {summary}");
    assert_eq!(found[0]["repo_path"], "temperature.py", "{hits:?}");
}

#[test]
fn with_the_store_down_a_daemon_embeds_and_answers_locally_and_says_why() {
    let pg = server();
    let repo = published_repo();
    let url = pg.url("dev");
    pg.kill();
    let b = daemon_with_store(&url);
    b.add_repo(repo.path());
    let info = b.embedded(repo.path());
    let h = b.assert_healthy();
    assert_eq!(h.embeddings_computed, info.chunks, "{h:?}");
    assert_eq!(h.embeddings_from_team, 0, "{h:?}");
    assert!(h.team_trouble.contains("PostgreSQL"), "{h:?}");
    assert_eq!(
        first_files(&b, repo.path(), "american weather thermometer scale")[0],
        "temperature.py"
    );
    let status = b.patina(&["status"]);
    assert!(status.stdout.contains("failing"), "{status:?}");
    let doctor = b.patina(&["doctor"]);
    assert!(
        doctor
            .stdout
            .lines()
            .any(|l| l.starts_with("[warn] team") && l.contains("PostgreSQL")),
        "{doctor:?}"
    );
    let out = b.patina(&["published"]);
    assert_ne!(out.code(), 0, "{out:?}");
    assert!(out.stderr.contains("PostgreSQL"), "{out:?}");
}

/// The JSON lines of `patina q ARGS… --json` run in `cwd`: the hits, then the summary.
fn ask(env: &TestEnv, cwd: &Path, args: &[&str]) -> (Vec<serde_json::Value>, serde_json::Value) {
    let mut all = vec!["q"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = env.patina_in(cwd, &all);
    assert!(out.code() == 0 || out.code() == 1, "{out:?}");
    let mut lines: Vec<serde_json::Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let summary = lines.pop().expect("a summary line");
    (lines, summary)
}

fn published_hits(hits: &[serde_json::Value]) -> Vec<&serde_json::Value> {
    hits.iter().filter(|h| !h["published"].is_null()).collect()
}

#[test]
fn org_finds_what_a_teammate_published_and_has_no_clone_of_and_a_dead_store_leaves_local_answers() {
    let pg = server();
    let theirs = published_repo();
    let a = daemon_with_store(&pg.url("publisher"));
    a.add_repo(theirs.path());
    a.embedded(theirs.path());
    publish(&a, theirs.path(), &["team_backend"]);
    let head = git_out(theirs.path(), &["rev-parse", "HEAD"], None);

    // Another developer's own repository, about something else.
    let mine = git_repo(&[(
        "recipes.py",
        b"def bake_bread(flour, water):\n    \"\"\"Knead the dough and bake it.\"\"\"\n    return flour + water\n",
    )]);
    let b = daemon_with_store(&pg.url("dev"));
    b.add_repo(mine.path());
    b.embedded(mine.path());
    let question = "american weather thermometer scale";

    let (hits, _) = ask(&b, mine.path(), &[question]);
    assert!(
        published_hits(&hits).is_empty(),
        "no --org, no store: {hits:?}"
    );
    let (hits, summary) = ask(&b, mine.path(), &["--org", question]);
    let found = published_hits(&hits);
    assert!(!found.is_empty(), "{hits:?} {summary}");
    assert_eq!(found[0]["published"]["name"], "acme/units", "{hits:?}");
    assert_eq!(found[0]["published"]["commit"], head.as_str(), "{hits:?}");
    assert_eq!(found[0]["repo_path"], "temperature.py", "{hits:?}");
    assert!(
        found[0]["path"]
            .as_str()
            .unwrap()
            .starts_with("acme/units@"),
        "{hits:?}"
    );
    assert!(
        found[0]["oracles"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["oracle"] == "org"),
        "{hits:?}"
    );
    // A question naming a definition: the engine looks it up by name (its symbol ranking).
    let (hits, summary) = ask(&b, mine.path(), &["--org", "where is send_email defined"]);
    let found = published_hits(&hits);
    assert!(!found.is_empty(), "{hits:?} {summary}");
    assert_eq!(found[0]["repo_path"], "mail.py", "{hits:?}");
    assert!(
        summary["degraded"].as_array().unwrap().is_empty(),
        "{summary}"
    );
    // Fused with the local oracles: a question the local repository answers best keeps it first.
    let bread = "knead the dough and bake bread";
    let (hits, _) = ask(&b, mine.path(), &["--org", bread]);
    assert_eq!(hits[0]["repo_path"], "recipes.py", "{hits:?}");
    assert!(hits[0]["published"].is_null(), "{hits:?}");

    // An agent asks the same through MCP.
    let mut m = crate::mcp::Mcp::ready(&b, mine.path(), "2025-06-18");
    let r = m.ok(
        "patina_query",
        serde_json::json!({"query": question, "org": true}),
    );
    let results = r["structuredContent"]["results"]
        .as_array()
        .unwrap()
        .clone();
    let first = results
        .iter()
        .find(|h| !h["published"].is_null())
        .unwrap_or_else(|| panic!("{r}"));
    assert!(
        first["ref"]
            .as_str()
            .unwrap()
            .starts_with(&format!("acme/units@{}:temperature.py:", &head[..10])),
        "{r}"
    );
    assert_eq!(first["repo"], "acme/units", "{r}");
    let r = m.ok("list_repos", serde_json::json!({}));
    let listed = &r["structuredContent"]["published"];
    assert_eq!(listed[0]["name"], "acme/units", "{r}");
    assert_eq!(listed[0]["cloned"], false, "{r}");
    drop(m);
    // And an editor through the LSP's search.
    let mut lsp = crate::lsp::Lsp::spawn(&b);
    crate::lsp::initialize_in(&mut lsp, mine.path());
    lsp.send(serde_json::json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    lsp.send(
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "patina/search",
        "params": {"query": question, "org": true}}),
    );
    let r = lsp.answer();
    let hits = r["result"]["hits"]
        .as_array()
        .unwrap_or_else(|| panic!("{r}"));
    let first = hits
        .iter()
        .find(|h| h.get("published").is_some())
        .unwrap_or_else(|| panic!("{r}"));
    assert_eq!(first["published"]["name"], "acme/units", "{r}");
    assert_eq!(first["path"], "temperature.py", "{r}");
    assert!(first["uri"].is_null(), "no local file: {r}");
    drop(lsp);

    // A repository cloned here answers from the clone, not from the store.
    let scratch = tempfile::tempdir().unwrap();
    let clone = clone_of(theirs.path(), &scratch.path().join("units"));
    b.add_repo(&clone);
    b.embedded(&clone);
    let (hits, _) = ask(&b, &clone, &["--all", "--org", question]);
    assert!(published_hits(&hits).is_empty(), "{hits:?}");
    assert!(
        hits.iter().any(|h| h["repo_path"] == "temperature.py"),
        "{hits:?}"
    );

    // The engine dies: the same question answers locally, and says the org oracle failed.
    pg.kill();
    let (hits, summary) = ask(&b, mine.path(), &["--org", bread]);
    assert!(published_hits(&hits).is_empty(), "{hits:?}");
    assert!(
        hits.iter().any(|h| h["repo_path"] == "recipes.py"),
        "{hits:?}"
    );
    assert!(
        summary["degraded"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o == "org"),
        "{summary}"
    );
    let org = summary["oracles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["oracle"] == "org")
        .unwrap_or_else(|| panic!("{summary}"))
        .clone();
    assert!(
        org["message"].as_str().unwrap().contains("PostgreSQL"),
        "{summary}"
    );
}

#[test]
fn org_without_a_store_is_a_clear_error() {
    let mut env = TestEnv::with_model();
    env.start_daemon();
    let repo = git_repo(FILES);
    env.add_repo(repo.path());
    let out = env.patina_in(repo.path(), &["q", "--org", "celsius"]);
    assert_eq!(out.code(), 2, "{out:?}");
    assert!(out.stderr.contains("[team] url"), "{out:?}");
}

#[test]
fn the_store_is_reached_over_tls_verified_against_the_teams_ca() {
    let pg = server();
    let front = TlsFront::start(&pg);
    let repo = published_repo();
    let mut a = TestEnv::with_model();
    a.append_config(&format!(
        "[team]\nurl = \"{}\"\nca_file = \"{}\"\n",
        front.url("publisher"),
        front.ca().display()
    ));
    a.start_daemon();
    a.add_repo(repo.path());
    let info = a.embedded(repo.path());
    let done = publish(&a, repo.path(), &["team_backend"]);
    assert_eq!(done["vectors_sent"].as_u64(), Some(info.chunks), "{done}");
    assert!(done["store"].as_str().unwrap().ends_with(", TLS"), "{done}");
    // The front speaks only TLS: the publish went through it.
    assert_eq!(count(&pg, "commits"), 1);

    // A certificate the configured CA did not sign is refused, and said so.
    let mut b = TestEnv::with_model();
    b.append_config(&format!(
        "[team]\nurl = \"{}\"\nca_file = \"{}\"\n",
        front.url("dev"),
        front.other_ca().display()
    ));
    b.start_daemon();
    let out = b.patina(&["published"]);
    assert_ne!(out.code(), 0, "{out:?}");
    assert!(
        out.stderr.contains("certificate") || out.stderr.contains("UnknownIssuer"),
        "{out:?}"
    );

    // Asking for TLS without a CA to verify it is a configuration error: the daemon says why.
    let mut c = TestEnv::with_model();
    c.append_config(&format!(
        "[team]\nurl = \"{} sslmode=require\"\n",
        front.url("dev")
    ));
    c.spawn_daemon();
    c.wait_daemon_exit(Duration::from_secs(60));
    assert!(c.logs().contains("ca_file"), "{}", c.logs());
}
