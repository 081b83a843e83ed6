//! The dependency oracle: a second stage after the first fusion. The strongest hits of the other
//! oracles are seeds; their callees, callers and type neighbours (the repository's graph,
//! [`patina_index::graph::GraphTable`]) are ranked by how strongly and how surely they are tied to
//! the seeds, and that ranking joins the fusion with a modest weight — a question about "how X is
//! validated" reaches the validator that X calls. Hubs are held back: only seeds close to the best
//! one walk, neighbours in a seed's own file are left out, a neighbour keeps its strongest tie
//! (ties from several seeds do not add up), one called from many places is lifted less
//! (÷ √(1 + its callers)), and only the best few are ranked. A documentation seed walks from the
//! code its code spans name ([`super::named`]): a guide holds the question's words, the code it
//! names does the work and often shares none of them (bats' "skip a test with a reason" section
//! names `skip`, defined in `test_functions.bash`).

use std::collections::HashMap;

use anyhow::Result;

use patina_core::{FileRole, OracleId, Resolution};
use patina_index::graph::{Def, Edge};

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
        // tied to it as a callee is to its caller, and walked from in its place (a section calls
        // nothing).
        let mut walks: Vec<(usize, u64, f64)> = Vec::new();
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
                for id in super::named::code_named_by(q, ri, chunk) {
                    let s = acc.entry((ri, id)).or_default();
                    *s = s.max(strength * CALLEE);
                    walks.push((ri, id, strength));
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
                symbol: String::new(),
                parent: meta.parent.clone(),
                kind: meta.kind,
            });
            let mut seen = std::collections::HashSet::new();
            for e in graph.calls_in(&def) {
                if seen.insert(e.to.chunk_id) {
                    offer(e.to.chunk_id, CALLEE * certainty(e.resolution));
                }
            }
            if !def.symbol.is_empty() {
                let hub = graph.call_sites(&def.symbol) > HUB_SITES;
                let mut callers: Vec<Edge> = if hub {
                    Vec::new()
                } else {
                    graph
                        .references(&def.symbol, true)
                        .into_iter()
                        .filter(|e| e.to == def)
                        .collect()
                };
                callers.sort_by_key(|e| e.resolution);
                let mut seen = std::collections::HashSet::new();
                for e in callers {
                    let Some(from) = e.from else { continue };
                    if seen.len() >= MAX_CALLERS {
                        break;
                    }
                    if seen.insert(from.chunk_id) {
                        offer(from.chunk_id, CALLER * certainty(e.resolution));
                    }
                }
                for (d, res) in graph.type_neighbours(&def) {
                    offer(d.chunk_id, TYPE * certainty(res));
                }
            }
        }
        let mut hits: Vec<OracleHit> = acc
            .into_iter()
            .filter_map(|((ri, id), s)| {
                let repo = &q.repos[ri];
                let m = repo.chunk(id)?;
                if !q.filter.as_ref().is_none_or(|f| f.allows(&m)) {
                    return None;
                }
                // The hub penalty: how many places call it.
                let graph = repo.index().resident_graph()?;
                let callers = graph.def_of_chunk(id, &m).map_or(0, |d| {
                    let sites = graph.call_sites(&d.symbol);
                    if sites > HUB_SITES {
                        return sites;
                    }
                    graph
                        .references(&d.symbol, true)
                        .iter()
                        .filter(|e| e.to == d)
                        .count()
                });
                let s = s / (1.0 + callers as f64).sqrt();
                Some(OracleHit::chunk(ri, id, s as f32))
            })
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.key.cmp(&b.key)));
        hits.truncate(q.limit.min(MAX_HITS));
        hits
    }
}
