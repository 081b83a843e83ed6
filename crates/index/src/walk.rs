//! Listing the files of a repository: gitignore-aware (`.gitignore`, `.git/info/exclude`, global
//! excludes) plus Patina's own `.patinaignore`, never descending into `.git`, never following
//! symlinks, never leaving the file system the root is on (`patina add /` does not walk `/proc`,
//! `/sys` or other mounts) and listing only regular files (no FIFOs, sockets or devices).

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use patina_core::SkipReason;
use patina_core::paths::escape_bytes;

pub struct WalkEntry {
    /// Relative to the repository root, '/'-separated.
    pub rel: String,
    pub abs: PathBuf,
    pub size: u64,
    pub mtime_ns: i128,
}

/// What a walk passed over that the ignore rules did not exclude, with the reason: file names
/// that are not UTF-8 (escaped, `\\xNN`), FIFOs, sockets and devices, unreadable directories.
/// Symlinks are not listed: they are never followed, by design.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WalkSkips(pub Vec<(SkipReason, String)>);

/// The files under `root` that the ignore rules let through, sorted by path. Stops early (with a
/// partial list the caller must discard) once `cancelled` is set.
pub fn walk(root: &Path, cancelled: &AtomicBool) -> Vec<WalkEntry> {
    walk_accounted(root, cancelled).0
}

/// [`walk`], plus what it passed over and why.
pub fn walk_accounted(root: &Path, cancelled: &AtomicBool) -> (Vec<WalkEntry>, WalkSkips) {
    let mut out = Vec::new();
    let mut skips = Vec::new();
    let rel_of = |p: &Path| -> String {
        let rel = p.strip_prefix(root).unwrap_or(p);
        escape_bytes(rel.as_os_str().as_bytes()).replace(std::path::MAIN_SEPARATOR, "/")
    };
    for entry in crate::ignore::walker(root).build() {
        if cancelled.load(Ordering::Relaxed) {
            break;
        }
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                // Soft errors (an ignore file that partly parsed) are not skips.
                if !e.is_partial()
                    && e.is_io()
                    && let Some(p) = error_path(&e)
                {
                    // The cause is the path's length, not permissions: say so.
                    // (ENAMETOOLONG; the walk wraps the system's error, which keeps its kind.)
                    let too_long = e.io_error().is_some_and(|io| {
                        io.raw_os_error() == Some(libc::ENAMETOOLONG)
                            || io.kind() == std::io::ErrorKind::InvalidFilename
                    });
                    let reason = if too_long {
                        SkipReason::PathTooLong
                    } else {
                        SkipReason::UnreadableDir
                    };
                    skips.push((reason, rel_of(p)));
                }
                continue;
            }
        };
        let Some(ft) = entry.file_type() else {
            continue;
        };
        if !ft.is_file() {
            if !ft.is_dir() && !ft.is_symlink() {
                skips.push((SkipReason::NotRegular, rel_of(entry.path())));
            }
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        let Some(rel) = rel.to_str() else {
            skips.push((SkipReason::InvalidName, rel_of(entry.path())));
            continue;
        };
        out.push(WalkEntry {
            rel: rel.replace(std::path::MAIN_SEPARATOR, "/"),
            abs: entry.path().to_path_buf(),
            size: meta.len(),
            mtime_ns: mtime_ns(&meta),
        });
    }
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    skips.sort();
    (out, WalkSkips(skips))
}

/// The path an error of the walk is about, if it names one.
fn error_path(e: &ignore::Error) -> Option<&Path> {
    match e {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        _ => None,
    }
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
