//! The live index: saved, deleted and renamed files, branch switches and commits reach the index
//! without anyone asking; edits made while the daemon was down are caught up at start; `--fresh`
//! reads its own writes; and a `kill -9` in the middle of indexing leaves an index that recovers
//! to exactly the from-scratch result.

use std::path::Path;
use std::process::Command;

use crate::util::{EVENTUALLY, TestEnv, eventually, generated_repo, git, git_repo, poll, query};
use patina_proto::v1::{Freshness, QueryRequest, QueryResponse};

const FILES: &[(&str, &[u8])] = &[
    (
        "src/lib.rs",
        b"pub fn alpha_handler() -> u32 {\n    41\n}\n",
    ),
    ("src/util.rs", b"pub fn helper_one() {}\n"),
    ("README.md", b"# Demo\n\nA demo repository.\n"),
];

fn head(root: &Path) -> String {
    let out = Command::new("git")
        .current_dir(root)
        .args(["rev-parse", "HEAD"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn ask(env: &TestEnv, text: &str, root: &Path) -> QueryResponse {
    env.query(QueryRequest {
        repos: vec![root.to_string_lossy().into_owned()],
        oracles: vec!["lexical".into(), "symbol".into()],
        ..query(text)
    })
    .unwrap_or_else(|s| panic!("query {text:?}: {s}"))
}

fn found(r: &QueryResponse, path: &str) -> bool {
    r.hits.iter().any(|h| h.path == path)
}

/// The chunk defining `symbol` is a hit, in `path`.
fn defines(r: &QueryResponse, path: &str, symbol: &str) -> bool {
    r.hits.iter().any(|h| h.path == path && h.symbol == symbol)
}

fn freshness(env: &TestEnv, root: &Path) -> Freshness {
    ask(env, "anything", root)
        .freshness
        .into_iter()
        .next()
        .expect("freshness for the repository in scope")
}

#[test]
fn a_saved_file_is_reindexed_and_its_old_content_disappears() {
    let env = TestEnv::started();
    let repo = git_repo(FILES);
    env.add_repo(repo.path());
    assert!(defines(
        &ask(&env, "alpha_handler", repo.path()),
        "src/lib.rs",
        "alpha_handler"
    ));

    std::fs::write(
        repo.path().join("src/lib.rs"),
        "pub fn omega_handler() -> u32 {\n    42\n}\n",
    )
    .unwrap();
    eventually("the new symbol is searchable", || {
        defines(
            &ask(&env, "omega_handler", repo.path()),
            "src/lib.rs",
            "omega_handler",
        )
    });
    let old = ask(&env, "alpha_handler", repo.path());
    assert!(
        !old.hits.iter().any(|h| h.symbol == "alpha_handler"),
        "old content is gone: {old:?}"
    );
}

#[test]
fn deleted_and_renamed_files_leave_every_oracle() {
    let env = TestEnv::started();
    let repo = git_repo(FILES);
    env.add_repo(repo.path());

    std::fs::remove_file(repo.path().join("src/util.rs")).unwrap();
    std::fs::rename(
        repo.path().join("src/lib.rs"),
        repo.path().join("src/core.rs"),
    )
    .unwrap();
    eventually("the renamed file is found under its new name", || {
        defines(
            &ask(&env, "alpha_handler", repo.path()),
            "src/core.rs",
            "alpha_handler",
        )
    });
    eventually("the deleted file is gone", || {
        ask(&env, "helper_one", repo.path()).hits.is_empty()
    });
    let r = ask(&env, "alpha_handler", repo.path());
    assert!(!found(&r, "src/lib.rs"), "the old name is gone: {r:?}");
    // The counts are the round's last commit: read them once it has ended (an answer can see a
    // commit of a round that is still running).
    let info = poll(EVENTUALLY, "the round ends", || {
        let info = env.repo_info(repo.path());
        (!info.indexing)
            .then_some(info.clone())
            .ok_or(format!("{info:?}"))
    });
    assert_eq!(info.files, 2, "{info:?}");
}

#[test]
fn switching_branches_switches_results_and_commits_move_the_indexed_commit() {
    let env = TestEnv::started();
    let repo = git_repo(FILES);
    env.add_repo(repo.path());
    let main_head = head(repo.path());
    eventually("the indexed commit is HEAD", || {
        freshness(&env, repo.path()).indexed_commit == main_head
    });

    git(repo.path(), &["checkout", "-q", "-b", "feature"]);
    std::fs::write(
        repo.path().join("src/feature.rs"),
        "pub fn branch_only_feature() {}\n",
    )
    .unwrap();
    std::fs::write(
        repo.path().join("src/lib.rs"),
        "pub fn feature_handler() {}\n",
    )
    .unwrap();
    git(repo.path(), &["add", "-A"]);
    git(repo.path(), &["commit", "-q", "-m", "feature"]);
    let feature_head = head(repo.path());
    eventually("a commit updates the indexed commit", || {
        let f = freshness(&env, repo.path());
        f.indexed_commit == feature_head && f.head_commit == feature_head
    });
    assert!(defines(
        &ask(&env, "branch_only_feature", repo.path()),
        "src/feature.rs",
        "branch_only_feature"
    ));

    git(repo.path(), &["checkout", "-q", "main"]);
    eventually("main's content is back", || {
        let r = ask(&env, "alpha_handler", repo.path());
        defines(&r, "src/lib.rs", "alpha_handler")
            && ask(&env, "branch_only_feature", repo.path())
                .hits
                .is_empty()
    });
    eventually("the indexed commit follows the checkout", || {
        let f = freshness(&env, repo.path());
        f.indexed_commit == main_head && f.fresh
    });
}

#[test]
fn edits_made_while_the_daemon_was_down_are_found_after_restart() {
    let mut env = TestEnv::started();
    let repo = git_repo(FILES);
    env.add_repo(repo.path());
    env.stop_daemon();

    std::fs::write(
        repo.path().join("src/lib.rs"),
        "pub fn written_while_down() {}\n",
    )
    .unwrap();
    std::fs::write(
        repo.path().join("src/new.rs"),
        "pub fn brand_new_while_down() {}\n",
    )
    .unwrap();
    std::fs::remove_file(repo.path().join("src/util.rs")).unwrap();
    env.start_daemon();
    eventually("the catch-up found every offline edit", || {
        defines(
            &ask(&env, "written_while_down", repo.path()),
            "src/lib.rs",
            "written_while_down",
        ) && defines(
            &ask(&env, "brand_new_while_down", repo.path()),
            "src/new.rs",
            "brand_new_while_down",
        ) && ask(&env, "helper_one", repo.path()).hits.is_empty()
    });
}

#[test]
fn a_fresh_query_reads_its_own_writes() {
    let env = TestEnv::started();
    let repo = git_repo(FILES);
    env.add_repo(repo.path());
    for i in 0..5 {
        let name = format!("just_written_{i}");
        std::fs::write(
            repo.path().join("src/lib.rs"),
            format!("pub fn {name}() {{}}\n"),
        )
        .unwrap();
        let r = env
            .query(QueryRequest {
                fresh_timeout_ms: 10_000,
                repos: vec![repo.key()],
                ..query(&name)
            })
            .expect("fresh query");
        assert!(defines(&r, "src/lib.rs", &name), "round {i}: {r:?}");
        assert!(r.freshness[0].pending_files == 0, "{:?}", r.freshness);
    }
    // The CLI flag does the same.
    std::fs::write(
        repo.path().join("src/util.rs"),
        "pub fn cli_fresh_write() {}\n",
    )
    .unwrap();
    let out = env.patina_in(repo.path(), &["q", "cli_fresh_write", "--fresh"]);
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(out.stdout.starts_with("src/util.rs:"), "{out:?}");
}

#[test]
fn a_kill_during_indexing_recovers_to_the_from_scratch_index() {
    // A repository big enough that indexing is still running when the daemon is killed.
    let repo = generated_repo(3000, |i| {
        let body = format!(
            "pub fn function_number_{i}(x: u64) -> u64 {{\n    // {i} squared plus one\n    x * {i} + 1\n}}\n\npub struct Thing{i} {{\n    value: u64,\n}}\n"
        );
        (format!("src/m{:02}/f{i}.rs", i % 50), body)
    });

    let mut env = TestEnv::started();
    let out = env.patina(&["add", "--no-wait", &repo.key()]);
    assert_eq!(out.code(), 0, "{out:?}");
    eventually(
        "indexing is well under way (or, on a very fast machine, done)",
        || {
            let info = env.list().repos.into_iter().next();
            info.is_some_and(|r| {
                !r.indexing && r.files > 0
                    || r.progress.as_ref().is_some_and(|p| p.files_done > 200)
            })
        },
    );
    env.kill_daemon();
    env.start_daemon(); // the catch-up resumes the interrupted work
    eventually("the interrupted index is completed", || {
        let r = env.repo_info(repo.path());
        !r.indexing && r.files == 3000
    });
    let recovered = env.repo_info(repo.path());

    let fresh = TestEnv::started();
    fresh.add_repo(repo.path());
    let scratch = fresh.repo_info(repo.path());
    assert_eq!(
        (recovered.files, recovered.chunks),
        (scratch.files, scratch.chunks)
    );
    assert_eq!(
        recovered.chunk_digest, scratch.chunk_digest,
        "the same chunk set"
    );
    for i in [0, 1234, 2999] {
        let r = ask(&env, &format!("function_number_{i}"), repo.path());
        assert_eq!(r.hits[0].symbol, format!("function_number_{i}"), "{r:?}");
    }
}

/// One OS watcher serves every repository: Linux gives a user 128 inotify instances by default,
/// and a watcher per repository stopped watching at about the 120th. Past that number every
/// repository is still watched, edits in the first and the last are found, and removing one
/// repository leaves the others' watches alone (even on a directory they share).
#[test]
fn a_hundred_and_fifty_repositories_are_all_watched() {
    let env = TestEnv::started();
    let repos: Vec<_> = (0..150)
        .map(|i| {
            let text = format!("pub fn item_{i}() {{}}\n");
            let r = git_repo(&[("src/lib.rs", text.as_bytes())]);
            env.add_repo(r.path());
            r
        })
        .collect();
    let unwatched: Vec<String> = repos
        .iter()
        .map(|r| (r.path(), freshness(&env, r.path()).watch))
        .filter(|(_, w)| w != "watching")
        .map(|(p, w)| format!("{}: {w}", p.display()))
        .collect();
    assert!(unwatched.is_empty(), "not watched: {unwatched:?}");

    for (i, r) in [(0usize, &repos[0]), (149, &repos[149])] {
        std::fs::write(
            r.path().join("src/lib.rs"),
            format!("pub fn edited_{i}() {{}}\n"),
        )
        .unwrap();
        eventually("the edit is searchable", || {
            defines(
                &ask(&env, &format!("edited_{i}"), r.path()),
                "src/lib.rs",
                &format!("edited_{i}"),
            )
        });
    }

    // Removing one repository leaves the others watched.
    env.remove_repo(&repos[1].path().to_string_lossy())
        .expect("remove");
    std::fs::write(
        repos[2].path().join("src/lib.rs"),
        "pub fn after_removal() {}\n",
    )
    .unwrap();
    eventually(
        "an edit after another repository's removal is searchable",
        || {
            defines(
                &ask(&env, "after_removal", repos[2].path()),
                "src/lib.rs",
                "after_removal",
            )
        },
    );
}

/// Past the OS limit on file watches (`PATINA_TEST_WATCH_LIMIT`: the limit the kernel enforces
/// with ENOSPC, here reached after one directory), the repository says it is polling, why, and
/// how to raise the limit; edits in directories left unwatched still reach the index, by the
/// reconciliation the timer runs (every 2 s here, 30 s by default).
#[test]
fn past_the_os_watch_limit_the_repository_polls_and_edits_still_arrive() {
    let mut env = TestEnv::new();
    env.next_daemon_env("PATINA_TEST_WATCH_LIMIT", "1");
    env.next_daemon_env("PATINA_TEST_IDLE_RELEASE_SECS", "2");
    env.start_daemon();
    let repo = git_repo(&[
        ("src/deep/a.rs", b"pub fn first_item() {}\n"),
        ("README.md", b"# A repository\n"),
    ]);
    env.add_repo(repo.path());
    let watch = freshness(&env, repo.path()).watch;
    assert!(
        watch.starts_with("polling: ") && watch.contains("max_user_watches"),
        "{watch}"
    );
    let out = env.patina(&["status"]);
    assert!(out.stdout.contains("polling"), "{out:?}");

    std::fs::write(
        repo.path().join("src/deep/b.rs"),
        "pub fn quokka_arrives() {}\n",
    )
    .unwrap();
    eventually("the timer's reconciliation indexes the new file", || {
        defines(
            &ask(&env, "quokka_arrives", repo.path()),
            "src/deep/b.rs",
            "quokka_arrives",
        )
    });
}

/// Two `add`s of one new repository at once (a question asked inside it while it is being added
/// registers it too) open it once: it has one id, one round to the end, and the watcher's events
/// reach the repository that stayed — a file saved afterwards is found.
#[test]
fn two_adds_of_one_new_repository_at_once_leave_it_watched() {
    let env = TestEnv::started();
    let repo = generated_repo(600, |i| {
        (
            format!("src/m{i}.py"),
            format!("def module_function_{i}(x):\n    return x + {i}\n"),
        )
    });
    let adds: Vec<_> = (0..2)
        .map(|_| {
            let mut cmd = env.patina_command();
            cmd.args(["add", &repo.path().to_string_lossy()]);
            cmd.stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped());
            cmd.spawn().expect("spawning patina add")
        })
        .collect();
    for child in adds {
        let out = child.wait_with_output().expect("patina add");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let list = env.list();
    assert_eq!(list.repos.len(), 1, "{list:?}");
    assert_eq!(list.repos[0].files, 600);
    std::fs::write(
        repo.path().join("src/later.py"),
        "def written_after_both_adds():\n    return 1\n",
    )
    .unwrap();
    eventually("the file saved after both adds is found", || {
        defines(
            &ask(&env, "written_after_both_adds", repo.path()),
            "src/later.py",
            "written_after_both_adds",
        )
    });
}
