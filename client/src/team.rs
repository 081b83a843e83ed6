//! `patina publish [REPO] [--reader ROLE]…` and `patina published`: a repository's index at its
//! commit into the team's shared store (docs/team.md), and what the store lets this daemon read.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Result, bail};
use patina_proto::v1 as pb;
use serde_json::json;

use crate::daemon::{Client, status_error};

/// The repository a command names, or the one the current directory is in.
fn repo_key(repo: Option<String>, command: &str) -> Result<String> {
    Ok(match repo {
        Some(r) => crate::scope::repo_key(&r),
        None => {
            let cwd = std::env::current_dir()?;
            match crate::scope::git_root(&cwd) {
                Some(root) => root.to_string_lossy().into_owned(),
                None => bail!("not inside a repository: name one (`patina {command} REPO`)"),
            }
        }
    })
}

pub(crate) async fn publish(
    socket: &Path,
    repo: Option<String>,
    readers: Vec<String>,
    json: bool,
) -> Result<ExitCode> {
    let repo = repo_key(repo, "publish")?;
    let c = Client::connect_or_start(socket).await?;
    let mut svc = pb::team_client::TeamClient::new(c.channel());
    let r = svc
        .publish(pb::PublishRequest { repo, readers })
        .await
        .map_err(status_error)?
        .into_inner();
    if json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "remote": r.remote, "commit": r.commit, "model": r.model, "files": r.files,
                "chunks": r.chunks, "files_sent": r.files_sent, "chunks_sent": r.chunks_sent,
                "vectors_sent": r.vectors_sent, "vectors_present": r.vectors_present,
                "already": r.already, "store": r.store, "bulk_load": r.bulk_load,
            }))?
        );
        return Ok(ExitCode::SUCCESS);
    }
    if r.already {
        outln!(
            "{} at {} was already published to {}: nothing sent",
            r.remote,
            r.commit,
            r.store
        );
    } else {
        outln!("published {} at {} to {}", r.remote, r.commit, r.store);
        outln!(
            "  {} files, {} chunks; sent {} files ({} chunks) and {} vectors the store lacked ({} it held)",
            r.files,
            r.chunks,
            r.files_sent,
            r.chunks_sent,
            r.vectors_sent,
            r.vectors_present
        );
        if r.bulk_load {
            outln!("  the store's vector index was built once, after the vectors (a bulk load)");
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) async fn published(socket: &Path, json: bool) -> Result<ExitCode> {
    let c = Client::connect_or_start(socket).await?;
    let mut svc = pb::team_client::TeamClient::new(c.channel());
    let r = svc
        .published(pb::PublishedRequest {})
        .await
        .map_err(status_error)?
        .into_inner();
    if r.store.is_empty() {
        eprintln!(
            "patina: no team store is configured: set [team] url in config.toml (docs/team.md)"
        );
        return Ok(ExitCode::from(2));
    }
    if json {
        let repos: Vec<_> = r
            .repos
            .iter()
            .map(|p| {
                json!({"remote": p.remote, "name": p.name, "commit": p.commit, "model": p.model,
                       "files": p.files, "chunks": p.chunks, "published_at": p.published_at,
                       "cloned": p.cloned})
            })
            .collect();
        outln!(
            "{}",
            serde_json::to_string_pretty(&json!({"store": r.store, "repos": repos}))?
        );
        return Ok(ExitCode::SUCCESS);
    }
    if r.repos.is_empty() {
        outln!("{}: no repository this role may read is published", r.store);
    }
    for p in &r.repos {
        outln!(
            "{}  {}  {}  {} files, {} chunks{}",
            p.name,
            p.remote,
            p.commit.chars().take(12).collect::<String>(),
            p.files,
            p.chunks,
            if p.cloned { "  (cloned here)" } else { "" }
        );
    }
    Ok(ExitCode::SUCCESS)
}
