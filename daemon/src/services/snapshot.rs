//! Portable snapshots of a repository's index (`patina snapshot create|verify|restore`): the
//! daemon side of `patina_index::snapshot`. A snapshot is taken of a fresh index at a commit with
//! every chunk embedded; restoring it puts its vectors in the embedding cache under this daemon's
//! keys and registers the clone, so its index round finds every vector and embeds nothing.
//! Knows nothing of gRPC.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use patina_core::UserError;
use patina_index::snapshot::{Entry, FORMAT, Header, Snapshot, hex};

use crate::services::embedding::Semantic;
use crate::services::freshness::Freshness;
use crate::state::repo::Repo;

/// How long `create` waits for an index round already running on a complete index.
const ROUND_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// What a snapshot file holds, as the commands report it.
pub(crate) struct Info {
    pub file: PathBuf,
    pub digest: String,
    pub header: Header,
    pub chunks: usize,
    pub vectors: usize,
    pub bytes: usize,
}

fn invalid(msg: String) -> anyhow::Error {
    UserError::Invalid(msg).into()
}

fn absolute(path: &str, what: &str) -> Result<PathBuf> {
    let p = PathBuf::from(path);
    if path.trim().is_empty() || !p.is_absolute() {
        return Err(invalid(format!(
            "the {what} must be an absolute path, not '{path}'"
        )));
    }
    Ok(p)
}

/// Write the snapshot of `repo` to `out` (atomically: a temporary file renamed into place).
pub(crate) fn create(semantic: &Semantic, repo: &Arc<Repo>, out: &str) -> Result<Info> {
    let out = absolute(out, "output file")?;
    if out.components().any(|c| c.as_os_str() == ".git") {
        return Err(invalid(format!(
            "not writing inside a .git directory: {}",
            out.display()
        )));
    }
    if out.starts_with(repo.root()) {
        return Err(invalid(format!(
            "write the snapshot outside the repository ({} is inside {}): it would change the \
             working tree it describes",
            out.display(),
            repo.root().display()
        )));
    }
    let dir = out
        .parent()
        .filter(|d| d.is_dir())
        .ok_or_else(|| invalid(format!("no directory to write {} into", out.display())))?;
    if !semantic.is_on() {
        return Err(invalid(format!(
            "a snapshot carries the embeddings, and semantic search is off: {}",
            semantic.describe()
        )));
    }
    let commit = fresh_commit(repo, "a snapshot")?;
    let entries = embedded_chunks(semantic, repo)?
        .into_iter()
        .map(|(id, m, vector)| Entry {
            id,
            path: m.path.to_string(),
            start_line: m.start_line,
            end_line: m.end_line,
            parent: m.parent.clone().unwrap_or_default(),
            symbol: m.symbol.clone().unwrap_or_default(),
            hash: m.hash.to_hex(),
            vector: Some(vector),
        })
        .collect();
    let snapshot = Snapshot {
        header: Header {
            format: FORMAT,
            commit,
            model: semantic.model_tag(),
            dim: patina_embed::DIM as u32,
            chunker: patina_chunk::VERSION,
            graph: patina_chunk::GRAPH_VERSION,
            patina: env!("CARGO_PKG_VERSION").into(),
        },
        entries,
    };
    let (bytes, digest) = snapshot.encode()?;
    let tmp = dir.join(format!(
        ".{}.tmp{}",
        out.file_name()
            .map_or("snapshot".into(), |n| n.to_string_lossy()),
        std::process::id()
    ));
    std::fs::write(&tmp, &bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, &out).with_context(|| format!("writing {}", out.display()))?;
    tracing::info!(repo = %repo.id(), file = %out.display(), digest = %hex(&digest), "snapshot written");
    Ok(info(out, &snapshot, &digest, bytes.len()))
}

/// Every chunk of `repo` with its vector under this daemon's model: from the embedding cache, or
/// what the cache has lost (deleted, or its tail cut after a crash) from the vector index, which
/// holds the same 8-bit numbers. An error when some chunk has no vector yet.
fn embedded_chunks(
    semantic: &Semantic,
    repo: &Repo,
) -> Result<Vec<(u64, patina_core::ChunkMeta, Vec<f32>)>> {
    let metas: Vec<(u64, patina_core::ChunkMeta)> =
        repo.with_chunks(|c| c.iter().map(|(id, m)| (*id, m.clone())).collect());
    let mut out = Vec::with_capacity(metas.len());
    let mut lost = HashSet::new();
    for (id, m) in metas {
        let vector = semantic.cached(&m)?;
        if vector.is_none() {
            lost.insert(id);
        }
        out.push((id, m, vector));
    }
    let mut held = repo.vectors_of(&lost);
    for e in out.iter_mut().filter(|e| e.2.is_none()) {
        e.2 = held.remove(&e.0);
    }
    let missing = out.iter().filter(|e| e.2.is_none()).count();
    if missing > 0 {
        bail!(
            "{missing} chunks of {} have no embedding yet; wait until `patina status` shows every \
             chunk embedded",
            repo.record().name
        );
    }
    Ok(out
        .into_iter()
        .map(|(id, m, v)| (id, m, v.expect("checked above")))
        .collect())
}

/// The commit `repo`'s index stands for, when it is complete and the working tree is clean:
/// what a snapshot or a publish (`what`) is of. A round that is only confirming an index already
/// complete (a watcher's late event, the poller) is waited for, briefly.
pub(crate) fn fresh_commit(repo: &Arc<Repo>, what: &str) -> Result<String> {
    let mut f = Freshness::of(repo);
    let deadline = std::time::Instant::now() + ROUND_WAIT;
    while f.indexing
        && f.pending_files == Some(0)
        && f.embed_backlog == 0
        && f.indexed_commit == f.head_commit
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(50));
        f = Freshness::of(repo);
    }
    let Some(commit) = f.indexed_commit.clone() else {
        return Err(invalid(format!(
            "{} is not a git repository at a commit: {what} is of a commit",
            repo.root().display()
        )));
    };
    if !f.is_fresh() {
        return Err(invalid(format!(
            "the index of {} is not complete yet ({} files pending, {} chunks to embed, HEAD {}, \
             indexed {commit}); wait until `patina status` shows it fresh",
            repo.record().name,
            f.pending_files.map_or("?".into(), |n| n.to_string()),
            f.embed_backlog,
            f.head_commit.as_deref().unwrap_or("?"),
        )));
    }
    if let Some(dirty) = crate::services::git::dirty(repo.root()) {
        return Err(invalid(format!(
            "{} has changes that are not committed ({dirty}): {what} is of a commit, commit or \
             stash them first",
            repo.root().display()
        )));
    }
    Ok(commit)
}

fn info(file: PathBuf, s: &Snapshot, digest: &[u8; 32], bytes: usize) -> Info {
    Info {
        file,
        digest: hex(digest),
        header: s.header.clone(),
        chunks: s.entries.len(),
        vectors: s.entries.iter().filter(|e| e.vector.is_some()).count(),
        bytes,
    }
}

/// Read `file` and check it (digest, structure).
pub(crate) fn read(file: &str) -> Result<(Snapshot, Info)> {
    let path = absolute(file, "snapshot file")?;
    let bytes = std::fs::read(&path)
        .map_err(|e| invalid(format!("cannot read the snapshot {}: {e}", path.display())))?;
    let (s, digest) =
        Snapshot::decode(&bytes).map_err(|e| invalid(format!("{}: {e:#}", path.display())))?;
    let info = info(path, &s, &digest, bytes.len());
    Ok((s, info))
}

/// Check that `s` can serve the clone at `into` in this daemon: same commit, same model.
/// Registers nothing.
pub(crate) fn check_restore(semantic: &Semantic, s: &Snapshot, into: &str) -> Result<PathBuf> {
    let into = absolute(into, "clone")?;
    if !into.is_dir() {
        return Err(invalid(format!("{} is not a directory", into.display())));
    }
    let head = crate::services::git::head(&into)
        .ok_or_else(|| invalid(format!("{} is not a git clone at a commit", into.display())))?;
    if head != s.header.commit {
        return Err(invalid(format!(
            "{} is at {head}, the snapshot is of {}: `git -C {} checkout {}` first",
            into.display(),
            s.header.commit,
            into.display(),
            s.header.commit
        )));
    }
    if !semantic.is_on() {
        return Err(invalid(format!(
            "semantic search is off, so the snapshot's vectors would not be used: {}",
            semantic.describe()
        )));
    }
    if semantic.model_tag() != s.header.model {
        return Err(invalid(format!(
            "the snapshot's vectors come from {}, this daemon embeds with {}",
            s.header.model,
            semantic.model_tag()
        )));
    }
    Ok(into)
}

/// Put the snapshot's vectors in the embedding cache; returns how many.
pub(crate) fn import(semantic: &Semantic, s: &Snapshot) -> Result<usize> {
    let items: Vec<(&str, &str, &str, &str, &[f32])> = s
        .entries
        .iter()
        .filter_map(|e| {
            e.vector.as_deref().map(|v| {
                (
                    e.path.as_str(),
                    e.parent.as_str(),
                    e.symbol.as_str(),
                    e.hash.as_str(),
                    v,
                )
            })
        })
        .collect();
    semantic.import(&items)
}
