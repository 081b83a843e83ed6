//! The gRPC surface: thin adapters from `patina.v1` messages to the daemon's components, one file
//! per service (`health`, `repos`, `search`, `files`, `sessions`); `convert` holds the wire ↔
//! domain conversions and the error mapping. No logic lives here beyond conversion, error mapping
//! and moving blocking calls to the blocking pool ([`blocking`]).

mod buffers;
mod convert;
mod feedback;
mod files;
mod graph;
mod health;
mod history;
mod repos;
mod search;
mod sessions;
mod snapshots;
mod team;
mod tune;

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::Notify;
use tonic::Status;

use crate::query::engine::QueryEngine;
use crate::services::embedding::Semantic;
use crate::services::sessions::Sessions;
use crate::state::config::Config;
use crate::state::repos::Repos;
use crate::workers::indexer::Indexer;

/// What every service shares.
pub(crate) struct Daemon {
    pub repos: Arc<Repos>,
    pub indexer: Arc<Indexer>,
    pub config: Arc<Config>,
    pub semantic: Arc<Semantic>,
    pub engine: QueryEngine,
    pub sessions: Arc<Sessions>,
    pub started: Instant,
    /// The executable as it was at start (`Health.Check` says when it was replaced).
    pub exe: crate::process::exe::ExeStamp,
    pub socket: String,
    pub data_dir: String,
    pub socket_activated: bool,
    /// Restarts in place this process went through (`crate::process::restart`).
    pub restarts: u32,
    pub shutdown: Arc<Notify>,
    /// Answers of `Search.Query` by request (`crate::query::cache`).
    pub qcache: crate::query::cache::QueryCache<patina_proto::v1::QueryResponse>,
    /// Answers of `Search.Context` by request (the same rules; stamped with every repository).
    pub ccache: crate::query::cache::QueryCache<patina_proto::v1::ContextResponse>,
    /// Feedback on answers (`Feedback` service; answers remembered by query id).
    pub feedback: crate::services::feedback::Feedback,
    /// A team's shared store (off unless `[team] url`).
    pub team: Arc<crate::services::team::Team>,
}

/// The tonic services (one per `proto/` service: twelve), over one shared [`Daemon`].
#[derive(Clone)]
pub(crate) struct Services(pub Arc<Daemon>);

/// Run blocking work (disk reads, fsync) off the async workers.
pub(super) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
) -> Result<T, Status> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Status::internal(format!("task failed: {e}")))?
        .map_err(convert::status)
}
