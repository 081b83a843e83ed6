//! A repository's vector index. instant-distance builds an HNSW in one batch and cannot change it
//! afterwards, so the index is three parts: the last built HNSW (persisted), a brute-force segment
//! of vectors added since that build, and tombstones for built vectors whose chunks are gone.
//! Queries search both parts and merge; a rebuild folds the segment and tombstones in.
//!
//! Only the HNSW is persisted. The segment and tombstones are derived at load time by comparing
//! the HNSW's chunk ids with the live chunk table (vectors come from the embedding cache), so there
//! is nothing else to keep consistent on disk.
//!
//! Vectors are held as 8-bit integers with one scale each ([`Vector`]): a quarter of the memory
//! of `f32` (384 bytes a chunk instead of 1,536). A query stays `f32` and is scored against the
//! stored integers (asymmetric), which keeps cosines within ~0.005 of the exact ones; the
//! embedding cache keeps the exact vectors.

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

/// `v` as integers (largest magnitude ±127) and the scale that maps them back.
fn quantize(v: &[f32]) -> (Vec<i8>, f32) {
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
    built_ids: HashSet<u64>,
    fresh: Segment,
    tombstones: HashSet<u64>,
    /// Removed since the last snapshot: they must stay invisible in the graph built from it.
    removed_since_snapshot: HashSet<u64>,
}

/// A graph built from a [`Snapshot`] (`None`: too few vectors to pay for one).
pub type Built = Option<HnswMap<Vector, u64>>;

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
        let built: Option<HnswMap<Vector, u64>> = std::fs::read(path).ok().and_then(|bytes| {
            let Some(body) = bytes.strip_prefix(FORMAT) else {
                tracing::warn!(
                    path = %path.display(),
                    "vector index written by an older release (f32 vectors); rebuilding it from the embedding cache"
                );
                return None;
            };
            match bincode::deserialize(body) {
                Ok(m) => Some(m),
                Err(e) => {
                    tracing::warn!(
                        path = %path.display(),
                        "vector index unreadable ({e}); rebuilding it from the embedding cache"
                    );
                    None
                }
            }
        });
        let built_ids = built
            .as_ref()
            .map(|m| m.values.iter().copied().collect())
            .unwrap_or_default();
        VectorIndex {
            path: path.to_path_buf(),
            built,
            built_ids,
            fresh: Segment::default(),
            tombstones: HashSet::new(),
            removed_since_snapshot: HashSet::new(),
        }
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

    pub fn insert(&mut self, id: u64, v: Vec<f32>) {
        self.tombstones.remove(&id);
        self.removed_since_snapshot.remove(&id);
        if !self.built_ids.contains(&id) {
            self.fresh.insert(id, &Vector::quantize(&v));
        }
    }

    pub fn remove(&mut self, id: u64) {
        self.fresh.remove(id);
        self.removed_since_snapshot.insert(id);
        if self.built_ids.contains(&id) {
            self.tombstones.insert(id);
        }
    }

    pub fn needs_rebuild(&self) -> bool {
        let live = self.len();
        if live < MIN_HNSW {
            // Small: brute force only; drop a graph that no longer pays for itself.
            return self.built.is_some() && !self.tombstones.is_empty();
        }
        self.fresh.len() >= REBUILD_MIN_FRESH.min(MIN_HNSW).max(live / 10)
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
        match &built {
            Some(map) => {
                let mut bytes = FORMAT.to_vec();
                bytes.extend(bincode::serialize(map)?);
                write_atomic(&self.path, &bytes)?
            }
            None => {
                let _ = std::fs::remove_file(&self.path);
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

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    {
        let mut f =
            std::fs::File::create(&tmp).with_context(|| format!("writing {}", tmp.display()))?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path).with_context(|| format!("renaming into {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(seed: u64, dim: usize) -> Vec<f32> {
        let mut x = seed.wrapping_mul(0x9E3779B97F4A7C15) | 1;
        let mut v: Vec<f32> = (0..dim)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % 2000) as f32 / 1000.0 - 1.0
            })
            .collect();
        let n = dot(&v, &v).sqrt();
        v.iter_mut().for_each(|a| *a /= n);
        v
    }

    #[test]
    fn the_segment_stays_consistent_through_inserts_replacements_and_removals() {
        let mut seg = Segment::default();
        for i in 0..10u64 {
            seg.insert(i, &Vector::quantize(&unit(i, 4)));
        }
        seg.insert(3, &Vector::quantize(&unit(33, 4))); // replaced in place
        seg.remove(0); // the last moves into its slot
        seg.remove(42); // absent: nothing happens
        seg.retain(|id| id % 2 == 1);
        let got: HashMap<u64, (Vec<i8>, f32)> =
            seg.iter().map(|(id, q, s)| (id, (q.to_vec(), s))).collect();
        let want: HashMap<u64, (Vec<i8>, f32)> = [1u64, 3, 5, 7, 9]
            .into_iter()
            .map(|i| {
                let v = Vector::quantize(&unit(if i == 3 { 33 } else { i }, 4));
                (i, (v.q.to_vec(), v.scale))
            })
            .collect();
        assert_eq!(got, want);
        assert_eq!(seg.len(), 5);
        assert!(seg.contains(7) && !seg.contains(0));
    }

    #[test]
    fn dot_matches_the_plain_sum_at_every_length() {
        for dim in [0, 1, 7, 8, 9, 31, 384] {
            let (a, b) = (unit(1, dim.max(1)), unit(2, dim.max(1)));
            let (a, b) = (&a[..dim], &b[..dim]);
            let plain: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
            assert!((dot(a, b) - plain).abs() < 1e-5, "{dim}");
        }
    }

    #[test]
    fn quantized_cosines_stay_within_half_a_percent_of_the_exact_ones() {
        let mut worst = 0.0f32;
        for i in 0..200u64 {
            let (a, b) = (unit(i, 384), unit(i + 1000, 384));
            let exact = dot(&a, &b);
            let stored = Vector::quantize(&b);
            worst = worst.max((stored.score(&a) - exact).abs());
            // Both sides stored (graph walk): close too.
            let both = 1.0 - Vector::quantize(&a).distance(&stored);
            worst = worst.max((both - exact).abs());
        }
        assert!(worst < 0.005, "worst error {worst}");
        // A vector is nearest to itself, and zero vectors do not divide by zero.
        let v = unit(7, 384);
        assert!((Vector::quantize(&v).score(&v) - 1.0).abs() < 0.005);
        assert_eq!(Vector::quantize(&[0.0; 8]).score(&[1.0; 8]), 0.0);
    }

    #[test]
    fn an_index_written_with_other_vectors_is_discarded_and_rebuilt() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.bin");
        // An older release's file: the graph with f32 points, no format line.
        #[derive(Clone, Serialize, Deserialize)]
        struct OldPoint(Vec<f32>);
        impl Point for OldPoint {
            fn distance(&self, other: &Self) -> f32 {
                1.0 - dot(&self.0, &other.0)
            }
        }
        let old: HnswMap<OldPoint, u64> = Builder::default().seed(1).build(
            (0..50).map(|i| OldPoint(unit(i, 8))).collect(),
            (0..50).collect(),
        );
        std::fs::write(&path, bincode::serialize(&old).unwrap()).unwrap();
        let mut idx = VectorIndex::open(&path);
        assert!(
            idx.built_ids().is_empty(),
            "nothing loaded from the old file"
        );
        // The daemon re-inserts the cached vectors; a rebuild writes the new format.
        for i in 0..MIN_HNSW as u64 + 10 {
            idx.insert(i, unit(i, 8));
        }
        let built = VectorIndex::build(idx.snapshot());
        idx.install(built).unwrap();
        assert_eq!(VectorIndex::open(&path).built_ids().len(), MIN_HNSW + 10);
    }

    #[test]
    fn segment_tombstones_and_rebuild_agree_with_brute_force() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.bin");
        let mut idx = VectorIndex::open(&path);
        let n = MIN_HNSW + 500;
        for i in 0..n as u64 {
            idx.insert(i, unit(i, 32));
        }
        assert!(idx.needs_rebuild());
        let snap = idx.snapshot();
        let built = VectorIndex::build(snap);
        // Changes while the graph was being built.
        idx.remove(3);
        idx.insert(n as u64 + 1, unit(99_999, 32));
        idx.install(built).unwrap();
        assert!(path.exists());
        assert!(!idx.contains(3));
        assert!(idx.contains(n as u64 + 1));
        assert_eq!(idx.len(), n);

        // The nearest neighbour of an indexed vector is itself; a removed one is never returned.
        let hits = idx.search(&unit(42, 32), 5, &|_| true);
        assert_eq!(hits[0].0, 42);
        let hits = idx.search(&unit(3, 32), 5, &|_| true);
        assert!(hits.iter().all(|h| h.0 != 3));
        let hits = idx.search(&unit(99_999, 32), 1, &|_| true);
        assert_eq!(hits[0].0, n as u64 + 1);
        // Filters apply to both parts.
        let hits = idx.search(&unit(42, 32), 5, &|id| id != 42);
        assert!(hits.iter().all(|h| h.0 != 42));

        // Reload: the graph comes back without the in-memory segment.
        let again = VectorIndex::open(&path);
        assert_eq!(again.built_ids().len(), n);
    }
}
