//! Weighted Reciprocal Rank Fusion: `score(d) = Σ_o w_o / (k + rank_o(d))`, ranks 1-based.
//! Rank-based, so oracles with incomparable scores (BM25, cosine, exact-match) fuse fairly.

use std::collections::HashMap;
use std::hash::Hash;

pub use patina_core::OracleId;

/// One oracle's contribution to a fused result.
#[derive(Clone, Debug, PartialEq)]
pub struct Contribution {
    pub oracle: OracleId,
    pub rank: u32,
    pub score: f32,
}

#[derive(Clone, Debug)]
pub struct Fused<K> {
    pub key: K,
    pub score: f64,
    pub provenance: Vec<Contribution>,
}

/// A ranked list from one oracle: keys best first, with the oracle's own scores.
pub struct Ranking<K> {
    pub oracle: OracleId,
    pub weight: f64,
    pub items: Vec<(K, f32)>,
}

/// Fuse rankings; ties break on the best single rank, then on key order, so output is deterministic.
pub fn rrf<K: Clone + Eq + Hash + Ord>(rankings: &[Ranking<K>], k: f64) -> Vec<Fused<K>> {
    let mut acc: HashMap<K, Fused<K>> = HashMap::new();
    for r in rankings {
        for (i, (key, score)) in r.items.iter().enumerate() {
            let rank = i as u32 + 1;
            let e = acc.entry(key.clone()).or_insert_with(|| Fused {
                key: key.clone(),
                score: 0.0,
                provenance: Vec::new(),
            });
            e.score += r.weight / (k + rank as f64);
            e.provenance.push(Contribution {
                oracle: r.oracle,
                rank,
                score: *score,
            });
        }
    }
    let mut out: Vec<Fused<K>> = acc.into_values().collect();
    let best_rank = |f: &Fused<K>| {
        f.provenance
            .iter()
            .map(|c| c.rank)
            .min()
            .unwrap_or(u32::MAX)
    };
    out.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(best_rank(a).cmp(&best_rank(b)))
            .then(a.key.cmp(&b.key))
    });
    out
}

/// The configured weight of each oracle in the fusion (the daemon's `[retrieval]` settings, or a
/// tuned repository's).
pub trait Weights {
    /// The weight of `oracle`'s ranking.
    fn weight(&self, oracle: OracleId) -> f64;
    /// The weight of `oracle`'s ranking for a prose question whose best semantic hit scored
    /// `best` (how sure the model is that it recognised the question).
    fn prose_weight_at(&self, oracle: OracleId, best: f32) -> f64;
}

/// The fusion weights of one query from each oracle's configured weight: a report's symbol weight
/// is shared among the names it mentions; a prose question (`prose`) weighs the words by how sure
/// the model is, unless the best lexical chunk holds every word (`recognised`). `patina tune`
/// replays it with other weights.
pub fn adjust_weights<K>(
    rankings: &mut [Ranking<K>],
    cfg: &impl Weights,
    plan: &crate::QueryPlan,
    prose: bool,
    recognised: bool,
) {
    for r in rankings.iter_mut() {
        r.weight = cfg.weight(r.oracle);
    }
    // A report names many things (its author's tests, variables, other modules): the symbol
    // oracle's evidence of "the query names this" is shared among all the names it mentions.
    let shared = plan.names_shared_by() as f64;
    for r in rankings.iter_mut() {
        if r.oracle == OracleId::Symbol {
            r.weight /= shared;
        }
    }
    if prose {
        // How sure the model is that it recognised the question decides how much its words
        // count beside its meaning ([`Weights::prose_weight_at`]).
        let best = rankings
            .iter()
            .find(|r| r.oracle == OracleId::Semantic)
            .and_then(|r| r.items.first())
            .map_or(0.0, |i| i.1);
        // ...unless the best lexical hit contains every word of the question: then BM25 has
        // recognised it as surely as any model ([`crate::confidence`]).
        for r in rankings.iter_mut() {
            if r.oracle == OracleId::Symbol || recognised && r.oracle == OracleId::Lexical {
                continue;
            }
            r.weight = cfg.prose_weight_at(r.oracle, best);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranking(oracle: OracleId, weight: f64, keys: &[u32]) -> Ranking<u32> {
        Ranking {
            oracle,
            weight,
            items: keys.iter().map(|&k| (k, 0.0)).collect(),
        }
    }

    #[test]
    fn agreement_beats_a_single_first_place() {
        let fused = rrf(
            &[
                ranking(OracleId::Lexical, 1.0, &[1, 2, 3]),
                ranking(OracleId::Semantic, 1.0, &[2, 3, 1]),
            ],
            60.0,
        );
        assert_eq!(fused[0].key, 2);
        assert_eq!(fused[0].provenance.len(), 2);
        let expected = 1.0 / 62.0 + 1.0 / 61.0;
        assert!((fused[0].score - expected).abs() < 1e-12);
    }

    #[test]
    fn weights_scale_contributions() {
        let fused = rrf(
            &[
                ranking(OracleId::Lexical, 1.0, &[1]),
                ranking(OracleId::Semantic, 1.5, &[2]),
            ],
            60.0,
        );
        assert_eq!(fused[0].key, 2);
        assert_eq!(fused[1].key, 1);
    }

    #[test]
    fn empty_and_disjoint_inputs() {
        assert!(rrf::<u32>(&[], 60.0).is_empty());
        let fused = rrf(
            &[
                ranking(OracleId::Lexical, 1.0, &[5, 4]),
                ranking(OracleId::Semantic, 1.0, &[]),
            ],
            60.0,
        );
        assert_eq!(fused.iter().map(|f| f.key).collect::<Vec<_>>(), [5, 4]);
    }
}
