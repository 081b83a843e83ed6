//! The embedding cache's keys: a hash of the model, its precision and everything a vector is a
//! function of, so nothing is embedded twice and no vector of another graph is ever served.

use patina_core::ChunkMeta;
use patina_embed::{MODEL_NAME, Precision};

/// The model and graph a vector comes from, as a cache-key prefix. fp32 keeps the prefix of the
/// keys written before the precision was part of them (so an fp32 cache stays valid); int8 has
/// its own, so switching `[semantic] precision` never serves a vector of the other graph.
pub(super) fn model_tag(precision: Precision) -> String {
    match precision {
        Precision::Fp32 => MODEL_NAME.to_string(),
        Precision::Int8 => format!("{MODEL_NAME}/{}", precision.name()),
    }
}

/// Cache key of a chunk's embedding: a hash of the model and precision, the chunk's context
/// fields and its text hash — everything [`Semantic::input`] and the vector are a function of.
pub(super) fn chunk_key(precision: Precision, meta: &ChunkMeta) -> [u8; 32] {
    chunk_key_of(
        precision,
        &meta.path,
        meta.parent.as_deref().unwrap_or(""),
        meta.symbol.as_deref().unwrap_or(""),
        &meta.hash.to_hex(),
    )
}

pub(super) fn chunk_key_of(
    precision: Precision,
    path: &str,
    parent: &str,
    symbol: &str,
    hash: &str,
) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update(model_tag(precision).as_bytes());
    h.update(b"/2\0");
    h.update(path.as_bytes());
    h.update(b"\0");
    h.update(parent.as_bytes());
    h.update(b"\0");
    h.update(symbol.as_bytes());
    h.update(b"\0");
    h.update(hash.as_bytes());
    *h.finalize().as_bytes()
}

/// Cache key of a session note's embedding (the note's text, embedded as a query is).
pub(super) fn note_key(precision: Precision, text: &str) -> [u8; 32] {
    let tag = model_tag(precision);
    *blake3::hash(format!("patina-note/{tag}/1\0{text}").as_bytes()).as_bytes()
}
