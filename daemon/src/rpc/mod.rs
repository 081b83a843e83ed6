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
mod tune;

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::Notify;
use tonic::Status;

use crate::registry::Registry;
use crate::search::QueryEngine;
use crate::sessions::Sessions;

/// What every service shares.
pub(crate) struct Daemon {
    pub registry: Arc<Registry>,
    pub engine: QueryEngine,
    pub sessions: Arc<Sessions>,
    pub started: Instant,
    /// The executable as it was at start (`Health.Check` says when it was replaced).
    pub exe: crate::exe::ExeStamp,
    pub socket: String,
    pub data_dir: String,
    pub socket_activated: bool,
    /// Restarts in place this process went through (`crate::restart`).
    pub restarts: u32,
    pub shutdown: Arc<Notify>,
    /// Answers of `Search.Query` by request (`crate::qcache`).
    pub qcache: crate::qcache::QueryCache<patina_proto::v1::QueryResponse>,
    /// Answers of `Search.Context` by request (the same rules; stamped with every repository).
    pub ccache: crate::qcache::QueryCache<patina_proto::v1::ContextResponse>,
    /// Feedback on answers (`Feedback` service; answers remembered by query id).
    pub feedback: crate::feedback::Feedback,
}

/// The five tonic services, over one shared [`Daemon`].
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
