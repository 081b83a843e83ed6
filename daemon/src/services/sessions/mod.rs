//! Working sessions: named scratchpads an agent (through `patina-mcp`) writes notes into while it
//! works — decisions, findings, dead ends. Notes are stored durably (each write is fsync'd before
//! it is acknowledged) and searched by the `session` oracle (`oracles/session.rs`), so what one
//! session learned surfaces in later queries, across repositories and daemon restarts.
//!
//! A note is addressed as `session:<name>#<n>` (its session and 1-based number). Ranking: BM25 over
//! the code-aware tokens of each note (stop words dropped), blended with the cosine similarity of
//! the note's and the query's embeddings when the semantic model is on. A session started for one
//! repository only contributes to queries whose scope includes that repository.
//!
//! Layout: this file holds the sessions' lifecycle (start, note, end, list) and the views the rest
//! of the daemon sees; `index` the in-memory note index (terms, document frequencies) and `search`
//! the ranking of notes for the session oracle; `embed` the notes' embeddings (cached, background
//! retries); `names` the validation of names and tags and generated session names.

mod embed;
mod index;
mod names;
mod search;

use std::sync::{Arc, Mutex, RwLock, mpsc};

use anyhow::Result;

use crate::services::embedding::Semantic;
use crate::state::generations::Generations;
use index::State;
use names::{generated_name, validate_name, validate_tags};
use patina_core::UserError;
use patina_index::store::{EmbeddingCache, NoteRecord, SessionRecord, SessionTrees, Store};

pub(crate) const MAX_NOTE_BYTES: usize = 32 * 1024;
const MAX_GOAL_BYTES: usize = 4 * 1024;
const MAX_NAME_LEN: usize = 64;
const MAX_TAGS: usize = 16;
const MAX_TAG_LEN: usize = 64;
const MAX_KEY_LEN: usize = 128;

pub(crate) struct Sessions {
    trees: SessionTrees,
    semantic: Arc<Semantic>,
    generations: Arc<Generations>,
    cache: EmbeddingCache,
    /// Serialises writers: note numbers are allocated under it.
    write: Mutex<()>,
    state: RwLock<State>,
    /// Notes to embed, for the background embedder (semantic search on only).
    embed_tx: Mutex<Option<mpsc::Sender<u64>>>,
}

/// A note as the rest of the daemon sees it.
#[derive(Clone, Debug)]
pub(crate) struct NoteView {
    pub id: u64,
    pub session: String,
    pub seq: u32,
    pub text: String,
    pub tags: Vec<String>,
    pub created_unix_ms: i64,
}

impl NoteView {
    /// `session:<name>#<n>`: how hits and context attribute the note.
    pub fn reference(&self) -> String {
        note_ref(&self.session, self.seq)
    }
}

pub(crate) fn note_ref(session: &str, seq: u32) -> String {
    format!("session:{session}#{seq}")
}

/// A session and how many notes it holds.
#[derive(Clone, Debug)]
pub(crate) struct SessionView {
    pub rec: SessionRecord,
    pub notes: u32,
}

fn view(id: u64, rec: &NoteRecord) -> NoteView {
    NoteView {
        id,
        session: rec.session.clone(),
        seq: rec.seq,
        text: rec.text.clone(),
        tags: rec.tags.clone(),
        created_unix_ms: rec.created_unix_ms,
    }
}

fn invalid(msg: String) -> anyhow::Error {
    UserError::Invalid(msg).into()
}

impl Sessions {
    /// Load every session and note (the note embedder worker embeds them: `crate::workers::notes`).
    pub fn open(
        store: &Store,
        semantic: Arc<Semantic>,
        generations: Arc<Generations>,
    ) -> Result<Arc<Sessions>> {
        let trees = store.sessions()?;
        let mut state = State::default();
        for rec in trees.all_sessions()? {
            state.sessions.insert(rec.name.clone(), rec);
        }
        for (id, rec) in trees.all_notes()? {
            state.insert(id, rec);
        }
        tracing::info!(
            sessions = state.sessions.len(),
            notes = state.notes.len(),
            "sessions loaded"
        );
        let this = Arc::new(Sessions {
            trees,
            semantic,
            generations,
            cache: store.embeddings(),
            write: Mutex::new(()),
            state: RwLock::new(state),
            embed_tx: Mutex::new(None),
        });
        Ok(this)
    }

    /// Start a session, or resume it when one with that name exists (reopening it if it ended).
    /// An empty name gets a generated one (`YYYYMMDD-HHMMSS`, UTC). Returns the session and whether
    /// it was resumed.
    pub fn start(
        &self,
        name: &str,
        repo_id: Option<String>,
        goal: &str,
    ) -> Result<(SessionView, bool)> {
        let name = name.trim();
        let goal = goal.trim();
        if goal.len() > MAX_GOAL_BYTES {
            return Err(invalid(format!(
                "the goal is {} bytes; keep it under {MAX_GOAL_BYTES}",
                goal.len()
            )));
        }
        let _w = self.write.lock().expect("sessions write lock");
        let (rec, resumed) = {
            let state = self.state.read().expect("sessions lock");
            let name = if name.is_empty() {
                generated_name(&state.sessions)
            } else {
                validate_name(name)?;
                name.to_string()
            };
            match state.sessions.get(&name) {
                Some(old) => {
                    let mut rec = old.clone();
                    rec.ended_unix_ms = None;
                    if !goal.is_empty() {
                        rec.goal = goal.to_string();
                    }
                    if repo_id.is_some() {
                        rec.repo_id = repo_id;
                    }
                    (rec, true)
                }
                None => (
                    SessionRecord {
                        name,
                        repo_id,
                        goal: goal.to_string(),
                        started_unix_ms: crate::process::clock::now_unix_ms(),
                        ended_unix_ms: None,
                    },
                    false,
                ),
            }
        };
        self.trees.put_session(&rec)?;
        self.generations.notes_changed();
        let mut state = self.state.write().expect("sessions lock");
        let notes = state.counts.get(&rec.name).copied().unwrap_or(0);
        state.sessions.insert(rec.name.clone(), rec.clone());
        Ok((SessionView { rec, notes }, resumed))
    }

    /// Add a note to an open session; it is on disk when this returns. A non-empty `key` makes the
    /// call idempotent: when a note was already stored under it (a retry after a lost reply or a
    /// crash), that note is returned and nothing is written.
    pub fn add_note(
        &self,
        session: &str,
        text: &str,
        tags: &[String],
        key: &str,
    ) -> Result<NoteView> {
        if key.len() > MAX_KEY_LEN {
            return Err(invalid(format!(
                "the idempotency key is {} bytes; keep it under {MAX_KEY_LEN}",
                key.len()
            )));
        }
        let text = text.trim();
        if text.is_empty() {
            return Err(invalid("the note is empty".into()));
        }
        if text.len() > MAX_NOTE_BYTES {
            return Err(invalid(format!(
                "the note is {} bytes; notes are limited to {MAX_NOTE_BYTES} bytes — split it",
                text.len()
            )));
        }
        let tags = validate_tags(tags)?;
        let _w = self.write.lock().expect("sessions write lock");
        let seq = {
            let state = self.state.read().expect("sessions lock");
            if let Some(id) = state.keys.get(key).filter(|_| !key.is_empty())
                && let Some(doc) = state.notes.get(id)
            {
                return Ok(view(*id, &doc.rec));
            }
            let rec = state.session(session)?;
            if rec.ended_unix_ms.is_some() {
                return Err(invalid(format!(
                    "session '{session}' has ended; start it again (same name) to add notes"
                )));
            }
            state.counts.get(session).copied().unwrap_or(0) + 1
        };
        let rec = NoteRecord {
            session: session.to_string(),
            seq,
            text: text.to_string(),
            tags,
            created_unix_ms: crate::process::clock::now_unix_ms(),
            key: (!key.is_empty()).then(|| key.to_string()),
        };
        let id = self.trees.add_note(&rec)?;
        let note = view(id, &rec);
        self.state.write().expect("sessions lock").insert(id, rec);
        self.generations.notes_changed();
        // Embed now (a few ms), so the next query already finds the note by meaning; on failure
        // the background embedder retries.
        if self.semantic.is_on()
            && let Err(e) = self.embed_note(id)
        {
            tracing::warn!(
                note = id,
                "embedding a note: {e:#}; retrying in the background"
            );
            if let Some(tx) = self.embed_tx.lock().expect("embed queue lock").as_ref() {
                let _ = tx.send(id);
            }
        }
        Ok(note)
    }

    /// End a session, first adding `summary` (when given) as its last note, tagged `summary`.
    /// Ending an ended session without a summary changes nothing.
    /// `key` as in [`Sessions::add_note`]: a retried end stores its summary once.
    pub fn end(
        &self,
        session: &str,
        summary: &str,
        key: &str,
    ) -> Result<(SessionView, Option<NoteView>)> {
        let note = if summary.trim().is_empty() {
            self.state.read().expect("sessions lock").session(session)?;
            None
        } else {
            Some(self.add_note(session, summary, &["summary".to_string()], key)?)
        };
        let _w = self.write.lock().expect("sessions write lock");
        let mut rec = self
            .state
            .read()
            .expect("sessions lock")
            .session(session)?
            .clone();
        if rec.ended_unix_ms.is_none() {
            rec.ended_unix_ms = Some(crate::process::clock::now_unix_ms());
            self.trees.put_session(&rec)?;
        }
        self.generations.notes_changed();
        let mut state = self.state.write().expect("sessions lock");
        state.sessions.insert(rec.name.clone(), rec.clone());
        let notes = state.counts.get(session).copied().unwrap_or(0);
        Ok((SessionView { rec, notes }, note))
    }

    /// Every session, most recently started first.
    pub fn list(&self) -> Vec<SessionView> {
        let state = self.state.read().expect("sessions lock");
        let mut out: Vec<SessionView> = state
            .sessions
            .values()
            .map(|rec| SessionView {
                rec: rec.clone(),
                notes: state.counts.get(&rec.name).copied().unwrap_or(0),
            })
            .collect();
        out.sort_by(|a, b| {
            b.rec
                .started_unix_ms
                .cmp(&a.rec.started_unix_ms)
                .then(a.rec.name.cmp(&b.rec.name))
        });
        out
    }

    /// The notes of one session, in order.
    pub fn notes_of(&self, session: &str) -> Result<Vec<NoteView>> {
        let state = self.state.read().expect("sessions lock");
        state.session(session)?;
        let mut notes: Vec<NoteView> = state
            .notes
            .iter()
            .filter(|(_, d)| d.rec.session == session)
            .map(|(id, d)| view(*id, &d.rec))
            .collect();
        notes.sort_by_key(|n| n.seq);
        Ok(notes)
    }

    pub fn get_note(&self, id: u64) -> Option<NoteView> {
        let state = self.state.read().expect("sessions lock");
        state.notes.get(&id).map(|d| view(id, &d.rec))
    }
}
