//! A team's shared store (`[team]`, docs/team.md), the daemon's side of `patina_team`: publishing
//! a repository's index at its commit, taking the vectors the store holds for chunks this daemon
//! would otherwise embed, and listing what is published. Off unless a URL is configured; with
//! the store down or refusing, everything local works as before and the reason is kept for
//! `patina status` and the log (never the credentials). Knows nothing of gRPC.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Result, anyhow};
use patina_core::ChunkMeta;
use patina_core::UserError;
use patina_team::{
    Begun, Chunk, CommitHead, FileContent, Key, OrgHits, OrgQuery, PublishReport, Published,
    SharedStore, file_key, remote,
};

use crate::services::embedding::Semantic;
use crate::services::embedding::shared::VectorSource;
use crate::services::git;
use crate::services::snapshot::fresh_commit;
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
    /// After a failed lookup of vectors, none is tried again before this: a store that does not
    /// answer must not cost every batch of the model's pass its timeout.
    quiet_until: Mutex<Option<std::time::Instant>>,
}

/// The engine behind `url` (not yet connected).
#[cfg(feature = "team")]
fn engine(url: &str, cfg: &TeamConfig) -> Result<Arc<dyn SharedStore>> {
    let store = patina_team::Postgres::new(
        url,
        Duration::from_millis(cfg.timeout_ms.max(1)),
        patina_embed::DIM,
        Some(std::path::Path::new(&cfg.ca_file)).filter(|p| !p.as_os_str().is_empty()),
    )?;
    tracing::info!(store = %store.describe(), "team store configured");
    Ok(Arc::new(store))
}

/// Built without the engine (`--features team`): a configured store is a setting this daemon
/// cannot honour, refused at start like any other, with how to get a daemon that can.
#[cfg(not(feature = "team"))]
fn engine(_url: &str, _cfg: &TeamConfig) -> Result<Arc<dyn SharedStore>> {
    Err(UserError::Invalid(
        "config.toml sets [team] url, but this patinad was built without the team store: \
         build it with `scripts/setup --team` (or `cargo build --release --features patinad/team`), \
         or remove [team] url (docs/team.md)"
            .into(),
    )
    .into())
}

/// How long the model's pass stops asking a store that failed.
const QUIET_AFTER_FAILURE: Duration = Duration::from_secs(30);

impl Team {
    /// The configured store (not yet connected), or none; a URL that is not one is an error at
    /// start, like any other bad setting. `rt` is the daemon's runtime.
    pub fn from_config(cfg: &TeamConfig, rt: tokio::runtime::Handle) -> Result<Team> {
        let Some(url) = cfg.url() else {
            return Ok(Team::off());
        };
        Ok(Team {
            store: Some(engine(&url, cfg)?),
            rt: Some(rt),
            trouble: Mutex::new(None),
            taken: AtomicU64::new(0),
            remotes: Mutex::new(HashMap::new()),
            quiet_until: Mutex::new(None),
        })
    }

    pub fn off() -> Team {
        Team {
            store: None,
            rt: None,
            trouble: Mutex::new(None),
            taken: AtomicU64::new(0),
            remotes: Mutex::new(HashMap::new()),
            quiet_until: Mutex::new(None),
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
        let head = CommitHead {
            name: remote::short_name(&remote),
            remote: remote.clone(),
            sha: commit.clone(),
            model: model.clone(),
            readers: readers.to_vec(),
        };
        let begun = self.run(move |s| Box::pin(async move { s.begin(&head).await }))?;
        let report = self.send(semantic, repo, begun)?;
        tracing::info!(
            repo = %repo.id(), %remote, %commit, files_sent = report.files_sent,
            vectors_sent = report.vectors_sent, already = report.already, "published"
        );
        let n = repo.with_chunks(|c| c.len());
        Ok(Publication {
            remote,
            commit,
            model,
            chunks: n,
            report,
        })
    }
}

/// Files of content one publish batch reads and sends.
const FILE_BATCH: usize = 500;
/// Vectors one publish batch reads and sends.
const VECTOR_BATCH: usize = 5_000;

impl Team {
    /// Send what the store lacks of `repo`'s index, a batch at a time (so memory holds one batch
    /// of texts and vectors, not the index), then commit.
    fn send(&self, semantic: &Semantic, repo: &Repo, begun: Begun) -> Result<PublishReport> {
        // Every file with its chunks in line order, and the keys the store knows them by.
        let mut by_file: BTreeMap<String, Vec<(u64, ChunkMeta, Key)>> = BTreeMap::new();
        repo.with_chunks(|c| {
            for (id, m) in c.iter() {
                let vkey = semantic.key(m);
                by_file
                    .entry(m.path.to_string())
                    .or_default()
                    .push((*id, m.clone(), vkey));
            }
        });
        let chunks: usize = by_file.values().map(Vec::len).sum();
        let files: Vec<(String, Key, Vec<(u64, ChunkMeta, Key)>)> = by_file
            .into_iter()
            .map(|(path, mut cs)| {
                cs.sort_by_key(|c| (c.1.start_line, c.1.end_line, c.0));
                let key = file_key(
                    &path,
                    cs.iter().map(|c| (c.2, c.1.start_line, c.1.end_line)),
                );
                (path, key, cs)
            })
            .collect();
        let mut report = PublishReport {
            files: files.len(),
            already: begun.already,
            ..Default::default()
        };
        if begun.already {
            return Ok(report);
        }
        let keys: Vec<Key> = files.iter().map(|f| f.1).collect();
        let b = begun.clone();
        let missing: HashSet<Key> = self
            .run(move |s| Box::pin(async move { s.missing_files(&b, &keys).await }))?
            .into_iter()
            .collect();
        let unsent: Vec<&(String, Key, Vec<(u64, ChunkMeta, Key)>)> =
            files.iter().filter(|f| missing.contains(&f.1)).collect();
        for batch in unsent.chunks(FILE_BATCH) {
            let mut contents = Vec::with_capacity(batch.len());
            for (path, key, cs) in batch {
                let mut out = Vec::with_capacity(cs.len());
                for (id, m, vkey) in cs {
                    out.push(Chunk {
                        path: path.clone(),
                        start_line: m.start_line,
                        end_line: m.end_line,
                        parent: m.parent.clone().unwrap_or_default(),
                        symbol: m.symbol.clone().unwrap_or_default(),
                        kind: m.kind.name().to_string(),
                        vkey: *vkey,
                        body: repo.index().text(*id)?.unwrap_or_default(),
                    });
                }
                contents.push(FileContent {
                    key: *key,
                    path: path.clone(),
                    chunks: out,
                    facts: repo.index().file_facts(path)?,
                });
            }
            let b = begun.clone();
            report.chunks_sent +=
                self.run(move |s| Box::pin(async move { s.put_files(&b, &contents).await }))?;
            report.files_sent += batch.len();
        }

        // Vectors: each key once, whichever files share it.
        let mut at: HashMap<Key, (u64, &ChunkMeta)> = HashMap::new();
        for (_, _, cs) in &files {
            for (id, m, vkey) in cs {
                at.entry(*vkey).or_insert((*id, m));
            }
        }
        let mut vkeys: Vec<Key> = at.keys().copied().collect();
        vkeys.sort_unstable();
        let total = vkeys.len();
        let b = begun.clone();
        let lacking =
            self.run(move |s| Box::pin(async move { s.missing_vectors(&b, &vkeys).await }))?;
        report.vectors_present = total - lacking.len();
        let b = begun.clone();
        let incoming = lacking.len();
        report.bulk_load =
            self.run(move |s| Box::pin(async move { s.load_begin(&b, incoming).await }))?;
        let sent = self.send_vectors(semantic, repo, &begun, &lacking, &at);
        // Whatever the load set aside is whole again, whether or not every vector went.
        let b = begun.clone();
        let ended = self.run(move |s| Box::pin(async move { s.load_end(&b).await }));
        report.vectors_sent = sent?;
        ended?;

        let list: Vec<(String, Key)> = files.iter().map(|f| (f.0.clone(), f.1)).collect();
        let inserted =
            self.run(move |s| Box::pin(async move { s.commit(&begun, &list, chunks).await }))?;
        report.already = !inserted;
        Ok(report)
    }

    /// Send the vectors of `lacking`, a batch at a time, from the embedding cache (or, for what
    /// it lost, the vector index); how many went.
    fn send_vectors(
        &self,
        semantic: &Semantic,
        repo: &Repo,
        begun: &Begun,
        lacking: &[Key],
        at: &HashMap<Key, (u64, &ChunkMeta)>,
    ) -> Result<usize> {
        let mut sent = 0;
        for batch in lacking.chunks(VECTOR_BATCH) {
            let mut vectors = Vec::with_capacity(batch.len());
            let mut lost: Vec<(u64, Key)> = Vec::new();
            for k in batch {
                let (id, m) = at[k];
                match semantic.cached(m)? {
                    Some(v) => vectors.push((*k, v)),
                    None => lost.push((id, *k)),
                }
            }
            // What the embedding cache has lost the vector index still holds.
            if !lost.is_empty() {
                let ids: HashSet<u64> = lost.iter().map(|l| l.0).collect();
                let mut held = repo.vectors_of(&ids);
                for (id, k) in lost {
                    let v = held.remove(&id).ok_or_else(|| {
                        anyhow!(
                            "a chunk of {} has no embedding yet; wait until `patina status` shows \
                             every chunk embedded",
                            repo.record().name
                        )
                    })?;
                    vectors.push((k, v));
                }
            }
            let b = begun.clone();
            sent +=
                self.run(move |s| Box::pin(async move { s.put_vectors(&b, &vectors).await }))?;
        }
        Ok(sent)
    }
}

/// Of `keys` (this daemon's cache keys under `model`), the vectors the store holds; nothing when
/// it is off or failing (the chunks are then embedded here, as without a store).
impl VectorSource for Team {
    fn vectors(&self, model: &str, keys: &[Key]) -> Vec<(Key, Vec<f32>)> {
        if !self.is_on() || keys.is_empty() {
            return Vec::new();
        }
        let now = std::time::Instant::now();
        let mut quiet = self.quiet_until.lock().expect("team quiet lock");
        if quiet.is_some_and(|until| now < until) {
            return Vec::new();
        }
        let (model, keys) = (model.to_string(), keys.to_vec());
        let got = match self
            .run(move |store| Box::pin(async move { store.vectors(&model, &keys).await }))
        {
            Ok(got) => {
                *quiet = None;
                got
            }
            Err(_) => {
                *quiet = Some(now + QUIET_AFTER_FAILURE);
                Vec::new()
            }
        };
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Whichever way the daemon was built: with the store, a URL is a store (not yet connected);
    /// without it, the same setting is refused, saying how to build a daemon that has it.
    #[test]
    fn a_configured_store_is_one_only_in_a_daemon_built_with_it() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let cfg = TeamConfig {
            url: "host=/nonexistent port=5432 user=nobody dbname=none".into(),
            ..TeamConfig::default()
        };
        let team = Team::from_config(&cfg, rt.handle().clone());
        if cfg!(feature = "team") {
            let team = team.expect("a store");
            assert!(team.is_on());
            assert!(team.describe().is_some_and(|d| d.contains("PostgreSQL")));
        } else {
            let why = format!("{:#}", team.err().expect("refused"));
            assert!(why.contains("built without the team store"), "{why}");
            assert!(why.contains("scripts/setup --team"), "{why}");
        }
        assert!(
            !Team::from_config(&TeamConfig::default(), rt.handle().clone())
                .unwrap()
                .is_on()
        );
    }
}
