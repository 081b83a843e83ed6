//! The history priors as the engine applies them to a ranking: the recency/churn prior (files'
//! activity at HEAD, from `crate::services::history`) and the history oracle's votes per file.
//! The formulas are `patina_retrieve::priors`'; this module brings each repository's history to
//! them. Services know nothing of rankings; the ranking stages live here, in `query/`.

use std::collections::HashMap;
use std::sync::Arc;

use patina_index::history::HistoryView;
use patina_retrieve::fusion::Ranking;
use patina_retrieve::priors;
use patina_retrieve::rank::Scored;

use crate::services::history::current;
use crate::state::config::HistoryConfig;
use crate::state::repo::Repo;

/// The recency/churn prior (`[history] recency_prior`, off at 0): each file's results are
/// multiplied by [`priors::recency_factor`] of its activity at HEAD and re-sorted. Blocking (may
/// sync the history view).
pub(crate) fn apply_recency_prior<K>(
    scored: &mut [Scored<K>],
    repos: &[Arc<Repo>],
    plan: &patina_retrieve::QueryPlan,
    cfg: &HistoryConfig,
) {
    if cfg.recency_prior <= 0.0 || !priors::recency_applies(plan) {
        return;
    }
    let views: Vec<Arc<HistoryView>> = repos.iter().map(|r| current(r)).collect();
    priors::apply_file_factor(scored, |ri, path| {
        let a = views[ri].activity(path, cfg.recency_half_life_days, cfg.max_commit_files);
        priors::recency_factor(a, cfg.recency_prior)
    });
}

/// The history oracle's votes per file ([`priors::split_votes`]) over chunk keys: `chunk_of`
/// names a key's (repository index, chunk id).
pub(crate) fn split_votes<K>(
    rankings: &mut [Ranking<K>],
    repos: &[Arc<Repo>],
    files: usize,
    chunk_of: impl Fn(&K) -> Option<(usize, u64)>,
) -> HashMap<priors::FileKey, f64> {
    priors::split_votes(rankings, files, |key| {
        let (repo, chunk) = chunk_of(key)?;
        repos[repo].chunk(chunk).map(|m| (repo, m.path.to_string()))
    })
}
