//! Real repositories (`--repo-dir CLONE`): the queries grouped by commit, each commit checked out
//! in commit-date order and the live index awaited before its queries run; the original HEAD is
//! restored whatever happens.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};
use patina_proto::v1 as pb;

use crate::bench::queries::Query;
use crate::bench::wait::wait_for_messages;
use crate::daemon::Client;

/// How the index followed the checkouts of a repository run.
#[derive(Default)]
pub(crate) struct RepoRun {
    pub(crate) root: String,
    pub(crate) original_head: String,
    pub(crate) commits: usize,
    pub(crate) initial_index_s: f64,
    pub(crate) catch_up_s: Vec<f64>,
}

/// Run `git -C dir ARGS`; its trimmed stdout, or an error with git's own message.
fn git(dir: &Path, args: &[&str]) -> Result<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .with_context(|| format!("running git {}", args.join(" ")))?;
    if !out.status.success() {
        bail!(
            "git {} in {}: {}",
            args.join(" "),
            dir.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Puts the clone back on the commit or branch it was on, whatever happens to the run.
struct Restore {
    root: PathBuf,
    head: String,
    armed: bool,
}

impl Restore {
    pub(crate) fn now(&mut self) {
        if !self.armed {
            return;
        }
        self.armed = false;
        match git(&self.root, &["checkout", "-qf", &self.head]) {
            Ok(_) => eprintln!("restored {} to {}", self.root.display(), self.head),
            Err(e) => eprintln!(
                "patina: could not restore {} to {}: {e:#}",
                self.root.display(),
                self.head
            ),
        }
    }
}

impl Drop for Restore {
    fn drop(&mut self) {
        self.now();
    }
}

/// How a repository run checks out and waits.
pub(crate) struct RepoOpts {
    /// Go ahead when the clone has uncommitted changes (they are lost).
    pub(crate) force: bool,
    /// How long to wait, per checkout, for the index to catch up.
    pub(crate) fresh_ms: u32,
    /// Wait for the embeddings too (a subset uses semantic).
    pub(crate) semantic: bool,
    /// Wait for the commit messages' embeddings (a subset uses history).
    pub(crate) history: bool,
}

/// Check out each commit of `queries` in `dir` in commit-date order, wait for the index, and hand
/// the commit's queries (indices into `queries`) to `visit` with the repository's id.
pub(crate) async fn run_repo(
    c: &mut Client,
    opts: &RepoOpts,
    dir: &Path,
    queries: &[Query],
    mut visit: impl AsyncFnMut(&mut Client, &str, &[usize]) -> Result<()>,
) -> Result<(pb::RepoInfo, RepoRun)> {
    let dir = std::fs::canonicalize(dir)
        .with_context(|| format!("cannot use --repo-dir '{}'", dir.display()))?;
    let root = PathBuf::from(
        git(&dir, &["rev-parse", "--show-toplevel"])
            .with_context(|| format!("{} is not a git clone", dir.display()))?,
    );
    let names: HashSet<&str> = queries.iter().filter_map(|q| q.repo.as_deref()).collect();
    if names.len() > 1 {
        let mut names: Vec<_> = names.into_iter().collect();
        names.sort();
        bail!(
            "the queries name several repositories ({}); one --repo-dir evaluates one",
            names.join(", ")
        );
    }
    let dirty = git(
        &root,
        &["status", "--porcelain", "--untracked-files=normal"],
    )?;
    if !dirty.is_empty() && !opts.force {
        let n = dirty.lines().count();
        bail!(
            "{} has uncommitted changes ({n} paths, e.g. `{}`): the bench checks out other \
             commits with `git checkout -f` and would destroy them. Commit or stash them, use a \
             private clone, or pass --force to discard them",
            root.display(),
            dirty.lines().next().unwrap_or("").trim()
        );
    }
    let head = match git(&root, &["symbolic-ref", "-q", "--short", "HEAD"]) {
        Ok(branch) if !branch.is_empty() => branch,
        _ => git(&root, &["rev-parse", "HEAD"])?,
    };

    // Group the queries by commit, commits in commit-date order (ties: first appearance).
    let mut groups: Vec<(String, i64, Vec<usize>)> = Vec::new();
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, q) in queries.iter().enumerate() {
        let commit = q.commit.as_deref().expect("checked by the caller");
        if let Some(&g) = seen.get(commit) {
            groups[g].2.push(i);
            continue;
        }
        let sha = git(
            &root,
            &[
                "rev-parse",
                "--verify",
                "-q",
                &format!("{commit}^{{commit}}"),
            ],
        )
        .map_err(|_| {
            anyhow!(
                "commit {commit} (query {}) is not in {}; fetch it first",
                q.id,
                root.display()
            )
        })?;
        let time: i64 = git(&root, &["log", "-1", "--format=%ct", &sha])?
            .parse()
            .context("git log %ct")?;
        seen.insert(commit, groups.len());
        groups.push((sha, time, vec![i]));
    }
    groups.sort_by_key(|g| g.1);

    let health = c.health().await?;
    let semantic = opts.semantic;
    if semantic && !health.semantic_on {
        eprintln!("semantic search {}", health.semantic);
    }
    let catch_up_oracles = if semantic && health.semantic_on {
        vec!["semantic".to_string()]
    } else {
        vec!["lexical".to_string()]
    };

    let mut restore = Restore {
        root: root.clone(),
        head: head.clone(),
        armed: true,
    };
    let mut run = RepoRun {
        root: root.to_string_lossy().into_owned(),
        original_head: head,
        commits: groups.len(),
        ..Default::default()
    };
    let work = async {
        let mut info: Option<pb::RepoInfo> = None;
        for (n, (sha, _, members)) in groups.iter().enumerate() {
            git(&root, &["checkout", "-qf", sha])?;
            let id = match &info {
                Some(i) => i.id.clone(),
                None => {
                    let t0 = Instant::now();
                    let i = c.add_with(&root, true, true).await?;
                    run.initial_index_s = t0.elapsed().as_secs_f64();
                    let id = i.id.clone();
                    info = Some(i);
                    id
                }
            };
            let t0 = Instant::now();
            let resp = c
                .query(pb::QueryRequest {
                    query: queries[members[0]].query.clone(),
                    limit: 1,
                    repos: vec![id.clone()],
                    oracles: catch_up_oracles.clone(),
                    fresh_timeout_ms: opts.fresh_ms,
                    ..Default::default()
                })
                .await
                .map_err(crate::daemon::status_error)
                .with_context(|| format!("catching up with {sha}"))?;
            let took = t0.elapsed().as_secs_f64();
            run.catch_up_s.push(took);
            if let Some(note) = resp.notices.iter().find(|n| n.contains("not fully fresh")) {
                bail!("at {sha}: {note} (raise --fresh-ms)");
            }
            match resp.freshness.iter().find(|f| f.repo_id == id) {
                Some(f) if f.indexed_commit == *sha => {}
                Some(f) => bail!(
                    "at {sha}: the index reports commit '{}' after catching up",
                    f.indexed_commit
                ),
                None => bail!("at {sha}: the daemon reported no freshness for the repository"),
            }
            if opts.history {
                // The history oracle also matches commit messages by meaning once they are
                // embedded (after every chunk): wait, so that no answer depends on timing.
                wait_for_messages(c, &id).await?;
            }
            eprintln!(
                "[{}/{}] {} ({} queries): caught up in {took:.1}s",
                n + 1,
                groups.len(),
                &sha[..12],
                members.len()
            );
            visit(c, &id, members).await?;
        }
        Ok::<_, anyhow::Error>(info.expect("at least one commit"))
    };
    let mut sigint = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
    let mut sigterm = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let result = tokio::select! {
        biased;
        _ = sigint.recv() => Err(anyhow!("interrupted")),
        _ = sigterm.recv() => Err(anyhow!("terminated")),
        r = work => r,
    };
    restore.now();
    let info = result?;
    Ok((info, run))
}
