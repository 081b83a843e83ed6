//! A repository's vector index, in segments as Lucene and Qdrant keep theirs, so that it grows
//! without ever rebuilding the whole:
//!
//! - every vector is inserted once, into the **fresh** segment ([`fresh`]): flat arrays searched
//!   exactly (brute force);
//! - when the fresh segment reaches the seal size ([`SEAL_AT`]), its oldest vectors are
//!   **sealed**: an HNSW of just those ([`hnsw`]) is built off the lock and written once to an
//!   immutable file ([`sealed`]), then searched from that file, memory-mapped;
//! - small sealed segments **merge** into a larger one, tiered ([`MERGE_FACTOR`] of a size into
//!   one), never past [`MAX_SEGMENT`]; a merge copies only the segments it merges;
//! - a removal is a **tombstone** in the segment holding the vector; a merge drops them, and a
//!   segment a fifth tombstones is rewritten alone;
//! - a query searches every sealed graph and the fresh segment and merges by score.
//!
//! A seal or a merge is one [`VectorIndex::snapshot`] → [`VectorIndex::build`] (no lock; writes the
//! segment file) → [`VectorIndex::install`] cycle, due when [`VectorIndex::needs_build`] says so.
//!
//! On disk, beside the lexical index: `vectors/` holds the segment files and the manifest
//! ([`manifest`]), the commit point that names the live ones (a file is fsynced before the
//! manifest names it; files it does not name are deleted at open); `vectors.seg` saves the fresh
//! segment and the tombstones when the daemon is idle ([`VectorIndex::segment_bytes`]), stamped
//! with the model that computed the vectors and the segments it completes. A daemon that starts
//! with the same model restores it as it was and asks the embedding cache only for chunks that
//! changed since; with another model, other segments or a damaged file, the fresh segment is
//! derived again: the sealed ids compared with the live chunk table, the missing vectors read from
//! the embedding cache. Everything here is derived data: a damaged segment or manifest is dropped
//! at open (said in [`VectorIndex::discarded`]) and refilled the same way, as is the single graph
//! of older releases (`vectors.bin`).
//!
//! Vectors are held as 8-bit integers with one scale each ([`Vector`]): a quarter of the memory
//! of `f32` (384 bytes a chunk instead of 1,536). A query stays `f32` and is scored against the
//! stored integers (asymmetric), which keeps cosines within ~0.005 of the exact ones. The
//! embedding cache stores the same integers and scale, so a vector read back from it is stored
//! here with the same integers as the one the model computed.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::Result;

use fresh::{Fresh, FreshFile};
use sealed::Sealed;

/// The fresh segment is sealed at this many vectors: below it an exact scan is fast enough (20k ×
/// 384 multiply-adds ≈ 2 ms) and loses no recall, so no graph is built.
pub const SEAL_AT: usize = 20_000;
/// No merge makes a segment larger than this (a merge's build holds this many vectors, ~100 MB
/// with its links at dimension 384).
pub const MAX_SEGMENT: usize = 262_144;
/// Sealed segments of one size tier merge when there are this many.
pub const MERGE_FACTOR: usize = 4;
/// Candidates each sealed graph is searched for (at least `k`).
const EF_SEARCH: usize = 128;

/// The seal and merge sizes an index works with: [`SEAL_AT`] and [`MAX_SEGMENT`], small under
/// test so seals and merges of merges are exercised quickly (the bench sets its own).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub seal_at: usize,
    pub max_segment: usize,
}

impl Limits {
    pub const PRODUCTION: Limits = Limits {
        seal_at: SEAL_AT,
        max_segment: MAX_SEGMENT,
    };
    const DEFAULT: Limits = if cfg!(test) {
        Limits {
            seal_at: 200,
            max_segment: 4_000,
        }
    } else {
        Limits::PRODUCTION
    };
}

/// A unit-length embedding as 8-bit integers and a scale: component `i` is `scale × q[i]`, with
/// the largest magnitude mapped to ±127. Distance is `1 - cosine`.
#[derive(Clone)]
pub struct Vector {
    q: Box<[i8]>,
    scale: f32,
}

impl Vector {
    pub fn quantize(v: &[f32]) -> Vector {
        let (q, scale) = quantize(v);
        Vector {
            q: q.into_boxed_slice(),
            scale,
        }
    }

    /// The cosine of `query` (exact `f32`) with this vector.
    pub fn score(&self, query: &[f32]) -> f32 {
        dot_q(query, &self.q) * self.scale
    }
}

impl Vector {
    /// `1 -` the cosine of two stored vectors (how a graph is built).
    pub fn distance(&self, other: &Vector) -> f32 {
        1.0 - dot_qq(&self.q, &other.q) as f32 * self.scale * other.scale
    }
}

/// The vector integers `q` at `scale` stand for (what [`quantize`] was given, to 8 bits).
pub(crate) fn dequantize(q: impl IntoIterator<Item = i8>, scale: f32) -> Vec<f32> {
    q.into_iter().map(|x| f32::from(x) * scale).collect()
}

/// `v` as integers (largest magnitude ±127) and the scale that maps them back.
pub(crate) fn quantize(v: &[f32]) -> (Vec<i8>, f32) {
    let max = v.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    if max == 0.0 || !max.is_finite() {
        return (vec![0; v.len()], 0.0);
    }
    let scale = max / 127.0;
    (
        v.iter()
            .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8)
            .collect(),
        scale,
    )
}

/// `Σ a[i] × q[i]` of an exact query and stored integers (eight independent sums, see [`dot`]).
pub fn dot_q(a: &[f32], q: &[i8]) -> f32 {
    const LANES: usize = 8;
    let (ca, cq) = (a.chunks_exact(LANES), q.chunks_exact(LANES));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cq.remainder())
        .map(|(x, y)| x * f32::from(*y))
        .sum();
    let mut acc = [0.0f32; LANES];
    for (x, y) in ca.zip(cq) {
        for i in 0..LANES {
            acc[i] += x[i] * f32::from(y[i]);
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// `Σ a[i] × b[i]` of two stored vectors, exact in integers.
pub(crate) fn dot_qq(a: &[i8], b: &[i8]) -> i32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| i32::from(*x) * i32::from(*y))
        .sum()
}

pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    // Eight independent partial sums. One running sum is a chain of dependent additions that the
    // compiler may not reorder (f32 addition is not associative), so it stays scalar: on tokio's
    // 12,700 vectors the exact scan took ~12 ms per query that way.
    const LANES: usize = 8;
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    let mut acc = [0.0f32; LANES];
    for (x, y) in ca.zip(cb) {
        for i in 0..LANES {
            acc[i] += x[i] * y[i];
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// What a seal or a merge is to do.
#[derive(Clone, Debug, PartialEq)]
enum Job {
    Nothing,
    /// The fresh segment's oldest [`Limits::seal_at`] vectors become a sealed segment.
    Seal,
    /// These sealed segments (by number) become one, without their tombstones.
    Merge(Vec<u64>),
}

pub struct VectorIndex {
    /// The directory of the segment files and the manifest (`…/vectors`).
    dir: PathBuf,
    limits: Limits,
    /// Sealed segments by number.
    sealed: Vec<Sealed>,
    fresh: Fresh,
    /// The number the next segment gets.
    next: u64,
    /// Changes to the fresh segment or tombstones so far, and how many of them `vectors.seg` holds.
    changes: u64,
    saved: u64,
    /// What [`VectorIndex::open`] found damaged or outdated and dropped.
    discarded: Vec<String>,
}

/// What a seal or a merge builds from, taken under the lock by [`VectorIndex::snapshot`]: a copy
/// of the fresh vectors to seal (at most the seal size), or the segments to merge shared (their
/// mappings; the vectors are read off the lock, in [`VectorIndex::build`]) — never the whole
/// index.
pub struct Snapshot {
    len: usize,
    ids: Vec<u64>,
    q: Vec<i8>,
    scales: Vec<f32>,
    dim: usize,
    /// The segments a merge reads, as they were (tombstones included) at the snapshot.
    sources: Vec<Sealed>,
    job: Job,
    number: u64,
    dir: PathBuf,
}

impl Snapshot {
    /// How many vectors the new segment is built of.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether this is a merge of sealed segments (else a seal of fresh vectors).
    pub fn is_merge(&self) -> bool {
        matches!(self.job, Job::Merge(_))
    }
}

/// A segment built, written and opened from a [`Snapshot`], for [`VectorIndex::install`].
pub struct Built {
    job: Job,
    number: u64,
    segment: Result<Option<Sealed>>,
    dir: PathBuf,
}

impl VectorIndex {
    /// Open the index in `path` (a directory, `vectors/` beside the lexical index): the segments
    /// the manifest names, each checked against its hash; what is damaged is dropped with a
    /// warning ([`VectorIndex::discarded`]) — derived data, its vectors come back from the
    /// embedding cache. Files the manifest does not name (a build that never committed) are
    /// deleted, and so is an older release's single graph (`vectors.bin` beside the directory).
    pub fn open(path: &Path) -> VectorIndex {
        VectorIndex::open_with(path, Limits::DEFAULT)
    }

    pub(crate) fn open_with(path: &Path, limits: Limits) -> VectorIndex {
        let mut discarded = Vec::new();
        let old = path.with_extension("bin");
        if old.exists() {
            tracing::warn!(
                path = %old.display(),
                "vector index written by an older release (one graph); rebuilding it in segments from the embedding cache"
            );
            discarded.push(format!("{}: an older release's graph", old.display()));
            let _ = std::fs::remove_file(&old);
        }
        let (manifest, mut rewrite) = match manifest::read(path) {
            Ok(m) => (m.unwrap_or_default(), false),
            Err(e) => {
                tracing::warn!(path = %path.display(), "vector manifest unreadable ({e}); rebuilding the vector index from the embedding cache");
                discarded.push(format!("the manifest: {e}"));
                (manifest::Manifest::default(), true)
            }
        };
        let mut sealed = Vec::new();
        for e in &manifest.segments {
            let opened = e.hash().ok_or_else(|| "no hash".to_string()).and_then(|h| {
                sealed::open(path, e.number, h, e.tombstones.iter().copied().collect())
            });
            match opened {
                Ok(s) => sealed.push(s),
                Err(why) => {
                    tracing::warn!(path = %path.display(), segment = e.number, "vector segment unreadable ({why}); its vectors come from the embedding cache");
                    discarded.push(format!(
                        "segment {} ({} vectors): {why}",
                        e.number, e.vectors
                    ));
                    rewrite = true;
                }
            }
        }
        sealed.sort_by_key(|s| s.number);
        let next = sealed
            .iter()
            .map(|s| s.number + 1)
            .fold(manifest.next, u64::max);
        let idx = VectorIndex {
            dir: path.to_path_buf(),
            limits,
            sealed,
            fresh: Fresh::default(),
            next,
            changes: 0,
            saved: 0,
            discarded,
        };
        if rewrite && let Err(e) = manifest::write(path, idx.entries(&idx.sealed), next) {
            tracing::warn!(path = %path.display(), "rewriting the vector manifest failed: {e:#}");
        }
        idx.delete_unnamed();
        idx
    }

    /// Seal at `seal_at` vectors instead of [`SEAL_AT`] (merges bounded at 16 seals): the
    /// daemon's test hook, so the end-to-end suite's small repositories seal and merge.
    pub fn set_seal_size(&mut self, seal_at: usize) {
        let seal_at = seal_at.max(1);
        self.limits = Limits {
            seal_at,
            max_segment: MAX_SEGMENT.min(seal_at.saturating_mul(16)),
        };
    }

    /// Remove the files in the directory that the manifest does not name.
    fn delete_unnamed(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let named: HashSet<String> = self
            .sealed
            .iter()
            .map(|s| sealed::file_name(s.number))
            .chain([manifest::FILE.to_string()])
            .collect();
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if !named.contains(&name) {
                tracing::info!(file = %e.path().display(), "removing a vector file no manifest names");
                let _ = std::fs::remove_file(e.path());
            }
        }
    }

    /// What opening dropped, one line each (a damaged manifest or segment, an old release's file).
    pub fn discarded(&self) -> &[String] {
        &self.discarded
    }

    /// The manifest's entries for `segments`, with their tombstones now.
    fn entries(&self, segments: &[Sealed]) -> Vec<manifest::Entry> {
        segments
            .iter()
            .map(|s| {
                let mut tombstones: Vec<u64> = s.tombstones.iter().copied().collect();
                tombstones.sort_unstable();
                manifest::Entry {
                    number: s.number,
                    vectors: s.len() as u64,
                    bytes: s.mapped_bytes(),
                    hash: blake3::Hash::from(s.hash).to_hex().to_string(),
                    tombstones,
                }
            })
            .collect()
    }

    /// What a `vectors.seg` completes: the sealed segments, by number and hash.
    fn stamp(&self) -> [u8; 32] {
        let mut h = blake3::Hasher::new();
        for s in &self.sealed {
            h.update(&s.number.to_le_bytes());
            h.update(&s.hash);
        }
        *h.finalize().as_bytes()
    }

    /// Restore the fresh segment and tombstones saved in `vectors.seg`, if it was written by a
    /// daemon whose vectors came from `tag` (model and precision) and completes the sealed
    /// segments that were opened. Returns whether it did: then every vector in the index was
    /// computed under `tag`, and only chunks that changed since need the embedding cache.
    /// Otherwise the index is left as it was (sealed segments only) and the file is ignored.
    pub fn restore_segment(&mut self, tag: &str) -> bool {
        let path = self.segment_file();
        let Ok(bytes) = std::fs::read(&path) else {
            return false;
        };
        let file = match fresh::decode(&bytes) {
            Ok(f) => f,
            Err(e) => {
                tracing::warn!(path = %path.display(), "vector segment unreadable ({e}); its vectors come from the embedding cache");
                return false;
            }
        };
        drop(bytes);
        if file.tag != tag || file.completes != self.stamp() {
            tracing::info!(path = %path.display(), "vector segment of another model or other segments; its vectors come from the embedding cache");
            return false;
        }
        let dim = file.data.len().checked_div(file.ids.len()).unwrap_or(0);
        if file.ids.len() != file.scales.len() || dim * file.ids.len() != file.data.len() {
            tracing::warn!(path = %path.display(), "vector segment inconsistent; its vectors come from the embedding cache");
            return false;
        }
        // The arrays as read, trimmed: serde pre-allocates at most 1 MiB of a sequence and grows
        // it by doubling, which left up to half of each array unused (heaptrack at 100k chunks:
        // 58.7 MB held for 44 MB of vectors). Inserting one by one would do the same.
        let FreshFile {
            tombstones,
            mut ids,
            mut scales,
            mut data,
            ..
        } = file;
        ids.shrink_to_fit();
        data.shrink_to_fit();
        scales.shrink_to_fit();
        let pos: std::collections::HashMap<u64, usize> =
            ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
        if pos.len() != ids.len() {
            tracing::warn!(path = %path.display(), "vector segment repeats a chunk; its vectors come from the embedding cache");
            return false;
        }
        self.fresh = Fresh {
            ids,
            data,
            scales,
            pos,
        };
        // Tombstones only grow while a segment lives, so the later set holds the earlier one.
        for (number, ids) in tombstones {
            if let Some(s) = self.sealed.iter_mut().find(|s| s.number == number) {
                for id in ids {
                    if s.find(id).is_some() {
                        s.tombstones.insert(id);
                    }
                }
            }
        }
        self.saved = self.changes;
        true
    }

    /// `vectors.seg`'s bytes for the fresh segment and tombstones as they are now, stamped with
    /// `tag`, and the change count they hold (for [`VectorIndex::mark_saved`]); `None` when the
    /// file already holds them. Serialising is cheap (a copy of the 8-bit vectors); write the
    /// bytes with [`write_segment`] outside the index lock.
    pub fn segment_bytes(&self, tag: &str) -> Option<(u64, Vec<u8>)> {
        if self.changes == self.saved {
            return None;
        }
        let tombstones = self
            .sealed
            .iter()
            .filter(|s| !s.tombstones.is_empty())
            .map(|s| {
                let mut t: Vec<u64> = s.tombstones.iter().copied().collect();
                t.sort_unstable();
                (s.number, t)
            })
            .collect();
        let file = FreshFile {
            tag: tag.to_string(),
            completes: self.stamp(),
            tombstones,
            ids: self.fresh.ids.clone(),
            scales: self.fresh.scales.clone(),
            data: self.fresh.data.clone(),
        };
        Some((self.changes, fresh::encode(&file)?))
    }

    /// Note that `vectors.seg` now holds the state of change `changes` (the index is idle: its
    /// arrays are trimmed to their contents).
    pub fn mark_saved(&mut self, changes: u64) {
        self.saved = self.saved.max(changes);
        self.fresh.trim();
    }

    /// Where [`VectorIndex::segment_bytes`] go: `vectors.seg` beside the directory.
    pub fn segment_file(&self) -> PathBuf {
        self.dir.with_extension("seg")
    }

    /// Every chunk id with a vector: the sealed segments' (less tombstones) and the fresh one's.
    pub fn ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.sealed_ids().chain(self.fresh.ids.iter().copied())
    }

    /// Chunk ids live in the sealed segments (the files on disk; what a start-up checks against
    /// the embedding cache when no `vectors.seg` vouches for them).
    pub fn sealed_ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.sealed.iter().flat_map(|s| s.live_ids())
    }

    pub fn contains(&self, id: u64) -> bool {
        self.fresh.contains(id) || self.sealed.iter().any(|s| s.holds(id))
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn len(&self) -> usize {
        self.fresh.len() + self.sealed.iter().map(Sealed::live).sum::<usize>()
    }

    /// How many sealed segments there are.
    pub fn segments(&self) -> usize {
        self.sealed.len()
    }

    /// Heap bytes held, by contents: the fresh segment's vectors and their map entries, the
    /// tombstones, a few hundred bytes a sealed segment. The sealed vectors and links are mapped, not on the heap
    /// ([`VectorIndex::mapped_bytes`]).
    pub fn heap_bytes(&self) -> u64 {
        const SET_ENTRY: usize = 8 + 8;
        let tombstones: usize = self
            .sealed
            .iter()
            .map(|s| s.tombstones.len() * SET_ENTRY)
            .sum();
        let sealed = self.sealed.len() * std::mem::size_of::<Sealed>();
        (self.fresh.heap_bytes() + tombstones + sealed) as u64
    }

    /// Bytes of the sealed segments' files mapped: in the page cache as queries touch them,
    /// which the kernel may drop again.
    pub fn mapped_bytes(&self) -> u64 {
        self.sealed.iter().map(Sealed::mapped_bytes).sum()
    }

    /// Add or replace `id`'s vector. A chunk id names its content, so an id live in a sealed
    /// segment keeps its vector there; any other goes to the fresh segment.
    pub fn insert(&mut self, id: u64, v: Vec<f32>) {
        self.changes += 1;
        if !self.fresh.contains(id) && self.sealed.iter().any(|s| s.holds(id)) {
            return;
        }
        self.fresh.insert(id, &Vector::quantize(&v));
    }

    pub fn remove(&mut self, id: u64) {
        self.changes += 1;
        self.fresh.remove(id);
        for s in &mut self.sealed {
            if s.find(id).is_some() {
                s.tombstones.insert(id);
            }
        }
    }

    /// Whether a seal or a merge is due ([`VectorIndex::snapshot`] would give it work).
    pub fn needs_build(&self) -> bool {
        self.plan() != Job::Nothing
    }

    /// Take what the next seal or merge builds from (empty when none is due): the fresh
    /// segment's oldest [`Limits::seal_at`] vectors, or the segments to merge. They stay searched
    /// where they are until [`VectorIndex::install`].
    pub fn snapshot(&mut self) -> Snapshot {
        let job = self.plan();
        let mut snap = Snapshot {
            len: 0,
            ids: Vec::new(),
            q: Vec::new(),
            scales: Vec::new(),
            dim: 0,
            sources: Vec::new(),
            job: job.clone(),
            number: self.next,
            dir: self.dir.clone(),
        };
        match &job {
            Job::Nothing => return snap,
            Job::Seal => {
                let n = self.limits.seal_at.min(self.fresh.len());
                snap.dim = self.fresh.dim();
                snap.ids = self.fresh.ids[..n].to_vec();
                snap.q = self.fresh.data[..n * snap.dim].to_vec();
                snap.scales = self.fresh.scales[..n].to_vec();
                snap.len = n;
            }
            Job::Merge(numbers) => {
                snap.sources = self
                    .sealed
                    .iter()
                    .filter(|s| numbers.contains(&s.number))
                    .cloned()
                    .collect();
                snap.len = snap.sources.iter().map(Sealed::live).sum();
            }
        }
        self.next += 1;
        snap
    }

    /// Build the snapshot's segment, write its file and open it (slow; call without holding the
    /// index lock). Never more vectors than the seal or merge bound.
    pub fn build(snapshot: Snapshot) -> Built {
        let Snapshot {
            mut ids,
            mut q,
            mut scales,
            mut dim,
            sources,
            job,
            number,
            dir,
            ..
        } = snapshot;
        for s in &sources {
            dim = s.dim();
            for (id, v, scale) in s.iter_live() {
                ids.push(id);
                q.extend_from_slice(v);
                scales.push(scale);
            }
        }
        drop(sources);
        let segment = if job == Job::Nothing || ids.is_empty() {
            Ok(None)
        } else {
            sealed::write(&dir, number, dim, ids, q, scales).and_then(|w| {
                sealed::open(&dir, w.number, w.hash, HashSet::new())
                    .map(Some)
                    .map_err(|e| {
                        let _ = std::fs::remove_file(dir.join(sealed::file_name(number)));
                        anyhow::anyhow!("the segment just written does not read back: {e}")
                    })
            })
        };
        Built {
            job,
            number,
            segment,
            dir,
        }
    }

    /// Put a built segment in place of what it was built from, and commit (the manifest). Changes
    /// made since the snapshot hold: a vector removed or replaced meanwhile is a tombstone in the
    /// new segment (a replacement stays in the fresh segment), one added stays fresh. A merge
    /// whose segments are no longer all there (another build replaced one) is dropped.
    pub fn install(&mut self, built: Built) -> Result<()> {
        let Built {
            job,
            number,
            segment,
            dir,
        } = built;
        let mut new = segment?;
        if job == Job::Nothing || dir != self.dir {
            return Ok(());
        }
        let inputs = match &job {
            Job::Merge(numbers) => numbers.clone(),
            _ => Vec::new(),
        };
        let drop_file = || {
            let _ = std::fs::remove_file(dir.join(sealed::file_name(number)));
        };
        if !inputs
            .iter()
            .all(|n| self.sealed.iter().any(|s| s.number == *n))
        {
            drop_file();
            return Ok(());
        }
        // What changed since the snapshot.
        let mut leave_fresh = Vec::new();
        if let Some(s) = &mut new {
            let mut tombstones = HashSet::new();
            match &job {
                Job::Seal => {
                    for (id, q, scale) in s.iter_live() {
                        if self.fresh.get(id) == Some((q, scale)) {
                            leave_fresh.push(id);
                        } else {
                            tombstones.insert(id);
                        }
                    }
                }
                _ => {
                    // Gone since the snapshot: taken live from an input, live in none now (an id
                    // tombstoned in one input may be live in another, sealed again later).
                    let inputs: Vec<&Sealed> = self
                        .sealed
                        .iter()
                        .filter(|s| inputs.contains(&s.number))
                        .collect();
                    for input in &inputs {
                        tombstones.extend(input.tombstones.iter().copied().filter(|&id| {
                            s.find(id).is_some() && !inputs.iter().any(|i| i.holds(id))
                        }));
                    }
                }
            }
            s.tombstones = tombstones;
        }
        if new.as_ref().is_some_and(|s| s.live() == 0) {
            drop_file();
            new = None;
        }
        if new.is_none() && inputs.is_empty() {
            return Ok(());
        }
        // Commit: the manifest names the new list; only then does memory change and do the
        // merged files go.
        let added = new.is_some();
        let (kept, gone): (Vec<Sealed>, Vec<Sealed>) = std::mem::take(&mut self.sealed)
            .into_iter()
            .partition(|s| !inputs.contains(&s.number));
        self.sealed = kept;
        self.sealed.extend(new);
        let committed = manifest::write(&self.dir, self.entries(&self.sealed), self.next);
        if let Err(e) = committed {
            if added {
                self.sealed.pop();
                drop_file();
            }
            self.sealed.extend(gone);
            self.sealed.sort_by_key(|s| s.number);
            return Err(e);
        }
        self.sealed.sort_by_key(|s| s.number);
        for id in leave_fresh {
            self.fresh.remove(id);
        }
        for s in gone {
            let _ = std::fs::remove_file(self.dir.join(sealed::file_name(s.number)));
        }
        self.changes += 1;
        Ok(())
    }

    /// The `k` nearest live vectors passing `allow`, as (chunk id, cosine similarity), best first,
    /// ties by id: each sealed graph searched for `max(k, 128)` candidates, the fresh segment
    /// exactly.
    pub fn search(&self, query: &[f32], k: usize, allow: &dyn Fn(u64) -> bool) -> Vec<(u64, f32)> {
        let mut out: Vec<(u64, f32)> = Vec::new();
        let ef = EF_SEARCH.max(k);
        for s in &self.sealed {
            for (id, sim) in s.search(query, ef) {
                if !s.tombstones.contains(&id) && allow(id) {
                    out.push((id, sim));
                }
            }
        }
        for (id, q, scale) in self.fresh.iter() {
            if allow(id) {
                out.push((id, dot_q(query, q) * scale));
            }
        }
        let best_first = |a: &(u64, f32), b: &(u64, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if out.len() > k && k > 0 {
            // Only the best k need sorting.
            out.select_nth_unstable_by(k - 1, best_first);
            out.truncate(k);
        }
        out.sort_by(best_first);
        out.truncate(k);
        out
    }
}

/// Write `vectors.seg` (atomically: write, fsync, rename).
pub fn write_segment(path: &Path, bytes: &[u8]) -> Result<()> {
    manifest::write_atomic(path, bytes)
}

mod fresh;
mod hnsw;
mod lookup;
mod manifest;
mod packed;
mod plan;
mod sealed;
#[cfg(test)]
mod tests;

pub use packed::Packed;
