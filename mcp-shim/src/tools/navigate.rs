//! What the graph tools (`find_references`, `call_graph`, `definition`) share: the
//! `Graph.Navigate` call, its output schema and its rendering.

use std::fmt::Write as _;

use patina_proto::v1 as pb;
use serde_json::{Value, json};

use crate::content::{Outcome, ToolResult};
use crate::state::State;
use crate::tools::common::*;

pub(super) fn output() -> Value {
    json!({
        "type": "object",
        "properties": {
            "sites": {"type": "array", "items": {"type": "object", "properties": {
                "repo": {"type": "string"}, "path": {"type": "string"},
                "line": {"type": "integer"}, "end_line": {"type": "integer"},
                "symbol": {"type": "string"}, "kind": {"type": "string"},
                "resolution": {"type": "string"}, "target": {"type": "string"},
                "call": {"type": "boolean"}}}}
        }
    })
}

pub(super) async fn navigate(
    state: &State,
    what: &str,
    symbol: String,
    repo: Option<String>,
) -> ToolResult {
    let req = pb::NavigateRequest {
        what: what.into(),
        symbol: symbol.clone(),
        repos: repo.into_iter().collect(),
    };
    let resp = rpc!(state, pb::graph_client::GraphClient<_>, navigate, req)?;
    let mut text = String::new();
    if resp.sites.is_empty() {
        let _ = write!(text, "No {what} found for '{symbol}'.");
    }
    let mut last = String::new();
    for s in &resp.sites {
        if s.path != last {
            let _ = writeln!(text, "{}", s.path);
            last = s.path.clone();
        }
        let _ = match what {
            "defs" => writeln!(text, "  {}-{}  {} {}", s.line, s.end_line, s.kind, s.symbol),
            "callees" => writeln!(
                text,
                "  {}  {} → {} [{}]",
                s.line, s.symbol, s.target, s.resolution
            ),
            _ => writeln!(
                text,
                "  {}  in {} [{}]",
                s.line,
                if s.symbol.is_empty() {
                    "(file)"
                } else {
                    &s.symbol
                },
                s.resolution
            ),
        };
    }
    Ok(Outcome {
        texts: vec![text],
        structured: to_json(&resp),
    })
}
