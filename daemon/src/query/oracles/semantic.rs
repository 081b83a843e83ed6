//! The semantic oracle: the query's embedding against each repository's vector index (cosine).
//! Finds code that shares no word with the question.

use std::sync::Arc;

use anyhow::Result;

use patina_core::OracleId;

use super::{Oracle, OracleHit, OracleQuery, Unavailable, merge_by_score};
use crate::services::embedding::Semantic;

pub(crate) struct SemanticOracle(pub Arc<Semantic>);

impl Oracle for SemanticOracle {
    fn id(&self) -> OracleId {
        OracleId::Semantic
    }

    fn search(&self, q: &OracleQuery) -> Result<Vec<OracleHit>> {
        if !self.0.is_on() {
            return Err(Unavailable(format!("semantic search is {}", self.0.describe())).into());
        }
        // A long text's code blocks and traces mean little to a sentence model and would crowd
        // out its prose within the model's 256 word pieces: embed the prose.
        let qv = self.0.embed_query(&q.plan.semantic_text)?;
        let mut hits = Vec::new();
        for (i, repo) in q.repos.iter().enumerate() {
            let allow = q
                .filter
                .as_ref()
                .map(|f| repo.with_chunks(|c| f.allowed_chunks(c)));
            let allow_fn = |id: u64| allow.as_ref().is_none_or(|a| a(id));
            for (chunk_id, score) in repo.search_vectors(&qv, q.limit, &allow_fn) {
                hits.push(OracleHit::chunk(i, chunk_id, score));
            }
        }
        Ok(merge_by_score(hits, q.limit))
    }
}
