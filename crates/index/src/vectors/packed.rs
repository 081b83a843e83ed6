//! 8-bit vectors by key, outside the vector index: the daemon's commit-message vectors and the
//! static first-pass vectors of backlog chunks, scored by brute force.

use std::collections::HashMap;

use super::{dot_q, quantize};

/// 8-bit vectors by key in three flat arrays (components, scales, key → slot) instead of one
/// allocation per vector: a few large blocks that go back to the operating system whole when the
/// set is dropped, where ~100k small boxes freed at once leave the heap fragmented (the daemon's
/// commit-message vectors and static first-pass vectors come and go with use). A removed
/// vector's slot is reused.
#[derive(Default)]
pub struct Packed {
    slots: HashMap<u64, u32>,
    q: Vec<i8>,
    pub(super) scales: Vec<f32>,
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

    /// The keys held, in no order.
    pub fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.slots.keys().copied()
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
