//! Waiting for the daemon's background work (embeddings of chunks and of commit messages) before
//! the queries that depend on it run.

use std::time::Instant;

use anyhow::{Result, bail};
use patina_proto::v1 as pb;

use crate::daemon::Client;

/// Poll `repo`'s row until `left` says nothing is left (reporting every 10 s what is); returns
/// the row and the seconds waited.
async fn wait_until_drained(
    c: &mut Client,
    repo: &str,
    what: &str,
    left: impl Fn(&pb::RepoInfo) -> u64,
) -> Result<(pb::RepoInfo, f64)> {
    let t0 = Instant::now();
    let mut last_report = Instant::now();
    loop {
        let list = c.list().await?;
        let Some(r) = list.repos.into_iter().find(|r| r.id == repo) else {
            bail!("the repository disappeared")
        };
        let n = left(&r);
        if n == 0 {
            return Ok((r, t0.elapsed().as_secs_f64()));
        }
        if last_report.elapsed().as_secs() >= 10 {
            eprintln!("waiting for {what}: {n} left");
            last_report = Instant::now();
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
}

/// Semantic rows are only meaningful once every chunk is embedded: wait for the backlog to drain
/// — or, with the model's pass off (`[semantic] model_pass = false`), until every chunk waiting
/// for the model has its static vector, which is all it will get.
pub(crate) async fn wait_for_embeddings(c: &mut Client, repo: &str) -> Result<()> {
    let h = c.health().await?;
    if !h.semantic_on {
        eprintln!("semantic search {}", h.semantic);
        return Ok(());
    }
    if !h.model_pass {
        let (r, waited) = wait_until_drained(c, repo, "static vectors", |r| {
            r.embed_backlog.saturating_sub(r.static_vectors)
        })
        .await?;
        eprintln!(
            "static vectors ready: {} chunks, the model's pass is off ({waited:.0}s waited)",
            r.static_vectors
        );
        return Ok(());
    }
    let (r, waited) = wait_until_drained(c, repo, "embeddings", |r| r.embed_backlog).await?;
    eprintln!(
        "embeddings ready: {} chunks ({waited:.0}s waited)",
        r.vectors
    );
    Ok(())
}

/// With the model, the history oracle matches commit messages by meaning too: wait until every
/// reachable commit's message is embedded (without the model there is nothing to wait for).
pub(crate) async fn wait_for_messages(c: &mut Client, repo: &str) -> Result<()> {
    if !c.health().await?.semantic_on {
        return Ok(());
    }
    let (_, waited) =
        wait_until_drained(c, repo, "commit-message embeddings", |r| r.message_backlog).await?;
    if waited >= 1.0 {
        eprintln!("commit messages embedded ({waited:.0}s waited)");
    }
    Ok(())
}
