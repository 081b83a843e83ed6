//! Whether the daemon's own executable was replaced on disk since it started (an upgrade or a
//! rebuild): the process keeps running the old code, and every client would be served by it
//! without knowing. Clients warn ([`ExeStamp::replaced`] in `Health.Check`).

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

/// The executable's path and identity (device, inode, modification time) at start.
pub(crate) struct ExeStamp {
    path: Option<PathBuf>,
    identity: Option<(u64, u64, i64, i64)>,
}

fn identity(m: &std::fs::Metadata) -> (u64, u64, i64, i64) {
    (m.dev(), m.ino(), m.mtime(), m.mtime_nsec())
}

impl ExeStamp {
    pub fn now() -> ExeStamp {
        let path = std::env::current_exe().ok();
        let identity = path
            .as_ref()
            .and_then(|p| std::fs::metadata(p).ok())
            .map(|m| identity(&m));
        ExeStamp { path, identity }
    }

    /// The file at the start-up path is no longer the one this process runs (replaced, rebuilt or
    /// removed). Unknown (no path at start) counts as not replaced.
    pub fn replaced(&self) -> bool {
        let (Some(path), Some(was)) = (&self.path, self.identity) else {
            return false;
        };
        match std::fs::metadata(path) {
            Ok(m) => identity(&m) != was,
            Err(_) => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_rewritten_in_place_or_replaced_is_noticed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("patinad");
        std::fs::write(&path, b"old").unwrap();
        let stamp = ExeStamp {
            path: Some(path.clone()),
            identity: Some(identity(&std::fs::metadata(&path).unwrap())),
        };
        assert!(!stamp.replaced());
        // An install writes a new file and renames it over the old one (a new inode).
        let new = dir.path().join("patinad.new");
        std::fs::write(&new, b"new").unwrap();
        std::fs::rename(&new, &path).unwrap();
        assert!(stamp.replaced());
        std::fs::remove_file(&path).unwrap();
        assert!(stamp.replaced());
        assert!(
            !ExeStamp::now().replaced(),
            "the test binary itself is in place"
        );
    }
}
