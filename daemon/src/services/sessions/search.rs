//! Ranking notes for a query (the session oracle): BM25 over the notes' topic terms, blended with
//! the cosine of the note's and the query's embeddings when the model is on.

use anyhow::Result;
use patina_embed::DIM;

use super::Sessions;
use patina_core::tokens::query_terms;

/// Query terms beyond this many are ignored.
const MAX_TERMS: usize = 64;
/// A note at least this close to the query (cosine) is relevant without sharing a word with it.
const MIN_COSINE: f32 = 0.35;
/// Weight of the (max-normalised) BM25 score next to the cosine when both are available.
const LEXICAL_BLEND: f32 = 0.5;
const BM25_K1: f32 = 1.2;
const BM25_B: f32 = 0.75;

/// Words that carry no topic: a note must share something better with the query to match it.
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "because",
    "been", "but", "by", "can", "could", "did", "do", "does", "for", "from", "had", "has", "have",
    "how", "i", "if", "in", "into", "is", "it", "its", "just", "me", "more", "my", "no", "not",
    "now", "of", "on", "one", "or", "our", "out", "over", "should", "so", "some", "such", "than",
    "that", "the", "their", "them", "then", "there", "these", "they", "this", "to", "too", "up",
    "us", "use", "used", "uses", "using", "was", "we", "were", "what", "when", "where", "which",
    "while", "who", "why", "will", "with", "would", "you", "your",
];

impl Sessions {
    /// Notes relevant to `text`, best first, at most `limit`: (note id, score). `embedded` is the
    /// text the model reads for it (the semantic oracle's, so the two share one embedding).
    /// `scope` holds the ids of the repositories the query covers; notes of sessions tied to
    /// another repository are left out.
    pub fn search(
        &self,
        text: &str,
        embedded: &str,
        limit: usize,
        scope: &[&str],
    ) -> Result<Vec<(u64, f32)>> {
        // No notes, no question to embed (most daemons have none).
        if self.state.read().expect("sessions lock").notes.is_empty() {
            return Ok(Vec::new());
        }
        let terms: Vec<String> = query_terms(text, MAX_TERMS)
            .into_iter()
            .filter(|t| is_topic_word(t))
            .collect();
        // Lexical only when the model is off (or fails on this query).
        let query_vector = if self.semantic.is_on() {
            self.semantic.embed_query(embedded).ok()
        } else {
            None
        };
        let state = self.state.read().expect("sessions lock");
        if state.notes.is_empty() {
            return Ok(Vec::new());
        }
        let n = state.notes.len() as f32;
        let avg_len = (state.total_len as f32 / n).max(1.0);
        let idf: Vec<(&str, f32)> = terms
            .iter()
            .filter_map(|t| {
                let df = *state.df.get(t)? as f32;
                Some((t.as_str(), (1.0 + (n - df + 0.5) / (df + 0.5)).ln()))
            })
            .collect();
        let mut scored: Vec<(u64, f32, f32)> = Vec::new();
        for (id, doc) in &state.notes {
            let in_scope = state
                .sessions
                .get(&doc.rec.session)
                .and_then(|s| s.repo_id.as_deref())
                .is_none_or(|r| scope.contains(&r));
            if !in_scope {
                continue;
            }
            let mut bm25 = 0.0;
            for (t, w) in &idf {
                if let Some(&tf) = doc.terms.get(*t) {
                    let tf = tf as f32;
                    let norm = BM25_K1 * (1.0 - BM25_B + BM25_B * doc.len as f32 / avg_len);
                    bm25 += w * tf * (BM25_K1 + 1.0) / (tf + norm);
                }
            }
            let cosine = match (&query_vector, &doc.vector) {
                (Some(q), Some(v)) => cosine(q, v),
                _ => 0.0,
            };
            if bm25 > 0.0 || cosine >= MIN_COSINE {
                scored.push((*id, bm25, cosine));
            }
        }
        let max_bm25 = scored.iter().map(|s| s.1).fold(0.0f32, f32::max);
        let mut out: Vec<(u64, f32)> = scored
            .into_iter()
            .map(|(id, bm25, cos)| {
                let score = if query_vector.is_some() {
                    cos + LEXICAL_BLEND * if max_bm25 > 0.0 { bm25 / max_bm25 } else { 0.0 }
                } else {
                    bm25
                };
                (id, score)
            })
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out.truncate(limit);
        Ok(out)
    }
}

pub(super) fn is_topic_word(t: &str) -> bool {
    t.chars().count() >= 2 && !STOP_WORDS.contains(&t)
}

fn cosine(a: &[f32; DIM], b: &[f32; DIM]) -> f32 {
    let (mut dot, mut na, mut nb) = (0.0f32, 0.0f32, 0.0f32);
    for i in 0..DIM {
        dot += a[i] * b[i];
        na += a[i] * a[i];
        nb += b[i] * b[i];
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}
