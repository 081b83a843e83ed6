//! Throwaway git repositories, and git run without the user's configuration.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::run;

/// A git repository created for a test, deleted when dropped.
pub struct Repo {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Repo {
    /// The repository root (canonical, as the daemon reports it).
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// The root as a string, for request fields.
    pub fn key(&self) -> String {
        self.root.to_string_lossy().into_owned()
    }

    /// The text of a file of the repository.
    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel))
            .unwrap_or_else(|e| panic!("reading {rel}: {e}"))
    }

    /// The 1-based number of the first line of `rel` containing `needle`.
    pub fn line_of(&self, rel: &str, needle: &str) -> u32 {
        self.read(rel)
            .lines()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{rel} has no line containing {needle:?}")) as u32
            + 1
    }
}

/// `git clone` of `src` at `into` (a sibling path); the clone's canonical root.
pub fn clone_repo(src: &Path, into: &Path) -> PathBuf {
    git(
        src.parent().expect("a repository has a parent directory"),
        &[
            "clone",
            "-q",
            &src.to_string_lossy(),
            &into.to_string_lossy(),
        ],
    );
    std::fs::canonicalize(into).expect("the clone exists")
}

/// Run git in `root` with a fixed identity and no user or system configuration; panics on failure.
pub fn git(root: &Path, args: &[&str]) {
    git_out(root, args, None);
}

/// [`git`] with both commit dates set to `date` when given; returns its trimmed stdout.
pub fn git_out(root: &Path, args: &[&str], date: Option<&str>) -> String {
    let mut cmd = Command::new("git");
    cmd.current_dir(root)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null");
    if let Some(d) = date {
        cmd.env("GIT_AUTHOR_DATE", d).env("GIT_COMMITTER_DATE", d);
    }
    let out = run(cmd, Duration::from_secs(60));
    assert!(out.status.success(), "git {args:?} failed: {out:?}");
    out.stdout.trim().to_string()
}

/// A git repository with exactly `files` (path, content), committed.
pub fn git_repo(files: &[(&str, &[u8])]) -> Repo {
    let dir = tempfile::Builder::new()
        .prefix("pr")
        .tempdir_in("/tmp")
        .expect("creating a repository dir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical repository root");
    for (rel, content) in files {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("creating directories");
        std::fs::write(&path, content).unwrap_or_else(|e| panic!("writing {rel}: {e}"));
    }
    let git = |args: &[&str]| git(&root, args);
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "fixture"]);
    Repo { _dir: dir, root }
}

/// A git repository of `n` generated files: `file(i)` gives the i-th (path, content).
pub fn generated_repo(n: usize, file: impl Fn(usize) -> (String, String)) -> Repo {
    let files: Vec<(String, String)> = (0..n).map(file).collect();
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_bytes()))
        .collect();
    git_repo(&refs)
}
