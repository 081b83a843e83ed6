//! A repository's vector index. instant-distance builds an HNSW in one batch and cannot change it
//! afterwards, so the index is three parts: the last built HNSW (persisted), a brute-force segment
//! of vectors added since that build, and tombstones for built vectors whose chunks are gone.
//! Queries search both parts and merge; a rebuild folds the segment and tombstones in.
//!
//! The HNSW is persisted when it is built (`vectors.bin`); the segment and the tombstones are
//! persisted beside it when they changed and the daemon is idle (`vectors.seg`, [`VectorIndex::
//! segment_bytes`]), stamped with the model that computed the vectors and the graph they complete.
//! A daemon that starts with the same model restores both as they were and asks the embedding
//! cache only for chunks that changed since; with another model, another graph or a damaged file,
//! the segment is derived again as before: the HNSW's chunk ids compared with the live chunk
//! table, the vectors read from the embedding cache. Both files are derived data.
//!
//! Vectors are held as 8-bit integers with one scale each ([`Vector`]): a quarter of the memory
//! of `f32` (384 bytes a chunk instead of 1,536). A query stays `f32` and is scored against the
//! stored integers (asymmetric), which keeps cosines within ~0.005 of the exact ones. The
//! embedding cache stores the same integers and scale, so a vector read back from it is stored
//! here with the same integers as the one the model computed.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use instant_distance::{Builder, HnswMap, Point, Search};
use serde::{Deserialize, Serialize};

/// Rebuild once the unbuilt segment holds this many vectors (and is a sizeable share of the index).
const REBUILD_MIN_FRESH: usize = 2048;
/// Below this many vectors an exact scan is fast enough (20k × 384 multiply-adds ≈ 2 ms) and loses
/// no recall, so no graph is built. (Small under test so the graph path is exercised quickly.)
const MIN_HNSW: usize = if cfg!(test) { 300 } else { 20_000 };
const EF_SEARCH: usize = 128;
/// The first bytes of `vectors.bin`: the graph's format (8-bit vectors). Files without it were
/// written with `f32` vectors by earlier releases.
const FORMAT: &[u8] = b"patina-vectors-i8-1\n";
const EF_CONSTRUCTION: usize = 100;
/// The first bytes of `vectors.seg`: the segment and tombstones beside a graph.
const SEGMENT_FORMAT: &[u8] = b"patina-segment-i8-1\n";

/// What `vectors.seg` holds after its format line (bincode), followed by the blake3 of everything
/// before the hash.
#[derive(Serialize, Deserialize)]
struct SegmentFile {
    /// The model (and precision) that computed the vectors: a daemon with another one ignores the file.
    tag: String,
    /// The graph the segment completes (its file's hash), `None` without a graph.
    graph: Option<[u8; 32]>,
    tombstones: Vec<u64>,
    ids: Vec<u64>,
    scales: Vec<f32>,
    data: Vec<i8>,
}

/// A unit-length embedding as 8-bit integers and a scale: component `i` is `scale × q[i]`, with
/// the largest magnitude mapped to ±127. Distance is `1 - cosine`.
#[derive(Clone, Serialize, Deserialize)]
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

impl Point for Vector {
    fn distance(&self, other: &Self) -> f32 {
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
fn dot_qq(a: &[i8], b: &[i8]) -> i32 {
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

/// Vectors not in the graph, stored contiguously: a query scans them all, and one flat array
/// streams from memory where one allocation per vector made every vector a cache miss (tokio's
/// 12,700 vectors: ~12 ms per query scattered).
#[derive(Default)]
struct Segment {
    ids: Vec<u64>,
    data: Vec<i8>,
    scales: Vec<f32>,
    pos: HashMap<u64, usize>,
}

impl Segment {
    fn len(&self) -> usize {
        self.ids.len()
    }

    fn contains(&self, id: u64) -> bool {
        self.pos.contains_key(&id)
    }

    fn insert(&mut self, id: u64, v: &Vector) {
        let dim = v.q.len();
        if let Some(&i) = self.pos.get(&id) {
            self.data[i * dim..(i + 1) * dim].copy_from_slice(&v.q);
            self.scales[i] = v.scale;
            return;
        }
        debug_assert!(
            self.ids.is_empty() || self.dim() == dim,
            "one dimension per index"
        );
        self.pos.insert(id, self.ids.len());
        self.ids.push(id);
        self.data.extend_from_slice(&v.q);
        self.scales.push(v.scale);
    }

    fn dim(&self) -> usize {
        self.data.len().checked_div(self.ids.len()).unwrap_or(0)
    }

    fn remove(&mut self, id: u64) {
        let Some(i) = self.pos.remove(&id) else {
            return;
        };
        let dim = self.dim();
        let last = self.ids.len() - 1;
        if i != last {
            self.ids.swap(i, last);
            self.scales.swap(i, last);
            let (head, tail) = self.data.split_at_mut(last * dim);
            head[i * dim..(i + 1) * dim].copy_from_slice(&tail[..dim]);
            self.pos.insert(self.ids[i], i);
        }
        self.ids.pop();
        self.scales.pop();
        self.data.truncate(last * dim);
    }

    /// (id, integers, scale) of every vector.
    fn iter(&self) -> impl Iterator<Item = (u64, &[i8], f32)> {
        let dim = self.dim().max(1);
        self.ids
            .iter()
            .copied()
            .zip(self.data.chunks_exact(dim))
            .zip(self.scales.iter().copied())
            .map(|((id, q), s)| (id, q, s))
    }

    fn retain(&mut self, keep: impl Fn(u64) -> bool) {
        let gone: Vec<u64> = self.ids.iter().copied().filter(|&id| !keep(id)).collect();
        for id in gone {
            self.remove(id);
        }
    }
}

pub struct VectorIndex {
    path: PathBuf,
    built: Option<HnswMap<Vector, u64>>,
    /// The hash of the graph's file (what a saved segment says it completes).
    graph_hash: Option<[u8; 32]>,
    built_ids: HashSet<u64>,
    fresh: Segment,
    tombstones: HashSet<u64>,
    /// Removed since the last snapshot: they must stay invisible in the graph built from it.
    removed_since_snapshot: HashSet<u64>,
    /// Changes to the segment or tombstones so far, and how many of them `vectors.seg` holds.
    changes: u64,
    saved: u64,
}

/// The HNSW of chunk vectors, by chunk id.
pub type Graph = HnswMap<Vector, u64>;

/// A graph built from a [`Snapshot`] (`None`: too few vectors to pay for one).
pub type Built = Option<Graph>;

/// What a background rebuild needs: every live vector.
pub struct Snapshot {
    pub ids: Vec<u64>,
    pub vectors: Vec<Vector>,
}

impl VectorIndex {
    /// Load the persisted HNSW at `path` if there is one. An unreadable file — damaged, or written
    /// by a release that stored vectors otherwise — is discarded with a warning: it is derived
    /// data, and the vectors come back from the embedding cache into a graph built again.
    pub fn open(path: &Path) -> VectorIndex {
        let (built, graph_hash) = match read_graph(path) {
            Ok(Some((map, hash))) => (Some(map), Some(hash)),
            Ok(None) => (None, None),
            Err(GraphUnreadable::OldFormat) => {
                tracing::warn!(
                    path = %path.display(),
                    "vector index written by an older release (f32 vectors); rebuilding it from the embedding cache"
                );
                (None, None)
            }
            Err(GraphUnreadable::Damaged(e)) => {
                tracing::warn!(
                    path = %path.display(),
                    "vector index unreadable ({e}); rebuilding it from the embedding cache"
                );
                (None, None)
            }
        };
        let built_ids = built
            .as_ref()
            .map(|m| m.values.iter().copied().collect())
            .unwrap_or_default();
        VectorIndex {
            path: path.to_path_buf(),
            graph_hash,
            built,
            built_ids,
            fresh: Segment::default(),
            tombstones: HashSet::new(),
            removed_since_snapshot: HashSet::new(),
            changes: 0,
            saved: 0,
        }
    }

    /// Restore the segment and tombstones saved beside the graph, if `vectors.seg` was written by
    /// a daemon whose vectors came from `tag` (model and precision) and completes the graph that
    /// was loaded. Returns whether it did: then every vector in the index was computed under
    /// `tag`, and only chunks that changed since need the embedding cache. Otherwise the index is
    /// left as it was (graph only) and the file is ignored.
    pub fn restore_segment(&mut self, tag: &str) -> bool {
        let path = self.segment_file();
        let Ok(bytes) = std::fs::read(&path) else {
            return false;
        };
        let file = match decode_segment(&bytes) {
            Ok(f) => f,
            Err(e) => {
                tracing::warn!(path = %path.display(), "vector segment unreadable ({e}); its vectors come from the embedding cache");
                return false;
            }
        };
        if file.tag != tag || file.graph != self.graph_hash {
            tracing::info!(path = %path.display(), "vector segment of another model or graph; its vectors come from the embedding cache");
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
        let mut file = file;
        file.ids.shrink_to_fit();
        file.data.shrink_to_fit();
        file.scales.shrink_to_fit();
        let pos: HashMap<u64, usize> = file
            .ids
            .iter()
            .enumerate()
            .map(|(i, id)| (*id, i))
            .collect();
        if pos.len() != file.ids.len() {
            tracing::warn!(path = %path.display(), "vector segment repeats a chunk; its vectors come from the embedding cache");
            return false;
        }
        self.fresh = Segment {
            ids: file.ids,
            data: file.data,
            scales: file.scales,
            pos,
        };
        self.tombstones = file
            .tombstones
            .into_iter()
            .filter(|id| self.built_ids.contains(id))
            .collect();
        self.saved = self.changes;
        true
    }

    /// `vectors.seg`'s bytes for the segment and tombstones as they are now, stamped with `tag`,
    /// and the change count they hold (for [`VectorIndex::mark_saved`]); `None` when the file
    /// already holds them. Serialising is cheap (a copy of the 8-bit vectors); write the bytes
    /// with [`write_segment`] outside the index lock.
    pub fn segment_bytes(&self, tag: &str) -> Option<(u64, Vec<u8>)> {
        if self.changes == self.saved {
            return None;
        }
        let mut tombstones: Vec<u64> = self.tombstones.iter().copied().collect();
        tombstones.sort_unstable();
        let file = SegmentFile {
            tag: tag.to_string(),
            graph: self.graph_hash,
            tombstones,
            ids: self.fresh.ids.clone(),
            scales: self.fresh.scales.clone(),
            data: self.fresh.data.clone(),
        };
        let mut bytes = SEGMENT_FORMAT.to_vec();
        bytes.extend(bincode::serialize(&file).ok()?);
        let hash = *blake3::hash(&bytes).as_bytes();
        bytes.extend_from_slice(&hash);
        Some((self.changes, bytes))
    }

    /// Note that `vectors.seg` now holds the state of change `changes` (the index is idle: its
    /// arrays are trimmed to their contents).
    pub fn mark_saved(&mut self, changes: u64) {
        self.saved = self.saved.max(changes);
        // Saved means idle: arrays that grew by doubling give back what is left unused (only
        // when that is a quarter or more, so a repository edited a chunk at a time does not copy
        // its segment at every save).
        if self.fresh.data.capacity() >= self.fresh.data.len() + self.fresh.data.len() / 4 + 4096 {
            self.fresh.ids.shrink_to_fit();
            self.fresh.data.shrink_to_fit();
            self.fresh.scales.shrink_to_fit();
            self.fresh.pos.shrink_to_fit();
        }
    }

    /// Where [`VectorIndex::segment_bytes`] go: `vectors.seg` beside the graph.
    pub fn segment_file(&self) -> PathBuf {
        self.path.with_extension("seg")
    }

    /// Every chunk id with a vector: the graph's (less tombstones) and the segment's.
    pub fn ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.built_ids
            .iter()
            .copied()
            .filter(|id| !self.tombstones.contains(id))
            .chain(self.fresh.ids.iter().copied())
    }

    /// Chunk ids present in the persisted graph (used at load to derive segment and tombstones).
    pub fn built_ids(&self) -> &HashSet<u64> {
        &self.built_ids
    }

    pub fn contains(&self, id: u64) -> bool {
        self.fresh.contains(id) || (self.built_ids.contains(&id) && !self.tombstones.contains(&id))
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn len(&self) -> usize {
        self.fresh.len() + self.built_ids.len() - self.tombstones.len()
    }

    /// Approximate heap bytes: a graph point is its vector (a row, its integers in an allocation
    /// of their own), its 2 × 32 layer-zero links (instant-distance's `M`), its id and its entry
    /// in `built_ids`; a fresh vector is its integers, scale, id and position entry.
    pub fn heap_bytes(&self) -> u64 {
        const LINKS: usize = 2 * 32 * 4;
        const SET_ENTRY: usize = 16;
        let graph_dim = self
            .built
            .as_ref()
            .and_then(|g| g.iter().next())
            .map(|(_, v)| v.q.len());
        let dim = self.fresh.dim().max(graph_dim.unwrap_or(0));
        let point = std::mem::size_of::<Vector>() + dim.next_multiple_of(16) + 16;
        let built = self.built_ids.len() * (point + LINKS + 8 + SET_ENTRY);
        let fresh = self.fresh.len() * (dim + 4 + 8 + SET_ENTRY + 8);
        let sets = (self.tombstones.len() + self.removed_since_snapshot.len()) * SET_ENTRY;
        (built + fresh + sets) as u64
    }

    pub fn insert(&mut self, id: u64, v: Vec<f32>) {
        self.changes += 1;
        self.tombstones.remove(&id);
        self.removed_since_snapshot.remove(&id);
        if !self.built_ids.contains(&id) {
            self.fresh.insert(id, &Vector::quantize(&v));
        }
    }

    pub fn remove(&mut self, id: u64) {
        self.changes += 1;
        self.fresh.remove(id);
        self.removed_since_snapshot.insert(id);
        if self.built_ids.contains(&id) {
            self.tombstones.insert(id);
        }
    }

    /// Whether the unbuilt segment (or the tombstones) have grown enough to fold into a new graph.
    ///
    /// `filling`: an embedding backlog is still adding vectors. A build then waits until the
    /// segment is as large as the graph (each build at least doubles it, so a backlog of `n`
    /// vectors costs builds of ~`2n` vectors in all instead of one per tenth: seventeen builds of
    /// 40–111k vectors while 114k filled, bench/RESULTS.md), and the exact scan of the segment a
    /// query pays meanwhile stays at most half the index. Once the backlog is drained the usual
    /// rule (a tenth) applies and one build takes in the rest.
    pub fn needs_rebuild(&self, filling: bool) -> bool {
        let live = self.len();
        if live < MIN_HNSW {
            // Small: brute force only; drop a graph that no longer pays for itself.
            return self.built.is_some() && !self.tombstones.is_empty();
        }
        let share = if filling { live / 2 } else { live / 10 };
        self.fresh.len() >= REBUILD_MIN_FRESH.min(MIN_HNSW).max(share)
            || self.tombstones.len() > live / 5
    }

    pub fn snapshot(&mut self) -> Snapshot {
        self.removed_since_snapshot.clear();
        let mut ids = Vec::with_capacity(self.len());
        let mut vectors = Vec::with_capacity(self.len());
        if let Some(map) = &self.built {
            for (pid, p) in map.iter() {
                let id = map.values[pid.into_inner() as usize];
                if !self.tombstones.contains(&id) {
                    ids.push(id);
                    vectors.push(p.clone());
                }
            }
        }
        for (id, q, scale) in self.fresh.iter() {
            ids.push(id);
            vectors.push(Vector { q: q.into(), scale });
        }
        Snapshot { ids, vectors }
    }

    /// Build a graph from a snapshot (slow; call without holding the index lock).
    pub fn build(snapshot: Snapshot) -> Built {
        if snapshot.ids.len() < MIN_HNSW {
            return None;
        }
        Some(
            Builder::default()
                .ef_construction(EF_CONSTRUCTION)
                .ef_search(EF_SEARCH)
                .seed(0x5eed)
                .build(snapshot.vectors, snapshot.ids),
        )
    }

    /// Swap in a graph built from a snapshot; changes made since the snapshot stay in the segment
    /// and tombstones. Persists the graph atomically (write, fsync, rename).
    pub fn install(&mut self, built: Built) -> Result<()> {
        let new_ids: HashSet<u64> = built
            .as_ref()
            .map(|m| m.values.iter().copied().collect())
            .unwrap_or_default();
        // Vectors the old graph held that the new one lacks must move to the segment.
        if let Some(old) = &self.built {
            for (pid, p) in old.iter() {
                let id = old.values[pid.into_inner() as usize];
                if !new_ids.contains(&id) && !self.tombstones.contains(&id) {
                    self.fresh.insert(id, p);
                }
            }
        }
        self.fresh.retain(|id| !new_ids.contains(&id));
        // Chunks removed after the snapshot are in the new graph: hide them.
        self.tombstones = self
            .removed_since_snapshot
            .intersection(&new_ids)
            .copied()
            .collect();
        self.changes += 1;
        match &built {
            Some(map) => {
                self.graph_hash = Some(write_graph(&self.path, map)?);
            }
            None => {
                let _ = std::fs::remove_file(&self.path);
                self.graph_hash = None;
            }
        }
        self.built = built;
        self.built_ids = new_ids;
        Ok(())
    }

    /// The `k` nearest live vectors passing `allow`, as (chunk id, cosine similarity), best first.
    pub fn search(&self, query: &[f32], k: usize, allow: &dyn Fn(u64) -> bool) -> Vec<(u64, f32)> {
        let mut out: Vec<(u64, f32)> = Vec::new();
        if let Some(map) = &self.built {
            let mut search = Search::default();
            // The graph is walked with the query quantized like the points; the hits are scored
            // with the exact query.
            for item in map.search(&Vector::quantize(query), &mut search) {
                let id = *item.value;
                if !self.tombstones.contains(&id) && allow(id) {
                    out.push((id, item.point.score(query)));
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

fn decode_segment(bytes: &[u8]) -> Result<SegmentFile> {
    let body = bytes
        .strip_prefix(SEGMENT_FORMAT)
        .context("not a vector segment of this release")?;
    anyhow::ensure!(body.len() >= 32, "truncated");
    let (body, hash) = body.split_at(body.len() - 32);
    let mut h = blake3::Hasher::new();
    h.update(SEGMENT_FORMAT);
    h.update(body);
    anyhow::ensure!(h.finalize().as_bytes() == hash, "checksum mismatch");
    Ok(bincode::deserialize(body)?)
}

/// Write `vectors.seg` (atomically: write, fsync, rename).
pub fn write_segment(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic(path, bytes)
}

/// Why a graph file was not loaded.
enum GraphUnreadable {
    /// Written by a release that stored `f32` vectors (no [`FORMAT`] line).
    OldFormat,
    Damaged(String),
}

/// Read the graph at `path` and the blake3 of the whole file, streaming: the file is never held
/// in memory beside the graph it decodes to (tens of MB at 100k vectors). `Ok(None)`: no file.
fn read_graph(path: &Path) -> Result<Option<(Graph, [u8; 32])>, GraphUnreadable> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(GraphUnreadable::Damaged(e.to_string())),
    };
    let mut reader = Hashing {
        inner: std::io::BufReader::with_capacity(1 << 16, file),
        hash: blake3::Hasher::new(),
    };
    let mut head = vec![0u8; FORMAT.len()];
    if std::io::Read::read_exact(&mut reader, &mut head).is_err() || head != FORMAT {
        return Err(GraphUnreadable::OldFormat);
    }
    let map = bincode::deserialize_from(&mut reader)
        .map_err(|e| GraphUnreadable::Damaged(e.to_string()))?;
    // Bytes after the graph are damage too: the hash must cover the file a segment was saved with.
    let mut rest = [0u8; 1];
    match std::io::Read::read(&mut reader, &mut rest) {
        Ok(0) => Ok(Some((map, *reader.hash.finalize().as_bytes()))),
        Ok(_) => Err(GraphUnreadable::Damaged("bytes after the graph".into())),
        Err(e) => Err(GraphUnreadable::Damaged(e.to_string())),
    }
}

/// Write `map` to `path` atomically, streaming (no copy of the encoded graph in memory); the
/// blake3 of the file written.
fn write_graph(path: &Path, map: &Graph) -> Result<[u8; 32]> {
    write_atomic_with(path, |f| {
        let mut w = Hashing {
            inner: f,
            hash: blake3::Hasher::new(),
        };
        w.write_all(FORMAT)?;
        bincode::serialize_into(&mut w, map)?;
        Ok(*w.hash.finalize().as_bytes())
    })
}

/// A reader or writer that hashes the bytes passing through it.
struct Hashing<T> {
    inner: T,
    hash: blake3::Hasher,
}

impl<R: std::io::Read> std::io::Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, |f| Ok(f.write_all(bytes)?))
}

/// Write a file through `write` (buffered) to a temporary beside `path`, sync it and rename it
/// into place: readers see the old file or the whole new one.
fn write_atomic_with<T>(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> Result<T>,
) -> Result<T> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let tmp = path.with_extension(format!("{ext}.tmp"));
    let file = std::fs::File::create(&tmp).with_context(|| format!("writing {}", tmp.display()))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 16, file);
    let out = write(&mut w).with_context(|| format!("writing {}", tmp.display()))?;
    let file = w
        .into_inner()
        .map_err(|e| e.into_error())
        .with_context(|| format!("writing {}", tmp.display()))?;
    file.sync_all()?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming into {}", path.display()))?;
    Ok(out)
}

/// 8-bit vectors by key in three flat arrays (components, scales, key → slot) instead of one
/// allocation per vector: a few large blocks that go back to the operating system whole when the
/// set is dropped, where ~100k small boxes freed at once leave the heap fragmented (the daemon's
/// commit-message vectors and static first-pass vectors come and go with use). A removed
/// vector's slot is reused.
#[derive(Default)]
pub struct Packed {
    slots: HashMap<u64, u32>,
    q: Vec<i8>,
    scales: Vec<f32>,
    free: Vec<u32>,
}

impl Packed {
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    pub fn contains(&self, key: u64) -> bool {
        self.slots.contains_key(&key)
    }

    /// Add or replace the vector of `key` (quantized as [`Vector::quantize`] does).
    pub fn insert(&mut self, key: u64, v: &[f32]) {
        let (q, scale) = quantize(v);
        let dim = q.len();
        let slot = match self.slots.get(&key) {
            Some(&s) => s,
            None => {
                let s = self.free.pop().unwrap_or_else(|| {
                    self.q.resize(self.q.len() + dim, 0);
                    self.scales.push(0.0);
                    (self.scales.len() - 1) as u32
                });
                self.slots.insert(key, s);
                s
            }
        };
        let at = slot as usize * dim;
        self.q[at..at + dim].copy_from_slice(&q);
        self.scales[slot as usize] = scale;
    }

    pub fn remove(&mut self, key: u64) {
        if let Some(s) = self.slots.remove(&key) {
            self.free.push(s);
        }
        if self.slots.is_empty() {
            *self = Packed::default();
        }
    }

    /// Keep only the keys `keep` says yes to.
    pub fn retain(&mut self, mut keep: impl FnMut(u64) -> bool) {
        let gone: Vec<u64> = self.slots.keys().copied().filter(|k| !keep(*k)).collect();
        for k in gone {
            self.remove(k);
        }
    }

    /// The cosine of `query` (exact) with the vector of `key`, if there is one.
    pub fn score(&self, key: u64, query: &[f32]) -> Option<f32> {
        let s = *self.slots.get(&key)? as usize;
        let dim = query.len();
        Some(dot_q(query, &self.q[s * dim..(s + 1) * dim]) * self.scales[s])
    }

    /// Every key with its cosine with `query`, in no particular order.
    pub fn scores<'a>(&'a self, query: &'a [f32]) -> impl Iterator<Item = (u64, f32)> + 'a {
        let dim = query.len();
        self.slots.iter().map(move |(k, &s)| {
            let s = s as usize;
            (
                *k,
                dot_q(query, &self.q[s * dim..(s + 1) * dim]) * self.scales[s],
            )
        })
    }

    /// Heap bytes held (capacity included).
    pub fn bytes(&self) -> usize {
        self.q.capacity()
            + self.scales.capacity() * 4
            + self.free.capacity() * 4
            + self.slots.capacity() * (8 + 4 + 1)
    }
}

mod lookup;
#[cfg(test)]
mod tests;
