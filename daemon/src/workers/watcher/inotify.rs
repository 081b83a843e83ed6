//! The Linux watch backend: one inotify instance asked only for changes. `notify`'s inotify backend
//! also asks for `IN_OPEN`, so every file and directory the daemon itself opens (an index round
//! reads each file it indexes and lists each directory it walks) became an event in the kernel's
//! queue (16,384 by default): with a few hundred repositories a branch switch overflowed it, an
//! overflow made every repository walk in full, and the walks' own opens overflowed it again.
//! Here reads make no events at all.
//!
//! Directories are watched one by one (`watch(dir, false)`), or with everything below them
//! (`watch(dir, true)`: git's `refs/`, where a new directory is watched as it appears). Events
//! are collected for [`crate::workers::watcher::DEBOUNCE`] after the first of a burst and handed over as one
//! batch of paths; a queue overflow is a batch that asks for a rescan.

use std::collections::HashMap;
use std::io;
use std::os::raw::c_int;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};

use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask, Watches};

use crate::state::schedule::DEBOUNCE;
use crate::workers::watcher::batch::FsBatch;

/// What a watched directory reports: entries created, deleted, written, moved, their metadata,
/// and the directory itself going. Never opens or reads.
fn mask() -> WatchMask {
    WatchMask::CREATE
        | WatchMask::DELETE
        | WatchMask::MODIFY
        | WatchMask::CLOSE_WRITE
        | WatchMask::MOVED_FROM
        | WatchMask::MOVED_TO
        | WatchMask::ATTRIB
        | WatchMask::DELETE_SELF
        | WatchMask::MOVE_SELF
        | WatchMask::ONLYDIR
        | WatchMask::EXCL_UNLINK
}

/// Why a watch could not be added.
pub(crate) enum WatchError {
    /// The user's `fs.inotify.max_user_watches` is reached.
    Limit,
    Other(io::Error),
}

#[derive(Default)]
struct Table {
    /// Watch id → its directory and whether new directories below it are watched too.
    dirs: HashMap<c_int, (PathBuf, bool)>,
    /// Directory → its watch.
    by_path: HashMap<PathBuf, WatchDescriptor>,
}

/// Events waiting for the end of their burst.
#[derive(Default)]
struct Pending {
    paths: Vec<PathBuf>,
    rescan: bool,
    any: bool,
}

pub(crate) struct Backend {
    watches: Watches,
    table: Arc<Mutex<Table>>,
}

impl Backend {
    /// Start reading events; `handler` gets each burst (on a thread of its own).
    pub fn start(handler: impl Fn(FsBatch) + Send + 'static) -> io::Result<Backend> {
        let inotify = Inotify::init()?;
        let watches = inotify.watches();
        let table = Arc::new(Mutex::new(Table::default()));
        let pending = Arc::new((Mutex::new(Pending::default()), Condvar::new()));
        {
            let table = table.clone();
            let pending = pending.clone();
            let watches = inotify.watches();
            std::thread::Builder::new()
                .name("patina-inotify".into())
                .spawn(move || read(inotify, watches, &table, &pending))?;
        }
        std::thread::Builder::new()
            .name("patina-watch".into())
            .spawn(move || deliver(&pending, handler))?;
        Ok(Backend { watches, table })
    }

    /// Watch `dir` (with every directory below it when `recursive`).
    pub fn watch(&mut self, dir: &Path, recursive: bool) -> Result<(), WatchError> {
        add(&mut self.watches, &self.table, dir, recursive)
    }

    /// Stop watching `dir` (and, for a recursive watch, what was added below it).
    pub fn unwatch(&mut self, dir: &Path) {
        let mut t = self.table.lock().expect("inotify table lock");
        let below: Vec<PathBuf> = match t.by_path.get(dir) {
            Some(wd) => match t.dirs.get(&wd.get_watch_descriptor_id()) {
                Some((_, true)) => t
                    .by_path
                    .keys()
                    .filter(|p| p.starts_with(dir))
                    .cloned()
                    .collect(),
                _ => vec![dir.to_path_buf()],
            },
            None => return,
        };
        for p in below {
            if let Some(wd) = t.by_path.remove(&p) {
                t.dirs.remove(&wd.get_watch_descriptor_id());
                // Gone with its directory already: nothing to undo.
                let _ = self.watches.remove(wd);
            }
        }
    }
}

fn add(
    watches: &mut Watches,
    table: &Mutex<Table>,
    dir: &Path,
    recursive: bool,
) -> Result<(), WatchError> {
    let wd = watches.add(dir, mask()).map_err(|e| {
        if e.raw_os_error() == Some(libc::ENOSPC) {
            WatchError::Limit
        } else {
            WatchError::Other(e)
        }
    })?;
    {
        let mut t = table.lock().expect("inotify table lock");
        t.dirs
            .insert(wd.get_watch_descriptor_id(), (dir.to_path_buf(), recursive));
        t.by_path.insert(dir.to_path_buf(), wd);
    }
    if recursive && let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                add(watches, table, &e.path(), true)?;
            }
        }
    }
    Ok(())
}

/// The reading thread: turn raw events into pending paths until the descriptor fails.
fn read(
    mut inotify: Inotify,
    mut watches: Watches,
    table: &Mutex<Table>,
    pending: &(Mutex<Pending>, Condvar),
) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let events = match inotify.read_events_blocking(&mut buf) {
            Ok(events) => events,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                tracing::error!("inotify: {e}; file events stop here");
                return;
            }
        };
        let mut paths = Vec::new();
        let mut rescan = false;
        let mut new_dirs = Vec::new();
        {
            let mut t = table.lock().expect("inotify table lock");
            for ev in events {
                if ev.mask.contains(EventMask::Q_OVERFLOW) {
                    rescan = true;
                    continue;
                }
                let id = ev.wd.get_watch_descriptor_id();
                if ev.mask.contains(EventMask::IGNORED) {
                    // The watch is gone (its directory was deleted or unwatched).
                    if let Some((dir, _)) = t.dirs.remove(&id)
                        && t.by_path
                            .get(&dir)
                            .is_some_and(|w| w.get_watch_descriptor_id() == id)
                    {
                        t.by_path.remove(&dir);
                    }
                    continue;
                }
                let Some((dir, recursive)) = t.dirs.get(&id) else {
                    continue;
                };
                let path = match ev.name {
                    Some(name) => dir.join(name),
                    None => dir.clone(),
                };
                if *recursive
                    && ev.mask.contains(EventMask::ISDIR)
                    && ev.mask.intersects(EventMask::CREATE | EventMask::MOVED_TO)
                {
                    new_dirs.push(path.clone());
                }
                paths.push(path);
            }
        }
        for dir in new_dirs {
            if let Err(WatchError::Limit) = add(&mut watches, table, &dir, true) {
                rescan = true;
            }
        }
        if paths.is_empty() && !rescan {
            continue;
        }
        let (m, cv) = pending;
        let mut p = m.lock().expect("inotify pending lock");
        p.paths.extend(paths);
        p.rescan |= rescan;
        p.any = true;
        cv.notify_one();
    }
}

/// The delivering thread: wait for a first event, let the burst run for [`DEBOUNCE`], hand it on.
fn deliver(pending: &(Mutex<Pending>, Condvar), handler: impl Fn(FsBatch)) {
    let (m, cv) = pending;
    loop {
        {
            let guard = m.lock().expect("inotify pending lock");
            let _guard = cv
                .wait_while(guard, |p| !p.any)
                .expect("inotify pending lock");
        }
        std::thread::sleep(DEBOUNCE);
        let burst = std::mem::take(&mut *m.lock().expect("inotify pending lock"));
        let mut paths = burst.paths;
        paths.sort();
        paths.dedup();
        handler(FsBatch {
            paths,
            rescan: burst.rescan,
        });
    }
}
