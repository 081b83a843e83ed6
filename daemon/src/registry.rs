//! The set of registered repositories: resolving user-supplied names to repositories, adding and
//! removing them, and running their index jobs (one at a time, in the background).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, RwLock};

use anyhow::{Context, Result, anyhow, bail};
use tokio::sync::{Semaphore, watch};

use crate::config::Config;
use crate::index::{self, Phase, Progress};
use crate::repo::Repo;
use crate::semantic::Semantic;
use crate::store::{RepoRecord, Store};

pub(crate) struct Registry {
    store: Store,
    data_dir: PathBuf,
    pub config: Config,
    pub semantic: Arc<Semantic>,
    repos: RwLock<BTreeMap<String, Arc<Repo>>>,
    /// Index jobs run one at a time: they are CPU-bound and the machine is shared with queries.
    jobs: Arc<Semaphore>,
}

/// Errors a caller can fix, as opposed to internal failures.
#[derive(Debug)]
pub(crate) enum UserError {
    NotFound(String),
    Invalid(String),
}

impl std::error::Error for UserError {}

impl std::fmt::Display for UserError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UserError::NotFound(m) | UserError::Invalid(m) => f.write_str(m),
        }
    }
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
            match Repo::open(rec, trees, data_dir.join("repos").join(&id)) {
                Ok(repo) => {
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
        if let Ok(path) = std::fs::canonicalize(key) {
            if let Some(r) = repos
                .values()
                .filter(|r| path.starts_with(&r.root))
                .max_by_key(|r| r.root.as_os_str().len())
            {
                return Ok(r.clone());
            }
        }
        Err(UserError::NotFound(format!(
            "no registered repository matches '{key}' (see `patina repos`)"
        ))
        .into())
    }

    /// Register the repository containing `path` (idempotent) and start indexing it.
    pub fn add(self: &Arc<Self>, path: &str) -> Result<(Arc<Repo>, watch::Receiver<Progress>)> {
        if path.is_empty() {
            return Err(UserError::Invalid("no path given".into()).into());
        }
        let root = repo_root(Path::new(path))?;
        let id = repo_id(&root);
        let existing = self.repos.read().expect("repos lock").get(&id).cloned();
        let repo = match existing {
            Some(r) => r,
            None => {
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
                };
                self.store.put_repo(&rec)?;
                self.store.flush()?;
                let trees = self.store.repo_trees(&id)?;
                let repo = Arc::new(Repo::open(rec, trees, self.repo_dir(&id))?);
                self.semantic.attach(&repo)?;
                self.repos
                    .write()
                    .expect("repos lock")
                    .insert(id.clone(), repo.clone());
                tracing::info!(repo = %id, root = %root.display(), "registered");
                repo
            }
        };
        let rx = self.start_job(&repo);
        Ok((repo, rx))
    }

    /// Start an index job for `repo` unless one is already running; either way, return its progress.
    pub fn start_job(self: &Arc<Self>, repo: &Arc<Repo>) -> watch::Receiver<Progress> {
        let mut job = repo.job.lock().expect("job lock");
        if let Some(rx) = job.as_ref().filter(|rx| !rx.borrow().finished()) {
            return rx.clone();
        }
        let (tx, rx) = watch::channel(Progress::default());
        *job = Some(rx.clone());
        drop(job);
        let this = self.clone();
        let repo = repo.clone();
        tokio::spawn(async move {
            let Ok(_permit) = this.jobs.clone().acquire_owned().await else {
                return;
            };
            if repo.cancelled.load(Ordering::Relaxed) {
                tx.send_modify(|p| p.phase = Phase::Failed);
                return;
            }
            let (this2, repo2) = (this.clone(), repo.clone());
            let cfg = this.config.index.clone();
            let tx2 = tx.clone();
            let res = tokio::task::spawn_blocking(move || {
                let r = index::index_repo(&repo2, &cfg, &this2.semantic, &tx2);
                if let Err(e) = &r {
                    repo2.record.write().expect("record lock").last_error = Some(format!("{e:#}"));
                }
                // Persist the summary whatever happened, so status survives a restart.
                if !repo2.cancelled.load(Ordering::Relaxed) {
                    let _ = this2.store.put_repo(&repo2.record());
                }
                let _ = this2.store.flush();
                r
            })
            .await;
            let res = res
                .map_err(|e| anyhow!("index job panicked: {e}"))
                .and_then(|r| r);
            match res {
                Ok(()) => {
                    tracing::info!(repo = %repo.id, "indexed");
                    tx.send_modify(|p| p.phase = Phase::Done);
                }
                Err(e) => {
                    tracing::warn!(repo = %repo.id, "index job failed: {e:#}");
                    tx.send_modify(|p| {
                        p.phase = Phase::Failed;
                        p.message = format!("{e:#}");
                    });
                }
            }
        });
        rx
    }

    /// Unregister a repository and delete its index data.
    pub async fn remove(&self, key: &str) -> Result<RepoRecord> {
        let repo = self.resolve(key)?;
        repo.cancelled.store(true, Ordering::Relaxed);
        // Wait for a running job to notice.
        if let Some(mut rx) = repo.running_job() {
            let _ = rx.wait_for(Progress::finished).await;
        }
        self.repos.write().expect("repos lock").remove(&repo.id);
        self.store.remove_repo(&repo.id)?;
        let dir = self.repo_dir(&repo.id);
        let rec = repo.record();
        drop(repo);
        if dir.exists() {
            std::fs::remove_dir_all(&dir).with_context(|| format!("deleting {}", dir.display()))?;
        }
        tracing::info!(repo = %rec.id, "removed");
        Ok(rec)
    }

    /// Stop running jobs and flush everything (shutdown).
    pub async fn shutdown(&self) {
        self.semantic.stop();
        for repo in self.all() {
            repo.cancelled.store(true, Ordering::Relaxed);
        }
        for repo in self.all() {
            if let Some(mut rx) = repo.running_job() {
                let _ = tokio::time::timeout(
                    std::time::Duration::from_secs(10),
                    rx.wait_for(Progress::finished),
                )
                .await;
            }
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
fn repo_root(path: &Path) -> Result<PathBuf> {
    let abs = std::fs::canonicalize(path)
        .map_err(|e| UserError::Invalid(format!("cannot use '{}': {e}", path.display())))?;
    if !abs.is_dir() {
        bail!(UserError::Invalid(format!(
            "'{}' is not a directory",
            path.display()
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

fn repo_id(root: &Path) -> String {
    blake3::hash(root.as_os_str().as_encoded_bytes()).to_hex()[..12].to_string()
}
