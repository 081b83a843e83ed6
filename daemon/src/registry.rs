//! The set of registered repositories: resolving user-supplied names to repositories, adding and
//! removing them, and running their index jobs (one at a time, in the background).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use anyhow::{Context, Result, anyhow, bail};
use tokio::sync::{Semaphore, watch};

use patina_index::store::{RepoRecord, Store};
use patina_index::{Progress, Repaired, Scope};

use crate::config::Config;
use crate::index;
use crate::repo::Repo;
use crate::semantic::Semantic;

pub(crate) use patina_core::UserError;

pub(crate) struct Registry {
    store: Store,
    data_dir: PathBuf,
    pub config: Config,
    pub semantic: Arc<Semantic>,
    repos: RwLock<BTreeMap<String, Arc<Repo>>>,
    /// Index jobs run one at a time: they are CPU-bound and the machine is shared with queries.
    jobs: Arc<Semaphore>,
    /// Every repository's watches, one OS watcher; calls are serialised by the mutex.
    watcher: Mutex<Option<Arc<crate::watch::Watcher>>>,
    runtime: tokio::runtime::Handle,
}

/// What changed in a repository.
pub(crate) enum Change {
    /// Unknown: reconcile the whole tree (mtime + size, then content hash).
    Full,
    /// Already recorded in the repository's dirty set (by the watcher).
    None,
}

/// Repositories without a working watcher are reconciled this often, and idle graphs dropped.
const POLL_INTERVAL: std::time::Duration = std::time::Duration::from_secs(30);
/// A repository's dependency graph or commit history not used in this long is dropped from
/// memory (rebuilt from the store on next use: about the time of one round's graph update, and
/// of reading `history.bin`).
const IDLE_RELEASE: std::time::Duration = std::time::Duration::from_secs(300);

/// [`IDLE_RELEASE`], or the seconds `PATINA_TEST_IDLE_RELEASE_SECS` gives (the tests' way to see
/// a release without waiting five minutes; the poller then ticks at least that often).
pub(crate) fn idle_release() -> std::time::Duration {
    static IDLE: std::sync::OnceLock<std::time::Duration> = std::sync::OnceLock::new();
    *IDLE.get_or_init(|| {
        std::env::var("PATINA_TEST_IDLE_RELEASE_SECS")
            .ok()
            .and_then(|s| s.parse().ok())
            .map(std::time::Duration::from_secs)
            .unwrap_or(IDLE_RELEASE)
    })
}

impl Registry {
    pub fn open(
        store: Store,
        data_dir: PathBuf,
        config: Config,
        semantic: Arc<Semantic>,
    ) -> Result<Registry> {
        let mut repos = BTreeMap::new();
        for rec in store.repos()? {
            let id = rec.id.clone();
            let trees = store.repo_trees(&id)?;
            match Repo::open(rec, trees, &data_dir.join("repos").join(&id)) {
                Ok(repo) => {
                    repo.bound_memory(&config.daemon.budget());
                    if !config.history.by_default {
                        // Read back by the first question to the history, not by every start.
                        repo.messages().leave_in_cache();
                    }
                    if let Err(e) = semantic.attach(&repo) {
                        tracing::error!(repo = %id, "cannot load vectors: {e:#}");
                    }
                    repos.insert(id, Arc::new(repo));
                }
                Err(e) => tracing::error!(repo = %id, "cannot open repository index: {e:#}"),
            }
        }
        tracing::info!(repos = repos.len(), "registry loaded");
        Ok(Registry {
            store,
            data_dir,
            config,
            semantic,
            repos: RwLock::new(repos),
            jobs: Arc::new(Semaphore::new(1)),
            watcher: Mutex::new(None),
            runtime: tokio::runtime::Handle::current(),
        })
    }

    pub fn all(&self) -> Vec<Arc<Repo>> {
        self.repos
            .read()
            .expect("repos lock")
            .values()
            .cloned()
            .collect()
    }

    /// Resolve an id, a name or a path (inside the repository) to a registered repository.
    pub fn resolve(&self, key: &str) -> Result<Arc<Repo>> {
        let repos = self.repos.read().expect("repos lock");
        if let Some(r) = repos.get(key) {
            return Ok(r.clone());
        }
        let by_name: Vec<_> = repos.values().filter(|r| r.record().name == key).collect();
        match by_name.len() {
            1 => return Ok(by_name[0].clone()),
            n if n > 1 => {
                return Err(UserError::Invalid(format!(
                    "repository name '{key}' is ambiguous ({n} repositories); use its id or path"
                ))
                .into());
            }
            _ => {}
        }
        if let Ok(path) = std::fs::canonicalize(key)
            && let Some(r) = repos
                .values()
                .filter(|r| path.starts_with(r.root()))
                .max_by_key(|r| r.root().as_os_str().len())
        {
            return Ok(r.clone());
        }
        Err(UserError::NotFound(format!(
            "no registered repository matches '{key}' (see `patina repos`)"
        ))
        .into())
    }

    /// Register the repository containing `path` (idempotent) and start indexing it. Blocking
    /// (a durable registry write, opening the lexical index): call it on the blocking pool.
    /// Without `force`, a directory that is unlikely to be meant is refused ([`refusal`]).
    pub fn add(
        self: &Arc<Self>,
        path: &str,
        force: bool,
    ) -> Result<(Arc<Repo>, watch::Receiver<Progress>)> {
        if path.is_empty() {
            return Err(UserError::Invalid("no path given".into()).into());
        }
        let root = repo_root(Path::new(path))?;
        let id = repo_id(&root);
        let existing = self.repos.read().expect("repos lock").get(&id).cloned();
        let repo = match existing {
            Some(r) => r,
            None => {
                if !force && let Some(why) = refusal(&root) {
                    bail!(UserError::Invalid(format!(
                        "not registering {}: {why}; pass --force to index it anyway",
                        root.display()
                    )));
                }
                let name = root
                    .file_name()
                    .map_or_else(|| "/".into(), |n| n.to_string_lossy().into_owned());
                let rec = RepoRecord {
                    id: id.clone(),
                    name,
                    root: root.to_string_lossy().into_owned(),
                    added_unix_ms: crate::now_unix_ms(),
                    last_indexed_unix_ms: 0,
                    last_index_ms: 0,
                    files: 0,
                    chunks: 0,
                    skipped: Default::default(),
                    skipped_examples: Default::default(),
                    languages: Default::default(),
                    last_error: None,
                    indexed_commit: None,
                    chunker: 0,
                    graph: 0,
                    scrub: String::new(),
                };
                self.store.put_repo(&rec)?;
                self.store.flush()?;
                let trees = self.store.repo_trees(&id)?;
                let repo = Arc::new(Repo::open(rec, trees, &self.repo_dir(&id))?);
                repo.bound_memory(&self.config.daemon.budget());
                self.semantic.attach(&repo)?;
                self.repos
                    .write()
                    .expect("repos lock")
                    .insert(id.clone(), repo.clone());
                crate::qcache::bump_global();
                tracing::info!(repo = %id, root = %root.display(), "registered");
                repo
            }
        };
        let rx = self.start_job(&repo);
        Ok((repo, rx))
    }

    /// Start an index job for `repo` unless one is already running; either way, return its progress.
    /// The first job of a process, and any explicit `add`, reconciles the whole tree.
    pub fn start_job(self: &Arc<Self>, repo: &Arc<Repo>) -> watch::Receiver<Progress> {
        self.schedule(repo, Change::Full)
    }

    /// Record a change and make sure a job will index it: a running job picks it up before it
    /// finishes, otherwise a new job starts. Callable from any thread (the watcher's included).
    pub fn schedule(
        self: &Arc<Self>,
        repo: &Arc<Repo>,
        change: Change,
    ) -> watch::Receiver<Progress> {
        // Ordered against a job deciding it is done (see `Repo::next_round`).
        let (rx, tx) = repo.schedule(matches!(change, Change::Full));
        let Some(tx) = tx else {
            return rx;
        };
        let (this, repo) = (self.clone(), repo.clone());
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
                crate::memory::release_free_heap_as_it_settles();
                return;
            };
            let (this, repo2, tx2) = (self.clone(), repo.clone(), tx.clone());
            let cfg = self.config.index.clone();
            let full = matches!(scope, Scope::Full);
            let scope_desc = format!("{scope:?}");
            let res = tokio::task::spawn_blocking(move || {
                let r =
                    index::index_repo(&repo2, &cfg, &this.config.pii, &this.semantic, scope, &tx2);
                // After bulk growth the tables are laid out afresh, as a restart would read them,
                // their small strings side by side in the region apart (`crate::apart`) instead
                // of in the holes the round's freed buffers left: those can then go back to the
                // system.
                if !repo2.is_cancelled() && crate::memory::apart(|| repo2.index().repack_if_grown())
                {
                    tracing::debug!(repo = %repo2.id(), "chunk and symbol tables laid out afresh");
                }
                if let Err(e) = &r {
                    repo2.update_record(|rec| rec.last_error = Some(format!("{e:#}")));
                }
                // Persist the summary whatever happened, so status survives a restart.
                if !repo2.is_cancelled() {
                    let _ = this.store.put_repo(&repo2.record());
                }
                let _ = this.store.flush();
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
    fn watch_repo(self: &Arc<Self>, repo: &Arc<Repo>) {
        let mut watcher = self.watcher.lock().expect("watcher lock");
        let w = watcher.get_or_insert_with(|| {
            let weak = Arc::downgrade(self);
            Arc::new(crate::watch::Watcher::new(Arc::new(
                move |repo: &Arc<Repo>| {
                    if let Some(reg) = weak.upgrade() {
                        reg.schedule(repo, Change::None);
                    }
                },
            )))
        });
        let result = w.watch(repo);
        repo.set_watch_error(result.err().map(|e| format!("{e:#}")));
    }

    /// Reconcile every registered repository (start-up: edits made while the daemon was down). A
    /// repository whose directory vanished is reported, not dropped.
    pub fn catch_up(self: &Arc<Self>) {
        for repo in self.all() {
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

    /// Repositories whose watcher failed are reconciled on a timer instead; on the same timer
    /// dependency graphs and commit histories idle for [`idle_release`] leave memory.
    pub fn spawn_poller(self: &Arc<Self>) {
        let weak = Arc::downgrade(self);
        self.runtime.spawn(async move {
            let mut tick = tokio::time::interval(
                POLL_INTERVAL.min(idle_release().max(std::time::Duration::from_secs(1))),
            );
            loop {
                tick.tick().await;
                let Some(reg) = weak.upgrade() else { return };
                for repo in reg.all() {
                    if repo.root().is_dir() && repo.watch_error().is_some() {
                        reg.schedule(&repo, Change::Full);
                    }
                }
                let repos = reg.all();
                let sem = reg.semantic.clone();
                drop(reg);
                let _ = tokio::task::spawn_blocking(move || {
                    let dropped = repos
                        .iter()
                        .map(|r| {
                            u32::from(r.index().release_idle_graph(idle_release()))
                                + u32::from(
                                    // Not while its commit messages wait to be embedded.
                                    (!sem.is_on() || crate::semantic::message_backlog(r) == 0)
                                        && crate::history::release_idle(r),
                                )
                        })
                        .sum::<u32>();
                    if dropped > 0 {
                        tracing::debug!(tables = dropped, "idle graphs and histories dropped");
                        crate::memory::release_free_heap();
                    }
                })
                .await;
            }
        });
    }

    /// Unregister a repository and delete its index data.
    pub async fn remove(&self, key: &str) -> Result<RepoRecord> {
        let repo = self.resolve(key)?;
        repo.cancel();
        // Wait for a running job to notice.
        if let Some(mut rx) = repo.running_job() {
            let _ = rx.wait_for(Progress::finished).await;
        }
        self.repos.write().expect("repos lock").remove(repo.id());
        crate::qcache::bump_global();
        if let Some(w) = self.watcher.lock().expect("watcher lock").as_ref() {
            w.unwatch(repo.id());
        }
        let dir = self.repo_dir(repo.id());
        let rec = repo.record();
        // Dropping the trees, fsync and deleting the index files: on the blocking pool.
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || {
            // sled keeps a small record for every page of the dropped trees: kept together
            // rather than one to a page in the holes the repository's memory leaves.
            crate::memory::apart(|| store.remove_repo(repo.id()))?;
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
        crate::memory::release_free_heap_as_it_settles();
        #[cfg(target_os = "linux")]
        tracing::info!(repo = %rec.id, apart_kib = crate::apart::carved() >> 10, "removed");
        #[cfg(not(target_os = "linux"))]
        tracing::info!(repo = %rec.id, "removed");
        Ok(rec)
    }

    /// Audit `key`'s repository (every repository when `key` is empty) against its own lists and
    /// the disk; unless `check_only`, run a full round where anything differs (walking rounds
    /// reconcile) and audit again. Returns, per repository, what was found and what remains.
    pub async fn repair(
        self: &Arc<Self>,
        key: &str,
        check_only: bool,
    ) -> Result<Vec<(Arc<Repo>, Repaired, Option<Repaired>)>> {
        let repos = if key.is_empty() {
            self.all()
        } else {
            vec![self.resolve(key)?]
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
        for repo in self.all() {
            repo.cancel();
        }
        for repo in self.all() {
            if let Some(mut rx) = repo.running_job() {
                // A round notices within a file; its uncommitted work is redone at the next start.
                let _ = tokio::time::timeout(
                    std::time::Duration::from_secs(1),
                    rx.wait_for(Progress::finished),
                )
                .await;
            }
        }
        for repo in self.all() {
            self.semantic.save(&repo);
        }
        if let Err(e) = self.store.flush() {
            tracing::error!("flushing the store: {e:#}");
        }
    }

    fn repo_dir(&self, id: &str) -> PathBuf {
        self.data_dir.join("repos").join(id)
    }
}

/// The root of the repository containing `path`: the nearest ancestor holding `.git` (a directory,
/// or a file for worktrees and submodules), else `path` itself when it is a directory.
/// A registration needs `--force` above this many files.
pub const MAX_FILES_UNFORCED: usize = 50_000;

/// Why registering `root` is probably a mistake, if it is: it is not a git repository (Patina
/// would index, watch and keep everything below it), it is the home directory, `/` or the
/// temporary directory, or it holds more than [`MAX_FILES_UNFORCED`] files.
fn refusal(root: &Path) -> Option<String> {
    let same = |p: &Path| std::fs::canonicalize(p).is_ok_and(|p| p == root);
    if root.parent().is_none() {
        return Some("it is the root of the file system".into());
    }
    if std::env::var_os("HOME").is_some_and(|h| same(Path::new(&h))) {
        return Some("it is your home directory".into());
    }
    if same(&std::env::temp_dir()) || same(Path::new("/tmp")) || same(Path::new("/var/tmp")) {
        return Some("it is the temporary directory, whose files come and go".into());
    }
    if !root.join(".git").exists() {
        return Some(
            "it is not inside a git repository, so every file below it would be indexed and watched"
                .into(),
        );
    }
    let n = patina_index::walk::count_files(root, MAX_FILES_UNFORCED + 1);
    (n > MAX_FILES_UNFORCED).then(|| {
        format!("it holds more than {MAX_FILES_UNFORCED} files (not counting ignored ones)")
    })
}

fn repo_root(path: &Path) -> Result<PathBuf> {
    let abs = std::fs::canonicalize(path)
        .map_err(|e| UserError::Invalid(format!("cannot use '{}': {e}", path.display())))?;
    if !abs.is_dir() {
        bail!(UserError::Invalid(format!(
            "'{}' is not a directory",
            path.display()
        )));
    }
    if let Some(fs) = pseudo_filesystem(&abs) {
        bail!(UserError::Invalid(format!(
            "'{}' is on {fs}, a kernel pseudo file system, not source code; refusing to index it",
            abs.display()
        )));
    }
    let mut dir = Some(abs.as_path());
    while let Some(d) = dir {
        if d.join(".git").exists() {
            return Ok(d.to_path_buf());
        }
        dir = d.parent();
    }
    Ok(abs)
}

/// The name of the kernel pseudo file system `path` is on (procfs, sysfs, …), if it is on one:
/// their files report sizes that are not what a read returns, and some never end.
#[cfg(target_os = "linux")]
fn pseudo_filesystem(path: &Path) -> Option<&'static str> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statfs writes into the zeroed struct we pass; `c` is a valid C string.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some(match st.f_type as i64 {
        0x9fa0 => "procfs",
        0x6265_6572 => "sysfs",
        0x6462_6720 => "debugfs",
        0x7472_6163 => "tracefs",
        0x0027_e0eb => "cgroupfs",
        0x6367_7270 => "cgroup2fs",
        0x7363_6673 => "securityfs",
        0xcafe_4a11 => "bpffs",
        0x1cd1 => "devpts",
        0x6165_676c => "pstorefs",
        0x6265_6570 => "configfs",
        0xde5e_81e4 => "efivarfs",
        _ => return None,
    })
}

#[cfg(not(target_os = "linux"))]
fn pseudo_filesystem(_path: &Path) -> Option<&'static str> {
    None
}

fn repo_id(root: &Path) -> String {
    patina_core::ids::repo_id(root)
}
