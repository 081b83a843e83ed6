//! Durable metadata in sled: the repository registry, per-file records (what was indexed, or why a
//! file was skipped) and per-chunk metadata and text. All on-disk layout knowledge lives here, so
//! the store can be swapped without touching the rest of Patina.
//!
//! Trees: `repos` (repo id → [`RepoRecord`]), and per repository `files/<id>` (path →
//! [`FileRecord`]), `chunks/<id>` (chunk id → [`ChunkMeta`]), `texts/<id>` (chunk id → UTF-8 text),
//! `graph/<id>` (path → [`FileFacts`], the file's references, imports and type relations, in
//! [`FileFacts::encode`]'s compact binary form; JSON records of earlier versions are still read).
//! Daemon-wide: `sessions`, `notes`, `feedback` (id → [`FeedbackRecord`]) and `marks`
//! (`texts-paired/<id>`: the repository's chunk rows and texts are written together, see
//! [`RepoTrees::texts_paired`]). The embedding cache is not in sled but beside it, in the store
//! directory's `embeddings/` ([`EmbeddingCache`]); a store whose `embeddings` tree an earlier
//! release filled has it moved there when it is opened.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use sled::Transactional;

use patina_core::{ChunkMeta, FileFacts, FileRecord};

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
}

/// The page cache of [`Store::open`].
pub const DEFAULT_CACHE_BYTES: u64 = 64 * 1024 * 1024;

#[derive(Clone)]
pub struct Store {
    db: sled::Db,
    repos: sled::Tree,
    embeddings: EmbeddingCache,
    marks: sled::Tree,
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
        self.marks.remove(paired_key(id))?;
        for kind in ["files", "chunks", "texts", "graph"] {
            self.db.drop_tree(format!("{kind}/{id}"))?;
        }
        self.flush()
    }

    pub fn repo_trees(&self, id: &str) -> Result<RepoTrees> {
        Ok(RepoTrees {
            files: self.db.open_tree(format!("files/{id}"))?,
            chunks: self.db.open_tree(format!("chunks/{id}"))?,
            texts: self.db.open_tree(format!("texts/{id}"))?,
            facts: self.db.open_tree(format!("graph/{id}"))?,
            marks: self.marks.clone(),
            paired_key: paired_key(id),
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

/// The per-repository trees.
#[derive(Clone)]
pub struct RepoTrees {
    files: sled::Tree,
    chunks: sled::Tree,
    texts: sled::Tree,
    facts: sled::Tree,
    marks: sled::Tree,
    paired_key: Vec<u8>,
}

fn paired_key(id: &str) -> Vec<u8> {
    format!("texts-paired/{id}").into_bytes()
}

impl RepoTrees {
    /// Whether every chunk row has its text and every text its row. [`RepoTrees::apply`] writes
    /// the two in one transaction, so this holds once a reconciliation that read every text id
    /// (a store written by a release that applied them one after the other, where a crash between
    /// the two could part them) has committed its repairs: then a start-up round need not read
    /// the texts — iterating them pulled every chunk's text into sled's page cache, which its
    /// capacity does not bound (~125 MB at 100k chunks, bench/RESULTS.md).
    pub fn texts_paired(&self) -> Result<bool> {
        Ok(self.marks.contains_key(&self.paired_key)?)
    }

    /// Record that [`RepoTrees::texts_paired`] holds (after a full reconciliation committed).
    pub fn set_texts_paired(&self) -> Result<()> {
        self.marks.insert(self.paired_key.as_slice(), &[1u8])?;
        Ok(())
    }

    /// A store as an earlier release could leave it after a crash between its two writes: a
    /// text without its row, and no mark that the two are paired.
    #[cfg(test)]
    pub(crate) fn part_a_text_from_its_row(&self, id: u64, text: &str) -> Result<()> {
        self.texts.insert(id.to_be_bytes(), text.as_bytes())?;
        self.marks.remove(&self.paired_key)?;
        Ok(())
    }

    /// Every file's graph facts, by path.
    pub fn all_facts(&self) -> Result<Vec<(String, FileFacts)>> {
        let mut out = Vec::new();
        for item in self.facts.iter() {
            let (k, v) = item?;
            let path = String::from_utf8(k.to_vec()).context("facts key is not UTF-8")?;
            out.push((path, FileFacts::decode(&v).map_err(anyhow::Error::msg)?));
        }
        Ok(out)
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
            out.push((
                key_id(&k),
                serde_json::from_slice(&v).context("decoding chunk metadata")?,
            ));
        }
        Ok(out)
    }

    /// The ids of every stored chunk text (reconciliation: a text no file record points at is an
    /// orphan).
    pub fn text_ids(&self) -> Result<Vec<u64>> {
        let mut out = Vec::new();
        for k in self.texts.iter().keys() {
            out.push(key_id(&k?));
        }
        Ok(out)
    }

    pub fn text(&self, chunk_id: u64) -> Result<Option<String>> {
        Ok(self
            .texts
            .get(chunk_id.to_be_bytes())?
            .map(|v| String::from_utf8_lossy(&v).into_owned()))
    }

    /// Apply one indexing batch: file records to write or delete, chunks to add and remove. Durable
    /// when it returns (sled's `flush` fsyncs), so the order "lexical index, then store" holds
    /// across a crash at every commit point, not only once sled's background flush has run.
    pub fn apply(&self, batch: &StoreBatch) -> Result<()> {
        let mut files = sled::Batch::default();
        let mut chunks = sled::Batch::default();
        let mut texts = sled::Batch::default();
        let mut facts = sled::Batch::default();
        for (path, f) in &batch.facts {
            match f {
                Some(f) => facts.insert(path.as_bytes(), f.encode()),
                None => facts.remove(path.as_bytes()),
            }
        }
        for id in &batch.removed_chunks {
            chunks.remove(&id.to_be_bytes());
            texts.remove(&id.to_be_bytes());
        }
        for (id, meta, text) in &batch.added_chunks {
            chunks.insert(&id.to_be_bytes(), serde_json::to_vec(meta)?);
            texts.insert(&id.to_be_bytes(), text.as_bytes());
        }
        for (path, rec) in &batch.files {
            match rec {
                Some(rec) => files.insert(path.as_bytes(), serde_json::to_vec(rec)?),
                None => files.remove(path.as_bytes()),
            }
        }
        // Chunk rows and their texts together (one transaction: neither is ever without the
        // other, see `texts_paired`), files last: a file record only ever points at chunks that
        // exist.
        (&self.chunks, &self.texts)
            .transaction(|(c, t)| {
                c.apply_batch(&chunks)?;
                t.apply_batch(&texts)?;
                Ok::<(), sled::transaction::ConflictableTransactionError<()>>(())
            })
            .map_err(|e| anyhow::anyhow!("writing chunk rows and texts: {e:?}"))?;
        self.facts.apply_batch(facts)?;
        crate::crash_point("store-chunks", || {
            let _ = self.texts.flush();
        });
        self.files.apply_batch(files)?;
        self.files.flush()?;
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
mod tests {
    use super::*;

    #[test]
    fn an_embedding_cache_kept_in_sled_by_an_earlier_release_is_moved_out() {
        let dir = tempfile::tempdir().unwrap();
        let key = |n: u16| *blake3::hash(&n.to_le_bytes()).as_bytes();
        let vector = |n: u16| -> Vec<f32> { (0..384).map(|i| n as f32 - i as f32).collect() };
        {
            // As releases before this one wrote it: a sled tree of key → little-endian f32s.
            let db = sled::Config::new().path(dir.path()).open().unwrap();
            let tree = db.open_tree(OLD_EMBEDDINGS).unwrap();
            for n in 0..3000u16 {
                let bytes: Vec<u8> = vector(n).iter().flat_map(|x| x.to_le_bytes()).collect();
                tree.insert(key(n), bytes).unwrap();
            }
            db.flush().unwrap();
        }
        let store = Store::open(dir.path()).unwrap();
        let cache = store.embeddings();
        assert_eq!(cache.len(), 3000);
        for n in [0, 17, 1024, 2999] {
            assert_eq!(cache.get(&key(n)).unwrap(), Some(vector(n)), "vector {n}");
        }
        assert!(
            !store
                .db
                .tree_names()
                .iter()
                .any(|t| t == OLD_EMBEDDINGS.as_bytes()),
            "the old tree is dropped"
        );
        // The files hold them (a store opened again reads them from there).
        let again = EmbeddingCache::open(&dir.path().join("embeddings")).unwrap();
        assert_eq!(again.len(), 3000);
        assert_eq!(again.get(&key(7)).unwrap(), Some(vector(7)));
    }
}
