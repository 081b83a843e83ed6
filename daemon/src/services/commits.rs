//! The commit a query names (`2819212f`, `HEAD~3`, `v1.2.0`): what it says and where its changes
//! are in the code as it is now. `git show -U0` gives the lines the commit changed; `git diff -U0`
//! from it to HEAD moves each line to where it is at HEAD (a line rewritten since is dropped). The
//! query engine points the answer at the chunks holding those lines.

use std::path::Path;

use crate::services::git::git_stdout;

/// A commit and the places it changed, at HEAD.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CommitChanges {
    pub hash: String,
    pub author: String,
    /// ISO 8601, as git prints `%aI`.
    pub date: String,
    pub subject: String,
    /// Every file the commit touched (its path in that commit).
    pub files: Vec<String>,
    /// (path at HEAD, line at HEAD) of the start of each changed region still there.
    pub at_head: Vec<(String, u32)>,
}

/// At most this many changed regions are pointed at.
const MAX_REGIONS: usize = 20;

/// The full hash of the commit `text` names in the repository at `root`, when `text` looks like a
/// revision ([`looks_like_rev`]) and git resolves it.
pub(crate) fn resolve(root: &Path, text: &str) -> Option<String> {
    let rev = text.trim();
    if !looks_like_rev(rev) {
        return None;
    }
    let spec = format!("{rev}^{{commit}}");
    let out = git_stdout(root, &["rev-parse", "--verify", "--quiet", &spec])?;
    Some(String::from_utf8(out).ok()?.trim().to_string())
}

/// The commit `rev` names in the repository at `root`, with its changes moved to HEAD; `None` when
/// `rev` names no commit there.
pub(crate) fn changes(root: &Path, rev: &str) -> Option<CommitChanges> {
    if rev.starts_with('-') || rev.len() > 100 {
        return None;
    }
    let spec = format!("{rev}^{{commit}}");
    let hash = String::from_utf8(git_stdout(
        root,
        &["rev-parse", "--verify", "--quiet", &spec],
    )?)
    .ok()?
    .trim()
    .to_string();
    let shown = git_stdout(
        root,
        &[
            "show",
            "--no-color",
            "--no-ext-diff",
            "--find-renames",
            "-U0",
            "--format=%an%x1f%aI%x1f%s",
            &hash,
        ],
    )?;
    let shown = String::from_utf8_lossy(&shown);
    let (header, diff) = shown.split_once('\n').unwrap_or((&shown, ""));
    let mut fields = header.split('\x1f');
    let (author, date, subject) = (
        fields.next().unwrap_or("").to_string(),
        fields.next().unwrap_or("").to_string(),
        fields.next().unwrap_or("").to_string(),
    );
    let changed = changed_lines(diff);
    let files: Vec<String> = changed.iter().map(|(p, _)| p.clone()).collect();
    let mut at_head = Vec::new();
    for (path, starts) in changed {
        if starts.is_empty() || at_head.len() >= MAX_REGIONS {
            continue;
        }
        // How the file moved on since the commit (nothing when it did not change).
        let Some(since) = git_stdout(
            root,
            &[
                "diff",
                "--no-color",
                "--no-ext-diff",
                "-U0",
                &hash,
                "HEAD",
                "--",
                &path,
            ],
        ) else {
            continue;
        };
        let since = String::from_utf8_lossy(&since);
        if since.contains("\n+++ /dev/null") {
            continue; // deleted since
        }
        let hunks = hunks(&since);
        for line in starts {
            if let Some(now) = moved(line, &hunks) {
                at_head.push((path.clone(), now));
            }
        }
    }
    at_head.truncate(MAX_REGIONS);
    Some(CommitChanges {
        hash,
        author,
        date,
        subject,
        files,
        at_head,
    })
}

/// A diff's hunks: (old start, old count, new start, new count).
fn hunks(diff: &str) -> Vec<(u32, u32, u32, u32)> {
    diff.lines().filter_map(hunk).collect()
}

/// `@@ -a,b +c,d @@` (a count left out is 1).
fn hunk(line: &str) -> Option<(u32, u32, u32, u32)> {
    let rest = line.strip_prefix("@@ -")?;
    let (old, rest) = rest.split_once(" +")?;
    let new = rest.split_once(" @@")?.0;
    let range = |r: &str| -> Option<(u32, u32)> {
        match r.split_once(',') {
            Some((s, n)) => Some((s.parse().ok()?, n.parse().ok()?)),
            None => Some((r.parse().ok()?, 1)),
        }
    };
    let (a, b) = range(old)?;
    let (c, d) = range(new)?;
    Some((a, b, c, d))
}

/// Per file of a `-U0` diff (its new path), the first new line of each changed region (for a
/// region that only removed lines, the line after which it did; at least 1).
fn changed_lines(diff: &str) -> Vec<(String, Vec<u32>)> {
    let mut out: Vec<(String, Vec<u32>)> = Vec::new();
    for line in diff.lines() {
        if let Some(path) = line.strip_prefix("+++ b/") {
            out.push((path.to_string(), Vec::new()));
        } else if line.starts_with("+++ /dev/null") {
            out.push((String::new(), Vec::new()));
        } else if let Some((_, _, c, _)) = hunk(line)
            && let Some((_, starts)) = out.last_mut()
        {
            starts.push(c.max(1));
        }
    }
    out.retain(|(p, _)| !p.is_empty());
    out
}

/// Where line `line` of the old side is on the new side of a diff with these hunks; `None` when
/// the diff rewrote or removed it.
fn moved(line: u32, hunks: &[(u32, u32, u32, u32)]) -> Option<u32> {
    let mut delta: i64 = 0;
    for &(a, b, _, d) in hunks {
        if b == 0 {
            // Lines inserted after old line `a`.
            if line > a {
                delta += d as i64;
                continue;
            }
            break;
        }
        if line < a {
            break;
        }
        if line < a + b {
            return None;
        }
        delta += d as i64 - b as i64;
    }
    u32::try_from(line as i64 + delta).ok().filter(|l| *l > 0)
}

/// Whether `text` (a whole query) could name a commit: 7 to 40 hex digits with a digit among them
/// (`defaced` is a word), `HEAD`, `HEAD~N`, `HEAD^`, or a version tag (`v1.2.0`, `1.4`). Git
/// decides whether it does.
pub(crate) fn looks_like_rev(text: &str) -> bool {
    let t = text.trim();
    if t.is_empty() || t.contains(char::is_whitespace) {
        return false;
    }
    let hex = (7..=40).contains(&t.len())
        && t.chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        && t.chars().any(|c| c.is_ascii_digit());
    let head = t == "HEAD"
        || t.strip_prefix("HEAD~")
            .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        || t.strip_prefix("HEAD")
            .is_some_and(|r| !r.is_empty() && r.chars().all(|c| c == '^'));
    let version = {
        let v = t.strip_prefix('v').unwrap_or(t);
        v.contains('.')
            && v.split('.')
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
    };
    hex || head || version
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_look_like_revisions_and_words_do_not() {
        for rev in [
            "2819212f",
            "2819212fa3b4c5d6e7f80912a3b4c5d6e7f80912",
            "HEAD",
            "HEAD~3",
            "HEAD^^",
            "v1.2.0",
            "1.4",
        ] {
            assert!(looks_like_rev(rev), "{rev}");
        }
        for word in [
            "defaced",
            "parse_args",
            "abc",
            "how does it work",
            "HEAD~",
            "v1",
            "2819212F",
            "config.toml",
        ] {
            assert!(!looks_like_rev(word), "{word}");
        }
    }

    #[test]
    fn hunks_parse_with_and_without_counts() {
        assert_eq!(hunk("@@ -3,2 +4,5 @@ fn x()"), Some((3, 2, 4, 5)));
        assert_eq!(hunk("@@ -7 +7 @@"), Some((7, 1, 7, 1)));
        assert_eq!(hunk("@@ -10,0 +11,3 @@"), Some((10, 0, 11, 3)));
        assert_eq!(hunk("not a hunk"), None);
    }

    #[test]
    fn changed_lines_are_per_new_path_and_deleted_files_are_left_out() {
        let diff = "diff --git a/src/a.rs b/src/a.rs\n--- a/src/a.rs\n+++ b/src/a.rs\n@@ -3,2 +3,4 @@\n-x\n+y\n@@ -20,1 +22,0 @@\n-z\ndiff --git a/old.rs b/old.rs\n--- a/old.rs\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-a\n";
        assert_eq!(
            changed_lines(diff),
            vec![("src/a.rs".to_string(), vec![3, 22])]
        );
    }

    #[test]
    fn lines_move_with_the_edits_made_since_and_rewritten_ones_drop() {
        // Since the commit: 2 lines inserted after line 5, lines 10-11 rewritten as 3 lines.
        let h = [(5, 0, 6, 2), (10, 2, 12, 3)];
        assert_eq!(moved(3, &h), Some(3));
        assert_eq!(moved(6, &h), Some(8));
        assert_eq!(moved(10, &h), None);
        assert_eq!(moved(11, &h), None);
        assert_eq!(moved(12, &h), Some(15));
        assert_eq!(moved(4, &[]), Some(4));
    }
}
