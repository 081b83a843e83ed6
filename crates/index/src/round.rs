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

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
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
}

impl Progress {
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
        index_repo(self, opts, scope, sink)
    }

    /// Compare the index's own lists — file records, chunk rows and texts, lexical documents, the
    /// files on disk — without changing anything (`patina repair --check`). Call it while no index
    /// round runs: a round in progress is legitimately between states.
    pub fn audit(&self) -> Result<Repaired> {
        audit(self)
    }
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
    // Texts are read once per store written before rows and texts were one transaction.
    let read_texts = walked && !repo.trees().texts_paired()?;
    if walked {
        repaired = reconcile_store(repo, &mut old, &mut batch, read_texts)?;
    }
    p.phase = Phase::Indexing;
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
    let carried: HashMap<String, Option<Licence>> = repo.with_chunks(|c| {
        c.values()
            .map(|m| (m.path.clone(), m.licence.clone()))
            .collect()
    });
    let stale = |rel: &str| match carried.get(rel) {
        None => false, // no chunks (skipped, empty): nothing carries a licence
        Some(None) => true,
        Some(Some(l)) => l.source != LicenceSource::Header && *l != licences.lookup(rel),
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
                    let licence = licences.licence_of(&entry.rel, header_licence);
                    batch.facts.push((
                        entry.rel.clone(),
                        (facts != patina_core::FileFacts::default()).then(|| Arc::new(facts)),
                    ));
                    writer.delete_path(&entry.rel);
                    batch.removed_chunks.extend(old_chunks);
                    let mut ids = Vec::with_capacity(chunks.len());
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
                            path: entry.rel.clone(),
                            start_line: c.start_line,
                            end_line: c.end_line,
                            symbol: c.symbol,
                            kind: c.kind,
                            parent: c.parent,
                            language,
                            hash: chunk_hash.to_hex().to_string(),
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
    if read_texts {
        // Every orphan text found is gone with the commits above.
        repo.trees().set_texts_paired()?;
    }
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

/// What reconciliation found (and, inside an index round, fixed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Repaired {
    /// Chunk rows (metadata or text) no file record points at.
    pub orphan_chunks: u64,
    /// File records pointing at chunks the store does not hold.
    pub dangling_records: u64,
    /// Lexical documents of chunks that are not live, or second copies of a live one.
    pub stray_docs: u64,
    /// Live chunks without a lexical document.
    pub missing_docs: u64,
    /// File records of paths that are no longer files on disk (audit only: a walk removes them).
    pub vanished_files: u64,
}

impl Repaired {
    pub fn is_clean(&self) -> bool {
        *self == Repaired::default()
    }
}

/// The store's side of reconciliation, before a walking round indexes: every chunk row that no
/// file record points at joins `batch` as a removal (so it also leaves the chunk table and the
/// vector index at the commit), and every record that points at a missing chunk is marked
/// unread (no hash, impossible size) so the round reads and re-chunks its file. `read_texts`:
/// compare the stored texts too (else each chunk row is known to have its text:
/// `RepoTrees::texts_paired`).
fn reconcile_store(
    repo: &RepoIndex,
    records: &mut HashMap<String, FileRecord>,
    batch: &mut StoreBatch,
    read_texts: bool,
) -> Result<Repaired> {
    let texts: Option<HashSet<u64>> = if read_texts {
        Some(repo.trees().text_ids()?.into_iter().collect())
    } else {
        None
    };
    let has_text = |id: &u64| texts.as_ref().is_none_or(|t| t.contains(id));
    repo.with_chunks(|chunks| {
        let mut out = Repaired::default();
        let mut referenced = HashSet::new();
        for rec in records.values_mut() {
            if !rec
                .chunk_ids
                .iter()
                .all(|id| chunks.contains_key(id) && has_text(id))
            {
                out.dangling_records += 1;
                rec.hash = None;
                rec.size = u64::MAX;
            }
            referenced.extend(rec.chunk_ids.iter().copied());
        }
        let orphans: BTreeSet<u64> = chunks
            .keys()
            .chain(texts.iter().flatten())
            .filter(|id| !referenced.contains(id))
            .copied()
            .collect();
        out.orphan_chunks = orphans.len() as u64;
        batch.removed_chunks.extend(orphans);
        Ok(out)
    })
}

/// The lexical side of reconciliation, after a walking round committed: the index must hold one
/// document per live chunk (the chunk table), nothing else. Documents are rebuilt from the store,
/// which holds everything a document is made of.
fn reconcile_lexical(repo: &RepoIndex, writer: &mut LexicalWriter) -> Result<(u64, u64)> {
    let (stray, missing) = lexical_differences(repo)?;
    if stray.is_empty() && missing.is_empty() {
        return Ok((0, 0));
    }
    for id in &stray {
        writer.delete_chunk(*id);
    }
    let chunks = repo.with_chunks(|c| c.clone());
    // A duplicated live chunk was deleted above; it is added back once.
    for id in stray
        .iter()
        .filter(|id| chunks.contains_key(id))
        .chain(&missing)
    {
        let (Some(meta), Some(text)) = (chunks.get(id), repo.text(*id)?) else {
            continue;
        };
        writer.add(&LexicalDoc {
            chunk_id: *id,
            path: &meta.path,
            symbol: meta.symbol.as_deref().unwrap_or(""),
            body: &text,
        })?;
    }
    writer.commit()?;
    repo.lexical().reload()?;
    Ok((stray.len() as u64, missing.len() as u64))
}

/// Chunk ids whose lexical documents must go (not live, or indexed more than once) and live chunk
/// ids without a document.
fn lexical_differences(repo: &RepoIndex) -> Result<(Vec<u64>, Vec<u64>)> {
    let mut counts: HashMap<u64, u32> = HashMap::new();
    for id in repo.lexical().chunk_ids()? {
        *counts.entry(id).or_default() += 1;
    }
    repo.with_chunks(|chunks| {
        let mut stray: Vec<u64> = counts
            .iter()
            .filter(|(id, n)| **n > 1 || !chunks.contains_key(id))
            .map(|(id, _)| *id)
            .collect();
        let mut missing: Vec<u64> = chunks
            .keys()
            .filter(|id| !counts.contains_key(id))
            .copied()
            .collect();
        stray.sort_unstable();
        missing.sort_unstable();
        Ok((stray, missing))
    })
}

fn audit(repo: &RepoIndex) -> Result<Repaired> {
    let mut records: HashMap<String, FileRecord> = repo.file_records()?.into_iter().collect();
    let vanished = records
        .keys()
        .filter(|rel| {
            !std::fs::symlink_metadata(repo.root().join(rel.as_str())).is_ok_and(|m| m.is_file())
        })
        .count() as u64;
    let mut scratch = StoreBatch::default();
    let mut out = reconcile_store(repo, &mut records, &mut scratch, true)?;
    let (stray, missing) = lexical_differences(repo)?;
    out.stray_docs = stray.len() as u64;
    out.missing_docs = missing.len() as u64;
    out.vanished_files = vanished;
    Ok(out)
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

/// Read (from `overlay` when one is set, else from disk), hash and chunk one file.
fn examine(
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
        None => match read_bounded(&entry.abs, max_bytes) {
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
    let language = Language::from_path(std::path::Path::new(&entry.rel));
    // With the graph on, one parse gives both the chunks and the facts.
    let (chunks, facts) = if graph {
        patina_chunk::chunk_with_facts(language, &text, opts)
    } else {
        (
            patina_chunk::chunk_file(language, &text, opts),
            patina_core::FileFacts::default(),
        )
    };
    let lines = text.lines().count() as u32;
    let head_end = text.char_indices().nth(4096).map_or(text.len(), |(i, _)| i);
    let role = patina_core::role::classify(&entry.rel, Some(&text[..head_end]));
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

/// Read at most `max_bytes + 1` bytes of the regular file at `path`: enough to tell it is too
/// large, whatever size it reports (procfs and sysfs files say 0 and may be endless). Opened
/// without following a symlink and without blocking (a FIFO swapped in since the walk is refused
/// by the file-type check, never waited on).
fn read_bounded(path: &std::path::Path, max_bytes: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut bytes = Vec::with_capacity(meta.len().min(max_bytes) as usize + 1);
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::time::Duration;

    use super::*;
    use crate::store::Store;

    /// A sink that keeps every commit's delta.
    #[derive(Default)]
    struct Recorder {
        deltas: Mutex<Vec<Delta>>,
    }

    impl RoundSink for Recorder {
        fn progress(&self, _: &Progress) {}

        fn committed(&self, delta: &Delta) -> Result<()> {
            self.deltas.lock().unwrap().push(delta.clone());
            Ok(())
        }
    }

    impl Recorder {
        /// Chunks added and removed since the last call, over all commits.
        fn take(&self) -> (BTreeSet<u64>, BTreeSet<u64>) {
            let deltas = std::mem::take(&mut *self.deltas.lock().unwrap());
            let added = deltas
                .iter()
                .flat_map(|d| d.added.iter().copied())
                .collect();
            let removed = deltas
                .iter()
                .flat_map(|d| d.removed.iter().copied())
                .collect();
            (added, removed)
        }
    }

    fn chunks_named(index: &RepoIndex, symbol: &str) -> BTreeSet<u64> {
        index.with_chunks(|c| {
            c.iter()
                .filter(|(_, m)| m.symbol.as_deref() == Some(symbol))
                .map(|(id, _)| *id)
                .collect()
        })
    }

    /// The index round without a daemon: a first round hands over every chunk it adds; a targeted
    /// round after an edit only the edited file's chunks, old ones removed and new ones added; the
    /// store, the chunk table and the lexical index agree all along.
    /// A state directory with its store, and a tree where `alpha` (src/a.rs) calls `beta`
    /// (src/b.rs).
    fn alpha_calls_beta() -> (tempfile::TempDir, Store, tempfile::TempDir) {
        let state = tempfile::tempdir().unwrap();
        let tree = tempfile::tempdir().unwrap();
        let root = tree.path();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.rs"), "pub fn alpha() {\n    beta();\n}\n").unwrap();
        std::fs::write(root.join("src/b.rs"), "pub fn beta() {}\n").unwrap();
        let store = Store::open(&state.path().join("state")).unwrap();
        (state, store, tree)
    }

    fn open_index(state: &tempfile::TempDir, store: &Store, root: &std::path::Path) -> RepoIndex {
        RepoIndex::open(
            root.to_path_buf(),
            store.repo_trees("r").unwrap(),
            &state.path().join("lexical"),
        )
        .unwrap()
    }

    fn graph_opts() -> RoundOptions {
        RoundOptions {
            max_file_bytes: 1 << 20,
            max_chunk_lines: 150,
            rechunk: false,
            graph: true,
        }
    }

    /// Rows and texts are written in one transaction, so a start-up round reads the texts (every
    /// chunk's, into sled's page cache) only once per store written before that: it repairs what
    /// such a store could hold (a text without its row), marks the store, and later rounds trust
    /// the pairing. `audit` (`patina repair --check`) always reads them.
    #[test]
    fn texts_are_read_once_per_store_written_before_rows_and_texts_were_one_write() {
        let (state, store, tree) = alpha_calls_beta();
        let index = open_index(&state, &store, tree.path());
        let sink = Recorder::default();
        let trees = store.repo_trees("r").unwrap();
        assert!(!trees.texts_paired().unwrap(), "a new store is not marked");
        index
            .index_round(&graph_opts(), Scope::Full, &sink)
            .unwrap();
        assert!(
            trees.texts_paired().unwrap(),
            "marked by its first full round"
        );
        assert!(index.audit().unwrap().is_clean());

        // The store as an earlier release could leave it: a text whose row is gone.
        trees
            .part_a_text_from_its_row(0xdead_beef, "fn gone() {}")
            .unwrap();
        assert_eq!(
            index.audit().unwrap().orphan_chunks,
            1,
            "audit reads every text"
        );
        index
            .index_round(&graph_opts(), Scope::Full, &sink)
            .unwrap();
        assert!(trees.texts_paired().unwrap());
        assert!(
            index.audit().unwrap().is_clean(),
            "the unmarked store's round removed the orphan text"
        );
        assert_eq!(trees.text(0xdead_beef).unwrap(), None);
    }

    /// A round that adds many chunks leaves the tables laid out afresh once, with the same rows
    /// and the same symbols; a small edit after it does not trigger it again.
    #[test]
    fn after_bulk_growth_the_tables_are_laid_out_afresh_unchanged() {
        let (state, store, tree) = alpha_calls_beta();
        let root = tree.path();
        for f in 0..10 {
            let body: String = (0..6)
                .map(|i| format!("pub fn func_{f}_{i}() -> u32 {{\n    {i}\n}}\n\n"))
                .collect();
            std::fs::write(root.join(format!("src/m{f}.rs")), body).unwrap();
        }
        let index = open_index(&state, &store, root);
        let sink = Recorder::default();
        index
            .index_round(&graph_opts(), Scope::Full, &sink)
            .unwrap();
        let rows = index.with_chunks(|c| c.clone());
        let named = |i: &RepoIndex| {
            let mut v: Vec<(String, u64)> = i
                .symbols()
                .symbols
                .iter()
                .map(|e| (e.key.clone(), e.chunk_id))
                .collect();
            v.sort();
            v
        };
        let symbols = named(&index);
        assert!(rows.len() >= 60, "{} chunks", rows.len());

        assert!(index.repack_if_grown(), "60 new chunks: laid out afresh");
        assert_eq!(index.with_chunks(|c| c.clone()), rows);
        assert_eq!(named(&index), symbols);
        assert_eq!(chunks_named(&index, "func_3_4").len(), 1);
        assert!(!index.repack_if_grown(), "nothing added since");

        std::fs::write(
            root.join("src/b.rs"),
            "pub fn beta() {}\npub fn gamma() {}\n",
        )
        .unwrap();
        index
            .index_round(
                &graph_opts(),
                Scope::Paths(BTreeSet::from(["src/b.rs".to_string()])),
                &sink,
            )
            .unwrap();
        assert_eq!(chunks_named(&index, "gamma").len(), 1);
        assert!(
            !index.repack_if_grown(),
            "one file's chunks are not bulk growth"
        );
    }

    #[test]
    fn rounds_hand_over_exactly_what_they_change() {
        let (state, store, tree) = alpha_calls_beta();
        let root = tree.path();
        std::fs::write(root.join(".gitignore"), "ignored.rs\n").unwrap();
        std::fs::write(root.join("ignored.rs"), "pub fn hidden() {}\n").unwrap();
        let index = open_index(&state, &store, root);
        let mut opts = graph_opts();
        let sink = Recorder::default();

        let summary = index.index_round(&opts, Scope::Full, &sink).unwrap();
        assert_eq!(summary.files, 3, "a.rs, b.rs, .gitignore: {summary:?}");
        let (added, removed) = sink.take();
        assert!(removed.is_empty());
        assert_eq!(added.len(), index.chunk_count());
        assert_eq!(summary.chunks as usize, index.chunk_count());
        assert!(
            chunks_named(&index, "hidden").is_empty(),
            "ignored files are not indexed"
        );
        let beta = chunks_named(&index, "beta");
        assert_eq!(beta.len(), 1);

        // The graph: alpha calls beta (line 2).
        let callers: Vec<(String, u32)> = index
            .graph()
            .references("beta", true)
            .into_iter()
            .map(|e| (e.from.unwrap().symbol, e.site.line))
            .collect();
        assert_eq!(callers, vec![("alpha".to_string(), 2)]);

        std::fs::write(root.join("src/b.rs"), "pub fn gamma_function() {}\n").unwrap();
        let scope = Scope::Paths(BTreeSet::from(["src/b.rs".to_string()]));
        index.index_round(&opts, scope, &sink).unwrap();
        let (added, removed) = sink.take();
        assert_eq!(removed, beta, "only the edited file's old chunks leave");
        assert_eq!(added, chunks_named(&index, "gamma_function"));
        assert!(chunks_named(&index, "beta").is_empty());
        assert!(
            index.graph().references("beta", true).is_empty(),
            "the edit's commit updated the graph"
        );
        std::fs::write(
            root.join("src/a.rs"),
            "pub fn alpha() {\n    gamma_function();\n}\n",
        )
        .unwrap();
        let scope = Scope::Paths(BTreeSet::from(["src/a.rs".to_string()]));
        index.index_round(&opts, scope, &sink).unwrap();
        sink.take();
        let graph = index.graph();
        let alpha = graph.defs("alpha").remove(0);
        let callees: Vec<String> = graph
            .calls_in(&alpha)
            .into_iter()
            .map(|e| e.to.symbol)
            .collect();
        assert_eq!(callees, vec!["gamma_function"]);
        assert_eq!(chunks_named(&index, "alpha").len(), 1);

        let mut in_lexical = index.lexical().chunk_ids().unwrap();
        in_lexical.sort_unstable();
        let live: Vec<u64> = index.with_chunks(|c| {
            let mut ids: Vec<u64> = c.keys().copied().collect();
            ids.sort_unstable();
            ids
        });
        assert_eq!(in_lexical, live, "one lexical document per live chunk");
        assert!(index.audit().unwrap().is_clean());

        // Nothing changed: a full round commits nothing.
        index.index_round(&opts, Scope::Full, &sink).unwrap();
        assert_eq!(sink.take(), (BTreeSet::new(), BTreeSet::new()));

        // New chunking rules: every file is chunked again although none changed. The same text
        // gives the same chunk ids, so the index ends where it was.
        opts.rechunk = true;
        let before = index.with_chunks(|c| c.keys().copied().collect::<BTreeSet<u64>>());
        let summary = index.index_round(&opts, Scope::Full, &sink).unwrap();
        let (added, _) = sink.take();
        assert_eq!(added, before, "every chunk was written again");
        assert_eq!(summary.chunks as usize, before.len());
        assert!(index.audit().unwrap().is_clean());

        // Graph extraction switched off: rechunked, the files keep their chunks and lose their
        // facts.
        opts.graph = false;
        index.index_round(&opts, Scope::Full, &sink).unwrap();
        assert_eq!(chunks_named(&index, "alpha").len(), 1);
        let graph = index.graph();
        assert!(graph.calls_in(&graph.defs("alpha").remove(0)).is_empty());
        assert!(graph.all_edges().is_empty());
    }

    /// What a walk passes over is accounted for: a file name that is not UTF-8 (escaped), a FIFO
    /// and an unreadable directory each count under their reason, with the path as an example.
    fn callers(index: &RepoIndex, name: &str) -> Vec<String> {
        index
            .graph()
            .references(name, true)
            .into_iter()
            .map(|e| e.from.unwrap().symbol)
            .collect()
    }

    /// The dependency graph is memory only while used: not built by indexing, built from the
    /// store on first use, dropped when idle, and whatever changed while it was out of memory is
    /// in the table built next; a resident graph follows each commit.
    #[test]
    fn the_graph_is_built_on_use_dropped_when_idle_and_never_stale() {
        let (state, store, tree) = alpha_calls_beta();
        let root = tree.path();
        let index = open_index(&state, &store, root);
        let opts = graph_opts();
        let sink = Recorder::default();
        index.index_round(&opts, Scope::Full, &sink).unwrap();
        assert!(!index.graph_resident(), "indexing does not build the graph");
        assert_eq!(callers(&index, "beta"), ["alpha"]);
        assert!(index.graph_resident());

        // Used just now: not idle.
        assert!(!index.release_idle_graph(Duration::from_secs(60)));
        assert!(index.release_idle_graph(Duration::ZERO));
        assert!(!index.graph_resident());

        // An edit while the graph is out of memory: the next build reads it from the store.
        std::fs::write(root.join("src/c.rs"), "pub fn gamma() {\n    beta();\n}\n").unwrap();
        let scope = Scope::Paths(BTreeSet::from(["src/c.rs".to_string()]));
        index.index_round(&opts, scope, &sink).unwrap();
        assert!(!index.graph_resident());
        assert_eq!(callers(&index, "beta"), ["alpha", "gamma"]);

        // Resident: an edit's commit updates it in place.
        std::fs::write(root.join("src/a.rs"), "pub fn alpha() {}\n").unwrap();
        let scope = Scope::Paths(BTreeSet::from(["src/a.rs".to_string()]));
        index.index_round(&opts, scope, &sink).unwrap();
        assert!(index.graph_resident());
        assert_eq!(callers(&index, "beta"), ["gamma"]);

        // Reopened (a daemon restart): nothing in memory until asked, then the same answer.
        drop(index);
        let index = open_index(&state, &store, root);
        assert!(!index.graph_resident());
        assert_eq!(callers(&index, "beta"), ["gamma"]);
    }

    #[test]
    fn files_the_walk_passes_over_are_counted_with_a_reason() {
        use std::os::unix::ffi::OsStrExt;
        use std::os::unix::fs::PermissionsExt;
        let state = tempfile::tempdir().unwrap();
        let tree = tempfile::tempdir().unwrap();
        let root = tree.path();
        std::fs::write(root.join("ok.rs"), "pub fn fine() {}\n").unwrap();
        let bad = std::ffi::OsStr::from_bytes(b"bad\xffname.rs");
        std::fs::write(root.join(bad), "pub fn hidden() {}\n").unwrap();
        let fifo = std::ffi::CString::new(root.join("pipe").as_os_str().as_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        std::fs::create_dir(root.join("locked")).unwrap();
        std::fs::write(root.join("locked/x.rs"), "pub fn x() {}\n").unwrap();
        std::fs::set_permissions(root.join("locked"), std::fs::Permissions::from_mode(0o000))
            .unwrap();
        // root reads any directory: then there is no unreadable directory to count.
        let privileged = std::fs::read_dir(root.join("locked")).is_ok();
        let store = Store::open(&state.path().join("state")).unwrap();
        let index = RepoIndex::open(
            root.to_path_buf(),
            store.repo_trees("r").unwrap(),
            &state.path().join("lexical"),
        )
        .unwrap();
        let opts = RoundOptions {
            max_file_bytes: 1 << 20,
            max_chunk_lines: 150,
            rechunk: false,
            graph: true,
        };
        let summary = index
            .index_round(&opts, Scope::Full, &Recorder::default())
            .unwrap();
        std::fs::set_permissions(root.join("locked"), std::fs::Permissions::from_mode(0o700))
            .unwrap();
        let ex = |r: &str| summary.skipped_examples.get(r).cloned().unwrap_or_default();
        assert_eq!(summary.skipped.get("invalid_name"), Some(&1), "{summary:?}");
        assert_eq!(ex("invalid_name"), ["bad\\xffname.rs"]);
        assert_eq!(summary.skipped.get("not_regular"), Some(&1), "{summary:?}");
        assert_eq!(ex("not_regular"), ["pipe"]);
        if !privileged {
            assert_eq!(
                summary.skipped.get("unreadable_dir"),
                Some(&1),
                "{summary:?}"
            );
            assert_eq!(ex("unreadable_dir"), ["locked"]);
        }
        // A targeted round keeps the last walk's account.
        let scope = Scope::Paths(BTreeSet::from(["ok.rs".to_string()]));
        let again = index
            .index_round(&opts, scope, &Recorder::default())
            .unwrap();
        assert_eq!(again.skipped, summary.skipped);
    }

    /// A deleted directory named as one path (as watchers report it) takes every file recorded
    /// below it out of the index, in a targeted round.
    #[test]
    fn a_deleted_directory_takes_its_files_along() {
        let state = tempfile::tempdir().unwrap();
        let tree = tempfile::tempdir().unwrap();
        let root = tree.path();
        std::fs::create_dir_all(root.join("pkg/inner")).unwrap();
        std::fs::write(root.join("pkg/inner/mod.rs"), "pub fn deep_one() {}\n").unwrap();
        std::fs::write(root.join("pkg/top.rs"), "pub fn deep_two() {}\n").unwrap();
        std::fs::write(root.join("pkgs.rs"), "pub fn sibling() {}\n").unwrap();
        let store = Store::open(&state.path().join("state")).unwrap();
        let index = RepoIndex::open(
            root.to_path_buf(),
            store.repo_trees("r").unwrap(),
            &state.path().join("lexical"),
        )
        .unwrap();
        let opts = RoundOptions {
            max_file_bytes: 1 << 20,
            max_chunk_lines: 150,
            rechunk: false,
            graph: true,
        };
        index
            .index_round(&opts, Scope::Full, &Recorder::default())
            .unwrap();
        std::fs::remove_dir_all(root.join("pkg")).unwrap();
        let scope = Scope::Paths(BTreeSet::from(["pkg".to_string()]));
        let summary = index
            .index_round(&opts, scope, &Recorder::default())
            .unwrap();
        assert_eq!(summary.files, 1, "{summary:?}");
        assert!(chunks_named(&index, "deep_one").is_empty());
        assert!(chunks_named(&index, "deep_two").is_empty());
        assert_eq!(chunks_named(&index, "sibling").len(), 1);
    }

    /// An overlay stands in for the file on disk while it is set (a path round reads it, even
    /// though size and mtime are unchanged); once cleared, the next path round reads the disk
    /// again and the buffer's symbols are gone.
    #[test]
    fn overlays_stand_in_for_the_disk_until_cleared() {
        let state = tempfile::tempdir().unwrap();
        let tree = tempfile::tempdir().unwrap();
        let root = tree.path();
        std::fs::write(root.join("a.rs"), "pub fn on_disk() {}\n").unwrap();
        let store = Store::open(&state.path().join("state")).unwrap();
        let index = RepoIndex::open(
            root.to_path_buf(),
            store.repo_trees("r").unwrap(),
            &state.path().join("lexical"),
        )
        .unwrap();
        let opts = RoundOptions {
            max_file_bytes: 1 << 20,
            max_chunk_lines: 150,
            rechunk: false,
            graph: true,
        };
        let sink = Recorder::default();
        let path_scope = || Scope::Paths(["a.rs".to_string()].into_iter().collect());
        index.index_round(&opts, Scope::Full, &sink).unwrap();
        assert_eq!(chunks_named(&index, "on_disk").len(), 1);

        index.set_overlay("a.rs", Some("pub fn in_buffer() {}\n".into()));
        index.index_round(&opts, path_scope(), &sink).unwrap();
        assert_eq!(chunks_named(&index, "in_buffer").len(), 1);
        assert!(chunks_named(&index, "on_disk").is_empty());
        // A full round keeps reading the overlay.
        index.index_round(&opts, Scope::Full, &sink).unwrap();
        assert_eq!(chunks_named(&index, "in_buffer").len(), 1);

        index.set_overlay("a.rs", None);
        assert_eq!(index.overlay_count(), 0);
        index.index_round(&opts, path_scope(), &sink).unwrap();
        assert_eq!(chunks_named(&index, "on_disk").len(), 1);
        assert!(chunks_named(&index, "in_buffer").is_empty());
    }
}
