//! Pure pieces of the ranking pipeline's stages that are not a rule of their own: where the
//! second-stage dependency oracle starts walking from. The pipeline that orders the stages is the
//! daemon's (`daemon/src/query/pipeline.rs`); what a stage needs from the stores is handed in.

use std::hash::Hash;

use patina_core::OracleId;

use crate::QueryPlan;
use crate::fusion::{Fused, Fusion, Ranking, fuse};
use crate::rank::{self, RankOptions};

/// The dependency oracle's seeds: the first fusion's strongest hits (`fused`, best first) that the
/// relevance floor keeps — the neighbours of a weak semantic guess are no better — among what the
/// question matched in the code, at most `take`, each with its fused score. `walkable` says which
/// keys the graph knows (chunks, not notes).
///
/// The history oracles' votes (files that past commits touched) are no such match: when they
/// voted, the seeds come from a fusion without them. Seeded by them, the graph gave a
/// tie-breaking vote a second say (swebench-pytest 5413: the file history lifted became the
/// graph's own first place too).
pub fn graph_seeds<K: Clone + Eq + Hash + Ord>(
    rankings: &[Ranking<K>],
    fused: &[Fused<K>],
    plan: &QueryPlan,
    ranking: &RankOptions,
    fusion: Fusion,
    take: usize,
    walkable: impl Fn(&K) -> bool,
) -> Vec<(K, f64)> {
    let votes_only = |o: OracleId| matches!(o, OracleId::History | OracleId::Cochange);
    let matched_fusion;
    let seed_source: &[Fused<K>] = if rankings
        .iter()
        .any(|r| votes_only(r.oracle) && !r.items.is_empty())
    {
        let matched: Vec<Ranking<K>> = rankings
            .iter()
            .filter(|r| !votes_only(r.oracle))
            .map(|r| Ranking {
                oracle: r.oracle,
                weight: r.weight,
                items: r.items.clone(),
            })
            .collect();
        matched_fusion = fuse(&matched, fusion);
        &matched_fusion
    } else {
        fused
    };
    let exact = seed_source
        .iter()
        .any(|f| f.provenance.iter().any(|p| p.oracle != rank::SEMANTIC));
    let exact_ran = rankings.iter().any(|r| r.oracle != rank::SEMANTIC);
    let floor = if exact_ran && !exact && plan.intent == crate::Intent::Identifier {
        ranking.unmatched_floor
    } else {
        ranking.semantic_floor
    };
    seed_source
        .iter()
        .filter(|f| walkable(&f.key))
        .filter(|f| !ranking.enabled || rank::above_floor(&f.provenance, floor))
        .take(take)
        .map(|f| (f.key.clone(), f.score))
        .collect()
}
