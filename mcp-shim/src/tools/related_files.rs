//! `related_files`: the files that change together with a file in the commit history (co-change).

use std::fmt::Write as _;

use patina_proto::v1 as pb;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::content::{Outcome, ToolResult};
use crate::state::State;
use crate::tools::args::{Int, Str};
use crate::tools::common::*;
use crate::tools::spec::Tool;

pub(super) const TOOL: Tool = Tool {
    name: "related_files",
    description: "Files that change with a file. Use it to see what an edit also needs.",
    input: crate::tools::args::input_schema::<Args>,
    output,
    read_only: true,
    idempotent: true,
};

/// The arguments of `related_files`; its `inputSchema` is generated from this struct.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Args {
    /// Path from the repository root.
    path: Str,
    /// Number of files.
    #[serde(default = "default_limit")]
    limit: Int<1, 100>,
    /// Repository (default: current).
    repo: Option<Str>,
}

fn default_limit() -> Int<1, 100> {
    Int(10)
}

fn output() -> Value {
    json!({
        "type": "object",
        "properties": {
            "repo_id": {"type": "string"},
            "path": {"type": "string"},
            "commits": {"type": "integer"},
            "files": {"type": "array", "items": {"type": "object", "properties": {
                "path": {"type": "string"}, "support": {"type": "integer"},
                "confidence": {"type": "number"}
            }}}
        },
        "required": ["path", "files"]
    })
}

pub(super) async fn call(state: &State, a: Args) -> ToolResult {
    let req = pb::RelatedRequest {
        repo: target_repo(state, a.repo.map(|s| s.0)).await?,
        path: a.path.0,
        limit: a.limit.0 as u32,
    };
    let resp = rpc!(state, pb::history_client::HistoryClient<_>, related, req)?;
    let mut text = format!(
        "{} was touched by {} commits (big ones excluded)\n",
        resp.path, resp.commits
    );
    if resp.files.is_empty() {
        text.push_str("no file changed together with it\n");
    }
    for f in &resp.files {
        let _ = writeln!(
            text,
            "{}\t{} commits ({:.0}%)",
            f.path,
            f.support,
            f.confidence * 100.0
        );
    }
    Ok(Outcome {
        texts: vec![text.trim_end().to_string()],
        structured: to_json(&resp),
    })
}
