//! Idle release: on a timer, repositories whose watcher failed are reconciled, and dependency
//! graphs and commit histories not used for [`idle_release`] leave memory (rebuilt from the store
//! on next use).

use std::sync::Arc;

use crate::services::embedding::Semantic;
use crate::state::config::idle_release;
use crate::state::schedule::Change;
use crate::workers::indexer::Indexer;

/// Repositories without a working watcher are reconciled this often, and idle graphs dropped.
const POLL_INTERVAL: std::time::Duration = std::time::Duration::from_secs(30);
/// Repositories whose watcher failed are reconciled on a timer instead; on the same timer
/// dependency graphs and commit histories idle for [`idle_release`] leave memory.
pub(crate) fn spawn(indexer: &Arc<Indexer>, semantic: Arc<Semantic>) {
    let weak = Arc::downgrade(indexer);
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(
            POLL_INTERVAL.min(idle_release().max(std::time::Duration::from_secs(1))),
        );
        loop {
            tick.tick().await;
            let Some(indexer) = weak.upgrade() else {
                return;
            };
            for repo in indexer.repos().all() {
                if repo.root().is_dir() && repo.watch_error().is_some() {
                    indexer.schedule(&repo, Change::Full);
                }
            }
            let repos = indexer.repos().all();
            let sem = semantic.clone();
            drop(indexer);
            let _ = tokio::task::spawn_blocking(move || {
                let dropped = repos
                    .iter()
                    .map(|r| {
                        u32::from(r.index().release_idle_graph(idle_release()))
                            + u32::from(
                                // Not while its commit messages wait to be embedded.
                                (!sem.is_on() || r.message_backlog() == 0)
                                    && crate::services::history::release_idle(r),
                            )
                    })
                    .sum::<u32>();
                if dropped > 0 {
                    tracing::debug!(tables = dropped, "idle graphs and histories dropped");
                    crate::process::memory::release_free_heap();
                }
            })
            .await;
        }
    });
}
