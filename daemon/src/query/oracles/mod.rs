//! Oracles: independent retrievers, each ranking chunks for a query its own way. The query engine
//! runs them in parallel and fuses their rankings; an oracle knows nothing of the others.

pub(crate) mod graph;
pub(crate) mod history;
pub(crate) mod lexical;
mod named;
pub(crate) mod org;
pub(crate) mod semantic;
pub(crate) mod session;
pub(crate) mod symbol;

use std::sync::Arc;

use anyhow::Result;
use patina_core::OracleId;

use crate::state::repo::Repo;
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
    /// ([`crate::state::config::RetrievalConfig::expand`]).
    pub expand: bool,
    /// The history oracle sees only commits made strictly before this time (seconds): `patina
    /// tune` asks a commit's message at the moment of that commit. `None` for every query.
    pub history_before: Option<i64>,
    /// What the org oracle found, by [`HitKey::Org`] index (empty unless it ran).
    pub org: org::Found,
}

/// What an oracle found: a chunk of a repository in scope, or a session note (session oracle).
/// Also the key under which the oracles' rankings are fused. Ordered chunks first (by repository,
/// then chunk id), then notes: ties of the fusion break in this order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum HitKey {
    /// A chunk; `repo` indexes `OracleQuery::repos`.
    Chunk { repo: usize, chunk: u64 },
    /// A note of a working session, by note id.
    Note(u64),
    /// A chunk of a published repository, by its index in [`OracleQuery::org`].
    Org(u32),
}

impl HitKey {
    /// The (repository index, chunk id) of a chunk key.
    pub fn chunk(&self) -> Option<(usize, u64)> {
        match *self {
            HitKey::Chunk { repo, chunk } => Some((repo, chunk)),
            HitKey::Note(_) | HitKey::Org(_) => None,
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct OracleHit {
    pub key: HitKey,
    pub score: f32,
    /// The chunk re-exports a name the query names (the symbol oracle's, [`OracleHit::reexport`]):
    /// ranking lifts it nearly as a definition ([`patina_retrieve::rank::Candidate::reexport`]).
    pub reexport: bool,
}

impl OracleHit {
    /// A chunk of `OracleQuery::repos[repo]` found by an oracle.
    pub fn chunk(repo: usize, chunk: u64, score: f32) -> OracleHit {
        OracleHit {
            key: HitKey::Chunk { repo, chunk },
            score,
            reexport: false,
        }
    }

    /// This hit, found as a re-export of a name the query names.
    pub fn reexport(self) -> OracleHit {
        OracleHit {
            reexport: true,
            ..self
        }
    }

    /// A session note found by an oracle.
    pub fn note(note_id: u64, score: f32) -> OracleHit {
        OracleHit {
            key: HitKey::Note(note_id),
            score,
            reexport: false,
        }
    }
}

/// The test hook `PATINA_TEST_SLOW_ORACLE=<oracle>=<ms>[,…]`: the named oracles sleep that long
/// before answering, so the suite can make one time out on purpose (`tests/hardening.rs`). It
/// only delays: the answer, when it comes, is the oracle's real one. Unset, nothing sleeps.
pub(crate) fn test_delay(id: OracleId) -> Option<std::time::Duration> {
    static DELAYS: std::sync::OnceLock<Vec<(OracleId, u64)>> = std::sync::OnceLock::new();
    DELAYS
        .get_or_init(|| {
            let spec = patina_core::hooks::test_hook("PATINA_TEST_SLOW_ORACLE").unwrap_or_default();
            spec.split(',')
                .filter_map(|item| {
                    let (name, ms) = item.split_once('=')?;
                    Some((OracleId::parse(name.trim())?, ms.trim().parse().ok()?))
                })
                .collect()
        })
        .iter()
        .find(|(o, _)| *o == id)
        .map(|(_, ms)| std::time::Duration::from_millis(*ms))
}

/// An answer the caller asked to be complete (`QueryRequest.complete`) that an oracle could not
/// complete: the request fails instead of answering without it (`Aborted` on the wire; not
/// `Unavailable`, which the clients take for a daemon gone, and retry).
#[derive(Debug)]
pub(crate) struct Incomplete(pub String);

impl std::fmt::Display for Incomplete {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Incomplete {}

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
    fn id(&self) -> OracleId;
    /// Ranked best first, at most `q.limit`.
    fn search(&self, q: &OracleQuery) -> Result<Vec<OracleHit>>;
    /// Whether the oracle ranks after the first fusion, from its hits (the graph oracle), rather
    /// than in parallel with the others.
    fn second_stage(&self) -> bool {
        false
    }
}

/// Merge per-repository rankings whose scores are comparable, best first.
pub(crate) fn merge_by_score(mut hits: Vec<OracleHit>, limit: usize) -> Vec<OracleHit> {
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.key.cmp(&b.key)));
    hits.truncate(limit);
    hits
}
