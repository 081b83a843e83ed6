//! `workspace/symbol`: the hybrid search's hits as symbols, on the lines that name them.

use std::path::Path;

use lsp_types::{SymbolInformation, WorkspaceSymbolResponse};
use patina_proto::v1 as pb;
use serde_json::Value;

use crate::convert::{location, symbol_kind};
use crate::jsonrpc::Failure;
use crate::methods::common::{NAME_LINES, hit_line, hit_name, query, str_param};
use crate::state::State;

/// Hits per `workspace/symbol` answer.
const SYMBOL_LIMIT: u32 = 50;

pub(crate) async fn workspace_symbol(
    state: &State,
    params: &Value,
) -> Result<Option<WorkspaceSymbolResponse>, Failure> {
    let q = str_param(params, "query", "workspace/symbol")?.trim();
    if q.is_empty() {
        return Ok(Some(WorkspaceSymbolResponse::Flat(Vec::new())));
    }
    let resp = query(
        state,
        pb::QueryRequest {
            query: q.into(),
            limit: SYMBOL_LIMIT,
            repos: state.scope().await,
            snippet_lines: NAME_LINES,
            ..Default::default()
        },
    )
    .await?;
    #[allow(deprecated)] // `deprecated` is a field of the protocol's shape; it stays unset.
    let symbols = resp
        .hits
        .iter()
        .filter(|h| h.note.is_none() && !h.repo_root.is_empty())
        .map(|h| SymbolInformation {
            name: hit_name(h),
            kind: symbol_kind(&h.kind),
            tags: None,
            deprecated: None,
            location: location(Path::new(&h.repo_root), &h.path, hit_line(h), h.end_line),
            container_name: Some(if h.parent.is_empty() {
                h.path.clone()
            } else {
                h.parent.clone()
            }),
        })
        .collect();
    Ok(Some(WorkspaceSymbolResponse::Flat(symbols)))
}
