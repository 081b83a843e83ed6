//! Corpora: a directory indexed as is, or a JSON Lines file of documents written out once under
//! the state root.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Deserialize;

#[derive(Deserialize)]
struct Doc {
    path: String,
    text: String,
}

/// A directory is used as is; a JSONL corpus is written out once under the state root, keyed by
/// its content hash, and reused by later runs.
pub(crate) fn corpus_dir(corpus: &Path) -> Result<PathBuf> {
    if corpus.is_dir() {
        return std::fs::canonicalize(corpus).context("resolving the corpus directory");
    }
    let bytes = std::fs::read(corpus).with_context(|| format!("reading {}", corpus.display()))?;
    let key = &blake3::hash(&bytes).to_hex()[..12];
    let dir = patina_proto::endpoint::state_root()
        .join("bench")
        .join(format!("corpus-{key}"));
    let done = dir.with_extension("complete");
    if done.exists() {
        return Ok(dir);
    }
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    let text = String::from_utf8(bytes).context("corpus is not UTF-8")?;
    let mut n = 0;
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let d: Doc = serde_json::from_str(line)
            .with_context(|| format!("{}:{}: not a document", corpus.display(), i + 1))?;
        let rel = Path::new(&d.path);
        if rel.is_absolute()
            || rel
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            bail!(
                "{}:{}: path '{}' escapes the corpus",
                corpus.display(),
                i + 1,
                d.path
            );
        }
        let p = dir.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&p, d.text)?;
        n += 1;
    }
    std::fs::write(&done, format!("{n}\n"))?;
    eprintln!("materialised {n} documents in {}", dir.display());
    Ok(dir)
}
