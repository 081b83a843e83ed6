//! The `patina` shell client as a user sees it: grep-like exit codes (0 hits, 1 none, 2 error),
//! `path:start-end` output relative to the working directory, `--json`, and first queries in an
//! unregistered repository.

use std::path::{Path, PathBuf};

use crate::util::*;

/// `start-end` at the beginning of `s`, as numbers.
fn line_range(s: &str) -> Option<(u32, u32)> {
    let range = s.split_whitespace().next()?;
    let (a, b) = range.split_once('-')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

#[test]
fn q_prints_the_definition_first_as_path_and_line_range() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    env.add_repo(repo.path());

    let out = env.patina_in(repo.path(), &["q", "parse_args"]);
    assert_eq!(out.code(), 0, "hits mean exit code 0: {out:?}");
    let first = out.stdout.lines().next().expect("a first line");
    let rest = first
        .strip_prefix("src/args.rs:")
        .unwrap_or_else(|| panic!("first line: {first:?}\n{out:?}"));
    let (start, end) = line_range(rest).unwrap_or_else(|| panic!("no start-end in {first:?}"));
    let def = repo.line_of("src/args.rs", "pub fn parse_args");
    assert!(
        start <= def && def <= end && start >= 1,
        "{start}-{end} spans line {def}"
    );
    assert!(
        first.contains("parse_args"),
        "the line names the symbol: {first:?}"
    );
}

#[test]
fn q_paths_are_relative_to_the_working_directory() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    env.add_repo(repo.path());

    let out = env.patina_in(&repo.path().join("web"), &["q", "parse_args"]);
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(out.stdout.starts_with("../src/args.rs:"), "{out:?}");
}

#[test]
fn q_without_hits_exits_with_1() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    env.add_repo(repo.path());

    let out = env.patina_in(repo.path(), &["q", "zzqxqzz"]);
    assert_eq!(out.code(), 1, "{out:?}");
    assert_eq!(out.stdout, "", "nothing on stdout: {out:?}");
}

#[test]
fn q_errors_exit_with_2_and_explain_on_stderr() {
    let env = TestEnv::started();

    let out = env.patina(&["q", "foo", "--repo", "nope"]);
    assert_eq!(out.code(), 2, "{out:?}");
    assert!(
        out.stderr.contains("nope"),
        "stderr says which repository: {out:?}"
    );
    assert_eq!(out.stdout, "", "{out:?}");

    let out = env.patina(&["q", "  "]);
    assert_eq!(out.code(), 2, "an empty query is an error: {out:?}");
    assert!(!out.stderr.is_empty(), "{out:?}");
    env.assert_healthy();
}

#[test]
fn q_json_is_machine_readable() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    env.add_repo(repo.path());

    let out = env.patina_in(repo.path(), &["q", "--json", "parse_args"]);
    assert_eq!(out.code(), 0, "{out:?}");
    // JSON Lines: one object per hit, in rank order, then a summary.
    for (i, line) in out.stdout.lines().enumerate() {
        let v: serde_json::Value = serde_json::from_str(line).expect("each line parses alone");
        if v["type"] == "hit" {
            assert_eq!(v["rank"], i + 1, "{line}");
        }
    }
    let v = out.q_json();
    let hits = v["hits"].as_array().expect("hits[]");
    assert!(!hits.is_empty());
    for h in hits {
        assert!(h["path"].is_string(), "{h}");
        let (start, end) = (
            h["start_line"].as_u64().expect("start_line"),
            h["end_line"].as_u64().expect("end_line"),
        );
        assert!(1 <= start && start <= end, "{h}");
        let oracles = h["oracles"].as_array().expect("oracles[]");
        assert!(
            !oracles.is_empty(),
            "every hit says which oracles found it: {h}"
        );
        assert!(
            oracles
                .iter()
                .all(|o| o["oracle"].is_string() && o["rank"].as_u64().is_some_and(|r| r >= 1)),
            "{h}"
        );
    }
    assert_eq!(hits[0]["path"], "src/args.rs");
    assert_eq!(hits[0]["symbol"], "parse_args");
    let oracles = v["oracles"].as_array().expect("oracles[]");
    for name in ["lexical", "symbol"] {
        assert!(
            oracles
                .iter()
                .any(|o| o["oracle"] == name && o["status"] == "ok"),
            "{name} answered: {v}"
        );
    }

    let out = env.patina_in(repo.path(), &["q", "--json", "zzqxqzz"]);
    assert_eq!(out.code(), 1, "{out:?}");
    assert_eq!(out.stdout.lines().count(), 1, "only the summary: {out:?}");
    let v = out.q_json();
    assert_eq!(v["hits"].as_array().map(Vec::len), Some(0));
}

#[test]
fn q_in_an_unregistered_repository_registers_and_indexes_it_first() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    assert!(env.list().repos.is_empty());

    let out = env.patina_in(&repo.path().join("src"), &["q", "parse_args"]);
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(
        out.stderr.contains("registering"),
        "the user is told: {out:?}"
    );
    assert!(
        out.stdout.starts_with("args.rs:"),
        "hits come from the fresh index: {out:?}"
    );

    let info = env.repo_info(repo.path());
    assert!(info.last_indexed_unix_ms > 0 && info.files > 0, "{info:?}");
}

#[test]
fn q_filters_by_path_and_returns_one_hit_per_file_with_files() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    env.add_repo(repo.path());

    let out = env.patina_in(repo.path(), &["q", "parse_args", "--path", "*.py"]);
    assert_eq!(out.code(), 0, "{out:?}");
    let locations: Vec<&str> = out.stdout.lines().filter(|l| !l.starts_with(' ')).collect();
    assert!(
        !locations.is_empty()
            && locations
                .iter()
                .all(|l| l.starts_with("app/") && l.contains(".py:")),
        "{out:?}"
    );

    // ripgrep's convention: `-g '!GLOB'` excludes, alone or beside including globs.
    let out = env.patina_in(
        repo.path(),
        &["q", "parse_args", "--files", "-n", "50", "-g", "!*.py"],
    );
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(
        out.stdout.contains("src/args.rs") && !out.stdout.contains(".py:"),
        "an exclusion alone keeps everything else: {out:?}"
    );
    let out = env.patina_in(
        repo.path(),
        &[
            "q",
            "parse_args",
            "--files",
            "--path",
            "app",
            "-g",
            "!app/models.py",
        ],
    );
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(
        out.stdout.contains("app/cli.py") && !out.stdout.contains("models.py"),
        "{out:?}"
    );

    let out = env.patina_in(repo.path(), &["q", "parse_args", "--files", "-n", "50"]);
    assert_eq!(out.code(), 0, "{out:?}");
    let files: Vec<&str> = out
        .stdout
        .lines()
        .map(|l| l.split(':').next().unwrap())
        .collect();
    let mut unique = files.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(files.len(), unique.len(), "one line per file: {out:?}");
    assert_eq!(files[0], "src/args.rs", "{out:?}");
}

#[test]
fn repos_and_status_describe_the_registered_repositories() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    env.add_repo(repo.path());

    let out = env.patina(&["repos", "--json"]);
    assert_eq!(out.code(), 0, "{out:?}");
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    assert_eq!(v[0]["root"], repo.key().as_str(), "{v}");
    assert_eq!(v[0]["files"], 13, "{v}");

    let out = env.patina(&["status"]);
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(out.stdout.contains(&repo.key()), "{out:?}");
    assert!(out.stdout.contains("skipped binary: 1"), "{out:?}");
}

#[test]
fn a_reader_that_closes_the_pipe_early_ends_the_client_quietly() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    env.add_repo(repo.path());
    // `patina q … | head -0`: the reading end is gone before the first line is written.
    for args in [
        &["q", "parse_args", "-n", "20"][..],
        &["q", "parse_args", "--json"][..],
        &["repos"][..],
    ] {
        let (reader, writer) = std::io::pipe().expect("pipe");
        drop(reader);
        let mut cmd = env.patina_command();
        cmd.current_dir(repo.path())
            .args(args)
            .stdout(writer)
            .stderr(std::process::Stdio::piped());
        let out = cmd.output().expect("running patina");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "{args:?}: a closed pipe is not a failure: {:?} {stderr}",
            out.status
        );
        assert!(
            !stderr.to_lowercase().contains("pipe") && !stderr.contains("panicked"),
            "{args:?}: nothing about broken pipes: {stderr}"
        );
    }
}

#[test]
fn add_refuses_what_is_probably_a_mistake_unless_forced() {
    let env = TestEnv::started();
    // A directory that is not a git repository: everything below it would be indexed.
    let plain = tempfile::tempdir().expect("tempdir");
    std::fs::write(plain.path().join("notes.txt"), "shopping list\n").unwrap();
    let key = plain.path().to_string_lossy().into_owned();
    let out = env.patina(&["add", &key]);
    assert_eq!(out.code(), 2, "{out:?}");
    assert!(
        out.stderr.contains("not inside a git repository") && out.stderr.contains("--force"),
        "says why and how to insist: {out:?}"
    );
    let repos = env.patina(&["repos"]);
    assert!(
        !repos.stdout.contains(&key),
        "nothing registered: {repos:?}"
    );
    let out = env.patina(&["add", "--force", &key]);
    assert_eq!(out.code(), 0, "--force registers it: {out:?}");
    assert!(env.patina(&["repos"]).stdout.contains(&key));

    // The temporary directory and the root of the file system, whatever they contain.
    for dir in ["/tmp", "/"] {
        let out = env.patina(&["add", "--no-wait", dir]);
        if out.code() == 0 {
            env.patina(&["rm", dir]);
        }
        assert_eq!(out.code(), 2, "{dir}: {out:?}");
        assert!(out.stderr.contains("--force"), "{dir}: {out:?}");
    }
}

#[test]
fn add_refuses_the_home_directory_unless_forced() {
    // The daemon's home is a git repository here: still not something to index by accident.
    let home = fixture_repo();
    let mut env = TestEnv::new();
    env.next_daemon_env("HOME", home.path());
    env.start_daemon();
    let key = home.path().to_string_lossy().into_owned();
    let out = env.patina(&["add", &key]);
    assert_eq!(out.code(), 2, "{out:?}");
    assert!(
        out.stderr.contains("home directory") && out.stderr.contains("--force"),
        "{out:?}"
    );
    assert!(
        !env.patina(&["repos"]).stdout.contains(&key),
        "nothing registered"
    );
}

/// A git repository is meant, however large: 60,000 committed files are registered without
/// `--force`, and `add` says first what indexing them will cost.
#[test]
fn a_git_repository_of_60000_files_is_added_without_force_and_its_cost_is_said() {
    let big = tempfile::Builder::new()
        .prefix("pbig")
        .tempdir_in("/tmp")
        .unwrap();
    git(big.path(), &["init", "-q"]);
    for d in 0..60 {
        let dir = big.path().join(format!("d{d}"));
        std::fs::create_dir(&dir).unwrap();
        for f in 0..1000 {
            std::fs::write(dir.join(format!("f{f}.txt")), format!("{d} {f}\n")).unwrap();
        }
    }
    git(big.path(), &["add", "-A"]);
    git(big.path(), &["commit", "-q", "-m", "sixty thousand files"]);
    let env = TestEnv::started();
    let key = big.path().to_string_lossy().into_owned();
    let out = env.patina(&["add", "--no-wait", &key]);
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(
        out.stderr.contains("a large repository: 60,000 files")
            && out
                .stderr
                .contains("Expect lexical and symbol search within about")
            && out.stderr.contains("of index on disk"),
        "{out:?}"
    );
    assert!(env.patina(&["repos"]).stdout.contains(&key));
    // Removing it cancels the round and deletes its data.
    let out = env.patina(&["rm", &key]);
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(!env.patina(&["repos"]).stdout.contains(&key));
}

#[test]
fn q_outside_any_repository_says_which_repositories_it_searched() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    env.add_repo(repo.path());
    let elsewhere = tempfile::tempdir().unwrap();
    let out = env.patina_in(elsewhere.path(), &["q", "parse_args"]);
    assert_eq!(out.code(), 0, "{out:?}");
    let name = repo.path().file_name().unwrap().to_str().unwrap();
    assert!(
        out.stderr.contains("searched all 1 registered") && out.stderr.contains(name),
        "{out:?}"
    );
    let out = env.patina_in(elsewhere.path(), &["q", "parse_args", "--all"]);
    assert!(
        !out.stderr.contains("searched all"),
        "--all is explicit: {out:?}"
    );
}

#[test]
fn color_is_off_in_a_pipe_unless_asked_for_and_never_means_never() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    env.add_repo(repo.path());
    let esc = '\u{1b}';
    let piped = env.patina_in(repo.path(), &["q", "parse_args"]);
    assert!(
        piped.code() == 0 && !piped.stdout.contains(esc),
        "{piped:?}"
    );
    let always = env.patina_in(repo.path(), &["q", "parse_args", "--color", "always"]);
    assert!(
        always.stdout.contains(esc),
        "--color always colours a pipe: {always:?}"
    );
    let never = env.patina_in(repo.path(), &["--color", "never", "q", "parse_args"]);
    assert!(!never.stdout.contains(esc), "{never:?}");
    let bad = env.patina_in(repo.path(), &["q", "parse_args", "--color", "sometimes"]);
    assert_eq!(bad.code(), 2, "{bad:?}");
}

#[test]
fn file_types_follow_ripgreps_table() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    env.add_repo(repo.path());
    let files = |args: &[&str]| {
        let mut a = vec!["q", "parse_args", "--files", "-n", "50"];
        a.extend_from_slice(args);
        env.patina_in(repo.path(), &a)
    };
    let py = files(&["-t", "py"]);
    assert_eq!(py.code(), 0, "{py:?}");
    assert!(py.stdout.lines().all(|l| l.contains(".py:")), "{py:?}");
    let not_py = files(&["--type-not", "py"]);
    assert!(
        not_py.stdout.contains("src/args.rs") && !not_py.stdout.contains(".py:"),
        "{not_py:?}"
    );
    let unknown = files(&["-t", "klingon"]);
    assert_eq!(unknown.code(), 2, "{unknown:?}");
    assert!(unknown.stderr.contains("--type-list"), "{unknown:?}");
    let list = env.patina(&["q", "--type-list"]);
    assert_eq!(list.code(), 0, "{list:?}");
    assert!(
        list.stdout
            .lines()
            .any(|l| l.starts_with("rust: ") && l.contains("*.rs")),
        "{list:?}"
    );
}

#[test]
fn vimgrep_prints_path_line_column_text_at_the_best_matching_line() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    env.add_repo(repo.path());
    let out = env.patina_in(repo.path(), &["q", "parse_args", "--vimgrep"]);
    assert_eq!(out.code(), 0, "{out:?}");
    let first = out.stdout.lines().next().unwrap_or_default();
    assert_eq!(
        first, "src/args.rs:12:8:pub fn parse_args(args: &[String]) -> Options {",
        "{out:?}"
    );
    for line in out.stdout.lines() {
        let parts: Vec<&str> = line.splitn(4, ':').collect();
        assert!(
            parts.len() == 4 && parts[1].parse::<u32>().is_ok() && parts[2].parse::<u32>().is_ok(),
            "every line is path:line:column:text: {line}"
        );
    }
}

#[test]
fn context_lines_surround_the_best_matching_line_with_the_files_own_lines() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    env.add_repo(repo.path());
    // The chunk of `parse_args` starts at its doc comment (line 11); -B 3 reaches above it.
    let out = env.patina_in(
        repo.path(),
        &["q", "parse_args", "-n", "1", "-B", "3", "-A", "1"],
    );
    assert_eq!(out.code(), 0, "{out:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(lines[0].starts_with("src/args.rs:11-"), "{out:?}");
    assert_eq!(
        lines[1..],
        [
            "    9-}",
            "    10-",
            "    11-/// Turn `--key=value` pairs and `-v` into [`Options`].",
            "    12:pub fn parse_args(args: &[String]) -> Options {",
            "    13-    let mut opts = Options { verbose: false, values: HashMap::new() };",
        ],
        "ripgrep's numbering: `:` the matching line, `-` context; {out:?}"
    );

    // -C N is both sides; in --json each hit carries its context.
    let out = env.patina_in(
        repo.path(),
        &["q", "parse_args", "-n", "1", "-C", "1", "--json"],
    );
    let v = out.q_json();
    let ctx = &v["hits"][0]["context"];
    assert_eq!(ctx["start_line"], 11, "{v}");
    assert_eq!(ctx["best_line"], 12, "{v}");
    assert_eq!(
        ctx["text"].as_str().map(|t| t.lines().count()),
        Some(3),
        "{v}"
    );

    let out = env.patina_in(repo.path(), &["q", "parse_args", "-C", "1", "--vimgrep"]);
    assert_eq!(out.code(), 2, "-C and --vimgrep do not combine: {out:?}");
}

#[test]
fn paths_are_hyperlinks_only_when_asked_or_on_a_terminal_that_renders_them() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    env.add_repo(repo.path());
    let q = |extra: &[&str]| {
        let mut args = vec!["q", "parse_args", "-n", "1"];
        args.extend_from_slice(extra);
        env.patina_in(repo.path(), &args)
    };
    let piped = q(&[]);
    assert!(
        !piped.stdout.contains('\x1b'),
        "no escape codes into a pipe: {piped:?}"
    );

    let linked = q(&["--hyperlink", "always"]);
    let first = linked.stdout.lines().next().unwrap_or_default();
    let root = repo.path().canonicalize().unwrap();
    let url = format!("{}/src/args.rs", root.display());
    assert!(
        first.starts_with("\x1b]8;;file://")
            && first.contains(&format!("{url}\x1b\\src/args.rs\x1b]8;;\x1b\\:")),
        "an OSC 8 link to the file around the shown path: {first:?}"
    );
    let coloured = q(&["--color", "always", "--hyperlink", "never"]);
    let first = coloured.stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("\x1b[35msrc/args.rs\x1b[0m:"),
        "{first:?}"
    );
}

/// The hits of `patina q --json` as absolute paths, from the working directory `cwd`.
fn hit_files(out: &Output, cwd: &Path) -> Vec<PathBuf> {
    let v = out.q_json();
    v["hits"]
        .as_array()
        .map(|hits| {
            hits.iter()
                .filter_map(|h| h["path"].as_str())
                .map(|p| std::fs::canonicalize(cwd.join(p)).unwrap_or_else(|_| cwd.join(p)))
                .collect()
        })
        .unwrap_or_default()
}

/// `--near DIR` is read from the working directory: inside a folder, `--near .` lifts that folder's
/// file over an equal match in another.
#[test]
fn near_is_read_from_the_working_directory() {
    let env = TestEnv::started();
    let body = "def retry_backoff(attempt):\n    \"\"\"Wait longer after each failed attempt.\"\"\"\n    return min(30, 2 ** attempt)\n";
    let repo = git_repo(&[
        ("alpha/retry.py", body.as_bytes()),
        ("beta/retry.py", body.as_bytes()),
    ]);
    env.add_repo(repo.path());
    for dir in ["alpha", "beta"] {
        let cwd = repo.path().join(dir);
        let out = env.patina_in(&cwd, &["q", "--json", "retry backoff", "--near", "."]);
        assert_eq!(out.code(), 0, "{out:?}");
        let files = hit_files(&out, &cwd);
        assert_eq!(
            files.first(),
            Some(&repo.path().join(dir).join("retry.py")),
            "from {dir}/, --near . lifts {dir}/retry.py: {files:?}"
        );
    }
}

/// `-t TYPE` keeps only files of that type and `-T TYPE` drops them (ripgrep's type names).
#[test]
fn type_keeps_and_type_not_drops_a_file_type() {
    let env = TestEnv::started();
    let repo = git_repo(&[
        (
            "src/retry.py",
            b"def retry_backoff(attempt):\n    \"\"\"Wait longer after each failed attempt.\"\"\"\n    return min(30, 2 ** attempt)\n",
        ),
        (
            "docs/retry.md",
            b"# Retries\n\n## Retry backoff\n\nAfter each failed attempt the client waits longer: the retry backoff doubles.\n",
        ),
    ]);
    env.add_repo(repo.path());
    let root = repo.path();
    let ext = |p: &PathBuf| p.extension().map(|e| e.to_string_lossy().into_owned());
    let all = hit_files(
        &env.patina_in(root, &["q", "--json", "retry backoff"]),
        root,
    );
    assert!(
        all.iter().any(|p| ext(p).as_deref() == Some("py"))
            && all.iter().any(|p| ext(p).as_deref() == Some("md")),
        "both files answer without a type: {all:?}"
    );
    let only = hit_files(
        &env.patina_in(root, &["q", "--json", "retry backoff", "-t", "py"]),
        root,
    );
    assert!(
        !only.is_empty() && only.iter().all(|p| ext(p).as_deref() == Some("py")),
        "-t py: {only:?}"
    );
    let not = hit_files(
        &env.patina_in(root, &["q", "--json", "retry backoff", "-T", "py"]),
        root,
    );
    assert!(
        !not.is_empty() && not.iter().all(|p| ext(p).as_deref() != Some("py")),
        "-T py: {not:?}"
    );
}
