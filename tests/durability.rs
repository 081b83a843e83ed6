//! Never lose, never expose: a crash at the worst moment followed by a checkout converges to the
//! from-scratch index; a socket path that is not a socket is never deleted; state is private to
//! its owner; special files are never opened and pseudo file systems never walked; a stop during
//! an embedding backlog ends the daemon at once. (Notes across a crash: see `mcp.rs`.)

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::util::*;
use patina_proto::v1 as pb;

fn lexical(env: &TestEnv, text: &str, root: &Path) -> pb::QueryResponse {
    env.query(pb::QueryRequest {
        repos: vec![root.to_string_lossy().into_owned()],
        oracles: vec!["lexical".into()],
        ..query(text)
    })
    .unwrap_or_else(|s| panic!("query {text:?}: {s}"))
}

fn paths(r: &pb::QueryResponse) -> Vec<String> {
    r.hits.iter().map(|h| h.path.clone()).collect()
}

/// `Repos.Repair` for every repository.
fn repair(env: &TestEnv, check_only: bool) -> pb::RepairResponse {
    env.call("Repos.Repair", async {
        env.repos_client()
            .await
            .repair(pb::RepairRequest {
                repo: String::new(),
                check_only,
            })
            .await
            .expect("Repos.Repair")
            .into_inner()
    })
}

/// Wait until the repository has no index job running (the start-up round is scheduled before
/// the daemon listens, so the first check already sees it).
fn idle(env: &TestEnv, root: &Path) -> RepoInfo {
    let mut info = None;
    eventually("the index round is done", || {
        let r = env.repo_info(root);
        let done = !r.indexing;
        info = Some(r);
        done
    });
    info.expect("set")
}

/// Main: `src/a.rs` (marmotone), `src/b.rs`. Branch `v2`: `src/a.rs` changed (marmottwo),
/// `src/b.rs` deleted, `src/c.rs` (zebracrash) added.
fn two_versions() -> Repo {
    let repo = git_repo(&[
        (
            "src/a.rs",
            b"pub fn alpha_marmotone() -> u32 {\n    1\n}\n\npub fn shared_helper() {}\n",
        ),
        ("src/b.rs", b"pub fn beta_kept() -> u32 {\n    2\n}\n"),
        ("README.md", b"# Two versions\n\nA repository.\n"),
    ]);
    let root = repo.path();
    git(root, &["checkout", "-q", "-b", "v2"]);
    std::fs::write(
        root.join("src/a.rs"),
        "pub fn alpha_marmottwo() -> u32 {\n    3\n}\n\npub fn shared_helper() {}\n",
    )
    .unwrap();
    std::fs::remove_file(root.join("src/b.rs")).unwrap();
    std::fs::write(
        root.join("src/c.rs"),
        "pub fn gamma_zebracrash() -> u32 {\n    4\n}\n",
    )
    .unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "v2"]);
    git(root, &["checkout", "-qf", "main"]);
    repo
}

/// Defect 1: a crash after the lexical index committed but before the store did (or after the
/// store kept the chunk rows but not the file records), then a checkout while the daemon is down:
/// the next start must end in exactly the from-scratch index — no chunk of a file that is not on
/// disk, no chunk missing from the lexical index — and `repair --check` must find nothing.
#[test]
fn a_crash_mid_commit_then_a_checkout_converges_to_the_from_scratch_index() {
    for point in ["lexical-committed", "store-chunks"] {
        let repo = two_versions();
        let root = repo.path();
        let mut env = TestEnv::started();
        env.add_repo(root);
        env.stop_daemon();

        // Switch branches while no daemon runs; the start-up round indexes v2 and dies mid-commit.
        git(root, &["checkout", "-qf", "v2"]);
        env.crash_next_daemon_at(point);
        env.spawn_daemon();
        let status = env.wait_daemon_exit(Duration::from_secs(30));
        assert!(!status.success(), "{point}: the daemon crashed ({status})");
        assert!(
            env.logs().contains(&format!("test crash point {point}")),
            "{point}: it crashed where asked\n{}",
            env.logs()
        );

        // Back to main while still down, then a normal start.
        git(root, &["checkout", "-qf", "main"]);
        env.start_daemon();
        let recovered = idle(&env, root);

        let fresh = TestEnv::started();
        fresh.add_repo(root);
        let scratch = fresh.repo_info(root);
        assert_eq!(
            (recovered.files, recovered.chunks, recovered.chunk_digest),
            (scratch.files, scratch.chunks, scratch.chunk_digest),
            "{point}: the same files and chunks as a from-scratch index"
        );
        assert!(
            lexical(&env, "zebracrash", root).hits.is_empty(),
            "{point}: a file that is not on disk is not found"
        );
        assert!(
            lexical(&env, "marmottwo", root).hits.is_empty(),
            "{point}: an old version is not found"
        );
        assert_eq!(
            paths(&lexical(&env, "marmotone", root)),
            vec!["src/a.rs".to_string()],
            "{point}: the current version is found"
        );
        assert_eq!(
            paths(&lexical(&env, "beta_kept", root)),
            vec!["src/b.rs".to_string()],
            "{point}"
        );
        let check = repair(&env, true);
        let found = check.reports[0].found.unwrap_or_default();
        assert_eq!(found, pb::IndexAudit::default(), "{point}: {check:?}");
        let out = env.patina(&["repair", "--check"]);
        assert_eq!(out.code(), 0, "{point}: {out:?}");
        assert!(out.stdout.contains("consistent"), "{out:?}");
    }
}

/// Copy the directory `from` to `to` (files and subdirectories).
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// [`two_versions`] indexed at `main`, then at `v2`, and main's lexical index put back behind the
/// daemon's back while it is down (documents of chunks that are gone, none for v2's new ones).
fn stale_lexical_index(root: &Path) -> TestEnv {
    git(root, &["checkout", "-qf", "main"]);
    let mut env = TestEnv::started();
    env.add_repo(root);
    env.stop_daemon();
    let dirs: Vec<_> = std::fs::read_dir(env.home().join("repos"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let lexical_dir = dirs[0].join("lexical");
    let old = env.home().join("lexical-of-main");
    copy_dir(&lexical_dir, &old);
    git(root, &["checkout", "-qf", "v2"]);
    env.start_daemon();
    idle(&env, root);
    env.stop_daemon();
    std::fs::remove_dir_all(&lexical_dir).unwrap();
    copy_dir(&old, &lexical_dir);
    env
}

/// A lexical index put back from an older state while the daemon was down (documents of chunks
/// that are gone, none for the chunks that replaced them) is mended by the start-up round, which
/// audits the lexical index against the store as it does after a crash: `repair --check` then
/// finds nothing, `repair REPO` has nothing to do, and the index is the from-scratch one.
#[test]
fn a_stale_lexical_index_put_back_while_down_is_mended_at_start() {
    let repo = two_versions();
    let root = repo.path();
    let mut env = stale_lexical_index(root);
    env.start_daemon();
    idle(&env, root);

    let found = repair(&env, true).reports[0].found.unwrap_or_default();
    assert_eq!(found, pb::IndexAudit::default(), "{found:?}");
    let out = env.patina(&["repair", "--check"]);
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(out.stdout.contains("consistent"), "{out:?}");
    let out = env.patina(&["repair", &root.to_string_lossy()]);
    assert_eq!(out.code(), 0, "{out:?}");
    let fresh = TestEnv::started();
    fresh.add_repo(root);
    let (mended, scratch) = (env.repo_info(root), fresh.repo_info(root));
    assert_eq!(
        (mended.files, mended.chunks, mended.chunk_digest),
        (scratch.files, scratch.chunks, scratch.chunk_digest),
        "the same files and chunks as a from-scratch index"
    );
    assert_eq!(
        paths(&lexical(&env, "zebracrash", root)),
        vec!["src/c.rs".to_string()],
        "v2's new file is found"
    );
    assert!(
        lexical(&env, "beta_kept", root).hits.is_empty(),
        "main's deleted file is not found"
    );
}

/// The same damage met by a daemon that did not mend it at start (`PATINA_TEST_NO_CATCH_UP`:
/// as if it happened while the daemon ran): `repair --check` finds it and exits 1, `repair REPO`
/// mends it, and the index is then the from-scratch one.
#[test]
fn repair_finds_a_damaged_lexical_index_and_mends_it() {
    let repo = two_versions();
    let root = repo.path();
    let mut env = stale_lexical_index(root);

    env.next_daemon_env("PATINA_TEST_NO_CATCH_UP", "1");
    env.start_daemon();
    let found = repair(&env, true).reports[0].found.unwrap_or_default();
    assert!(
        found.stray_docs > 0 && found.missing_docs > 0,
        "main's documents are stray, v2's are missing: {found:?}"
    );
    let out = env.patina(&["repair", "--check"]);
    assert_eq!(out.code(), 1, "damage found is exit 1: {out:?}");
    assert!(!out.stdout.contains("consistent"), "{out:?}");
    assert!(
        lexical(&env, "zebracrash", root).hits.is_empty(),
        "before the repair, v2's new file has no lexical document"
    );

    let out = env.patina(&["repair", &root.to_string_lossy()]);
    assert_eq!(out.code(), 0, "{out:?}");
    let out = env.patina(&["repair", "--check"]);
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(out.stdout.contains("consistent"), "{out:?}");
    let fresh = TestEnv::started();
    fresh.add_repo(root);
    let (mended, scratch) = (env.repo_info(root), fresh.repo_info(root));
    assert_eq!(
        (mended.files, mended.chunks, mended.chunk_digest),
        (scratch.files, scratch.chunks, scratch.chunk_digest),
        "the same files and chunks as a from-scratch index"
    );
    assert_eq!(
        paths(&lexical(&env, "zebracrash", root)),
        vec!["src/c.rs".to_string()]
    );
    assert!(lexical(&env, "beta_kept", root).hits.is_empty());
}

/// Defect 2: `--socket` naming a regular file is an error that names it; the file survives.
#[test]
fn a_socket_path_that_is_not_a_socket_is_refused_and_kept() {
    let env = TestEnv::new();
    let notes = env.home().join("notes.txt");
    std::fs::write(&notes, "my notes\n").unwrap();
    let path = notes.to_string_lossy().into_owned();

    let out = env.patina(&["--socket", &path, "status"]);
    assert_eq!(out.code(), 2, "{out:?}");
    assert!(
        out.stderr.contains(&path) && out.stderr.contains("not a socket"),
        "the error names the path: {out:?}"
    );
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "my notes\n");

    // The daemon itself refuses too (e.g. started by hand or by a service manager).
    let mut cmd = env.daemon_command();
    cmd.arg("--socket").arg(&notes);
    let out = run(cmd, Duration::from_secs(30));
    assert_ne!(out.code(), 0, "{out:?}");
    assert!(out.stderr.contains("not a socket"), "{out:?}");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "my notes\n");

    // A directory is not replaced either.
    let dir = env.home().join("adir");
    std::fs::create_dir(&dir).unwrap();
    let out = env.patina(&["--socket", &dir.to_string_lossy(), "status"]);
    assert_eq!(out.code(), 2, "{out:?}");
    assert!(dir.is_dir());
}

/// Every directory and file under `path` (itself included), symlinks not followed.
fn tree(path: &Path, out: &mut Vec<(std::path::PathBuf, u32)>) {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return;
    };
    if meta.file_type().is_symlink() {
        return;
    }
    out.push((path.to_path_buf(), meta.permissions().mode() & 0o7777));
    if meta.is_dir() {
        for e in std::fs::read_dir(path).unwrap() {
            tree(&e.unwrap().path(), out);
        }
    }
}

/// Defect 3: the state root, sled, tantivy, the lock, the log and session notes are owner-only —
/// for a new installation and for one made before (tightened at start).
#[test]
fn state_is_private_to_its_owner() {
    let mut env = TestEnv::new();
    let home = env.home().to_path_buf();
    // An installation from before: world-readable directories and files.
    for d in ["state", "repos/old"] {
        std::fs::create_dir_all(home.join(d)).unwrap();
    }
    std::fs::write(home.join("repos/old/leftover"), "code").unwrap();
    std::fs::write(home.join("patinad.log"), "old log\n").unwrap();
    for p in [
        "",
        "state",
        "repos",
        "repos/old",
        "repos/old/leftover",
        "patinad.log",
    ] {
        let mode = if home.join(p).is_dir() { 0o755 } else { 0o644 };
        std::fs::set_permissions(home.join(p), std::fs::Permissions::from_mode(mode)).unwrap();
    }
    env.start_daemon();
    let repo = fixture_repo();
    env.add_repo(repo.path());
    env.call("Sessions", async {
        let mut s = pb::sessions_client::SessionsClient::new(env.channel().await);
        s.start(pb::StartSessionRequest {
            name: "private".into(),
            ..Default::default()
        })
        .await
        .expect("Sessions.Start");
        s.note(pb::NoteRequest {
            session: "private".into(),
            text: "the secret plan".into(),
            ..Default::default()
        })
        .await
        .expect("Sessions.Note");
    });

    let mut entries = Vec::new();
    tree(&home, &mut entries);
    let root_mode = entries[0].1;
    assert_eq!(root_mode & 0o777, 0o700, "the state root is 0700");
    let mut checked = 0;
    for (path, mode) in &entries {
        let rel = path.strip_prefix(&home).unwrap();
        // Files the test itself wrote (config, the harness's log) are not the daemon's.
        if ["config.toml", "daemon-test.log"].contains(&rel.to_string_lossy().as_ref()) {
            continue;
        }
        assert_eq!(
            mode & 0o077,
            0,
            "{} is {:o}: readable by others",
            path.display(),
            mode
        );
        checked += 1;
    }
    assert!(
        entries.iter().any(|(p, _)| p.ends_with("patinad.lock"))
            && entries
                .iter()
                .any(|(p, _)| p.to_string_lossy().contains("/state/"))
            && entries
                .iter()
                .any(|(p, _)| p.to_string_lossy().contains("/lexical/")),
        "the lock, sled and tantivy were all checked: {entries:?}"
    );
    assert!(checked > 10, "{entries:?}");
}

/// Defect 5: FIFOs and symlinks into /proc inside a repository are never opened (a read of either
/// would block or never end); a repository on a pseudo file system is refused at once; removing a
/// repository that is being indexed returns at once.
#[test]
fn special_files_are_never_read_and_pseudo_file_systems_are_refused() {
    let env = TestEnv::started();
    let repo = git_repo(&[("src/lib.rs", b"pub fn regular_file_here() {}\n")]);
    let root = repo.path();
    let fifo =
        std::ffi::CString::new(root.join("src/pipe.rs").to_string_lossy().as_bytes()).unwrap();
    // SAFETY: mkfifo with a valid path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    std::os::unix::fs::symlink("/proc/self", root.join("proc")).unwrap();
    std::os::unix::fs::symlink("/proc/self/pagemap", root.join("pagemap.txt")).unwrap();

    let started = Instant::now();
    env.add_repo(root);
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    let info = env.repo_info(root);
    assert_eq!(info.files, 1, "only the regular file is indexed: {info:?}");

    // `/proc/self` through a symlink names the daemon's own /proc directory: refused, quickly.
    let started = Instant::now();
    let err = env.block_on(async {
        let add = async {
            env.repos_client()
                .await
                .add(pb::AddRequest {
                    path: root.join("proc").to_string_lossy().into_owned(),
                    force: true,
                })
                .await
        };
        tokio::time::timeout(Duration::from_secs(60), add)
            .await
            .expect("Repos.Add of /proc/self answers (it does not walk procfs)")
            .expect_err("a pseudo file system is refused")
    });
    assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
    assert!(err.message().contains("procfs"), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(60));
    env.assert_healthy();

    // Removing a repository in the middle of its first index cancels it: it returns without
    // waiting for the 3,000 files (a deadline for a hang, not a speed figure).
    let big = generated_repo(3000, |i| {
        (
            format!("m{:02}/f{i}.rs", i % 30),
            format!("pub fn cancel_me_{i}() -> u32 {{\n    {i}\n}}\n"),
        )
    });
    let out = env.patina(&["add", "--no-wait", &big.key()]);
    assert_eq!(out.code(), 0, "{out:?}");
    let started = Instant::now();
    env.remove_repo(&big.key()).expect("Repos.Remove");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "rm of a repository being indexed hung for {:?}",
        started.elapsed()
    );
    assert!(env.list().repos.iter().all(|r| r.root != big.key()));
}

/// Defect 6: `patina daemon stop` while a backlog of 400 files is being embedded returns (it does
/// not wait for the backlog), the process is gone, and nothing is logged at ERROR level. The
/// deadlines only catch a hang; how fast a stop is, is a benchmark's figure.
#[test]
fn a_stop_during_an_embedding_backlog_ends_the_daemon_quietly() {
    let mut env = TestEnv::with_model();
    let gate = env.embed_gate();
    env.start_daemon();
    let repo = generated_repo(400, |i| {
        (
            format!("src/f{i}.rs"),
            format!(
                "/// Computes the {i}th value of a sequence of widgets.\npub fn widget_{i}(x: u64) -> u64 {{\n    x * {i} + {}\n}}\n\npub struct Gadget{i} {{\n    pub level: u64,\n}}\n",
                i * 7
            ),
        )
    });
    env.add_repo(repo.path());
    // The gate held the model back: the whole repository waits. Open it and stop once the first
    // batch is in, while the rest is being embedded.
    let queued = env.repo_info(repo.path()).embed_backlog;
    assert!(queued > 400, "the whole repository waits: {queued}");
    gate.open();
    eventually("the model has embedded a first batch", || {
        env.assert_healthy().embeddings_computed > 0
    });
    let backlog = env.repo_info(repo.path()).embed_backlog;
    assert!(backlog > 100, "a backlog is draining: {backlog}");
    let pid = env.daemon_pid().expect("running");

    let started = Instant::now();
    let out = env.patina(&["daemon", "stop"]);
    let took = started.elapsed();
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(
        took <= Duration::from_secs(60),
        "daemon stop hung for {took:?}"
    );
    let status = env.wait_daemon_exit(Duration::from_secs(30));
    assert!(status.success(), "a clean exit: {status}");
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "the process is gone"
    );
    let logs = env.logs();
    assert!(!logs.contains("ERROR"), "a quiet stop:\n{logs}");

    // Nothing was lost: the next start resumes the backlog from the chunk table.
    env.start_daemon();
    let info = env.repo_info(repo.path());
    assert_eq!(info.files, 400);
    assert!(info.vectors + info.embed_backlog >= info.chunks, "{info:?}");
}
