//! The MCP layer on top: the methods (`initialize`, `ping`, `tools/list`, `tools/call`, the
//! `initialized` and `cancelled` notifications) and the dispatch of each input line — requests
//! run as tasks that can be cancelled, batches as one task. Malformed input is answered with the
//! JSON-RPC error codes (`jsonrpc.rs`) and never stops the server; a tool that fails returns a
//! result with `isError: true` (see `content.rs`).

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::content;
use crate::jsonrpc::{
    INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, Message, PARSE_ERROR, classify,
    error_response, result_response,
};
use crate::log::{debug_enabled, log};
use crate::state::State;
use crate::stdio::Out;
use crate::tools;
use crate::versions::{LATEST_VERSION, SUPPORTED_VERSIONS, at_least};

const INSTRUCTIONS: &str = "Patina searches the local git repositories registered with it \
(hybrid lexical + symbol + semantic retrieval, plus notes from earlier working sessions). \
Start with patina_query to locate code (it returns path:start-end locations); read exact lines \
with get_file, or call patina_context to get the relevant code itself, deduplicated, within a \
token budget. explore_structure shows a directory's layout and key files; list_repos what is \
indexed and how fresh it is. Record decisions and findings with patina_session_start / \
patina_session_note / patina_session_end: notes are stored durably and surface in later \
queries as session:<name>#<n>. Arguments shared by the tools that take them: `repo` is a \
repository's name, id or path (default: the repository of the working directory, else every one \
or the only one); `limit` is the number of results (at most 100); `role` keeps only files of \
these roles (source, test, docs, example, benchmark, generated, vendored, config, other; `!test` \
excludes one); `near` is a directory whose files rank higher; `blame: true` adds the commit that \
last changed each result's lines; `complete: true` makes a failed or timed-out oracle an error \
instead of an answer without it (named in the notices); `licence` keeps only files under these \
SPDX licences (`MIT,Apache-2.0`; unknown licences are left out) and `no_copyleft: true` leaves \
out GPL, AGPL, LGPL, MPL and EPL files.";

/// Handle one line from stdin: parse it, answer protocol errors at once, run requests as tasks
/// (tracked in `inflight` by id so they can be cancelled) and handle notifications inline.
pub(crate) fn dispatch(
    state: &Arc<State>,
    out: &Out,
    bytes: &[u8],
    inflight: &mut HashMap<String, tokio::task::AbortHandle>,
) {
    let Ok(text) = std::str::from_utf8(bytes) else {
        out.send(&error_response(
            Value::Null,
            PARSE_ERROR,
            "parse error: the message is not valid UTF-8",
        ));
        return;
    };
    if text.trim().is_empty() {
        return;
    }
    let msg: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            out.send(&error_response(
                Value::Null,
                PARSE_ERROR,
                &format!("parse error: {e}"),
            ));
            return;
        }
    };
    if let Value::Array(items) = msg {
        if items.is_empty() {
            out.send(&error_response(
                Value::Null,
                INVALID_REQUEST,
                "invalid request: an empty batch",
            ));
            return;
        }
        let (state2, out2) = (state.clone(), out.clone());
        let task = tokio::spawn(async move {
            let mut responses = Vec::new();
            for item in items {
                match classify(item) {
                    Err(Some(e)) => responses.push(e),
                    Err(None) | Ok(Message::Response) => {}
                    Ok(Message::Notification { method, params }) => {
                        notification(&state2, &method, &params, None)
                    }
                    Ok(Message::Request { id, method, params }) => {
                        responses.push(respond(&state2, id, &method, params).await)
                    }
                }
            }
            if !responses.is_empty() {
                out2.send(&Value::Array(responses));
            }
        });
        let n = state.next_batch();
        inflight.insert(format!("batch#{n}"), task.abort_handle());
        return;
    }
    match classify(msg) {
        Err(Some(e)) => out.send(&e),
        Err(None) | Ok(Message::Response) => {}
        Ok(Message::Notification { method, params }) => {
            notification(state, &method, &params, Some(inflight))
        }
        Ok(Message::Request { id, method, params }) => {
            let key = id.to_string();
            let (state2, out2) = (state.clone(), out.clone());
            let task = tokio::spawn(async move {
                let response = respond(&state2, id, &method, params).await;
                out2.send(&response);
            });
            inflight.insert(key, task.abort_handle());
        }
    }
}

fn notification(
    _state: &State,
    method: &str,
    params: &Map<String, Value>,
    inflight: Option<&mut HashMap<String, tokio::task::AbortHandle>>,
) {
    match method {
        "notifications/cancelled" => {
            if let (Some(id), Some(inflight)) = (params.get("requestId"), inflight)
                && let Some(task) = inflight.remove(&id.to_string())
            {
                // A cancelled request gets no response.
                task.abort();
            }
        }
        "notifications/initialized" => {}
        other if debug_enabled() => log(format!("ignoring notification {other}")),
        _ => {}
    }
}

async fn respond(state: &State, id: Value, method: &str, params: Map<String, Value>) -> Value {
    let outcome = match method {
        "initialize" => initialize(state, &params),
        "ping" => Ok(json!({})),
        "tools/list" => Ok(json!({"tools": tools::list(state.version())})),
        "tools/call" => tools_call(state, params).await,
        _ => Err((
            METHOD_NOT_FOUND,
            format!("method not found: '{method}' (this server offers tools only)"),
        )),
    };
    match outcome {
        Ok(result) => result_response(id, result),
        Err((code, message)) => error_response(id, code, &message),
    }
}

fn initialize(state: &State, params: &Map<String, Value>) -> Result<Value, (i64, String)> {
    let Some(requested) = params.get("protocolVersion").and_then(Value::as_str) else {
        return Err((
            INVALID_PARAMS,
            "invalid params for initialize: \"protocolVersion\" (a string) is required".into(),
        ));
    };
    let version = SUPPORTED_VERSIONS
        .iter()
        .copied()
        .find(|v| *v == requested)
        .unwrap_or(LATEST_VERSION);
    state.set_version(version);
    let mut info = json!({"name": "patina-mcp", "version": env!("CARGO_PKG_VERSION")});
    if at_least(version, "2025-06-18") {
        info["title"] = json!("Patina code search");
    }
    Ok(json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": false}},
        "serverInfo": info,
        "instructions": INSTRUCTIONS,
    }))
}

async fn tools_call(state: &State, params: Map<String, Value>) -> Result<Value, (i64, String)> {
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return Err((
            INVALID_PARAMS,
            "invalid params for tools/call: \"name\" (a string) is required".into(),
        ));
    };
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(a)) => a.clone(),
        Some(_) => {
            return Err((
                INVALID_PARAMS,
                "invalid params for tools/call: \"arguments\" must be an object".into(),
            ));
        }
    };
    let Some(tool) = tools::find(name) else {
        return Err((
            INVALID_PARAMS,
            format!(
                "unknown tool '{name}'; available tools: {}",
                tools::names().join(", ")
            ),
        ));
    };
    let outcome = tools::call(state, tool, arguments).await;
    Ok(content::result(outcome, state.version()))
}
