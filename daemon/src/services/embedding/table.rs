//! The static first pass's token table (`static.bin`), as the daemon holds it: loaded while a
//! backlog waits, dropped when every backlog is drained, and looked at again while held, so a
//! table that appears or is replaced on disk is taken up without a restart.
//!
//! `scripts/setup` installs a first table fitted on a small share of the pinned corpus and fits the
//! final one in the background after the build; when that replaces the file, the next look loads
//! it and bumps the [generation](TableSlot::get): static vectors made from an older generation are
//! made again ([`crate::state::repo::Repo::restale_provisional`]). A table missing at the first
//! look is looked for again, at the same interval, instead of turning the static pass off for good.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use patina_embed::StaticTable;

/// How often a held (or missing) table's file is looked at again.
pub(crate) const RECHECK: Duration = Duration::from_secs(3);

/// What tells one version of the file from another: its size, modification time and inode (a
/// replacement by rename is a new inode even within one clock tick).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
    inode: u64,
}

impl Stamp {
    fn of(path: &Path) -> Option<Stamp> {
        let m = std::fs::metadata(path).ok()?;
        if !m.is_file() {
            return None;
        }
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(&m);
        #[cfg(not(unix))]
        let inode = 0;
        Some(Stamp {
            len: m.len(),
            modified: m.modified().ok(),
            inode,
        })
    }
}

enum Held {
    /// Off by configuration (`[semantic] static_pass = false`).
    Off,
    /// Not loaded (no backlog since the last drain); loaded on demand.
    Unloaded,
    Loaded(Arc<StaticTable>),
    /// Missing or unreadable at the last look (said once in the log).
    Absent,
}

struct Inner {
    held: Held,
    /// The file the held table (or the last one held) was read from.
    stamp: Option<Stamp>,
    /// Bumped each time a table read from a different file than the one before is loaded.
    generation: u64,
    /// When the file was last looked at.
    looked: Option<Instant>,
    /// A version of the file that could not be read: not tried (nor said) again.
    refused: Option<Stamp>,
}

/// The table's file, the table when held, and its generation.
pub(crate) struct TableSlot {
    file: PathBuf,
    tokenizer: PathBuf,
    inner: Mutex<Inner>,
}

impl TableSlot {
    pub fn new(file: PathBuf, tokenizer: PathBuf, on: bool) -> TableSlot {
        TableSlot {
            file,
            tokenizer,
            inner: Mutex::new(Inner {
                held: if on { Held::Unloaded } else { Held::Off },
                stamp: None,
                generation: 0,
                looked: None,
                refused: None,
            }),
        }
    }

    /// Whether there is nothing to do with static vectors now: off by configuration, or missing
    /// at a look less than [`RECHECK`] ago.
    pub fn is_off(&self) -> bool {
        let s = self.inner.lock().expect("table lock");
        match s.held {
            Held::Off => true,
            Held::Absent => s.looked.is_some_and(|t| t.elapsed() < RECHECK),
            Held::Unloaded | Held::Loaded(_) => false,
        }
    }

    /// Whether the pass is off by configuration or has no table to use (missing at the last look).
    pub fn unavailable(&self) -> bool {
        matches!(
            self.inner.lock().expect("table lock").held,
            Held::Off | Held::Absent
        )
    }

    /// The table and its generation, loaded if needed; a held table whose file was replaced is
    /// read again (at most every [`RECHECK`]). `None` when off, missing or unreadable.
    pub fn get(&self) -> Option<(Arc<StaticTable>, u64)> {
        let mut s = self.inner.lock().expect("table lock");
        let due = s.looked.is_none_or(|t| t.elapsed() >= RECHECK);
        match &s.held {
            Held::Off => return None,
            Held::Loaded(t) if !due => return Some((t.clone(), s.generation)),
            Held::Absent if !due => return None,
            _ => {}
        }
        s.looked = Some(Instant::now());
        let stamp = Stamp::of(&self.file);
        let refused = stamp.is_some() && stamp == s.refused;
        if let Held::Loaded(t) = &s.held
            && (stamp.is_none() || stamp == s.stamp || refused)
        {
            // Unchanged, gone for now (a replacement is a rename: the old table stays good), or
            // a version already found unreadable.
            return Some((t.clone(), s.generation));
        }
        if refused {
            s.held = Held::Absent;
            return None;
        }
        let Some(stamp) = stamp else {
            if !matches!(s.held, Held::Absent) {
                tracing::info!(
                    "no static table at {} (scripts/setup-model distils it): semantic results \
                     wait for the model until it appears",
                    self.file.display()
                );
            }
            s.held = Held::Absent;
            return None;
        };
        match StaticTable::load(&self.file, &self.tokenizer) {
            Ok(t) => {
                let replaced = s.stamp.is_some_and(|old| old != stamp);
                if replaced {
                    s.generation += 1;
                }
                s.stamp = Some(stamp);
                tracing::info!(
                    bytes = t.bytes(),
                    generation = s.generation,
                    "{}",
                    if replaced {
                        "static table replaced on disk: loaded again; static vectors made from \
                         the previous one are made again"
                    } else {
                        "static table loaded"
                    }
                );
                let t = Arc::new(t);
                s.held = Held::Loaded(t.clone());
                Some((t, s.generation))
            }
            Err(e) => {
                s.refused = Some(stamp);
                if let Held::Loaded(t) = &s.held {
                    // Keep answering with the table in hand; the file is looked at again later.
                    tracing::warn!("static table on disk unreadable, the loaded one kept: {e:#}");
                    return Some((t.clone(), s.generation));
                }
                tracing::warn!("static pass waits for a readable table: {e:#}");
                s.held = Held::Absent;
                None
            }
        }
    }

    /// Drop the held table (every backlog is drained); the next backlog loads it again.
    pub fn release(&self) {
        let mut s = self.inner.lock().expect("table lock");
        if matches!(s.held, Held::Loaded(_)) {
            s.held = Held::Unloaded;
            tracing::info!("static table released (no backlog)");
        }
    }
}
