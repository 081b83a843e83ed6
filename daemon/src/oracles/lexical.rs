//! The lexical oracle: BM25 over code-aware tokens (see `index::lexical`).

use anyhow::Result;

use super::{Oracle, OracleHit, OracleQuery, merge_by_score};
use crate::index::tokens::query_terms;

/// Queries longer than this many distinct terms are cut: beyond it BM25 only gets slower.
const MAX_TERMS: usize = 64;

pub(crate) struct LexicalOracle;

impl Oracle for LexicalOracle {
    fn name(&self) -> &'static str {
        "lexical"
    }

    fn search(&self, q: &OracleQuery) -> Result<Vec<OracleHit>> {
        let terms = query_terms(&q.text, MAX_TERMS);
        let mut hits = Vec::new();
        for (i, repo) in q.repos.iter().enumerate() {
            let allow = q.filter.as_ref().map(|f| f.allowed_chunks(repo));
            for (chunk_id, score) in repo.lexical.search(&terms, q.limit, allow)? {
                hits.push(OracleHit {
                    repo: i,
                    chunk_id,
                    score,
                });
            }
        }
        Ok(merge_by_score(hits, q.limit))
    }
}
