//! `Files.GetFile`: serves lines of files of registered repositories, and nothing outside them.

use crate::util::*;

fn get(repo: &str, path: &str, start_line: u32, end_line: u32) -> GetFileRequest {
    GetFileRequest {
        repo: repo.into(),
        path: path.into(),
        start_line,
        end_line,
    }
}

#[test]
fn get_file_returns_the_lines_asked_for() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    let id = env.add_repo(repo.path()).repo.expect("repo info").id;
    let text = repo.read("src/args.rs");
    let lines: Vec<&str> = text.lines().collect();

    let whole = env
        .get_file(get(&repo.key(), "src/args.rs", 0, 0))
        .expect("whole file");
    assert_eq!(whole.text, lines.join("\n"));
    assert_eq!(
        (whole.total_lines, whole.start_line, whole.end_line),
        (lines.len() as u32, 1, lines.len() as u32)
    );
    assert_eq!(
        (
            whole.repo_id.as_str(),
            whole.path.as_str(),
            whole.language.as_str()
        ),
        (id.as_str(), "src/args.rs", "rust")
    );
    assert!(!whole.truncated);

    let def = repo.line_of("src/args.rs", "pub fn parse_args");
    let slice = env
        .get_file(get(&id, "src/args.rs", def, def + 1))
        .expect("a slice, repo by id");
    assert_eq!(
        slice.text,
        lines[def as usize - 1..=def as usize].join("\n")
    );
    assert_eq!((slice.start_line, slice.end_line), (def, def + 1));

    let tail = env
        .get_file(get(&repo.key(), "./src/args.rs", def, 10_000))
        .expect("end past the last line");
    assert_eq!(tail.end_line, lines.len() as u32, "the end is clamped");
}

#[test]
fn get_file_refuses_paths_outside_the_repository() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    env.add_repo(repo.path());
    std::os::unix::fs::symlink("/etc", repo.path().join("escape")).unwrap();

    for path in [
        "../etc/passwd",
        "/etc/passwd",
        "src/../../etc/passwd",
        "",
        "escape/passwd",
        ".git/config",
    ] {
        let err = env.get_file(get(&repo.key(), path, 0, 0)).unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{path:?}: {err:?}");
    }
    env.assert_healthy();
}

#[test]
fn get_file_reports_missing_files_and_refuses_binaries() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    env.add_repo(repo.path());

    let err = env
        .get_file(get(&repo.key(), "src/nothing.rs", 0, 0))
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{err:?}");
    let err = env
        .get_file(get(&repo.key(), BINARY_FILE, 0, 0))
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
    let err = env.get_file(get(&repo.key(), "src", 0, 0)).unwrap_err();
    assert_eq!(
        err.code(),
        Code::InvalidArgument,
        "a directory is not a file: {err:?}"
    );
}

/// A file the user's global git excludes name (`$XDG_CONFIG_HOME/git/ignore`) is neither indexed
/// nor served: the walk and the file server follow one set of ignore rules.
#[test]
fn globally_ignored_files_are_neither_indexed_nor_served() {
    let user = tempfile::tempdir().expect("a home directory");
    let xdg = user.path().join("config");
    std::fs::create_dir_all(xdg.join("git")).unwrap();
    std::fs::write(xdg.join("git/ignore"), "*.scratch\nprivate/\n").unwrap();
    let mut env = TestEnv::new();
    // The daemon reads the user's git configuration from here, not from the machine's.
    env.next_daemon_env("HOME", user.path());
    env.next_daemon_env("XDG_CONFIG_HOME", &xdg);
    env.start_daemon();
    let repo = git_repo(&[
        ("src/lib.rs", b"pub fn kept_function() {}\n"),
        ("notes.scratch", b"quokkaglobalword in a scratch file\n"),
        (
            "private/plan.md",
            b"# quokkaglobalword in an ignored folder\n",
        ),
    ]);
    env.add_repo(repo.path());

    let found = env.search("quokkaglobalword", &[repo.path()]);
    assert!(
        found.hits.is_empty(),
        "globally ignored files are not indexed: {:?}",
        found.hits
    );
    for path in ["notes.scratch", "private/plan.md", "private"] {
        let err = env
            .get_file(get(&repo.key(), path, 0, 0))
            .expect_err("a globally ignored path is not served");
        assert_eq!(err.code(), Code::InvalidArgument, "{path}: {err:?}");
        assert!(err.message().contains("ignore"), "{path}: {err:?}");
    }
    let kept = env
        .get_file(get(&repo.key(), "src/lib.rs", 0, 0))
        .expect("a file the rules let through is served");
    assert!(kept.text.contains("kept_function"));
}
