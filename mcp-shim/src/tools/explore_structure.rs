//! `explore_structure`: the layout of a repository directory as indexed, with its key files.

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
    name: "explore_structure",
    description: "A directory's files and key files. Use it to orient yourself.",
    input: crate::tools::args::input_schema::<Args>,
    output,
    read_only: true,
    idempotent: true,
};

/// The arguments of `explore_structure`; its `inputSchema` is generated from this struct.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Args {
    /// Repository (default: current).
    repo: Option<Str>,
    /// Directory.
    path: Option<Str>,
    /// Glob, e.g. `*.py`.
    glob: Option<Str>,
    /// Levels to list.
    #[serde(default = "default_depth")]
    depth: Int<1, 20>,
    /// Entries listed at most.
    #[schemars(extend("default" = 500))]
    max_entries: Option<Int<1, 5000>>,
}

fn default_depth() -> Int<1, 20> {
    Int(2)
}

fn output() -> Value {
    json!({
        "type": "object",
        "properties": {
            "repo_id": {"type": "string"},
            "repo_name": {"type": "string"},
            "path": {"type": "string"},
            "dirs": {"type": "array", "items": {"type": "object", "properties": {
                "path": {"type": "string"}, "files": {"type": "integer"}, "lines": {"type": "integer"}}}},
            "files": {"type": "array", "items": {"type": "object", "properties": {
                "path": {"type": "string"}, "language": {"type": "string"}, "lines": {"type": "integer"},
                "bytes": {"type": "integer"}, "skipped": {"type": "string"}}}},
            "key_files": {"type": "array", "items": {"type": "object", "properties": {
                "path": {"type": "string"}, "role": {"type": "string"}}}},
            "total_files": {"type": "integer"},
            "total_lines": {"type": "integer"},
            "languages": {"type": "object"},
            "truncated": {"type": "boolean"}
        },
        "required": ["path", "dirs", "files", "key_files", "total_files"]
    })
}

pub(super) async fn call(state: &State, a: Args) -> ToolResult {
    let repo = a.repo.map(|s| s.0);
    let path = a.path.map(|s| s.0).unwrap_or_default();
    let glob = a.glob.map(|s| s.0);
    let depth = a.depth.0 as u32;
    // Not given: the daemon's default (the schema's 500).
    let max_entries = a.max_entries.map_or(0, |n| n.0 as u32);
    let req = pb::ExploreRequest {
        repo: target_repo(state, repo).await?,
        path,
        path_globs: glob.into_iter().collect(),
        max_depth: depth,
        max_entries,
    };
    let st = rpc!(
        state,
        pb::files_client::FilesClient<_>,
        explore_structure,
        req
    )?;
    let mut langs: Vec<(&String, &u64)> = st.languages.iter().collect();
    langs.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let base = if st.path.is_empty() {
        "."
    } else {
        st.path.as_str()
    };
    let mut text = format!(
        "{}: {base}/ — {} files, {} lines{}\n",
        st.repo_name,
        st.total_files,
        st.total_lines,
        if langs.is_empty() {
            String::new()
        } else {
            format!(
                " ({})",
                langs
                    .iter()
                    .map(|(l, n)| format!("{l} {n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    );
    if !st.key_files.is_empty() {
        let _ = writeln!(
            text,
            "key files: {}",
            st.key_files
                .iter()
                .map(|k| format!("{} ({})", k.path, k.role))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    // Directories and files interleaved by path, indented by depth below `path`.
    let mut rows: Vec<(String, String)> = st
        .dirs
        .iter()
        .map(|d| {
            (
                format!("{}/", d.path),
                format!("{} files, {} lines", d.files, d.lines),
            )
        })
        .chain(st.files.iter().map(|f| {
            let what = if f.skipped.is_empty() {
                format!(
                    "{} lines{}",
                    f.lines,
                    if f.language.is_empty() {
                        String::new()
                    } else {
                        format!(", {}", f.language)
                    }
                )
            } else {
                format!("not indexed: {}", f.skipped)
            };
            (f.path.clone(), what)
        }))
        .collect();
    rows.sort();
    let prefix_depth = if st.path.is_empty() {
        0
    } else {
        st.path.split('/').count()
    };
    for (p, what) in rows {
        let depth = p
            .trim_end_matches('/')
            .split('/')
            .count()
            .saturating_sub(prefix_depth + 1);
        let name = p.trim_end_matches('/').rsplit('/').next().unwrap_or(&p);
        let slash = if p.ends_with('/') { "/" } else { "" };
        let _ = writeln!(text, "{}{name}{slash}  {what}", "  ".repeat(depth));
    }
    if st.truncated {
        text.push_str("[more entries below: raise depth/max_entries or explore a subdirectory]\n");
    }
    let mut structured = to_json(&st);
    if let Some(obj) = structured.as_object_mut() {
        obj.entry("languages").or_insert_with(|| json!({}));
    }
    Ok(Outcome {
        texts: vec![text.trim_end().to_string()],
        structured,
    })
}
