//! The embedding backlog's policy: which repository's backlog goes first, which chunks make a
//! batch. Pure; `Repo` and the embedder worker follow it.
//!
//! Within a repository the model's pass embeds first what questions will reach: the files answers
//! returned ([`Answered`]), then the files recent commits changed, then the rest; within each,
//! source before examples, docs and tests; generated and vendored code last whatever else is
//! known of it ([`urgency`]).

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

use patina_core::FileRole;

/// A repository queried this recently has its backlog embedded before the others'.
const QUERIED_WINDOW_MS: i64 = 120_000;

/// Which repositories' backlogs to embed, in order, from each one's (backlog, last query in Unix
/// ms): those a query had in scope within [`QUERIED_WINDOW_MS`], most recent first; then the
/// smallest backlogs first, so each repository reaches full coverage as early as it can and a
/// new one never starves behind a large one. Repositories without a backlog are left out.
pub(crate) fn embedding_order(stats: &[(usize, i64)], now_ms: i64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..stats.len()).filter(|&i| stats[i].0 > 0).collect();
    let recent = |i: usize| {
        let q = stats[i].1;
        (q > 0 && now_ms - q <= QUERIED_WINDOW_MS).then_some(q)
    };
    order.sort_by(|&a, &b| {
        // Recently queried first (most recent first), then smaller backlogs, then registry order.
        recent(b)
            .cmp(&recent(a))
            .then(stats[a].0.cmp(&stats[b].0))
            .then(a.cmp(&b))
    });
    order
}

/// How soon a chunk of this role is wanted: source first; docs, tests, generated and vendored
/// code last (an unknown chunk counts as source).
fn role_priority(role: Option<FileRole>) -> u8 {
    match role {
        None | Some(FileRole::Source) => 0,
        Some(FileRole::Example | FileRole::Config | FileRole::Benchmark | FileRole::Other) => 1,
        Some(FileRole::Docs) => 2,
        Some(FileRole::Test) => 3,
        Some(FileRole::Generated | FileRole::Vendored) => 4,
    }
}

/// What is known of a file's chance of being read soon, most urgent first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Want {
    /// An answer returned it (or a question named it) lately.
    Answered,
    /// One of the newest commits changed it.
    Changed,
    /// Nothing beyond its role.
    Later,
}

const WANTS: usize = 3;
/// Role priorities below generated and vendored code ([`role_priority`] 0..=3).
const ROLE_LEVELS: u8 = 4;
/// The least urgent level: generated and vendored code.
pub(crate) const LAST: u8 = WANTS as u8 * ROLE_LEVELS;

/// How soon a chunk is wanted, 0 first ..= [`LAST`]: by [`Want`], then by role within it;
/// generated and vendored code last whatever is known of it (a vendored file an answer showed
/// is still one nobody edits).
pub(crate) fn urgency(role: Option<FileRole>, want: Want) -> u8 {
    let r = role_priority(role);
    if r >= ROLE_LEVELS {
        return LAST;
    }
    want as u8 * ROLE_LEVELS + r
}

/// The files answers returned lately, at most [`Answered::CAP`], the oldest forgotten first.
#[derive(Debug, Default)]
pub(crate) struct Answered {
    order: VecDeque<Arc<str>>,
    set: HashSet<Arc<str>>,
    /// Counts the files noted anew: a [`Floor`] learned before one no longer holds.
    generation: u64,
}

impl Answered {
    /// Files remembered: enough for the answers of a working day's questions (ten files each).
    pub const CAP: usize = 2048;

    /// Note that an answer returned `path` (again: it becomes the newest).
    pub fn note(&mut self, path: &str) {
        if let Some(p) = self.set.get(path).cloned() {
            self.order.retain(|q| *q != p);
            self.order.push_back(p);
            return;
        }
        // A new file may make chunks more urgent; one noted again, or one forgotten, does not.
        self.generation += 1;
        let p: Arc<str> = Arc::from(path);
        self.set.insert(p.clone());
        self.order.push_back(p);
        while self.order.len() > Self::CAP {
            if let Some(old) = self.order.pop_front() {
                self.set.remove(&old);
            }
        }
    }

    /// The files, to look up without the lock (at most [`Answered::CAP`] shared names), and how
    /// many were noted anew so far.
    pub fn files(&self) -> (HashSet<Arc<str>>, u64) {
        (self.set.clone(), self.generation)
    }
}

/// The most urgent level a backlog still holds, as its last scan found it ([`pick_batch`]'s
/// batch begins with a chunk of it), while `K` — what could make a chunk more urgent: a chunk
/// joining the backlog, an answer naming a new file, new commits — stays the same. Chunks leaving
/// only make a backlog less urgent. Without it, once the files answers returned were embedded,
/// every batch of a 100k-file tree's pass scanned all its pending chunks under the chunk table's
/// lock, looking for the answered files' chunks that were no longer there.
#[derive(Debug)]
pub(crate) struct Floor<K> {
    learned: Option<(K, u8)>,
}

impl<K> Default for Floor<K> {
    fn default() -> Self {
        Floor { learned: None }
    }
}

impl<K: PartialEq> Floor<K> {
    /// The level a scan may stop at: `known` (what is known of the files), or the level the last
    /// scan found when nothing has changed since.
    pub fn best(&self, key: &K, known: u8) -> u8 {
        match &self.learned {
            Some((k, level)) if k == key => known.max(*level),
            _ => known,
        }
    }

    /// What a scan under `key` found: its batch (most urgent first; empty when the backlog is).
    pub fn learn(&mut self, key: K, batch: &[(u64, u8)]) {
        self.learned = Some((key, batch.first().map_or(LAST, |c| c.1)));
    }
}

/// What a [`Floor`] of a repository's backlog holds for: the times chunks joined the backlog, the
/// answered files' notes, and the history as it was.
#[derive(Debug)]
pub(crate) struct FloorKey {
    pub joined: u64,
    pub answered: u64,
    /// Weak: a floor must not keep an old history's commits alive (its allocation, kept by the
    /// weak count, is what makes the identity safe to compare).
    pub history: std::sync::Weak<patina_index::history::HistoryView>,
}

impl PartialEq for FloorKey {
    fn eq(&self, other: &FloorKey) -> bool {
        self.joined == other.joined
            && self.answered == other.answered
            && std::sync::Weak::ptr_eq(&self.history, &other.history)
    }
}

/// Up to `n` of the `pending` chunks (id, [`urgency`]), most urgent first; within a level in the
/// backlog's order. `best` is the most urgent level any of them can have (what is known of the
/// files: 0 when answers named some): scanning stops once `n` chunks of that level are found.
pub(crate) fn pick_batch(
    pending: impl Iterator<Item = (u64, u8)>,
    n: usize,
    best: u8,
) -> Vec<(u64, u8)> {
    let mut by_level: Vec<Vec<u64>> = vec![Vec::new(); LAST as usize + 1];
    for (id, level) in pending {
        let l = level.min(LAST) as usize;
        if by_level[l].len() < n {
            by_level[l].push(id);
        }
        if by_level[best.min(LAST) as usize].len() >= n {
            break;
        }
    }
    by_level
        .into_iter()
        .enumerate()
        .flat_map(|(l, ids)| ids.into_iter().map(move |id| (id, l as u8)))
        .take(n)
        .collect()
}

/// Of `pool` (chunk, role priority, text bytes) in the backlog's order, up to `n` of the most
/// urgent priority present: the `n` whose lengths lie closest together (the shortest such run when
/// several are as tight), shortest first. The embedder pads each sub-batch to its longest text, so
/// a batch of similar lengths pads little; the chunks left out follow in batches of their own.
pub(crate) fn similar_lengths(mut pool: Vec<(u64, u8, u32)>, n: usize) -> Vec<u64> {
    let Some(top) = pool.iter().map(|c| c.1).min() else {
        return Vec::new();
    };
    pool.retain(|c| c.1 == top);
    pool.sort_by_key(|c| (c.2, c.0));
    let n = n.min(pool.len());
    if n == 0 {
        return Vec::new();
    }
    let start = (0..=pool.len() - n)
        .min_by_key(|&s| (pool[s + n - 1].2 - pool[s].2, s))
        .unwrap_or(0);
    pool.into_iter().skip(start).take(n).map(|c| c.0).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queried_repositories_go_first_then_the_smallest_backlogs() {
        let now = 1_000_000_000;
        // (backlog, last queried): a big one, a small one, an empty one, one queried just now,
        // one queried long ago.
        let stats = [
            (12_000, 0),
            (3_426, 0),
            (0, now - 5),
            (9_000, now - 1_000),
            (50, now - 10 * QUERIED_WINDOW_MS),
        ];
        assert_eq!(embedding_order(&stats, now), vec![3, 4, 1, 0]);
        // Two queried: the more recent first, whatever their sizes.
        let stats = [(10, now - 60_000), (5_000, now - 1)];
        assert_eq!(embedding_order(&stats, now), vec![1, 0]);
        assert!(embedding_order(&[(0, 0)], now).is_empty());
    }

    #[test]
    fn a_batch_holds_chunks_of_similar_length_of_the_most_urgent_role() {
        // (id, role priority, bytes): source (0) before docs (2), shortest first.
        let pool = vec![
            (1, 0, 80),
            (2, 2, 1),
            (3, 0, 3),
            (4, 0, 40),
            (5, 0, 2),
            (6, 2, 5),
        ];
        assert_eq!(similar_lengths(pool.clone(), 2), vec![5, 3]);
        assert_eq!(similar_lengths(pool.clone(), 10), vec![5, 3, 4, 1]);
        let docs: Vec<_> = pool.into_iter().filter(|c| c.1 == 2).collect();
        assert_eq!(similar_lengths(docs, 10), vec![2, 6]);
        assert!(similar_lengths(Vec::new(), 3).is_empty());
        assert!(similar_lengths(pool_of(&[7]), 0).is_empty());
    }

    fn pool_of(lengths: &[u32]) -> Vec<(u64, u8, u32)> {
        (0..).zip(lengths).map(|(id, &len)| (id, 0, len)).collect()
    }

    #[test]
    fn a_batch_is_the_tightest_run_of_lengths_not_merely_the_shortest() {
        // The three shortest span 1..52 (the short one pads the others' sub-batch up to 52 tokens
        // each); 50, 52, 53 span 3. The short one waits for texts of its length.
        assert_eq!(similar_lengths(pool_of(&[53, 1, 50, 52]), 3), vec![2, 3, 0]);
        // Equally tight runs: the shortest.
        assert_eq!(similar_lengths(pool_of(&[10, 20, 11, 21]), 2), vec![0, 2]);
        // Fewer than asked: all of them.
        assert_eq!(similar_lengths(pool_of(&[9, 1]), 5), vec![1, 0]);
    }

    #[test]
    fn batches_take_source_before_docs_and_tests() {
        let pending = [
            (1, Some(FileRole::Test)),
            (2, Some(FileRole::Docs)),
            (3, Some(FileRole::Source)),
            (4, Some(FileRole::Vendored)),
            (5, None),
            (6, Some(FileRole::Example)),
            (7, Some(FileRole::Source)),
        ];
        let ids = |n: usize| -> Vec<u64> {
            let levels = pending
                .iter()
                .map(|&(id, role)| (id, urgency(role, Want::Later)));
            pick_batch(levels, n, urgency(None, Want::Later))
                .into_iter()
                .map(|c| c.0)
                .collect()
        };
        assert_eq!(ids(4), vec![3, 5, 7, 6]);
        assert_eq!(ids(7), vec![3, 5, 7, 6, 2, 1, 4]);
        assert_eq!(ids(2), vec![3, 5]);
        assert!(pick_batch(std::iter::empty(), 3, 0).is_empty());
    }

    #[test]
    fn files_answers_returned_go_first_then_recently_changed_ones_and_vendored_code_stays_last() {
        use FileRole::*;
        // (id, role, want)
        let pending = [
            (1, Some(Source), Want::Later),
            (2, Some(Test), Want::Answered),
            (3, Some(Source), Want::Changed),
            (4, Some(Vendored), Want::Answered),
            (5, Some(Docs), Want::Changed),
            (6, Some(Source), Want::Answered),
        ];
        let levels = pending
            .iter()
            .map(|&(id, role, want)| (id, urgency(role, want)));
        let order: Vec<u64> = pick_batch(levels, 6, 0).into_iter().map(|c| c.0).collect();
        // Answered source, answered test, changed source, changed docs, the rest, vendored.
        assert_eq!(order, vec![6, 2, 3, 5, 1, 4]);
        // Each chunk comes with its level, which the batch's length grouping keeps together.
        let levels = pending
            .iter()
            .map(|&(id, role, want)| (id, urgency(role, want)));
        let first = pick_batch(levels, 1, 0);
        assert_eq!(first, vec![(6, urgency(Some(Source), Want::Answered))]);
        assert_eq!(urgency(Some(Generated), Want::Answered), LAST);
    }

    #[test]
    fn a_scan_stops_at_the_level_the_last_one_found_until_something_could_make_a_chunk_more_urgent()
    {
        use FileRole::*;
        // The answered file's chunks are embedded; what is left is source and tests, in order.
        let pending: Vec<(u64, u8)> = (1..=1000)
            .map(|id| {
                let role = if id % 2 == 0 { Test } else { Source };
                (id, urgency(Some(role), Want::Later))
            })
            .collect();
        let answered = urgency(None, Want::Answered);
        let mut floor = Floor::default();
        // Nothing learned yet: the scan may only stop at what answers could name, and so reads
        // every chunk.
        let best = floor.best(&1, answered);
        assert_eq!(best, answered);
        let mut read = 0;
        let batch = pick_batch(pending.iter().inspect(|_| read += 1).copied(), 4, best);
        assert_eq!(read, 1000);
        assert_eq!(
            batch.iter().map(|c| c.0).collect::<Vec<_>>(),
            vec![1, 3, 5, 7]
        );
        floor.learn(1, &batch);
        // The same key: the next scan stops once it has a batch of source chunks, the same batch.
        let best = floor.best(&1, answered);
        assert_eq!(best, urgency(Some(Source), Want::Later));
        let mut read = 0;
        let again = pick_batch(pending.iter().inspect(|_| read += 1).copied(), 4, best);
        assert_eq!((again, read), (batch.clone(), 7));
        // Another key (a chunk joined, a new answer, new commits): back to what is known.
        assert_eq!(floor.best(&2, answered), answered);
        // A level known to be better than the floor is never lowered by it, nor an empty backlog's.
        floor.learn(3, &[]);
        assert_eq!(floor.best(&3, answered), LAST);
        assert_eq!(floor.best(&3, LAST + 1), LAST + 1);
    }

    #[test]
    fn the_answered_files_keep_the_newest_within_their_cap() {
        let mut a = Answered::default();
        assert!(a.files().0.is_empty());
        for i in 0..Answered::CAP + 10 {
            a.note(&format!("f{i}.rs"));
        }
        let has = |a: &Answered, p: &str| a.files().0.contains(p);
        assert_eq!(a.files().0.len(), Answered::CAP);
        assert!(!has(&a, "f0.rs") && !has(&a, "f9.rs"));
        assert!(has(&a, "f10.rs") && has(&a, &format!("f{}.rs", Answered::CAP + 9)));
        // Noted again, an old file becomes the newest: the next ones push out others.
        a.note("f10.rs");
        a.note("new.rs");
        assert!(has(&a, "f10.rs") && !has(&a, "f11.rs"));
    }
}
