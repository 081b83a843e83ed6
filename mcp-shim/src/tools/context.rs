//! `patina_context`: the code about a question, assembled into a token budget by the daemon.

use patina_proto::v1 as pb;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::content::{Outcome, ToolResult};
use crate::state::State;
use crate::tools::args::{Flag, Int, Roles, Str, choice};
use crate::tools::common::*;
use crate::tools::spec::Tool;

pub(super) const TOOL: Tool = Tool {
    name: "patina_context",
    description: "The code answering a question, in a token budget. Use it to read a topic.",
    input: crate::tools::args::input_schema::<Args>,
    output,
    read_only: true,
    idempotent: true,
};

choice!(
    /// How the assembled context is rendered.
    Format {
        Xml = "xml",
        Markdown = "markdown",
        Json = "json",
    }
);

/// The arguments of `patina_context`; its `inputSchema` is generated from this struct.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Args {
    /// The question.
    query: Option<Str>,
    /// Alias of `query`.
    topic: Option<Str>,
    /// Tokens (≈ chars / 4).
    #[serde(default = "default_budget")]
    budget: Int<100, 200_000>,
    /// Rendering.
    #[serde(default = "default_format")]
    format: Format,
    /// Repository; `*`: all (default: current).
    repo: Option<Str>,
    /// Glob, e.g. `src/**`.
    path: Option<Str>,
    /// Roles (source, test, docs…); `!x` excludes.
    role: Option<Roles>,
    /// Directory to rank higher.
    near: Option<Str>,
    /// Add each piece's last commit.
    #[serde(default)]
    blame: Flag,
    /// Add headers, imports, callees.
    #[serde(default = "default_expand")]
    expand: Flag,
    /// Fail if an oracle fails, instead of answering without it.
    #[serde(default)]
    complete: Flag,
    /// Only these SPDX licences, e.g. `MIT,Apache-2.0`.
    licence: Option<Str>,
    /// No copyleft-licensed files.
    #[serde(default)]
    no_copyleft: Flag,
}

fn default_expand() -> Flag {
    Flag(true)
}

fn default_budget() -> Int<100, 200_000> {
    Int(6000)
}

fn default_format() -> Format {
    Format::Xml
}

fn output() -> Value {
    json!({
        "type": "object",
        "properties": {
            "format": {"type": "string"},
            "budget_tokens": {"type": "integer"},
            "used_tokens": {"type": "integer"},
            "omitted": {"type": "integer"},
            "items": {"type": "array", "description": "What the context (in the text content) holds, in order, without the text", "items": {
                "type": "object",
                "properties": {
                    "ref": {"type": "string"},
                    "repo_name": {"type": "string"},
                    "path": {"type": "string"},
                    "start_line": {"type": "integer"},
                    "end_line": {"type": "integer"},
                    "symbols": {"type": "array", "items": {"type": "string"}},
                    "kind": {"type": "string"},
                    "language": {"type": "string"},
                    "score": {"type": "number"},
                    "oracles": {"type": "array", "items": {"type": "string"}},
                    "truncated": {"type": "boolean"},
                    "licence": {"type": "string", "description": "the file's licence as an SPDX expression; empty when unknown"},
                    "licence_source": {"type": "string"},
                    "blame": {"type": "object", "description": "when asked (`blame`): the newest commit among the item's lines"},
                    "related": {"type": "array", "description": "The item's surroundings (expand), without the text", "items": {
                        "type": "object",
                        "properties": {
                            "kind": {"type": "string", "description": "container, import, callee, sibling, parent_section, child_section"},
                            "ref": {"type": "string"},
                            "path": {"type": "string"},
                            "start_line": {"type": "integer"},
                            "end_line": {"type": "integer"},
                            "symbol": {"type": "string"}
                        },
                        "required": ["kind", "ref"]
                    }}
                },
                "required": ["ref", "path", "start_line", "end_line"]
            }},
            "notices": {"type": "array", "items": {"type": "string"}},
            "query_id": {"type": "string", "description": "names this answer for patina_feedback"}
        },
        "required": ["format", "budget_tokens", "used_tokens", "items", "notices"]
    })
}

pub(super) async fn call(state: &State, a: Args) -> ToolResult {
    let text = match (a.query, a.topic) {
        (Some(q), _) | (None, Some(q)) => q.0,
        (None, None) => {
            return Err("missing required argument 'query' (or 'topic') of patina_context: the question or topic to gather code for".into());
        }
    };
    let budget = a.budget.0 as u32;
    let format = a.format;
    let repo = a.repo.map(|s| s.0);
    let path = a.path.map(|s| s.0);
    let Roles {
        include: roles,
        exclude: exclude_roles,
    } = a.role.unwrap_or_default();
    let near = a.near.map(|s| s.0);
    let req = pb::ContextRequest {
        query: text,
        token_budget: budget,
        repos: search_scope(state, repo).await?,
        path_globs: path.into_iter().collect(),
        format: match format {
            Format::Xml => pb::ContextFormat::Xml,
            Format::Markdown => pb::ContextFormat::Markdown,
            Format::Json => pb::ContextFormat::Json,
        } as i32,
        roles,
        exclude_roles,
        near: near.into_iter().collect(),
        blame: a.blame.0,
        expand: a.expand.0,
        complete: a.complete.0,
        licences: licence_list(a.licence),
        no_copyleft: a.no_copyleft.0,
        ..Default::default()
    };
    let resp = rpc!(state, pb::search_client::SearchClient<_>, context, req)?;
    state.answers.remember(
        &resp.query_id,
        resp.items
            .iter()
            .filter(|i| !i.repo_id.is_empty())
            .map(|i| (i.repo_id.clone(), i.path.clone()))
            .collect(),
    );
    let mut structured = to_json(&resp);
    let obj = structured.as_object_mut().expect("a response is an object");
    obj.remove("text");
    if let Some(items) = obj.get_mut("items").and_then(Value::as_array_mut) {
        for it in items.iter_mut().filter_map(Value::as_object_mut) {
            it.remove("text");
            if let Some(rel) = it.get_mut("related").and_then(Value::as_array_mut) {
                for r in rel.iter_mut().filter_map(Value::as_object_mut) {
                    r.remove("text");
                }
            }
        }
    }
    obj.insert("format".into(), json!(format.name()));
    let mut texts = vec![resp.text];
    let blamed: Vec<String> = resp
        .items
        .iter()
        .filter_map(|i| Some(format!("{}: {}", i.r#ref, blame_line(i.blame.as_ref()?))))
        .collect();
    if !blamed.is_empty() {
        texts.push(format!("history:\n- {}", blamed.join("\n- ")));
    }
    if !resp.notices.is_empty() || !resp.remedies.is_empty() {
        texts.push(
            notices_text(&resp.notices, &resp.remedies)
                .trim_end()
                .to_string(),
        );
    }
    if !resp.query_id.is_empty() {
        texts.push(format!(
            "query_id: {} (rate this answer with patina_feedback)",
            resp.query_id
        ));
    }
    Ok(Outcome { texts, structured })
}
