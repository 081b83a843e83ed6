//! The indexer: runs the repositories' index rounds in the background, one job at a time (they are
//! CPU-bound and the machine is shared with queries), keeps every indexed repository watched, and
//! removes and repairs repositories. Requests reach it through
//! [`crate::state::schedule::Scheduler`].

use std::sync::{Arc, Mutex, Weak};

use anyhow::{Context, Result, anyhow};
use patina_index::store::RepoRecord;
use patina_index::{Progress, Repaired, Scope};
use tokio::sync::{Semaphore, watch};

use crate::services::embedding::Semantic;
use crate::state::config::Config;
use crate::state::estimate::Estimate;
use crate::state::repo::Repo;
use crate::state::repos::Repos;
use crate::state::schedule::{Change, Scheduler};
use crate::workers::round;
use crate::workers::watcher::Watcher;

/// A repository `add` registered (now or before), the progress of its round, and what to say
/// first (the cost of indexing a large repository).
pub(crate) struct Added {
    pub repo: Arc<Repo>,
    pub progress: watch::Receiver<Progress>,
    pub notice: Option<String>,
}

pub(crate) struct Indexer {
    me: Weak<Indexer>,
    repos: Arc<Repos>,
    config: Arc<Config>,
    semantic: Arc<Semantic>,
    /// Index jobs run one at a time: they are CPU-bound and the machine is shared with queries.
    jobs: Arc<Semaphore>,
    /// Every repository's watches, one OS watcher; calls are serialised by the mutex.
    watcher: Mutex<Option<Arc<Watcher>>>,
    runtime: tokio::runtime::Handle,
}

impl Scheduler for Indexer {
    fn schedule(&self, repo: &Arc<Repo>, change: Change) -> watch::Receiver<Progress> {
        Indexer::schedule(self, repo, change)
    }
}

impl Indexer {
    pub fn new(repos: Arc<Repos>, config: Arc<Config>, semantic: Arc<Semantic>) -> Arc<Indexer> {
        Arc::new_cyclic(|me| Indexer {
            me: me.clone(),
            repos,
            config,
            semantic,
            jobs: Arc::new(Semaphore::new(1)),
            watcher: Mutex::new(None),
            runtime: tokio::runtime::Handle::current(),
        })
    }

    fn this(&self) -> Arc<Indexer> {
        self.me
            .upgrade()
            .expect("the indexer is alive while called")
    }

    pub fn repos(&self) -> &Arc<Repos> {
        &self.repos
    }

    /// Register the repository containing `path` (idempotent) and start indexing it. Blocking
    /// (a durable registry write, opening the lexical index): call it on the blocking pool.
    /// Without `force`, a directory that is unlikely to be meant is refused.
    /// A repository registered now that is large gets what indexing it will cost
    /// ([`Estimate`]), said before it proceeds.
    pub fn add(&self, path: &str, force: bool) -> Result<Added> {
        let semantic = self.semantic.clone();
        let (repo, new) = self.repos.register(path, force, |r| semantic.attach(r))?;
        let estimate = if new {
            let files = patina_index::walk::count_files(repo.root(), usize::MAX) as u64;
            Estimate::for_large(files).inspect(|e| {
                tracing::info!(repo = %repo.id(), files = e.files, chunks = e.chunks,
                    lexical_s = e.lexical.as_secs(), "a large repository: indexing proceeds");
            })
        } else {
            None
        };
        let progress = self.start_job(&repo);
        Ok(Added {
            notice: estimate.map(|e| e.describe(self.semantic.is_on())),
            repo,
            progress,
        })
    }

    /// Start an index job for `repo` unless one is already running; either way, return its progress.
    /// The first job of a process, and any explicit `add`, reconciles the whole tree.
    pub fn start_job(&self, repo: &Arc<Repo>) -> watch::Receiver<Progress> {
        self.schedule(repo, Change::Full)
    }

    /// Record a change and make sure a job will index it: a running job picks it up before it
    /// finishes, otherwise a new job starts. Callable from any thread (the watcher's included).
    pub fn schedule(&self, repo: &Arc<Repo>, change: Change) -> watch::Receiver<Progress> {
        // Ordered against a job deciding it is done (see `Repo::next_round`).
        let (rx, tx) = repo.schedule(matches!(change, Change::Full));
        let Some(tx) = tx else {
            return rx;
        };
        let (this, repo) = (self.this(), repo.clone());
        self.runtime
            .spawn(async move { this.run_jobs(repo, tx).await });
        rx
    }

    /// Index rounds until nothing is dirty, then report the outcome.
    async fn run_jobs(self: Arc<Self>, repo: Arc<Repo>, tx: watch::Sender<Progress>) {
        let Ok(_permit) = self.jobs.clone().acquire_owned().await else {
            return;
        };
        let mut failure = None;
        loop {
            if repo.is_cancelled() {
                failure = Some("cancelled".to_string());
            }
            // Decided under the job lock, so no change is lost.
            let Some(scope) = repo.next_round(&tx, failure.as_deref()) else {
                // An index job frees its batches, tantivy's writer heap and the walk's lists.
                crate::process::memory::release_free_heap_as_it_settles();
                return;
            };
            let (this, repo2, tx2) = (self.clone(), repo.clone(), tx.clone());
            let cfg = self.config.index.clone();
            let full = matches!(scope, Scope::Full);
            let scope_desc = format!("{scope:?}");
            let res = tokio::task::spawn_blocking(move || {
                let r =
                    round::index_repo(&repo2, &cfg, &this.config.pii, &this.semantic, scope, &tx2);
                // After bulk growth the tables are laid out afresh, as a restart would read them,
                // their small strings side by side in the region apart (`crate::process::apart`) instead
                // of in the holes the round's freed buffers left: those can then go back to the
                // system.
                if !repo2.is_cancelled()
                    && crate::process::memory::apart(|| repo2.index().repack_if_grown())
                {
                    tracing::debug!(repo = %repo2.id(), "chunk and symbol tables laid out afresh");
                }
                if let Err(e) = &r {
                    repo2.update_record(|rec| rec.last_error = Some(format!("{e:#}")));
                }
                // Persist the summary whatever happened, so status survives a restart.
                if !repo2.is_cancelled() {
                    let _ = this.repos.store().put_repo(&repo2.record());
                }
                let _ = this.repos.store().flush();
                if full && r.is_ok() {
                    this.watch_repo(&repo2);
                }
                r
            })
            .await;
            match res
                .map_err(|e| anyhow!("index job panicked: {e}"))
                .and_then(|r| r)
            {
                Ok(()) => {
                    tracing::debug!(repo = %repo.id(), scope = %scope_desc, "index round done")
                }
                Err(e) => {
                    tracing::warn!(repo = %repo.id(), "index job failed: {e:#}");
                    failure = Some(format!("{e:#}"));
                }
            }
        }
    }

    /// Start (or refresh, after a full walk found new directories) the watcher of `repo`; when the
    /// OS refuses more watches, fall back to periodic reconciliation and say how to fix it.
    fn watch_repo(&self, repo: &Arc<Repo>) {
        let mut watcher = self.watcher.lock().expect("watcher lock");
        let w = watcher.get_or_insert_with(|| {
            let weak = self.me.clone();
            Arc::new(Watcher::new(Arc::new(move |repo: &Arc<Repo>| {
                if let Some(indexer) = weak.upgrade() {
                    indexer.schedule(repo, Change::None);
                }
            })))
        });
        let result = w.watch(repo);
        repo.set_watch_error(result.err().map(|e| format!("{e:#}")));
    }

    /// Reconcile every registered repository (start-up: edits made while the daemon was down). A
    /// repository whose directory vanished is reported, not dropped.
    pub fn catch_up(&self) {
        // Test hook: come up without the start-up round, so damage made while the daemon was down
        // stays for `patina repair` to find and mend, as damage done while it runs would.
        if patina_core::hooks::test_hook("PATINA_TEST_NO_CATCH_UP").is_some() {
            tracing::warn!("PATINA_TEST_NO_CATCH_UP: no start-up round");
            return;
        }
        for repo in self.repos.all() {
            if repo.root().is_dir() {
                self.start_job(&repo);
            } else {
                tracing::warn!(repo = %repo.id(), root = %repo.root().display(), "repository directory is missing");
                let why = format!(
                    "{} no longer exists; `patina rm {}` unregisters it",
                    repo.root().display(),
                    repo.id()
                );
                repo.update_record(|rec| rec.last_error = Some(why));
            }
        }
    }

    /// Unregister a repository and delete its index data.
    pub async fn remove(&self, key: &str) -> Result<RepoRecord> {
        let repo = self.repos.resolve(key)?;
        repo.cancel();
        // Wait for a running job to notice.
        if let Some(mut rx) = repo.running_job() {
            let _ = rx.wait_for(Progress::finished).await;
        }
        self.repos.unregister(&repo);
        if let Some(w) = self.watcher.lock().expect("watcher lock").as_ref() {
            w.unwatch(repo.id());
        }
        let dir = self.repos.repo_dir(repo.id());
        let rec = repo.record();
        // Dropping the trees, fsync and deleting the index files: on the blocking pool.
        let store = self.repos.store().clone();
        tokio::task::spawn_blocking(move || {
            // sled keeps a small record for every page of the dropped trees: kept together
            // rather than one to a page in the holes the repository's memory leaves.
            crate::process::memory::apart(|| store.remove_repo(repo.id()))?;
            let holders = Arc::strong_count(&repo) - 1;
            if holders > 0 {
                tracing::warn!(repo = %repo.id(), holders, "removed repository still referenced: its memory is freed when they finish");
            }
            drop(repo);
            if dir.exists() {
                std::fs::remove_dir_all(&dir)
                    .with_context(|| format!("deleting {}", dir.display()))?;
            }
            anyhow::Ok(())
        })
        .await
        .map_err(|e| anyhow!("removing the repository failed: {e}"))??;
        // Its chunk, symbol and graph tables and vectors are freed (sled's nodes of its trees as
        // the store moves on): give the pages back as they come.
        crate::process::memory::release_free_heap_as_it_settles();
        #[cfg(target_os = "linux")]
        tracing::info!(repo = %rec.id, apart_kib = crate::process::apart::carved() >> 10, "removed");
        #[cfg(not(target_os = "linux"))]
        tracing::info!(repo = %rec.id, "removed");
        Ok(rec)
    }

    /// Audit `key`'s repository (every repository when `key` is empty) against its own lists and
    /// the disk; unless `check_only`, run a full round where anything differs (walking rounds
    /// reconcile) and audit again. Returns, per repository, what was found and what remains.
    pub async fn repair(
        &self,
        key: &str,
        check_only: bool,
    ) -> Result<Vec<(Arc<Repo>, Repaired, Option<Repaired>)>> {
        let repos = if key.is_empty() {
            self.repos.all()
        } else {
            vec![self.repos.resolve(key)?]
        };
        let mut out = Vec::new();
        for repo in repos {
            let found = self.audit(&repo).await?;
            let remaining = if check_only || found.is_clean() {
                None
            } else {
                let mut rx = self.schedule(&repo, Change::Full);
                let _ = rx.wait_for(Progress::finished).await;
                Some(self.audit(&repo).await?)
            };
            out.push((repo, found, remaining));
        }
        Ok(out)
    }

    /// [`patina_index::RepoIndex::audit`] while no index round runs (holding the job permit).
    async fn audit(&self, repo: &Arc<Repo>) -> Result<Repaired> {
        let _permit = self.jobs.clone().acquire_owned().await?;
        let repo = repo.clone();
        tokio::task::spawn_blocking(move || repo.index().audit())
            .await
            .map_err(|e| anyhow!("audit panicked: {e}"))?
    }

    /// Stop running jobs and flush everything (shutdown).
    pub async fn shutdown(&self) {
        self.semantic.stop();
        for repo in self.repos.all() {
            repo.cancel();
        }
        for repo in self.repos.all() {
            if let Some(mut rx) = repo.running_job() {
                // A round notices within a file; its uncommitted work is redone at the next start.
                let _ = tokio::time::timeout(
                    std::time::Duration::from_secs(1),
                    rx.wait_for(Progress::finished),
                )
                .await;
            }
        }
        for repo in self.repos.all() {
            self.semantic.save(&repo);
        }
        if let Err(e) = self.repos.store().flush() {
            tracing::error!("flushing the store: {e:#}");
        }
    }
}
