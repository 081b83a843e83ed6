//! When the vector index builds, and what: a seal when the fresh segment is full, the rewrite of
//! a segment that is mostly tombstones, or a tiered merge of small sealed segments — the policy
//! that keeps every build bounded (by the seal size or the merge bound) however large the index
//! grows, and the number of segments a query searches small.

use super::{Job, Limits, MERGE_FACTOR, VectorIndex};

impl VectorIndex {
    /// The next seal or merge due: a seal when the fresh segment is full; else the rewrite of a
    /// segment a fifth (or all) tombstones; else a tiered merge — [`MERGE_FACTOR`] segments of one
    /// size tier (tier `t` holds `seal × 4^t` up to `seal × 4^(t+1)` live vectors, tier 0 all
    /// below), smallest first, as many as fit in [`Limits::max_segment`]. Segments of half the
    /// bound or more merge no further.
    pub(super) fn plan(&self) -> Job {
        let Limits {
            seal_at,
            max_segment,
        } = self.limits;
        if self.fresh.len() >= seal_at {
            return Job::Seal;
        }
        if let Some(s) = self
            .sealed
            .iter()
            .find(|s| s.live() == 0 || s.tombstones.len() * 5 > s.len())
        {
            return Job::Merge(vec![s.number]);
        }
        let tier = |live: usize| {
            let (mut t, mut size) = (0u32, seal_at.max(1));
            while live >= size * MERGE_FACTOR {
                t += 1;
                size *= MERGE_FACTOR;
            }
            t
        };
        let mut small: Vec<(u32, usize, u64)> = self
            .sealed
            .iter()
            .filter(|s| s.live() < max_segment / 2)
            .map(|s| (tier(s.live()), s.live(), s.number))
            .collect();
        small.sort_unstable();
        for group in small.chunk_by(|a, b| a.0 == b.0) {
            if group.len() < MERGE_FACTOR {
                continue;
            }
            let mut total = 0;
            let mut take = Vec::new();
            for &(_, live, number) in group.iter().take(MERGE_FACTOR) {
                if total + live > max_segment {
                    break;
                }
                total += live;
                take.push(number);
            }
            if take.len() >= 2 {
                return Job::Merge(take);
            }
        }
        Job::Nothing
    }
}
