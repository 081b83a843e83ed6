//! The vector index's manifest: which sealed segment files are live, each with its blake3, length
//! and tombstones, and the next segment number. It is the index's only commit point: a segment
//! file is written and fsynced before the manifest names it, and the manifest is replaced
//! atomically (write, fsync, rename, fsync the directory), so after a crash at any moment the
//! directory holds either the old manifest and its files or the new one and its files; files it
//! does not name are leftovers of a build that never committed, and are deleted at open.
//!
//! The file is JSON followed by a line with the blake3 of the JSON: a manifest cut short or
//! changed is detected, and then the whole index is derived again (from the embedding cache).

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// The manifest's file name in the index directory.
pub(crate) const FILE: &str = "manifest.json";
const FORMAT: &str = "patina-vector-manifest-1";

#[derive(Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
pub(crate) struct Manifest {
    pub format: String,
    /// The number the next segment gets (numbers are never reused).
    pub next: u64,
    pub segments: Vec<Entry>,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub number: u64,
    pub vectors: u64,
    pub bytes: u64,
    /// blake3 of the file, hex.
    pub hash: String,
    /// Ids of the segment removed when the manifest was written (`vectors.seg` has later ones).
    pub tombstones: Vec<u64>,
}

impl Entry {
    pub fn hash(&self) -> Option<[u8; 32]> {
        blake3::Hash::from_hex(&self.hash)
            .ok()
            .map(|h| *h.as_bytes())
    }
}

/// The manifest in `dir`; `Ok(None)` when there is none, `Err` (what is wrong) when it is damaged.
pub(crate) fn read(dir: &Path) -> Result<Option<Manifest>, String> {
    let bytes = match std::fs::read(dir.join(FILE)) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    let text = std::str::from_utf8(&bytes).map_err(|_| "not text".to_string())?;
    let body = text.strip_suffix('\n').unwrap_or(text);
    let (json, hash) = body
        .rsplit_once('\n')
        .ok_or_else(|| "truncated".to_string())?;
    if blake3::hash(json.as_bytes()).to_hex().as_str() != hash {
        return Err("checksum mismatch".into());
    }
    let m: Manifest = serde_json::from_str(json).map_err(|e| e.to_string())?;
    if m.format != FORMAT {
        return Err(format!("format {:?}", m.format));
    }
    Ok(Some(m))
}

/// Write the manifest atomically.
pub(crate) fn write(dir: &Path, segments: Vec<Entry>, next: u64) -> Result<()> {
    let m = Manifest {
        format: FORMAT.to_string(),
        next,
        segments,
    };
    let json = serde_json::to_string(&m)?;
    let hash = blake3::hash(json.as_bytes()).to_hex();
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    write_atomic_with(&dir.join(FILE), |w| {
        w.write_all(json.as_bytes())?;
        w.write_all(b"\n")?;
        w.write_all(hash.as_bytes())?;
        w.write_all(b"\n")?;
        Ok(())
    })?;
    sync_dir(dir);
    Ok(())
}

/// Make the renames in `dir` durable (best effort: a failure leaves them as durable as the file
/// system makes them anyway).
pub(crate) fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, |f| Ok(f.write_all(bytes)?))
}

/// Write a file through `write` (buffered) to a temporary beside `path`, sync it and rename it
/// into place: readers see the old file or the whole new one.
pub(crate) fn write_atomic_with<T>(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> Result<T>,
) -> Result<T> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let tmp = path.with_extension(format!("{ext}.tmp"));
    let file = std::fs::File::create(&tmp).with_context(|| format!("writing {}", tmp.display()))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 16, file);
    let out = write(&mut w).with_context(|| format!("writing {}", tmp.display()))?;
    let file = w
        .into_inner()
        .map_err(|e| e.into_error())
        .with_context(|| format!("writing {}", tmp.display()))?;
    file.sync_all()?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming into {}", path.display()))?;
    Ok(out)
}
