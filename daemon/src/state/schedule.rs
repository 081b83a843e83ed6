//! How a request (a query that must read its own writes, an editor buffer, a repair) asks for an
//! index round without knowing who runs it: the [`Scheduler`] interface, implemented by the
//! indexer worker and handed down at start.

use std::sync::Arc;
use std::time::Duration;

use patina_index::Progress;
use tokio::sync::watch;

use crate::state::repo::Repo;

/// File-system events closer together than this are one batch: how long after a save the watcher
/// reports it (what `--fresh` waits out before asking for a round).
pub(crate) const DEBOUNCE: Duration = Duration::from_millis(100);

/// What changed in a repository.
pub(crate) enum Change {
    /// Unknown: reconcile the whole tree (mtime + size, then content hash).
    Full,
    /// Already recorded in the repository's dirty set (by the watcher, or a buffer).
    None,
}

/// Runs index rounds.
pub(crate) trait Scheduler: Send + Sync {
    /// Record a change and make sure a round will index it: a running job picks it up before it
    /// finishes, otherwise a new job starts. Returns the job's progress. Callable from any thread.
    fn schedule(&self, repo: &Arc<Repo>, change: Change) -> watch::Receiver<Progress>;
}
