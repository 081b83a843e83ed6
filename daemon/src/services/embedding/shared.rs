//! Vectors computed elsewhere (a team's store, `crate::services::team`) that a batch of the
//! model's pass takes before the model embeds what is left.

use std::collections::HashMap;

use anyhow::Result;
use patina_embed::DIM;
use patina_index::store::EmbeddingCache;

/// Where vectors keyed as this process's cache keys them (model, precision, content) may be found.
pub(crate) trait VectorSource: Send + Sync {
    /// Of `keys`, the vectors the source holds under `model`; nothing when it is off or failing.
    fn vectors(&self, model: &str, keys: &[[u8; 32]]) -> Vec<([u8; 32], Vec<f32>)>;
}

/// Move the chunks of `work` whose vectors `source` holds to `cached`, and put those vectors in
/// the embedding cache (so they are taken once).
pub(super) fn take(
    source: &dyn VectorSource,
    model: &str,
    cache: &EmbeddingCache,
    work: &mut Vec<(u64, [u8; 32], String)>,
    cached: &mut Vec<(u64, Vec<f32>)>,
) -> Result<()> {
    if work.is_empty() {
        return Ok(());
    }
    let keys: Vec<[u8; 32]> = work.iter().map(|w| w.1).collect();
    let got: HashMap<[u8; 32], Vec<f32>> = source
        .vectors(model, &keys)
        .into_iter()
        .filter(|(_, v)| v.len() == DIM)
        .collect();
    if got.is_empty() {
        return Ok(());
    }
    let items: Vec<([u8; 32], &[f32])> = got.iter().map(|(k, v)| (*k, v.as_slice())).collect();
    cache.put_many(&items)?;
    work.retain(|w| match got.get(&w.1) {
        Some(v) => {
            cached.push((w.0, v.clone()));
            false
        }
        None => true,
    });
    Ok(())
}
