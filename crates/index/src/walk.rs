//! Listing the files of a repository: gitignore-aware (`.gitignore`, `.git/info/exclude`, global
//! excludes) plus Patina's own `.patinaignore`, never descending into `.git`, never following
//! symlinks, never leaving the file system the root is on (`patina add /` does not walk `/proc`,
//! `/sys` or other mounts) and listing only regular files (no FIFOs, sockets or devices).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

pub struct WalkEntry {
    /// Relative to the repository root, '/'-separated.
    pub rel: String,
    pub abs: PathBuf,
    pub size: u64,
    pub mtime_ns: i128,
}

/// The files under `root` that the ignore rules let through, sorted by path. Stops early (with a
/// partial list the caller must discard) once `cancelled` is set.
pub fn walk(root: &Path, cancelled: &AtomicBool) -> Vec<WalkEntry> {
    let mut out = Vec::new();
    for entry in crate::ignore::walker(root).build().flatten() {
        if cancelled.load(Ordering::Relaxed) {
            break;
        }
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        let Some(rel) = rel.to_str() else { continue };
        out.push(WalkEntry {
            rel: rel.replace(std::path::MAIN_SEPARATOR, "/"),
            abs: entry.path().to_path_buf(),
            size: meta.len(),
            mtime_ns: mtime_ns(&meta),
        });
    }
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    out
}

/// How many files [`walk`] would list under `root`, counting no further than `limit`.
pub fn count_files(root: &Path, limit: usize) -> usize {
    crate::ignore::walker(root)
        .build()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .take(limit)
        .count()
}

/// The directories under `start` (itself included) that the ignore rules let through.
pub fn dirs(start: &Path) -> Vec<PathBuf> {
    crate::ignore::walker(start)
        .build()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_dir()))
        .map(|e| e.into_path())
        .collect()
}

pub fn mtime_ns(meta: &std::fs::Metadata) -> i128 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as i128)
        .unwrap_or(0)
}
