//! Durable metadata in sled: the repository registry, per-file records (what was indexed, or why a
//! file was skipped) and per-chunk metadata and text. All on-disk layout knowledge lives here, so
//! the store can be swapped without touching the rest of Patina.
//!
//! Trees: `repos` (repo id → [`RepoRecord`]), and per repository `files/<id>` (path →
//! [`FileRecord`]), `chunks/<id>` (chunk id → where its [`ChunkMeta`] and its text are in the
//! repository's chunk log, `chunks/<id>.<generation>` beside sled: [`ChunkLog`]; releases before
//! the twenty-second session kept the JSON metadata in the row and the text in a `texts/<id>`
//! tree, moved out when the repository is opened), `graph/<id>` (path → [`FileFacts`], the
//! file's references, imports and type relations, in
//! [`FileFacts::encode`]'s compact binary form; JSON records of earlier versions are still read).
//! Daemon-wide: `sessions`, `notes`, `feedback` (id → [`FeedbackRecord`]) and `marks`. The
//! embedding cache is not in sled but beside it, in the store
//! directory's `embeddings/` ([`EmbeddingCache`]); a store whose `embeddings` tree an earlier
//! release filled has it moved there when it is opened.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use patina_core::{ChunkMeta, FileFacts, FileRecord};

use crate::chunk_log::{BlockLoc, ChunkLog, Gone};
pub use crate::embedding_cache::EmbeddingCache;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RepoRecord {
    pub id: String,
    pub name: String,
    pub root: String,
    pub added_unix_ms: i64,
    pub last_indexed_unix_ms: i64,
    pub last_index_ms: u64,
    pub files: u64,
    pub chunks: u64,
    pub skipped: BTreeMap<String, u64>,
    pub skipped_examples: BTreeMap<String, Vec<String>>,
    pub languages: BTreeMap<String, u64>,
    pub last_error: Option<String>,
    /// The commit HEAD named when the last index round started (None outside git).
    #[serde(default)]
    pub indexed_commit: Option<String>,
    /// The [`patina_chunk::VERSION`] of the last full round (0: before versions were recorded).
    #[serde(default)]
    pub chunker: u32,
    /// The [`patina_chunk::GRAPH_VERSION`] of the last full round (0: before graph facts).
    #[serde(default)]
    pub graph: u32,
    /// The personal-data masking rules of the last full round (`Scrubber::fingerprint`; "" =
    /// none): chunks made under other rules are made again.
    #[serde(default)]
    pub scrub: String,
    /// The `[index] max_chunk_lines` of the last full round (0: before it was recorded): chunks
    /// split at another length are split again.
    #[serde(default)]
    pub chunk_lines: usize,
}

/// The page cache of [`Store::open`].
pub const DEFAULT_CACHE_BYTES: u64 = 64 * 1024 * 1024;

#[derive(Clone)]
pub struct Store {
    db: sled::Db,
    repos: sled::Tree,
    embeddings: EmbeddingCache,
    marks: sled::Tree,
    /// Where the repositories' chunk logs live ([`ChunkLog`]).
    logs_dir: PathBuf,
    /// The open chunk logs, one per repository however often its trees are asked for (two
    /// writers, or an open that deletes what another is writing, would lose chunks).
    logs: Arc<Mutex<HashMap<String, Weak<ChunkLog>>>>,
}

/// The sled tree where releases before the thirteenth session kept the embedding cache.
const OLD_EMBEDDINGS: &str = "embeddings";

impl Store {
    pub fn open(dir: &Path) -> Result<Store> {
        Store::open_with_cache(dir, DEFAULT_CACHE_BYTES)
    }

    /// [`Store::open`] with a page cache of at most `cache_bytes` (sled's own default is 1 GiB,
    /// and it fills it: the cache is most of what a lexical-only daemon holds).
    pub fn open_with_cache(dir: &Path, cache_bytes: u64) -> Result<Store> {
        let db = sled::Config::new()
            .path(dir)
            .cache_capacity(cache_bytes)
            .flush_every_ms(Some(1000))
            .open()
            .with_context(|| format!("opening the metadata store at {}", dir.display()))?;
        let repos = db.open_tree("repos")?;
        let embeddings = EmbeddingCache::open(&dir.join("embeddings"))?;
        move_old_embeddings(&db, &embeddings)?;
        let marks = db.open_tree("marks")?;
        Ok(Store {
            db,
            repos,
            embeddings,
            marks,
            logs_dir: dir.join("chunks"),
            logs: Default::default(),
        })
    }

    pub fn repos(&self) -> Result<Vec<RepoRecord>> {
        let mut out = Vec::new();
        for item in self.repos.iter() {
            let (_, v) = item?;
            out.push(serde_json::from_slice(&v).context("decoding a repository record")?);
        }
        Ok(out)
    }

    pub fn put_repo(&self, rec: &RepoRecord) -> Result<()> {
        self.repos
            .insert(rec.id.as_bytes(), serde_json::to_vec(rec)?)?;
        Ok(())
    }

    /// Forget a repository and everything stored for it.
    pub fn remove_repo(&self, id: &str) -> Result<()> {
        self.repos.remove(id.as_bytes())?;
        // An earlier release's mark that the repository's rows and texts were paired.
        self.marks.remove(format!("texts-paired/{id}").as_bytes())?;
        for kind in ["files", "chunks", "texts", "graph"] {
            self.db.drop_tree(format!("{kind}/{id}"))?;
        }
        self.flush()?;
        self.logs.lock().expect("chunk logs").remove(id);
        ChunkLog::remove_all(&self.logs_dir, id)
    }

    pub fn repo_trees(&self, id: &str) -> Result<RepoTrees> {
        let chunks = self.db.open_tree(format!("chunks/{id}"))?;
        let log = {
            let mut logs = self.logs.lock().expect("chunk logs");
            match logs.get(id).and_then(Weak::upgrade) {
                Some(log) => log,
                None => {
                    let mut referenced = Vec::new();
                    for v in chunks.iter().values() {
                        if let Some(row) = ChunkRow::decode(&v?) {
                            referenced.extend([row.meta, row.text]);
                        }
                    }
                    let log = Arc::new(ChunkLog::open(&self.logs_dir, id, &referenced)?);
                    logs.insert(id.to_string(), Arc::downgrade(&log));
                    log
                }
            }
        };
        let old = format!("texts/{id}");
        if self.db.tree_names().iter().any(|n| n == old.as_bytes()) {
            move_old_rows(&self.db, &old, &chunks, &log)?;
        }
        Ok(RepoTrees {
            files: self.db.open_tree(format!("files/{id}"))?,
            chunks,
            log,
            facts: self.db.open_tree(format!("graph/{id}"))?,
            writing: Default::default(),
        })
    }

    pub fn flush(&self) -> Result<()> {
        self.db.flush()?;
        Ok(())
    }

    /// The embedding cache, shared by every repository: content key → vector.
    pub fn embeddings(&self) -> EmbeddingCache {
        self.embeddings.clone()
    }
}

/// Move the vectors an earlier release cached in sled's `embeddings` tree into `cache`, then drop
/// the tree. Interrupted, it is done again at the next open (keys already moved are skipped).
fn move_old_embeddings(db: &sled::Db, cache: &EmbeddingCache) -> Result<()> {
    if !db
        .tree_names()
        .iter()
        .any(|n| n == OLD_EMBEDDINGS.as_bytes())
    {
        return Ok(());
    }
    let tree = db.open_tree(OLD_EMBEDDINGS)?;
    let mut moved = 0usize;
    let mut batch: Vec<([u8; 32], Vec<f32>)> = Vec::new();
    let flush = |batch: &mut Vec<([u8; 32], Vec<f32>)>| -> Result<()> {
        let items: Vec<([u8; 32], &[f32])> =
            batch.iter().map(|(k, v)| (*k, v.as_slice())).collect();
        cache.put_many(&items)?;
        batch.clear();
        Ok(())
    };
    for item in tree.iter() {
        let (k, v) = item?;
        let Ok(key) = <[u8; 32]>::try_from(k.as_ref()) else {
            continue;
        };
        batch.push((
            key,
            v.chunks_exact(4)
                .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
                .collect(),
        ));
        moved += 1;
        if batch.len() == 1024 {
            flush(&mut batch)?;
        }
    }
    flush(&mut batch)?;
    cache.sync()?;
    drop(tree);
    db.drop_tree(OLD_EMBEDDINGS)?;
    db.flush()?;
    tracing::info!(
        vectors = moved,
        "moved the embedding cache out of sled into its own files"
    );
    Ok(())
}

/// A chunk row in `chunks/<id>`: where the chunk's metadata (JSON) and its text are in the
/// repository's [`ChunkLog`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ChunkRow {
    meta: BlockLoc,
    text: BlockLoc,
}

/// The first byte of a [`ChunkRow`] (an earlier release's rows are JSON, starting with `{`).
const ROW_TAG: u8 = b'B';
const ROW_LEN: usize = 1 + 2 * BlockLoc::ENCODED;

impl ChunkRow {
    fn encode(&self) -> [u8; ROW_LEN] {
        let mut b = [0u8; ROW_LEN];
        b[0] = ROW_TAG;
        b[1..1 + BlockLoc::ENCODED].copy_from_slice(&self.meta.encode());
        b[1 + BlockLoc::ENCODED..].copy_from_slice(&self.text.encode());
        b
    }

    fn decode(v: &[u8]) -> Option<ChunkRow> {
        if v.len() != ROW_LEN || v[0] != ROW_TAG {
            return None;
        }
        Some(ChunkRow {
            meta: BlockLoc::decode(&v[1..1 + BlockLoc::ENCODED])?,
            text: BlockLoc::decode(&v[1 + BlockLoc::ENCODED..])?,
        })
    }

    /// The row of the blocks appended for one chunk: its metadata's, then its text's.
    fn of(at: &[BlockLoc]) -> ChunkRow {
        ChunkRow {
            meta: at[0],
            text: at[1],
        }
    }
}

/// Move the chunks an earlier release kept in sled — JSON metadata in `chunks`, texts in the
/// `old` tree — into `log`, rewriting each row as a [`ChunkRow`], then drop `old`. A row without
/// its text (a crash between an earlier release's two writes) is dropped: the file record that
/// points at it is then dangling, and the next round reads that file again. A text without its
/// row goes with the tree. Interrupted, it is done again at the next open (rows moved already are
/// skipped).
fn move_old_rows(db: &sled::Db, old: &str, chunks: &sled::Tree, log: &ChunkLog) -> Result<()> {
    type Pending = Vec<(sled::IVec, sled::IVec, sled::IVec)>;
    let texts = db.open_tree(old)?;
    let (mut moved, mut dropped) = (0usize, 0usize);
    let mut pending: Pending = Vec::new();
    let flush = |pending: &mut Pending| -> Result<()> {
        let items: Vec<&[u8]> = pending
            .iter()
            .flat_map(|(_, meta, text)| [meta.as_ref(), text.as_ref()])
            .collect();
        let places = log.append(&items)?;
        let mut rows = sled::Batch::default();
        for ((k, _, _), at) in pending.iter().zip(places.chunks_exact(2)) {
            rows.insert(k, &ChunkRow::of(at).encode()[..]);
        }
        chunks.apply_batch(rows)?;
        pending.clear();
        Ok(())
    };
    for item in chunks.iter() {
        let (k, v) = item?;
        if ChunkRow::decode(&v).is_some() {
            continue;
        }
        match texts.get(&k)? {
            Some(text) => {
                pending.push((k, v, text));
                moved += 1;
            }
            None => {
                chunks.remove(&k)?;
                dropped += 1;
            }
        }
        if pending.len() == 1024 {
            flush(&mut pending)?;
        }
    }
    flush(&mut pending)?;
    chunks.flush()?;
    drop(texts);
    db.drop_tree(old)?;
    db.flush()?;
    tracing::info!(
        chunks = moved,
        without_text = dropped,
        "moved a repository's chunk rows and texts out of sled into its chunk log"
    );
    Ok(())
}

/// The per-repository trees.
#[derive(Clone)]
pub struct RepoTrees {
    files: sled::Tree,
    /// Chunk id → [`ChunkRow`] in `log`.
    chunks: sled::Tree,
    log: Arc<ChunkLog>,
    facts: sled::Tree,
    /// Held by [`RepoTrees::apply`]: one writer at a time.
    writing: Arc<Mutex<()>>,
}

impl RepoTrees {
    /// Every file's graph facts in path order, decoded one at a time (a graph build holds its
    /// compact form, never every file's decoded facts at once).
    pub fn each_facts(&self) -> impl Iterator<Item = Result<(String, FileFacts)>> + '_ {
        self.facts.iter().map(|item| {
            let (k, v) = item?;
            let path = String::from_utf8(k.to_vec()).context("facts key is not UTF-8")?;
            Ok((path, FileFacts::decode(&v).map_err(anyhow::Error::msg)?))
        })
    }

    /// One file's graph facts (`None`: it has none).
    pub fn facts(&self, path: &str) -> Result<Option<FileFacts>> {
        match self.facts.get(path.as_bytes())? {
            Some(v) => Ok(Some(FileFacts::decode(&v).map_err(anyhow::Error::msg)?)),
            None => Ok(None),
        }
    }

    pub fn file_records(&self) -> Result<Vec<(String, FileRecord)>> {
        let mut out = Vec::new();
        for item in self.files.iter() {
            let (k, v) = item?;
            let path = String::from_utf8(k.to_vec()).context("file key is not UTF-8")?;
            out.push((
                path,
                serde_json::from_slice(&v).context("decoding a file record")?,
            ));
        }
        Ok(out)
    }

    /// The records of the files below directory `dir` (a prefix scan: `dir/…`).
    pub fn file_records_under(&self, dir: &str) -> Result<Vec<(String, FileRecord)>> {
        let mut out = Vec::new();
        for item in self.files.scan_prefix(format!("{dir}/").as_bytes()) {
            let (k, v) = item?;
            let path = String::from_utf8(k.to_vec()).context("file key is not UTF-8")?;
            out.push((
                path,
                serde_json::from_slice(&v).context("decoding a file record")?,
            ));
        }
        Ok(out)
    }

    pub fn file_record(&self, path: &str) -> Result<Option<FileRecord>> {
        match self.files.get(path.as_bytes())? {
            Some(v) => Ok(Some(serde_json::from_slice(&v)?)),
            None => Ok(None),
        }
    }

    pub fn chunk_metas(&self) -> Result<Vec<(u64, ChunkMeta)>> {
        let mut out = Vec::new();
        for item in self.chunks.iter() {
            let (k, v) = item?;
            let id = key_id(&k);
            if let Some(meta) = self.meta_of(id, &v)? {
                out.push((id, meta));
            }
        }
        Ok(out)
    }

    /// The metadata a row points at (`None`: the chunk was removed since the row was read).
    fn meta_of(&self, id: u64, row: &[u8]) -> Result<Option<ChunkMeta>> {
        let Some(decoded) = ChunkRow::decode(row) else {
            // An earlier release's row (moved out at open; read as it is should one remain).
            return serde_json::from_slice(row)
                .map(Some)
                .context("decoding chunk metadata");
        };
        match self.log.read(decoded.meta) {
            Ok(bytes) => Ok(Some(
                serde_json::from_slice(&bytes).context("decoding chunk metadata")?,
            )),
            // Compacted since the row was read: read it again.
            Err(e) if e.downcast_ref::<Gone>().is_some() => {
                match self.chunks.get(id.to_be_bytes())? {
                    Some(v) if v.as_ref() != row => self.meta_of(id, &v),
                    _ => Ok(None),
                }
            }
            Err(e) => Err(e),
        }
    }

    pub fn text(&self, chunk_id: u64) -> Result<Option<String>> {
        // A compaction may move the text between reading its row and reading it: read again.
        for _ in 0..3 {
            let Some(v) = self.chunks.get(chunk_id.to_be_bytes())? else {
                return Ok(None);
            };
            let row = ChunkRow::decode(&v).context("a chunk row of an earlier release")?;
            match self.log.read(row.text) {
                Ok(text) => return Ok(Some(String::from_utf8_lossy(&text).into_owned())),
                Err(e) if e.downcast_ref::<Gone>().is_some() => continue,
                Err(e) => return Err(e),
            }
        }
        anyhow::bail!("chunk {chunk_id:x}'s text kept moving")
    }

    /// Remove a chunk's row and nothing else (what a crash of an earlier release could leave).
    #[cfg(test)]
    pub(crate) fn drop_row(&self, id: u64) -> Result<()> {
        self.chunks.remove(id.to_be_bytes())?;
        self.chunks.flush()?;
        Ok(())
    }

    /// The repository's chunk log: bytes on disk, and those of them rows refer to.
    pub fn log_sizes(&self) -> (u64, u64) {
        self.log.sizes()
    }

    /// Apply one indexing batch: file records to write or delete, chunks to add and remove. Durable
    /// when it returns (sled's `flush` fsyncs), so the order "lexical index, then store" holds
    /// across a crash at every commit point, not only once sled's background flush has run.
    pub fn apply(&self, batch: &StoreBatch) -> Result<()> {
        let _writing = self.writing.lock().expect("store writer");
        let mut files = sled::Batch::default();
        let mut chunks = sled::Batch::default();
        let mut facts = sled::Batch::default();
        // Metadata and texts first, on disk before any row points at them.
        let metas = batch
            .added_chunks
            .iter()
            .map(|(_, meta, _)| serde_json::to_vec(meta))
            .collect::<Result<Vec<_>, _>>()?;
        let items: Vec<&[u8]> = metas
            .iter()
            .zip(&batch.added_chunks)
            .flat_map(|(meta, (_, _, text))| [meta.as_slice(), text.as_bytes()])
            .collect();
        let places = self.log.append(&items)?;
        // The blocks rows stop pointing at: a round removes a chunk before it writes it again, so
        // the removed ids are the rows replaced (no lookup per added chunk on a bulk round's path;
        // should an id be overwritten without, only the garbage count is low until the next open
        // counts it afresh).
        let removed: HashSet<u64> = batch.removed_chunks.iter().copied().collect();
        let mut replaced = Vec::new();
        for id in removed {
            if let Some(row) = self.chunks.get(id.to_be_bytes())? {
                replaced.extend(ChunkRow::decode(&row));
            }
        }
        for (path, f) in &batch.facts {
            match f {
                Some(f) => facts.insert(path.as_bytes(), f.encode()),
                None => facts.remove(path.as_bytes()),
            }
        }
        for id in &batch.removed_chunks {
            chunks.remove(&id.to_be_bytes());
        }
        for ((id, _, _), at) in batch.added_chunks.iter().zip(places.chunks_exact(2)) {
            chunks.insert(&id.to_be_bytes(), &ChunkRow::of(at).encode()[..]);
        }
        for (path, rec) in &batch.files {
            match rec {
                Some(rec) => files.insert(path.as_bytes(), serde_json::to_vec(rec)?),
                None => files.remove(path.as_bytes()),
            }
        }
        // Chunk rows (each with its text: one row), then files last: a file record only ever
        // points at chunks that exist.
        self.chunks.apply_batch(chunks)?;
        for row in replaced {
            self.log.forget(row.meta);
            self.log.forget(row.text);
        }
        self.facts.apply_batch(facts)?;
        crate::crash_point("store-chunks", || {
            let _ = self.chunks.flush();
        });
        self.files.apply_batch(files)?;
        self.files.flush()?;
        if self.log.wants_compaction() {
            self.compact_log()?;
        }
        Ok(())
    }

    /// Copy the live blocks into a new generation, point their rows there a batch at a time, and
    /// delete the old generation (see [`ChunkLog`]). Under `writing`.
    fn compact_log(&self) -> Result<()> {
        let (disk, live) = self.log.sizes();
        let generation = self.log.roll()?;
        let mut pending: Vec<(sled::IVec, ChunkRow)> = Vec::new();
        let flush = |pending: &mut Vec<(sled::IVec, ChunkRow)>| -> Result<()> {
            let old: Vec<BlockLoc> = pending.iter().flat_map(|(_, r)| [r.meta, r.text]).collect();
            let new = self.log.copy(&old)?;
            let mut b = sled::Batch::default();
            for ((k, _), at) in pending.iter().zip(new.chunks_exact(2)) {
                b.insert(k, &ChunkRow::of(at).encode()[..]);
            }
            self.chunks.apply_batch(b)?;
            pending.clear();
            Ok(())
        };
        for item in self.chunks.iter() {
            let (k, v) = item?;
            match ChunkRow::decode(&v) {
                Some(row) if row.text.generation() != generation => pending.push((k, row)),
                _ => {}
            }
            if pending.len() == 4096 {
                flush(&mut pending)?;
            }
        }
        flush(&mut pending)?;
        self.chunks.flush()?;
        self.log.retire();
        tracing::debug!(disk, live, "chunk log compacted");
        Ok(())
    }
}

#[derive(Default)]
pub struct StoreBatch {
    pub files: Vec<(String, Option<FileRecord>)>,
    pub added_chunks: Vec<(u64, ChunkMeta, String)>,
    pub removed_chunks: Vec<u64>,
    /// Graph facts to write (`None`: the file has none any more).
    pub facts: Vec<(String, Option<std::sync::Arc<FileFacts>>)>,
}

impl StoreBatch {
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
            && self.added_chunks.is_empty()
            && self.removed_chunks.is_empty()
            && self.facts.is_empty()
    }
}

fn key_id(k: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&k[..8]);
    u64::from_be_bytes(b)
}

/// A working session (see `sessions.rs`), keyed by its name in the `sessions` tree.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SessionRecord {
    pub name: String,
    /// The repository the session is about (its notes then surface only for queries that include
    /// it); `None` = every query.
    pub repo_id: Option<String>,
    pub goal: String,
    pub started_unix_ms: i64,
    /// `None` while the session is open.
    pub ended_unix_ms: Option<i64>,
}

/// A note of a session, keyed by a daemon-wide id (sled's monotonic id generator, big-endian) in
/// the `notes` tree.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct NoteRecord {
    pub session: String,
    /// 1-based number of the note within its session.
    pub seq: u32,
    pub text: String,
    pub tags: Vec<String>,
    pub created_unix_ms: i64,
    /// The writer's idempotency key: a retried call with the same key gets this note back
    /// instead of a second copy. Stored in the note itself, so the note and its key are one write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// The session trees: `sessions` (name → [`SessionRecord`]) and `notes` (id → [`NoteRecord`]).
/// Every write is flushed to disk (sled's `flush` fsyncs) before it returns, so an acknowledged
/// note survives a crash.
#[derive(Clone)]
pub struct SessionTrees {
    db: sled::Db,
    sessions: sled::Tree,
    notes: sled::Tree,
}

impl Store {
    pub fn sessions(&self) -> Result<SessionTrees> {
        Ok(SessionTrees {
            db: self.db.clone(),
            sessions: self.db.open_tree("sessions")?,
            notes: self.db.open_tree("notes")?,
        })
    }
}

impl SessionTrees {
    pub fn all_sessions(&self) -> Result<Vec<SessionRecord>> {
        let mut out = Vec::new();
        for item in self.sessions.iter() {
            let (_, v) = item?;
            out.push(serde_json::from_slice(&v).context("decoding a session record")?);
        }
        Ok(out)
    }

    pub fn all_notes(&self) -> Result<Vec<(u64, NoteRecord)>> {
        let mut out = Vec::new();
        for item in self.notes.iter() {
            let (k, v) = item?;
            out.push((
                key_id(&k),
                serde_json::from_slice(&v).context("decoding a note")?,
            ));
        }
        Ok(out)
    }

    /// Write a session record, durably.
    pub fn put_session(&self, rec: &SessionRecord) -> Result<()> {
        self.sessions
            .insert(rec.name.as_bytes(), serde_json::to_vec(rec)?)?;
        self.db.flush()?;
        Ok(())
    }

    /// Store a note durably and return its id.
    pub fn add_note(&self, rec: &NoteRecord) -> Result<u64> {
        let id = self.db.generate_id()?;
        self.notes
            .insert(id.to_be_bytes(), serde_json::to_vec(rec)?)?;
        self.db.flush()?;
        crate::crash_point("note-stored", || {});
        Ok(id)
    }
}

/// Feedback on one answer (`Feedback.Record`), keyed by a daemon-wide id (big-endian) in the
/// `feedback` tree.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct FeedbackRecord {
    /// The answer's query id.
    pub query_id: String,
    /// The question, when the daemon still remembered the answer.
    #[serde(default)]
    pub query: String,
    /// The answer's results (`path:start-end`), when remembered.
    #[serde(default)]
    pub hits: Vec<String>,
    pub used: Vec<String>,
    pub unhelpful: Vec<String>,
    /// 1..=5.
    pub rating: Option<u8>,
    /// Inferred from what the agent did (it read a hit), not said.
    pub implicit: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    pub created_unix_ms: i64,
}

/// The `feedback` tree. Every write is flushed (fsync'd) before it returns.
#[derive(Clone)]
pub struct FeedbackTree {
    db: sled::Db,
    tree: sled::Tree,
}

impl Store {
    pub fn feedback(&self) -> Result<FeedbackTree> {
        Ok(FeedbackTree {
            db: self.db.clone(),
            tree: self.db.open_tree("feedback")?,
        })
    }
}

impl FeedbackTree {
    /// Store a record durably and return its id.
    pub fn add(&self, rec: &FeedbackRecord) -> Result<u64> {
        let id = self.db.generate_id()?;
        self.tree
            .insert(id.to_be_bytes(), serde_json::to_vec(rec)?)?;
        self.db.flush()?;
        Ok(id)
    }

    /// Every record, oldest first.
    pub fn all(&self) -> Result<Vec<(u64, FeedbackRecord)>> {
        let mut out = Vec::new();
        for item in self.tree.iter() {
            let (k, v) = item?;
            out.push((
                key_id(&k),
                serde_json::from_slice(&v).context("decoding a feedback record")?,
            ));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
