//! What the watcher's back end hands its front end.

use std::path::PathBuf;

/// One burst of file events: the paths they named (files and directories, created, written,
/// deleted or moved), and whether events were lost (then every repository reconciles in full).
#[derive(Debug, Default)]
pub(crate) struct FsBatch {
    pub paths: Vec<PathBuf>,
    pub rescan: bool,
}
