//! Priors from a repository's history, applied to ranked candidates after the ranking rules: each
//! a bounded factor on a file's results, then a re-sort. The daemon computes the evidence (a file's
//! recent activity, the directories a commit scope changed, the history oracle's votes) from its
//! history view; the arithmetic is here, over any candidate key.

use std::collections::HashMap;

use patina_core::OracleId;

use crate::fusion::Ranking;
use crate::query::{Intent, QueryPlan};
use crate::rank::Scored;

/// A file's key in the priors' maps: (repository index in the query's scope, path).
pub type FileKey = (usize, String);

/// The recency/churn prior's factor for a file of recency-weighted churn `activity`: between 1
/// (never changed) and 1 + `strength` (changed very often, lately).
pub fn recency_factor(activity: f64, strength: f64) -> f64 {
    1.0 + strength * activity / (activity + 1.0)
}

/// Whether the recency/churn prior applies to a query: not to one that names an identifier, a
/// path or a stack frame (it knows what it wants; recency would only blur it).
pub fn recency_applies(plan: &QueryPlan) -> bool {
    plan.intent != Intent::Identifier
        && plan.identifiers.is_empty()
        && plan.paths.is_empty()
        && plan.frames.is_empty()
}

/// Multiply each result by its file's factor (`factor(repository index, path)`, asked once per
/// file), then re-sort. Results without a file keep their score.
pub fn apply_file_factor<K>(scored: &mut [Scored<K>], mut factor: impl FnMut(usize, &str) -> f64) {
    let mut cache: HashMap<FileKey, f64> = HashMap::new();
    for s in scored.iter_mut() {
        let Some((ri, path)) = &s.candidate.file else {
            continue;
        };
        let f = *cache
            .entry((*ri, path.clone()))
            .or_insert_with(|| factor(*ri, path));
        s.score *= f;
    }
    scored.sort_by(|a, b| b.score.total_cmp(&a.score));
}

/// The directory of a repository-relative path (`""` at the root).
pub fn dir_of(path: &str) -> &str {
    path.rfind('/').map_or("", |i| &path[..i])
}

/// The history oracle's votes per file, taken from its ranking (every voted file, best first;
/// `file_of` names a key's file), which is then cut to its best `files` for the fusion: its long
/// tail is noise as a ranking of its own, but still evidence among files others found
/// ([`apply_vote_prior`]).
pub fn split_votes<K>(
    rankings: &mut [Ranking<K>],
    files: usize,
    file_of: impl Fn(&K) -> Option<FileKey>,
) -> HashMap<FileKey, f64> {
    let mut votes = HashMap::new();
    for r in rankings.iter_mut() {
        if r.oracle != OracleId::History {
            continue;
        }
        for (key, score) in &r.items {
            if let Some(file) = file_of(key) {
                votes.entry(file).or_insert(*score as f64);
            }
        }
        r.items.truncate(files.max(1));
    }
    votes
}

/// The scope prior: each result × 1 + `strength` × its directory's share of the commits of the
/// question's scope (`shares`, per repository: directory → share), re-sorted. No scope changes
/// nothing.
pub fn apply_scope_prior<K>(
    scored: &mut [Scored<K>],
    shares: &[HashMap<String, f64>],
    strength: f64,
) {
    if strength <= 0.0 || shares.iter().all(|s| s.is_empty()) {
        return;
    }
    for s in scored.iter_mut() {
        let Some((ri, path)) = &s.candidate.file else {
            continue;
        };
        if let Some(share) = shares.get(*ri).and_then(|m| m.get(dir_of(path))) {
            s.score *= 1.0 + strength * share;
        }
    }
    scored.sort_by(|a, b| b.score.total_cmp(&a.score));
}

/// The history oracle's votes as evidence among the candidates the others found (0 = off): every
/// result of a file the matching commits voted for is multiplied by 1 + `strength` × its vote /
/// the best vote, and the results re-sorted. A bounded factor like the ranking rules: it reorders
/// files the words already found (a file changed by similar past commits rises among them) and
/// adds none, where the oracle's own ranking brings in files no other oracle found.
pub fn apply_vote_prior<K>(scored: &mut [Scored<K>], votes: &HashMap<FileKey, f64>, strength: f64) {
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
        assert!(recency_applies(&QueryPlan::analyze(
            "how are retries scheduled after a timeout"
        )));
        assert!(!recency_applies(&QueryPlan::analyze("parse_args")));
        assert!(!recency_applies(&QueryPlan::analyze(
            "what does src/config.py do"
        )));
    }

    #[test]
    fn directories_of_paths() {
        assert_eq!(dir_of("a/b/c.rs"), "a/b");
        assert_eq!(dir_of("c.rs"), "");
    }

    #[test]
    fn votes_are_split_from_the_history_ranking_which_is_cut() {
        let mut rankings = vec![
            Ranking {
                oracle: OracleId::History,
                weight: 1.0,
                items: vec![(1u32, 0.9), (2, 0.5), (3, 0.1)],
            },
            Ranking {
                oracle: OracleId::Lexical,
                weight: 1.0,
                items: vec![(7u32, 3.0)],
            },
        ];
        let votes = split_votes(&mut rankings, 1, |k| {
            (*k != 3).then(|| (0, format!("f{k}.rs")))
        });
        assert_eq!(votes.len(), 2);
        assert!((votes[&(0, "f1.rs".to_string())] - 0.9).abs() < 1e-6);
        assert_eq!(
            rankings[0].items.len(),
            1,
            "the history ranking is cut to its best files"
        );
        assert_eq!(rankings[1].items.len(), 1, "other rankings are left alone");
    }
}
