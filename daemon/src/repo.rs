//! A registered repository as the running daemon holds it: its durable record, its metadata trees,
//! its lexical index and the in-memory chunk table the oracles read.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

use anyhow::Result;
use tokio::sync::watch;

use crate::index::lexical::LexicalIndex;
use crate::index::symbols::SymbolTable;
use crate::index::vectors::VectorIndex;
use crate::index::{Progress, Scope};
use crate::store::{ChunkMeta, RepoRecord, RepoTrees};

/// Changes waiting for the next index round.
#[derive(Default)]
pub(crate) struct Dirty {
    pub full: bool,
    pub paths: BTreeSet<String>,
}

pub(crate) struct Repo {
    pub id: String,
    pub root: PathBuf,
    pub record: RwLock<RepoRecord>,
    pub trees: RepoTrees,
    pub lexical: LexicalIndex,
    pub chunks: RwLock<HashMap<u64, ChunkMeta>>,
    pub symbols: RwLock<Arc<SymbolTable>>,
    /// Embeddings of the chunks (HNSW + fresh segment + tombstones).
    pub vectors: RwLock<VectorIndex>,
    /// Chunks waiting to be embedded (the embedding backlog).
    pub pending: Mutex<BTreeSet<u64>>,
    /// Progress of the running (or last) index job; `None` before the first job of this process.
    pub job: Mutex<Option<watch::Receiver<Progress>>>,
    /// Changes seen (by the watcher, `add`, catch-up) but not indexed yet.
    pub dirty: Mutex<Dirty>,
    /// Why the repository is not watched (then it is reconciled periodically), if it is not.
    pub watch_error: Mutex<Option<String>>,
    /// Set when the repository is being removed or the daemon stops: jobs stop at the next file.
    pub cancelled: std::sync::atomic::AtomicBool,
}

impl Repo {
    pub fn open(record: RepoRecord, trees: RepoTrees, index_dir: PathBuf) -> Result<Repo> {
        let lexical = LexicalIndex::open(&index_dir.join("lexical"))?;
        let chunks: HashMap<u64, ChunkMeta> = trees.chunk_metas()?.into_iter().collect();
        let symbols = SymbolTable::build(chunks.iter());
        let vectors = VectorIndex::open(&index_dir.join("vectors.bin"));
        Ok(Repo {
            id: record.id.clone(),
            root: PathBuf::from(&record.root),
            record: RwLock::new(record),
            trees,
            lexical,
            chunks: RwLock::new(chunks),
            symbols: RwLock::new(Arc::new(symbols)),
            vectors: RwLock::new(vectors),
            pending: Mutex::new(BTreeSet::new()),
            job: Mutex::new(None),
            cancelled: Default::default(),
            dirty: Mutex::new(Dirty::default()),
            watch_error: Mutex::new(None),
        })
    }

    pub fn record(&self) -> RepoRecord {
        self.record.read().expect("record lock").clone()
    }

    pub fn chunk(&self, id: u64) -> Option<ChunkMeta> {
        self.chunks.read().expect("chunks lock").get(&id).cloned()
    }

    pub fn symbols(&self) -> Arc<SymbolTable> {
        self.symbols.read().expect("symbols lock").clone()
    }

    pub fn rebuild_symbols(&self) {
        let table = SymbolTable::build(self.chunks.read().expect("chunks lock").iter());
        *self.symbols.write().expect("symbols lock") = Arc::new(table);
    }

    /// Take the pending changes as the scope of the next index round; `None` when nothing is pending.
    pub fn take_dirty(&self) -> Option<Scope> {
        let mut d = self.dirty.lock().expect("dirty lock");
        let taken = std::mem::take(&mut *d);
        if taken.full {
            Some(Scope::Full)
        } else if !taken.paths.is_empty() {
            Some(Scope::Paths(taken.paths))
        } else {
            None
        }
    }

    /// Files changed but not indexed yet (a pending full reconciliation counts as unknown: `None`).
    pub fn pending_files(&self) -> Option<usize> {
        let d = self.dirty.lock().expect("dirty lock");
        (!d.full).then_some(d.paths.len())
    }

    /// Order-independent digest of the chunk id set: two indices with the same chunks agree.
    pub fn chunk_digest(&self) -> u64 {
        let chunks = self.chunks.read().expect("chunks lock");
        chunks.keys().fold(0u64, |acc, id| {
            acc.wrapping_add(id.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ id.rotate_left(29))
        })
    }

    /// The running job's progress, if a job is running.
    pub fn running_job(&self) -> Option<watch::Receiver<Progress>> {
        let job = self.job.lock().expect("job lock");
        job.as_ref().filter(|rx| !rx.borrow().finished()).cloned()
    }
}
