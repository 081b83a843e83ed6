//! Keeping indices live. Each repository gets a debounced watcher on every directory its ignore
//! rules let through (so `npm install` into an ignored `node_modules` costs nothing) and on its
//! git directories. Events become entries in the repository's dirty set; a HEAD or ref move
//! (checkout, commit, pull, rebase, stash) adds the paths `git diff` names between the indexed
//! commit and the new HEAD. The registry then schedules an index round, so bursts coalesce.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, anyhow};
use notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, NoCache, new_debouncer_opt};

use crate::git;
use crate::repo::Repo;
use patina_index::walk;

/// Events closer together than this are handled as one burst.
pub(crate) const DEBOUNCE: Duration = Duration::from_millis(100);

/// Called (on the watcher's thread) after the dirty set of a repository grew.
pub(crate) type OnChange = Arc<dyn Fn(&Arc<Repo>) + Send + Sync>;

pub(crate) struct RepoWatch {
    debouncer: Debouncer<RecommendedWatcher, NoCache>,
    watched: HashSet<PathBuf>,
}

impl RepoWatch {
    pub fn start(repo: &Arc<Repo>, on_change: OnChange) -> Result<RepoWatch> {
        let git_dirs = git::dirs(repo.root());
        let weak = Arc::downgrade(repo);
        let dirs2 = git_dirs.clone();
        let handler = move |res: DebounceEventResult| {
            let Some(repo) = weak.upgrade() else { return };
            if record(&repo, dirs2.as_ref(), res) {
                on_change(&repo);
            }
        };
        let debouncer = new_debouncer_opt::<_, RecommendedWatcher, NoCache>(
            DEBOUNCE,
            None,
            handler,
            NoCache,
            notify::Config::default(),
        )?;
        let mut w = RepoWatch {
            debouncer,
            watched: HashSet::new(),
        };
        if let Some(d) = &git_dirs {
            // HEAD and packed-refs live directly in the git dirs; loose refs below `refs/`.
            w.add(&d.git_dir, RecursiveMode::NonRecursive)?;
            if d.common_dir != d.git_dir {
                w.add(&d.common_dir, RecursiveMode::NonRecursive)?;
            }
            let refs = d.common_dir.join("refs");
            if refs.is_dir() {
                w.add(&refs, RecursiveMode::Recursive)?;
            }
        }
        w.refresh(repo)?;
        Ok(w)
    }

    /// Watch directories that appeared since the last call (after a full walk).
    pub fn refresh(&mut self, repo: &Repo) -> Result<()> {
        self.watched.retain(|d| d.exists());
        for dir in walk::dirs(repo.root()) {
            if !self.watched.contains(&dir) {
                self.add(&dir, RecursiveMode::NonRecursive)?;
            }
        }
        Ok(())
    }

    fn add(&mut self, dir: &Path, mode: RecursiveMode) -> Result<()> {
        match self.debouncer.watch(dir, mode) {
            Ok(()) => {
                self.watched.insert(dir.to_path_buf());
                Ok(())
            }
            Err(e) if matches!(e.kind, notify::ErrorKind::MaxFilesWatch) => Err(anyhow!(
                "the OS limit on file watches is reached ({} directories watched here); Patina falls \
                 back to reconciling every 30 s. Raise the limit with \
                 `sudo sysctl fs.inotify.max_user_watches=524288` (persist it in /etc/sysctl.d/)",
                self.watched.len()
            )),
            Err(e) => Err(anyhow!("cannot watch {}: {e}", dir.display())),
        }
    }
}

/// Turn a burst of events into dirty entries; true when anything was recorded.
fn record(repo: &Repo, git_dirs: Option<&git::GitDirs>, res: DebounceEventResult) -> bool {
    let events = match res {
        Ok(events) => events,
        Err(errors) => {
            tracing::warn!(repo = %repo.id(), "watch errors: {errors:?}; reconciling");
            repo.mark_dirty(true, []);
            return true;
        }
    };
    let mut paths = Vec::new();
    let mut full = false;
    let mut git_moved = false;
    for ev in &events {
        if ev.need_rescan() {
            full = true;
        }
        // Reads (ours included: indexing opens every file it indexes) change nothing.
        if matches!(ev.kind, notify::EventKind::Access(_)) {
            continue;
        }
        for p in &ev.paths {
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
