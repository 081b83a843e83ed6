//! [`QueryCache`]: least-recently-used cache of query embeddings.
//!
//! Hand-written (a `HashMap` plus a `BTreeMap` keyed by a use counter) rather than the `lru` crate: it is
//! ~60 lines of safe code with O(log n) operations, while `lru` is a raw-pointer linked list whose unsafe
//! code has needed soundness fixes (RUSTSEC-2021-0130, RUSTSEC-2026-0002), and a query cache of a few
//! hundred entries gains nothing from O(1).

use std::collections::{BTreeMap, HashMap};

use super::DIM;

/// Query string → embedding, holding at most `capacity` entries and evicting the least recently used
/// (both [`QueryCache::get`] hits and [`QueryCache::insert`] count as a use). Not synchronised: wrap it in a
/// `Mutex` to share it, and do not hold that lock while embedding.
pub struct QueryCache {
    capacity: usize,
    entries: HashMap<String, Entry>,
    /// Last-use stamp → key; the first entry is the least recently used.
    recency: BTreeMap<u64, String>,
    clock: u64,
}

struct Entry {
    vector: Box<[f32; DIM]>,
    stamp: u64,
}

impl QueryCache {
    /// A cache for `capacity` queries; capacity 0 caches nothing.
    pub fn new(capacity: usize) -> QueryCache {
        QueryCache {
            capacity,
            entries: HashMap::new(),
            recency: BTreeMap::new(),
            clock: 0,
        }
    }

    /// The cached embedding of `query`, marking it most recently used.
    pub fn get(&mut self, query: &str) -> Option<[f32; DIM]> {
        self.touch(query).map(|e| *e.vector)
    }

    /// Mark `query` most recently used and return its entry, if cached.
    fn touch(&mut self, query: &str) -> Option<&mut Entry> {
        let stamp = self.tick();
        let entry = self.entries.get_mut(query)?;
        let key = self
            .recency
            .remove(&entry.stamp)
            .expect("recency list out of sync");
        entry.stamp = stamp;
        self.recency.insert(stamp, key);
        Some(entry)
    }

    /// Cache `vector` for `query` (replacing any previous value) as the most recently used entry, evicting
    /// the least recently used one if the cache is full.
    pub fn insert(&mut self, query: &str, vector: [f32; DIM]) {
        if self.capacity == 0 {
            return;
        }
        if let Some(entry) = self.touch(query) {
            *entry.vector = vector;
            return;
        }
        let stamp = self.tick();
        while self.entries.len() >= self.capacity {
            let Some((_, oldest)) = self.recency.pop_first() else {
                break;
            };
            self.entries.remove(&oldest);
        }
        self.entries.insert(
            query.to_owned(),
            Entry {
                vector: Box::new(vector),
                stamp,
            },
        );
        self.recency.insert(stamp, query.to_owned());
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Drop every entry (e.g. when the model changes).
    pub fn clear(&mut self) {
        self.entries.clear();
        self.recency.clear();
    }

    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }
}
