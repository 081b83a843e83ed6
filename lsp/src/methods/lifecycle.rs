//! `initialize` (the workspace folders, the client's options, the server's capabilities) and
//! `initialized`: tell the user when semantic search is off, find (or register) the repositories
//! of the workspace folders — they become the search scope — and follow their indexing.

use std::path::{Path, PathBuf};

use lsp_types::notification::ShowMessage;
use lsp_types::{
    ExecuteCommandOptions, HoverProviderCapability, InitializeResult, MessageType, OneOf,
    PositionEncodingKind, SaveOptions, ServerCapabilities, ServerInfo, ShowMessageParams,
    TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions,
    TextDocumentSyncSaveOptions,
};
use patina_proto::v1 as pb;
use serde::Serialize;
use serde_json::{Value, json};

use crate::convert::uri_to_path;
use crate::jsonrpc::{Failure, to_json};
use crate::methods::commands::COMMANDS;
use crate::methods::common::rpc;
use crate::methods::progress::index_with_progress;
use crate::state::State;

/// Patina's entry in the server's `experimental` capabilities: it answers `patina/search`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Experimental {
    patina_search: bool,
}

pub(crate) fn initialize(state: &State, params: &Value) -> Result<InitializeResult, Failure> {
    let mut roots: Vec<PathBuf> = params["workspaceFolders"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["uri"].as_str().and_then(uri_to_path))
        .collect();
    if roots.is_empty() {
        roots.extend(
            params["rootUri"]
                .as_str()
                .and_then(uri_to_path)
                .or_else(|| params["rootPath"].as_str().map(PathBuf::from)),
        );
    }
    *state.roots.lock().expect("roots lock") = roots;
    *state.client.lock().expect("client lock") = json!({
        "capabilities": params["capabilities"],
        "initializationOptions": params["initializationOptions"],
    });
    let capabilities = ServerCapabilities {
        position_encoding: Some(PositionEncodingKind::UTF16),
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::FULL),
                save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
                    include_text: Some(false),
                })),
                ..Default::default()
            },
        )),
        workspace_symbol_provider: Some(OneOf::Left(true)),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        execute_command_provider: Some(ExecuteCommandOptions {
            commands: COMMANDS.map(String::from).to_vec(),
            ..Default::default()
        }),
        experimental: Some(to_json(Experimental {
            patina_search: true,
        })?),
        ..Default::default()
    };
    Ok(InitializeResult {
        capabilities,
        server_info: Some(ServerInfo {
            name: "patina-lsp".into(),
            version: Some(env!("CARGO_PKG_VERSION").into()),
        }),
    })
}

/// After `initialized`: tell the user when semantic search is off, find (or register) the
/// repositories of the workspace folders and report their indexing as `$/progress`.
pub(crate) async fn initialized(state: &State) {
    let follow = resolve_scope(state).await;
    // Requests waiting for the scope go on, whatever was found (`State::scope` falls back to the
    // folders' paths).
    state.scope_resolved();
    for (path, name, add) in follow {
        index_with_progress(state, &path, &name, add).await;
    }
}

/// Find the repositories of the workspace folders: they become the search scope. Returns those
/// to follow while they index (root, name, whether to register it first).
async fn resolve_scope(state: &State) -> Vec<(String, String, bool)> {
    let show = |typ: MessageType, message: String| {
        state.notify::<ShowMessage>(ShowMessageParams { typ, message })
    };
    match rpc!(
        state,
        pb::health_client::HealthClient<_>,
        check,
        pb::CheckRequest {
            client_protocol: patina_proto::PROTOCOL_VERSION
        }
    ) {
        Ok(h) if !h.semantic_on => show(
            MessageType::WARNING,
            format!(
                "Patina: semantic search is off, results come from lexical and symbol search \
                 only. {}",
                fix_of(&h.semantic_off_reason)
            ),
        ),
        Ok(_) => {}
        Err((_, e)) => {
            show(MessageType::ERROR, format!("Patina: {e}"));
            return Vec::new();
        }
    }
    let register = state.client.lock().expect("client lock")["initializationOptions"]["register"]
        != json!(false);
    let roots = state.roots.lock().expect("roots lock").clone();
    let Ok(list) = rpc!(
        state,
        pb::repos_client::ReposClient<_>,
        list,
        pb::ListRequest {}
    ) else {
        return Vec::new();
    };
    let mut scope = Vec::new();
    let mut follow = Vec::new();
    for root in &roots {
        let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.clone());
        let known: Vec<&pb::RepoInfo> = list
            .repos
            .iter()
            .filter(|r| {
                let r_root = Path::new(&r.root);
                root.starts_with(r_root) || r_root.starts_with(&root)
            })
            .collect();
        for r in &known {
            scope.push(r.id.clone());
            if r.indexing {
                follow.push((r.root.clone(), r.name.clone(), false));
            }
        }
        if known.is_empty() && register && root.join(".git").exists() {
            follow.push((root.to_string_lossy().into_owned(), String::new(), true));
        }
    }
    *state.scope.lock().expect("scope lock") = scope;
    follow
}

/// Why semantic search is off (the daemon's structured reason, never its prose) and how to turn
/// it on.
fn fix_of(reason: &str) -> String {
    let why = if reason.is_empty() {
        "the model is not loaded"
    } else {
        reason
    };
    format!("{why}; turn it on with `patina model install` and restart the daemon")
}
