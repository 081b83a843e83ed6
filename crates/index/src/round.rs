//! Indexing: walk a repository, chunk what changed, and write chunks to the lexical index and the
//! store. Incremental by construction: a file whose size and mtime match its record is not read; a
//! file whose content hash matches is not re-chunked; files that vanished are removed everywhere.
//!
//! Consistency: each batch is committed to tantivy first and to the store second (durably: the
//! store is fsync'd at every commit point). A crash in between leaves the lexical index ahead of
//! the store — documents of files the store never recorded, documents missing for files whose
//! record is older. Walking rounds therefore reconcile before and after they index (see
//! `reconcile_store` and `reconcile_lexical`): chunk rows no file record points at are
//! deleted, records pointing at missing chunks are re-read, and the lexical index is made to hold
//! exactly one document per live chunk. Every round that walks thus ends in the from-scratch state,
//! whatever a crash left behind; [`RepoIndex::audit`] reports the differences without changing anything.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Instant;

use anyhow::Result;
use patina_chunk::ChunkOptions;
use patina_core::{ChunkMeta, FileRecord, Language, Licence, LicenceSource, SkipReason};

use crate::lexical::{LexicalDoc, LexicalWriter};
use crate::licences::{LicenceMap, is_licence_source};
use crate::repo::{Delta, RepoIndex};
use crate::store::{RepoRecord, StoreBatch};
use crate::walk::{self, WalkEntry};

mod reconcile;

pub use reconcile::Repaired;
use reconcile::{audit, reconcile_lexical, reconcile_store};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Phase {
    #[default]
    Queued,
    Walking,
    Indexing,
    Committing,
    Done,
    Failed,
}

#[derive(Clone, Debug, Default)]
pub struct Progress {
    pub phase: Phase,
    pub files_total: u64,
    pub files_done: u64,
    pub files_changed: u64,
    pub files_removed: u64,
    pub chunks: u64,
    pub message: String,
    /// When the files began to be read (the walk is over): the pace of the round counts from here.
    pub indexing_since: Option<Instant>,
}

impl Progress {
    /// Time the round has left at its pace so far (`None` while walking or too early to tell).
    pub fn eta(&self) -> Option<std::time::Duration> {
        if self.finished() {
            return Some(std::time::Duration::ZERO);
        }
        let since = self.indexing_since?;
        patina_core::eta::remaining(self.files_done, self.files_total, since.elapsed())
    }

    pub fn finished(&self) -> bool {
        matches!(self.phase, Phase::Done | Phase::Failed)
    }
}

/// Commit after this many changed files or chunks, so progress is durable on big first runs.
const COMMIT_FILES: usize = 2000;
const COMMIT_CHUNKS: usize = 20_000;
/// Bytes inspected for NUL to decide a file is binary (what git does).
const BINARY_PROBE: usize = 8000;

enum Outcome {
    Skipped(SkipReason),
    /// The content hash matches the record; `overlay`: the content came from an overlay.
    SameContent {
        overlay: bool,
    },
    Chunked {
        overlay: bool,
        hash: String,
        language: Language,
        lines: u32,
        role: patina_core::FileRole,
        /// The file's own `SPDX-License-Identifier`.
        header_licence: Option<String>,
        chunks: Vec<patina_chunk::Chunk>,
        facts: patina_core::FileFacts,
    },
}

/// What an index round looks at.
#[derive(Debug)]
pub enum Scope {
    /// Walk the whole tree (new repository, start-up catch-up, unknown changes).
    Full,
    /// Only these paths, relative to the root (watcher events, git diffs). A path the index does
    /// not know yet may be ignored by the repository's rules, so it turns the round into `Full`.
    Paths(BTreeSet<String>),
}

/// Limits of an index round (the daemon's `[index]` configuration).
#[derive(Clone, Copy, Debug)]
pub struct RoundOptions {
    /// Files larger than this are skipped (reason `too_large`).
    pub max_file_bytes: u64,
    /// Chunks longer than this many lines are split.
    pub max_chunk_lines: usize,
    /// Read and chunk every file in scope again, even unchanged ones: the chunking or graph
    /// extraction rules changed since the index was made ([`patina_chunk::VERSION`],
    /// [`patina_chunk::GRAPH_VERSION`]).
    pub rechunk: bool,
    /// Extract each file's graph facts (references, imports, type relations); off, files have
    /// none and the dependency graph is empty.
    pub graph: bool,
}

/// Where a round reports: its progress, and every commit's [`Delta`] (the caller brings derived
/// indices, such as the vectors, in line with it before the round goes on).
pub trait RoundSink {
    fn progress(&self, p: &Progress);
    /// Called after each commit, once the store, the lexical index and the chunk and symbol
    /// tables hold the batch. An error fails the round.
    fn committed(&self, delta: &Delta) -> Result<()>;
}

/// The repository's summary after a round, computed from its file records.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    pub files: u64,
    pub chunks: u64,
    pub skipped: BTreeMap<String, u64>,
    pub skipped_examples: BTreeMap<String, Vec<String>>,
    pub languages: BTreeMap<String, u64>,
    /// Whether the round changed the index (only then is it the "last indexed" time).
    pub changed: bool,
    pub took_ms: u64,
}

impl Summary {
    /// Write the summary into the repository's record (and clear its last error).
    pub fn apply_to(&self, rec: &mut RepoRecord) {
        rec.files = self.files;
        rec.chunks = self.chunks;
        rec.skipped = self.skipped.clone();
        rec.skipped_examples = self.skipped_examples.clone();
        rec.languages = self.languages.clone();
        if self.changed || rec.last_indexed_unix_ms == 0 {
            rec.last_indexed_unix_ms = now_unix_ms();
            rec.last_index_ms = self.took_ms;
        }
        rec.last_error = None;
    }
}

fn now_unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl RepoIndex {
    /// Index incrementally, reporting through `sink`. Returns the repository's summary when the
    /// index is consistent; on an error (or a cancellation) the last commit stands and the files
    /// not committed are examined again by the next round.
    pub fn index_round(
        &self,
        opts: &RoundOptions,
        scope: Scope,
        sink: &dyn RoundSink,
    ) -> Result<Summary> {
        let _running = self.round_running();
        index_repo(self, opts, scope, sink)
    }

    /// Compare the index's own lists — file records, chunk rows and texts, lexical documents, the
    /// files on disk — without changing anything (`patina repair --check`). Call it while no index
    /// round runs: a round in progress is legitimately between states.
    pub fn audit(&self) -> Result<Repaired> {
        audit(self)
    }
}

/// Whether a file is indexed after the first-party code of its round: vendored or generated by
/// its path alone (no read), or a web bundle under a `dist/` folder (Go's `cmd/dist` is source).
fn deferred(rel: &str) -> bool {
    const BUNDLED: &[&str] = &[".js", ".mjs", ".cjs", ".css", ".map", ".d.ts"];
    matches!(
        patina_core::role::classify(rel, None),
        patina_core::FileRole::Vendored | patina_core::FileRole::Generated
    ) || (rel.split('/').rev().skip(1).any(|d| d == "dist")
        && BUNDLED.iter().any(|ext| rel.ends_with(ext)))
}

fn index_repo(
    repo: &RepoIndex,
    cfg: &RoundOptions,
    scope: Scope,
    sink: &dyn RoundSink,
) -> Result<Summary> {
    let started = Instant::now();
    let mut p = Progress {
        phase: Phase::Walking,
        ..Default::default()
    };
    sink.progress(&p);

    if !repo.root().is_dir() {
        anyhow::bail!("{} no longer exists", repo.root().display());
    }
    let (entries, mut old, walked) = match targeted(repo, scope)? {
        Some((entries, old)) => (entries, old, false),
        None => {
            let (entries, skips) = walk::walk_accounted(repo.root(), repo.cancelled_flag());
            if !repo.is_cancelled() {
                repo.set_walk_skips(skips);
            }
            (entries, repo.file_records()?.into_iter().collect(), true)
        }
    };
    if repo.is_cancelled() {
        anyhow::bail!("indexing cancelled");
    }
    let mut batch = StoreBatch::default();
    let mut repaired = Repaired::default();
    if walked {
        repaired = reconcile_store(repo, &mut old, &mut batch)?;
    }
    p.phase = Phase::Indexing;
    p.indexing_since = Some(Instant::now());
    p.files_total = entries.len() as u64;
    sink.progress(&p);

    // The licences the directories give their files: read again by every walk (a targeted round
    // naming a licence source, a manifest or LICENSE file, walks) and when none was read yet.
    let licences = match repo.licences() {
        Some(m) if !walked => m,
        _ => {
            let m = if walked {
                LicenceMap::build(repo.root(), entries.iter().map(|e| e.rel.as_str()))
            } else {
                let records = repo.file_records()?;
                LicenceMap::build(repo.root(), records.iter().map(|(p, _)| p.as_str()))
            };
            let m = Arc::new(m);
            repo.set_licences(m.clone());
            m
        }
    };
    // Each unchanged file's licence as its chunks carry it: a file whose licence moved (a
    // manifest or LICENSE file changed) or was never decided (an index from before licences) is
    // read again.
    let carried: HashMap<Arc<str>, Option<Arc<Licence>>> = repo.with_chunks(|c| {
        c.values()
            .map(|m| (m.path.clone(), m.licence.clone()))
            .collect()
    });
    let stale = |rel: &str| match carried.get(rel) {
        None => false, // no chunks (skipped, empty): nothing carries a licence
        Some(None) => true,
        Some(Some(l)) => l.source != LicenceSource::Header && **l != licences.lookup(rel),
    };

    // Decide cheaply (no reads) which files need work.
    let mut todo: Vec<(&WalkEntry, Option<FileRecord>)> = Vec::new();
    for e in &entries {
        match old.remove(&e.rel) {
            Some(rec)
                if !cfg.rechunk
                    && rec.size == e.size
                    && rec.mtime_ns == e.mtime_ns
                    && repo.overlay(&e.rel).is_none() =>
            {
                if stale(&e.rel) {
                    // Read and chunk again (the same chunks, now with their licence).
                    todo.push((e, Some(FileRecord { hash: None, ..rec })));
                } else {
                    p.files_done += 1
                }
            }
            rec => todo.push((e, rec)),
        }
    }
    // First-party code first: vendored and generated files (by path: `vendor/`, `node_modules/`,
    // lock files, minified bundles, `dist/`) are read after the rest, so a large tree's own code
    // is committed, and searchable, sooner. The sort is stable: walk order within each part.
    todo.sort_by_key(|(e, _)| deferred(&e.rel));
    let removed: Vec<(String, FileRecord)> = old.into_iter().collect();
    sink.progress(&p);

    let mut writer = repo.lexical().writer()?;
    let mut pending_files = 0usize;
    let opts = ChunkOptions {
        max_lines: cfg.max_chunk_lines,
        ..ChunkOptions::default()
    };

    for (path, rec) in &removed {
        writer.delete_path(path);
        batch.removed_chunks.extend(&rec.chunk_ids);
        batch.files.push((path.clone(), None));
        batch.facts.push((path.clone(), None));
        p.files_removed += 1;
    }

    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 4);
    let next = AtomicUsize::new(0);
    let (out_tx, out_rx) = mpsc::sync_channel::<(usize, Outcome)>(256);
    let cancelled = repo.cancelled_flag();
    let scrubber = repo.scrubber();
    let scrubber = scrubber.as_deref();
    let result: Result<()> = std::thread::scope(|s| {
        for _ in 0..workers {
            let out_tx = out_tx.clone();
            let (todo, next, opts) = (&todo, &next, &opts);
            s.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= todo.len() || cancelled.load(Ordering::Relaxed) {
                        break;
                    }
                    let (entry, rec) = &todo[i];
                    let known = rec.as_ref().filter(|_| !cfg.rechunk);
                    let overlay = repo.overlay(&entry.rel);
                    let outcome = examine(
                        repo.root(),
                        entry,
                        known,
                        overlay,
                        cfg.max_file_bytes,
                        opts,
                        cfg.graph,
                        scrubber,
                    );
                    if out_tx.send((i, outcome)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(out_tx);
        for (i, outcome) in out_rx {
            let (entry, rec) = &todo[i];
            let old_chunks = rec
                .as_ref()
                .map(|r| r.chunk_ids.clone())
                .unwrap_or_default();
            let record = match outcome {
                Outcome::Skipped(reason) => {
                    if !old_chunks.is_empty() {
                        writer.delete_path(&entry.rel);
                        batch.removed_chunks.extend(old_chunks);
                    }
                    if rec.is_some() {
                        batch.facts.push((entry.rel.clone(), None));
                    }
                    FileRecord {
                        mtime_ns: entry.mtime_ns,
                        size: entry.size,
                        hash: None,
                        language: None,
                        lines: 0,
                        chunk_ids: Vec::new(),
                        skipped: Some(reason),
                    }
                }
                Outcome::SameContent { overlay } => {
                    let mut r = rec.clone().expect("same content implies a record");
                    r.mtime_ns = entry.mtime_ns;
                    r.size = if overlay { u64::MAX } else { entry.size };
                    r
                }
                Outcome::Chunked {
                    overlay,
                    hash,
                    language,
                    lines,
                    role,
                    header_licence,
                    chunks,
                    facts,
                } => {
                    // One licence for the file's chunks.
                    let licence = Arc::new(licences.licence_of(&entry.rel, header_licence));
                    batch.facts.push((
                        entry.rel.clone(),
                        (facts != patina_core::FileFacts::default()).then(|| Arc::new(facts)),
                    ));
                    writer.delete_path(&entry.rel);
                    batch.removed_chunks.extend(old_chunks);
                    let mut ids = Vec::with_capacity(chunks.len());
                    // One path for the file's chunks (the chunk table keeps it once).
                    let shared_path: Arc<str> = Arc::from(entry.rel.as_str());
                    for c in chunks {
                        let chunk_hash = blake3::hash(c.text.as_bytes());
                        let id = patina_core::ids::chunk_id(
                            &entry.rel,
                            c.start_line,
                            c.end_line,
                            chunk_hash.as_bytes(),
                        );
                        writer.add(&LexicalDoc {
                            chunk_id: id,
                            path: &entry.rel,
                            symbol: c.symbol.as_deref().unwrap_or(""),
                            body: &c.text,
                        })?;
                        let chunk_role = patina_core::role::chunk_role(
                            role,
                            language == Language::Rust,
                            c.parent.as_deref(),
                            c.symbol.as_deref(),
                            &c.text,
                            c.prose_share,
                        );
                        let meta = ChunkMeta {
                            path: shared_path.clone(),
                            start_line: c.start_line,
                            end_line: c.end_line,
                            symbol: c.symbol,
                            kind: c.kind,
                            parent: c.parent,
                            language,
                            hash: patina_core::ContentHash::from_bytes(*chunk_hash.as_bytes()),
                            role: Some(chunk_role),
                            licence: Some(licence.clone()),
                        };
                        ids.push(id);
                        batch.added_chunks.push((id, meta, c.text));
                        p.chunks += 1;
                    }
                    p.files_changed += 1;
                    FileRecord {
                        mtime_ns: entry.mtime_ns,
                        // Read from an editor's buffer: recorded as unread (an impossible size),
                        // so the disk is read again once the overlay is gone.
                        size: if overlay { u64::MAX } else { entry.size },
                        hash: Some(hash),
                        language: Some(language),
                        lines,
                        chunk_ids: ids,
                        skipped: None,
                    }
                }
            };
            batch.files.push((entry.rel.clone(), Some(record)));
            pending_files += 1;
            p.files_done += 1;
            if pending_files >= COMMIT_FILES || batch.added_chunks.len() >= COMMIT_CHUNKS {
                commit(repo, &mut writer, &mut batch, &mut p, sink)?;
                pending_files = 0;
            } else if p.files_done.is_multiple_of(64) {
                sink.progress(&p);
            }
        }
        Ok(())
    });
    result?;
    if repo.is_cancelled() {
        // The repository is being removed or the daemon stops: leave the last commit as it is
        // (the uncommitted files are examined again by the next round) and stop at once.
        anyhow::bail!("indexing cancelled");
    }
    commit(repo, &mut writer, &mut batch, &mut p, sink)?;
    if walked {
        let (stray, missing) = reconcile_lexical(repo, &mut writer)?;
        repaired.stray_docs = stray;
        repaired.missing_docs = missing;
    }
    if !repaired.is_clean() {
        tracing::warn!(
            root = %repo.root().display(),
            orphan_chunks = repaired.orphan_chunks,
            dangling_records = repaired.dangling_records,
            stray_docs = repaired.stray_docs,
            missing_docs = repaired.missing_docs,
            "reconciled an index left inconsistent (by a crash?)"
        );
    }
    summarize(
        repo,
        started.elapsed().as_millis() as u64,
        p.files_changed + p.files_removed > 0,
    )
}

type Targets = (Vec<WalkEntry>, HashMap<String, FileRecord>);

/// The entries and records of a `Paths` scope; `None` when the round must walk everything.
fn targeted(repo: &RepoIndex, scope: Scope) -> Result<Option<Targets>> {
    let Scope::Paths(paths) = scope else {
        return Ok(None);
    };
    // A manifest or licence file changes the licence of every file below it: only a walk
    // re-examines them all.
    if paths.iter().any(|p| is_licence_source(p)) {
        return Ok(None);
    }
    let mut entries = Vec::new();
    let mut old = HashMap::new();
    for rel in paths {
        let rel_path = std::path::Path::new(&rel);
        if rel.is_empty()
            || rel_path
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            continue;
        }
        let record = repo.trees().file_record(&rel)?;
        let abs = repo.root().join(rel_path);
        match std::fs::symlink_metadata(&abs) {
            Ok(meta) if meta.is_file() => {
                if record.is_none() {
                    return Ok(None);
                }
                entries.push(WalkEntry {
                    rel: rel.clone(),
                    abs,
                    size: meta.len(),
                    mtime_ns: walk::mtime_ns(&meta),
                });
            }
            // A directory (or a symlink to one) appeared or changed: only a walk knows what is inside.
            Ok(meta) if meta.is_dir() => return Ok(None),
            // Gone. A deleted directory (a checkout removing a package) is reported as itself,
            // not file by file: every file recorded below it goes too, unless it is still there.
            Err(_) if record.is_none() => {
                for (below, r) in repo.trees().file_records_under(&rel)? {
                    let abs = repo.root().join(&below);
                    if let Ok(meta) = std::fs::symlink_metadata(&abs)
                        && (meta.is_file() || meta.is_dir())
                    {
                        return Ok(None);
                    }
                    old.insert(below, r);
                }
            }
            _ => {}
        }
        if let Some(r) = record {
            old.insert(rel, r);
        }
    }
    Ok(Some((entries, old)))
}

fn commit(
    repo: &RepoIndex,
    writer: &mut LexicalWriter,
    batch: &mut StoreBatch,
    p: &mut Progress,
    sink: &dyn RoundSink,
) -> Result<()> {
    if batch.is_empty() {
        return Ok(());
    }
    let phase = p.phase;
    p.phase = Phase::Committing;
    sink.progress(p);
    writer.commit()?;
    crate::crash_point("lexical-committed", || {});
    let delta = repo.apply(batch)?;
    sink.committed(&delta)?;
    *batch = StoreBatch::default();
    p.phase = phase;
    sink.progress(p);
    Ok(())
}

/// Recompute the repository's summary from its file records.
/// `changed`: whether this round changed the index (only then is it the "last indexed" time).
fn summarize(repo: &RepoIndex, took_ms: u64, changed: bool) -> Result<Summary> {
    let mut files = 0;
    let mut skipped: BTreeMap<String, u64> = BTreeMap::new();
    let mut examples: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut languages: BTreeMap<String, u64> = BTreeMap::new();
    for (path, rec) in repo.file_records()? {
        match rec.skipped {
            Some(reason) => {
                *skipped.entry(reason.name().into()).or_default() += 1;
                let ex = examples.entry(reason.name().into()).or_default();
                if ex.len() < 5 {
                    ex.push(path);
                }
            }
            None => {
                files += 1;
                if let Some(lang) = rec.language {
                    *languages.entry(lang.name().into()).or_default() += 1;
                }
            }
        }
    }
    for (reason, path) in repo.walk_skips().0 {
        *skipped.entry(reason.name().into()).or_default() += 1;
        let ex = examples.entry(reason.name().into()).or_default();
        if ex.len() < 5 {
            ex.push(path);
        }
    }
    Ok(Summary {
        files,
        chunks: repo.chunk_count() as u64,
        skipped,
        skipped_examples: examples,
        languages,
        changed,
        took_ms,
    })
}

/// Read (from `overlay` when one is set, else from disk beneath `root`), hash and chunk one file.
fn examine(
    root: &std::path::Path,
    entry: &WalkEntry,
    old: Option<&FileRecord>,
    overlay: Option<Arc<str>>,
    max_bytes: u64,
    opts: &ChunkOptions,
    graph: bool,
    scrubber: Option<&patina_core::pii::Scrubber>,
) -> Outcome {
    if patina_core::secret_reason(&entry.rel).is_some() {
        return Outcome::Skipped(SkipReason::Secret);
    }
    let from_overlay = overlay.is_some();
    if !from_overlay && entry.size > max_bytes {
        return Outcome::Skipped(SkipReason::TooLarge);
    }
    let bytes = match overlay {
        Some(text) => text.as_bytes().to_vec(),
        // Opened beneath the root, following no link: a file swapped for a symlink since the walk
        // is unreadable, never read through the link.
        None => match patina_confined::read(root, std::path::Path::new(&entry.rel), max_bytes) {
            Ok(b) => b,
            Err(_) => return Outcome::Skipped(SkipReason::Unreadable),
        },
    };
    if bytes.len() as u64 > max_bytes {
        return Outcome::Skipped(SkipReason::TooLarge);
    }
    if bytes[..bytes.len().min(BINARY_PROBE)].contains(&0) {
        return Outcome::Skipped(SkipReason::Binary);
    }
    let hash = blake3::hash(&bytes).to_hex().to_string();
    if old.is_some_and(|r| r.hash.as_deref() == Some(hash.as_str()) && r.skipped.is_none()) {
        return Outcome::SameContent {
            overlay: from_overlay,
        };
    }
    let Ok(mut text) = String::from_utf8(bytes) else {
        return Outcome::Skipped(SkipReason::InvalidUtf8);
    };
    // Personal data never reaches the chunks, the lexical index or the embeddings (masked
    // character for character: lines keep their numbers).
    if let Some(s) = scrubber
        && let std::borrow::Cow::Owned(masked) = s.scrub(&text)
    {
        text = masked;
    }
    let language = Language::detect(std::path::Path::new(&entry.rel), &text);
    // With the graph on, one parse gives both the chunks and the facts.
    let (chunks, facts) = if graph {
        let (chunks, mut facts) = patina_chunk::chunk_with_facts(language, &text, opts);
        patina_chunk::mark_package_reexports(&entry.rel, &mut facts);
        (chunks, facts)
    } else {
        (
            patina_chunk::chunk_file(language, &text, opts),
            patina_core::FileFacts::default(),
        )
    };
    let lines = text.lines().count() as u32;
    let head_end = text.char_indices().nth(4096).map_or(text.len(), |(i, _)| i);
    let mut role = patina_core::role::classify(&entry.rel, Some(&text[..head_end]));
    // Python's package rule, which needs the folder rather than the file: a folder holding an
    // `__init__.py` is a package, whatever its name (`doc/` included), so its code is source.
    if role == patina_core::FileRole::Docs
        && language == Language::Python
        && entry.abs.with_file_name("__init__.py").is_file()
    {
        role = patina_core::FileRole::Source;
    }
    let header_licence = patina_core::licence::header_licence(&text[..head_end]);
    Outcome::Chunked {
        overlay: from_overlay,
        hash,
        language,
        lines,
        role,
        header_licence,
        chunks,
        facts,
    }
}

#[cfg(test)]
mod tests;
