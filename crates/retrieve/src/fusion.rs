//! Fusing the oracles' rankings into one, as weighted Reciprocal Rank Fusion over the places the
//! oracles give their hits: `score(d) = Σ_o w_o · (k + 1) / (k + place_o(d))`.
//!
//! A hit's place can be read two ways:
//! - by rank, as in plain RRF: the hit's position in the oracle's list. Oracles with
//!   incomparable scores fuse fairly, but a confident first place and a guess count the same: the
//!   runner-up of a clear winner gets second place as surely as the runner-up of a near tie, and
//!   a candidate two oracles both rank in the twenties beats one oracle's clear winner (the
//!   consensus bias).
//! - by score: where the hit would stand if the oracle's places were spread evenly over its
//!   scores for this query, from its best (place 1) to its score at rank `k` (place `depth`).
//!   Two hits scored nearly alike share nearly one place; a winner that stands far above the rest
//!   stands alone. The scores are normalised per query (min-max, as in the convex combinations
//!   of Bruch et al. 2023, "An Analysis of Fusion Functions for Hybrid Retrieval"), so BM25 and
//!   cosines need no common scale ([`score_evidence`]).
//!
//! [`Fusion::evidence`] is the share of the second reading. The daemon's defaults, `evidence` 0.5
//! and `depth` 120 (with `k` 60), were fitted leave-one-set-out over seven sets — CoSQA (Python
//! functions), questions about cobra (Go), flask (Python), ripgrep (Rust) and express (JS),
//! SWE-bench issues of pytest, tokio's commit messages — from a grid of shares 0–1 and depths
//! 30–240: with each set held out in turn the other six chose 0.5/120, except ripgrep's fold
//! (0.7/120). bench/RESULTS.md (eighteenth session) has the held-out figures. The result stays on RRF's scale
//! (a place between 1 and `depth`), which the ranking rules after fusion are built on: their
//! bounded factors keep their meaning, where a convex combination of normalised scores (tried:
//! bench/RESULTS.md, eighteenth session) let a document's clear BM25 win override a file's role.

use std::collections::HashMap;
use std::hash::Hash;

pub use patina_core::OracleId;

/// One oracle's contribution to a fused result.
#[derive(Clone, Debug, PartialEq)]
pub struct Contribution {
    pub oracle: OracleId,
    pub rank: u32,
    pub score: f32,
    /// The evidence (0..=1) its score alone gives, read against the oracle's other scores for
    /// the same query ([`score_evidence`]).
    pub score_evidence: f64,
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

/// How rankings become one ([`fuse`]): the `[retrieval]` settings `rrf_k`, `evidence` and
/// `evidence_depth`.
#[derive(Clone, Copy, Debug)]
pub struct Fusion {
    /// RRF's constant; also the rank whose score a relative scale is read against
    /// ([`score_evidence`]).
    pub k: f64,
    /// The share (0..=1) of a hit's place read from its score rather than its rank.
    pub evidence: f64,
    /// The place (≥ 1) a hit scored as the oracle's `k`-th takes when read by score.
    pub depth: f64,
}

impl Fusion {
    /// Plain RRF with constant `k`.
    pub fn rrf(k: f64) -> Fusion {
        Fusion {
            k,
            evidence: 0.0,
            depth: k,
        }
    }

    /// The place of a hit at `rank` whose score gives `evidence` (0..=1): `(1 - β) · rank +
    /// β · (1 + (1 - evidence) · (depth - 1))`.
    pub fn place(&self, rank: f64, evidence: f64) -> f64 {
        let beta = self.evidence.clamp(0.0, 1.0);
        let by_score = 1.0 + (1.0 - evidence) * (self.depth.max(1.0) - 1.0);
        (1.0 - beta) * rank + beta * by_score
    }

    /// The fused share of a hit at `place`, before its oracle's weight: `(k + 1) / (k + place)`,
    /// 1 for first place.
    pub fn share(&self, place: f64) -> f64 {
        (self.k + 1.0) / (self.k + place)
    }
}

/// Fuse `rankings`: `Σ_o w_o · (k + 1) / (k + place)` ([`Fusion::place`]), ties broken as in
/// [`rrf`]. Each contribution records its score's evidence.
pub fn fuse<K: Clone + Eq + Hash + Ord>(rankings: &[Ranking<K>], fusion: Fusion) -> Vec<Fused<K>> {
    let k = fusion.k;
    let mut acc: HashMap<K, Fused<K>> = HashMap::new();
    for r in rankings {
        let by_score = score_evidence(r, k);
        for (i, (key, score)) in r.items.iter().enumerate() {
            let rank = i as u32 + 1;
            let e = fusion.share(fusion.place(rank as f64, by_score[i]));
            let f = acc.entry(key.clone()).or_insert_with(|| Fused {
                key: key.clone(),
                score: 0.0,
                provenance: Vec::new(),
            });
            f.score += r.weight * e;
            f.provenance.push(Contribution {
                oracle: r.oracle,
                rank,
                score: *score,
                score_evidence: by_score[i],
            });
        }
    }
    sorted(acc)
}

/// How an oracle's scores read as evidence in [`score_evidence`].
enum Scale {
    /// No fixed range (BM25, cosines): a score means something only against the other scores of
    /// the same query.
    Relative,
    /// A strength of its own (an exact-name match, 1.0 for a definition of the very name asked;
    /// graph edges; commit votes): read against the best, not stretched.
    Absolute,
}

fn scale(oracle: OracleId) -> Scale {
    match oracle {
        OracleId::Lexical | OracleId::Semantic | OracleId::Session | OracleId::Org => {
            Scale::Relative
        }
        OracleId::Symbol | OracleId::Graph | OracleId::History | OracleId::Cochange => {
            Scale::Absolute
        }
    }
}

/// The evidence (0..=1) each of `r`'s hits carries by its score alone, against the oracle's best
/// score `s_1`:
/// - relative scales: min-max between that best and the oracle's score at rank `k` (or its last,
///   if it returned fewer), `(s - s_k) / (s_1 - s_k)`, clamped at 0. A clear winner keeps 1
///   while its runners-up fall towards 0; a flat list leaves many hits near 1 — nothing to tell
///   them apart, so the other oracles decide. Reading against rank `k` rather than the list's
///   last keeps the evidence independent of how many hits were asked for.
/// - absolute scales: `s / s_1`.
pub fn score_evidence<K>(r: &Ranking<K>, k: f64) -> Vec<f64> {
    let Some(best) = r.items.first().map(|i| i.1 as f64) else {
        return Vec::new();
    };
    let depth = (k.max(1.0) as usize).min(r.items.len());
    let floor = match scale(r.oracle) {
        Scale::Relative => r.items[depth - 1].1 as f64,
        Scale::Absolute => 0.0,
    };
    r.items
        .iter()
        .map(|(_, s)| {
            if best > floor {
                ((*s as f64 - floor) / (best - floor)).clamp(0.0, 1.0)
            } else {
                1.0
            }
        })
        .collect()
}

/// Weighted Reciprocal Rank Fusion, `Σ_o w_o / (k + rank)`: [`fuse`] without score evidence,
/// scaled by `1 / (k + 1)`.
pub fn rrf<K: Clone + Eq + Hash + Ord>(rankings: &[Ranking<K>], k: f64) -> Vec<Fused<K>> {
    let mut out = fuse(rankings, Fusion::rrf(k));
    for f in &mut out {
        f.score /= k + 1.0;
    }
    out
}

/// Best first; ties break on the best single rank, then on key order, so output is deterministic.
fn sorted<K: Clone + Eq + Hash + Ord>(acc: HashMap<K, Fused<K>>) -> Vec<Fused<K>> {
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

/// The configured fusion (the daemon's `[retrieval]` settings, or a tuned repository's).
pub trait Weights {
    /// The weight of `oracle`'s ranking.
    fn weight(&self, oracle: OracleId) -> f64;
    /// The weight of `oracle`'s ranking for a prose question the model surely recognised.
    fn prose_weight(&self, oracle: OracleId) -> f64;
    /// How sure (0..=1) the model is that it recognised a prose question whose best semantic hit
    /// scored `best`.
    fn sureness(&self, best: f32) -> f64;
    /// The fusion: RRF's `k` and how far places are read from scores.
    fn fusion(&self) -> Fusion;
    /// Whether a prose question's lexical weight is scaled by the share of its words the best
    /// lexical chunk holds ([`crate::confidence::coverage`]).
    fn lexical_by_coverage(&self) -> bool {
        false
    }
}

/// The fusion of one query from the configured one (returned), with each ranking's weight:
///
/// - With one ranking to fuse (one oracle asked, or only one that found anything) the places are
///   its ranks: there is nothing to weigh its scores against, and the ranking rules after fusion
///   were built on rank places.
/// - A report's symbol weight is shared among the names it mentions.
/// - A prose question (`prose`) weighs the words by how sure the model is that it recognised
///   the question, unless the best lexical chunk holds every word (`recognised`).
/// - With `lexical_by_coverage`, a prose question's lexical weight is also scaled by `coverage`,
///   the share of its content words the best lexical chunk holds: BM25 vouches for its ranking
///   as far as its best hit says what the question says. A best chunk holding half the words
///   (the others are the user's, not the code's: "output" for "sink") ranks chunks by the
///   words the question shares with the code everywhere, which is little evidence.
///
/// `patina tune` replays it with other settings.
pub fn adjust_weights<K>(
    rankings: &mut [Ranking<K>],
    cfg: &impl Weights,
    plan: &crate::QueryPlan,
    prose: bool,
    recognised: bool,
    coverage: f64,
) -> Fusion {
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
    let mut fusion = cfg.fusion();
    if rankings.iter().filter(|r| !r.items.is_empty()).count() <= 1 {
        fusion.evidence = 0.0;
    }
    if !prose {
        return fusion;
    }
    // How sure the model is that it recognised the question decides how much its words count
    // beside its meaning.
    let best = rankings
        .iter()
        .find(|r| r.oracle == OracleId::Semantic)
        .and_then(|r| r.items.first())
        .map_or(0.0, |i| i.1);
    let sure = cfg.sureness(best);
    // ...unless the best lexical hit contains every word of the question: then BM25 has
    // recognised it as surely as any model ([`crate::confidence`]).
    for r in rankings.iter_mut() {
        if r.oracle == OracleId::Symbol || recognised && r.oracle == OracleId::Lexical {
            continue;
        }
        let (w, p) = (cfg.weight(r.oracle), cfg.prose_weight(r.oracle));
        r.weight = w + sure * (p - w);
        // (A long text's words are too many for one chunk to hold them: no measure there.)
        if r.oracle == OracleId::Lexical && cfg.lexical_by_coverage() && !plan.long {
            r.weight *= coverage.clamp(0.0, 1.0);
        }
    }
    fusion
}

/// Lower the semantic ranking's weight for the share (`share`, 0..=1) of its leading hits that
/// are answered by static vectors — the table distilled from the model that stands in for the
/// model's vectors until its pass reaches them. Static vectors rank below the model's (semantic
/// nDCG@10 0.438 against 0.599 on CoSQA, lower on ten of eleven sets: bench/RESULTS.md,
/// twenty-first session), so that share counts `quality` (0..=1) of the weight: linear in the
/// share, the whole weight when every leading hit has the model's vector. Returns the factor the
/// weight was multiplied by.
pub fn weigh_static<K>(rankings: &mut [Ranking<K>], share: f64, quality: f64) -> f64 {
    let factor = 1.0 - share.clamp(0.0, 1.0) * (1.0 - quality.clamp(0.0, 1.0));
    for r in rankings
        .iter_mut()
        .filter(|r| r.oracle == OracleId::Semantic)
    {
        r.weight *= factor;
    }
    factor
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn static_vectors_lower_the_semantic_weight_in_proportion() {
        let mut rs = vec![
            ranking(OracleId::Lexical, 1.0, &[1]),
            ranking(OracleId::Semantic, 2.0, &[2]),
        ];
        assert_eq!(weigh_static(&mut rs, 0.0, 0.5), 1.0);
        assert_eq!(rs[1].weight, 2.0);
        assert_eq!(weigh_static(&mut rs, 1.0, 0.5), 0.5);
        assert_eq!((rs[0].weight, rs[1].weight), (1.0, 1.0));
        let f = weigh_static(&mut rs, 0.5, 0.5);
        assert!((f - 0.75).abs() < 1e-12 && (rs[1].weight - 0.75).abs() < 1e-12);
        // Quality 1 (or out of range above) leaves the weight alone.
        assert_eq!(weigh_static(&mut rs, 1.0, 1.5), 1.0);
    }

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

    fn scored(oracle: OracleId, items: &[(u32, f32)]) -> Ranking<u32> {
        Ranking {
            oracle,
            weight: 1.0,
            items: items.to_vec(),
        }
    }

    const BY_SCORE: Fusion = Fusion {
        k: 60.0,
        evidence: 1.0,
        depth: 60.0,
    };

    #[test]
    fn without_score_evidence_it_is_rrf_scaled() {
        let r = [
            scored(OracleId::Lexical, &[(1, 9.0), (2, 8.0), (3, 1.0)]),
            scored(OracleId::Semantic, &[(2, 0.7), (3, 0.6), (1, 0.5)]),
        ];
        let a = rrf(&r, 60.0);
        let b = fuse(&r, Fusion::rrf(60.0));
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.key, y.key);
            assert!((x.score * 61.0 - y.score).abs() < 1e-9);
        }
    }

    #[test]
    fn a_clear_winner_stands_alone_and_a_near_tie_shares_a_place() {
        // Lexical: 1 far above the rest. Semantic: 2 and 1 nearly tied, 3 far behind.
        let r = [
            scored(
                OracleId::Lexical,
                &[(1, 30.0), (2, 5.0), (3, 4.0), (4, 3.0)],
            ),
            scored(
                OracleId::Semantic,
                &[(2, 0.71), (1, 0.70), (3, 0.40), (4, 0.39)],
            ),
        ];
        // By rank, 1 and 2 have a first and a second place each: a tie broken by key.
        let by_rank = fuse(&r, Fusion::rrf(60.0));
        assert!((by_rank[0].score - by_rank[1].score).abs() < 1e-12);
        // By score, 1's clear lexical win outweighs 2's hair's-breadth semantic one.
        let by_score = fuse(&r, BY_SCORE);
        assert_eq!(by_score[0].key, 1);
        assert!(by_score[0].score > by_score[1].score + 0.1, "{by_score:?}");
        // And the contributions say why.
        let lex = by_score[0]
            .provenance
            .iter()
            .find(|c| c.oracle == OracleId::Lexical)
            .unwrap();
        assert_eq!(lex.score_evidence, 1.0);
    }

    #[test]
    fn score_evidence_is_read_against_rank_k_not_the_length_asked() {
        // The same top three, with a longer tail: the evidence of the top three is unchanged as
        // long as the list reaches rank k.
        let head: Vec<(u32, f32)> = (0..70).map(|i| (i, 100.0 - i as f32)).collect();
        let longer: Vec<(u32, f32)> = (0..200).map(|i| (i, 100.0 - i as f32)).collect();
        let a = score_evidence(&scored(OracleId::Lexical, &head), 60.0);
        let b = score_evidence(&scored(OracleId::Lexical, &longer), 60.0);
        assert_eq!(a[..60], b[..60]);
        assert_eq!(a[0], 1.0);
        assert_eq!(a[59], 0.0);
        assert_eq!(b[150], 0.0, "below rank k: no evidence, never negative");
    }

    #[test]
    fn absolute_scales_are_not_stretched() {
        // Two exact-name matches and a prefix match: the prefix keeps most of its evidence.
        let e = score_evidence(
            &scored(OracleId::Symbol, &[(1, 1.0), (2, 1.0), (3, 0.8)]),
            60.0,
        );
        assert_eq!(e, [1.0, 1.0, 0.800000011920929]);
        // A flat relative list: every hit as good as the best.
        let flat = score_evidence(&scored(OracleId::Semantic, &[(1, 0.5), (2, 0.5)]), 60.0);
        assert_eq!(flat, [1.0, 1.0]);
    }

    #[test]
    fn places_stay_on_rrf_scale() {
        // The place of any hit lies between 1 and the depth (or its rank), so the fused share of
        // one oracle stays between (k + 1) / (k + depth) and 1.
        for rank in [1.0, 2.0, 30.0, 200.0] {
            for e in [0.0, 0.3, 1.0] {
                let place = BY_SCORE.place(rank, e);
                assert!((1.0..=60.0).contains(&place), "{rank} {e} {place}");
                let half = Fusion {
                    evidence: 0.5,
                    ..BY_SCORE
                };
                let p = half.place(rank, e);
                assert!((p - (rank + place) / 2.0).abs() < 1e-9);
            }
        }
        assert_eq!(BY_SCORE.share(1.0), 1.0);
    }

    struct Cfg {
        by_coverage: bool,
    }

    impl Weights for Cfg {
        fn weight(&self, oracle: OracleId) -> f64 {
            if oracle == OracleId::Symbol { 1.5 } else { 1.0 }
        }
        fn prose_weight(&self, oracle: OracleId) -> f64 {
            if oracle == OracleId::Lexical {
                0.06
            } else {
                self.weight(oracle)
            }
        }
        fn sureness(&self, best: f32) -> f64 {
            ((best as f64 - 0.55) / 0.15).clamp(0.0, 1.0)
        }
        fn fusion(&self) -> Fusion {
            Fusion {
                k: 60.0,
                evidence: 0.5,
                depth: 120.0,
            }
        }
        fn lexical_by_coverage(&self) -> bool {
            self.by_coverage
        }
    }

    /// The weights of a question's lexical and semantic rankings, the model's best cosine `best`.
    fn weights(cfg: &Cfg, text: &str, best: f32, prose: bool, coverage: f64) -> (f64, f64) {
        let plan = crate::QueryPlan::analyze(text);
        let mut r = vec![
            scored(OracleId::Lexical, &[(1, 12.0), (2, 9.0)]),
            scored(OracleId::Semantic, &[(2, best), (1, best - 0.1)]),
        ];
        adjust_weights(&mut r, cfg, &plan, prose, coverage >= 1.0, coverage);
        (r[0].weight, r[1].weight)
    }

    #[test]
    fn words_count_as_far_as_the_best_lexical_hit_holds_the_question() {
        let q = "where does one output failing not stop the others";
        let on = Cfg { by_coverage: true };
        let off = Cfg { by_coverage: false };
        // The model unsure (0.50): words count fully without the measure, by the share of the
        // question the best lexical chunk holds with it.
        assert_eq!(weights(&off, q, 0.50, true, 0.5), (1.0, 1.0));
        assert_eq!(weights(&on, q, 0.50, true, 0.5), (0.5, 1.0));
        assert_eq!(weights(&on, q, 0.50, true, 0.0).0, 0.0);
        // Every word in the best chunk: recognised, full weight however sure the model is.
        assert_eq!(weights(&on, q, 0.80, true, 1.0), (1.0, 1.0));
        // The model sure: the prose weight, scaled the same way.
        let (lex, _) = weights(&on, q, 0.80, true, 0.5);
        assert!((lex - 0.03).abs() < 1e-12, "{lex}");
        // Not prose (the question names code): the measure does not apply.
        assert_eq!(weights(&on, q, 0.50, false, 0.2), (1.0, 1.0));
        // A long text: too many words for one chunk to hold them; no measure.
        let long = format!(
            "{q}\n{}",
            "the sink threw an exception and the pipeline stopped; ".repeat(40)
        );
        assert!(crate::QueryPlan::analyze(&long).long);
        assert_eq!(weights(&on, &long, 0.50, true, 0.1).0, 1.0);
    }
}
