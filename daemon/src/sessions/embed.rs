//! The notes' embeddings: computed when a note is added (a few ms) and, for the notes loaded at
//! start and failed attempts, by a background thread; cached by content in the embedding cache.

use std::sync::{Arc, mpsc};

use anyhow::Result;
use patina_embed::DIM;

use super::Sessions;

impl Sessions {
    /// With the model on: a background thread embeds the notes loaded at start (cached by content
    /// in the embedding cache, so a restart recomputes nothing), and retries failed ones.
    pub(super) fn spawn_embedder(self: &Arc<Self>) {
        if !self.semantic.is_on() {
            return;
        }
        let (tx, rx) = mpsc::channel::<u64>();
        for id in self.state.read().expect("sessions lock").notes.keys() {
            let _ = tx.send(*id);
        }
        *self.embed_tx.lock().expect("embed queue lock") = Some(tx);
        let weak = Arc::downgrade(self);
        let spawned = std::thread::Builder::new()
            .name("patina-notes".into())
            .spawn(move || {
                while let Ok(id) = rx.recv() {
                    let Some(this) = weak.upgrade() else { break };
                    if let Err(e) = this.embed_note(id) {
                        tracing::warn!(note = id, "cannot embed a session note: {e:#}");
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::warn!("cannot start the note embedder: {e}");
        }
    }

    pub(super) fn embed_note(&self, id: u64) -> Result<()> {
        let Some(text) = self
            .state
            .read()
            .expect("sessions lock")
            .notes
            .get(&id)
            .map(|d| d.rec.text.clone())
        else {
            return Ok(());
        };
        let key = self.semantic.note_key(&text);
        let vector: [f32; DIM] = match self.cache.get(&key)? {
            Some(v) if v.len() == DIM => v.try_into().expect("DIM floats"),
            _ => {
                let v = self.semantic.embed_query(&text)?;
                self.cache.put_many(&[(key, &v[..])])?;
                v
            }
        };
        if let Some(d) = self
            .state
            .write()
            .expect("sessions lock")
            .notes
            .get_mut(&id)
        {
            d.vector = Some(Arc::new(vector));
        }
        crate::qcache::bump_global();
        Ok(())
    }
}
