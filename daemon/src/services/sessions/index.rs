//! The in-memory note index: every session and note, and per note its topic terms (code-aware
//! tokens of its text and tags, stop words dropped) with the document frequencies BM25 needs.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use anyhow::Result;
use patina_embed::DIM;

use super::search::is_topic_word;
use patina_core::UserError;
use patina_core::tokens::for_each_token;
use patina_index::store::{NoteRecord, SessionRecord};

#[derive(Default)]
pub(super) struct State {
    pub sessions: BTreeMap<String, SessionRecord>,
    pub notes: BTreeMap<u64, NoteDoc>,
    /// Number of notes per session (the last note number).
    pub counts: HashMap<String, u32>,
    /// Idempotency key → the note stored under it.
    pub keys: HashMap<String, u64>,
    /// Notes containing each term.
    pub df: HashMap<String, u32>,
    pub total_len: u64,
}

pub(super) struct NoteDoc {
    pub rec: NoteRecord,
    pub terms: HashMap<String, u32>,
    pub len: u32,
    pub vector: Option<Arc<[f32; DIM]>>,
}

impl State {
    pub fn session(&self, name: &str) -> Result<&SessionRecord> {
        self.sessions.get(name).ok_or_else(|| {
            UserError::NotFound(format!(
                "no session named '{name}'; start one first (patina_session_start)"
            ))
            .into()
        })
    }

    pub fn insert(&mut self, id: u64, rec: NoteRecord) {
        let mut terms: HashMap<String, u32> = HashMap::new();
        let mut len = 0u32;
        let mut add = |t: &str| {
            if is_topic_word(t) {
                *terms.entry(t.to_string()).or_insert(0) += 1;
                len += 1;
            }
        };
        for_each_token(&rec.text, |_, _, t| add(t));
        for tag in &rec.tags {
            for_each_token(tag, |_, _, t| add(t));
        }
        for t in terms.keys() {
            *self.df.entry(t.clone()).or_insert(0) += 1;
        }
        self.total_len += len as u64;
        if let Some(key) = &rec.key {
            self.keys.insert(key.clone(), id);
        }
        let count = self.counts.entry(rec.session.clone()).or_insert(0);
        *count = (*count).max(rec.seq);
        self.notes.insert(
            id,
            NoteDoc {
                rec,
                terms,
                len,
                vector: None,
            },
        );
    }
}
