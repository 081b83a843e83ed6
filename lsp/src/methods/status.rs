//! `patina/status`, Patina's own method for status bars: how fresh the workspace's repositories
//! are, and whether semantic search is on.

use patina_proto::v1 as pb;
use serde::Serialize;

use crate::jsonrpc::Failure;
use crate::methods::common::rpc;
use crate::state::State;

/// The result of `patina/status`.
#[derive(Serialize)]
pub(crate) struct Status {
    repos: Vec<RepoStatus>,
    /// As the daemon says it to a person (`on`, or `off: <why>; …`): shown, never parsed.
    semantic: String,
    /// Whether semantic search is on: what a status bar keys off.
    #[serde(rename = "semanticOn")]
    semantic_on: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RepoStatus {
    id: String,
    name: String,
    root: String,
    files: u64,
    indexing: bool,
    fresh: bool,
    pending_files: i64,
    embed_backlog: u64,
    age_ms: u64,
}

pub(crate) async fn status(state: &State) -> Result<Status, Failure> {
    let list = rpc!(
        state,
        pb::repos_client::ReposClient<_>,
        list,
        pb::ListRequest {}
    )?;
    let scope = state.scope().await;
    let repos = list
        .repos
        .into_iter()
        .filter(|r| {
            // The scope names ids, or folders' paths while no repository holds them.
            let root = std::path::Path::new(&r.root);
            scope.is_empty()
                || scope.iter().any(|s| {
                    *s == r.id || root.starts_with(s) || std::path::Path::new(s).starts_with(root)
                })
        })
        .map(|r| {
            let f = r.freshness.unwrap_or_default();
            RepoStatus {
                id: r.id,
                name: r.name,
                root: r.root,
                files: r.files,
                indexing: r.indexing,
                fresh: f.fresh,
                pending_files: f.pending_files,
                embed_backlog: f.embed_backlog,
                age_ms: f.age_ms,
            }
        })
        .collect();
    Ok(Status {
        repos,
        semantic: list.semantic,
        semantic_on: list.semantic_on,
    })
}
