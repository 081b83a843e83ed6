//! A registered repository as the running daemon holds it: its durable record, its index on disk
//! (`patina_index::RepoIndex`: store trees, lexical index, chunk and symbol tables), its vectors and
//! embedding backlog, and the state of its index jobs and watcher.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use anyhow::Result;
use tokio::sync::watch;

use patina_core::{ChunkMeta, ChunkTable};

use crate::state::generations::{Input, RepoVersions};
use patina_index::history::HistoryStore;
use patina_index::store::{RepoRecord, RepoTrees};
use patina_index::symbols::SymbolTable;
use patina_index::vectors::{Snapshot, VectorIndex};
use patina_index::{LexicalIndex, Phase, Progress, RepoIndex, Scope};

/// The graph a query may use: the resident one; else one built now for a repository whose graph is not
/// large ([`patina_index::repo::LARGE_GRAPH_CHUNKS`]: building it inline cost the 100k-file tree's
/// symbol queries 25 minutes of timeouts and its hybrid queries 2–7 s, bench/RESULTS.md
/// twenty-first session); else none, and the wish recorded: `crate::workers::graphs` builds it in
/// the background for the next queries, not while a round runs (its next commit would drop it).
pub fn graph_for_query(repo: &Arc<Repo>) -> Option<Arc<patina_index::graph::GraphTable>> {
    let index = repo.index();
    if let Some(g) = index.resident_graph() {
        return Some(g);
    }
    if !index.graph_is_large() {
        return Some(index.graph());
    }
    // Built by `crate::workers::graphs`, never here: a query only says it wanted one.
    repo.want_graph();
    None
}

/// The newest commits whose files the model's pass embeds before the rest (after the files answers
/// returned): a few weeks of an active project, the files its people are working on.
pub(crate) const RECENT_COMMITS: usize = 200;
/// Commits touching more files than this (mass renames, formatting, vendoring) say nothing of where
/// work happens, and are left out of the recent ones.
pub(crate) const RECENT_COMMIT_FILES: usize = 50;

/// Heap bytes of one static vector (`vectors::Packed`): 8-bit components, scale, map slot.
pub(crate) const STATIC_VECTOR_BYTES: u64 = patina_embed::DIM as u64 + 4 + 8 + 4 + 1;

/// Static vectors made from a table since replaced ([`Repo::restale_provisional`]).
#[derive(Default)]
struct Stale {
    /// The table generation every other static vector of the repository was made from.
    generation: u64,
    ids: Vec<u64>,
}

/// Changes waiting for the next index round.
#[derive(Default)]
struct Dirty {
    full: bool,
    paths: BTreeSet<String>,
}

/// One registered repository. Its fields are private: every lock is taken by a method here, and
/// no method calls out (to a closure, another component, the disk beyond its own trees) while it
/// holds one, except where its documentation says so.
///
/// Lock order (a lock may be taken while holding only locks listed before it):
/// 1. `job` — the running job's progress; held while the dirty set is filled or taken, so a job
///    never decides it is done while a change is being recorded.
/// 2. `dirty` — changes not indexed yet.
/// 3. the index's `chunks` (then its `symbols`: see [`RepoIndex`]).
/// 4. `vectors`.
/// 5. `pending` — the embedding backlog.
/// 6. `provisional` — static vectors of backlog chunks (a subset of `pending`).
///
/// `record`, `watch_error`, `stale` and `answered` are leaves: held alone, never while taking another lock. `floor` is taken last, under `chunks` and `pending`, and nothing under it. The
/// commit history ([`HistoryStore`]) has its own locks, never held while taking one of these.
pub(crate) struct Repo {
    id: String,
    record: RwLock<RepoRecord>,
    index: RepoIndex,
    /// Embeddings of the chunks (sealed HNSW segments, the fresh segment, tombstones).
    vectors: RwLock<VectorIndex>,
    /// Chunks waiting to be embedded (the embedding backlog).
    pending: Mutex<BTreeSet<u64>>,
    /// Static vectors (`patina_embed::StaticTable`, 8-bit) of chunks still in the backlog: the
    /// semantic oracle's first pass until the model's vector replaces them. Never saved.
    provisional: RwLock<patina_index::vectors::Packed>,
    /// Backlog chunks whose static vector came from a table since replaced on disk, and the
    /// table generation the rest were made from ([`Repo::restale_provisional`]). A leaf lock.
    stale: Mutex<Stale>,
    /// Progress of the running (or last) index job; `None` before the first job of this process.
    job: Mutex<Option<watch::Receiver<Progress>>>,
    /// Changes seen (by the watcher, `add`, catch-up) but not indexed yet.
    dirty: Mutex<Dirty>,
    /// Why the repository is not watched (then it is reconciled periodically), if it is not.
    watch_error: Mutex<Option<String>>,
    /// The commits reachable from HEAD (history and co-change oracles, `Search.Log`).
    history: HistoryStore,
    /// The versions of the inputs this repository keeps (index, vectors, record, history): the
    /// query cache (`crate::query::cache`) serves an answer only at the versions it was computed at.
    versions: RepoVersions,
    /// `patina tune`: the repository's own weights (`tuned.json`) and the progress of a run.
    tune: crate::state::tuned::TuneSlot,
    /// Embeddings of commit messages (the history oracle's dense matching).
    messages: crate::state::messages::MessageVectors,
    /// When a query last had this repository in scope (Unix ms, 0: never): its backlog is
    /// embedded first (`crate::state::backlog::embedding_order`).
    last_queried_ms: std::sync::atomic::AtomicI64,
    /// The vector-index build under way and the last one's time (a leaf lock).
    vector_builds: Mutex<crate::state::vector_builds::VectorBuilds>,
    /// A query wanted the dependency graph and found none resident (`crate::workers::graphs`
    /// builds it).
    graph_wanted: std::sync::atomic::AtomicBool,
    /// The files answers returned lately: the model's pass embeds them first (a leaf lock).
    answered: Mutex<crate::state::backlog::Answered>,
    /// How many times chunks joined the backlog (under `pending`'s lock).
    joined: AtomicU64,
    /// The backlog's most urgent level as the last batch's scan found it (taken last).
    floor: Mutex<crate::state::backlog::Floor<crate::state::backlog::FloorKey>>,
}

impl Repo {
    /// Open a repository's index (tantivy, vectors) in `index_dir`. Blocking: call it off the
    /// async workers.
    pub fn open(record: RepoRecord, trees: RepoTrees, index_dir: &Path) -> Result<Repo> {
        let index = RepoIndex::open(
            record.root.clone().into(),
            trees,
            &index_dir.join("lexical"),
        )?;
        // `PATINA_TEST_GRAPH_INLINE_CHUNKS`: the tests' way to make a small repository's graph
        // large (built in the background, left stale by a round's commits).
        if let Some(n) = patina_core::hooks::test_hook("PATINA_TEST_GRAPH_INLINE_CHUNKS")
            .and_then(|v| v.parse().ok())
        {
            index.set_large_graph_chunks(n);
        }
        let mut vectors = VectorIndex::open(&index_dir.join("vectors"));
        // `PATINA_TEST_VECTOR_SEAL`: the tests' way to make a small repository's vector index
        // seal and merge segments.
        if let Some(n) =
            patina_core::hooks::test_hook("PATINA_TEST_VECTOR_SEAL").and_then(|v| v.parse().ok())
        {
            vectors.set_seal_size(n);
        }
        let history = HistoryStore::open(&index_dir.join("history.bin"));
        Ok(Repo {
            id: record.id.clone(),
            record: RwLock::new(record),
            index,
            vectors: RwLock::new(vectors),
            pending: Mutex::new(BTreeSet::new()),
            provisional: RwLock::new(Default::default()),
            stale: Mutex::new(Stale::default()),
            job: Mutex::new(None),
            dirty: Mutex::new(Dirty::default()),
            watch_error: Mutex::new(None),
            history,
            versions: RepoVersions::default(),
            tune: crate::state::tuned::TuneSlot::open(&index_dir.join("tuned.json")),
            messages: Default::default(),
            last_queried_ms: std::sync::atomic::AtomicI64::new(0),
            vector_builds: Mutex::default(),
            graph_wanted: std::sync::atomic::AtomicBool::new(false),
            answered: Mutex::new(Default::default()),
            joined: AtomicU64::new(0),
            floor: Mutex::new(Default::default()),
        })
    }

    /// A query wanted the dependency graph, and none is resident.
    pub fn want_graph(&self) {
        self.graph_wanted
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether a query wanted the graph since the last call (the wish is taken).
    pub fn take_graph_wish(&self) -> bool {
        self.graph_wanted
            .swap(false, std::sync::atomic::Ordering::Relaxed)
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// Apply the daemon's memory budget to this repository's indices (tantivy's writer heap).
    pub fn bound_memory(&self, budget: &crate::process::memory::Budget) {
        self.index
            .lexical()
            .set_writer_heap(budget.tantivy_writer as usize);
    }

    pub fn root(&self) -> &Path {
        self.index.root()
    }

    /// The index on disk: lexical search, chunk and symbol tables, stored texts and file records.
    pub fn index(&self) -> &RepoIndex {
        &self.index
    }

    /// Embeddings of commit messages by hash (`crate::state::messages`).
    pub fn messages(&self) -> &crate::state::messages::MessageVectors {
        &self.messages
    }

    /// `patina tune`'s stored result and progress (`crate::workers::tuner`).
    pub fn tune(&self) -> &crate::state::tuned::TuneSlot {
        &self.tune
    }

    /// The commit history: stored commits and the view of the HEAD last synced
    /// (`crate::services::history::sync` brings it to the current HEAD).
    pub fn history(&self) -> &HistoryStore {
        &self.history
    }

    /// This repository's version of `input` now (`None` for a daemon-wide input:
    /// `Generations::version`).
    pub fn version(&self, input: Input) -> Option<u64> {
        match input {
            Input::Index | Input::Vectors | Input::Record | Input::History => {
                Some(self.versions.get(input))
            }
            Input::Tuned => Some(self.tune.version()),
            Input::Registry | Input::Notes => None,
            #[cfg(test)]
            Input::Probe => None,
        }
    }

    /// `input`, which this repository keeps, changed (also called from outside for changes made
    /// elsewhere: an index round's commit, the history view moving).
    pub fn changed(&self, input: Input) {
        self.versions.bump(input);
    }

    // --- record (leaf lock) ---

    pub fn record(&self) -> RepoRecord {
        self.record.read().expect("record lock").clone()
    }

    /// The repository's name, without copying the rest of its record (a query reads it).
    pub fn name(&self) -> String {
        self.record.read().expect("record lock").name.clone()
    }

    /// Change the record in place (the lock is held only for `f`, which must not call back).
    pub fn update_record(&self, f: impl FnOnce(&mut RepoRecord)) {
        f(&mut self.record.write().expect("record lock"));
        self.changed(Input::Record);
    }

    // --- cancellation ---

    /// The repository is being removed or the daemon stops: rounds and the embedding worker stop
    /// at the next file or batch.
    pub fn cancel(&self) {
        self.index.cancel();
    }

    pub fn is_cancelled(&self) -> bool {
        self.index.is_cancelled()
    }

    // --- job, then dirty ---

    /// Record a change (`full`: reconcile the whole tree) and return the running job's progress,
    /// or, when no job runs, a fresh channel whose sender the caller must hand to a new job.
    /// Takes `job`, then `dirty`.
    pub fn schedule(
        &self,
        full: bool,
    ) -> (watch::Receiver<Progress>, Option<watch::Sender<Progress>>) {
        let mut job = self.job.lock().expect("job lock");
        if full {
            self.dirty.lock().expect("dirty lock").full = true;
        }
        if let Some(rx) = job.as_ref().filter(|rx| !rx.borrow().finished()) {
            return (rx.clone(), None);
        }
        let (tx, rx) = watch::channel(Progress::default());
        *job = Some(rx.clone());
        (rx, Some(tx))
    }

    /// The scope of the job's next round, taken from the dirty set; or, when nothing is dirty or
    /// the job failed, the job's end reported through `tx` and `None`. Decided under the job lock
    /// (then `dirty`), so a change recorded meanwhile is never lost: it either lands in this
    /// round's scope or starts a new job.
    pub fn next_round(&self, tx: &watch::Sender<Progress>, failure: Option<&str>) -> Option<Scope> {
        let job = self.job.lock().expect("job lock");
        let taken = self.take_dirty();
        if taken.is_some() && failure.is_none() {
            return taken;
        }
        tx.send_modify(|p| match failure {
            Some(why) => {
                p.phase = Phase::Failed;
                p.message = why.to_string();
            }
            None => p.phase = Phase::Done,
        });
        drop(job);
        None
    }

    /// Add changes seen by the watcher to the dirty set (`dirty` only).
    pub fn mark_dirty(&self, full: bool, paths: impl IntoIterator<Item = String>) {
        let mut dirty = self.dirty.lock().expect("dirty lock");
        dirty.full |= full;
        dirty.paths.extend(paths);
    }

    fn take_dirty(&self) -> Option<Scope> {
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

    /// The running job's progress, if a job is running.
    pub fn running_job(&self) -> Option<watch::Receiver<Progress>> {
        let job = self.job.lock().expect("job lock");
        job.as_ref().filter(|rx| !rx.borrow().finished()).cloned()
    }

    // --- watcher (leaf lock) ---

    pub fn watch_error(&self) -> Option<String> {
        self.watch_error.lock().expect("watch error lock").clone()
    }

    pub fn set_watch_error(&self, why: Option<String>) {
        *self.watch_error.lock().expect("watch error lock") = why;
    }

    // --- chunks, then vectors, then pending ---

    /// Bring the vectors in line with a commit: removed chunks that are not live leave the vector
    /// index and the backlog; added chunks without a vector get one from `cached` or join the
    /// backlog. Returns whether anything joined the backlog. Takes chunks, vectors, pending in
    /// that order; `cached` runs under them (it must not touch this repository).
    pub fn sync_vectors(
        &self,
        added: &[u64],
        removed: &[u64],
        mut cached: impl FnMut(&ChunkMeta) -> Result<Option<Vec<f32>>>,
    ) -> Result<bool> {
        self.changed(Input::Vectors);
        self.index.with_chunks(|chunks| {
            let mut vectors = self.vectors.write().expect("vectors lock");
            let mut pending = self.pending.lock().expect("pending lock");
            for id in removed {
                if !chunks.contains_key(id) {
                    vectors.remove(*id);
                    pending.remove(id);
                }
            }
            {
                let mut provisional = self.provisional.write().expect("provisional lock");
                if !provisional.is_empty() {
                    provisional.retain(|id| pending.contains(&id));
                }
            }
            let mut queued = false;
            for id in added {
                let Some(meta) = chunks.get(id) else { continue };
                if vectors.contains(*id) {
                    continue;
                }
                match cached(meta)? {
                    Some(v) => vectors.insert(*id, v),
                    None => {
                        pending.insert(*id);
                        self.joined.fetch_add(1, Ordering::Relaxed);
                        queued = true;
                    }
                }
            }
            Ok(queued)
        })
    }

    /// Remove from the vector index the vectors of live chunks that `cached` says were not
    /// computed under the current key (another model or precision); returns how many left.
    /// Takes chunks, then vectors.
    pub fn drop_foreign_vectors(
        &self,
        mut cached: impl FnMut(&ChunkMeta) -> Result<bool>,
    ) -> Result<usize> {
        self.changed(Input::Vectors);
        self.index.with_chunks(|chunks| {
            let mut v = self.vectors.write().expect("vectors lock");
            let mut foreign = Vec::new();
            for id in v.sealed_ids() {
                if let Some(meta) = chunks.get(&id)
                    && !cached(meta)?
                {
                    foreign.push(id);
                }
            }
            let n = foreign.len();
            for id in foreign {
                v.remove(id);
            }
            Ok(n)
        })
    }

    /// Chunk ids in the vector index (the sealed segments, a restored fresh segment) that are no
    /// longer live.
    pub fn stale_vectors(&self) -> Vec<u64> {
        self.index.with_chunks(|chunks| {
            let v = self.vectors.read().expect("vectors lock");
            v.ids().filter(|id| !chunks.contains_key(id)).collect()
        })
    }

    /// Restore the vectors saved beside the sealed segments when they were computed under `tag` (see
    /// `VectorIndex::restore_segment`); returns whether every vector is now known to be `tag`'s.
    pub fn restore_vectors(&self, tag: &str) -> bool {
        let restored = self
            .vectors
            .write()
            .expect("vectors lock")
            .restore_segment(tag);
        self.changed(Input::Vectors);
        restored
    }

    /// Save the vectors that are not sealed yet (and the sealed segments' tombstones) when they
    /// changed since the last save, stamped with `tag`: serialised under the read lock, written
    /// without it. Returns whether it wrote.
    pub fn save_vectors(&self, tag: &str) -> Result<bool> {
        let (path, snapshot) = {
            let v = self.vectors.read().expect("vectors lock");
            (v.segment_file(), v.segment_bytes(tag))
        };
        let Some((changes, bytes)) = snapshot else {
            return Ok(false);
        };
        patina_index::vectors::write_segment(&path, &bytes)?;
        self.vectors
            .write()
            .expect("vectors lock")
            .mark_saved(changes);
        Ok(true)
    }

    /// Add freshly computed vectors; a chunk removed while it was being embedded stays out. Then
    /// the chunks leave the backlog. Takes chunks, vectors, then pending.
    pub fn insert_vectors(&self, done: &[u64], vectors: impl IntoIterator<Item = (u64, Vec<f32>)>) {
        self.index.with_chunks(|chunks| {
            let mut vi = self.vectors.write().expect("vectors lock");
            for (id, v) in vectors {
                if chunks.contains_key(&id) {
                    vi.insert(id, v);
                }
            }
        });
        let mut pending = self.pending.lock().expect("pending lock");
        for id in done {
            pending.remove(id);
        }
        {
            let mut provisional = self.provisional.write().expect("provisional lock");
            for id in done {
                provisional.remove(*id);
            }
        }
        drop(pending);
        self.changed(Input::Vectors);
    }

    /// Up to `n` backlog chunks without a static vector yet. Takes pending, then provisional.
    pub fn without_provisional(&self, n: usize) -> Vec<u64> {
        let pending = self.pending.lock().expect("pending lock");
        let provisional = self.provisional.read().expect("provisional lock");
        if provisional.len() >= pending.len() {
            return Vec::new();
        }
        pending
            .iter()
            .filter(|id| !provisional.contains(**id))
            .take(n)
            .copied()
            .collect()
    }

    /// Note that the static table in use is of `generation`: when it is newer than the one this
    /// repository's static vectors were made from, every one of them is marked to be made again
    /// ([`Repo::take_stale`]); they keep answering until then.
    pub fn restale_provisional(&self, generation: u64) {
        if self.stale.lock().expect("stale lock").generation >= generation {
            return;
        }
        let ids: Vec<u64> = self
            .provisional
            .read()
            .expect("provisional lock")
            .keys()
            .collect();
        let mut stale = self.stale.lock().expect("stale lock");
        if stale.generation < generation {
            if !ids.is_empty() {
                tracing::info!(repo = %self.id, chunks = ids.len(), "static vectors to make again from the new table");
            }
            stale.generation = generation;
            stale.ids = ids;
        }
    }

    /// Up to `n` backlog chunks whose static vector is from an older table (taken: the caller
    /// makes them again).
    pub fn take_stale(&self, n: usize) -> Vec<u64> {
        let taken: Vec<u64> = {
            let mut stale = self.stale.lock().expect("stale lock");
            let at = stale.ids.len().saturating_sub(n);
            stale.ids.split_off(at)
        };
        let provisional = self.provisional.read().expect("provisional lock");
        taken
            .into_iter()
            .filter(|id| provisional.contains(*id))
            .collect()
    }

    /// Store static vectors of backlog chunks (those that left the backlog meanwhile stay out).
    /// Takes pending, then provisional.
    pub fn insert_provisional(
        &self,
        items: impl IntoIterator<Item = (u64, [f32; patina_embed::DIM])>,
    ) {
        let pending = self.pending.lock().expect("pending lock");
        let mut provisional = self.provisional.write().expect("provisional lock");
        for (id, v) in items {
            if pending.contains(&id) {
                provisional.insert(id, &v);
            }
        }
        drop(provisional);
        drop(pending);
        self.changed(Input::Vectors);
    }

    /// How many backlog chunks have a static vector.
    /// Whether `chunk` is answered by a static vector (it waits for the model).
    pub fn is_provisional(&self, chunk: u64) -> bool {
        self.provisional
            .read()
            .expect("provisional lock")
            .contains(chunk)
    }

    pub fn provisional_count(&self) -> usize {
        self.provisional.read().expect("provisional lock").len()
    }

    /// Search the vector index (read lock only); `allow` runs under it.
    pub fn search_vectors(
        &self,
        query: &[f32],
        limit: usize,
        allow: &dyn Fn(u64) -> bool,
    ) -> Vec<(u64, f32)> {
        let mut out = self
            .vectors
            .read()
            .expect("vectors lock")
            .search(query, limit, allow);
        let provisional = self.provisional.read().expect("provisional lock");
        if provisional.is_empty() {
            return out;
        }
        // Backlog chunks answer with their static vectors (same space as the model's: the
        // table was fitted to its vectors), scored with the exact query like the fresh segment.
        out.extend(provisional.scores(query).filter(|(id, _)| allow(*id)));
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out.truncate(limit);
        out
    }

    /// The vectors of those of `ids` the vector index holds (`VectorIndex::vectors_of`).
    pub fn vectors_of(&self, ids: &HashSet<u64>) -> HashMap<u64, Vec<f32>> {
        self.vectors.read().expect("vectors lock").vectors_of(ids)
    }

    pub fn vector_count(&self) -> usize {
        self.vectors.read().expect("vectors lock").len()
    }

    /// Heap bytes of the vector index (the fresh segment and tombstones; the sealed segments are
    /// mapped files, not heap).
    pub fn vector_heap_bytes(&self) -> u64 {
        self.vectors.read().expect("vectors lock").heap_bytes()
    }

    /// A snapshot of the vectors a seal or a merge builds a segment from without any lock, when
    /// one is due ([`patina_index::vectors::VectorIndex::needs_build`]); then
    /// [`Repo::install_vectors`]. Until then `patina status` says the build runs.
    /// One build at a time: none while another is under way (until [`Repo::install_vectors`] or
    /// [`Repo::abandon_vector_build`]).
    pub fn vectors_to_build(&self) -> Option<Snapshot> {
        if !self.graph_build_due()
            || self
                .vector_builds
                .lock()
                .expect("vector builds lock")
                .is_running()
        {
            return None;
        }
        let snapshot = self.vectors.write().expect("vectors lock").snapshot();
        self.vector_builds
            .lock()
            .expect("vector builds lock")
            .begin(snapshot.len(), snapshot.is_merge());
        Some(snapshot)
    }

    /// The vector-index build under way, for `patina status` (the model's pass goes on beside it).
    pub fn vector_build_waiting(&self) -> Option<String> {
        self.vector_builds
            .lock()
            .expect("vector builds lock")
            .waiting()
    }

    /// Whether a seal or a merge is due now ([`Repo::vectors_to_build`] would return a snapshot).
    pub fn graph_build_due(&self) -> bool {
        self.vectors.read().expect("vectors lock").needs_build()
    }

    /// A build begun by [`Repo::vectors_to_build`] will not be installed (it failed or panicked):
    /// the next may begin.
    pub fn abandon_vector_build(&self) {
        self.vector_builds.lock().expect("vector builds lock").end();
    }

    pub fn install_vectors(&self, built: patina_index::vectors::Built) -> Result<()> {
        let r = self.vectors.write().expect("vectors lock").install(built);
        self.vector_builds.lock().expect("vector builds lock").end();
        self.changed(Input::Vectors);
        r
    }

    /// Up to `n` chunks of the embedding backlog with their urgency, those users need first
    /// first: files answers returned, then files the newest [`RECENT_COMMITS`] commits changed,
    /// then the rest; source before examples and configuration, docs and tests within each;
    /// generated and vendored code last (`crate::state::backlog::{urgency, pick_batch}`). Takes
    /// the answered files (copied, released), chunks, then pending.
    pub fn backlog_batch(&self, n: usize) -> Vec<(u64, u8)> {
        use crate::state::backlog::{Want, pick_batch, urgency};
        let (answered, notes) = self.answered.lock().expect("answered lock").files();
        // The history as it is (not synced here): empty until the first round has read it.
        let view = self.history.view();
        let changed: std::collections::HashSet<&str> = view
            .commits
            .iter()
            .take(RECENT_COMMITS)
            .filter(|c| c.files.len() <= RECENT_COMMIT_FILES)
            .flat_map(|c| c.files.iter().map(String::as_str))
            .collect();
        let best = if !answered.is_empty() {
            Want::Answered
        } else if !changed.is_empty() {
            Want::Changed
        } else {
            Want::Later
        };
        let batch = self.index.with_chunks(|chunks| {
            let pending = self.pending.lock().expect("pending lock");
            let key = crate::state::backlog::FloorKey {
                joined: self.joined.load(Ordering::Relaxed),
                answered: notes,
                history: Arc::downgrade(&view),
            };
            let best = self
                .floor
                .lock()
                .expect("floor lock")
                .best(&key, urgency(None, best));
            let levels = pending.iter().map(|id| {
                let meta = chunks.get(id);
                let want = match meta {
                    Some(m) if answered.contains(&m.path) => Want::Answered,
                    Some(m) if changed.contains(&*m.path) => Want::Changed,
                    _ => Want::Later,
                };
                (*id, urgency(meta.map(|m| m.role()), want))
            });
            let batch = pick_batch(levels, n, best);
            self.floor.lock().expect("floor lock").learn(key, &batch);
            batch
        });
        batch
    }

    /// Note the files an answer returned: the model's pass embeds their chunks first.
    pub fn note_answered<'a>(&self, paths: impl IntoIterator<Item = &'a str>) {
        if self.backlog() == 0 {
            return;
        }
        let mut answered = self.answered.lock().expect("answered lock");
        for p in paths {
            answered.note(p);
        }
    }

    /// Note that a query has this repository in scope now.
    pub fn touch_query(&self) {
        self.last_queried_ms
            .store(crate::process::clock::now_unix_ms(), Ordering::Relaxed);
    }

    pub fn last_queried_ms(&self) -> i64 {
        self.last_queried_ms.load(Ordering::Relaxed)
    }

    /// The size of the embedding backlog.
    pub fn backlog(&self) -> usize {
        self.pending.lock().expect("pending lock").len()
    }

    /// Reachable commits of `repo` whose message has no vector yet (the worker embeds them once every
    /// chunk backlog is empty, and only with the model loaded).
    pub fn message_backlog(&self) -> usize {
        let messages = self.messages();
        // Released with an idle history (complete then): commits that arrived since are counted when
        // the history is asked again and its vectors come back.
        if messages.released().is_some() {
            return 0;
        }
        // A released history is out of memory only once its messages were embedded (or with no model,
        // when every one of them waits).
        if let Some(reachable) = self.history().released_reachable() {
            return reachable.saturating_sub(messages.len());
        }
        let view = self.history().view();
        view.commits
            .iter()
            .filter(|c| !messages.contains(&c.record.hash))
            .count()
    }

    // --- conveniences over the index ---

    pub fn chunk(&self, id: u64) -> Option<ChunkMeta> {
        self.index.chunk(id)
    }

    pub fn symbols(&self) -> Arc<SymbolTable> {
        self.index.symbols()
    }

    pub fn lexical(&self) -> &LexicalIndex {
        self.index.lexical()
    }

    pub fn with_chunks<T>(&self, f: impl FnOnce(&ChunkTable) -> T) -> T {
        self.index.with_chunks(f)
    }

    pub fn chunk_digest(&self) -> u64 {
        self.index.chunk_digest()
    }
}
