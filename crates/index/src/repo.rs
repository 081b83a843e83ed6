//! One repository's index as it is open: its store trees, its lexical index, the in-memory chunk
//! table and the symbol table built from it, and — while it is being used — the dependency graph.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use anyhow::Result;

use patina_core::{ChunkMeta, ChunkTable, FileRecord};

use crate::graph::GraphTable;
use crate::lexical::LexicalIndex;
use crate::store::{RepoTrees, StoreBatch};
use crate::symbols::SymbolTable;

/// One repository on disk: the store trees (file records, chunk rows and texts), the tantivy
/// index, and in memory the chunk table and the symbol table the oracles read.
///
/// The dependency graph is the largest in-memory structure (every reference site of every file)
/// and only some questions need it: it is built on first use from the stored facts, kept while
/// used, and dropped by [`RepoIndex::release_idle_graph`] — an idle repository costs its chunk
/// and symbol tables only.
///
/// Locks: `graph_build` before `chunks` before `symbols` and `graph` (a rebuild reads the chunks
/// and replaces the others); none
/// is held while calling out of this crate, except by [`RepoIndex::with_chunks`], whose closure
/// must not call back into this index.
pub struct RepoIndex {
    root: PathBuf,
    trees: RepoTrees,
    lexical: LexicalIndex,
    chunks: RwLock<ChunkTable>,
    symbols: RwLock<Arc<SymbolTable>>,
    /// The graph table (built from the stored facts and the chunks), while resident.
    graph: RwLock<Option<Arc<GraphTable>>>,
    /// Held while the graph is built, replaced or dropped, so a build from the store and a
    /// batch's update cannot interleave.
    graph_build: Mutex<()>,
    /// When the graph was last asked for.
    graph_used: Mutex<Instant>,
    /// Above this many chunks the graph is large ([`RepoIndex::graph_is_large`]).
    large_graph: AtomicUsize,
    /// An index round is running.
    in_round: AtomicBool,
    /// Set when the repository is being removed or the daemon stops: rounds stop at the next file.
    cancelled: AtomicBool,
    /// Editor buffers standing in for files on disk (see [`RepoIndex::set_overlay`]).
    overlays: RwLock<HashMap<String, Arc<str>>>,
    /// What the last full walk passed over (non-UTF-8 names, FIFOs, unreadable directories):
    /// no file records exist for them, so the summary adds them from here.
    walk_skips: RwLock<crate::walk::WalkSkips>,
    /// The licences of the directories, as of the last round (`None` before the first).
    licences: RwLock<Option<Arc<crate::licences::LicenceMap>>>,
    /// Personal data masked before chunking (`[pii]`, opt-in per repository).
    scrubber: RwLock<Option<Arc<patina_core::pii::Scrubber>>>,
    /// Chunks added to the chunk table since it was last laid out afresh ([`RepoIndex::repack`]).
    added_since_repack: AtomicUsize,
}

/// [`RepoIndex::repack_if_grown`] lays the tables out afresh once this many chunks (and a quarter
/// of the table) were added since the last time.
const REPACK_MIN_ADDED: usize = if cfg!(test) { 40 } else { 4096 };

/// Above this many chunks a repository's graph is large: building it reads every file's facts
/// from the store (deno, 74k chunks: ~2 s; the 100k-file tree, 550k: tens of seconds and hundreds
/// of MiB), so it is never rebuilt at each commit of a round, and the daemon never builds it on
/// a query's path (bench/RESULTS.md, twenty-first and twenty-second sessions).
pub const LARGE_GRAPH_CHUNKS: usize = 50_000;

impl RepoIndex {
    /// Open the index of the repository at `root`: its store trees and the lexical index in
    /// `lexical_dir` (created when missing); the chunk and symbol tables are loaded from the store.
    pub fn open(root: PathBuf, trees: RepoTrees, lexical_dir: &Path) -> Result<RepoIndex> {
        let lexical = LexicalIndex::open(lexical_dir)?;
        // Rows are stored one by one: a file's chunks get one path again, a directory's files
        // one licence.
        let mut shared = patina_core::Shared::default();
        let chunks: ChunkTable = trees
            .chunk_metas()?
            .into_iter()
            .map(|(id, mut meta)| {
                meta.share(&mut shared);
                (id, meta)
            })
            .collect();
        drop(shared);
        let symbols = SymbolTable::build(chunks.iter());
        Ok(RepoIndex {
            root,
            trees,
            lexical,
            chunks: RwLock::new(chunks),
            symbols: RwLock::new(Arc::new(symbols)),
            graph: RwLock::new(None),
            graph_build: Mutex::new(()),
            graph_used: Mutex::new(Instant::now()),
            large_graph: AtomicUsize::new(LARGE_GRAPH_CHUNKS),
            in_round: AtomicBool::new(false),
            cancelled: AtomicBool::new(false),
            overlays: RwLock::new(HashMap::new()),
            walk_skips: RwLock::new(Default::default()),
            licences: RwLock::new(None),
            scrubber: RwLock::new(None),
            added_since_repack: AtomicUsize::new(0),
        })
    }

    /// What the last full walk passed over, with reasons.
    pub fn walk_skips(&self) -> crate::walk::WalkSkips {
        self.walk_skips.read().unwrap().clone()
    }

    /// Mask what `scrubber` matches in every file's text from the next round on (the caller
    /// re-chunks the repository when the rules changed: `RoundOptions::rechunk`).
    pub fn set_scrubber(&self, scrubber: Option<Arc<patina_core::pii::Scrubber>>) {
        *self.scrubber.write().unwrap() = scrubber;
    }

    /// The personal-data masking of this repository, if it opted in.
    pub fn scrubber(&self) -> Option<Arc<patina_core::pii::Scrubber>> {
        self.scrubber.read().unwrap().clone()
    }

    /// The licence map of the last round, if one ran.
    pub fn licences(&self) -> Option<Arc<crate::licences::LicenceMap>> {
        self.licences.read().unwrap().clone()
    }

    pub(crate) fn set_licences(&self, map: Arc<crate::licences::LicenceMap>) {
        *self.licences.write().unwrap() = Some(map);
    }

    pub(crate) fn set_walk_skips(&self, skips: crate::walk::WalkSkips) {
        *self.walk_skips.write().unwrap() = skips;
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn lexical(&self) -> &LexicalIndex {
        &self.lexical
    }

    pub(crate) fn trees(&self) -> &RepoTrees {
        &self.trees
    }

    /// Stop rounds (and walks) of this index at the next file, for good.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }

    pub(crate) fn cancelled_flag(&self) -> &AtomicBool {
        &self.cancelled
    }

    /// Set (`Some`) or clear (`None`) the overlay of the file at `rel` (relative to the root): while
    /// it is set, index rounds read `text` instead of the file on disk (an editor's unsaved buffer).
    /// A file indexed from an overlay is recorded as unread, so the first round after the overlay
    /// is cleared reads the disk again. Only files that exist on disk are indexed; an overlay of
    /// a path that does not is kept but has no effect. Call [`RepoIndex::index_round`] with the
    /// path in scope to make the change visible.
    pub fn set_overlay(&self, rel: &str, text: Option<String>) {
        let mut overlays = self.overlays.write().expect("overlays lock");
        match text {
            Some(t) => overlays.insert(rel.to_string(), Arc::from(t)),
            None => overlays.remove(rel),
        };
    }

    /// The overlay of `rel`, if one is set.
    pub fn overlay(&self, rel: &str) -> Option<Arc<str>> {
        self.overlays
            .read()
            .expect("overlays lock")
            .get(rel)
            .cloned()
    }

    /// How many overlays are set.
    pub fn overlay_count(&self) -> usize {
        self.overlays.read().expect("overlays lock").len()
    }

    pub fn chunk(&self, id: u64) -> Option<ChunkMeta> {
        self.chunks.read().expect("chunks lock").get(&id).cloned()
    }

    pub fn chunk_count(&self) -> usize {
        self.chunks.read().expect("chunks lock").len()
    }

    /// Run `f` over the chunk table under its read lock. `f` must not call back into this index
    /// (a commit waiting for the write lock would deadlock with it).
    pub fn with_chunks<T>(&self, f: impl FnOnce(&ChunkTable) -> T) -> T {
        f(&self.chunks.read().expect("chunks lock"))
    }

    pub fn symbols(&self) -> Arc<SymbolTable> {
        self.symbols.read().expect("symbols lock").clone()
    }

    /// The dependency graph (references, calls, imports, type relations) as of the last commit:
    /// the resident table, or one built now from the stored facts (a store that cannot be read
    /// gives an empty graph, logged).
    pub fn graph(&self) -> Arc<GraphTable> {
        *self.graph_used.lock().expect("graph clock") = Instant::now();
        if let Some(g) = self.graph.read().expect("graph lock").clone() {
            return g;
        }
        let _build = self.graph_build.lock().expect("graph build lock");
        if let Some(g) = self.graph.read().expect("graph lock").clone() {
            return g;
        }
        let graph = Arc::new(self.build_graph());
        *self.graph.write().expect("graph lock") = Some(graph.clone());
        graph
    }

    /// A graph of the chunk table (under its lock) and the stored facts (read after it, one file
    /// at a time); a store that cannot be read gives an empty graph, logged.
    fn build_graph(&self) -> GraphTable {
        let chunked = GraphTable::of_chunks(self.chunks.read().expect("chunks lock").iter());
        let mut failed = None;
        let facts = self.trees.each_facts().map_while(|item| match item {
            Ok((p, f)) => Some((Arc::<str>::from(p), Arc::new(f))),
            Err(e) => {
                failed = Some(e);
                None
            }
        });
        let graph = chunked.with_facts(facts);
        match failed {
            Some(e) => {
                tracing::warn!(root = %self.root.display(), "graph facts unreadable: {e:#}");
                GraphTable::default()
            }
            None => graph,
        }
    }

    /// Whether the graph table is in memory now.
    /// The resident graph, marked used; `None` (and nothing built) when it is not in memory.
    pub fn resident_graph(&self) -> Option<Arc<GraphTable>> {
        let g = self.graph.read().expect("graph lock").clone();
        if g.is_some() {
            *self.graph_used.lock().expect("graph clock") = Instant::now();
        }
        g
    }

    /// Whether a graph build is running now (another caller of [`RepoIndex::graph`] holds it).
    pub fn graph_building(&self) -> bool {
        self.graph_build.try_lock().is_err()
    }

    /// Whether the graph is too large to build on a query's path or at every commit (more than
    /// [`LARGE_GRAPH_CHUNKS`] chunks, or what [`RepoIndex::set_large_graph_chunks`] set).
    pub fn graph_is_large(&self) -> bool {
        self.chunk_count() > self.large_graph.load(Ordering::Relaxed)
    }

    /// Where [`RepoIndex::graph_is_large`] begins (tests make a small repository large).
    pub fn set_large_graph_chunks(&self, chunks: usize) {
        self.large_graph.store(chunks, Ordering::Relaxed);
    }

    /// Whether an index round is running.
    pub fn in_round(&self) -> bool {
        self.in_round.load(Ordering::Relaxed)
    }

    /// Mark a round as running until the guard is dropped (also when the round fails or panics,
    /// so a graph build is never held back for good).
    pub(crate) fn round_running(&self) -> impl Drop + '_ {
        struct Running<'a>(&'a AtomicBool);
        impl Drop for Running<'_> {
            fn drop(&mut self) {
                self.0.store(false, Ordering::Relaxed);
            }
        }
        self.in_round.store(true, Ordering::Relaxed);
        Running(&self.in_round)
    }

    pub fn graph_resident(&self) -> bool {
        self.graph.read().expect("graph lock").is_some()
    }

    /// Drop the graph table when it has not been asked for in `idle` (it is built again from the
    /// store on next use). Whether it was dropped.
    pub fn release_idle_graph(&self, idle: Duration) -> bool {
        if self.graph_used.lock().expect("graph clock").elapsed() < idle {
            return false;
        }
        let _build = self.graph_build.lock().expect("graph build lock");
        self.graph.write().expect("graph lock").take().is_some()
    }

    /// The stored text of a chunk.
    pub fn text(&self, chunk_id: u64) -> Result<Option<String>> {
        self.trees.text(chunk_id)
    }

    /// The record of one file (`None`: not indexed, nor skipped).
    pub fn file_record(&self, path: &str) -> Result<Option<FileRecord>> {
        self.trees.file_record(path)
    }

    /// The graph facts stored for `path` (references, imports, type relations), if any.
    pub fn file_facts(&self, path: &str) -> Result<Option<patina_core::FileFacts>> {
        self.trees.facts(path)
    }

    /// Every file record (indexed and skipped files), by path.
    pub fn file_records(&self) -> Result<Vec<(String, FileRecord)>> {
        self.trees.file_records()
    }

    /// Order-independent digest of the chunk id set: two indices with the same chunks agree.
    pub fn chunk_digest(&self) -> u64 {
        let chunks = self.chunks.read().expect("chunks lock");
        chunks.keys().fold(0u64, |acc, id| {
            acc.wrapping_add(id.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ id.rotate_left(29))
        })
    }

    /// Apply one committed batch to the store and the in-memory tables (the lexical writer has
    /// committed already): chunk rows and texts, then file records (durably), then the chunk table,
    /// the lexical reader and the symbol table. Returns what changed, for the vector index.
    pub(crate) fn apply(&self, batch: &StoreBatch) -> Result<Delta> {
        self.trees.apply(batch)?;
        self.added_since_repack
            .fetch_add(batch.added_chunks.len(), Ordering::Relaxed);
        // Added rows first, so a query between the two steps finds every chunk the lexical index
        // may return once reloaded; then the removed ones go (a chunk can be removed from one
        // file version and re-added by the next with the same id: it stays).
        self.chunks.write().expect("chunks lock").apply(
            batch
                .added_chunks
                .iter()
                .map(|(id, meta, _)| (*id, meta.clone()))
                .collect(),
            &[],
        );
        self.lexical.reload()?;
        {
            let added: std::collections::HashSet<u64> =
                batch.added_chunks.iter().map(|c| c.0).collect();
            let removed: Vec<u64> = batch
                .removed_chunks
                .iter()
                .copied()
                .filter(|id| !added.contains(id))
                .collect();
            self.chunks
                .write()
                .expect("chunks lock")
                .apply(Vec::new(), &removed);
        }
        self.rebuild_symbols();
        self.update_graph();
        Ok(Delta {
            added: batch.added_chunks.iter().map(|c| c.0).collect(),
            removed: batch.removed_chunks.clone(),
        })
    }

    /// After a round that added many chunks (a new repository's first round, a large checkout),
    /// lay the chunk and symbol tables out afresh ([`RepoIndex::repack`]). Whether it did.
    pub fn repack_if_grown(&self) -> bool {
        let added = self.added_since_repack.load(Ordering::Relaxed);
        if added < REPACK_MIN_ADDED.max(self.chunk_count() / 4) {
            return false;
        }
        self.repack();
        true
    }

    /// Copy the chunk table and rebuild the symbol table in one pass, then drop the old ones.
    ///
    /// A round adds chunk rows batch by batch from whichever worker thread ran the batch, each
    /// row's strings (path, symbol, parent, hash, licence) allocated between that batch's file
    /// texts, token lists and index buffers, which are freed when it ends. The rows that stay
    /// pin those pages: after a fresh 120k-chunk index, 323 MiB of the daemon's heap was pages
    /// whose only live contents were allocations under 1 KiB, 146 MiB in use in all
    /// (bench/RESULTS.md, fourteenth session). A restarted daemon reads the same table in one pass
    /// and holds half as much. Copying the table does what the restart does; the old rows are
    /// freed together and their pages can go back to the system.
    pub fn repack(&self) {
        self.added_since_repack.store(0, Ordering::Relaxed);
        // Rows change only in `apply`, which runs on the round's own thread (the caller's), so the
        // copy made under the read lock is current when it replaces the table.
        // Fresh copies of the paths and licences too (a clone of an `Arc` would keep it where
        // the round allocated it), still one per file and per licence.
        let mut shared = patina_core::Shared::default();
        let copy: ChunkTable = self
            .chunks
            .read()
            .expect("chunks lock")
            .iter()
            .map(|(id, meta)| (*id, shared.copy(meta)))
            .collect();
        drop(shared);
        let old = std::mem::replace(&mut *self.chunks.write().expect("chunks lock"), copy);
        drop(old);
        self.rebuild_symbols();
    }

    fn rebuild_symbols(&self) {
        let table = SymbolTable::build(self.chunks.read().expect("chunks lock").iter());
        *self.symbols.write().expect("symbols lock") = Arc::new(table);
    }

    /// A resident graph is rebuilt from the stored facts (the batch's are in the store already:
    /// the graph keeps its references compact, not as facts it could patch); one not
    /// in memory stays out until it is asked for. A large one is dropped instead (the next query
    /// after the round builds it afresh, in the background): rebuilding it at every commit held
    /// two graphs and their facts at once, over and over — 2.9 GiB during the 100k-file tree's
    /// round, 18 s from a save to its answer there (bench/RESULTS.md, twenty-second session).
    fn update_graph(&self) {
        let _build = self.graph_build.lock().expect("graph build lock");
        let Some(old) = self.graph.read().expect("graph lock").clone() else {
            return;
        };
        if self.graph_is_large() {
            self.graph.write().expect("graph lock").take();
            return;
        }
        drop(old);
        let graph = self.build_graph();
        *self.graph.write().expect("graph lock") = Some(Arc::new(graph));
    }
}

/// What one commit of an index round changed in the chunk table: chunks that are new (or new
/// again) and chunks that left. A removed id may be live again (re-added by the same batch);
/// consumers check the chunk table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Delta {
    pub added: Vec<u64>,
    pub removed: Vec<u64>,
}
