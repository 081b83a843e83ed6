//! Just enough git for a live index, without linking a git library: where a working tree's git
//! directories are (plain repositories, worktrees and submodules, whose `.git` is a file), which
//! commit HEAD names (loose and packed refs, detached HEAD), and which paths differ between two
//! commits (`git diff --name-only`, shelling out to the user's git; `None` when that fails, and the
//! caller falls back to a full reconciliation).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The git directories of a working tree: `git_dir` holds HEAD, `common_dir` holds refs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GitDirs {
    pub git_dir: PathBuf,
    pub common_dir: PathBuf,
}

pub(crate) fn dirs(root: &Path) -> Option<GitDirs> {
    let dot = root.join(".git");
    let git_dir = if dot.is_dir() {
        dot
    } else {
        // Worktrees and submodules: `.git` is a file saying `gitdir: <path>`.
        let text = std::fs::read_to_string(&dot).ok()?;
        let rel = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
        let p = Path::new(rel);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            root.join(p)
        }
    };
    let common_dir = match std::fs::read_to_string(git_dir.join("commondir")) {
        Ok(c) => {
            let p = Path::new(c.trim());
            if p.is_absolute() {
                p.to_path_buf()
            } else {
                git_dir.join(p)
            }
        }
        Err(_) => git_dir.clone(),
    };
    Some(GitDirs {
        git_dir,
        common_dir,
    })
}

/// The commit HEAD points at, as 40 (or 64) hex digits; `None` outside git or on an unborn branch.
pub(crate) fn head(root: &Path) -> Option<String> {
    let d = dirs(root)?;
    let head = std::fs::read_to_string(d.git_dir.join("HEAD")).ok()?;
    let head = head.trim();
    let Some(reference) = head.strip_prefix("ref:").map(str::trim) else {
        return is_hash(head).then(|| head.to_string());
    };
    resolve_ref(&d, reference, 0)
}

fn resolve_ref(d: &GitDirs, name: &str, depth: u8) -> Option<String> {
    if depth > 5 {
        return None;
    }
    for base in [&d.git_dir, &d.common_dir] {
        if let Ok(v) = std::fs::read_to_string(base.join(name)) {
            let v = v.trim();
            if let Some(next) = v.strip_prefix("ref:") {
                return resolve_ref(d, next.trim(), depth + 1);
            }
            if is_hash(v) {
                return Some(v.to_string());
            }
        }
    }
    let packed = std::fs::read_to_string(d.common_dir.join("packed-refs")).ok()?;
    packed.lines().find_map(|l| {
        let (hash, r) = l.split_once(' ')?;
        (r.trim() == name && is_hash(hash)).then(|| hash.to_string())
    })
}

fn is_hash(s: &str) -> bool {
    (s.len() == 40 || s.len() == 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Paths (relative to `root`, '/'-separated) that differ between two commits, renames as delete +
/// add; `None` when git is unavailable or either commit is unknown.
pub(crate) fn changed_paths(root: &Path, from: &str, to: &str) -> Option<Vec<String>> {
    let stdout = git_stdout(
        root,
        &["diff", "--name-only", "--no-renames", "-z", from, to, "--"],
    )?;
    Some(
        stdout
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .filter_map(|p| std::str::from_utf8(p).ok().map(String::from))
            .collect(),
    )
}

/// A short description of the working tree's changes against HEAD (modified, staged or untracked
/// files that are not ignored: everything the index holds that a clone would not), or `None` when
/// it is clean. Unknown (git failing) counts as clean.
pub(crate) fn dirty(root: &Path) -> Option<String> {
    let stdout = git_stdout(root, &["status", "--porcelain", "-z"])?;
    let paths: Vec<String> = stdout
        .split(|b| *b == 0)
        .filter(|p| p.len() > 3)
        .map(|p| String::from_utf8_lossy(&p[3..]).into_owned())
        .collect();
    match paths.len() {
        0 => None,
        n => Some(format!(
            "{n} file{}: {}{}",
            if n == 1 { "" } else { "s" },
            paths.iter().take(3).cloned().collect::<Vec<_>>().join(", "),
            if n > 3 { ", …" } else { "" }
        )),
    }
}

/// What `git -C root ARGS` prints, when it succeeds (stdin closed, stderr dropped).
pub(crate) fn git_stdout(root: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status.success().then_some(out.stdout)
}

/// The commits reachable from `head`, newest first (`git rev-list`); `None` when git fails.
pub(crate) fn rev_list(root: &Path, head: &str) -> Option<Vec<String>> {
    let stdout = git_stdout(root, &["rev-list", head, "--"])?;
    Some(
        String::from_utf8_lossy(&stdout)
            .lines()
            .filter(|l| is_hash(l.trim()))
            .map(|l| l.trim().to_string())
            .collect(),
    )
}

/// `git log` of exactly `hashes` (no walk), with files and renames, in the format
/// [`patina_index::history::parse_log`] reads.
pub(crate) fn log_commits(root: &Path, hashes: &[String]) -> anyhow::Result<Vec<u8>> {
    use std::io::Write;
    let mut child = Command::new("git")
        .arg("-C")
        .arg(root)
        .args([
            "-c",
            "log.showSignature=false",
            "-c",
            "diff.renameLimit=1000",
            "log",
            "--stdin",
            "--no-walk=unsorted",
            "-z",
            "--name-status",
            "-M",
            "--no-color",
            "--no-ext-diff",
            patina_index::history::LOG_FORMAT,
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stdin = child.stdin.take().expect("piped stdin");
    let input = hashes.join("\n") + "\n";
    // Written from another thread: git starts answering before it has read all of its input.
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output()?;
    let _ = writer.join();
    if !out.status.success() {
        anyhow::bail!(
            "git log failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(out.stdout)
}

/// `git blame --porcelain -L start,end -- path` of the working tree (uncommitted lines show as
/// the all-zero commit); `None` when git fails (not tracked, lines beyond the end, no git).
pub(crate) fn blame_porcelain(root: &Path, path: &str, start: u32, end: u32) -> Option<Vec<u8>> {
    git_stdout(
        root,
        &[
            "blame",
            "--porcelain",
            "-L",
            &format!("{start},{end}"),
            "--",
            path,
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_loose_packed_and_detached_heads() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let git = root.join(".git");
        std::fs::create_dir_all(git.join("refs/heads")).unwrap();
        let a = "a".repeat(40);
        let b = "b".repeat(40);
        std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        assert_eq!(head(root), None, "unborn branch");
        std::fs::write(
            git.join("packed-refs"),
            format!("# pack-refs\n{b} refs/heads/main\n"),
        )
        .unwrap();
        assert_eq!(head(root), Some(b.clone()));
        std::fs::write(git.join("refs/heads/main"), format!("{a}\n")).unwrap();
        assert_eq!(
            head(root),
            Some(a.clone()),
            "loose refs win over packed ones"
        );
        std::fs::write(git.join("HEAD"), format!("{b}\n")).unwrap();
        assert_eq!(head(root), Some(b));
    }

    #[test]
    fn follows_gitdir_files_of_worktrees() {
        let dir = tempfile::tempdir().unwrap();
        let main = dir.path().join("main/.git");
        let wt = main.join("worktrees/feature");
        std::fs::create_dir_all(main.join("refs/heads")).unwrap();
        std::fs::create_dir_all(&wt).unwrap();
        let tree = dir.path().join("feature");
        std::fs::create_dir_all(&tree).unwrap();
        std::fs::write(tree.join(".git"), format!("gitdir: {}\n", wt.display())).unwrap();
        std::fs::write(wt.join("commondir"), "../..\n").unwrap();
        std::fs::write(wt.join("HEAD"), "ref: refs/heads/feature\n").unwrap();
        let c = "c".repeat(40);
        std::fs::write(main.join("refs/heads/feature"), &c).unwrap();
        assert_eq!(head(&tree), Some(c));
        assert_eq!(
            dirs(&tree).unwrap().common_dir.canonicalize().unwrap(),
            main.canonicalize().unwrap()
        );
    }
}
