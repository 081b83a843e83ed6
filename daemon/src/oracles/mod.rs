//! Oracles: independent retrievers, each ranking chunks for a query its own way. The query engine
//! runs them in parallel and fuses their rankings; an oracle knows nothing of the others.

pub(crate) mod lexical;
pub(crate) mod semantic;
pub(crate) mod session;
pub(crate) mod symbol;

use std::sync::Arc;

use anyhow::Result;

use crate::repo::Repo;
use patina_core::PathFilter;

/// What every oracle is asked.
pub(crate) struct OracleQuery {
    pub text: String,
    /// What the query was understood to say: entities, the prose part, whether it is long.
    pub plan: Arc<patina_retrieve::QueryPlan>,
    /// How many ranked candidates to return.
    pub limit: usize,
    /// The repositories in scope.
    pub repos: Vec<Arc<Repo>>,
    pub filter: Option<Arc<PathFilter>>,
    /// Whether the lexical oracle adds the index's variants of a question's words
    /// ([`crate::config::RetrievalConfig::expand`]).
    pub expand: bool,
}

/// A chunk an oracle found: `repo` indexes `OracleQuery::repos`. A session note (session oracle)
/// has `repo` [`NOTE_SCOPE`] and its note id as `chunk_id`; see [`OracleHit::note`].
#[derive(Clone, Debug)]
pub(crate) struct OracleHit {
    pub repo: usize,
    pub chunk_id: u64,
    pub score: f32,
}

/// The `repo` of a hit that is a session note rather than a chunk of a repository.
pub(crate) const NOTE_SCOPE: usize = usize::MAX;

impl OracleHit {
    /// A session note found by an oracle.
    pub fn note(note_id: u64, score: f32) -> OracleHit {
        OracleHit {
            repo: NOTE_SCOPE,
            chunk_id: note_id,
            score,
        }
    }
}

/// An oracle that cannot answer at all (e.g. no model installed): reported, not an error.
#[derive(Debug)]
pub(crate) struct Unavailable(pub String);

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unavailable {}

pub(crate) trait Oracle: Send + Sync {
    fn name(&self) -> &'static str;
    /// Ranked best first, at most `q.limit`.
    fn search(&self, q: &OracleQuery) -> Result<Vec<OracleHit>>;
}

/// Merge per-repository rankings whose scores are comparable, best first.
pub(crate) fn merge_by_score(mut hits: Vec<OracleHit>, limit: usize) -> Vec<OracleHit> {
    hits.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(a.repo.cmp(&b.repo))
            .then(a.chunk_id.cmp(&b.chunk_id))
    });
    hits.truncate(limit);
    hits
}
