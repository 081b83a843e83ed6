//! The repository's memory as the daemon serves it: the commit history of each repository brought
//! to its current HEAD (`git rev-list`, `git log` of the commits not stored yet), `Search`-like
//! answers over it (`History.Log`: matching commits, the commits that shaped a file) and co-change
//! (`History.Related`). The history index itself is `patina_index::history`; this module adds git
//! and the requests. Blocking: call it on the blocking pool.

use std::sync::Arc;

use anyhow::Result;
use patina_core::PathFilter;
use patina_index::history::{CoChange, HistoryView, co_changes, parse_log};

use crate::config::HistoryConfig;
use crate::registry::UserError;
use crate::repo::Repo;

/// Bring `repo`'s history view to the commit HEAD names now (cheap when it is there already:
/// HEAD is read from the git directory). Commits after a checked-out older commit are not
/// reachable, so they leave the view; commits never seen are read with `git log`.
pub(crate) fn sync(repo: &Repo) -> Result<Arc<HistoryView>> {
    let root = repo.root().to_path_buf();
    let head = crate::git::head(&root);
    let at = head.clone().unwrap_or_default();
    let before = repo.history().view();
    let view = repo.history().sync(
        head,
        || {
            crate::git::rev_list(&root, &at)
                .ok_or_else(|| anyhow::anyhow!("git rev-list {at} failed in {}", root.display()))
        },
        |missing| {
            let t0 = std::time::Instant::now();
            let commits = parse_log(&crate::git::log_commits(&root, missing)?);
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
        repo.bump_generation();
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
/// [`crate::registry::idle_release`], and its commit-message vectors with it (the caller checked
/// that none wait to be embedded). Whether the history went.
pub(crate) fn release_idle(repo: &Repo) -> bool {
    if !repo.history().release_idle(crate::registry::idle_release()) {
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
        return Ok(Some(crate::now_unix_ms() / 1000 - days * 86_400));
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
        let candidates: Vec<(usize, f64)> = if !req.query.trim().is_empty() {
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

/// The recency/churn prior's factor for a file of recency-weighted churn `activity`: between 1
/// (never changed) and 1 + `strength` (changed very often, lately).
pub(crate) fn recency_factor(activity: f64, strength: f64) -> f64 {
    1.0 + strength * activity / (activity + 1.0)
}

/// Whether the recency/churn prior applies to a query: not to one that names an identifier, a
/// path or a stack frame (it knows what it wants; recency would only blur it).
pub(crate) fn recency_applies(plan: &patina_retrieve::QueryPlan) -> bool {
    plan.intent != patina_retrieve::Intent::Identifier
        && plan.identifiers.is_empty()
        && plan.paths.is_empty()
        && plan.frames.is_empty()
}

/// The recency/churn prior (`[history] recency_prior`, off at 0): each file's results are
/// multiplied by [`recency_factor`] of its activity at HEAD and re-sorted. Blocking (may sync the
/// history view).
pub(crate) fn apply_recency_prior(
    scored: &mut [patina_retrieve::rank::Scored<crate::oracles::HitKey>],
    repos: &[Arc<Repo>],
    plan: &patina_retrieve::QueryPlan,
    cfg: &HistoryConfig,
) {
    if cfg.recency_prior <= 0.0 || !recency_applies(plan) {
        return;
    }
    let views: Vec<Arc<HistoryView>> = repos.iter().map(|r| current(r)).collect();
    let mut cache: std::collections::HashMap<(usize, String), f64> = Default::default();
    for s in scored.iter_mut() {
        let Some((ri, path)) = &s.candidate.file else {
            continue;
        };
        let f = *cache.entry((*ri, path.clone())).or_insert_with(|| {
            let a = views[*ri].activity(path, cfg.recency_half_life_days, cfg.max_commit_files);
            recency_factor(a, cfg.recency_prior)
        });
        s.score *= f;
    }
    scored.sort_by(|a, b| b.score.total_cmp(&a.score));
}

/// The history oracle's votes per file, `(repository index, path)` → vote, taken from its ranking
/// (every voted file, best first), which is then cut to its best `files` for the fusion: its long
/// tail is noise as a ranking of its own, but still evidence among files others found
/// ([`apply_vote_prior`]).
pub(crate) fn split_votes(
    rankings: &mut [patina_retrieve::fusion::Ranking<crate::oracles::HitKey>],
    repos: &[Arc<Repo>],
    files: usize,
) -> std::collections::HashMap<(usize, String), f64> {
    let mut votes = std::collections::HashMap::new();
    for r in rankings.iter_mut() {
        if r.oracle != patina_core::OracleId::History {
            continue;
        }
        for (key, score) in &r.items {
            if let crate::oracles::HitKey::Chunk { repo, chunk } = key
                && let Some(m) = repos[*repo].chunk(*chunk)
            {
                votes.entry((*repo, m.path)).or_insert(*score as f64);
            }
        }
        r.items.truncate(files.max(1));
    }
    votes
}

/// The scope prior's evidence (`[history] scope_prior`): a question that starts like a
/// conventional commit (`sync: …`, [`patina_index::history::scope_of`]) is about the part of the
/// repository the past commits of that scope changed. Per repository in scope, each directory's
/// share of those commits (made before `before`) that touched a file directly in it; empty maps
/// when the question names no scope or no past commit has it. Blocking (may sync the view).
pub(crate) fn scope_shares(
    repos: &[Arc<Repo>],
    text: &str,
    before: Option<i64>,
    cfg: &HistoryConfig,
) -> Vec<std::collections::HashMap<String, f64>> {
    let Some(scope) = patina_index::history::scope_of(text) else {
        return vec![Default::default(); repos.len()];
    };
    repos
        .iter()
        .map(|r| current(r).scope_dirs(&scope, before, cfg.max_commit_files))
        .collect()
}

/// The scope prior: each result × 1 + `strength` × its directory's share ([`scope_shares`]),
/// re-sorted. Learned from the repository's own history; no scope changes nothing. Pure.
pub(crate) fn apply_scope_prior(
    scored: &mut [patina_retrieve::rank::Scored<crate::oracles::HitKey>],
    shares: &[std::collections::HashMap<String, f64>],
    strength: f64,
) {
    if strength <= 0.0 || shares.iter().all(|s| s.is_empty()) {
        return;
    }
    for s in scored.iter_mut() {
        let Some((ri, path)) = &s.candidate.file else {
            continue;
        };
        if let Some(share) = shares
            .get(*ri)
            .and_then(|m| m.get(HistoryView::dir_of(path)))
        {
            s.score *= 1.0 + strength * share;
        }
    }
    scored.sort_by(|a, b| b.score.total_cmp(&a.score));
}

/// The history oracle's votes as evidence among the candidates the others found
/// (`[history] vote_prior`, 0 = off): every result of a file the matching commits voted for is
/// multiplied by 1 + `strength` × its vote / the best vote, and the results re-sorted. A bounded
/// factor like the ranking rules: it reorders files the words already found (a file changed by
/// similar past commits rises among them) and adds none, where the oracle's own ranking (fused at
/// `[retrieval.weights] history`) brings in files no other oracle found. Pure.
pub(crate) fn apply_vote_prior(
    scored: &mut [patina_retrieve::rank::Scored<crate::oracles::HitKey>],
    votes: &std::collections::HashMap<(usize, String), f64>,
    strength: f64,
) {
    let best = votes.values().fold(0.0f64, |a, b| a.max(*b));
    if strength <= 0.0 || best <= 0.0 {
        return;
    }
    for s in scored.iter_mut() {
        if let Some(v) = s.candidate.file.as_ref().and_then(|f| votes.get(f)) {
            s.score *= 1.0 + strength * v / best;
        }
    }
    scored.sort_by(|a, b| b.score.total_cmp(&a.score));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recency_factor_is_bounded_and_grows_with_activity() {
        assert_eq!(recency_factor(0.0, 0.2), 1.0);
        assert!((recency_factor(1.0, 0.2) - 1.1).abs() < 1e-12);
        assert!(recency_factor(1e9, 0.2) < 1.2);
        assert!(recency_factor(3.0, 0.2) > recency_factor(1.0, 0.2));
    }

    #[test]
    fn the_recency_prior_leaves_names_and_paths_alone() {
        use patina_retrieve::QueryPlan;
        assert!(recency_applies(&QueryPlan::analyze(
            "how are retries scheduled after a timeout"
        )));
        assert!(!recency_applies(&QueryPlan::analyze("parse_args")));
        assert!(!recency_applies(&QueryPlan::analyze(
            "what does src/config.py do"
        )));
    }

    #[test]
    fn since_dates() {
        assert_eq!(parse_since("").unwrap(), None);
        assert_eq!(parse_since("1970-01-02").unwrap(), Some(86_400));
        assert_eq!(parse_since("2024-03-01").unwrap(), Some(1_709_251_200));
        assert!(parse_since("2024-13-01").is_err());
        assert!(parse_since("yesterday").is_err());
        let d = parse_since("30d").unwrap().unwrap();
        assert!((crate::now_unix_ms() / 1000 - d - 30 * 86_400).abs() < 5);
    }
}
