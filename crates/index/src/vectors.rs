//! A repository's vector index. instant-distance builds an HNSW in one batch and cannot change it
//! afterwards, so the index is three parts: the last built HNSW (persisted), a brute-force segment
//! of vectors added since that build, and tombstones for built vectors whose chunks are gone.
//! Queries search both parts and merge; a rebuild folds the segment and tombstones in.
//!
//! Only the HNSW is persisted. The segment and tombstones are derived at load time by comparing
//! the HNSW's chunk ids with the live chunk table (vectors come from the embedding cache), so there
//! is nothing else to keep consistent on disk.

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
const EF_CONSTRUCTION: usize = 100;

/// A unit-length embedding; distance is `1 - cosine`.
#[derive(Clone, Serialize, Deserialize)]
pub struct Vector(pub Vec<f32>);

impl Point for Vector {
    fn distance(&self, other: &Self) -> f32 {
        1.0 - dot(&self.0, &other.0)
    }
}

pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

pub struct VectorIndex {
    path: PathBuf,
    built: Option<HnswMap<Vector, u64>>,
    built_ids: HashSet<u64>,
    fresh: HashMap<u64, Vec<f32>>,
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
    /// Load the persisted HNSW at `path` if there is one (an unreadable file is discarded: it is
    /// derived data and will be rebuilt).
    pub fn open(path: &Path) -> VectorIndex {
        let built: Option<HnswMap<Vector, u64>> = std::fs::read(path).ok().and_then(|bytes| match bincode::deserialize(&bytes) {
            Ok(m) => Some(m),
            Err(e) => {
                tracing::warn!(path = %path.display(), "discarding unreadable vector index: {e}");
                None
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
            fresh: HashMap::new(),
            tombstones: HashSet::new(),
            removed_since_snapshot: HashSet::new(),
        }
    }

    /// Chunk ids present in the persisted graph (used at load to derive segment and tombstones).
    pub fn built_ids(&self) -> &HashSet<u64> {
        &self.built_ids
    }

    pub fn contains(&self, id: u64) -> bool {
        self.fresh.contains_key(&id)
            || (self.built_ids.contains(&id) && !self.tombstones.contains(&id))
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
            self.fresh.insert(id, v);
        }
    }

    pub fn remove(&mut self, id: u64) {
        self.fresh.remove(&id);
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
        for (id, v) in &self.fresh {
            ids.push(*id);
            vectors.push(Vector(v.clone()));
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
                    self.fresh.insert(id, p.0.clone());
                }
            }
        }
        self.fresh.retain(|id, _| !new_ids.contains(id));
        // Chunks removed after the snapshot are in the new graph: hide them.
        self.tombstones = self
            .removed_since_snapshot
            .intersection(&new_ids)
            .copied()
            .collect();
        match &built {
            Some(map) => write_atomic(&self.path, &bincode::serialize(map)?)?,
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
            for item in map.search(&Vector(query.to_vec()), &mut search) {
                let id = *item.value;
                if !self.tombstones.contains(&id) && allow(id) {
                    out.push((id, 1.0 - item.distance));
                }
            }
        }
        for (id, v) in &self.fresh {
            if allow(*id) {
                out.push((*id, dot(query, v)));
            }
        }
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
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
