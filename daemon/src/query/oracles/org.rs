//! The org oracle (`patina q --org`): repositories published to the team's store that are not
//! cloned here, searched by the engine itself (its full-text index and its vector index), the two
//! rankings fused here by reciprocal rank, then fused with the local oracles like any other. Its
//! hits are no local chunk: [`HitKey::Org`] indexes what it found ([`Found`]). Asked only when a
//! request says so; with the store down it fails like an oracle, so the answer is the local one
//! with a notice.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use anyhow::Result;
use patina_core::OracleId;
use patina_team::{OrgHit, OrgQuery};

use super::{HitKey, Oracle, OracleHit, OracleQuery};
use crate::services::embedding::Semantic;
use crate::services::team::Team;

/// The reciprocal-rank constant that merges the engine's two rankings: the fusion's usual 60.
const MERGE_K: f64 = 60.0;

/// What the org oracle found for one query, by [`HitKey::Org`] index.
#[derive(Default)]
pub(crate) struct Found(Mutex<Vec<OrgHit>>);

impl Found {
    fn put(&self, hits: Vec<OrgHit>) -> u32 {
        let mut v = self.0.lock().expect("org hits lock");
        let first = v.len() as u32;
        v.extend(hits);
        first
    }

    /// Everything found, leaving nothing behind.
    pub fn take(&self) -> Vec<OrgHit> {
        std::mem::take(&mut *self.0.lock().expect("org hits lock"))
    }
}

pub(crate) struct OrgOracle {
    pub team: Arc<Team>,
    pub semantic: Arc<Semantic>,
}

impl Oracle for OrgOracle {
    fn id(&self) -> OracleId {
        OracleId::Org
    }

    fn search(&self, q: &OracleQuery) -> Result<Vec<OracleHit>> {
        // Path globs and licence filters speak of local files.
        if q.filter
            .as_ref()
            .is_some_and(|f| f.has_globs() || f.has_licences())
        {
            return Ok(Vec::new());
        }
        let vector = if self.semantic.is_on() {
            Some(self.semantic.embed_query(&q.plan.semantic_text)?.to_vec())
        } else {
            None
        };
        let skip = q
            .repos
            .iter()
            .filter_map(|r| self.team.remote_of(r))
            .collect();
        let found = self.team.search(OrgQuery {
            text: q.text.clone(),
            vector,
            model: self.semantic.model_tag(),
            limit: q.limit,
            words: q.plan.content_words.clone(),
            names: q.plan.identifiers.iter().map(|i| i.name.clone()).collect(),
            skip,
        })?;
        let merged = merge([found.symbols, found.lexical, found.semantic], q.limit);
        let scores: Vec<f32> = merged.iter().map(|m| m.1).collect();
        let first = q.org.put(merged.into_iter().map(|m| m.0).collect());
        Ok(scores
            .into_iter()
            .enumerate()
            .map(|(i, score)| OracleHit {
                key: HitKey::Org(first + i as u32),
                score,
                reexport: false,
            })
            .collect())
    }
}

/// The engine's rankings (definitions by name, full text, nearest vectors) as one, by reciprocal
/// rank (a chunk several found adds each), the best `limit`; ties by repository, path and line.
fn merge(rankings: [Vec<OrgHit>; 3], limit: usize) -> Vec<(OrgHit, f32)> {
    let mut by: HashMap<(String, String, u32), (OrgHit, f64)> = HashMap::new();
    for ranking in rankings {
        for (rank, h) in ranking.into_iter().enumerate() {
            let key = (h.remote.clone(), h.path.clone(), h.start_line);
            by.entry(key).or_insert_with(|| (h, 0.0)).1 += 1.0 / (MERGE_K + rank as f64 + 1.0);
        }
    }
    let mut v: Vec<(OrgHit, f64)> = by.into_values().collect();
    v.sort_by(|a, b| {
        b.1.total_cmp(&a.1)
            .then_with(|| a.0.remote.cmp(&b.0.remote))
            .then_with(|| a.0.path.cmp(&b.0.path))
            .then_with(|| a.0.start_line.cmp(&b.0.start_line))
    });
    v.truncate(limit.max(1));
    v.into_iter().map(|(h, s)| (h, s as f32)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(path: &str, line: u32) -> OrgHit {
        OrgHit {
            remote: "h/o/r".into(),
            name: "o/r".into(),
            sha: "abc".into(),
            path: path.into(),
            start_line: line,
            end_line: line + 2,
            symbol: String::new(),
            body: String::new(),
            score: 0.5,
        }
    }

    #[test]
    fn a_chunk_both_rankings_found_comes_first() {
        let m = merge(
            [
                vec![],
                vec![hit("a.rs", 1), hit("b.rs", 1)],
                vec![hit("c.rs", 1), hit("b.rs", 1)],
            ],
            10,
        );
        let paths: Vec<&str> = m.iter().map(|(h, _)| h.path.as_str()).collect();
        assert_eq!(paths, ["b.rs", "a.rs", "c.rs"]);
        assert_eq!(
            merge([vec![], vec![hit("a.rs", 1)], vec![hit("c.rs", 1)]], 1).len(),
            1
        );
        // A definition named in the question and found by meaning outranks a text match.
        let m = merge(
            [
                vec![hit("d.rs", 1)],
                vec![hit("a.rs", 1)],
                vec![hit("d.rs", 1), hit("a.rs", 9)],
            ],
            10,
        );
        assert_eq!(m[0].0.path, "d.rs");
    }
}
