//! Indexing and the repository registry: what gets indexed and what is skipped (and why), what
//! survives a restart, what re-indexing redoes, and what removing a repository deletes.

use crate::util::*;

fn skip_count<'a>(info: &'a RepoInfo, reason: &str) -> Option<&'a patina_proto::v1::SkipCount> {
    info.skipped.iter().find(|s| s.reason == reason)
}

#[test]
fn skipped_files_are_reported_with_their_reason_and_are_not_searchable() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    env.add_repo(repo.path());
    let info = env.repo_info(repo.path());

    for (reason, path) in [
        ("binary", BINARY_FILE),
        ("too_large", HUGE_FILE),
        ("invalid_utf8", LATIN1_FILE),
    ] {
        let s = skip_count(&info, reason)
            .unwrap_or_else(|| panic!("no {reason} count: {:?}", info.skipped));
        assert_eq!(s.files, 1, "{reason}: {s:?}");
        assert_eq!(s.examples, [path], "{reason}: {s:?}");
    }
    assert_eq!(
        info.skipped.len(),
        3,
        "nothing else is skipped: {:?}",
        info.skipped
    );
    assert_eq!(info.files, 13, "the 13 text files are indexed");
    assert!(
        info.chunks >= info.files,
        "every indexed file has chunks: {info:?}"
    );
    for lang in [
        "rust",
        "python",
        "javascript",
        "typescript",
        "go",
        "java",
        "c",
        "cpp",
        "markdown",
    ] {
        assert!(
            info.languages.contains_key(lang),
            "{lang} is counted: {:?}",
            info.languages
        );
    }

    for word in [BINARY_ONLY_WORD, HUGE_ONLY_WORD, LATIN1_ONLY_WORD] {
        let resp = env.search(word, &[repo.path()]);
        assert!(
            resp.hits.is_empty(),
            "{word} only occurs in skipped files: {:?}",
            resp.hits
        );
    }
}

#[test]
fn a_restart_keeps_the_registry_and_the_index_without_reindexing() {
    let mut env = TestEnv::started();
    let repo = fixture_repo();
    let first = env.add_repo(repo.path());
    assert_eq!(
        first.files_changed, 13,
        "the first run chunks every text file: {first:?}"
    );
    let before = env.repo_info(repo.path());
    assert!(
        before.last_indexed_unix_ms > 0 && before.files > 0 && before.chunks > 0,
        "{before:?}"
    );

    let status = env.stop_daemon();
    assert!(status.success(), "{status}");
    env.start_daemon();

    // Start-up reconciles every repository (catching up with edits made while it was down); with
    // nothing changed, that round re-reads nothing and leaves the index exactly as it was.
    let after = poll(EVENTUALLY, "the start-up reconciliation finishes", || {
        let info = env.repo_info(repo.path());
        if info.indexing {
            Err(format!("{info:?}"))
        } else {
            Ok(info)
        }
    });
    assert_eq!(
        (
            after.id.as_str(),
            after.files,
            after.chunks,
            after.last_indexed_unix_ms,
            &after.skipped,
            &after.languages
        ),
        (
            before.id.as_str(),
            before.files,
            before.chunks,
            before.last_indexed_unix_ms,
            &before.skipped,
            &before.languages
        ),
        "the repository comes back as it was, not re-indexed"
    );
    let resp = env.search("parse_args", &[repo.path()]);
    assert_eq!(
        resp.hits.first().map(|h| h.path.as_str()),
        Some("src/args.rs"),
        "queries work at once: {resp:?}"
    );
    assert!(
        !resp
            .notices
            .iter()
            .any(|n| n.contains("being indexed") || n.contains("being checked")),
        "{:?}",
        resp.notices
    );

    // Re-indexing an unchanged repository examines every file and re-chunks none.
    let out = env.patina(&["add", &repo.key()]);
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(
        out.stderr.contains(" 0 changed,"),
        "the client reports nothing changed: {out:?}"
    );
    let again = env.add_repo(repo.path());
    assert_eq!(again.files_changed, 0, "{again:?}");
    assert_eq!(again.files_removed, 0, "{again:?}");
    assert_eq!(again.files_done, again.files_total, "{again:?}");
    assert_eq!(
        again.files_total, 16,
        "every file, skipped ones included, is examined: {again:?}"
    );
    let reindexed = env.repo_info(repo.path());
    assert_eq!(
        (reindexed.files, reindexed.chunks),
        (before.files, before.chunks)
    );
}

#[test]
fn reindexing_picks_up_changed_added_and_deleted_files() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    env.add_repo(repo.path());

    std::fs::write(
        repo.path().join("src/args.rs"),
        repo.read("src/args.rs")
            .replace("parse_args", "parse_cmdline"),
    )
    .unwrap();
    std::fs::write(
        repo.path().join("src/extra.rs"),
        "pub fn freshly_added_function() {}\n",
    )
    .unwrap();
    std::fs::remove_file(repo.path().join("server/main.go")).unwrap();
    // The watcher may already have indexed some of these changes: only the end state is specified.
    env.add_repo(repo.path());

    let top = env.search("parse_cmdline", &[repo.path()]).hits;
    assert_eq!(
        top.first().map(|h| (h.path.as_str(), h.symbol.as_str())),
        Some(("src/args.rs", "parse_cmdline")),
        "{top:?}"
    );
    let top = env.search("freshly_added_function", &[repo.path()]).hits;
    assert_eq!(top.first().map(|h| h.path.as_str()), Some("src/extra.rs"));
    let resp = env.search("handleRequest", &[repo.path()]);
    assert!(
        resp.hits.iter().all(|h| h.path != "server/main.go"),
        "deleted files are gone: {:?}",
        resp.hits
    );
}

#[test]
fn removing_a_repository_deletes_its_index() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    let id = env.add_repo(repo.path()).repo.expect("repo info").id;
    let data = env.home().join("repos").join(&id);
    assert!(data.is_dir(), "the index lives in {}", data.display());

    let out = env.patina(&["rm", &repo.key()]);
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(out.stdout.contains("removed"), "{out:?}");
    assert!(!data.exists(), "{} is deleted", data.display());
    assert!(
        env.list().repos.iter().all(|r| r.id != id),
        "it is no longer listed"
    );

    for key in [repo.key(), id] {
        let err = env
            .query(QueryRequest {
                repos: vec![key.clone()],
                ..query("parse_args")
            })
            .unwrap_err();
        assert_eq!(err.code(), Code::NotFound, "{key}: {err:?}");
    }
    let out = env.patina(&["rm", &repo.key()]);
    assert_eq!(out.code(), 2, "removing it twice is an error: {out:?}");
    env.assert_healthy();
}

#[test]
fn adding_a_path_inside_a_repository_registers_its_root() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    let p = env.add_repo(&repo.path().join("src"));
    assert_eq!(p.repo.expect("repo info").root, repo.key());
    assert_eq!(env.list().repos.len(), 1);
    env.add_repo(repo.path());
    assert_eq!(env.list().repos.len(), 1, "adding is idempotent");
}

#[test]
fn a_new_chunk_length_splits_long_definitions_again_at_the_next_start() {
    let body: String = (0..70).map(|n| format!("    let v{n} = {n};\n")).collect();
    let text = format!("pub fn long_one() -> u32 {{\n{body}    0\n}}\n");
    let repo = git_repo(&[("src/long.rs", text.as_bytes())]);
    let mut env = TestEnv::started();
    env.add_repo(repo.path());
    let before = env.repo_info(repo.path());
    assert_eq!(before.chunks, 1, "73 lines fit one chunk: {before:?}");

    let status = env.stop_daemon();
    assert!(status.success(), "{status}");
    let path = env.home().join("config.toml");
    let cfg = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        cfg.replace("[index]\n", "[index]\nmax_chunk_lines = 30\n"),
    )
    .unwrap();
    env.start_daemon();

    // The files did not change, the rule that cuts them did: the start-up round cuts them again.
    let after = poll(EVENTUALLY, "the long function is split", || {
        let info = env.repo_info(repo.path());
        if info.indexing || info.chunks == 1 {
            Err(format!("{info:?}"))
        } else {
            Ok(info)
        }
    });
    assert_eq!(
        after.chunks, 4,
        "pieces of 30 lines overlapping by 10: {after:?}"
    );
}
