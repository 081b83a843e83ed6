//! The dispatcher, on top of everything: the message loop, JSON-RPC and the LSP lifecycle —
//! `initialize` → `initialized` → … → `shutdown` → `exit`, requests before `initialize` (-32002)
//! or after `shutdown` (-32600), unknown methods (-32601), malformed frames and bodies (-32700),
//! cancellation, and the responses to the server's own requests. Bad input is answered and never
//! stops the server. Handlers (`methods`, `buffers`) get the [`State`], never the dispatcher.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use patina_lsp::framing::Frame;
use serde_json::{Map, Value};

use crate::jsonrpc::{
    INVALID_REQUEST, PARSE_ERROR, REQUEST_CANCELLED, SERVER_NOT_INITIALIZED, error_response,
    response,
};
use crate::logging::{debug_enabled, log};
use crate::state::State;
use crate::stdio::{Out, spawn_reader};

/// The lifecycle and the requests running, around the handlers' state.
struct Server {
    state: Arc<State>,
    initialized: AtomicBool,
    shut_down: AtomicBool,
    inflight: Mutex<HashMap<String, tokio::task::AbortHandle>>,
}

impl Server {
    fn is_shut_down(&self) -> bool {
        self.shut_down.load(Ordering::Relaxed)
    }

    /// Are requests still running?
    fn busy(&self) -> bool {
        let mut inflight = self.inflight.lock().expect("inflight lock");
        inflight.retain(|_, h| !h.is_finished());
        !inflight.is_empty()
    }

    fn send(&self, msg: &Value) {
        self.state.out.send(msg);
    }
}

/// Serve stdin/stdout until `exit` or the end of input; the exit code.
pub(crate) async fn serve(socket: PathBuf) -> ExitCode {
    let (in_tx, mut in_rx) = tokio::sync::mpsc::channel::<Frame>(64);
    spawn_reader(in_tx);
    let (out, writer) = Out::spawn();
    let state = Arc::new(State::new(socket, out.clone()));
    {
        let state = state.clone();
        tokio::spawn(async move {
            if let Err(e) = state.daemon.warm_up().await {
                log(format!("daemon not reachable yet: {e}"));
            }
        });
    }
    crate::buffers::spawn_worker(state.clone());
    let server = Arc::new(Server {
        state,
        initialized: AtomicBool::new(false),
        shut_down: AtomicBool::new(false),
        inflight: Mutex::new(HashMap::new()),
    });
    let mut exit = None;
    while let Some(frame) = in_rx.recv().await {
        if let Some(code) = dispatch(&server, frame) {
            exit = Some(code);
            break;
        }
    }
    // `exit` (or the end of input): give running requests a moment, flush and leave. Without a
    // `shutdown` first the exit code is 1, as the protocol prescribes.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(2);
    while server.busy() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    out.close();
    let _ = writer.join();
    let code = exit.unwrap_or(if server.is_shut_down() { 0 } else { 1 });
    ExitCode::from(code)
}

/// Handle one frame. Returns the exit code when the client sent `exit`.
fn dispatch(server: &Arc<Server>, frame: Frame) -> Option<u8> {
    let body = match frame {
        Frame::Malformed(why) => {
            log(format!("malformed frame: {why}"));
            server.send(&error_response(
                Value::Null,
                PARSE_ERROR,
                &format!("parse error: {why}"),
            ));
            return None;
        }
        Frame::Message(body) => body,
    };
    if debug_enabled() {
        let text = String::from_utf8_lossy(&body);
        log(format!("<- {}", &text[..text.floor_char_boundary(2000)]));
    }
    let msg: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            server.send(&error_response(
                Value::Null,
                PARSE_ERROR,
                &format!("parse error: {e}"),
            ));
            return None;
        }
    };
    let Value::Object(mut m) = msg else {
        server.send(&error_response(
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
            server.state.resolve(&id, Value::Object(m));
            None
        }
        (None, Some(Value::String(method))) => notification(server, &method, params),
        (Some(id), Some(Value::String(method))) => {
            request(server, id, method, params);
            None
        }
        (id, _) => {
            server.send(&error_response(
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
            let state = server.state.clone();
            tokio::spawn(async move { crate::methods::initialized(&state).await });
        }
        "$/cancelRequest" => {
            if let Some(task) = server
                .inflight
                .lock()
                .expect("inflight lock")
                .remove(&params["id"].to_string())
            {
                task.abort();
                server.send(&error_response(
                    params["id"].clone(),
                    REQUEST_CANCELLED,
                    "request cancelled",
                ));
            }
        }
        "textDocument/didOpen"
        | "textDocument/didChange"
        | "textDocument/didSave"
        | "textDocument/didClose" => crate::buffers::text_sync(&server.state, method, &params),
        other if debug_enabled() => log(format!("ignoring notification {other}")),
        _ => {}
    }
    None
}

fn request(server: &Arc<Server>, id: Value, method: String, params: Value) {
    if server.is_shut_down() && method != "shutdown" {
        server.send(&response(
            id,
            Err((
                INVALID_REQUEST,
                format!("'{method}' after shutdown: only exit is accepted now"),
            )),
        ));
        return;
    }
    match method.as_str() {
        "initialize" if server.initialized.load(Ordering::Relaxed) => {
            server.send(&response(
                id,
                Err((INVALID_REQUEST, "initialize was already called".into())),
            ));
            return;
        }
        "initialize" => {
            let r = crate::methods::initialize(&server.state, &params);
            if r.is_ok() {
                server.initialized.store(true, Ordering::Relaxed);
            }
            server.send(&response(id, r));
            return;
        }
        _ if !server.initialized.load(Ordering::Relaxed) => {
            server.send(&response(
                id,
                Err((
                    SERVER_NOT_INITIALIZED,
                    format!("'{method}' before initialize"),
                )),
            ));
            return;
        }
        "shutdown" => {
            server.shut_down.store(true, Ordering::Relaxed);
            server.send(&response(id, Ok(Value::Null)));
            return;
        }
        _ => {}
    }
    // Requests see every buffer change sent before them.
    let seen = server.state.overlays.sent();
    let key = id.to_string();
    let server2 = server.clone();
    let task = tokio::spawn(async move {
        let state = &server2.state;
        state.overlays.wait_applied(seen).await;
        let result = crate::methods::call(state, &method, params).await;
        server2.send(&response(id.clone(), result));
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
