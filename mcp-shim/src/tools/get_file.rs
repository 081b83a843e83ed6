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
            "next_line": {"type": "integer", "description": "where the rest continues (start_line); 0 = nothing more"},
            "line_cut": {"type": "boolean", "description": "end_line alone was too long: only its first bytes are in code"},
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
    let cut_note = cut_to_output(&mut f);
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
        "next_line": f.next_line,
        "line_cut": f.line_cut,
        "code": f.text,
    });
    Ok(Outcome {
        texts: vec![text.trim_end().to_string()],
        structured,
    })
}

/// Cut `f` to [`MAX_FILE_TEXT_BYTES`] at a line boundary (a first line longer than that alone is
/// cut inside, at a character boundary), and say what was left out and where to continue: the
/// daemon's own paging (`next_line`, `line_cut`) and this cut, in one note.
fn cut_to_output(f: &mut pb::GetFileResponse) -> String {
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
        if lines == 0 {
            // One line longer than the output holds: its first bytes.
            f.text
                .truncate(f.text.floor_char_boundary(MAX_FILE_TEXT_BYTES));
            f.end_line = f.start_line;
            f.line_cut = true;
        } else {
            f.text.truncate(keep);
            if f.text.ends_with('\n') {
                f.text.pop();
            }
            f.end_line = f.start_line + lines - 1;
            f.line_cut = false;
        }
        f.truncated = true;
        f.next_line = if f.end_line < f.total_lines {
            f.end_line + 1
        } else {
            0
        };
    }
    let mut note = String::new();
    if f.line_cut {
        note = format!(
            "\n[line {} is longer than a tool output holds: only its first {} bytes are shown",
            f.end_line,
            f.text.lines().last().map_or(0, str::len)
        );
    } else if f.truncated {
        note = format!(
            "\n[output cut at line {} to stay within the tool output limit",
            f.end_line
        );
    }
    if !note.is_empty() {
        if f.next_line != 0 {
            let _ = write!(
                note,
                "; call get_file again with start_line={}",
                f.next_line
            );
        } else {
            note.push_str("; it is the file's last line");
        }
        note.push(']');
    }
    note
}
