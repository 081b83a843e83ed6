//! The set of registered repositories: resolving user-supplied names (id, name, or a path inside
//! one) to repositories, and adding and removing their records. Running their index jobs is the
//! indexer's (`workers::indexer`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use anyhow::{Result, bail};
use patina_core::UserError;
use patina_index::store::{RepoRecord, Store};

use crate::process::memory::Budget;
use crate::state::generations::Generations;
use crate::state::repo::Repo;

pub(crate) struct Repos {
    store: Store,
    data_dir: PathBuf,
    budget: Budget,
    generations: Arc<Generations>,
    repos: RwLock<BTreeMap<String, Arc<Repo>>>,
    /// Held by [`Repos::register`] from its look-up to its insert: two `add`s of one new
    /// repository at once (a `patina q` asked inside it while it is being added) must open it
    /// once, or the second replaces the first, whose round and watches are then lost.
    registering: std::sync::Mutex<()>,
}

impl Repos {
    /// Every repository the store records, each opened with `prepare` (attaching its vectors); one
    /// that cannot be opened is logged and left out.
    pub fn open(
        store: Store,
        data_dir: PathBuf,
        budget: Budget,
        generations: Arc<Generations>,
        mut prepare: impl FnMut(&Repo) -> Result<()>,
    ) -> Result<Repos> {
        let mut repos = BTreeMap::new();
        for rec in store.repos()? {
            let id = rec.id.clone();
            let trees = store.repo_trees(&id)?;
            match Repo::open(rec, trees, &data_dir.join("repos").join(&id)) {
                Ok(repo) => {
                    repo.bound_memory(&budget);
                    if let Err(e) = prepare(&repo) {
                        tracing::error!(repo = %id, "cannot load vectors: {e:#}");
                    }
                    repos.insert(id, Arc::new(repo));
                }
                Err(e) => tracing::error!(repo = %id, "cannot open repository index: {e:#}"),
            }
        }
        tracing::info!(repos = repos.len(), "registry loaded");
        Ok(Repos {
            store,
            data_dir,
            budget,
            generations,
            repos: RwLock::new(repos),
            registering: std::sync::Mutex::new(()),
        })
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn generations(&self) -> &Arc<Generations> {
        &self.generations
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
        Err(UserError::Unregistered(format!("no registered repository matches '{key}'")).into())
    }

    /// Register the repository containing `path` (idempotent). Blocking
    /// (a durable registry write, opening the lexical index): call it on the blocking pool.
    /// Without `force`, a directory that is unlikely to be meant is refused ([`refusal`]).
    /// `prepare` (attaching its vectors) runs before the repository is seen by anyone. Returns
    /// the repository, and whether it was registered now (else before).
    pub fn register(
        &self,
        path: &str,
        force: bool,
        prepare: impl FnOnce(&Repo) -> Result<()>,
    ) -> Result<(Arc<Repo>, bool)> {
        if path.is_empty() {
            return Err(UserError::Invalid("no path given".into()).into());
        }
        let root = repo_root(Path::new(path))?;
        let id = repo_id(&root);
        let _one_at_a_time = self.registering.lock().expect("registering lock");
        let existing = self.repos.read().expect("repos lock").get(&id).cloned();
        let new = existing.is_none();
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
                    added_unix_ms: crate::process::clock::now_unix_ms(),
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
                    chunk_lines: 0,
                };
                self.store.put_repo(&rec)?;
                self.store.flush()?;
                let trees = self.store.repo_trees(&id)?;
                let repo = Arc::new(Repo::open(rec, trees, &self.repo_dir(&id))?);
                repo.bound_memory(&self.budget);
                prepare(&repo)?;
                self.repos
                    .write()
                    .expect("repos lock")
                    .insert(id.clone(), repo.clone());
                self.generations.registry_changed();
                tracing::info!(repo = %id, root = %root.display(), "registered");
                repo
            }
        };
        Ok((repo, new))
    }

    /// Forget `repo` (its files are the caller's to delete).
    pub fn unregister(&self, repo: &Repo) {
        self.repos.write().expect("repos lock").remove(repo.id());
        self.generations.registry_changed();
    }

    /// Bytes held in memory by every repository's vectors (model, commit-message and static),
    /// chunk and symbol tables (walks the tables: call it off the async workers).
    pub fn held_bytes(&self) -> crate::process::memory::Held {
        let (mut vectors, mut tables, mut symbols) = (0u64, 0u64, 0u64);
        for repo in self.all() {
            // The vector index's heap: the fresh segment's 8-bit vectors and the tombstones (the
            // sealed segments are mapped files, in the page cache: patina_index::vectors).
            vectors += repo.vector_heap_bytes();
            vectors +=
                (repo.messages().len() * crate::state::messages::MESSAGE_VECTOR_BYTES) as u64;
            vectors += repo.provisional_count() as u64 * crate::state::repo::STATIC_VECTOR_BYTES;
            tables += repo.with_chunks(|chunks| {
                chunks
                    .values()
                    .map(crate::process::memory::chunk_entry_bytes)
                    .sum::<u64>()
            });
            symbols += repo.symbols().heap_bytes();
        }
        crate::process::memory::Held {
            vectors,
            chunk_tables: tables,
            symbol_tables: symbols,
        }
    }

    pub fn repo_dir(&self, id: &str) -> PathBuf {
        self.data_dir.join("repos").join(id)
    }
}

/// The root of the repository containing `path`: the nearest ancestor holding `.git` (a directory,
/// or a file for worktrees and submodules), else `path` itself when it is a directory.
/// Why registering `root` is probably a mistake, if it is: it is not a git repository (Patina
/// would index, watch and keep everything below it), it is the home directory, `/` or the
/// temporary directory. A git repository is meant, however large: its size is said, not refused
/// (`state::estimate`).
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
    None
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
