//! Retrieval through `Search.Query`: identifiers and file names find their definitions first,
//! path globs and repository filters restrict results, and bad queries are refused or bounded.

use crate::util::*;

/// The first hit of `text` in `repo`, with every hit listed when the answer is empty.
#[track_caller]
fn first_hit(env: &TestEnv, repo: &Repo, text: &str) -> Hit {
    let resp = env.search(text, &[repo.path()]);
    resp.hits
        .first()
        .cloned()
        .unwrap_or_else(|| panic!("no hits for {text:?}: {resp:?}"))
}

fn describe(hits: &[Hit]) -> Vec<String> {
    hits.iter()
        .map(|h| {
            format!(
                "{}:{}-{} {} {}",
                h.path, h.start_line, h.end_line, h.kind, h.symbol
            )
        })
        .collect()
}

#[test]
fn an_identifier_finds_its_definition_before_its_callers() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    env.add_repo(repo.path());

    let resp = env.search("parse_args", &[repo.path()]);
    let top = &resp.hits[0];
    assert_eq!(
        (top.path.as_str(), top.symbol.as_str(), top.kind.as_str()),
        ("src/args.rs", "parse_args", "function"),
        "the definition comes first: {:#?}",
        describe(&resp.hits)
    );
    let def_line = repo.line_of("src/args.rs", "pub fn parse_args");
    assert!(
        top.start_line <= def_line && def_line <= top.end_line,
        "the hit spans the definition: {top:?}"
    );
    let callers: Vec<&Hit> = resp
        .hits
        .iter()
        .filter(|h| h.path != "src/args.rs")
        .collect();
    assert!(
        callers.iter().any(|h| h.path == "src/main.rs"),
        "callers are found too, below the definition: {:#?}",
        describe(&resp.hits)
    );
    assert!(
        top.provenance
            .iter()
            .any(|p| oracle_name(p.oracle) == "symbol"),
        "the symbol oracle vouches for it: {top:?}"
    );
}

#[test]
fn a_type_name_finds_the_type_definition_first() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    env.add_repo(repo.path());

    let resp = env.search("HttpClient", &[repo.path()]);
    let top = &resp.hits[0];
    assert_eq!(
        (top.path.as_str(), top.symbol.as_str(), top.kind.as_str()),
        ("src/http.rs", "HttpClient", "struct"),
        "the struct comes first: {:#?}",
        describe(&resp.hits)
    );
    assert!(
        top.start_line <= repo.line_of("src/http.rs", "pub struct HttpClient")
            && repo.line_of("src/http.rs", "pub struct HttpClient") <= top.end_line
    );

    let top = first_hit(&env, &repo, "ApiClient");
    assert_eq!(
        (top.path.as_str(), top.symbol.as_str(), top.kind.as_str()),
        ("web/client.ts", "ApiClient", "class"),
        "{top:?}"
    );
}

const MPSC_RS: &str = r#"pub struct Sender<T> {
    chan: Vec<T>,
}

impl<T> Sender<T> {
    pub async fn closed(&self) {
        while !self.chan.is_empty() {}
    }
}
"#;

const ONESHOT_RS: &str = r#"pub struct Sender<T> {
    value: Option<T>,
}

impl<T> Sender<T> {
    pub async fn closed(&self) {}

    pub fn capacity(&self) -> usize {
        1
    }
}
"#;

const POOL_RS: &str = r#"pub struct Pool {
    slots: usize,
}

impl Pool {
    pub fn capacity(&self) -> usize {
        self.slots
    }
}
"#;

/// Two `sync` modules with a `Sender` each, and an unrelated `Pool`, registered and indexed.
fn sync_repo() -> (TestEnv, Repo) {
    let env = TestEnv::started();
    let repo = git_repo(&[
        ("src/sync/mpsc.rs", MPSC_RS.as_bytes()),
        ("src/sync/oneshot.rs", ONESHOT_RS.as_bytes()),
        ("src/pool.rs", POOL_RS.as_bytes()),
    ]);
    env.add_repo(repo.path());
    (env, repo)
}

#[test]
fn a_qualified_path_picks_its_namesake_and_points_to_its_type_when_the_name_is_new() {
    let (env, repo) = sync_repo();

    // Two `Sender::closed`: the one in `mpsc`.
    let top = first_hit(&env, &repo, "mpsc::Sender::closed");
    assert_eq!(
        (top.path.as_str(), top.symbol.as_str()),
        ("src/sync/mpsc.rs", "closed"),
        "{top:?}"
    );

    // `mpsc::Sender::capacity` does not exist (a commit would add it): the place it names,
    // mpsc's `Sender`, is found, above an unrelated type's `capacity` (the other `Sender`'s
    // `capacity` may come first: it is the same name under the same type name).
    let resp = env.search("mpsc::Sender::capacity", &[repo.path()]);
    let at = |path: &str, symbol: &str| {
        resp.hits
            .iter()
            .position(|h| h.path == path && h.symbol == symbol)
            .unwrap_or(usize::MAX)
    };
    let sender = at("src/sync/mpsc.rs", "Sender");
    assert!(sender <= 1, "{:#?}", describe(&resp.hits));
    assert!(
        sender < at("src/pool.rs", "capacity"),
        "{:#?}",
        describe(&resp.hits)
    );
}

#[test]
fn a_module_path_finds_the_file_of_that_module() {
    let (env, repo) = sync_repo();

    // No definition is named `oneshot`: the module is its file, as Rust lays modules out.
    let resp = env
        .query(QueryRequest {
            repos: vec![repo.path().to_string_lossy().into_owned()],
            oracles: vec!["symbol".into()],
            ..query("sync::oneshot")
        })
        .unwrap();
    assert_eq!(
        resp.hits.first().map(|h| h.path.as_str()),
        Some("src/sync/oneshot.rs"),
        "{:#?}",
        describe(&resp.hits)
    );
}

#[test]
fn a_file_name_finds_that_file_first() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    env.add_repo(repo.path());

    let top = first_hit(&env, &repo, "config.toml");
    assert_eq!(top.path, "config.toml", "{top:?}");

    let resp = env
        .query(QueryRequest {
            repos: vec![repo.key()],
            granularity: Granularity::File as i32,
            ..query("config.toml")
        })
        .expect("file granularity");
    assert_eq!(
        resp.hits[0].path,
        "config.toml",
        "{:#?}",
        describe(&resp.hits)
    );
    let mut paths: Vec<&str> = resp.hits.iter().map(|h| h.path.as_str()).collect();
    let n = paths.len();
    paths.dedup();
    assert_eq!(
        paths.len(),
        n,
        "file granularity returns each file once: {paths:?}"
    );
}

#[test]
fn every_language_of_the_fixture_is_searchable() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    env.add_repo(repo.path());

    for (symbol, path) in [
        ("load_users", "app/models.py"),
        ("startApp", "web/app.js"),
        ("ApiClient", "web/client.ts"),
        ("handleRequest", "server/main.go"),
        ("Inventory", "java/Inventory.java"),
        ("adler32_checksum", "native/checksum.c"),
        ("Matrix", "native/matrix.cpp"),
    ] {
        let top = first_hit(&env, &repo, symbol);
        assert_eq!(
            (top.path.as_str(), top.symbol.as_str()),
            (path, symbol),
            "{top:?}"
        );
    }
    let top = first_hit(&env, &repo, "Configuration");
    assert_eq!(
        (top.path.as_str(), top.kind.as_str()),
        ("README.md", "section"),
        "Markdown headings are sections: {top:?}"
    );
}

#[test]
fn a_path_glob_restricts_hits_to_matching_files() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    env.add_repo(repo.path());
    let search = |globs: &[&str]| {
        let req = QueryRequest {
            repos: vec![repo.key()],
            path_globs: globs.iter().map(|g| g.to_string()).collect(),
            limit: 50,
            ..query("parse_args")
        };
        env.query(req).expect("query").hits
    };

    let all = search(&[]);
    assert!(
        all.iter().any(|h| h.path.ends_with(".py")) && all.iter().any(|h| !h.path.ends_with(".py")),
        "{:#?}",
        describe(&all)
    );

    let py = search(&["*.py"]);
    assert!(!py.is_empty(), "the Python callers match");
    assert!(
        py.iter().all(|h| h.path.ends_with(".py")),
        "only .py files: {:#?}",
        describe(&py)
    );

    for glob in ["src/**", "src", "src/"] {
        let src = search(&[glob]);
        assert_eq!(
            src[0].path,
            "src/args.rs",
            "{glob}: the definition still comes first: {:#?}",
            describe(&src)
        );
        assert!(
            src.iter().all(|h| h.path.starts_with("src/")),
            "{glob}: only files under src/: {:#?}",
            describe(&src)
        );
    }

    let either = search(&["*.py", "*.go"]);
    assert!(
        either
            .iter()
            .all(|h| h.path.ends_with(".py") || h.path.ends_with(".go")),
        "{:#?}",
        describe(&either)
    );
    assert!(
        either.iter().any(|h| h.path.ends_with(".go")),
        "any glob may match: {:#?}",
        describe(&either)
    );

    assert!(
        search(&["*.nothing"]).is_empty(),
        "a glob matching no file leaves no hits"
    );
}

#[test]
fn a_repository_filter_restricts_hits_to_that_repository() {
    let env = TestEnv::started();
    let (first, second) = (fixture_repo(), fixture_repo());
    env.add_repo(first.path());
    let second_id = env.add_repo(second.path()).repo.expect("repo info").id;

    let both = env.search("parse_args", &[]);
    let roots: std::collections::BTreeSet<&str> =
        both.hits.iter().map(|h| h.repo_root.as_str()).collect();
    assert_eq!(
        roots.len(),
        2,
        "without a filter both repositories answer: {roots:?}"
    );

    for key in [second.key(), second_id.clone()] {
        let resp = env
            .query(QueryRequest {
                repos: vec![key.clone()],
                ..query("parse_args")
            })
            .expect("query");
        assert!(!resp.hits.is_empty(), "{key}");
        for h in &resp.hits {
            assert_eq!(
                (h.repo_id.as_str(), h.repo_root.as_str()),
                (second_id.as_str(), second.key().as_str()),
                "filter {key}"
            );
        }
    }
}

#[test]
fn an_empty_query_is_an_invalid_argument() {
    let env = TestEnv::started();
    for text in ["", "   ", "\n\t"] {
        let err = env.query(query(text)).unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{text:?}: {err:?}");
    }
    env.assert_healthy();
}

#[test]
fn a_huge_query_is_truncated_with_a_notice() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    env.add_repo(repo.path());

    let text = "parse_args HttpClient ".repeat(100 * 1024 / 22 + 1);
    assert!(text.len() >= 100 * 1024);
    let resp = env
        .query(QueryRequest {
            repos: vec![repo.key()],
            ..query(&text)
        })
        .expect("a huge query still succeeds");
    assert!(
        resp.notices.iter().any(|n| n.contains("truncated")),
        "a notice says so: {:?}",
        resp.notices
    );
    assert!(
        !resp.hits.is_empty(),
        "and it still finds what the kept part asks for"
    );
    env.assert_healthy();
}

#[test]
fn unknown_oracles_are_an_invalid_argument_and_known_ones_answer_alone() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    env.add_repo(repo.path());

    let err = env
        .query(QueryRequest {
            oracles: vec!["telepathy".into()],
            ..query("parse_args")
        })
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");

    let resp = env
        .query(QueryRequest {
            oracles: vec!["lexical".into()],
            ..query("parse_args")
        })
        .expect("lexical only");
    assert_eq!(
        resp.oracles
            .iter()
            .map(|o| oracle_name(o.oracle))
            .collect::<Vec<_>>(),
        ["lexical"]
    );
    assert!(resp.hits.iter().all(|h| {
        h.provenance
            .iter()
            .all(|p| oracle_name(p.oracle) == "lexical")
    }));
}

#[test]
fn the_projects_own_name_in_a_sentence_names_the_project_not_its_namesake() {
    // A library whose entry point is named after it, as MockK's `MockK` object is.
    let dir = tempfile::Builder::new()
        .prefix("pr")
        .tempdir_in("/tmp")
        .expect("a temporary directory");
    let root = std::fs::canonicalize(dir.path())
        .expect("canonical")
        .join("widgetkit");
    for (rel, text) in [
        (
            "src/WidgetKit.kt",
            "package w\n\n/** Entry point of the DSL. */\nobject WidgetKit {\n    fun widget(name: String) = Widget(name)\n}\n",
        ),
        (
            "src/agent/Loader.kt",
            "package w.agent\n\n/** Attaches the agent at start-up and prints a warning on JDK 21. */\nclass Loader {\n    fun attach() = println(\"agent loaded dynamically\")\n}\n",
        ),
    ] {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    for args in [
        &["init", "-q"][..],
        &["add", "-A"],
        &["commit", "-q", "-m", "fixture"],
    ] {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(&root)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }
    let env = TestEnv::started();
    env.add_repo(&root);
    let symbol_hits = |text: &str| symbol_only(&env, &root, text);

    // Asked alone, the name is the definition.
    let alone = symbol_hits("WidgetKit");
    assert_eq!(
        alone.first().map(|h| (h.path.as_str(), h.symbol.as_str())),
        Some(("src/WidgetKit.kt", "WidgetKit")),
        "{:#?}",
        describe(&alone)
    );
    // In a question, it is the project the user works with: no definition is named.
    let asked =
        symbol_hits("how do I silence the agent warning in tests that use WidgetKit on JDK 21");
    assert!(asked.is_empty(), "{:#?}", describe(&asked));
}

#[test]
fn a_heading_is_found_by_its_word_alone_not_by_the_same_word_in_a_question() {
    let env = TestEnv::started();
    let repo = git_repo(&[
        (
            "README.md",
            b"# Build\n\n## MacPorts\n\nInstall the libraries with `port install openssl`.\n\n## Homebrew\n\nRun `brew install openssl`.\n",
        ),
        (
            "bin/build",
            b"#!/usr/bin/env bash\n# Finds OpenSSL where a package manager installed it.\nuse_openssl() {\n  local prefix\n  prefix=\"$(brew --prefix openssl 2>/dev/null || echo /opt/local)\"\n  export CPPFLAGS=\"-I$prefix/include\"\n}\n",
        ),
    ]);
    env.add_repo(repo.path());
    let symbol_hits = |text: &str| symbol_only(&env, repo.path(), text);

    let alone = symbol_hits("MacPorts");
    assert_eq!(
        alone.first().map(|h| (h.path.as_str(), h.symbol.as_str())),
        Some(("README.md", "MacPorts")),
        "{:#?}",
        describe(&alone)
    );
    // In a question the word is its topic: the section is left to the words and the model.
    let asked = symbol_hits("where does the build pick up OpenSSL from MacPorts");
    assert!(
        asked.iter().all(|h| h.symbol != "MacPorts"),
        "{:#?}",
        describe(&asked)
    );
}

/// The symbol oracle's hits alone for `text` in the repository at `root`.
fn symbol_only(env: &TestEnv, root: &std::path::Path, text: &str) -> Vec<Hit> {
    env.query(QueryRequest {
        repos: vec![root.to_string_lossy().into_owned()],
        oracles: vec!["symbol".into()],
        ..query(text)
    })
    .unwrap()
    .hits
}
