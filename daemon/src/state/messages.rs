//! Embeddings of commit messages, for the history oracle's commit matching beside BM25: with the
//! model on, the embedding worker embeds the messages of the commits reachable from each
//! repository's HEAD after its chunk backlog (chunks first), cached by content in the embedding
//! cache like chunks and notes, so a restart or another checkout recomputes nothing. Kept in
//! memory per repository by commit hash ([`MessageVectors`]) while the history is: when an idle
//! history leaves memory its complete set of message vectors goes too
//! ([`MessageVectors::release`]), and the history oracle reads them back from the embedding cache
//! when it is next asked ([`crate::services::embedding::Semantic::restore_messages`]) — an index round that
//! reloads the history to follow HEAD does not. Each batch the worker adds bumps the repository's
//! generation (cached answers may change).

use std::collections::HashMap;
use std::sync::{Mutex, RwLock};

use patina_embed::DIM;
use patina_index::vectors::Packed;

/// What is embedded for a commit: its message, at most this many bytes (the model reads 256 word
/// pieces anyway).
const MAX_MESSAGE_BYTES: usize = 1000;

/// A message as embedded: trimmed, cut at a character boundary.
pub(crate) fn input(message: &str) -> &str {
    let m = message.trim();
    if m.len() <= MAX_MESSAGE_BYTES {
        return m;
    }
    let mut cut = MAX_MESSAGE_BYTES;
    while !m.is_char_boundary(cut) {
        cut -= 1;
    }
    &m[..cut]
}

/// Commit → the embedding of its message, as 8-bit integers and a scale in flat arrays
/// (`patina_index::vectors::Packed`, cosines within ~0.005 of the exact ones), keyed by the first
/// 64 bits of the commit hash: a large history (pytest: 17,667 commits) is ~0.4 KB a commit
/// instead of ~1.6 KB, and a released set goes back to the operating system whole.
#[derive(Default)]
pub(crate) struct MessageVectors {
    by_hash: RwLock<Packed>,
    /// `Some(n)`: the `n` vectors were dropped by [`MessageVectors::release`] and wait in the
    /// embedding cache; the worker leaves the repository alone until they are restored.
    released: Mutex<Option<usize>>,
}

/// Approximate heap bytes of one message vector: the integers, the scale, the map's slot.
pub(crate) const MESSAGE_VECTOR_BYTES: usize = DIM + 4 + 8 + 4 + 1;

/// The key of a commit: its hash's first 16 hex digits (a hash that is not hex — never from git
/// — is hashed instead). Two of 150k commits share 64 bits with odds of about 1 in 10^9.
fn key(hash: &str) -> u64 {
    hash.get(..16)
        .and_then(|h| u64::from_str_radix(h, 16).ok())
        .unwrap_or_else(|| {
            let h = blake3::hash(hash.as_bytes());
            u64::from_le_bytes(h.as_bytes()[..8].try_into().expect("8 bytes"))
        })
}

impl MessageVectors {
    pub fn len(&self) -> usize {
        self.by_hash.read().expect("message vectors lock").len()
    }

    pub fn contains(&self, hash: &str) -> bool {
        self.by_hash
            .read()
            .expect("message vectors lock")
            .contains(key(hash))
    }

    /// Drop every vector (the history left memory with all its messages embedded); they are read
    /// back from the embedding cache by the next question to the history. Whether anything went.
    pub fn release(&self) -> bool {
        let mut released = self.released.lock().expect("message vectors released lock");
        let mut m = self.by_hash.write().expect("message vectors lock");
        if released.is_some() || m.is_empty() {
            return false;
        }
        *released = Some(m.len());
        *m = Packed::default();
        true
    }

    /// At start-up, for a repository indexed by an earlier run: its message vectors (those that
    /// were embedded) wait in the embedding cache, as if released, until the history is asked —
    /// reading every repository's back at every start filled the memory of a daemon holding
    /// hundreds (bench/RESULTS.md). Commits never embedded are the worker's once they are back.
    pub fn leave_in_cache(&self) {
        let mut released = self.released.lock().expect("message vectors released lock");
        if released.is_none() && self.len() == 0 {
            *released = Some(0);
        }
    }

    /// How many vectors [`MessageVectors::release`] dropped, while they are out of memory.
    pub fn released(&self) -> Option<usize> {
        *self.released.lock().expect("message vectors released lock")
    }

    /// Take the released vectors back (`restore` reads them): none are added twice, and a
    /// concurrent caller waits for the first. `Ok(None)` when nothing was released.
    pub fn restore_with<E>(
        &self,
        restore: impl FnOnce() -> Result<Vec<(String, [f32; DIM])>, E>,
    ) -> Result<Option<usize>, E> {
        let mut released = self.released.lock().expect("message vectors released lock");
        if released.is_none() {
            return Ok(None);
        }
        let items = restore()?;
        let n = items.len();
        self.insert(items);
        *released = None;
        Ok(Some(n))
    }

    pub fn insert(&self, items: impl IntoIterator<Item = (String, [f32; DIM])>) {
        let mut m = self.by_hash.write().expect("message vectors lock");
        for (h, v) in items {
            m.insert(key(&h), &v);
        }
    }

    /// Cosine (the vectors are normalised) of `query` with the message of each commit `hashes`
    /// names that has a vector: `(position in hashes, cosine)`, best first, at most `limit`.
    pub fn nearest<'a>(
        &self,
        query: &[f32; DIM],
        hashes: impl Iterator<Item = (usize, &'a str)>,
        limit: usize,
    ) -> Vec<(usize, f32)> {
        let m = self.by_hash.read().expect("message vectors lock");
        let mut out: Vec<(usize, f32)> = hashes
            .filter_map(|(i, h)| m.score(key(h), query).map(|s| (i, s)))
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out.truncate(limit);
        out
    }
}

/// Fuse two rankings of commits (BM25 and message embeddings) by reciprocal rank (k = 60):
/// `(commit index, score)`, best first, at most `limit`.
pub(crate) fn fuse(
    lexical: &[(usize, f64)],
    dense: &[(usize, f32)],
    limit: usize,
) -> Vec<(usize, f64)> {
    let mut acc: HashMap<usize, f64> = HashMap::new();
    for (r, (i, _)) in lexical.iter().enumerate() {
        *acc.entry(*i).or_default() += 1.0 / (60.0 + r as f64 + 1.0);
    }
    for (r, (i, _)) in dense.iter().enumerate() {
        *acc.entry(*i).or_default() += 1.0 / (60.0 + r as f64 + 1.0);
    }
    let mut out: Vec<(usize, f64)> = acc.into_iter().collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out.truncate(limit);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(i: usize) -> [f32; DIM] {
        let mut v = [0.0; DIM];
        v[i] = 1.0;
        v
    }

    #[test]
    fn nearest_messages_by_cosine_and_fusion_by_rank() {
        let mv = MessageVectors::default();
        mv.insert([("a".to_string(), unit(0)), ("b".to_string(), unit(1))]);
        assert!(mv.contains("a") && !mv.contains("c"));
        let hashes = ["c", "b", "a"];
        let n = mv.nearest(&unit(1), hashes.iter().copied().enumerate(), 10);
        assert_eq!(n[0].0, 1);
        assert!((n[0].1 - 1.0).abs() < 0.005, "{n:?}");
        assert_eq!(n.len(), 2, "commits without a vector are skipped");
        // Found by both: first; then by rank.
        let f = fuse(&[(5, 9.0), (7, 3.0)], &[(7, 0.9), (8, 0.8)], 10);
        assert_eq!(f[0].0, 7);
        assert_eq!(f.len(), 3);
        assert_eq!(input("  x \n"), "x");
        assert!(input(&"é".repeat(800)).len() <= MAX_MESSAGE_BYTES);
    }

    #[test]
    fn released_vectors_leave_memory_until_restored_once() {
        let mv = MessageVectors::default();
        assert!(!mv.release(), "nothing to release");
        mv.insert([("a".to_string(), unit(0)), ("b".to_string(), unit(1))]);
        assert!(mv.release());
        assert_eq!((mv.len(), mv.released()), (0, Some(2)));
        assert!(!mv.release(), "released once");
        let restored: Result<_, ()> = mv.restore_with(|| Ok(vec![("a".to_string(), unit(0))]));
        assert_eq!(restored, Ok(Some(1)));
        assert_eq!((mv.len(), mv.released()), (1, None));
        let again: Result<_, ()> = mv.restore_with(|| panic!("not released: nothing is read"));
        assert_eq!(again, Ok(None));
        // A failed read keeps them released, to be tried again.
        assert!(mv.release());
        assert_eq!(mv.restore_with(|| Err("cache gone")), Err("cache gone"));
        assert_eq!(mv.released(), Some(1));
    }
}
