//! The semantic side of Patina: a warm embedding model, chunk embeddings computed in the background
//! (cached by content, so nothing is embedded twice), each repository's vector index kept current,
//! and query embeddings computed on their own session so they never queue behind bulk work.
//!
//! When the model or runtime is missing the daemon still serves lexical results; this component
//! then reports *why* semantic search is off and the one command that turns it on.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, anyhow};

use crate::process::memory::Resident;
use crate::state::repo::Repo;

use keys::{chunk_key, chunk_key_of, model_tag, note_key};
use patina_core::ChunkMeta;
use patina_core::eta::Throughput;
use patina_embed::{DIM, Embedder, Lexicon, ModelPaths, Precision, QueryCache};
use patina_index::embedding_cache::as_stored;
use patina_index::store::EmbeddingCache;
use slot::Slot;

/// The command that provisions the model.
pub(crate) const INSTALL_HINT: &str = "patina model install";
/// Chunks embedded per batch by the background worker (then the vectors become searchable, and
/// the worker decides again which repository needs it most: a batch takes a few seconds, so a
/// newly added or queried repository waits no longer than that).
const WORK_BATCH: usize = 128;
/// Chunks a static part takes at least: below, one thread does the batch.
const STATIC_PART: usize = 64;
/// A batch is chosen among this many of the backlog's most urgent chunks ([`similar_lengths`]):
/// the embedder pads each sub-batch to its longest text, and 32 chunks taken as they come mixed
/// short and long ones, so padding doubled the work. CoSQA's corpus in the daemon, fp32: 45
/// chunks/s at 32 as they come, 67 at 128 of similar length, 73 at 512 as they come (but a new
/// repository then waited behind a whole batch); the standalone embedder 81 (bench/RESULTS.md).
/// From 1,024 chunks the tightest window of 128 pads 4.8 % of the real tokens of that corpus (the
/// 128 shortest of 512: 7.9 %; every text sorted at once: 0.25 %).
const WORK_POOL: usize = 1024;
const QUERY_CACHE: usize = 1024;

enum State {
    Off(String),
    /// The query session: loaded at start (so a failure turns semantic search off with its
    /// reason), released after [`crate::state::config::idle_release`] without a query and loaded again
    /// by the next one. The bulk session is [`Semantic::bulk`].
    On {
        query: Slot,
    },
}

pub(crate) struct Semantic {
    state: State,
    /// The graph every vector of this process comes from: part of every cache key.
    precision: Precision,
    paths: ModelPaths,
    cache: EmbeddingCache,
    queries: Mutex<QueryCache>,
    wake: (Mutex<u64>, Condvar),
    stopping: AtomicBool,
    /// Chunk texts embedded by this process (cache hits are not counted).
    computed: AtomicU64,
    /// Recent pace of the model's pass and of the static pass, in backlog chunks per second of
    /// work: what [`Semantic::stages`] estimates the time left from.
    model_pace: Mutex<Throughput>,
    static_pace: Mutex<Throughput>,
    /// The bulk session: loaded when a backlog appears, dropped after `Budget::bulk_idle`
    /// without work, so a daemon holds a second copy of the model only while it embeds.
    bulk: Slot,
    bulk_threads: usize,
    /// What the query session added when it was loaded at start (its size when loaded again).
    query_loaded_bytes: u64,
    /// The static first pass's table: loaded while a backlog waits, dropped when it is drained,
    /// taken up again when its file is replaced ([`table`]).
    statics: table::TableSlot,
    /// `[semantic] model_pass`: off, chunks keep their static vectors.
    model_pass: bool,
    /// At most this many static vectors at once, over every repository (an eighth of the memory
    /// budget: ~160k chunks at the default).
    static_cap: usize,
    /// The tokenizer's whole words (when the model loaded): what tells a misspelt word of a
    /// question from an English word the code never uses.
    lexicon: Option<Lexicon>,
    /// A team's store ([`Semantic::share_with`]): asked for the vectors of a batch before the
    /// model embeds what it lacks.
    shared: std::sync::OnceLock<Arc<dyn shared::VectorSource>>,
}

impl Semantic {
    /// Load the query session (the bulk session is loaded when there is a backlog); on any failure
    /// semantic search is off with the reason. The query session runs without ORT's CPU arena, so
    /// its working memory follows the work; the bulk session keeps it (speed) and is released.
    /// Without `keep_query` the session is dropped once it loaded (the model is known to work):
    /// the first query loads it again, as after an idle release.
    pub fn load(
        paths: ModelPaths,
        cfg: &crate::state::config::SemanticConfig,
        cache: EmbeddingCache,
        budget: &crate::process::memory::Budget,
        keep_query: bool,
    ) -> Semantic {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        let before = Resident::now().anon;
        let mut query_bytes = 0;
        let mut lexicon = None;
        let state = match Embedder::load_with(&paths, cfg.precision, 1, false) {
            Ok(query) => {
                query_bytes = Resident::now().anon.saturating_sub(before);
                lexicon = Some(query.lexicon());
                tracing::info!(model = %paths.model_dir.display(), precision = ?cfg.precision, "semantic search on");
                let loaded = if keep_query {
                    Some((query, query_bytes))
                } else {
                    drop(query);
                    crate::process::memory::release_free_heap();
                    tracing::info!("query session released until a query needs it");
                    None
                };
                State::On {
                    query: Slot::new("query", crate::state::config::idle_release(), loaded),
                }
            }
            Err(e) => {
                let why = format!("{e:#}");
                tracing::warn!("semantic search off: {why}");
                State::Off(why)
            }
        };
        let precision = cfg.precision;
        let statics =
            table::TableSlot::new(paths.static_file(), paths.tokenizer_file(), cfg.static_pass);
        Semantic {
            state,
            precision,
            paths,
            cache,
            queries: Mutex::new(QueryCache::new(QUERY_CACHE)),
            wake: (Mutex::new(0), Condvar::new()),
            stopping: AtomicBool::new(false),
            computed: AtomicU64::new(0),
            model_pace: Mutex::new(Throughput::default()),
            static_pace: Mutex::new(Throughput::default()),
            bulk: Slot::new("bulk embedding", budget.bulk_idle, None),
            bulk_threads: threads,
            query_loaded_bytes: query_bytes,
            static_cap: (budget.total / 8 / crate::state::repo::STATIC_VECTOR_BYTES) as usize,
            model_pass: cfg.model_pass,
            statics,
            lexicon,
            shared: std::sync::OnceLock::new(),
        }
    }

    /// The model's English lexicon, while semantic search is on.
    pub fn lexicon(&self) -> Option<&Lexicon> {
        self.lexicon.as_ref()
    }

    /// Give up to `n` of `repo`'s backlog chunks that have none a static vector, when its backlog
    /// is larger than one model batch (a chunk gone meanwhile leaves the backlog); how many were
    /// handled.
    pub fn fill_static(&self, repo: &Repo, n: usize) -> Result<usize> {
        // A backlog the model clears in one batch (an edit) is not worth loading the table for;
        // with the pass off (or no table) the backlog is not even looked at.
        if self.statics.is_off()
            || repo.backlog() == 0
            || (self.model_pass && repo.backlog() <= WORK_BATCH && repo.provisional_count() == 0)
        {
            return Ok(0);
        }
        let started = std::time::Instant::now();
        let Some((table, generation)) = self.statics.get() else {
            return Ok(0);
        };
        // Vectors made from a table since replaced are made again, after the chunks with none.
        repo.restale_provisional(generation);
        let mut ids = repo.without_provisional(n);
        if ids.is_empty() {
            ids = repo.take_stale(n);
        }
        if ids.is_empty() {
            return Ok(0);
        }
        // Reading and tokenizing each chunk is the cost (the table's sums are not): the batch is
        // shared among the cores, each part on a short-lived scoped thread.
        let parts = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, 4)
            .min(ids.len().div_ceil(STATIC_PART).max(1));
        let per = ids.len().div_ceil(parts);
        let results: Vec<Result<(Vec<(u64, [f32; DIM])>, Vec<u64>)>> = std::thread::scope(|s| {
            let handles: Vec<_> = ids
                .chunks(per)
                .map(|part| {
                    let table = &table;
                    s.spawn(move || {
                        let mut items = Vec::with_capacity(part.len());
                        let mut gone = Vec::new();
                        for id in part {
                            match (repo.chunk(*id), repo.index().text(*id)?) {
                                (Some(meta), Some(text)) => {
                                    let v = table
                                        .embed(&Semantic::input(&meta, &text))
                                        .unwrap_or([0.0; DIM]);
                                    items.push((*id, v));
                                }
                                _ => gone.push(*id),
                            }
                        }
                        Ok((items, gone))
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(anyhow::anyhow!("a static part panicked")))
                })
                .collect()
        });
        let mut items = Vec::with_capacity(ids.len());
        let mut gone = Vec::new();
        for r in results {
            let (i, g) = r?;
            items.extend(i);
            gone.extend(g);
        }
        if !gone.is_empty() {
            repo.insert_vectors(&gone, std::iter::empty());
        }
        repo.insert_provisional(items);
        stages::observe(&self.static_pace, ids.len(), started);
        Ok(ids.len())
    }

    /// Whether every chunk of `repo` has a vector to answer with — the model's, or a static one
    /// — or will not have one soon (semantic search off, no static pass: the model's pass takes
    /// its time): what `Repos.Add` waits for, briefly, so the first answer already uses meaning.
    /// A backlog small enough for one model batch counts once the model has embedded it.
    pub fn first_pass_done(&self, repo: &Repo) -> bool {
        if !self.is_on() || repo.backlog() == 0 {
            return true;
        }
        if self.statics.unavailable() {
            return true;
        }
        repo.without_provisional(1).is_empty()
    }

    /// Drop the static table (every backlog is drained).
    pub fn release_static(&self) {
        self.statics.release();
    }

    /// Resident bytes the query and bulk sessions added when they were loaded (0 when not).
    pub fn session_bytes(&self) -> (u64, u64) {
        let query = match &self.state {
            State::On { query } => query.bytes(),
            State::Off(_) => 0,
        };
        (query, self.bulk.bytes())
    }

    /// Drop the sessions idle for their time: the bulk one after `Budget::bulk_idle` without
    /// work, the query one after [`crate::state::config::idle_release`] without a question (a daemon
    /// left running all day holds no model while nobody asks; the next question pays one load,
    /// bench/RESULTS.md).
    ///
    /// Once neither is loaded, ONNX Runtime's resident code pages are paged out too: a bulk batch
    /// touches ~15 MiB of kernels that otherwise stay resident for good (bench/RESULTS.md,
    /// thirteenth session); the next load reads them again from the library file.
    pub fn release_idle_sessions(&self) {
        let mut released = self.bulk.release_if_idle();
        let mut query_loaded = false;
        if let State::On { query } = &self.state {
            released |= query.release_if_idle();
            query_loaded = query.is_loaded();
        }
        if released && !query_loaded && !self.bulk.is_loaded() {
            let name = std::fs::canonicalize(&self.paths.ort_lib)
                .unwrap_or_else(|_| self.paths.ort_lib.clone());
            if let Some(name) = name.file_name().and_then(|n| n.to_str()) {
                let bytes = crate::process::memory::page_out_mappings_of(name);
                tracing::debug!(bytes, "ONNX Runtime's pages left to the system");
            }
        }
    }

    pub fn is_on(&self) -> bool {
        matches!(self.state, State::On { .. })
    }

    /// Whether the model's background pass replaces static vectors (`[semantic] model_pass`).
    pub fn model_pass(&self) -> bool {
        self.model_pass
    }

    /// Why semantic search is off, alone; `None` when it is on.
    pub fn off_reason(&self) -> Option<&str> {
        match &self.state {
            State::Off(why) => Some(why),
            _ => None,
        }
    }

    /// "on (…)" or "off: <reason>; run `patina model install`".
    pub fn describe(&self) -> String {
        match &self.state {
            State::On { .. } => format!(
                "on ({:?}, {})",
                self.precision,
                self.paths.model_dir.display()
            ),
            State::Off(why) => {
                format!("off: {why}; turn it on with `{INSTALL_HINT}` and restart the daemon")
            }
        }
    }

    /// Take vectors from a team's store before embedding (set once, at start).
    pub fn share_with(&self, source: Arc<dyn shared::VectorSource>) {
        let _ = self.shared.set(source);
    }

    pub fn computed(&self) -> u64 {
        self.computed.load(Ordering::Relaxed)
    }

    /// What is embedded for a chunk: a context line, then its text. The context is the file path,
    /// plus the symbol path (`Parent::name`) when the text does not already name it (a method's
    /// class, a piece of a long function split from its signature). Repeating a name the text
    /// already contains only dilutes the mean-pooled vector: on CoSQA, always prepending the
    /// symbol cost 0.012 MRR@10, the path alone nothing measurable.
    pub fn input(meta: &ChunkMeta, text: &str) -> String {
        let mut s = meta.path.to_string();
        let missing = |name: &str| !name.is_empty() && !text.contains(name);
        match (&meta.parent, &meta.symbol) {
            (Some(p), Some(sym)) if missing(p) || missing(sym) => {
                s.push_str(" · ");
                s.push_str(p);
                s.push_str("::");
                s.push_str(sym);
            }
            (None, Some(sym)) if missing(sym) => {
                s.push_str(" · ");
                s.push_str(sym);
            }
            _ => {}
        }
        s.push('\n');
        s.push_str(text);
        s
    }

    /// Cache key of a chunk's embedding under this process's model and precision.
    pub fn key(&self, meta: &ChunkMeta) -> [u8; 32] {
        chunk_key(self.precision, meta)
    }

    /// The model and precision this process embeds with (what a snapshot's vectors must match).
    pub fn model_tag(&self) -> String {
        model_tag(self.precision)
    }

    /// The cached embedding of a chunk (under this process's model), if it was embedded.
    pub fn cached(&self, meta: &ChunkMeta) -> Result<Option<Vec<f32>>> {
        self.cache.get(&self.key(meta))
    }

    /// Put vectors computed elsewhere (a snapshot) in the embedding cache, keyed as this process
    /// would key the chunks `(path, parent, symbol, text hash)`; the worker then finds them
    /// instead of embedding.
    pub fn import(&self, items: &[(&str, &str, &str, &str, &[f32])]) -> Result<usize> {
        let keyed: Vec<([u8; 32], &[f32])> = items
            .iter()
            .filter(|i| i.4.len() == DIM)
            .map(|(path, parent, symbol, hash, v)| {
                (chunk_key_of(self.precision, path, parent, symbol, hash), *v)
            })
            .collect();
        self.cache.put_many(&keyed)?;
        Ok(keyed.len())
    }

    /// Cache key of a session note's embedding under this process's model and precision.
    pub fn note_key(&self, text: &str) -> [u8; 32] {
        note_key(self.precision, text)
    }

    /// The query's embedding, from the LRU when it was asked before; loads the query session
    /// first when it was released idle.
    pub fn embed_query(&self, text: &str) -> Result<[f32; DIM]> {
        let State::On { query } = &self.state else {
            return Err(anyhow!("semantic search is off"));
        };
        if let Some(v) = self.queries.lock().expect("query cache lock").get(text) {
            return Ok(v);
        }
        let cached = || {
            self.queries
                .lock()
                .expect("query cache lock")
                .get(text)
                .map(|v| vec![v])
        };
        let v = query
            .embed(&[text], cached, || {
                let e = Embedder::load_with(&self.paths, self.precision, 1, false)
                    .context("loading the query session again")?;
                // The same session as at start, where its size was measured alone (here another
                // thread's allocations would count as the session's).
                Ok((e, self.query_loaded_bytes))
            })?
            .pop()
            .ok_or_else(|| anyhow!("no embedding returned"))?;
        self.queries
            .lock()
            .expect("query cache lock")
            .insert(text, v);
        Ok(v)
    }

    /// Bring a repository's vectors in line with its chunks: removed chunks leave the index, added
    /// ones come from the cache or join the backlog. Called at load and after every index commit.
    pub fn sync(&self, repo: &Repo, added: &[u64], removed: &[u64]) -> Result<()> {
        if !self.is_on() {
            return Ok(());
        }
        let queued = repo.sync_vectors(added, removed, |meta| {
            Ok(self.cache.get(&self.key(meta))?.filter(|v| v.len() == DIM))
        })?;
        if queued {
            self.notify();
        }
        Ok(())
    }

    /// Initial reconciliation of a freshly opened repository (nothing is re-embedded that is cached).
    /// A vector of the sealed segments whose chunk has no cache entry under this process's key was
    /// computed by another graph (the other `[semantic] precision`): it leaves the index and the
    /// chunk is embedded again, so one index never mixes vectors of both.
    pub fn attach(&self, repo: &Repo) -> Result<()> {
        if !self.is_on() {
            return Ok(());
        }
        let live: Vec<u64> = repo.with_chunks(|chunks| chunks.keys().copied().collect());
        // Vectors saved by a daemon with this model need no check against the cache (which
        // would read every vector of the repository through the store).
        let foreign = if repo.restore_vectors(&self.model_tag()) {
            0
        } else {
            repo.drop_foreign_vectors(|meta| Ok(self.cache.get(&self.key(meta))?.is_some()))?
        };
        if foreign > 0 {
            tracing::info!(
                repo = %repo.id(),
                vectors = foreign,
                "vectors of another model or precision leave the index; embedding them again"
            );
        }
        let stale = repo.stale_vectors();
        self.sync(repo, &live, &stale)
    }

    pub fn notify(&self) {
        let (m, cv) = &self.wake;
        *m.lock().expect("wake lock") += 1;
        cv.notify_all();
    }

    pub fn stop(&self) {
        self.stopping.store(true, Ordering::Relaxed);
        self.notify();
    }

    /// Save `repo`'s vectors if they changed since the last save (when idle, and at shutdown).
    pub fn save(&self, repo: &Repo) {
        if !self.is_on() {
            return;
        }
        if let Err(e) = repo.save_vectors(&self.model_tag()) {
            tracing::warn!(repo = %repo.id(), "saving the vectors failed: {e:#}");
        }
    }

    /// Whether [`Semantic::stop`] was called.
    pub fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::Relaxed)
    }

    /// How many more static vectors fit within an eighth of the memory budget, with `held` held.
    pub fn static_room(&self, held: usize) -> usize {
        self.static_cap.saturating_sub(held)
    }

    /// Wait until [`Semantic::notify`] moved the wake count past `seen` (or 5 s passed, or a stop
    /// was asked); returns the count seen.
    pub fn wait_for_work(&self, seen: u64) -> u64 {
        let (m, cv) = &self.wake;
        let guard = m.lock().expect("wake lock");
        let (guard, _) = cv
            .wait_timeout_while(guard, Duration::from_secs(5), |g| {
                *g == seen && !self.stopping.load(Ordering::Relaxed)
            })
            .expect("wake lock");
        *guard
    }

    /// Embed one batch of the messages of `repo`'s reachable commits that have no vector yet (from
    /// the cache when they were embedded before); returns how many it added.
    pub fn embed_messages(&self, repo: &Repo) -> Result<usize> {
        // Released with its history: read back when the history is asked again, not because an
        // index round reloaded the history to follow HEAD.
        if !self.is_on() || !self.model_pass || repo.messages().released().is_some() {
            return Ok(0);
        }
        let view = repo.history().view();
        let todo: Vec<(String, String)> = view
            .commits
            .iter()
            .filter(|c| !repo.messages().contains(&c.record.hash))
            .take(WORK_BATCH * 4)
            .map(|c| {
                (
                    c.record.hash.clone(),
                    crate::state::messages::input(&c.record.message).to_string(),
                )
            })
            .collect();
        if todo.is_empty() {
            return Ok(0);
        }
        // Working through the commits: their history stays in memory until this is done.
        repo.history().touch();
        let mut done: Vec<(String, [f32; DIM])> = Vec::with_capacity(todo.len());
        let mut missing: Vec<(String, [u8; 32], &str)> = Vec::new();
        for (hash, text) in &todo {
            let key = self.note_key(text);
            match self.cache.get(&key)? {
                Some(v) if v.len() == DIM => {
                    done.push((hash.clone(), v.try_into().expect("DIM floats")))
                }
                _ => missing.push((hash.clone(), key, text.as_str())),
            }
        }
        if !missing.is_empty() {
            let inputs: Vec<&str> = missing.iter().map(|m| m.2).collect();
            let vectors = self.bulk_embed(&inputs)?;
            let items: Vec<([u8; 32], &[f32])> = missing
                .iter()
                .zip(&vectors)
                .map(|(m, v)| (m.1, v.as_slice()))
                .collect();
            self.cache.put_many(&items)?;
            // Kept as the cache gives them back, so a history restored after a restart ranks
            // with the same numbers.
            done.extend(
                missing.iter().map(|m| m.0.clone()).zip(
                    vectors
                        .iter()
                        .map(|v| as_stored(v).try_into().expect("DIM floats")),
                ),
            );
        }
        let n = done.len();
        repo.messages().insert(done);
        repo.changed(crate::state::generations::Input::History);
        if repo.messages().len() >= view.len() {
            tracing::info!(repo = %repo.id(), commits = view.len(), "history: messages embedded");
        }
        Ok(n)
    }

    /// Read the message vectors of `view`'s commits back from the embedding cache when they were
    /// released with an idle history (no model run: a commit missing from the cache is left to the
    /// worker). How many came back; `Ok(0)` when nothing was released.
    pub fn restore_messages(
        &self,
        repo: &Repo,
        view: &patina_index::history::HistoryView,
    ) -> Result<usize> {
        let restored = repo.messages().restore_with(|| -> Result<_> {
            let mut out = Vec::with_capacity(view.commits.len());
            for c in &view.commits {
                let key = self.note_key(crate::state::messages::input(&c.record.message));
                if let Some(v) = self.cache.get(&key)?
                    && v.len() == DIM
                {
                    out.push((c.record.hash.clone(), v.try_into().expect("DIM floats")));
                }
            }
            Ok(out)
        })?;
        if let Some(n) = restored {
            tracing::debug!(repo = %repo.id(), vectors = n, "history: message vectors restored");
            // The worker embeds what the cache did not have.
            self.notify();
        }
        Ok(restored.unwrap_or(0))
    }

    /// Embed `inputs` with the bulk session, loading it first if it was released.
    fn bulk_embed(&self, inputs: &[&str]) -> Result<Vec<[f32; DIM]>> {
        self.bulk.embed(
            inputs,
            || None,
            || {
                let before = Resident::now().anon;
                // With ORT's arena: without it cobra's 846 chunks took 103-158 s instead of 52 s
                // (bench/RESULTS.md); the arena goes with the session when it is released.
                let e = Embedder::load_with(&self.paths, self.precision, self.bulk_threads, true)?;
                Ok((e, Resident::now().anon.saturating_sub(before)))
            },
        )
    }

    /// Embed one batch of `repo`'s backlog; returns how many chunks it embedded.
    pub fn embed_some(&self, repo: &Repo) -> Result<usize> {
        if !self.is_on() || !self.model_pass {
            return Ok(0);
        }
        // The most urgent chunks, with their texts; those that vanished meanwhile leave the
        // backlog with this batch, without a vector. A chunk whose vector another repository
        // computed since it was queued (a clone or worktree of the same code added at the same
        // time) takes it from the cache instead of being embedded again.
        let started = std::time::Instant::now();
        let mut pool: Vec<(u64, u8, u32)> = Vec::new();
        let mut texts: HashMap<u64, (ChunkMeta, String)> = HashMap::new();
        let mut gone: Vec<u64> = Vec::new();
        for (id, urgency) in repo.backlog_batch(WORK_POOL) {
            match (repo.chunk(id), repo.index().text(id)?) {
                (Some(meta), Some(text)) => {
                    let len = u32::try_from(text.len()).unwrap_or(u32::MAX);
                    pool.push((id, urgency, len));
                    texts.insert(id, (meta, text));
                }
                _ => gone.push(id),
            }
        }
        let mut ids = crate::state::backlog::similar_lengths(pool, WORK_BATCH);
        // Only the chosen chunks ask the cache (each chunk once, not once per pool it sits in).
        let mut cached: Vec<(u64, Vec<f32>)> = Vec::new();
        let mut work: Vec<(u64, [u8; 32], String)> = Vec::with_capacity(ids.len());
        for id in &ids {
            let Some((meta, text)) = texts.remove(id) else {
                continue;
            };
            let key = self.key(&meta);
            match self.cache.get(&key)?.filter(|v| v.len() == DIM) {
                Some(v) => cached.push((*id, v)),
                None => work.push((*id, key, Semantic::input(&meta, &text))),
            }
        }
        if let Some(source) = self.shared.get() {
            shared::take(
                &**source,
                &self.model_tag(),
                &self.cache,
                &mut work,
                &mut cached,
            )?;
        }
        ids.extend(gone);
        if ids.is_empty() {
            return Ok(0);
        }
        let inputs: Vec<&str> = work.iter().map(|w| w.2.as_str()).collect();
        let vectors = if inputs.is_empty() {
            Vec::new()
        } else {
            self.bulk_embed(&inputs)?
        };
        self.computed
            .fetch_add(vectors.len() as u64, Ordering::Relaxed);
        let items: Vec<([u8; 32], &[f32])> = work
            .iter()
            .zip(&vectors)
            .map(|(w, v)| (w.1, v.as_slice()))
            .collect();
        self.cache.put_many(&items)?;
        // A chunk removed while it was being embedded stays out.
        repo.insert_vectors(
            &ids,
            work.iter()
                .zip(&vectors)
                .map(|((id, _, _), v)| (*id, v.to_vec()))
                .chain(cached),
        );
        stages::observe(&self.model_pace, ids.len(), started);
        Ok(ids.len())
    }
}

/// Build the segment `snapshot` (from [`Repo::vectors_to_build`]) asks for, a seal of the fresh
/// segment or a merge of small sealed ones (bounded by the seal or merge size; no lock held), and
/// install it. Slow (seconds to minutes): run it beside the model's pass, not on its thread.
pub(crate) fn seal_or_merge(repo: &Repo, snapshot: patina_index::vectors::Snapshot) -> Result<()> {
    let (n, merge) = (snapshot.len(), snapshot.is_merge());
    let t0 = std::time::Instant::now();
    let built = patina_index::vectors::VectorIndex::build(snapshot);
    repo.install_vectors(built)?;
    let ms = t0.elapsed().as_millis() as u64;
    if merge {
        tracing::info!(repo = %repo.id(), vectors = n, ms, "vector segments merged");
    } else {
        tracing::info!(repo = %repo.id(), vectors = n, ms, "vector segment sealed");
    }
    Ok(())
}

mod keys;
pub(crate) mod shared;
mod slot;
pub(crate) mod stages;
mod table;
#[cfg(test)]
mod tests;
