//! The history oracle: BM25 over the messages of the commits reachable from HEAD; the best matching
//! commits vote for the files they touched (by match, decayed by age, commits touching many files
//! left out: `patina_index::history::votes`), and each voted file is represented by its chunk that
//! best matches the query lexically (its first chunk when none does), so the file-level fusion
//! lifts the file. Its ranking holds every voted file: the query engine fuses the best `[history]
//! files` of them and hands all the votes to the vote prior (`crate::query::priors::split_votes`).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use anyhow::Result;
use patina_core::OracleId;
use patina_core::tokens::query_terms;
use patina_index::history::{VoteOptions, co_changes, votes};

use super::lexical::counted_terms;
use super::{HitKey, Oracle, OracleHit, OracleQuery, merge_by_score};
use crate::state::config::HistoryConfig;

/// With the model on, commits are matched by BM25 and by their messages' embeddings
/// (`crate::state::messages`), fused by rank.
pub(crate) struct HistoryOracle(
    pub HistoryConfig,
    pub Arc<crate::services::embedding::Semantic>,
);

impl Oracle for HistoryOracle {
    fn id(&self) -> OracleId {
        OracleId::History
    }

    fn search(&self, q: &OracleQuery) -> Result<Vec<OracleHit>> {
        let opts = VoteOptions {
            half_life_days: self.0.half_life_days,
            max_files: self.0.max_commit_files,
            now: q.history_before,
        };
        let mut hits = Vec::new();
        for (ri, repo) in q.repos.iter().enumerate() {
            let view = crate::services::history::current(repo);
            if view.is_empty() {
                continue;
            }
            // Commit messages are prose: a long text (an issue) is matched by its prose, not by
            // its logs, version lists and code blocks, whose names match commits by accident.
            let text = if q.plan.long {
                &q.plan.semantic_text
            } else {
                &q.text
            };
            let mut matches = view.search_before(text, self.0.commits, 64, q.history_before);
            if self.1.is_on()
                && let Err(e) = self.1.restore_messages(repo, &view)
            {
                tracing::warn!(repo = %repo.id(), "history: reading message vectors back: {e:#}");
            }
            if self.1.is_on()
                && repo.messages().len() > 0
                && let Ok(qv) = self.1.embed_query(&q.plan.semantic_text)
            {
                let hashes = view
                    .commits
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| q.history_before.is_none_or(|b| c.record.time < b))
                    .map(|(i, c)| (i, c.record.hash.as_str()));
                let mut dense = repo.messages().nearest(&qv, hashes, self.0.commits);
                dense.retain(|d| d.1 >= self.0.message_floor);
                matches = crate::state::messages::fuse(&matches, &dense, self.0.commits);
            }
            let mut voted = votes(&view, &matches, &opts);
            // Every voted file (the vote prior weighs them all); the fusion takes the first
            // `[history] files` of them (`crate::query::priors::split_votes`).
            voted.truncate(q.limit);
            if voted.is_empty() {
                continue;
            }
            let weight: HashMap<&str, f64> = voted.iter().map(|(f, v)| (f.as_str(), *v)).collect();
            // The voted files' chunks that pass the query's filters: (first chunk, all chunks).
            let files: HashMap<String, (u64, u32)> = repo.with_chunks(|chunks| {
                let mut first: HashMap<String, (u64, u32)> = HashMap::new();
                for (id, m) in chunks {
                    if !weight.contains_key(&*m.path)
                        || q.filter.as_ref().is_some_and(|f| !f.allows(m))
                    {
                        continue;
                    }
                    let e = first
                        .entry(m.path.to_string())
                        .or_insert((*id, m.start_line));
                    if (m.start_line, *id) < (e.1, e.0) {
                        *e = (*id, m.start_line);
                    }
                }
                first
            });
            if files.is_empty() {
                continue;
            }
            let ids: HashSet<u64> = repo.with_chunks(|chunks| {
                chunks
                    .iter()
                    .filter(|(_, m)| {
                        files.contains_key(&*m.path)
                            && q.filter.as_ref().is_none_or(|f| f.allows(m))
                    })
                    .map(|(id, _)| *id)
                    .collect()
            });
            let terms: Vec<(String, f32)> = if q.plan.long {
                repo.lexical().select_terms(&counted_terms(&q.text), 64)?
            } else {
                query_terms(&q.text, 64)
                    .into_iter()
                    .map(|t| (t, 1.0))
                    .collect()
            };
            let n = ids.len();
            let allow = Arc::new(move |id: u64| ids.contains(&id));
            let mut best: HashMap<String, u64> = HashMap::new();
            for (id, _) in repo.lexical().search(&terms, n, Some(allow))? {
                if let Some(m) = repo.chunk(id) {
                    best.entry(m.path.to_string()).or_insert(id);
                }
            }
            for (path, (first, _)) in &files {
                let chunk = best.get(path).copied().unwrap_or(*first);
                hits.push(OracleHit::chunk(ri, chunk, weight[path.as_str()] as f32));
            }
        }
        Ok(merge_by_score(hits, q.limit))
    }
}

/// The co-change oracle. It ranks after the others: [`cochange_lift`] takes the strongest fused
/// files as seeds and ranks the files that change together with them. Its first-stage search
/// finds nothing; the query engine runs the lift when the oracle is selected.
pub(crate) struct CochangeOracle;

impl Oracle for CochangeOracle {
    fn id(&self) -> OracleId {
        OracleId::Cochange
    }

    fn search(&self, _q: &OracleQuery) -> Result<Vec<OracleHit>> {
        Ok(Vec::new())
    }
}

/// Co-change partners of the best `cfg.cochange_seeds` files of `fused` (keys best first): each
/// partner scores `confidence / seed rank` summed over the seeds it changes with (at least
/// `cochange_min_support` shared commits, commits of at most `max_commit_files` files), and is
/// represented by its best fused chunk, else its first chunk that passes the query's filter. Seeds
/// themselves are not ranked.
pub(crate) fn cochange_lift(
    fused: &[HitKey],
    q: &OracleQuery,
    cfg: &HistoryConfig,
) -> Vec<OracleHit> {
    // Seeds: distinct files in fused order.
    let mut seeds: Vec<(usize, String)> = Vec::new();
    let mut fused_chunk: HashMap<(usize, String), u64> = HashMap::new();
    for key in fused {
        let HitKey::Chunk { repo, chunk } = *key else {
            continue;
        };
        let Some(m) = q.repos[repo].chunk(chunk) else {
            continue;
        };
        let f = (repo, m.path.to_string());
        if !fused_chunk.contains_key(&f) {
            fused_chunk.insert(f.clone(), chunk);
            if seeds.len() < cfg.cochange_seeds {
                seeds.push(f);
            }
        }
    }
    let mut score: HashMap<(usize, String), f64> = HashMap::new();
    for (rank, (ri, path)) in seeds.iter().enumerate() {
        let view = crate::services::history::current(&q.repos[*ri]);
        for c in co_changes(&view, path, cfg.max_commit_files, cfg.cochange_min_support) {
            if seeds.iter().any(|s| s.0 == *ri && s.1 == c.path) {
                continue;
            }
            *score.entry((*ri, c.path)).or_default() += c.confidence / (rank + 1) as f64;
        }
    }
    let mut hits = Vec::new();
    for ((ri, path), s) in score {
        let chunk = fused_chunk.get(&(ri, path.clone())).copied().or_else(|| {
            q.repos[ri].with_chunks(|chunks| {
                chunks
                    .iter()
                    .filter(|(_, m)| {
                        *m.path == *path && q.filter.as_ref().is_none_or(|f| f.allows(m))
                    })
                    .min_by_key(|(id, m)| (m.start_line, **id))
                    .map(|(id, _)| *id)
            })
        });
        if let Some(chunk) = chunk {
            hits.push(OracleHit::chunk(ri, chunk, s as f32));
        }
    }
    merge_by_score(hits, q.limit)
}
