//! Reading vectors back out of the index, by chunk id: the index holds every live chunk's vector
//! as the embedding cache does (8-bit integers and a scale), so what the cache has lost (deleted,
//! or its tail cut after a crash) the index can still give.

use std::collections::{HashMap, HashSet};

use super::{VectorIndex, dequantize};

impl VectorIndex {
    /// The vectors of those of `ids` the index holds (removed ones not), as the embedding cache
    /// would give them back: the same numbers.
    pub fn vectors_of(&self, ids: &HashSet<u64>) -> HashMap<u64, Vec<f32>> {
        let mut out = HashMap::new();
        if ids.is_empty() {
            return out;
        }
        for (id, q, scale) in self.fresh.iter() {
            if ids.contains(&id) {
                out.insert(id, dequantize(q.iter().copied(), scale));
            }
        }
        for s in &self.sealed {
            for &id in ids {
                if out.contains_key(&id) || !s.holds(id) {
                    continue;
                }
                if let Some(node) = s.find(id) {
                    use super::hnsw::Graph;
                    out.insert(id, dequantize(s.q(node).iter().copied(), s.scale(node)));
                }
            }
        }
        out
    }
}
