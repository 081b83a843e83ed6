//! `patina_history`: commits (reachable from the checked-out HEAD only) whose messages match a
//! question, or that shaped a file — why code is the way it is.

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
    name: "patina_history",
    description: "Commits by message or file. Use it to learn why code changed.",
    input: crate::tools::args::input_schema::<Args>,
    output,
    read_only: true,
    idempotent: true,
};

/// The arguments of `patina_history`; its `inputSchema` is generated from this struct.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Args {
    /// Words of commit messages.
    query: Option<Str>,
    /// Only commits touching this file.
    file: Option<Str>,
    /// Glob of files touched.
    path: Option<Str>,
    /// `YYYY-MM-DD` or `90d`.
    since: Option<Str>,
    /// Number of commits.
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
            "commits": {"type": "array", "items": {"type": "object", "properties": {
                "hash": {"type": "string"}, "author": {"type": "string"},
                "time_unix": {"type": "integer"}, "subject": {"type": "string"},
                "body": {"type": "string"},
                "files": {"type": "array", "items": {"type": "string"}},
                "files_total": {"type": "integer"}, "score": {"type": "number"}
            }}},
            "searched": {"type": "integer"}
        },
        "required": ["commits"]
    })
}

pub(super) async fn call(state: &State, a: Args) -> ToolResult {
    let query = a.query.map(|s| s.0).unwrap_or_default();
    let file = a.file.map(|s| s.0).unwrap_or_default();
    if query.trim().is_empty() && file.trim().is_empty() {
        return Err("give 'query', 'file', or both".into());
    }
    let req = pb::LogRequest {
        repo: target_repo(state, a.repo.map(|s| s.0)).await?,
        query,
        file,
        path_globs: a.path.map(|s| s.0).into_iter().collect(),
        since: a.since.map(|s| s.0).unwrap_or_default(),
        limit: a.limit.0 as u32,
        max_files: 20,
    };
    let resp = rpc!(state, pb::history_client::HistoryClient<_>, log, req)?;
    let mut text = String::new();
    if resp.commits.is_empty() {
        let _ = writeln!(
            text,
            "no matching commit among {} reachable from HEAD",
            resp.searched
        );
    }
    for c in &resp.commits {
        let _ = writeln!(
            text,
            "{} {} ({}): {}",
            &c.hash[..c.hash.len().min(12)],
            c.time_unix,
            c.author,
            c.subject
        );
        if !c.body.is_empty() {
            let _ = writeln!(text, "    {}", one_line(&c.body, 300));
        }
        let more = (c.files_total as usize).saturating_sub(c.files.len());
        let _ = writeln!(
            text,
            "    files: {}{}",
            c.files.join(", "),
            if more > 0 {
                format!(" (+{more} more)")
            } else {
                String::new()
            }
        );
    }
    text.push_str(&notices_text(&resp.notices, &resp.remedies));
    Ok(Outcome {
        texts: vec![text.trim_end().to_string()],
        structured: to_json(&resp),
    })
}
