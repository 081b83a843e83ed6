//! `patina add|rm|repos|status|repair`: the registered repositories and their indices.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::daemon::Client;
use crate::output::repair::print_repair;
use crate::output::status::{print_repos, print_status, stage_line};
use crate::scope::repo_key;

/// `patina add [PATH] [--no-wait] [--force]`.
pub(crate) async fn add(
    socket: &Path,
    path: PathBuf,
    no_wait: bool,
    force: bool,
) -> Result<ExitCode> {
    let mut c = Client::connect_or_start(socket).await?;
    let path =
        std::fs::canonicalize(&path).with_context(|| format!("cannot use '{}'", path.display()))?;
    let info = c.add_with(&path, !no_wait, force).await?;
    if no_wait {
        eprintln!(
            "indexing {} in the background; `patina status` shows progress",
            info.root
        );
        return Ok(ExitCode::SUCCESS);
    }
    // What goes on after the round: the static and the model's passes, with their time left.
    if let Ok(list) = c.list().await
        && let Some(r) = list.repos.iter().find(|r| r.id == info.id)
    {
        for (stage, s) in [
            ("static vectors", &r.static_eta),
            ("model vectors", &r.embed_eta),
        ] {
            if let Some(s) = s {
                eprintln!(
                    "{stage}: {} (in the background; `patina status` follows it)",
                    stage_line(s)
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `patina rm REPO`.
pub(crate) async fn remove(socket: &Path, repo: &str) -> Result<ExitCode> {
    let mut c = Client::connect_or_start(socket).await?;
    let key = repo_key(repo);
    let removed = c.remove(&key).await?;
    outln!("removed {} ({})", removed.name, removed.root);
    Ok(ExitCode::SUCCESS)
}

/// `patina repos [--json]`.
pub(crate) async fn list(socket: &Path, json: bool) -> Result<ExitCode> {
    let mut c = Client::connect_or_start(socket).await?;
    let list = c.list().await?;
    print_repos(&list, json)?;
    Ok(ExitCode::SUCCESS)
}

/// `patina status [--json]`: the daemon, each repository, and (for people) its tuning.
pub(crate) async fn status(socket: &Path, json: bool) -> Result<ExitCode> {
    let mut c = Client::connect_or_start(socket).await?;
    let health = c.health().await?;
    let list = c.list().await?;
    print_status(&health, &list, json)?;
    if !json {
        for line in crate::tune::status_lines(&c).await {
            outln!("{line}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `patina repair [REPO] [--check] [--json]`: exit 1 when a problem was found (with --check) or
/// remains.
pub(crate) async fn repair(
    socket: &Path,
    repo: Option<String>,
    check: bool,
    json: bool,
) -> Result<ExitCode> {
    let mut c = Client::connect_or_start(socket).await?;
    let key = repo.as_deref().map(repo_key).unwrap_or_default();
    let resp = c.repair(&key, check).await?;
    let ok = print_repair(&resp, check, json)?;
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
