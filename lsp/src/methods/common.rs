//! What the methods share: calling the daemon (`rpc!`), the parameters they read, the search
//! they run, and how a hit or a document is read.

use std::path::Path;

use patina_proto::v1 as pb;
use serde_json::Value;

use crate::convert::{name_line, uri_to_path};
use crate::jsonrpc::{Failure, INVALID_PARAMS};
use crate::state::State;

/// Lines of each hit read to find the line that names its symbol (below its doc comment).
pub(crate) const NAME_LINES: u32 = 12;

/// Call a daemon method through the state's channel; a failure is `RequestFailed`.
macro_rules! rpc {
    ($state:expr, $client:ty, $method:ident, $req:expr) => {{
        let req = $req;
        $state
            .daemon
            .call(|ch| {
                let req = req.clone();
                async move {
                    <$client>::new(ch)
                        .$method(req)
                        .await
                        .map(tonic::Response::into_inner)
                }
            })
            .await
            .map_err(|e| ($crate::jsonrpc::REQUEST_FAILED, e))
    }};
}
pub(crate) use rpc;

/// The string parameter `key` of `method`.
pub(crate) fn str_param<'a>(
    params: &'a Value,
    key: &str,
    method: &str,
) -> Result<&'a str, Failure> {
    params[key].as_str().ok_or_else(|| {
        (
            INVALID_PARAMS,
            format!("invalid params for {method}: \"{key}\" (a string) is required"),
        )
    })
}

pub(crate) async fn query(
    state: &State,
    req: pb::QueryRequest,
) -> Result<pb::QueryResponse, Failure> {
    rpc!(state, pb::search_client::SearchClient<_>, query, req)
}

/// The line that names a hit's symbol (its first line when it has none, or it is not found).
pub(crate) fn hit_line(h: &pb::Hit) -> u32 {
    let lines: Vec<&str> = h.snippet.lines().collect();
    name_line(&lines, &h.symbol).map_or(h.start_line, |i| h.start_line + i as u32)
}

/// A hit's display name: its symbol, else `file:line`.
pub(crate) fn hit_name(h: &pb::Hit) -> String {
    if h.symbol.is_empty() {
        let file = h.path.rsplit('/').next().unwrap_or(&h.path);
        format!("{file}:{}", h.start_line)
    } else {
        h.symbol.clone()
    }
}

/// The largest file read from disk for a document the editor has not sent.
const MAX_DOC_BYTES: u64 = 16 * 1024 * 1024;

/// The text of a document: as the editor sent it, else read from disk beneath the workspace
/// folder that holds it ([`text_beneath`]); a file outside every folder is not read.
pub(crate) fn doc_text(state: &State, uri: &str) -> Option<String> {
    if let Some(d) = state.docs.lock().expect("docs lock").get(uri) {
        return Some(d.text.clone());
    }
    let path = uri_to_path(uri)?;
    let roots = state.roots.lock().expect("roots lock").clone();
    roots.iter().find_map(|root| {
        let rel = path.strip_prefix(root).ok()?;
        text_beneath(root, rel)
    })
}

/// The text of `rel` beneath `root` as the editor shows it: its open buffer, else the file,
/// opened beneath `root` following no link (`patina_confined`), at most [`MAX_DOC_BYTES`].
pub(crate) fn doc_text_in(state: &State, root: &Path, rel: &str) -> Option<String> {
    let uri = crate::convert::path_to_uri(&root.join(rel));
    if let Some(d) = state.docs.lock().expect("docs lock").get(&uri) {
        return Some(d.text.clone());
    }
    text_beneath(root, Path::new(rel))
}

fn text_beneath(root: &Path, rel: &Path) -> Option<String> {
    let bytes = patina_confined::read(root, rel, MAX_DOC_BYTES).ok()?;
    if bytes.len() as u64 > MAX_DOC_BYTES {
        return None;
    }
    String::from_utf8(bytes).ok()
}
