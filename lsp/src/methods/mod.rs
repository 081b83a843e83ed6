//! The LSP methods, each forwarded to the daemon, one file per job: `lifecycle` (`initialize`,
//! `initialized`: workspace folders become the search scope, registered when they are git
//! repositories; `window/showMessage` when semantic search is off), `progress` (`$/progress` while
//! they index), `symbols` (`workspace/symbol`, hybrid search), `navigation` and `hover`
//! (`textDocument/definition`, `references` and `hover` from the code graph), `search`
//! (`patina/search`), `status` (`patina/status`, freshness for status bars) and `commands`
//! (`workspace/executeCommand`: `patina.search`, `patina.context`, `patina.related`); `common`
//! holds what they share. Handlers take the [`State`]; results are `lsp_types` shapes (Patina's
//! own methods: serde types), checked against each request's declared result type.

mod commands;
mod common;
mod hover;
mod lifecycle;
mod navigation;
mod progress;
mod search;
mod status;
mod symbols;

use lsp_types::request::{
    GotoDefinition, HoverRequest, Initialize, References, Request, WorkspaceSymbolRequest,
};
use serde_json::Value;

use crate::jsonrpc::{Failure, METHOD_NOT_FOUND, to_json};
use crate::state::State;

pub(crate) use lifecycle::initialized;

/// `initialize`: the server's capabilities.
pub(crate) fn initialize(state: &State, params: &Value) -> Result<Value, Failure> {
    answer::<Initialize>(lifecycle::initialize(state, params))
}

/// A request after `initialize`.
pub(crate) async fn call(state: &State, method: &str, params: Value) -> Result<Value, Failure> {
    match method {
        "workspace/symbol" => {
            answer::<WorkspaceSymbolRequest>(symbols::workspace_symbol(state, &params).await)
        }
        "textDocument/definition" => {
            answer::<GotoDefinition>(navigation::definition(state, &params).await)
        }
        "textDocument/references" => {
            answer::<References>(navigation::references(state, &params).await)
        }
        "textDocument/hover" => answer::<HoverRequest>(hover::hover(state, &params).await),
        "patina/search" => to_json(search::search(state, &params).await?),
        "patina/status" => to_json(status::status(state).await?),
        "workspace/executeCommand" => commands::execute_command(state, &params).await,
        _ => Err((METHOD_NOT_FOUND, format!("method not found: '{method}'"))),
    }
}

/// The JSON of request `R`'s result: the compiler checks it is the shape `R` answers with.
fn answer<R: Request>(result: Result<R::Result, Failure>) -> Result<Value, Failure> {
    to_json(result?)
}
