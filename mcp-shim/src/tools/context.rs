//! `patina_context`: the code about a question, assembled into a token budget by the daemon.

use patina_proto::v1 as pb;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::args::{Flag, Int, Roles, Str, choice};
use super::common::*;
use super::{Outcome, Tool, ToolResult};
use crate::protocol::Server;

pub(super) const TOOL: Tool = Tool {
    name: "patina_context",
    title: "Assemble context",
    description: "Get the code relevant to a question or topic in one call: the best \
results of a search, overlapping ranges of a file merged (no line twice), filled into a token \
budget (≈ characters / 4) in rank order and attributed as `path:start-end` (notes as \
`session:<name>#<n>`). The best hits come with what they need to be read on their own \
(`expand`, on by default): a function's class/impl header, the imports it uses, the signatures \
of the repository functions it calls and of its siblings; a Markdown section's parent headings \
and subsection titles — each attributed and within the budget. Format `xml` (default), `markdown` or `json`. Prefer it over several \
get_file calls when you need to read the code about a topic; use patina_query when you only \
need locations.",
    input: super::args::input_schema::<Args>,
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
    /// The question or topic to gather code for.
    query: Option<Str>,
    /// Same as `query` (give one of them).
    topic: Option<Str>,
    /// Token budget for the assembled context (≈ characters / 4).
    #[serde(default = "default_budget")]
    budget: Int<100, 200_000>,
    /// `xml`: <source ref="path:start-end" …> elements; `markdown`: a heading and a fenced block per item; `json`.
    #[serde(default = "default_format")]
    format: Format,
    /// Repository name, id or path; `*` for every one. Default: the working directory's repository if registered, else all.
    repo: Option<Str>,
    /// Gitignore-style glob restricting the sources, e.g. `src/**`.
    path: Option<Str>,
    /// Only files of these roles: `source`, `test`, `docs`, `example`, `benchmark`, `generated`, `vendored`, `config`, `other`; `!test` excludes one. Default: every role, ranked by what the query asks for.
    role: Option<Roles>,
    /// A directory (relative to the repository root) whose files rank higher, without excluding others.
    near: Option<Str>,
    /// Say when each source's lines last changed and in which commit (git blame of the working tree).
    #[serde(default)]
    blame: Flag,
    /// Add the surroundings of the best hits (class header, imports used, signatures of callees and siblings; parent headings and subsections of a Markdown section). Default true.
    #[serde(default = "default_expand")]
    expand: Flag,
    /// Complete or error: fail when a retrieval oracle times out or fails, instead of answering without it. Default false: best effort, with the missing oracle named in `notices`.
    #[serde(default)]
    complete: Flag,
    /// Only files under these licences: SPDX ids, comma-separated (`MIT,Apache-2.0`). Files of unknown licence are left out. Each result carries its file's `licence`.
    licence: Option<Str>,
    /// Never files under a copyleft licence (GPL, AGPL, LGPL, MPL, EPL, …).
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

pub(super) async fn call(server: &Server, a: Args) -> ToolResult {
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
        repos: search_scope(server, repo).await?,
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
        licences: a
            .licence
            .map(|s| {
                s.0.split(',')
                    .map(|id| id.trim().to_string())
                    .filter(|id| !id.is_empty())
                    .collect()
            })
            .unwrap_or_default(),
        no_copyleft: a.no_copyleft.0,
        ..Default::default()
    };
    let resp = rpc!(server, pb::search_client::SearchClient<_>, context, req)?;
    super::feedback::remember_answer(
        server,
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
    if !resp.notices.is_empty() {
        texts.push(format!("notices:\n- {}", resp.notices.join("\n- ")));
    }
    if !resp.query_id.is_empty() {
        texts.push(format!(
            "query_id: {} (rate this answer with patina_feedback)",
            resp.query_id
        ));
    }
    Ok(Outcome { texts, structured })
}
