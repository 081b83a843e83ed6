//! The repository's memory as the daemon serves it: the commit history of each repository brought
//! to its current HEAD (`git rev-list`, `git log` of the commits not stored yet), `Search`-like
//! answers over it (`History.Log`: matching commits, the commits that shaped a file) and co-change
//! (`History.Related`). The history index itself is `patina_index::history`; this module adds git
//! and the requests. Blocking: call it on the blocking pool.

use std::collections::HashMap;
use std::sync::Arc;

use anyhow::Result;
use patina_core::PathFilter;
use patina_index::history::{CoChange, HistoryView, co_changes, parse_log};

use crate::state::config::HistoryConfig;
use crate::state::repo::Repo;
use patina_core::UserError;

/// Bring `repo`'s history view to the commit HEAD names now (cheap when it is there already:
/// HEAD is read from the git directory). Commits after a checked-out older commit are not
/// reachable, so they leave the view; commits never seen are read with `git log`.
pub(crate) fn sync(repo: &Repo) -> Result<Arc<HistoryView>> {
    let root = repo.root().to_path_buf();
    let head = crate::services::git::head(&root);
    let at = head.clone().unwrap_or_default();
    let before = repo.history().view();
    let view = repo.history().sync(
        head,
        || {
            crate::services::git::rev_list(&root, &at)
                .ok_or_else(|| anyhow::anyhow!("git rev-list {at} failed in {}", root.display()))
        },
        |missing| {
            let t0 = std::time::Instant::now();
            let commits = parse_log(&crate::services::git::log_commits(&root, missing)?);
            tracing::info!(
                repo = %repo.id(),
                commits = commits.len(),
                ms = t0.elapsed().as_millis() as u64,
                "history: commits indexed"
            );
            Ok(commits)
        },
    )?;
    if before.head != view.head {
        // Answers of the history oracles may change: cached ones must not be served. (The same
        // HEAD read back after a release is the same history.)
        repo.changed(crate::state::generations::Input::History);
    }
    Ok(view)
}

/// The view of the current HEAD, or the last one synced (with a warning) when git fails.
pub(crate) fn current(repo: &Repo) -> Arc<HistoryView> {
    repo.history().touch();
    match sync(repo) {
        Ok(v) => v,
        Err(e) => {
            tracing::warn!(repo = %repo.id(), "history: {e:#}");
            repo.history().view()
        }
    }
}

/// Drop `repo`'s history from memory when it has been unused for
/// [`crate::state::config::idle_release`], and its commit-message vectors with it (the caller checked
/// that none wait to be embedded). Whether the history went.
pub(crate) fn release_idle(repo: &Repo) -> bool {
    if !repo
        .history()
        .release_idle(crate::state::config::idle_release())
    {
        return false;
    }
    repo.messages().release();
    true
}

#[derive(Clone, Debug, Default)]
pub(crate) struct LogRequest {
    pub query: String,
    pub file: String,
    pub globs: Vec<String>,
    /// Committer time lower bound (seconds since the epoch).
    pub since: Option<i64>,
    pub limit: usize,
}

pub(crate) struct LogEntry {
    pub repo: Arc<Repo>,
    pub commit: patina_index::history::ViewCommit,
    pub score: f64,
}

/// `YYYY-MM-DD` (UTC midnight) or `N` days before now (`30d`, `30`) as seconds since the epoch.
pub(crate) fn parse_since(s: &str) -> Result<Option<i64>> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(None);
    }
    let bad = || {
        UserError::Invalid(format!(
            "invalid date '{s}' (expected YYYY-MM-DD or N days, e.g. 30d)"
        ))
    };
    if let Ok(days) = s.trim_end_matches('d').parse::<i64>() {
        return Ok(Some(
            crate::process::clock::now_unix_ms() / 1000 - days * 86_400,
        ));
    }
    let parts: Vec<&str> = s.split('-').collect();
    let [y, m, d] = parts.as_slice() else {
        return Err(bad().into());
    };
    let (Ok(y), Ok(m), Ok(d)) = (y.parse::<i64>(), m.parse::<i64>(), d.parse::<i64>()) else {
        return Err(bad().into());
    };
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return Err(bad().into());
    }
    Ok(Some(days_from_civil(y, m, d) * 86_400))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Matching commits of `repos`, most relevant first: by BM25 of the query over the messages, or
/// (no query, a file) by how much the commit was about the file (fewer files touched, newer).
pub(crate) fn log(
    repos: &[Arc<Repo>],
    req: &LogRequest,
    cfg: &HistoryConfig,
) -> Result<(Vec<LogEntry>, usize)> {
    let filter = if req.globs.iter().any(|g| !g.trim().is_empty()) {
        Some(PathFilter::new(&req.globs)?)
    } else {
        None
    };
    let limit = if req.limit == 0 {
        10
    } else {
        req.limit.min(1000)
    };
    let file = req.file.trim().trim_start_matches("./").to_string();
    let mut out = Vec::new();
    let mut searched = 0;
    for repo in repos {
        let view = current(repo);
        searched += view.len();
        // A commit the query names (`2819212f`, `HEAD~3`, a tag) is the answer, when HEAD reaches it.
        let named = crate::services::commits::resolve(repo.root(), &req.query)
            .and_then(|hash| view.commits.iter().position(|c| c.record.hash == hash));
        let candidates: Vec<(usize, f64)> = if let Some(i) = named {
            vec![(i, 1.0)]
        } else if !req.query.trim().is_empty() {
            view.search(&req.query, view.len(), 64)
        } else if !file.is_empty() {
            view.commits_of(&file)
                .iter()
                .map(|&i| {
                    let i = i as usize;
                    let n = view.commits[i].files.len().max(1) as f64;
                    let decay = if cfg.half_life_days > 0.0 {
                        0.5f64.powf(view.age_days(i) / cfg.half_life_days)
                    } else {
                        1.0
                    };
                    (i, (0.5 + 0.5 * decay) / n.sqrt())
                })
                .collect()
        } else {
            (0..view.len()).map(|i| (i, 0.0)).collect()
        };
        for (i, score) in candidates {
            let c = &view.commits[i];
            if !file.is_empty() && !c.files.contains(&file) {
                continue;
            }
            if let Some(f) = &filter
                && !c.files.iter().any(|p| f.matches(p))
            {
                continue;
            }
            if req.since.is_some_and(|s| c.record.time < s) {
                continue;
            }
            out.push(LogEntry {
                repo: repo.clone(),
                commit: c.clone(),
                score,
            });
        }
    }
    // Stable: equal scores keep each repository's (newest first) order.
    out.sort_by(|a, b| b.score.total_cmp(&a.score));
    out.truncate(limit);
    Ok((out, searched))
}

/// Files that change together with `path` in `repo`, and how many commits touched `path`.
pub(crate) fn related(
    repo: &Repo,
    path: &str,
    limit: usize,
    cfg: &HistoryConfig,
) -> (Vec<CoChange>, usize) {
    let view = current(repo);
    let path = path.trim().trim_start_matches("./");
    let commits = view
        .commits_of(path)
        .iter()
        .filter(|&&i| view.commits[i as usize].files.len() <= cfg.max_commit_files)
        .count();
    let mut r = co_changes(&view, path, cfg.max_commit_files, 1);
    r.truncate(if limit == 0 { 10 } else { limit.min(1000) });
    (r, commits)
}

/// The scope prior's evidence (`[history] scope_prior`): a question that starts like a
/// conventional commit (`sync: …`, [`patina_index::history::scope_of`]) is about the part of the
/// repository the past commits of that scope changed. Per repository in scope, each directory's
/// share of those commits (made before `before`) that touched a file directly in it; empty maps
/// when the question names no scope or no past commit has it. Blocking (may sync the view).
/// `patina_retrieve::priors::apply_scope_prior` applies it.
pub(crate) fn scope_shares(
    repos: &[Arc<Repo>],
    text: &str,
    before: Option<i64>,
    cfg: &HistoryConfig,
) -> Vec<HashMap<String, f64>> {
    let Some(scope) = patina_index::history::scope_of(text) else {
        return vec![Default::default(); repos.len()];
    };
    repos
        .iter()
        .map(|r| current(r).scope_dirs(&scope, before, cfg.max_commit_files))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_dates() {
        assert_eq!(parse_since("").unwrap(), None);
        assert_eq!(parse_since("1970-01-02").unwrap(), Some(86_400));
        assert_eq!(parse_since("2024-03-01").unwrap(), Some(1_709_251_200));
        assert!(parse_since("2024-13-01").is_err());
        assert!(parse_since("yesterday").is_err());
        let d = parse_since("30d").unwrap().unwrap();
        assert!((crate::process::clock::now_unix_ms() / 1000 - d - 30 * 86_400).abs() < 5);
    }
}
