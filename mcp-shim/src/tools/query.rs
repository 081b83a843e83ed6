//! `patina_query`: ranked locations for a search, with the oracles that found each hit and the
//! freshness of every repository in scope.

use patina_proto::kinds::HitKind;
use std::fmt::Write as _;

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
    name: "patina_query",
    description: "Find code by identifier, file name or question. Use it first.",
    input: crate::tools::args::input_schema::<Args>,
    output,
    read_only: true,
    idempotent: true,
};

choice!(
    /// Result granularity.
    Level {
        Symbol = "symbol",
        File = "file",
        Module = "module",
        Repo = "repo",
        Doc = "doc",
    }
);

/// The arguments of `patina_query`; its `inputSchema` is generated from this struct.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Args {
    /// Words, identifier or file name.
    query: Str,
    /// Number of results.
    #[serde(default = "default_limit")]
    limit: Int<1, 100>,
    /// Repository; `*`: all (default: current).
    repo: Option<Str>,
    /// Glob, e.g. `src/**/*.rs`.
    path: Option<Str>,
    /// Roles (source, test, docs…); `!x` excludes.
    role: Option<Roles>,
    /// Directory to rank higher.
    near: Option<Str>,
    /// Result granularity.
    #[serde(default = "default_level")]
    level: Level,
    /// Include first lines.
    #[serde(default)]
    preview: Flag,
    /// Add each hit's last commit.
    #[serde(default)]
    blame: Flag,
    /// Fail if an oracle fails, instead of answering without it.
    #[serde(default)]
    complete: Flag,
    /// Only these SPDX licences, e.g. `MIT,Apache-2.0`.
    licence: Option<Str>,
    /// No copyleft-licensed files.
    #[serde(default)]
    no_copyleft: Flag,
    /// Also search the team's published repositories not cloned here.
    #[serde(default)]
    org: Flag,
}

fn default_limit() -> Int<1, 100> {
    Int(10)
}

fn default_level() -> Level {
    Level::Symbol
}

fn output() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "level": {"type": "string"},
            "results": {"type": "array", "items": {
                "type": "object",
                "properties": {
                    "ref": {"type": "string", "description": "`path:start-end`; `session:<name>#<n>` for a note; the directory for module level; the repository name for repo level"},
                    "repo": {"type": "string", "description": "the repository's name (see `repos`)"},
                    "path": {"type": "string"},
                    "start_line": {"type": "integer"},
                    "end_line": {"type": "integer"},
                    "symbol": {"type": "string"},
                    "parent": {"type": "string"},
                    "kind": {"type": "string"},
                    "language": {"type": "string"},
                    "score": {"type": "number"},
                    "oracles": {"type": "array", "items": {"type": "object", "properties": {
                        "oracle": {"type": "string"}, "rank": {"type": "integer"}, "score": {"type": "number"}}}},
                    "preview": {"type": "string"},
                    "note": {"type": "object"},
                    "matches": {"type": "integer"},
                    "best": {"type": "string"},
                    "role": {"type": "string", "description": "what the file is for: source, test, docs, example, benchmark, generated, vendored, config, other"},
                    "licence": {"type": "string", "description": "the file's licence as an SPDX expression (`MIT OR Apache-2.0`); absent when unknown"},
                    "licence_source": {"type": "string", "description": "where the licence was found: header (SPDX-License-Identifier), manifest, file (LICENSE, COPYING)"},
                    "blame": {"type": "object", "description": "when asked (`blame`): the newest commit among the result's lines: commit, short, time_unix, author, subject, lines, commits; commit empty = not committed yet"},
                    "published": {"type": "object", "description": "with `org`: a repository of the team's store not cloned here (remote, name, commit); ref is `name@commit:path:start-end`"}
                },
                "required": ["ref", "path", "kind", "score", "oracles"]
            }},
            "repos": {"type": "array", "description": "Each repository the results come from, once: id, name, root",
                "items": {"type": "object", "properties": {"id": {"type": "string"}, "name": {"type": "string"}, "root": {"type": "string"}}}},
            "notices": {"type": "array", "items": {"type": "string"}},
            "freshness": {"type": "array", "items": {"type": "object"}, "description": "Per repository in scope: indexed commit, pending changes, whether the index is fresh"},
            "oracles": {"type": "array", "items": {"type": "object"}},
            "took_us": {"type": "integer"},
            "query_id": {"type": "string", "description": "names this answer for patina_feedback"}
        },
        "required": ["query", "level", "results", "repos", "notices"]
    })
}

pub(super) async fn call(state: &State, a: Args) -> ToolResult {
    let text = a.query.0;
    let limit = a.limit.0 as u32;
    let repo = a.repo.map(|s| s.0);
    let path = a.path.map(|s| s.0);
    let level = a.level;
    let show_preview = a.preview.0;
    let Roles {
        include: roles,
        exclude: exclude_roles,
    } = a.role.unwrap_or_default();
    let near = a.near.map(|s| s.0);
    let granularity = match level {
        Level::Symbol => pb::Granularity::Chunk,
        Level::File => pb::Granularity::File,
        Level::Module => pb::Granularity::Module,
        Level::Repo => pb::Granularity::Repo,
        Level::Doc => pb::Granularity::Doc,
    };
    let req = pb::QueryRequest {
        query: text.clone(),
        limit,
        repos: search_scope(state, repo).await?,
        path_globs: path.into_iter().collect(),
        granularity: granularity as i32,
        // Notes carry their text anyway; code previews only when asked.
        snippet_lines: if show_preview { PREVIEW_LINES } else { 0 },
        roles,
        exclude_roles,
        near: near.into_iter().collect(),
        blame: a.blame.0,
        complete: a.complete.0,
        licences: licence_list(a.licence),
        no_copyleft: a.no_copyleft.0,
        org: a.org.0,
        ..Default::default()
    };
    let resp = rpc!(state, pb::search_client::SearchClient<_>, query, req)?;
    state.answers.remember(
        &resp.query_id,
        resp.hits
            .iter()
            .filter(|h| matches!(HitKind::of(h), HitKind::Chunk(_)) && h.published.is_none())
            .map(|h| (h.repo_id.clone(), h.path.clone()))
            .collect(),
    );
    let mut structured = to_json(&resp);
    let names: std::collections::HashMap<String, String> = structured["freshness"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|f| {
                    Some((
                        f["repo_id"].as_str()?.to_string(),
                        f["repo_name"].as_str()?.to_string(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    let mut results = Vec::new();
    let mut repos: Vec<Value> = Vec::new();
    let mut text_out = String::new();
    for (i, h) in resp.hits.iter().enumerate() {
        let mut v = to_json(h);
        let obj = v.as_object_mut().expect("a hit is an object");
        let kind = HitKind::of(h);
        let is_note = kind == HitKind::Note;
        let reference = match kind {
            _ if h.published.is_some() => {
                let p = h.published.as_ref().expect("checked");
                let commit: String = p.commit.chars().take(10).collect();
                format!(
                    "{}@{commit}:{}:{}-{}",
                    p.name, h.path, h.start_line, h.end_line
                )
            }
            HitKind::Note => h.path.clone(),
            HitKind::Module => format!("{}/", h.path),
            HitKind::Repo => h.symbol.clone(),
            HitKind::Chunk(_) => format!("{}:{}-{}", h.path, h.start_line, h.end_line),
        };
        let repo_name = h.published.as_ref().map(|p| p.name.clone());
        let repo_name = repo_name
            .or_else(|| names.get(&h.repo_id).cloned())
            .unwrap_or_else(|| {
                std::path::Path::new(&h.repo_root)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            });
        obj.insert("ref".into(), json!(reference));
        if !repo_name.is_empty() {
            obj.insert("repo".into(), json!(repo_name));
        }
        obj.insert(
            "oracles".into(),
            json!(
                h.provenance
                    .iter()
                    .map(|p| json!({"oracle": patina_proto::kinds::oracle_name(p.oracle), "rank": p.rank, "score": p.score}))
                    .collect::<Vec<_>>()
            ),
        );
        obj.remove("provenance");
        obj.remove("snippet");
        match patina_proto::roles::from_wire(h.role) {
            Some(r) => obj.insert("role".into(), json!(r.name())),
            None => obj.remove("role"),
        };
        if show_preview && !h.snippet.is_empty() && !is_note {
            obj.insert("preview".into(), json!(preview(&h.snippet)));
        }
        // A repository's id and root are said once, in `repos`; each result names its
        // repository (`repo`).
        if !h.repo_id.is_empty() && !repos.iter().any(|r| r["id"] == h.repo_id.as_str()) {
            repos.push(json!({"id": h.repo_id, "name": repo_name, "root": h.repo_root}));
        }
        obj.remove("repo_id");
        obj.remove("repo_root");
        // Empty optional fields say nothing: leave them out.
        obj.retain(|k, v| {
            let empty_text = matches!(
                k.as_str(),
                "parent" | "best" | "symbol" | "language" | "licence" | "licence_source"
            ) && v.as_str() == Some("");
            let no_matches = k == "matches" && v.as_u64() == Some(0);
            !empty_text && !no_matches
        });
        results.push(v);

        let what = match (&h.note, h.symbol.is_empty(), h.parent.is_empty()) {
            (Some(_), _, _) => "note".to_string(),
            (None, true, _) => h.kind.clone(),
            (None, false, true) => format!("{} {}", h.kind, h.symbol),
            (None, false, false) => format!("{} {}::{}", h.kind, h.parent, h.symbol),
        };
        let oracles: Vec<String> = h
            .provenance
            .iter()
            .map(|p| format!("{}#{}", patina_proto::kinds::oracle_name(p.oracle), p.rank))
            .collect();
        let _ = write!(text_out, "{}. {reference}  {what}", i + 1);
        if !repo_name.is_empty() && kind != HitKind::Repo {
            let _ = write!(text_out, "  ({repo_name})");
        }
        let _ = write!(text_out, "  score {:.4}  [{}]", h.score, oracles.join(" "));
        if h.matches > 0 {
            let _ = write!(
                text_out,
                "  {} matching chunk(s), best {}",
                h.matches, h.best
            );
        }
        text_out.push('\n');
        if let Some(b) = &h.blame {
            let _ = writeln!(text_out, "     {}", blame_line(b));
        }
        if let Some(n) = &h.note {
            for l in preview(&n.text).lines() {
                let _ = writeln!(text_out, "     {l}");
            }
        } else if show_preview {
            for l in preview(&h.snippet).lines() {
                let _ = writeln!(text_out, "     {l}");
            }
        }
    }
    if resp.hits.is_empty() {
        let _ = writeln!(text_out, "No results for {text:?}.");
    }
    let obj = structured.as_object_mut().expect("a response is an object");
    obj.remove("hits");
    obj.insert("query".into(), json!(text));
    obj.insert("level".into(), json!(level.name()));
    obj.insert("results".into(), Value::Array(results));
    obj.insert("repos".into(), Value::Array(repos));
    if let Some(fresh) = obj
        .get("freshness")
        .and_then(Value::as_array)
        .filter(|f| !f.is_empty())
    {
        text_out.push_str("-- index: ");
        text_out.push_str(
            &fresh
                .iter()
                .map(freshness_line)
                .collect::<Vec<_>>()
                .join("; "),
        );
        text_out.push('\n');
    }
    text_out.push_str(&notices_text(&resp.notices, &resp.remedies));
    if !resp.query_id.is_empty() {
        let _ = writeln!(
            text_out,
            "-- query_id: {} (rate this answer with patina_feedback)",
            resp.query_id
        );
    }
    Ok(Outcome {
        texts: vec![text_out.trim_end().to_string()],
        structured,
    })
}
