//! The notes' embeddings: computed when a note is added (a few ms) and, for the notes loaded at
//! start and failed attempts, by the note embedder (`crate::workers::notes`); cached by content in the embedding cache.

use std::sync::{Arc, mpsc};

use anyhow::Result;
use patina_embed::DIM;
use patina_index::embedding_cache::as_stored;

use super::Sessions;

impl Sessions {
    /// With the model on: the queue of notes to embed, filled with the notes loaded at start (cached
    /// by content in the embedding cache, so a restart recomputes nothing); notes added later and
    /// failed attempts join it. `None` with the model off. The note embedder worker drains it.
    pub(crate) fn embedding_queue(&self) -> Option<mpsc::Receiver<u64>> {
        if !self.semantic.is_on() {
            return None;
        }
        let (tx, rx) = mpsc::channel::<u64>();
        for id in self.state.read().expect("sessions lock").notes.keys() {
            let _ = tx.send(*id);
        }
        *self.embed_tx.lock().expect("embed queue lock") = Some(tx);
        Some(rx)
    }

    pub(crate) fn embed_note(&self, id: u64) -> Result<()> {
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
                // What the cache gives back after a restart: the same numbers either way.
                as_stored(&v).try_into().expect("DIM floats")
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
        self.generations.notes_changed();
        Ok(())
    }
}
