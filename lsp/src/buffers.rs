//! Text synchronisation: the editor's open documents, and their unsaved text forwarded to the
//! daemon as overlays (`Buffers.SetBuffer`) by one task, in order, coalescing bursts of edits to a
//! file into its latest text. `didChange` sets the overlay of the file, `didSave` clears it (the
//! saved file is indexed from disk at once: read-your-writes before the watcher fires), `didClose`
//! clears it if the buffer had unsaved changes. Every request waits until the changes sent before
//! it are indexed (`Overlays::wait_applied`), so a search right after an edit finds it.

use std::collections::BTreeMap;
use std::sync::Arc;

use patina_proto::v1 as pb;
use serde_json::Value;

use crate::convert::{apply_change, uri_to_path};
use crate::logging::{debug_enabled, log};
use crate::overlays::INDEX_WAIT;
use crate::state::{Doc, State};

/// Handle a text synchronisation notification.
pub(crate) fn text_sync(state: &State, method: &str, params: &Value) {
    let doc = &params["textDocument"];
    let Some(uri) = doc["uri"].as_str() else {
        log(format!("{method} without textDocument.uri"));
        return;
    };
    let path = uri_to_path(uri).map(|p| p.to_string_lossy().into_owned());
    let mut docs = state.docs.lock().expect("docs lock");
    match method {
        "textDocument/didOpen" => {
            let text = doc["text"].as_str().unwrap_or_default().to_string();
            docs.insert(uri.to_string(), Doc { text, dirty: false });
        }
        "textDocument/didChange" => {
            let Some(d) = docs.get_mut(uri) else {
                log(format!("didChange of {uri}, which is not open"));
                return;
            };
            for change in params["contentChanges"].as_array().into_iter().flatten() {
                apply_change(&mut d.text, change);
            }
            d.dirty = true;
            if let Some(path) = path {
                state.overlays.queue(path, Some(d.text.clone()));
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
                state.overlays.queue(path, None);
            }
        }
        "textDocument/didClose" => {
            if docs.remove(uri).is_some_and(|d| d.dirty)
                && let Some(path) = path
            {
                state.overlays.queue(path, None);
            }
        }
        _ => {}
    }
}

/// Start the task that forwards overlay changes to the daemon.
pub(crate) fn spawn_worker(state: Arc<State>) {
    let Some(mut rx) = state.overlays.take_receiver() else {
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
                let res = state
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
                        log(format!("{path}: not indexed within {INDEX_WAIT:?}"))
                    }
                    Ok(_) => {}
                    // Files outside the registered repositories are not indexed: nothing to do.
                    Err(e) if debug_enabled() => log(format!("{path}: {e}")),
                    Err(_) => {}
                }
            }
            state.overlays.applied_to(last_seq);
        }
    });
}
