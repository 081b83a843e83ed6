//! Editor buffers (`patina.v1.Buffers`, used by `patina-lsp`): an unsaved buffer is set as the
//! overlay of its file in the repository's index ([`patina_index::RepoIndex::set_overlay`]) and the
//! file is indexed at once, so the next query sees what the editor shows; clearing the overlay
//! (buffer saved or closed) indexes the file from disk again. Overlays are the daemon's memory
//! only — every client sees them, a restart drops them. Knows nothing of gRPC.

use std::path::{Component, Path};
use std::time::Duration;

use anyhow::Result;
use patina_index::Progress;

use patina_core::UserError;

use crate::services::embedding::Semantic;
use crate::state::repos::Repos;
use crate::state::schedule::{Change, Scheduler};

/// What setting a buffer did.
pub(crate) struct BufferSet {
    pub repo_id: String,
    /// Relative to the repository root.
    pub path: String,
    /// The file was indexed (and embedded, with semantic search on) within the wait.
    pub indexed: bool,
    pub overlays: usize,
}

/// Set (`Some`) or clear (`None`) the overlay of the file at the absolute `path`, then index it,
/// waiting at most `wait` for the round (and the embeddings) to finish.
pub(crate) async fn set(
    repos: &Repos,
    scheduler: &dyn Scheduler,
    semantic: &Semantic,
    path: &str,
    text: Option<String>,
    wait: Duration,
) -> Result<BufferSet> {
    let abs = Path::new(path);
    if !abs.is_absolute() {
        return Err(UserError::Invalid(format!("'{path}' is not an absolute path")).into());
    }
    let repo = repos.resolve(path)?;
    let canonical = std::fs::canonicalize(abs).unwrap_or_else(|_| abs.to_path_buf());
    let rel = canonical
        .strip_prefix(repo.root())
        .ok()
        .filter(|r| {
            r.components().next().is_some()
                && r.components().all(|c| matches!(c, Component::Normal(_)))
        })
        .and_then(|r| r.to_str())
        .map(|r| r.replace('\\', "/"))
        .ok_or_else(|| {
            UserError::Unregistered(format!("'{path}' is not a file of a registered repository"))
        })?;
    repo.index().set_overlay(&rel, text);
    repo.mark_dirty(false, [rel.clone()]);
    let mut rx = scheduler.schedule(&repo, Change::None);
    let deadline = tokio::time::Instant::now() + wait;
    let mut indexed = !wait.is_zero()
        && tokio::time::timeout_at(deadline, rx.wait_for(Progress::finished))
            .await
            .is_ok();
    if indexed && semantic.is_on() {
        while repo.backlog() > 0 {
            if tokio::time::Instant::now() >= deadline {
                indexed = false;
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    Ok(BufferSet {
        repo_id: repo.id().to_string(),
        path: rel,
        indexed,
        overlays: repo.index().overlay_count(),
    })
}
