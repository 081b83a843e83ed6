//! Blame attribution: when a hit's lines last changed and in which commit. Computed lazily, only
//! for answers that ask for it (`QueryRequest.blame`, `ContextRequest.blame`), with `git blame
//! --porcelain -L` of the working tree (so uncommitted edits show as "not committed yet"), on the
//! blocking pool, for at most [`MAX_TARGETS`] ranges and within [`BUDGET`] per answer.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::services::git;

/// Ranges blamed per answer at most; later hits carry no blame.
pub(crate) const MAX_TARGETS: usize = 50;
/// Time spent blaming one answer at most; ranges not reached by then carry no blame.
pub(crate) const BUDGET: Duration = Duration::from_secs(3);

/// One range of one file of a repository's working tree.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Target {
    pub root: PathBuf,
    pub path: String,
    pub start: u32,
    pub end: u32,
}

/// The newest change among a range's lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LineBlame {
    /// Full hash; `None` when the newest change is not committed yet.
    pub commit: Option<String>,
    /// Committer time of that commit, seconds (0 when not committed).
    pub time_unix: i64,
    pub author: String,
    pub subject: String,
    /// Lines of the range that commit last changed.
    pub lines: u32,
    /// Distinct commits (the working tree counting as one) among the range's lines.
    pub commits: u32,
}

#[derive(Default, Clone)]
struct CommitInfo {
    author: String,
    time: i64,
    subject: String,
    lines: u32,
}

fn is_hash(s: &str) -> bool {
    (s.len() == 40 || s.len() == 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The newest commit among the lines of `git blame --porcelain` output (uncommitted lines — the
/// all-zero hash — are newer than any commit); `None` for output without lines.
pub(crate) fn parse_porcelain(out: &str) -> Option<LineBlame> {
    let mut commits: HashMap<String, CommitInfo> = HashMap::new();
    let mut current: Option<String> = None;
    let mut expect_header = true;
    for line in out.lines() {
        if line.starts_with('\t') {
            if let Some(c) = &current {
                commits.entry(c.clone()).or_default().lines += 1;
            }
            expect_header = true;
            continue;
        }
        if expect_header {
            let first = line.split(' ').next().unwrap_or("");
            if is_hash(first) {
                current = Some(first.to_string());
                commits.entry(first.to_string()).or_default();
                expect_header = false;
                continue;
            }
        }
        let Some(c) = &current else { continue };
        let info = commits.entry(c.clone()).or_default();
        let (key, value) = line.split_once(' ').unwrap_or((line, ""));
        match key {
            "author" => info.author = value.to_string(),
            "committer-time" => info.time = value.trim().parse().unwrap_or(0),
            "summary" => info.subject = value.to_string(),
            _ => {}
        }
    }
    let distinct = commits.values().filter(|i| i.lines > 0).count() as u32;
    let (hash, info) = commits
        .into_iter()
        .filter(|(_, i)| i.lines > 0)
        .max_by_key(|(h, i)| {
            let uncommitted = h.bytes().all(|b| b == b'0');
            (uncommitted, i.time, h.clone())
        })?;
    let uncommitted = hash.bytes().all(|b| b == b'0');
    Some(LineBlame {
        commit: (!uncommitted).then_some(hash),
        time_unix: if uncommitted { 0 } else { info.time },
        author: if uncommitted {
            String::new()
        } else {
            info.author
        },
        subject: if uncommitted {
            "not committed yet".into()
        } else {
            info.subject
        },
        lines: info.lines,
        commits: distinct,
    })
}

/// Blame one range now (blocking: runs git).
pub(crate) fn blame_range(t: &Target) -> Option<LineBlame> {
    if t.start == 0 || t.end < t.start {
        return None;
    }
    let out = git::blame_porcelain(&t.root, &t.path, t.start, t.end)?;
    parse_porcelain(&String::from_utf8_lossy(&out))
}

/// Blame `targets` on the blocking pool, in order, the same range once; `None` for ranges git
/// cannot blame and for those beyond [`MAX_TARGETS`] or [`BUDGET`].
pub(crate) async fn blame_all(targets: Vec<Option<Target>>) -> Vec<Option<LineBlame>> {
    let n = targets.len();
    tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        let mut done: HashMap<Target, Option<LineBlame>> = HashMap::new();
        let mut out = Vec::with_capacity(targets.len());
        for t in targets {
            let Some(t) = t else {
                out.push(None);
                continue;
            };
            if let Some(b) = done.get(&t) {
                out.push(b.clone());
                continue;
            }
            if done.len() >= MAX_TARGETS || started.elapsed() > BUDGET {
                out.push(None);
                continue;
            }
            let b = blame_range(&t);
            done.insert(t, b.clone());
            out.push(b);
        }
        out
    })
    .await
    .unwrap_or_else(|_| vec![None; n])
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "1111111111111111111111111111111111111111";
    const B: &str = "2222222222222222222222222222222222222222";
    const Z: &str = "0000000000000000000000000000000000000000";

    fn header(hash: &str, line: u32, author: &str, time: i64, subject: &str) -> String {
        format!(
            "{hash} {line} {line} 1\nauthor {author}\nauthor-mail <a@x>\nauthor-time {time}\n\
             author-tz +0000\ncommitter {author}\ncommitter-mail <a@x>\ncommitter-time {time}\n\
             committer-tz +0000\nsummary {subject}\nfilename src/lib.rs\n"
        )
    }

    #[test]
    fn newest_commit_among_the_lines_wins() {
        let out = format!(
            "{}\tfn a() {{\n{}\t    1\n{A} 3 3\n\t}}\n",
            header(A, 1, "Ann", 100, "add a"),
            header(B, 2, "Bob", 200, "change a's body"),
        );
        let b = parse_porcelain(&out).unwrap();
        assert_eq!(b.commit.as_deref(), Some(B));
        assert_eq!(b.author, "Bob");
        assert_eq!(b.subject, "change a's body");
        assert_eq!(b.time_unix, 200);
        assert_eq!((b.lines, b.commits), (1, 2));
    }

    #[test]
    fn a_repeated_commit_counts_all_its_lines() {
        let out = format!(
            "{}\tx\n{A} 2 2\n\ty\n{A} 3 3\n\tz\n",
            header(A, 1, "Ann", 100, "add")
        );
        let b = parse_porcelain(&out).unwrap();
        assert_eq!((b.lines, b.commits), (3, 1));
    }

    #[test]
    fn uncommitted_lines_are_the_newest_change() {
        let out = format!(
            "{}\tx\n{}\ty\n",
            header(A, 1, "Ann", 100, "add"),
            header(
                Z,
                2,
                "Not Committed Yet",
                300,
                "Version of src/lib.rs from src/lib.rs"
            ),
        );
        let b = parse_porcelain(&out).unwrap();
        assert_eq!(b.commit, None);
        assert_eq!(b.subject, "not committed yet");
        assert_eq!(b.time_unix, 0);
    }

    #[test]
    fn no_lines_no_blame() {
        assert_eq!(parse_porcelain(""), None);
    }
}
