//! `repo_map`: the repository's most central files and symbols, an outline within a budget.

use patina_proto::v1 as pb;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::content::{Outcome, ToolResult};
use crate::state::State;
use crate::tools::args::{Int, OneOrMany, Str};
use crate::tools::common::*;
use crate::tools::spec::Tool;

pub(super) const TOOL: Tool = Tool {
    name: "repo_map",
    description: "Central files and key signatures. Use it first on a new repository.",
    input: crate::tools::args::input_schema::<Args>,
    output,
    read_only: true,
    idempotent: true,
};

/// The arguments of `repo_map`; its `inputSchema` is generated from this struct.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Args {
    /// Tokens (≈ chars / 4).
    #[serde(default = "default_budget")]
    budget: Int<50, 100_000>,
    /// Paths to centre on.
    seed: Option<OneOrMany>,
    /// Words naming files or symbols.
    query: Option<Str>,
    /// Repository (default: current).
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

pub(super) async fn call(state: &State, a: Args) -> ToolResult {
    let repo = target_repo(state, a.repo.map(|r| r.0)).await?;
    let req = pb::MapRequest {
        token_budget: a.budget.0 as u32,
        seed_paths: a.seed.map(|s| s.0).unwrap_or_default(),
        query: a.query.map(|q| q.0).unwrap_or_default(),
        repo,
    };
    let resp = rpc!(state, pb::graph_client::GraphClient<_>, map, req)?;
    let mut structured = to_json(&resp);
    if let Some(obj) = structured.as_object_mut() {
        obj.remove("text");
    }
    Ok(Outcome {
        texts: vec![resp.text],
        structured,
    })
}
