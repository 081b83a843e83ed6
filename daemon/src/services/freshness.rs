//! How fresh a repository's index is: indexed commit vs HEAD, changes not indexed yet, embedding
//! backlog, time since the last update, and whether it is watched. Every answer carries this.

use crate::state::repo::Repo;

#[derive(Clone, Debug, Default)]
pub(crate) struct Freshness {
    pub repo_id: String,
    pub repo_name: String,
    pub indexed_commit: Option<String>,
    pub head_commit: Option<String>,
    /// `None`: a full reconciliation is pending (count unknown).
    pub pending_files: Option<usize>,
    pub embed_backlog: usize,
    pub last_indexed_unix_ms: i64,
    pub indexing: bool,
    pub watch: String,
}

impl Freshness {
    pub fn of(repo: &Repo) -> Freshness {
        let rec = repo.record();
        let watch = if !repo.root().is_dir() {
            format!("missing: {} no longer exists", repo.root().display())
        } else {
            match repo.watch_error() {
                Some(why) => format!("polling: {why}"),
                None => "watching".into(),
            }
        };
        Freshness {
            repo_id: rec.id,
            repo_name: rec.name,
            indexed_commit: rec.indexed_commit,
            head_commit: crate::services::git::head(repo.root()),
            pending_files: repo.pending_files(),
            embed_backlog: repo.backlog(),
            last_indexed_unix_ms: rec.last_indexed_unix_ms,
            indexing: repo.running_job().is_some(),
            watch,
        }
    }

    pub fn is_fresh(&self) -> bool {
        self.pending_files == Some(0)
            && self.embed_backlog == 0
            && !self.indexing
            && self.indexed_commit == self.head_commit
    }

    pub fn age_ms(&self) -> u64 {
        if self.last_indexed_unix_ms <= 0 {
            return 0;
        }
        (crate::process::clock::now_unix_ms() - self.last_indexed_unix_ms).max(0) as u64
    }
}
