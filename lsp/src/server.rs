//! JSON-RPC 2.0 and the LSP lifecycle: envelopes and error codes, `initialize` → `initialized` →
//! … → `shutdown` → `exit`, requests before `initialize` (-32002) or after `shutdown` (-32600),
//! unknown methods (-32601), malformed frames and bodies (-32700), server-to-client requests and
//! their responses. Bad input is answered and never stops the server.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::Out;
use crate::buffers::Buffers;
use patina_lsp::framing::Frame;
use patina_proto::daemon::Daemon;

pub(crate) const PARSE_ERROR: i64 = -32700;
pub(crate) const INVALID_REQUEST: i64 = -32600;
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
pub(crate) const INVALID_PARAMS: i64 = -32602;
pub(crate) const SERVER_NOT_INITIALIZED: i64 = -32002;
pub(crate) const REQUEST_FAILED: i64 = -32803;

/// A method's failure: a JSON-RPC error code and message.
pub(crate) type Failure = (i64, String);

/// An open document as the editor last sent it.
pub(crate) struct Doc {
    pub text: String,
    /// Changed since it was opened or saved: its overlay is set in the daemon.
    pub dirty: bool,
}

/// State shared by every request.
pub(crate) struct Server {
    pub daemon: Daemon,
    pub out: Out,
    pub docs: Mutex<HashMap<String, Doc>>,
    pub buffers: Buffers,
    /// The workspace folders (from `initialize`).
    pub roots: Mutex<Vec<PathBuf>>,
    /// Repository ids searched (those of the workspace folders); empty = every repository.
    pub scope: Mutex<Vec<String>>,
    /// The client's `initialize` params (`capabilities`, `initializationOptions`).
    pub client: Mutex<Value>,
    initialized: AtomicBool,
    shut_down: AtomicBool,
    inflight: Mutex<HashMap<String, tokio::task::AbortHandle>>,
    /// Responses awaited to our own requests, by id.
    pending: Mutex<HashMap<String, tokio::sync::oneshot::Sender<Value>>>,
    next_id: AtomicU64,
}

impl Server {
    pub fn new(socket: PathBuf, out: Out) -> Server {
        Server {
            daemon: Daemon::new(socket, "patina-lsp"),
            out,
            docs: Mutex::new(HashMap::new()),
            buffers: Buffers::new(),
            roots: Mutex::new(Vec::new()),
            scope: Mutex::new(Vec::new()),
            client: Mutex::new(Value::Null),
            initialized: AtomicBool::new(false),
            shut_down: AtomicBool::new(false),
            inflight: Mutex::new(HashMap::new()),
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
        }
    }

    pub fn is_shut_down(&self) -> bool {
        self.shut_down.load(Ordering::Relaxed)
    }

    /// Are requests still running?
    pub fn busy(&self) -> bool {
        let mut inflight = self.inflight.lock().expect("inflight lock");
        inflight.retain(|_, h| !h.is_finished());
        !inflight.is_empty()
    }

    pub fn notify(&self, method: &str, params: Value) {
        self.out
            .send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Send a request to the client and wait (at most `timeout`) for its result.
    pub async fn request(&self, method: &str, params: Value, timeout: Duration) -> Option<Value> {
        let id = format!("patina-{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.pending
            .lock()
            .expect("pending lock")
            .insert(json!(id).to_string(), tx);
        self.out
            .send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let answer = tokio::time::timeout(timeout, rx).await.ok()?.ok()?;
        answer
            .get("error")
            .is_none()
            .then(|| answer["result"].clone())
    }

    /// Does the client accept `$/progress` (window.workDoneProgress)?
    pub fn client_supports_progress(&self) -> bool {
        self.client.lock().expect("client lock")["capabilities"]["window"]["workDoneProgress"]
            == json!(true)
    }
}

pub(crate) fn error_response(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// Handle one frame. Returns the exit code when the client sent `exit`.
pub(crate) fn dispatch(server: &Arc<Server>, frame: Frame) -> Option<u8> {
    let body = match frame {
        Frame::Malformed(why) => {
            crate::log(format!("malformed frame: {why}"));
            server.out.send(&error_response(
                Value::Null,
                PARSE_ERROR,
                &format!("parse error: {why}"),
            ));
            return None;
        }
        Frame::Message(body) => body,
    };
    if crate::debug_enabled() {
        let text = String::from_utf8_lossy(&body);
        crate::log(format!("<- {}", &text[..text.floor_char_boundary(2000)]));
    }
    let msg: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            server.out.send(&error_response(
                Value::Null,
                PARSE_ERROR,
                &format!("parse error: {e}"),
            ));
            return None;
        }
    };
    let Value::Object(mut m) = msg else {
        server.out.send(&error_response(
            Value::Null,
            INVALID_REQUEST,
            "invalid request: a message must be a JSON object",
        ));
        return None;
    };
    let id = m.remove("id");
    let method = m.remove("method");
    let params = match m.remove("params") {
        Some(Value::Object(p)) => Value::Object(p),
        Some(Value::Array(a)) => Value::Array(a),
        _ => Value::Object(Map::new()),
    };
    match (id, method) {
        // A response to one of our requests.
        (Some(id), None) => {
            if let Some(tx) = server
                .pending
                .lock()
                .expect("pending lock")
                .remove(&id.to_string())
            {
                let _ = tx.send(Value::Object(m));
            }
            None
        }
        (None, Some(Value::String(method))) => notification(server, &method, params),
        (Some(id), Some(Value::String(method))) => {
            request(server, id, method, params);
            None
        }
        (id, _) => {
            server.out.send(&error_response(
                id.unwrap_or(Value::Null),
                INVALID_REQUEST,
                "invalid request: \"method\" must be a string",
            ));
            None
        }
    }
}

fn notification(server: &Arc<Server>, method: &str, params: Value) -> Option<u8> {
    match method {
        "exit" => return Some(if server.is_shut_down() { 0 } else { 1 }),
        "initialized" => {
            let server = server.clone();
            tokio::spawn(async move { crate::methods::initialized(&server).await });
        }
        "$/cancelRequest" => {
            if let Some(task) = server
                .inflight
                .lock()
                .expect("inflight lock")
                .remove(&params["id"].to_string())
            {
                task.abort();
                server.out.send(&error_response(
                    params["id"].clone(),
                    -32800,
                    "request cancelled",
                ));
            }
        }
        "textDocument/didOpen"
        | "textDocument/didChange"
        | "textDocument/didSave"
        | "textDocument/didClose" => crate::buffers::text_sync(server, method, &params),
        other if crate::debug_enabled() => crate::log(format!("ignoring notification {other}")),
        _ => {}
    }
    None
}

fn request(server: &Arc<Server>, id: Value, method: String, params: Value) {
    let reply = |result: Result<Value, Failure>| match result {
        Ok(r) => json!({"jsonrpc": "2.0", "id": id, "result": r}),
        Err((code, msg)) => error_response(id.clone(), code, &msg),
    };
    if server.is_shut_down() && method != "shutdown" {
        server.out.send(&reply(Err((
            INVALID_REQUEST,
            format!("'{method}' after shutdown: only exit is accepted now"),
        ))));
        return;
    }
    match method.as_str() {
        "initialize" if server.initialized.load(Ordering::Relaxed) => {
            server.out.send(&reply(Err((
                INVALID_REQUEST,
                "initialize was already called".into(),
            ))));
            return;
        }
        "initialize" => {
            let r = crate::methods::initialize(server, &params);
            if r.is_ok() {
                server.initialized.store(true, Ordering::Relaxed);
            }
            server.out.send(&reply(r));
            return;
        }
        _ if !server.initialized.load(Ordering::Relaxed) => {
            server.out.send(&reply(Err((
                SERVER_NOT_INITIALIZED,
                format!("'{method}' before initialize"),
            ))));
            return;
        }
        "shutdown" => {
            server.shut_down.store(true, Ordering::Relaxed);
            server.out.send(&reply(Ok(Value::Null)));
            return;
        }
        _ => {}
    }
    // Requests see every buffer change sent before them.
    let seen = server.buffers.sent();
    let key = id.to_string();
    let server2 = server.clone();
    let task = tokio::spawn(async move {
        server2.buffers.wait_applied(seen).await;
        let result = crate::methods::call(&server2, &method, params).await;
        let response = match result {
            Ok(r) => json!({"jsonrpc": "2.0", "id": id, "result": r}),
            Err((code, msg)) => error_response(id.clone(), code, &msg),
        };
        server2.out.send(&response);
        server2
            .inflight
            .lock()
            .expect("inflight lock")
            .remove(&id.to_string());
    });
    server
        .inflight
        .lock()
        .expect("inflight lock")
        .insert(key, task.abort_handle());
}
