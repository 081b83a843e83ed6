//! What a search asks and answers, as the engine sees them (the wire shapes are `rpc/`'s).

use std::sync::Arc;
use std::time::Duration;

use patina_core::{ChunkMeta, FileRole, OracleId, OracleStatus};
use patina_retrieve::fusion::Contribution;

use crate::services::freshness::Freshness;
use crate::services::sessions::NoteView;
use crate::state::repo::Repo;

/// Queries longer than this are cut (with a notice). Long texts (bug reports, commit bodies) are
/// decomposed by [`QueryPlan`] rather than cut, so this only bounds cost.
pub(crate) const MAX_QUERY_BYTES: usize = 32 * 1024;
pub(crate) const DEFAULT_LIMIT: usize = 10;
pub(crate) const MAX_LIMIT: usize = 1000;
pub(crate) const MAX_SNIPPET_LINES: usize = 200;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) enum Granularity {
    #[default]
    Chunk,
    File,
    /// Chunks aggregated per directory (scores summed): [`HitItem::Group`].
    Module,
    /// Chunks aggregated per repository: [`HitItem::Group`] with an empty `dir`.
    Repo,
    /// Chunk level, restricted to documentation ([`is_doc_path`]) and session notes.
    Doc,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct SearchRequest {
    pub text: String,
    pub limit: usize,
    pub repos: Vec<String>,
    pub globs: Vec<String>,
    pub granularity: Granularity,
    pub oracles: Vec<String>,
    pub snippet_lines: usize,
    /// Read-your-writes budget: index pending changes first, waiting at most this long.
    pub fresh_timeout: Duration,
    /// Only chunks of these roles (empty: every role).
    pub roles: Vec<FileRole>,
    /// Never chunks of these roles.
    pub exclude_roles: Vec<FileRole>,
    /// Directories whose files are lifted in the ranking (not filtered).
    pub near: Vec<String>,
    /// Only chunks of files under these licences (applied by every oracle, before fusion; never
    /// relaxed).
    pub licences: patina_core::LicenceFilter,
    /// Complete or error: an oracle that times out or fails fails the request
    /// ([`crate::query::oracles::Incomplete`]) instead of leaving the answer without it.
    pub complete: bool,
    /// File level: say each hit's ranking features ([`SearchHit::features`]).
    pub features: bool,
    /// Also ask the team's store for repositories not cloned here (the `org` oracle).
    pub org: bool,
}

pub(crate) struct SearchHit {
    pub item: HitItem,
    /// The role of the hit's file (`None` for notes).
    pub role: Option<FileRole>,
    pub score: f64,
    pub provenance: Vec<Contribution>,
    pub snippet: String,
    /// What the ranking knew of the file (`patina_retrieve::features`), when asked.
    pub features: Option<patina_retrieve::features::Vector>,
}

/// What a hit is.
pub(crate) enum HitItem {
    /// A chunk of a repository (symbol, file and doc levels; at file level the file's best chunk).
    Chunk {
        repo: Arc<Repo>,
        chunk_id: u64,
        meta: ChunkMeta,
    },
    /// Module and repo levels: a directory (`""` = the repository) with its best chunk and the
    /// number of matching chunks in it.
    Group {
        repo: Arc<Repo>,
        dir: String,
        best: ChunkMeta,
        matches: u32,
    },
    /// A note of a working session (the session oracle).
    Note(NoteView),
    /// A chunk of a repository published to the team's store, not cloned here (the org oracle).
    Org(patina_team::OrgHit),
}

#[derive(Clone, Debug)]
pub(crate) struct OracleReport {
    pub oracle: OracleId,
    pub status: OracleStatus,
    /// The fusion weight its ranking had in this answer (0 when it did not take part).
    pub weight: f64,
    pub hits: usize,
    pub took: Duration,
    pub message: String,
    /// The semantic oracle's leading hits ranked by static vectors ([`super::engine::static_hits`]).
    pub static_hits: usize,
}

pub(crate) struct SearchResponse {
    pub hits: Vec<SearchHit>,
    pub reports: Vec<OracleReport>,
    pub took: Duration,
    pub notices: Vec<String>,
    pub freshness: Vec<Freshness>,
    /// What the query was understood to ask for.
    pub intent: patina_retrieve::Intent,
}
