//! Working sessions: named scratchpads an agent (through `patina-mcp`) writes notes into while it
//! works — decisions, findings, dead ends. Notes are stored durably (each write is fsync'd before
//! it is acknowledged) and searched by the `session` oracle (`oracles/session.rs`), so what one
//! session learned surfaces in later queries, across repositories and daemon restarts.
//!
//! A note is addressed as `session:<name>#<n>` (its session and 1-based number). Ranking: BM25 over
//! the code-aware tokens of each note (stop words dropped), blended with the cosine similarity of
//! the note's and the query's embeddings when the semantic model is on. A session started for one
//! repository only contributes to queries whose scope includes that repository.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, RwLock, mpsc};

use anyhow::Result;

use crate::index::tokens::{for_each_token, query_terms};
use crate::registry::UserError;
use crate::semantic::Semantic;
use crate::store::{EmbeddingCache, NoteRecord, SessionRecord, SessionTrees, Store};
use patina_embed::DIM;

pub(crate) const MAX_NOTE_BYTES: usize = 32 * 1024;
const MAX_GOAL_BYTES: usize = 4 * 1024;
const MAX_NAME_LEN: usize = 64;
const MAX_TAGS: usize = 16;
const MAX_TAG_LEN: usize = 64;
const MAX_KEY_LEN: usize = 128;
/// Query terms beyond this many are ignored.
const MAX_TERMS: usize = 64;
/// A note at least this close to the query (cosine) is relevant without sharing a word with it.
const MIN_COSINE: f32 = 0.35;
/// Weight of the (max-normalised) BM25 score next to the cosine when both are available.
const LEXICAL_BLEND: f32 = 0.5;
const BM25_K1: f32 = 1.2;
const BM25_B: f32 = 0.75;

/// Words that carry no topic: a note must share something better with the query to match it.
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "because",
    "been", "but", "by", "can", "could", "did", "do", "does", "for", "from", "had", "has", "have",
    "how", "i", "if", "in", "into", "is", "it", "its", "just", "me", "more", "my", "no", "not",
    "now", "of", "on", "one", "or", "our", "out", "over", "should", "so", "some", "such", "than",
    "that", "the", "their", "them", "then", "there", "these", "they", "this", "to", "too", "up",
    "us", "use", "used", "uses", "using", "was", "we", "were", "what", "when", "where", "which",
    "while", "who", "why", "will", "with", "would", "you", "your",
];

pub(crate) struct Sessions {
    trees: SessionTrees,
    semantic: Arc<Semantic>,
    cache: EmbeddingCache,
    /// Serialises writers: note numbers are allocated under it.
    write: Mutex<()>,
    state: RwLock<State>,
    /// Notes to embed, for the background embedder (semantic search on only).
    embed_tx: Mutex<Option<mpsc::Sender<u64>>>,
}

#[derive(Default)]
struct State {
    sessions: BTreeMap<String, SessionRecord>,
    notes: BTreeMap<u64, NoteDoc>,
    /// Number of notes per session (the last note number).
    counts: HashMap<String, u32>,
    /// Idempotency key → the note stored under it.
    keys: HashMap<String, u64>,
    /// Notes containing each term.
    df: HashMap<String, u32>,
    total_len: u64,
}

struct NoteDoc {
    rec: NoteRecord,
    terms: HashMap<String, u32>,
    len: u32,
    vector: Option<Arc<[f32; DIM]>>,
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
    /// Load every session and note, and (when the model is on) start embedding the notes.
    pub fn open(store: &Store, semantic: Arc<Semantic>) -> Result<Arc<Sessions>> {
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
            cache: store.embeddings(),
            write: Mutex::new(()),
            state: RwLock::new(state),
            embed_tx: Mutex::new(None),
        });
        this.spawn_embedder();
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
                        started_unix_ms: crate::now_unix_ms(),
                        ended_unix_ms: None,
                    },
                    false,
                ),
            }
        };
        self.trees.put_session(&rec)?;
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
            created_unix_ms: crate::now_unix_ms(),
            key: (!key.is_empty()).then(|| key.to_string()),
        };
        let id = self.trees.add_note(&rec)?;
        let note = view(id, &rec);
        self.state.write().expect("sessions lock").insert(id, rec);
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
            rec.ended_unix_ms = Some(crate::now_unix_ms());
            self.trees.put_session(&rec)?;
        }
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

    /// Notes relevant to `text`, best first, at most `limit`: (note id, score). `scope` holds the
    /// ids of the repositories the query covers; notes of sessions tied to another repository are
    /// left out.
    pub fn search(&self, text: &str, limit: usize, scope: &[&str]) -> Result<Vec<(u64, f32)>> {
        let terms: Vec<String> = query_terms(text, MAX_TERMS)
            .into_iter()
            .filter(|t| is_topic_word(t))
            .collect();
        // Lexical only when the model is off (or fails on this query).
        let query_vector = if self.semantic.is_on() {
            self.semantic.embed_query(text).ok()
        } else {
            None
        };
        let state = self.state.read().expect("sessions lock");
        if state.notes.is_empty() {
            return Ok(Vec::new());
        }
        let n = state.notes.len() as f32;
        let avg_len = (state.total_len as f32 / n).max(1.0);
        let idf: Vec<(&str, f32)> = terms
            .iter()
            .filter_map(|t| {
                let df = *state.df.get(t)? as f32;
                Some((t.as_str(), (1.0 + (n - df + 0.5) / (df + 0.5)).ln()))
            })
            .collect();
        let mut scored: Vec<(u64, f32, f32)> = Vec::new();
        for (id, doc) in &state.notes {
            let in_scope = state
                .sessions
                .get(&doc.rec.session)
                .and_then(|s| s.repo_id.as_deref())
                .is_none_or(|r| scope.contains(&r));
            if !in_scope {
                continue;
            }
            let mut bm25 = 0.0;
            for (t, w) in &idf {
                if let Some(&tf) = doc.terms.get(*t) {
                    let tf = tf as f32;
                    let norm = BM25_K1 * (1.0 - BM25_B + BM25_B * doc.len as f32 / avg_len);
                    bm25 += w * tf * (BM25_K1 + 1.0) / (tf + norm);
                }
            }
            let cosine = match (&query_vector, &doc.vector) {
                (Some(q), Some(v)) => cosine(q, v),
                _ => 0.0,
            };
            if bm25 > 0.0 || cosine >= MIN_COSINE {
                scored.push((*id, bm25, cosine));
            }
        }
        let max_bm25 = scored.iter().map(|s| s.1).fold(0.0f32, f32::max);
        let mut out: Vec<(u64, f32)> = scored
            .into_iter()
            .map(|(id, bm25, cos)| {
                let score = if query_vector.is_some() {
                    cos + LEXICAL_BLEND * if max_bm25 > 0.0 { bm25 / max_bm25 } else { 0.0 }
                } else {
                    bm25
                };
                (id, score)
            })
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out.truncate(limit);
        Ok(out)
    }

    /// With the model on: a background thread embeds the notes loaded at start (cached by content
    /// in the embedding cache, so a restart recomputes nothing), and retries failed ones.
    fn spawn_embedder(self: &Arc<Self>) {
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

    fn embed_note(&self, id: u64) -> Result<()> {
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
        Ok(())
    }
}

impl State {
    fn session(&self, name: &str) -> Result<&SessionRecord> {
        self.sessions.get(name).ok_or_else(|| {
            UserError::NotFound(format!(
                "no session named '{name}'; start one first (patina_session_start)"
            ))
            .into()
        })
    }

    fn insert(&mut self, id: u64, rec: NoteRecord) {
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

fn is_topic_word(t: &str) -> bool {
    t.chars().count() >= 2 && !STOP_WORDS.contains(&t)
}

fn cosine(a: &[f32; DIM], b: &[f32; DIM]) -> f32 {
    let (mut dot, mut na, mut nb) = (0.0f32, 0.0f32, 0.0f32);
    for i in 0..DIM {
        dot += a[i] * b[i];
        na += a[i] * a[i];
        nb += b[i] * b[i];
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

/// Names are 1–64 characters of `A-Z a-z 0-9 . _ -`, starting with a letter or digit.
fn validate_name(name: &str) -> Result<()> {
    let ok = name.len() <= MAX_NAME_LEN
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(invalid(format!(
            "invalid session name '{name}': use 1-{MAX_NAME_LEN} letters, digits, '.', '_' or '-', \
             starting with a letter or digit"
        )))
    }
}

fn validate_tags(tags: &[String]) -> Result<Vec<String>> {
    if tags.len() > MAX_TAGS {
        return Err(invalid(format!(
            "{} tags given; at most {MAX_TAGS}",
            tags.len()
        )));
    }
    let mut out = Vec::new();
    for t in tags {
        let t = t.trim();
        if t.is_empty() {
            continue;
        }
        if t.len() > MAX_TAG_LEN {
            return Err(invalid(format!(
                "tag '{t}' is longer than {MAX_TAG_LEN} bytes"
            )));
        }
        if !out.iter().any(|o| o == t) {
            out.push(t.to_string());
        }
    }
    Ok(out)
}

/// `YYYYMMDD-HHMMSS` (UTC) of now, with `-2`, `-3`, … when taken.
fn generated_name(taken: &BTreeMap<String, SessionRecord>) -> String {
    let secs = crate::now_unix_ms().max(0) / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days);
    let base = format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    );
    let mut name = base.clone();
    let mut n = 2;
    while taken.contains_key(&name) {
        name = format!("{base}-{n}");
        n += 1;
    }
    name
}

/// Days since 1970-01-01 to a (year, month, day) of the proleptic Gregorian calendar.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_names() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert!(validate_name("storage-choice_2.b").is_ok());
        for bad in ["", "-x", "a b", "a/b", "session:x", &"x".repeat(65)] {
            assert!(validate_name(bad).is_err(), "{bad:?}");
        }
        assert!(is_topic_word("sled") && !is_topic_word("the") && !is_topic_word("x"));
    }
}
