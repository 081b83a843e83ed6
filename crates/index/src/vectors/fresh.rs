//! The fresh segment: vectors not sealed into a graph yet, in three flat arrays searched by brute
//! force, and `vectors.seg`, the file that saves it (with every sealed segment's tombstones)
//! when the daemon is idle. The segment is bounded by the seal size (an exact scan of 20k
//! vectors is ~2 ms), except while a lost index is refilled from the embedding cache, when seals
//! drain it a seal at a time.

use std::collections::HashMap;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::Vector;

/// The first bytes of `vectors.seg`: the fresh segment and tombstones beside a manifest. (The
/// first format, `-1`, completed a single graph, `vectors.bin`.)
pub(crate) const FORMAT: &[u8] = b"patina-segment-i8-2\n";

/// What `vectors.seg` holds after its format line (bincode), followed by the blake3 of everything
/// before the hash.
#[derive(Serialize, Deserialize)]
pub(crate) struct FreshFile {
    /// The model (and precision) that computed the vectors: a daemon with another one ignores the file.
    pub tag: String,
    /// The sealed segments the file completes ([`super::VectorIndex`]'s stamp of its manifest).
    pub completes: [u8; 32],
    /// Tombstones by sealed segment number.
    pub tombstones: Vec<(u64, Vec<u64>)>,
    pub ids: Vec<u64>,
    pub scales: Vec<f32>,
    pub data: Vec<i8>,
}

pub(crate) fn encode(file: &FreshFile) -> Option<Vec<u8>> {
    let mut bytes = FORMAT.to_vec();
    bytes.extend(bincode::serialize(file).ok()?);
    let hash = *blake3::hash(&bytes).as_bytes();
    bytes.extend_from_slice(&hash);
    Some(bytes)
}

pub(crate) fn decode(bytes: &[u8]) -> Result<FreshFile> {
    let body = bytes
        .strip_prefix(FORMAT)
        .context("not a vector segment of this release")?;
    anyhow::ensure!(body.len() >= 32, "truncated");
    let (body, hash) = body.split_at(body.len() - 32);
    let mut h = blake3::Hasher::new();
    h.update(FORMAT);
    h.update(body);
    anyhow::ensure!(h.finalize().as_bytes() == hash, "checksum mismatch");
    Ok(bincode::deserialize(body)?)
}

/// Vectors not in a graph, stored contiguously: a query scans them all, and one flat array
/// streams from memory where one allocation per vector made every vector a cache miss (tokio's
/// 12,700 vectors: ~12 ms per query scattered).
#[derive(Default)]
pub(crate) struct Fresh {
    pub ids: Vec<u64>,
    pub data: Vec<i8>,
    pub scales: Vec<f32>,
    pub pos: HashMap<u64, usize>,
}

impl Fresh {
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn contains(&self, id: u64) -> bool {
        self.pos.contains_key(&id)
    }

    /// The integers and scale of `id`'s vector.
    pub fn get(&self, id: u64) -> Option<(&[i8], f32)> {
        let &i = self.pos.get(&id)?;
        let dim = self.dim();
        Some((&self.data[i * dim..(i + 1) * dim], self.scales[i]))
    }

    pub fn insert(&mut self, id: u64, v: &Vector) {
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

    pub fn dim(&self) -> usize {
        self.data.len().checked_div(self.ids.len()).unwrap_or(0)
    }

    pub fn remove(&mut self, id: u64) {
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
    pub fn iter(&self) -> impl Iterator<Item = (u64, &[i8], f32)> {
        let dim = self.dim().max(1);
        self.ids
            .iter()
            .copied()
            .zip(self.data.chunks_exact(dim))
            .zip(self.scales.iter().copied())
            .map(|((id, q), s)| (id, q, s))
    }

    /// Heap bytes its vectors take: integers, scale, id and position entry each (by contents, not
    /// capacity, so the figure is the same before a restart and after one restores the segment
    /// trimmed; the slack a growing segment holds goes back when it is saved, [`Fresh::trim`]).
    pub fn heap_bytes(&self) -> usize {
        const MAP_ENTRY: usize = 8 + 8 + 8;
        self.len() * (self.dim() + 4 + 8 + MAP_ENTRY)
    }

    /// Give back growth slack when it is a quarter or more (so a repository edited a chunk at a
    /// time does not copy its segment at every save).
    pub fn trim(&mut self) {
        if self.data.capacity() >= self.data.len() + self.data.len() / 4 + 4096 {
            self.ids.shrink_to_fit();
            self.data.shrink_to_fit();
            self.scales.shrink_to_fit();
            self.pos.shrink_to_fit();
        }
    }
}
