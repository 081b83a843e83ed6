//! The dependency oracle: a second stage after the first fusion. The strongest hits of the other
//! oracles are seeds; their callees, callers and type neighbours (the repository's graph,
//! [`GraphTable`]) are ranked by how strongly and how surely they are tied to
//! the seeds, and that ranking joins the fusion with a modest weight — a question about "how X is
//! validated" reaches the validator that X calls. Hubs are held back: only seeds close to the best
//! one walk, neighbours in a seed's own file are left out, a neighbour keeps its strongest tie
//! (ties from several seeds do not add up), one called from many places is lifted less
//! (÷ √(1 + its callers)), and only the best few are ranked. A documentation seed walks from the
//! first code its code spans name ([`super::named`]; every piece named is tied to it): a guide
//! holds the question's words, the code it names does the work and often shares none of them
//! (bats' "skip a test with a reason" section names `skip`, defined in `test_functions.bash`).
//! Callers are counted and found once per definition and graph ([`GraphTable::callers`]).

use std::collections::HashMap;

use anyhow::Result;

use patina_core::{FileRole, OracleId, Resolution};
use patina_index::graph::Def;
#[cfg(doc)]
use patina_index::graph::GraphTable;

use super::{HitKey, Oracle, OracleHit, OracleQuery};

/// How many fused hits seed the walk.
pub(crate) const SEEDS: usize = 5;
/// Callers taken per seed (a popular function has hundreds).
const MAX_CALLERS: usize = 20;
const CALLEE: f64 = 1.0;
const CALLER: f64 = 0.6;
const TYPE: f64 = 0.5;
/// Only seeds whose fused score is at least this share of the best one walk.
const SEED_MARGIN: f64 = 0.5;
/// At most this many neighbours are ranked: a long tail of weak ties only breaks ties among
/// the other oracles' hits at random.
const MAX_HITS: usize = 10;
/// A name called from more places than this is a hub (`new`, `poll`, `clone`): its callers are
/// not walked and its caller count is taken unresolved — resolving thousands of sites per query
/// cost tokio's slowest queries over a second, and a hub's callers say nothing about one question.
const HUB_SITES: usize = 200;

pub(crate) struct GraphOracle;

impl Oracle for GraphOracle {
    fn id(&self) -> OracleId {
        OracleId::Graph
    }

    /// The graph oracle ranks nothing on its own: see [`GraphOracle::neighbours`].
    fn search(&self, _: &OracleQuery) -> Result<Vec<OracleHit>> {
        Ok(Vec::new())
    }

    fn second_stage(&self) -> bool {
        true
    }
}

/// How sure an edge is, as a weight: only resolved edges (same file or package, or through an
/// import) lift a neighbour. A name-only tie is a guess that serves navigation (`patina refs`
/// lists it, marked) but not ranking: on CoSQA's thousands of unrelated functions it linked
/// strangers and cost 0.003 MRR@10, while resolved edges alone lower no set (bench/RESULTS.md).
fn certainty(resolution: Resolution) -> f64 {
    match resolution {
        Resolution::Exact | Resolution::Import => 1.0,
        Resolution::NameOnly => 0.0,
    }
}

impl GraphOracle {
    /// The neighbours of `seeds` (fused chunk hits, best first, with their fused scores), best
    /// first, at most `q.limit`.
    pub(crate) fn neighbours(q: &OracleQuery, seeds: &[(HitKey, f64)]) -> Vec<OracleHit> {
        let mut acc: HashMap<(usize, u64), f64> = HashMap::new();
        let top = seeds.first().map_or(1.0, |s| s.1).max(f64::MIN_POSITIVE);
        // The seeds to walk from, with their strength. A documentation seed holds the question's
        // words and names, in its code spans, the code that does what it describes: that code is
        // tied to it as a callee is to its caller, and the first piece it names is walked from in
        // its place (a section calls nothing; each seed walks once).
        let mut walks: Vec<(usize, u64, f64)> = Vec::new();
        let mut docs = super::named::Named::default();
        for (key, score) in seeds.iter().take(SEEDS) {
            let HitKey::Chunk { repo: ri, chunk } = *key else {
                continue;
            };
            let Some(meta) = q.repos[ri].chunk(chunk) else {
                continue;
            };
            let strength = score / top;
            if strength < SEED_MARGIN {
                continue;
            }
            if meta.role() == FileRole::Docs {
                for (i, id) in docs.code_named_by(q, ri, chunk).into_iter().enumerate() {
                    let s = acc.entry((ri, id)).or_default();
                    *s = s.max(strength * CALLEE);
                    // The seed walks once: from the first code it names.
                    if i == 0 {
                        walks.push((ri, id, strength));
                    }
                }
                continue;
            }
            walks.push((ri, chunk, strength));
        }
        for (ri, chunk, strength) in walks {
            let repo = &q.repos[ri];
            let Some(meta) = repo.chunk(chunk) else {
                continue;
            };
            let Some(graph) = crate::state::repo::graph_for_query(repo) else {
                continue;
            };
            let seed_path = meta.path.clone();
            let mut offer = |id: u64, w: f64| {
                // A neighbour in the seed's own file adds nothing the seed did not bring.
                let elsewhere = repo.chunk(id).is_some_and(|m| m.path != seed_path);
                if id != chunk && elsewhere && w > 0.0 {
                    let s = acc.entry((ri, id)).or_default();
                    *s = s.max(strength * w);
                }
            };
            let def = graph.def_of_chunk(chunk, &meta).unwrap_or_else(|| Def {
                chunk_id: chunk,
                path: meta.path.clone(),
                start_line: meta.start_line,
                end_line: meta.end_line,
                symbol: "".into(),
                parent: meta.parent.as_deref().map(Into::into),
                kind: meta.kind,
            });
            let mut seen = std::collections::HashSet::new();
            for e in graph.calls_in(&def) {
                if seen.insert(e.to.chunk_id) {
                    offer(e.to.chunk_id, CALLEE * certainty(e.resolution));
                }
            }
            if !def.symbol.is_empty() {
                let mut callers = graph.callers(&def, HUB_SITES).to_vec();
                callers.sort_by_key(|c| c.1);
                let mut seen = std::collections::HashSet::new();
                for (from, resolution) in callers {
                    let Some(from) = from else { continue };
                    if seen.len() >= MAX_CALLERS {
                        break;
                    }
                    if seen.insert(from) {
                        offer(from, CALLER * certainty(resolution));
                    }
                }
                for (d, res) in graph.type_neighbours(&def) {
                    offer(d.chunk_id, TYPE * certainty(res));
                }
            }
        }
        // The hub penalty (how many places call a neighbour) only lowers a score, and counting
        // callers resolves every call site: neighbours are taken best raw score first, and once a
        // raw score is below the last of the best `want` penalised ones, no later one can rank.
        let want = q.limit.min(MAX_HITS);
        if want == 0 {
            return Vec::new();
        }
        let mut raw: Vec<((usize, u64), f64)> = acc.into_iter().collect();
        raw.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut hits: Vec<OracleHit> = Vec::new();
        let mut kth = f32::NEG_INFINITY;
        for ((ri, id), s) in raw {
            if hits.len() >= want && (s as f32) < kth {
                break;
            }
            let repo = &q.repos[ri];
            let Some(m) = repo.chunk(id) else { continue };
            if !q.filter.as_ref().is_none_or(|f| f.allows(&m)) {
                continue;
            }
            let Some(graph) = repo.index().resident_graph() else {
                continue;
            };
            let callers = graph
                .def_of_chunk(id, &m)
                .map_or(0, |d| graph.caller_count(&d, HUB_SITES));
            hits.push(OracleHit::chunk(
                ri,
                id,
                (s / (1.0 + callers as f64).sqrt()) as f32,
            ));
            if hits.len() >= want {
                let mut scores: Vec<f32> = hits.iter().map(|h| h.score).collect();
                scores.sort_by(|a, b| b.total_cmp(a));
                kth = scores[want - 1];
            }
        }
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.key.cmp(&b.key)));
        hits.truncate(q.limit.min(MAX_HITS));
        hits
    }
}
