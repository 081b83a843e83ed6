//! The MCP layer: JSON-RPC 2.0 messages and errors, protocol version negotiation, and the methods
//! (`initialize`, `ping`, `tools/list`, `tools/call`, the `initialized` and `cancelled`
//! notifications). Malformed input is answered with the JSON-RPC error codes and never stops the
//! server; a tool that fails returns a result with `isError: true` (see `tools/`).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};

use crate::Out;
use crate::tools;
use patina_proto::daemon::Daemon;

pub(crate) const PARSE_ERROR: i64 = -32700;
pub(crate) const INVALID_REQUEST: i64 = -32600;
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
pub(crate) const INVALID_PARAMS: i64 = -32602;

/// The protocol revisions served, newest first. A client asking for another one is offered the
/// newest (as the specification prescribes); it may then disconnect.
pub(crate) const SUPPORTED_VERSIONS: [&str; 3] = ["2025-06-18", "2025-03-26", "2024-11-05"];
pub(crate) const LATEST_VERSION: &str = SUPPORTED_VERSIONS[0];

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

/// State shared by every request.
pub(crate) struct Server {
    pub daemon: Daemon,
    version: Mutex<&'static str>,
    /// The session this client started or used last: the default of the session tools.
    pub session: Mutex<Option<String>>,
    batches: AtomicU64,
    /// Recent answers of this connection, for implicit feedback (`tools/feedback.rs`).
    pub answers: Mutex<std::collections::VecDeque<tools::feedback::Answer>>,
}

impl Server {
    pub fn new(socket: PathBuf) -> Server {
        Server {
            daemon: Daemon::new(socket, "patina-mcp"),
            version: Mutex::new(LATEST_VERSION),
            session: Mutex::new(None),
            batches: AtomicU64::new(0),
            answers: Mutex::new(Default::default()),
        }
    }

    /// The negotiated protocol version (the newest until `initialize`).
    pub fn version(&self) -> &'static str {
        *self.version.lock().expect("version lock")
    }
}

/// Is `version` at least `min`? (Revisions are dates, so they compare as strings.)
pub(crate) fn at_least(version: &str, min: &str) -> bool {
    version >= min
}

pub(crate) fn error_response(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn result_response(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

pub(crate) enum Message {
    Request {
        id: Value,
        method: String,
        params: Map<String, Value>,
    },
    Notification {
        method: String,
        params: Map<String, Value>,
    },
    /// A response or error from the client: we send no requests, so it is ignored.
    Response,
}

/// Validate the envelope. `Err` carries the error response to send (`None` for a broken
/// notification, which gets no answer).
pub(crate) fn classify(msg: Value) -> Result<Message, Option<Value>> {
    let Value::Object(mut m) = msg else {
        return Err(Some(error_response(
            Value::Null,
            INVALID_REQUEST,
            "invalid request: a message must be a JSON object",
        )));
    };
    let id = m.remove("id");
    let id_valid = matches!(id, None | Some(Value::String(_)) | Some(Value::Number(_)));
    let reply_id = match &id {
        Some(v @ (Value::String(_) | Value::Number(_))) => v.clone(),
        _ => Value::Null,
    };
    let is_notification = id.is_none();
    let fail = |code: i64, msg: &str| {
        if is_notification {
            crate::log(format!("ignoring a malformed notification: {msg}"));
            Err(None)
        } else {
            Err(Some(error_response(reply_id.clone(), code, msg)))
        }
    };
    if m.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return fail(
            INVALID_REQUEST,
            "invalid request: \"jsonrpc\" must be \"2.0\"",
        );
    }
    if !id_valid {
        return Err(Some(error_response(
            Value::Null,
            INVALID_REQUEST,
            "invalid request: \"id\" must be a string or a number",
        )));
    }
    let method = match m.remove("method") {
        Some(Value::String(method)) => method,
        Some(_) => {
            return fail(
                INVALID_REQUEST,
                "invalid request: \"method\" must be a string",
            );
        }
        None if m.contains_key("result") || m.contains_key("error") => {
            return Ok(Message::Response);
        }
        None => return fail(INVALID_REQUEST, "invalid request: \"method\" is missing"),
    };
    let params = match m.remove("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(p)) => p,
        Some(_) => {
            return fail(
                INVALID_PARAMS,
                &format!("invalid params for {method}: \"params\" must be an object"),
            );
        }
    };
    Ok(match id {
        Some(id) => Message::Request { id, method, params },
        None => Message::Notification { method, params },
    })
}

/// Handle one line from stdin: parse it, answer protocol errors at once, run requests as tasks
/// (tracked in `inflight` by id so they can be cancelled) and handle notifications inline.
pub(crate) fn dispatch(
    server: &Arc<Server>,
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
        let (server2, out2) = (server.clone(), out.clone());
        let task = tokio::spawn(async move {
            let mut responses = Vec::new();
            for item in items {
                match classify(item) {
                    Err(Some(e)) => responses.push(e),
                    Err(None) | Ok(Message::Response) => {}
                    Ok(Message::Notification { method, params }) => {
                        notification(&server2, &method, &params, None)
                    }
                    Ok(Message::Request { id, method, params }) => {
                        responses.push(respond(&server2, id, &method, params).await)
                    }
                }
            }
            if !responses.is_empty() {
                out2.send(&Value::Array(responses));
            }
        });
        let n = server.batches.fetch_add(1, Ordering::Relaxed);
        inflight.insert(format!("batch#{n}"), task.abort_handle());
        return;
    }
    match classify(msg) {
        Err(Some(e)) => out.send(&e),
        Err(None) | Ok(Message::Response) => {}
        Ok(Message::Notification { method, params }) => {
            notification(server, &method, &params, Some(inflight))
        }
        Ok(Message::Request { id, method, params }) => {
            let key = id.to_string();
            let (server2, out2) = (server.clone(), out.clone());
            let task = tokio::spawn(async move {
                let response = respond(&server2, id, &method, params).await;
                out2.send(&response);
            });
            inflight.insert(key, task.abort_handle());
        }
    }
}

fn notification(
    _server: &Server,
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
        other if crate::debug_enabled() => crate::log(format!("ignoring notification {other}")),
        _ => {}
    }
}

async fn respond(server: &Server, id: Value, method: &str, params: Map<String, Value>) -> Value {
    let outcome = match method {
        "initialize" => initialize(server, &params),
        "ping" => Ok(json!({})),
        "tools/list" => Ok(json!({"tools": tools::list(server.version())})),
        "tools/call" => tools_call(server, params).await,
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

fn initialize(server: &Server, params: &Map<String, Value>) -> Result<Value, (i64, String)> {
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
    *server.version.lock().expect("version lock") = version;
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

async fn tools_call(server: &Server, params: Map<String, Value>) -> Result<Value, (i64, String)> {
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
    let outcome = tools::call(server, tool, arguments).await;
    Ok(tools::result(outcome, server.version()))
}
