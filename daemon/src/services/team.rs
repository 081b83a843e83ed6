//! A team's shared store (`[team]`, docs/team.md), the daemon's side of `patina_team`: publishing
//! a repository's index at its commit, taking the vectors the store holds for chunks this daemon
//! would otherwise embed, and listing what is published. Off unless a URL is configured; with
//! the store down or refusing, everything local works as before and the reason is kept for
//! `patina status` and the log (never the credentials). Knows nothing of gRPC.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Result, anyhow};
use patina_core::UserError;
use patina_team::{
    Chunk, Commit, Key, OrgHits, OrgQuery, Postgres, PublishReport, Published, SharedStore, remote,
};

use crate::services::embedding::Semantic;
use crate::services::embedding::shared::VectorSource;
use crate::services::git;
use crate::services::snapshot::{embedded_chunks, fresh_commit};
use crate::state::config::TeamConfig;
use crate::state::repo::Repo;

/// What a publish reports.
pub(crate) struct Publication {
    pub remote: String,
    pub commit: String,
    pub model: String,
    pub chunks: usize,
    pub report: PublishReport,
}

/// The store, if one is configured, and what happened with it.
pub(crate) struct Team {
    store: Option<Arc<dyn SharedStore>>,
    /// The daemon's runtime: the store's connection is a task there, whichever thread asks.
    rt: Option<tokio::runtime::Handle>,
    /// The last failure, as users see it (engine, and why), until a request succeeds again.
    trouble: Mutex<Option<String>>,
    /// Vectors taken from the store instead of being embedded.
    taken: AtomicU64,
    /// Registered repositories' remotes, by root ([`Team::remote_of`]).
    remotes: Mutex<HashMap<std::path::PathBuf, Option<String>>>,
}

impl Team {
    /// The configured store (not yet connected), or none; a URL that is not one is an error at
    /// start, like any other bad setting. `rt` is the daemon's runtime.
    pub fn from_config(cfg: &TeamConfig, rt: tokio::runtime::Handle) -> Result<Team> {
        let Some(url) = cfg.url() else {
            return Ok(Team::off());
        };
        let store = Postgres::new(
            &url,
            Duration::from_millis(cfg.timeout_ms.max(1)),
            patina_embed::DIM,
            Some(std::path::Path::new(&cfg.ca_file)).filter(|p| !p.as_os_str().is_empty()),
        )?;
        tracing::info!(store = %store.describe(), "team store configured");
        Ok(Team {
            store: Some(Arc::new(store)),
            rt: Some(rt),
            trouble: Mutex::new(None),
            taken: AtomicU64::new(0),
            remotes: Mutex::new(HashMap::new()),
        })
    }

    pub fn off() -> Team {
        Team {
            store: None,
            rt: None,
            trouble: Mutex::new(None),
            taken: AtomicU64::new(0),
            remotes: Mutex::new(HashMap::new()),
        }
    }

    pub fn is_on(&self) -> bool {
        self.store.is_some()
    }

    /// The engine and where it is (no credentials), or `None` when off.
    pub fn describe(&self) -> Option<String> {
        self.store.as_ref().map(|s| s.describe())
    }

    /// Why the last request to the store failed, if it did and none succeeded since.
    pub fn trouble(&self) -> Option<String> {
        self.trouble.lock().expect("team trouble lock").clone()
    }

    /// Vectors this process took from the store instead of embedding them.
    pub fn taken(&self) -> u64 {
        self.taken.load(Ordering::Relaxed)
    }

    /// Run `f` on the daemon's runtime and wait for it, from a thread that may block (the
    /// embedder's, or the blocking pool's; never an async worker).
    fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(Arc<dyn SharedStore>) -> patina_team::StoreFuture<'static, T>,
    ) -> Result<T> {
        let (Some(store), Some(rt)) = (&self.store, &self.rt) else {
            return Err(UserError::Invalid(
                "no team store is configured: set [team] url in config.toml (docs/team.md)".into(),
            )
            .into());
        };
        let fut = f(store.clone());
        let out = futures::executor::block_on(rt.spawn(fut))
            .map_err(|e| anyhow!("the team store's request failed: {e}"))
            .and_then(|r| r)
            .map_err(|e| {
                // Every error names the engine (once: some already do).
                let shown = format!("{e:#}");
                if shown.contains(&store.describe()) {
                    e
                } else {
                    e.context(store.describe())
                }
            });
        let mut trouble = self.trouble.lock().expect("team trouble lock");
        match &out {
            Ok(_) => *trouble = None,
            Err(e) => {
                let why = format!("{e:#}");
                if trouble.as_deref() != Some(why.as_str()) {
                    tracing::warn!("team store: {why}");
                }
                *trouble = Some(why);
            }
        }
        out
    }

    /// Search the newest published commit of every repository this daemon's role may read, but
    /// those whose remote is in `q.skip`.
    pub fn search(&self, q: OrgQuery) -> Result<OrgHits> {
        self.run(move |store| Box::pin(async move { store.search(&q).await }))
    }

    /// The normalised remote of `repo` (asked of git once per repository and kept).
    pub fn remote_of(&self, repo: &Repo) -> Option<String> {
        let mut known = self.remotes.lock().expect("team remotes lock");
        known
            .entry(repo.root().to_path_buf())
            .or_insert_with(|| origin(repo).ok().and_then(|u| remote::normalise(&u)))
            .clone()
    }

    /// The repositories the store lets this daemon's role read.
    pub fn published(&self) -> Result<Vec<Published>> {
        self.run(|store| Box::pin(async move { store.published().await }))
    }

    /// Publish `repo`'s index at its commit: every chunk, with its vector, keyed by the
    /// repository's remote. The index must be complete and the working tree clean.
    pub fn publish(
        &self,
        semantic: &Semantic,
        repo: &Arc<Repo>,
        readers: &[String],
    ) -> Result<Publication> {
        if !self.is_on() {
            return Err(UserError::Invalid(
                "no team store is configured: set [team] url in config.toml (docs/team.md)".into(),
            )
            .into());
        }
        for r in readers {
            if !patina_team::valid_role(r) {
                return Err(UserError::Invalid(format!(
                    "'{r}' is not a role name (letters, digits, '_' and '-')"
                ))
                .into());
            }
        }
        if !semantic.is_on() {
            return Err(UserError::Invalid(format!(
                "a publish carries the embeddings, and semantic search is off: {}",
                semantic.describe()
            ))
            .into());
        }
        let url = origin(repo)?;
        let remote = remote::normalise(&url).ok_or_else(|| {
            UserError::Invalid(format!("{} has an empty remote URL", repo.root().display()))
        })?;
        let commit = fresh_commit(repo, "a publish")?;
        let model = semantic.model_tag();
        let mut vectors: HashMap<Key, Vec<f32>> = HashMap::new();
        let mut chunks = Vec::new();
        for (id, meta, vector) in embedded_chunks(semantic, repo)? {
            let Some(body) = repo.index().text(id)? else {
                continue;
            };
            let vkey = semantic.key(&meta);
            vectors.insert(vkey, vector);
            chunks.push(Chunk {
                path: meta.path.to_string(),
                start_line: meta.start_line,
                end_line: meta.end_line,
                parent: meta.parent.clone().unwrap_or_default(),
                symbol: meta.symbol.clone().unwrap_or_default(),
                kind: meta.kind.name().to_string(),
                vkey,
                body,
            });
        }
        let n = chunks.len();
        let c = Commit {
            name: remote::short_name(&remote),
            remote: remote.clone(),
            sha: commit.clone(),
            model: model.clone(),
            readers: readers.to_vec(),
            chunks,
            vectors: vectors.into_iter().collect(),
        };
        let report = self.run(move |store| Box::pin(async move { store.publish(&c).await }))?;
        tracing::info!(
            repo = %repo.id(), %remote, %commit, files_sent = report.files_sent,
            vectors_sent = report.vectors_sent, already = report.already, "published"
        );
        Ok(Publication {
            remote,
            commit,
            model,
            chunks: n,
            report,
        })
    }
}

/// Of `keys` (this daemon's cache keys under `model`), the vectors the store holds; nothing when
/// it is off or failing (the chunks are then embedded here, as without a store).
impl VectorSource for Team {
    fn vectors(&self, model: &str, keys: &[Key]) -> Vec<(Key, Vec<f32>)> {
        if !self.is_on() || keys.is_empty() {
            return Vec::new();
        }
        let (model, keys) = (model.to_string(), keys.to_vec());
        let got = self
            .run(move |store| Box::pin(async move { store.vectors(&model, &keys).await }))
            .unwrap_or_default();
        self.taken.fetch_add(got.len() as u64, Ordering::Relaxed);
        got
    }
}

/// The URL of the repository's `origin` remote (or its only remote): what names it in the store.
pub(crate) fn origin(repo: &Repo) -> Result<String> {
    let url = |name: &str| {
        git::git_stdout(repo.root(), &["remote", "get-url", name])
            .map(|o| String::from_utf8_lossy(&o).trim().to_string())
            .filter(|u| !u.is_empty())
    };
    if let Some(u) = url("origin") {
        return Ok(u);
    }
    let names = git::git_stdout(repo.root(), &["remote"]).unwrap_or_default();
    let names: Vec<String> = String::from_utf8_lossy(&names)
        .lines()
        .map(str::to_string)
        .filter(|l| !l.is_empty())
        .collect();
    match names.as_slice() {
        [one] => url(one).ok_or_else(|| anyhow!("git cannot read the URL of remote '{one}'")),
        [] => Err(UserError::Invalid(format!(
            "{} has no git remote: the store names a repository by its remote (`git remote add \
             origin URL`)",
            repo.root().display()
        ))
        .into()),
        _ => Err(UserError::Invalid(format!(
            "{} has several remotes and none is called origin: the store names a repository by \
             its origin",
            repo.root().display()
        ))
        .into()),
    }
}
