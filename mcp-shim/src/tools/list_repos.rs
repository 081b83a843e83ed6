//! `list_repos`: the registered repositories with their counts and freshness.

use std::fmt::Write as _;

use patina_proto::v1 as pb;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::content::{Outcome, ToolResult};
use crate::state::State;
use crate::tools::common::*;
use crate::tools::spec::Tool;

pub(super) const TOOL: Tool = Tool {
    name: "list_repos",
    description: "Registered repositories and their freshness. Use it to see what is indexed.",
    input: crate::tools::args::input_schema::<Args>,
    output,
    read_only: true,
    idempotent: true,
};

/// `list_repos` takes no arguments; its `inputSchema` is generated from this struct.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Args {}

fn output() -> Value {
    json!({
        "type": "object",
        "properties": {
            "repos": {"type": "array", "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "name": {"type": "string"},
                    "root": {"type": "string"},
                    "files": {"type": "integer"},
                    "chunks": {"type": "integer"},
                    "languages": {"type": "object"},
                    "indexing": {"type": "boolean"},
                    "last_indexed_unix_ms": {"type": "integer"},
                    "freshness": {"type": "object"}
                },
                "required": ["id", "name", "root", "files", "chunks"]
            }},
            "published": {"type": "array", "description": "with a team store: the repositories it lets this daemon read (remote, name, commit, files, chunks, cloned: whether one of `repos` is a clone of it)",
                "items": {"type": "object"}},
            "daemon_uptime_ms": {"type": "integer"},
            "semantic": {"type": "string"}
        },
        "required": ["repos"]
    })
}

pub(super) async fn call(state: &State, _: Args) -> ToolResult {
    let resp = repo_list(state).await?;
    let mut text = String::new();
    if resp.repos.is_empty() {
        text.push_str(
            "No repository is registered; register one from a shell with `patina add PATH`.\n",
        );
    }
    for r in &resp.repos {
        let mut langs: Vec<(&String, &u64)> = r.languages.iter().collect();
        langs.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let _ = writeln!(
            text,
            "{}  {}  {} files, {} chunks  [{}]",
            r.name,
            r.root,
            r.files,
            r.chunks,
            langs
                .iter()
                .take(6)
                .map(|(l, n)| format!("{l} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        if let Some(f) = &r.freshness {
            let _ = writeln!(text, "    {}", freshness_line(&to_json(f)));
        } else if r.indexing {
            text.push_str("    indexing now\n");
        }
    }
    let _ = writeln!(text, "semantic search: {}", resp.semantic);
    // A team's store, when the daemon has one: what it publishes, cloned here or not (`--org`
    // and `patina_query` with `org` search those that are not).
    let published = rpc!(
        state,
        pb::team_client::TeamClient<_>,
        published,
        pb::PublishedRequest {}
    );
    let mut structured = to_json(&resp);
    if let Some(obj) = structured.as_object_mut() {
        obj.entry("repos").or_insert_with(|| json!([]));
    }
    match published {
        Ok(p) if !p.store.is_empty() => {
            let _ = writeln!(text, "team store {}:", p.store);
            for r in &p.repos {
                let commit: String = r.commit.chars().take(10).collect();
                let _ = writeln!(
                    text,
                    "  {}@{commit}  {} files, {} chunks{}",
                    r.name,
                    r.files,
                    r.chunks,
                    if r.cloned {
                        "  (cloned here)"
                    } else {
                        "  (search with org)"
                    }
                );
            }
            if let Some(obj) = structured.as_object_mut() {
                let list = to_json(&p).get("repos").cloned();
                obj.insert("published".into(), list.unwrap_or_else(|| json!([])));
            }
        }
        Ok(_) => {}
        // A daemon older than the team store has no such service: nothing to say.
        Err(e) if e.to_lowercase().contains("unimplemented") => {}
        Err(e) => {
            let _ = writeln!(text, "team store: not reachable ({e})");
        }
    }
    Ok(Outcome {
        texts: vec![text.trim_end().to_string()],
        structured,
    })
}
