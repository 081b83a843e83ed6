//! The server's state, shared by every handler: the daemon channel, the open documents and their
//! overlay queue, the workspace (folders and the repositories searched), what the client said in
//! `initialize`, and the way out to the client — notifications, and requests whose responses the
//! dispatcher hands back ([`State::resolve`]). It knows neither the dispatcher nor the handlers.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use lsp_types::notification::Notification;
use lsp_types::request::Request;
use patina_proto::daemon::Daemon;
use serde_json::{Value, json};

use crate::jsonrpc;
use crate::overlays::Overlays;
use crate::stdio::Out;

/// An open document as the editor last sent it.
pub(crate) struct Doc {
    pub text: String,
    /// Changed since it was opened or saved: its overlay is set in the daemon.
    pub dirty: bool,
}

/// How long a request waits for `initialized` to resolve the workspace folders.
const SCOPE_WAIT: Duration = Duration::from_secs(10);

/// State shared by every request.
pub(crate) struct State {
    pub daemon: Daemon,
    pub out: Out,
    pub docs: Mutex<HashMap<String, Doc>>,
    pub overlays: Overlays,
    /// The workspace folders (from `initialize`).
    pub roots: Mutex<Vec<PathBuf>>,
    /// Repository ids searched (those of the workspace folders); empty = every repository, but
    /// see [`State::scope`].
    pub scope: Mutex<Vec<String>>,
    /// Set once `initialized` has resolved the workspace folders to repositories.
    scope_ready: tokio::sync::watch::Sender<bool>,
    /// The client's `initialize` params (`capabilities`, `initializationOptions`).
    pub client: Mutex<Value>,
    /// Responses awaited to our own requests, by id.
    pending: Mutex<HashMap<String, tokio::sync::oneshot::Sender<Value>>>,
    next_id: AtomicU64,
}

impl State {
    pub fn new(socket: PathBuf, out: Out) -> State {
        State {
            daemon: Daemon::new(socket, "patina-lsp"),
            out,
            docs: Mutex::new(HashMap::new()),
            overlays: Overlays::new(),
            roots: Mutex::new(Vec::new()),
            scope: Mutex::new(Vec::new()),
            scope_ready: tokio::sync::watch::Sender::new(false),
            client: Mutex::new(Value::Null),
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
        }
    }

    /// The repositories searched: those of the workspace folders. A request that comes before
    /// `initialized` has found them waits for it (at most [`SCOPE_WAIT`]), so the first search
    /// is as scoped as every later one. Folders that no registered repository holds (yet: being
    /// registered, or not a repository) are searched by their paths, which the daemon resolves or
    /// refuses; only an editor without workspace folders searches every repository.
    pub async fn scope(&self) -> Vec<String> {
        let mut ready = self.scope_ready.subscribe();
        if tokio::time::timeout(SCOPE_WAIT, ready.wait_for(|r| *r))
            .await
            .is_err()
        {
            // No `initialized` (a client that skips it): wait once, not on every request.
            self.scope_resolved();
        }
        let ids = self.scope.lock().expect("scope lock").clone();
        if !ids.is_empty() {
            return ids;
        }
        self.roots
            .lock()
            .expect("roots lock")
            .iter()
            .map(|r| r.to_string_lossy().into_owned())
            .collect()
    }

    /// The workspace folders are resolved ([`State::scope`] stops waiting).
    pub fn scope_resolved(&self) {
        self.scope_ready.send_replace(true);
    }

    /// Send notification `N` to the client.
    pub fn notify<N: Notification>(&self, params: N::Params) {
        let params = serde_json::to_value(params).unwrap_or(Value::Null);
        self.out.send(&jsonrpc::notification(N::METHOD, params));
    }

    /// Send request `R` to the client and wait (at most `timeout`) for its result.
    pub async fn request<R: Request>(&self, params: R::Params, timeout: Duration) -> Option<Value> {
        let id = format!("patina-{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.pending
            .lock()
            .expect("pending lock")
            .insert(json!(id).to_string(), tx);
        let params = serde_json::to_value(params).unwrap_or(Value::Null);
        self.out.send(&jsonrpc::request(&id, R::METHOD, params));
        let answer = tokio::time::timeout(timeout, rx).await.ok()?.ok()?;
        answer
            .get("error")
            .is_none()
            .then(|| answer["result"].clone())
    }

    /// The client's response (`result` or `error`) to our request `id`.
    pub fn resolve(&self, id: &Value, answer: Value) {
        if let Some(tx) = self
            .pending
            .lock()
            .expect("pending lock")
            .remove(&id.to_string())
        {
            let _ = tx.send(answer);
        }
    }

    /// Does the client accept `$/progress` (window.workDoneProgress)?
    pub fn client_supports_progress(&self) -> bool {
        self.client.lock().expect("client lock")["capabilities"]["window"]["workDoneProgress"]
            == json!(true)
    }
}
