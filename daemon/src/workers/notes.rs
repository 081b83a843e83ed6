//! The note embedder: one thread that embeds session notes the model has no vector for yet (those
//! loaded at start, and retries), from [`Sessions::embedding_queue`].

use std::sync::Arc;

use crate::services::sessions::Sessions;

/// Start the note embedder (with the model on; otherwise nothing to do). It ends with the
/// sessions.
pub(crate) fn spawn(sessions: &Arc<Sessions>) {
    let Some(rx) = sessions.embedding_queue() else {
        return;
    };
    let weak = Arc::downgrade(sessions);
    let spawned = std::thread::Builder::new()
        .name("patina-notes".into())
        .spawn(move || {
            while let Ok(id) = rx.recv() {
                let Some(sessions) = weak.upgrade() else {
                    break;
                };
                if let Err(e) = sessions.embed_note(id) {
                    tracing::warn!(note = id, "cannot embed a session note: {e:#}");
                }
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("cannot start the note embedder: {e}");
    }
}
