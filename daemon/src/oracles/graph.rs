//! The dependency oracle: a second stage after the first fusion. The strongest hits of the other
//! oracles are seeds; their callees, callers and type neighbours (the repository's graph,
//! [`patina_index::graph::GraphTable`]) are ranked by how strongly and how surely they are tied to
//! the seeds, and that ranking joins the fusion with a modest weight — a question about "how X is
//! validated" reaches the validator that X calls.

use std::collections::HashMap;

use anyhow::Result;

use patina_core::{OracleId, Resolution};
use patina_index::graph::{Def, Edge};

use super::{HitKey, Oracle, OracleHit, OracleQuery};

/// How many fused hits seed the walk.
pub(crate) const SEEDS: usize = 5;
/// Callers taken per seed (a popular function has hundreds).
const MAX_CALLERS: usize = 20;
const CALLEE: f64 = 1.0;
const CALLER: f64 = 0.6;
const TYPE: f64 = 0.5;

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

fn certainty(resolution: Resolution, candidates: usize) -> f64 {
    match resolution {
        Resolution::Exact | Resolution::Import => 1.0,
        Resolution::NameOnly => 0.5 / candidates.max(1) as f64,
    }
}

impl GraphOracle {
    /// The neighbours of `seeds` (fused chunk hits, best first, with their fused scores), best
    /// first, at most `q.limit`.
    pub(crate) fn neighbours(q: &OracleQuery, seeds: &[(HitKey, f64)]) -> Vec<OracleHit> {
        let mut acc: HashMap<(usize, u64), f64> = HashMap::new();
        let top = seeds.first().map_or(1.0, |s| s.1).max(f64::MIN_POSITIVE);
        for (key, score) in seeds.iter().take(SEEDS) {
            let HitKey::Chunk { repo: ri, chunk } = *key else {
                continue;
            };
            let repo = &q.repos[ri];
            let Some(meta) = repo.chunk(chunk) else {
                continue;
            };
            let graph = repo.index().graph();
            let strength = score / top;
            let mut offer = |id: u64, w: f64| {
                if id != chunk {
                    *acc.entry((ri, id)).or_default() += strength * w;
                }
            };
            let def = graph.def_of_chunk(chunk, &meta).unwrap_or_else(|| Def {
                chunk_id: chunk,
                path: meta.path.as_str().into(),
                start_line: meta.start_line,
                end_line: meta.end_line,
                symbol: String::new(),
                parent: meta.parent.clone(),
                kind: meta.kind,
            });
            let mut seen = std::collections::HashSet::new();
            for e in graph.calls_in(&def) {
                if seen.insert(e.to.chunk_id) {
                    offer(
                        e.to.chunk_id,
                        CALLEE * certainty(e.resolution, e.candidates),
                    );
                }
            }
            if !def.symbol.is_empty() {
                let mut callers: Vec<Edge> = graph
                    .references(&def.symbol, true)
                    .into_iter()
                    .filter(|e| e.to == def)
                    .collect();
                callers.sort_by_key(|e| e.resolution);
                let mut seen = std::collections::HashSet::new();
                for e in callers {
                    let Some(from) = e.from else { continue };
                    if seen.len() >= MAX_CALLERS {
                        break;
                    }
                    if seen.insert(from.chunk_id) {
                        offer(
                            from.chunk_id,
                            CALLER * certainty(e.resolution, e.candidates),
                        );
                    }
                }
                for (d, res) in graph.type_neighbours(&def) {
                    offer(d.chunk_id, TYPE * certainty(res, 1));
                }
            }
        }
        let mut hits: Vec<OracleHit> = acc
            .into_iter()
            .filter(|((ri, id), _)| {
                let Some(m) = q.repos[*ri].chunk(*id) else {
                    return false;
                };
                q.filter.as_ref().is_none_or(|f| f.allows(&m))
            })
            .map(|((ri, id), s)| OracleHit::chunk(ri, id, s as f32))
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.key.cmp(&b.key)));
        hits.truncate(q.limit);
        hits
    }
}
