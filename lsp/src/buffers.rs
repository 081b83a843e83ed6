//! Text synchronisation: the editor's open documents, and their unsaved text forwarded to the
//! daemon as overlays (`Buffers.SetBuffer`) by one task, in order, coalescing bursts of edits to a
//! file into its latest text. `didChange` sets the overlay of the file, `didSave` clears it (the
//! saved file is indexed from disk at once: read-your-writes before the watcher fires), `didClose`
//! clears it if the buffer had unsaved changes. Every request waits until the changes sent before
//! it are indexed ([`Buffers::wait_applied`]), so a search right after an edit finds it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use patina_proto::v1 as pb;
use serde_json::Value;
use tokio::sync::{mpsc, watch};

use crate::convert::{apply_change, uri_to_path};
use crate::server::{Doc, Server};

/// How long the daemon may take to index one buffer before the request goes on without it.
const INDEX_WAIT: Duration = Duration::from_secs(10);

/// One overlay change: the file's new text, or `None` to drop the overlay.
struct Op {
    seq: u64,
    path: String,
    text: Option<String>,
}

pub(crate) struct Buffers {
    sent: AtomicU64,
    applied: watch::Sender<u64>,
    tx: mpsc::UnboundedSender<Op>,
    rx: Mutex<Option<mpsc::UnboundedReceiver<Op>>>,
}

impl Buffers {
    pub fn new() -> Buffers {
        let (tx, rx) = mpsc::unbounded_channel();
        Buffers {
            sent: AtomicU64::new(0),
            applied: watch::Sender::new(0),
            tx,
            rx: Mutex::new(Some(rx)),
        }
    }

    /// The sequence number of the last change queued.
    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::SeqCst)
    }

    /// Wait until every change up to `seq` was handed to the daemon (and indexed, or timed out).
    pub async fn wait_applied(&self, seq: u64) {
        let mut rx = self.applied.subscribe();
        let _ = tokio::time::timeout(INDEX_WAIT * 2, rx.wait_for(|a| *a >= seq)).await;
    }

    fn queue(&self, path: String, text: Option<String>) {
        let seq = self.sent.fetch_add(1, Ordering::SeqCst) + 1;
        let _ = self.tx.send(Op { seq, path, text });
    }
}

/// Handle a text synchronisation notification.
pub(crate) fn text_sync(server: &Server, method: &str, params: &Value) {
    let doc = &params["textDocument"];
    let Some(uri) = doc["uri"].as_str() else {
        crate::log(format!("{method} without textDocument.uri"));
        return;
    };
    let path = uri_to_path(uri).map(|p| p.to_string_lossy().into_owned());
    let mut docs = server.docs.lock().expect("docs lock");
    match method {
        "textDocument/didOpen" => {
            let text = doc["text"].as_str().unwrap_or_default().to_string();
            docs.insert(uri.to_string(), Doc { text, dirty: false });
        }
        "textDocument/didChange" => {
            let Some(d) = docs.get_mut(uri) else {
                crate::log(format!("didChange of {uri}, which is not open"));
                return;
            };
            for change in params["contentChanges"].as_array().into_iter().flatten() {
                apply_change(&mut d.text, change);
            }
            d.dirty = true;
            if let Some(path) = path {
                server.buffers.queue(path, Some(d.text.clone()));
            }
        }
        "textDocument/didSave" => {
            if let Some(d) = docs.get_mut(uri) {
                if let Some(text) = params["text"].as_str() {
                    d.text = text.to_string();
                }
                d.dirty = false;
            }
            if let Some(path) = path {
                server.buffers.queue(path, None);
            }
        }
        "textDocument/didClose" => {
            if docs.remove(uri).is_some_and(|d| d.dirty)
                && let Some(path) = path
            {
                server.buffers.queue(path, None);
            }
        }
        _ => {}
    }
}

/// Start the task that forwards overlay changes to the daemon.
pub(crate) fn spawn_worker(server: Arc<Server>) {
    let Some(mut rx) = server.buffers.rx.lock().expect("rx lock").take() else {
        return;
    };
    tokio::spawn(async move {
        while let Some(first) = rx.recv().await {
            // Coalesce what is queued: the latest change of each file wins.
            let mut last_seq = first.seq;
            let mut latest: BTreeMap<String, Option<String>> = BTreeMap::new();
            latest.insert(first.path, first.text);
            while let Ok(op) = rx.try_recv() {
                last_seq = op.seq;
                latest.insert(op.path, op.text);
            }
            for (path, text) in latest {
                let req = pb::SetBufferRequest {
                    path: path.clone(),
                    clear: text.is_none(),
                    text: text.unwrap_or_default(),
                    wait_ms: INDEX_WAIT.as_millis() as u32,
                };
                let res = server
                    .daemon
                    .call(|ch| {
                        let req = req.clone();
                        async move {
                            pb::buffers_client::BuffersClient::new(ch)
                                .set_buffer(req)
                                .await
                                .map(tonic::Response::into_inner)
                        }
                    })
                    .await;
                match res {
                    Ok(r) if !r.indexed => {
                        crate::log(format!("{path}: not indexed within {INDEX_WAIT:?}"))
                    }
                    Ok(_) => {}
                    // Files outside the registered repositories are not indexed: nothing to do.
                    Err(e) if crate::debug_enabled() => crate::log(format!("{path}: {e}")),
                    Err(_) => {}
                }
            }
            server.applied_to(last_seq);
        }
    });
}

impl Server {
    fn applied_to(&self, seq: u64) {
        self.buffers.applied.send_replace(seq);
    }
}
