//! Embeddings of commit messages, for the history oracle's commit matching beside BM25: with the
//! model on, the embedding worker embeds the messages of the commits reachable from each
//! repository's HEAD after its chunk backlog (chunks first), cached by content in the embedding
//! cache like chunks and notes, so a restart or another checkout recomputes nothing. Kept in
//! memory per repository by commit hash ([`MessageVectors`]); each batch that lands bumps the
//! repository's generation (cached answers may change).

use std::collections::HashMap;
use std::sync::RwLock;

use patina_embed::DIM;
use patina_index::vectors::Vector;

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

/// Commit hash → the embedding of its message, as 8-bit integers and a scale
/// (`patina_index::vectors::Vector`, cosines within ~0.005 of the exact ones): a large history
/// (pytest: 17,667 commits) is ~0.5 KB a commit instead of ~1.6 KB.
#[derive(Default)]
pub(crate) struct MessageVectors {
    by_hash: RwLock<HashMap<String, Vector>>,
}

/// Approximate heap bytes of one message vector: the hash (40 hex digits), the integers, the
/// map's slot and the allocator's headers.
pub(crate) const MESSAGE_VECTOR_BYTES: usize = 40 + DIM + 2 * 24 + 8 + 2 * 16;

impl MessageVectors {
    pub fn len(&self) -> usize {
        self.by_hash.read().expect("message vectors lock").len()
    }

    pub fn contains(&self, hash: &str) -> bool {
        self.by_hash
            .read()
            .expect("message vectors lock")
            .contains_key(hash)
    }

    pub fn insert(&self, items: impl IntoIterator<Item = (String, [f32; DIM])>) {
        let mut m = self.by_hash.write().expect("message vectors lock");
        for (h, v) in items {
            m.insert(h, Vector::quantize(&v));
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
            .filter_map(|(i, h)| m.get(h).map(|v| (i, v.score(query))))
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
}
