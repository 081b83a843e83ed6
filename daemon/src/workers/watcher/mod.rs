//! Keeping indices live. One debounced watcher (one inotify instance, one thread) serves every
//! repository: each repository watches every directory its ignore rules let through (so
//! `npm install` into an ignored `node_modules` costs nothing) and its git directories, and an
//! event goes to the repositories that watch the directory it happened in. Events become entries
//! in the repository's dirty set; a HEAD or ref move (checkout, commit, pull, rebase, stash) adds
//! the paths `git diff` names between the indexed commit and the new HEAD. The registry then
//! schedules an index round, so bursts coalesce.
//!
//! One instance for all: Linux allows a user 128 inotify instances by default, so a watcher per
//! repository stopped watching at about the 120th repository. On Linux the backend is Patina's own
//! (`crate::workers::watcher::inotify`: asks for changes only, never for opens); elsewhere `notify`'s.

pub(crate) mod batch;
#[cfg(target_os = "linux")]
mod inotify;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use anyhow::{Result, anyhow};

#[cfg(target_os = "linux")]
use inotify::{Backend, WatchError};
#[cfg(not(target_os = "linux"))]
use portable::{Backend, WatchError};

use crate::services::git;
use crate::state::repo::Repo;
use patina_index::walk;

pub(crate) use batch::FsBatch;

/// Called (on the watcher's thread) after the dirty set of a repository grew.
pub(crate) type OnChange = Arc<dyn Fn(&Arc<Repo>) + Send + Sync>;

/// What one repository watches, and whom to tell.
struct Watched {
    repo: Weak<Repo>,
    git: Option<git::GitDirs>,
    /// Directories watched on their own (not below them).
    dirs: HashSet<PathBuf>,
    /// Directories watched with everything below them (`refs/`).
    trees: HashSet<PathBuf>,
}

impl Watched {
    /// Whether an event at `path` concerns this repository: in or of a directory it watches.
    fn concerns(&self, path: &Path) -> bool {
        self.dirs.contains(path)
            || path.parent().is_some_and(|d| self.dirs.contains(d))
            || self.trees.iter().any(|t| path.starts_with(t))
    }
}

/// The watcher every repository shares.
pub(crate) struct Watcher {
    /// Created with the first repository.
    debouncer: Mutex<Option<Backend>>,
    /// Repository id → what it watches (read by the event thread to route events).
    repos: Arc<Mutex<HashMap<String, Watched>>>,
    /// How many repositories watch each path: the OS watch goes when the last one leaves.
    counts: Mutex<HashMap<PathBuf, usize>>,
    on_change: OnChange,
}

impl Watcher {
    pub fn new(on_change: OnChange) -> Watcher {
        Watcher {
            debouncer: Mutex::new(None),
            repos: Arc::new(Mutex::new(HashMap::new())),
            counts: Mutex::new(HashMap::new()),
            on_change,
        }
    }

    /// Start watching `repo`, or (watched already) add the directories that appeared since the
    /// last call (after a full walk) and forget those that are gone. Callers serialise calls.
    pub fn watch(&self, repo: &Arc<Repo>) -> Result<()> {
        let id = repo.id().to_string();
        // Known: watched already. Its events go to this repository object even when another
        // one of the same id was watched before (dropped since): never to a dead handle.
        let known = match self.repos.lock().expect("watch table lock").get_mut(&id) {
            Some(w) => {
                if !w.repo.upgrade().is_some_and(|r| Arc::ptr_eq(&r, repo)) {
                    w.repo = Arc::downgrade(repo);
                }
                true
            }
            None => false,
        };
        if !known {
            let git_dirs = git::dirs(repo.root());
            let mut trees = HashSet::new();
            let mut dirs = HashSet::new();
            let mut result = Ok(());
            if let Some(d) = &git_dirs {
                // HEAD and packed-refs live directly in the git dirs; loose refs below `refs/`.
                let mut wanted = vec![(d.git_dir.clone(), false)];
                if d.common_dir != d.git_dir {
                    wanted.push((d.common_dir.clone(), false));
                }
                let refs = d.common_dir.join("refs");
                if refs.is_dir() {
                    wanted.push((refs, true));
                }
                for (dir, recursive) in wanted {
                    if result.is_err() {
                        break;
                    }
                    result = self.add(&dir, recursive, dirs.len() + trees.len());
                    if result.is_ok() {
                        if recursive { &mut trees } else { &mut dirs }.insert(dir);
                    }
                }
            }
            self.repos.lock().expect("watch table lock").insert(
                id.clone(),
                Watched {
                    repo: Arc::downgrade(repo),
                    git: git_dirs,
                    dirs,
                    trees,
                },
            );
            result?;
        }
        // Directories gone since the last walk (their OS watches went with them).
        let gone: Vec<PathBuf> = {
            let mut table = self.repos.lock().expect("watch table lock");
            let w = table.get_mut(&id).expect("registered above");
            let gone: Vec<PathBuf> = w.dirs.iter().filter(|d| !d.exists()).cloned().collect();
            for d in &gone {
                w.dirs.remove(d);
            }
            gone
        };
        for d in gone {
            self.release(&d);
        }
        let have: HashSet<PathBuf> = self.repos.lock().expect("watch table lock")[&id]
            .dirs
            .clone();
        let mut count = have.len();
        for dir in walk::dirs(repo.root()) {
            if have.contains(&dir) {
                continue;
            }
            self.add(&dir, false, count)?;
            count += 1;
            if let Some(w) = self.repos.lock().expect("watch table lock").get_mut(&id) {
                w.dirs.insert(dir);
            }
        }
        Ok(())
    }

    /// Stop watching the repository `id` (removed): its directories' OS watches go unless another
    /// repository watches them too.
    pub fn unwatch(&self, id: &str) {
        let Some(w) = self.repos.lock().expect("watch table lock").remove(id) else {
            return;
        };
        for d in w.dirs.iter().chain(&w.trees) {
            self.release(d);
        }
    }

    fn release(&self, dir: &Path) {
        let mut counts = self.counts.lock().expect("watch counts lock");
        let Some(n) = counts.get_mut(dir) else { return };
        *n -= 1;
        if *n == 0 {
            counts.remove(dir);
            if let Some(deb) = self.debouncer.lock().expect("debouncer lock").as_mut() {
                // A deleted directory's watch is gone already: nothing to report.
                deb.unwatch(dir);
            }
        }
    }

    /// Watch `dir` for one more repository (`watched`: how many it watches so far, for the
    /// message when the OS limit is reached).
    fn add(&self, dir: &Path, recursive: bool, watched: usize) -> Result<()> {
        let mut counts = self.counts.lock().expect("watch counts lock");
        if let Some(n) = counts.get_mut(dir) {
            *n += 1;
            return Ok(());
        }
        let mut deb = self.debouncer.lock().expect("debouncer lock");
        if deb.is_none() {
            *deb = Some(self.start()?);
        }
        // Test hook: an OS limit of this many watches, reached as the kernel's would be.
        let limited = patina_core::hooks::test_hook("PATINA_TEST_WATCH_LIMIT")
            .and_then(|n| n.parse::<usize>().ok())
            .is_some_and(|n| counts.len() >= n);
        let watched_now = if limited {
            Err(WatchError::Limit)
        } else {
            deb.as_mut().expect("started").watch(dir, recursive)
        };
        match watched_now {
            Ok(()) => {
                counts.insert(dir.to_path_buf(), 1);
                Ok(())
            }
            Err(WatchError::Limit) => Err(anyhow!(
                "the OS limit on file watches is reached ({watched} directories watched for this \
                 repository, {} in all); Patina falls back to reconciling every 30 s. Raise the \
                 limit with `sudo sysctl fs.inotify.max_user_watches=524288` (persist it in \
                 /etc/sysctl.d/)",
                counts.len()
            )),
            Err(WatchError::Other(e)) => Err(anyhow!("cannot watch {}: {e}", dir.display())),
        }
    }

    fn start(&self) -> Result<Backend> {
        let table = Arc::downgrade(&self.repos);
        let on_change = self.on_change.clone();
        let handler = move |batch: FsBatch| {
            let Some(table) = table.upgrade() else { return };
            route(&table, &on_change, &batch);
        };
        Ok(Backend::start(handler)?)
    }
}

/// Hand each repository the events of the directories it watches (outside the table's lock:
/// recording may ask git what a HEAD move changed).
fn route(table: &Mutex<HashMap<String, Watched>>, on_change: &OnChange, batch: &FsBatch) {
    if batch.rescan {
        tracing::warn!(
            "file events were lost (the kernel's queue overflowed); reconciling every repository"
        );
    }
    let targets: Vec<(Arc<Repo>, Option<git::GitDirs>, Vec<&Path>)> = {
        let table = table.lock().expect("watch table lock");
        table
            .values()
            .filter_map(|w| {
                let repo = w.repo.upgrade()?;
                let paths: Vec<&Path> = batch
                    .paths
                    .iter()
                    .filter(|p| w.concerns(p))
                    .map(PathBuf::as_path)
                    .collect();
                (batch.rescan || !paths.is_empty()).then(|| (repo, w.git.clone(), paths))
            })
            .collect()
    };
    for (repo, git_dirs, paths) in targets {
        if record(&repo, git_dirs.as_ref(), &paths, batch.rescan) {
            on_change(&repo);
        }
    }
}

/// Turn a burst of events into dirty entries (`full`: events were lost, walk everything); true
/// when anything was recorded.
fn record(repo: &Repo, git_dirs: Option<&git::GitDirs>, events: &[&Path], full: bool) -> bool {
    let mut paths = Vec::new();
    let mut full = full;
    let mut git_moved = false;
    for p in events {
        if let Some(d) = git_dirs
            && (p.starts_with(&d.git_dir) || p.starts_with(&d.common_dir))
        {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            git_moved |= name == "HEAD"
                || name == "packed-refs"
                || p.strip_prefix(&d.common_dir)
                    .is_ok_and(|r| r.starts_with("refs"));
            continue;
        }
        let Ok(rel) = p.strip_prefix(repo.root()) else {
            continue;
        };
        if rel.as_os_str().is_empty() || rel.starts_with(".git") {
            continue;
        }
        if p.is_dir() {
            // A new or renamed directory: only a walk knows its files (and it gets watched).
            full = true;
            continue;
        }
        if let Some(rel) = rel.to_str() {
            paths.push(rel.replace(std::path::MAIN_SEPARATOR, "/"));
        }
    }
    if git_moved {
        let indexed = repo.record().indexed_commit;
        match (indexed, git::head(repo.root())) {
            (Some(from), Some(to)) if from != to => {
                match git::changed_paths(repo.root(), &from, &to) {
                    Some(changed) => {
                        tracing::info!(repo = %repo.id(), from = %&from[..8], to = %&to[..8], files = changed.len(), "HEAD moved");
                        paths.extend(changed);
                    }
                    None => full = true,
                }
            }
            (None, Some(_)) => full = true,
            _ => {}
        }
    }
    if !full && paths.is_empty() && !git_moved {
        return false;
    }
    repo.mark_dirty(full, paths);
    true
}

/// The backend outside Linux: `notify`'s recommended watcher behind its debouncer (reads are
/// reported there as access events and dropped here).
#[cfg(not(target_os = "linux"))]
mod portable {
    use std::path::Path;

    use notify::{RecommendedWatcher, RecursiveMode};
    use notify_debouncer_full::{DebounceEventResult, Debouncer, NoCache, new_debouncer_opt};

    use super::{DEBOUNCE, FsBatch};

    pub(crate) enum WatchError {
        Limit,
        Other(notify::Error),
    }

    pub(crate) struct Backend(Debouncer<RecommendedWatcher, NoCache>);

    impl Backend {
        pub fn start(handler: impl Fn(FsBatch) + Send + 'static) -> notify::Result<Backend> {
            let handler = move |res: DebounceEventResult| {
                let mut batch = FsBatch::default();
                match res {
                    Ok(events) => {
                        for ev in events {
                            batch.rescan |= ev.need_rescan();
                            if !matches!(ev.kind, notify::EventKind::Access(_)) {
                                batch.paths.extend(ev.paths.iter().cloned());
                            }
                        }
                    }
                    Err(errors) => {
                        tracing::warn!("watch errors: {errors:?}; reconciling");
                        batch.rescan = true;
                    }
                }
                if batch.rescan || !batch.paths.is_empty() {
                    handler(batch);
                }
            };
            Ok(Backend(
                new_debouncer_opt::<_, RecommendedWatcher, NoCache>(
                    DEBOUNCE,
                    None,
                    handler,
                    NoCache,
                    notify::Config::default(),
                )?,
            ))
        }

        pub fn watch(&mut self, dir: &Path, recursive: bool) -> Result<(), WatchError> {
            let mode = if recursive {
                RecursiveMode::Recursive
            } else {
                RecursiveMode::NonRecursive
            };
            self.0.watch(dir, mode).map_err(|e| match e.kind {
                notify::ErrorKind::MaxFilesWatch => WatchError::Limit,
                _ => WatchError::Other(e),
            })
        }

        pub fn unwatch(&mut self, dir: &Path) {
            let _ = self.0.unwatch(dir);
        }
    }
}
