//! `repo_map`: the repository's most central files and symbols, an outline within a budget.

use patina_proto::v1 as pb;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::args::{Int, OneOrMany, Str};
use super::common::*;
use super::{Outcome, Tool, ToolResult};
use crate::protocol::Server;

pub(super) const TOOL: Tool = Tool {
    name: "repo_map",
    title: "Map of a repository",
    description: "An outline of a repository's most central files and symbols, for a first look \
at an unfamiliar codebase: files ranked by PageRank on the reference graph (a file many others \
call ranks high), each with the signatures of its most referenced definitions, filled into a \
token budget (≈ characters / 4). Personalise it with `seed` files the task is about and/or a \
`query` whose words name files or symbols.",
    input: super::args::input_schema::<Args>,
    output,
    read_only: true,
    idempotent: true,
};

/// The arguments of `repo_map`; its `inputSchema` is generated from this struct.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Args {
    /// Token budget of the outline (≈ characters / 4).
    #[serde(default = "default_budget")]
    budget: Int<50, 100_000>,
    /// Files or directories (relative to the repository root) to centre the map on.
    seed: Option<OneOrMany>,
    /// Words naming files or symbols to centre the map on.
    query: Option<Str>,
    /// Repository name, id or path. Default: the working directory's repository, else the only registered one.
    repo: Option<Str>,
}

fn default_budget() -> Int<50, 100_000> {
    Int(1000)
}

fn output() -> Value {
    json!({
        "type": "object",
        "properties": {
            "repo": {"type": "string"},
            "used_tokens": {"type": "integer"},
            "budget_tokens": {"type": "integer"},
            "total_files": {"type": "integer"},
            "files": {"type": "array", "items": {"type": "object", "properties": {
                "path": {"type": "string"},
                "rank": {"type": "number"},
                "symbols": {"type": "array", "items": {"type": "object", "properties": {
                    "symbol": {"type": "string"}, "kind": {"type": "string"},
                    "start_line": {"type": "integer"}, "end_line": {"type": "integer"},
                    "signature": {"type": "string"}, "rank": {"type": "number"}}}}
            }}}
        },
        "required": ["repo", "files"]
    })
}

pub(super) async fn call(server: &Server, a: Args) -> ToolResult {
    let repo = target_repo(server, a.repo.map(|r| r.0)).await?;
    let req = pb::MapRequest {
        token_budget: a.budget.0 as u32,
        seed_paths: a.seed.map(|s| s.0).unwrap_or_default(),
        query: a.query.map(|q| q.0).unwrap_or_default(),
        repo,
    };
    let resp = rpc!(server, pb::graph_client::GraphClient<_>, map, req)?;
    let mut structured = to_json(&resp);
    if let Some(obj) = structured.as_object_mut() {
        obj.remove("text");
    }
    Ok(Outcome {
        texts: vec![resp.text],
        structured,
    })
}
