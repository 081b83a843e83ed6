//! Reconciliation: the store's chunk rows and file records, and the lexical index's documents,
//! brought back to exactly one of each per live chunk (what a crash between the two commits of a
//! batch leaves behind), or only reported ([`RepoIndex::audit`]).

use std::collections::{BTreeSet, HashMap, HashSet};

use anyhow::Result;
use patina_core::FileRecord;

use crate::lexical::{LexicalDoc, LexicalWriter};
use crate::repo::RepoIndex;
use crate::store::StoreBatch;

/// What reconciliation found (and, inside an index round, fixed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Repaired {
    /// Chunk rows (metadata or text) no file record points at.
    pub orphan_chunks: u64,
    /// File records pointing at chunks the store does not hold.
    pub dangling_records: u64,
    /// Lexical documents of chunks that are not live, or second copies of a live one.
    pub stray_docs: u64,
    /// Live chunks without a lexical document.
    pub missing_docs: u64,
    /// File records of paths that are no longer files on disk (audit only: a walk removes them).
    pub vanished_files: u64,
}

impl Repaired {
    pub fn is_clean(&self) -> bool {
        *self == Repaired::default()
    }
}

/// The store's side of reconciliation, before a walking round indexes: every chunk row that no
/// file record points at joins `batch` as a removal (so it also leaves the chunk table and the
/// vector index at the commit), and every record that points at a missing chunk is marked
/// unread (no hash, impossible size) so the round reads and re-chunks its file. (A chunk's row
/// holds its text: neither is ever without the other.)
pub(super) fn reconcile_store(
    repo: &RepoIndex,
    records: &mut HashMap<String, FileRecord>,
    batch: &mut StoreBatch,
) -> Result<Repaired> {
    repo.with_chunks(|chunks| {
        let mut out = Repaired::default();
        let mut referenced = HashSet::new();
        for rec in records.values_mut() {
            if !rec.chunk_ids.iter().all(|id| chunks.contains_key(id)) {
                out.dangling_records += 1;
                rec.hash = None;
                rec.size = u64::MAX;
            }
            referenced.extend(rec.chunk_ids.iter().copied());
        }
        let orphans: BTreeSet<u64> = chunks
            .keys()
            .filter(|id| !referenced.contains(id))
            .copied()
            .collect();
        out.orphan_chunks = orphans.len() as u64;
        batch.removed_chunks.extend(orphans);
        Ok(out)
    })
}

/// The lexical side of reconciliation, after a walking round committed: the index must hold one
/// document per live chunk (the chunk table), nothing else. Documents are rebuilt from the store,
/// which holds everything a document is made of.
pub(super) fn reconcile_lexical(
    repo: &RepoIndex,
    writer: &mut LexicalWriter,
) -> Result<(u64, u64)> {
    let (stray, missing) = lexical_differences(repo)?;
    if stray.is_empty() && missing.is_empty() {
        return Ok((0, 0));
    }
    for id in &stray {
        writer.delete_chunk(*id);
    }
    let chunks = repo.with_chunks(|c| c.clone());
    // A duplicated live chunk was deleted above; it is added back once.
    for id in stray
        .iter()
        .filter(|id| chunks.contains_key(id))
        .chain(&missing)
    {
        let (Some(meta), Some(text)) = (chunks.get(id), repo.text(*id)?) else {
            continue;
        };
        writer.add(&LexicalDoc {
            chunk_id: *id,
            path: &meta.path,
            symbol: meta.symbol.as_deref().unwrap_or(""),
            body: &text,
        })?;
    }
    writer.commit()?;
    repo.lexical().reload()?;
    Ok((stray.len() as u64, missing.len() as u64))
}

/// Chunk ids whose lexical documents must go (not live, or indexed more than once) and live chunk
/// ids without a document.
pub(super) fn lexical_differences(repo: &RepoIndex) -> Result<(Vec<u64>, Vec<u64>)> {
    let mut counts: HashMap<u64, u32> = HashMap::new();
    for id in repo.lexical().chunk_ids()? {
        *counts.entry(id).or_default() += 1;
    }
    repo.with_chunks(|chunks| {
        let mut stray: Vec<u64> = counts
            .iter()
            .filter(|(id, n)| **n > 1 || !chunks.contains_key(id))
            .map(|(id, _)| *id)
            .collect();
        let mut missing: Vec<u64> = chunks
            .keys()
            .filter(|id| !counts.contains_key(id))
            .copied()
            .collect();
        stray.sort_unstable();
        missing.sort_unstable();
        Ok((stray, missing))
    })
}

pub(super) fn audit(repo: &RepoIndex) -> Result<Repaired> {
    let mut records: HashMap<String, FileRecord> = repo.file_records()?.into_iter().collect();
    let vanished = records
        .keys()
        .filter(|rel| {
            !std::fs::symlink_metadata(repo.root().join(rel.as_str())).is_ok_and(|m| m.is_file())
        })
        .count() as u64;
    let mut scratch = StoreBatch::default();
    let mut out = reconcile_store(repo, &mut records, &mut scratch)?;
    let (stray, missing) = lexical_differences(repo)?;
    out.stray_docs = stray.len() as u64;
    out.missing_docs = missing.len() as u64;
    out.vanished_files = vanished;
    Ok(out)
}
