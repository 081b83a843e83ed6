//! A repository's chunk table: every chunk's metadata by id, the structure every oracle reads.
//!
//! One vector of rows sorted by id, looked up by binary search. A hash map of the same rows
//! keeps up to half its slots empty (its capacity grows by doubling): on the 100k-file tree's
//! 552k chunks the map's slots alone were 160 MB, more than the rows' contents
//! (bench/RESULTS.md, twenty-second and twenty-third sessions). A round changes the table in
//! batches ([`ChunkTable::apply`]), one merge per batch.

use crate::ChunkMeta;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChunkTable {
    /// Sorted by id, one row per id.
    rows: Vec<(u64, ChunkMeta)>,
}

impl ChunkTable {
    pub fn new() -> ChunkTable {
        ChunkTable::default()
    }

    fn find(&self, id: u64) -> Result<usize, usize> {
        self.rows.binary_search_by_key(&id, |r| r.0)
    }

    pub fn get(&self, id: &u64) -> Option<&ChunkMeta> {
        self.find(*id).ok().map(|i| &self.rows[i].1)
    }

    pub fn contains_key(&self, id: &u64) -> bool {
        self.find(*id).is_ok()
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Every row, by id.
    pub fn iter(&self) -> impl Iterator<Item = (&u64, &ChunkMeta)> + Clone {
        self.rows.iter().map(|(id, m)| (id, m))
    }

    pub fn keys(&self) -> impl Iterator<Item = &u64> + Clone {
        self.rows.iter().map(|(id, _)| id)
    }

    pub fn values(&self) -> impl Iterator<Item = &ChunkMeta> + Clone {
        self.rows.iter().map(|(_, m)| m)
    }

    /// Set one row (a batch is cheaper through [`ChunkTable::apply`]); the row it replaced.
    pub fn insert(&mut self, id: u64, meta: ChunkMeta) -> Option<ChunkMeta> {
        match self.find(id) {
            Ok(i) => Some(std::mem::replace(&mut self.rows[i].1, meta)),
            Err(i) => {
                self.rows.insert(i, (id, meta));
                None
            }
        }
    }

    pub fn remove(&mut self, id: &u64) -> Option<ChunkMeta> {
        self.find(*id).ok().map(|i| self.rows.remove(i).1)
    }

    /// One batch: `removed` ids leave, then `added` rows are set (an id in both stays, with its
    /// new row), in one pass over the table.
    pub fn apply(&mut self, added: Vec<(u64, ChunkMeta)>, removed: &[u64]) {
        let mut added = added;
        added.sort_by_key(|r| r.0);
        // The last row given for an id wins.
        added.reverse();
        added.dedup_by_key(|r| r.0);
        added.reverse();
        let mut removed: Vec<u64> = removed.to_vec();
        removed.sort_unstable();
        let old = std::mem::take(&mut self.rows);
        let mut rows = Vec::with_capacity(old.len() + added.len());
        let mut new = added.into_iter().peekable();
        let mut gone = removed.iter().peekable();
        for (id, meta) in old {
            while let Some(r) = new.next_if(|r| r.0 < id) {
                rows.push(r);
            }
            while gone.next_if(|&&g| g < id).is_some() {}
            if let Some(r) = new.next_if(|r| r.0 == id) {
                rows.push(r);
                continue;
            }
            if gone.peek() == Some(&&id) {
                continue;
            }
            rows.push((id, meta));
        }
        rows.extend(new);
        rows.shrink_to_fit();
        self.rows = rows;
    }
}

impl FromIterator<(u64, ChunkMeta)> for ChunkTable {
    /// The last row given for an id wins.
    fn from_iter<I: IntoIterator<Item = (u64, ChunkMeta)>>(rows: I) -> ChunkTable {
        let mut t = ChunkTable::new();
        t.apply(rows.into_iter().collect(), &[]);
        t
    }
}

impl<'a> IntoIterator for &'a ChunkTable {
    type Item = (&'a u64, &'a ChunkMeta);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (u64, ChunkMeta)>,
        fn(&'a (u64, ChunkMeta)) -> (&'a u64, &'a ChunkMeta),
    >;

    fn into_iter(self) -> Self::IntoIter {
        self.rows.iter().map(|(id, m)| (id, m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ChunkKind, ContentHash, Language};
    use std::collections::BTreeMap;

    fn meta(n: u64) -> ChunkMeta {
        ChunkMeta {
            path: format!("src/f{}.rs", n % 7).into(),
            start_line: n as u32,
            end_line: n as u32 + 1,
            symbol: Some(format!("f{n}")),
            kind: ChunkKind::Function,
            parent: None,
            language: Language::Rust,
            hash: ContentHash::of(&n.to_string()),
            role: None,
            licence: None,
        }
    }

    /// The table against a `BTreeMap` given the same batches: same rows, in id order.
    #[test]
    fn batches_leave_the_rows_a_map_would_hold() {
        let mut table = ChunkTable::new();
        let mut model: BTreeMap<u64, ChunkMeta> = BTreeMap::new();
        let mut seed = 7u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            seed >> 33
        };
        for round in 0..60 {
            let added: Vec<(u64, ChunkMeta)> = (0..next() % 40)
                .map(|_| {
                    let id = next() % 300;
                    (id, meta(id + round))
                })
                .collect();
            let removed: Vec<u64> = (0..next() % 40).map(|_| next() % 300).collect();
            for id in &removed {
                model.remove(id);
            }
            for (id, m) in &added {
                model.insert(*id, m.clone());
            }
            table.apply(added, &removed);
            assert_eq!(table.len(), model.len(), "round {round}");
            assert!(
                table
                    .iter()
                    .map(|(id, m)| (*id, m))
                    .eq(model.iter().map(|(id, m)| (*id, m)))
            );
            for id in 0..300 {
                assert_eq!(table.get(&id), model.get(&id), "round {round}, id {id}");
                assert_eq!(table.contains_key(&id), model.contains_key(&id));
            }
        }
    }

    #[test]
    fn single_rows_and_collecting_keep_one_row_per_id() {
        let mut t: ChunkTable = [(5, meta(1)), (2, meta(2)), (5, meta(3))]
            .into_iter()
            .collect();
        assert_eq!(t.len(), 2);
        assert_eq!(t.get(&5), Some(&meta(3)), "the last row given wins");
        assert_eq!(t.keys().copied().collect::<Vec<_>>(), [2, 5]);
        assert_eq!(t.insert(3, meta(4)), None);
        assert_eq!(t.insert(3, meta(5)), Some(meta(4)));
        assert_eq!(t.remove(&2), Some(meta(2)));
        assert_eq!(t.remove(&2), None);
        assert_eq!(t.keys().copied().collect::<Vec<_>>(), [3, 5]);
        assert_eq!((&t).into_iter().count(), 2);
    }
}
