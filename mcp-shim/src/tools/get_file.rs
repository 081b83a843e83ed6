//! `get_file`: a file of a registered repository, whole or by line range, cut to what an agent's
//! tool output can hold.

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
    name: "get_file",
    description: "Exact lines of a file. Use it to read a hit.",
    input: crate::tools::args::input_schema::<Args>,
    output,
    read_only: true,
    idempotent: true,
};

/// get_file text beyond this is cut at a line boundary (agents' tool outputs are limited, e.g.
/// Claude Code's 25k tokens); the answer says where to continue.
const MAX_FILE_TEXT_BYTES: usize = 80_000;

/// A line number: 1-based, at most `u32::MAX`.
type Line = Int<1, { u32::MAX as u64 }>;

/// The arguments of `get_file`; its `inputSchema` is generated from this struct.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Args {
    /// Repository (default: current).
    repo: Option<Str>,
    /// Path from the repository root.
    path: Str,
    /// First line (1-based).
    start_line: Option<Line>,
    /// Last line, inclusive.
    end_line: Option<Line>,
}

fn output() -> Value {
    json!({
        "type": "object",
        "properties": {
            "repo_id": {"type": "string"},
            "path": {"type": "string"},
            "language": {"type": "string"},
            "total_lines": {"type": "integer"},
            "start_line": {"type": "integer"},
            "end_line": {"type": "integer"},
            "truncated": {"type": "boolean"},
            "code": {"type": "string"}
        },
        "required": ["path", "language", "total_lines", "start_line", "end_line", "truncated", "code"]
    })
}

pub(super) async fn call(state: &State, a: Args) -> ToolResult {
    let path = a.path.0;
    let repo = a.repo.map(|s| s.0);
    let start = a.start_line.map_or(0, |n| n.0 as u32);
    let end = a.end_line.map_or(0, |n| n.0 as u32);
    if end > 0 && end < start {
        return Err(format!("end_line ({end}) is before start_line ({start})"));
    }
    let req = pb::GetFileRequest {
        repo: target_repo(state, repo).await?,
        path,
        start_line: start,
        end_line: end,
    };
    let mut f = rpc!(state, pb::files_client::FilesClient<_>, get_file, req)?;
    crate::tools::feedback::file_read(state, &f.repo_id, &f.path).await;
    let mut cut_note = String::new();
    if f.text.len() > MAX_FILE_TEXT_BYTES {
        let mut keep = 0usize;
        let mut lines = 0u32;
        for l in f.text.split_inclusive('\n') {
            if keep + l.len() > MAX_FILE_TEXT_BYTES {
                break;
            }
            keep += l.len();
            lines += 1;
        }
        f.text.truncate(keep);
        if f.text.ends_with('\n') {
            f.text.pop();
        }
        f.end_line = f.start_line + lines.max(1) - 1;
        f.truncated = true;
        cut_note = format!(
            "\n[output cut at line {} to stay within the tool output limit; call get_file again with start_line={}]",
            f.end_line,
            f.end_line + 1
        );
    }
    let mut text = format!(
        "{}:{}-{} ({}, {} lines in total{})\n",
        f.path,
        f.start_line,
        f.end_line,
        if f.language.is_empty() {
            "text"
        } else {
            &f.language
        },
        f.total_lines,
        if f.truncated { ", truncated" } else { "" }
    );
    for (i, l) in f.text.lines().enumerate() {
        let _ = writeln!(text, "{:>6}\t{l}", f.start_line as usize + i);
    }
    text.push_str(&cut_note);
    let structured = json!({
        "repo_id": f.repo_id,
        "path": f.path,
        "language": f.language,
        "total_lines": f.total_lines,
        "start_line": f.start_line,
        "end_line": f.end_line,
        "truncated": f.truncated,
        "code": f.text,
    });
    Ok(Outcome {
        texts: vec![text.trim_end().to_string()],
        structured,
    })
}
