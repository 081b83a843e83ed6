//! The tools, one file each: its description, its arguments (a struct the `inputSchema` is
//! generated from, see `args.rs`), its output schema, the daemon calls, and two renderings of
//! every answer: compact text for the model, and structured JSON that passes the daemon's fields
//! through (so fields the daemon adds later appear without a change here). This file holds the
//! list of tools, `tools/list`, argument parsing and the dispatch of `tools/call`. Tools take the
//! server's [`State`]; they never see the protocol layer that calls them.

use serde_json::{Map, Value, json};

use crate::content::ToolResult;
use crate::state::State;
use crate::tools::spec::Tool;
use crate::versions::at_least;

/// One unary RPC on the shim's daemon channel (re-opened, and the call retried with backoff, when
/// the daemon went away); the daemon's error text comes back as the `Err`.
macro_rules! rpc {
    ($state:expr, $client:ty, $method:ident, $req:expr) => {{
        let req = $req;
        $state
            .daemon
            .call(|ch| {
                let req = req.clone();
                async move {
                    <$client>::new(ch)
                        .$method(req)
                        .await
                        .map(tonic::Response::into_inner)
                }
            })
            .await
    }};
}

mod args;
mod call_graph;
mod common;
mod context;
mod definition;
mod explore_structure;
mod feedback;
mod find_references;
mod get_file;
mod history;
mod list_repos;
mod navigate;
mod query;
mod related_files;
mod repo_map;
mod session;
mod session_end;
mod session_note;
mod session_start;
pub(crate) mod spec;

static TOOLS: &[Tool] = &[
    query::TOOL,
    context::TOOL,
    get_file::TOOL,
    explore_structure::TOOL,
    list_repos::TOOL,
    history::TOOL,
    related_files::TOOL,
    session_start::TOOL,
    session_note::TOOL,
    session_end::TOOL,
    find_references::TOOL,
    call_graph::TOOL,
    definition::TOOL,
    feedback::TOOL,
    repo_map::TOOL,
];

pub(crate) fn find(name: &str) -> Option<&'static Tool> {
    TOOLS.iter().find(|t| t.name == name)
}

pub(crate) fn names() -> Vec<&'static str> {
    TOOLS.iter().map(|t| t.name).collect()
}

/// The `tools/list` entries for the negotiated protocol version: annotations from 2025-03-26,
/// output schemas from 2025-06-18 — only what that version reads, and compact: every entry is
/// paid for in the context of every conversation (see `LIST_TOKEN_BUDGET`). No titles: a tool's
/// name is its display name, and the budget is better spent on what the model reads.
pub(crate) fn list(version: &str) -> Vec<Value> {
    TOOLS
        .iter()
        .map(|t| {
            let mut v = json!({
                "name": t.name,
                "description": t.description,
                "inputSchema": compact_input((t.input)()),
            });
            if at_least(version, "2025-03-26") {
                // Hints only where they say something: destructive and idempotent are meaningful
                // for tools that write.
                let mut a = json!({"readOnlyHint": t.read_only});
                if !t.read_only {
                    a["destructiveHint"] = json!(false);
                    a["idempotentHint"] = json!(t.idempotent);
                }
                v["annotations"] = a;
            }
            if at_least(version, "2025-06-18") {
                v["outputSchema"] = compact_schema(&(t.output)());
            }
            v
        })
        .collect()
}

/// Everything `tools/list` may cost, in tokens of ≈ 4 characters (the rule context budgets use);
/// a unit test holds every protocol version's list to it.
#[cfg(test)]
const LIST_TOKEN_BUDGET: usize = 2000;

/// An output schema as listed: an object and the fields it always has. The full shapes stay in
/// the code (they document the structured results, and the tests check results against them);
/// a client validating against the compact one accepts every result the full one accepts.
fn compact_schema(full: &Value) -> Value {
    let mut v = json!({"type": "object"});
    if let Some(r) = full.get("required") {
        v["required"] = r.clone();
    }
    v
}

/// Arguments with one meaning in every tool that takes them, described once in the server's
/// `instructions` instead of in each schema (`limit`'s bound too).
pub(crate) const SHARED_ARGS: [&str; 8] = [
    "repo",
    "limit",
    "role",
    "near",
    "blame",
    "complete",
    "licence",
    "no_copyleft",
];

/// Aliases accepted for compatibility (`patina_context`'s `topic` = `query`) but not listed.
const UNLISTED_ALIASES: [&str; 1] = ["topic"];

/// An input schema as listed: what a caller needs to build valid arguments — names, types,
/// enums, ranges, descriptions — without what the daemon decides anyway (defaults, which the
/// descriptions name where they matter; `additionalProperties`, enforced with the list of known
/// names when violated; the lower bound 1 of counts and line numbers, and the implicit upper
/// bound of 32-bit integers) or what the instructions
/// already say ([`SHARED_ARGS`]).
fn compact_input(mut v: Value) -> Value {
    if let Some(obj) = v.as_object_mut() {
        obj.remove("additionalProperties");
        if let Some(props) = obj.get_mut("properties").and_then(Value::as_object_mut) {
            props.retain(|name, _| !UNLISTED_ALIASES.contains(&name.as_str()));
            for (name, p) in props.iter_mut() {
                let Some(p) = p.as_object_mut() else { continue };
                if SHARED_ARGS.contains(&name.as_str()) {
                    p.remove("description");
                    p.remove("maximum");
                }
                p.remove("default");
                // Counts and line numbers start at 1; a 0 is refused with that reason.
                if p.get("minimum").and_then(Value::as_u64) == Some(1) {
                    p.remove("minimum");
                }
                if p.get("maximum").and_then(Value::as_u64) == Some(u64::from(u32::MAX)) {
                    p.remove("maximum");
                }
            }
        }
    }
    v
}

/// Check `arguments` against the tool's schema as [`call`] does, without calling the daemon.
pub(crate) fn check_arguments(tool: &Tool, arguments: Map<String, Value>) -> Result<(), String> {
    args::parse::<Value>(tool.name, &(tool.input)(), arguments).map(|_| ())
}

/// Check `arguments` against the tool's `Args` (the struct its schema comes from), then run it.
pub(crate) async fn call(state: &State, tool: &Tool, arguments: Map<String, Value>) -> ToolResult {
    fn parse<T: serde::de::DeserializeOwned>(
        tool: &Tool,
        arguments: Map<String, Value>,
    ) -> Result<T, String> {
        args::parse(tool.name, &(tool.input)(), arguments)
    }
    match tool.name {
        n if n == query::TOOL.name => query::call(state, parse(tool, arguments)?).await,
        n if n == context::TOOL.name => context::call(state, parse(tool, arguments)?).await,
        n if n == get_file::TOOL.name => get_file::call(state, parse(tool, arguments)?).await,
        n if n == explore_structure::TOOL.name => {
            explore_structure::call(state, parse(tool, arguments)?).await
        }
        n if n == list_repos::TOOL.name => list_repos::call(state, parse(tool, arguments)?).await,
        n if n == history::TOOL.name => history::call(state, parse(tool, arguments)?).await,
        n if n == related_files::TOOL.name => {
            related_files::call(state, parse(tool, arguments)?).await
        }
        n if n == session_start::TOOL.name => {
            session_start::call(state, parse(tool, arguments)?).await
        }
        n if n == session_note::TOOL.name => {
            session_note::call(state, parse(tool, arguments)?).await
        }
        n if n == session_end::TOOL.name => session_end::call(state, parse(tool, arguments)?).await,
        n if n == find_references::TOOL.name => {
            find_references::call(state, parse(tool, arguments)?).await
        }
        n if n == call_graph::TOOL.name => call_graph::call(state, parse(tool, arguments)?).await,
        n if n == definition::TOOL.name => definition::call(state, parse(tool, arguments)?).await,
        n if n == feedback::TOOL.name => feedback::call(state, parse(tool, arguments)?).await,
        n if n == repo_map::TOOL.name => repo_map::call(state, parse(tool, arguments)?).await,
        other => Err(format!("tool '{other}' is not implemented")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `tools/list` as a client receives it (compact JSON) stays within the budget for every
    /// protocol version, and each description is one line saying when to use the tool.
    #[test]
    fn the_tool_list_fits_its_token_budget_and_says_when_to_use_each_tool() {
        for version in ["2024-11-05", "2025-03-26", "2025-06-18"] {
            let listed = serde_json::to_string(&json!({"tools": list(version)})).unwrap();
            let tokens = listed.chars().count().div_ceil(4);
            assert!(
                tokens <= LIST_TOKEN_BUDGET,
                "{version}: tools/list costs {tokens} tokens (> {LIST_TOKEN_BUDGET})"
            );
        }
        for t in TOOLS {
            let d = t.description;
            assert!(
                !d.contains('\n') && d.len() <= 100,
                "{}: one short line: {d}",
                t.name
            );
            assert!(
                d.contains("Use it "),
                "{}: says when to use it: {d}",
                t.name
            );
        }
    }

    /// The listed output schema promises what the full one promises at the top level.
    #[test]
    fn compact_output_schemas_keep_the_required_fields() {
        for t in TOOLS {
            let full = (t.output)();
            let compact = compact_schema(&full);
            assert_eq!(compact["type"], "object");
            assert_eq!(compact.get("required"), full.get("required"), "{}", t.name);
        }
    }

    /// Every generated `inputSchema` closes its object and documents every argument (a field
    /// without a doc comment would reach agents without a description).
    #[test]
    fn every_input_schema_is_closed_and_documented() {
        for t in TOOLS {
            let schema = (t.input)();
            assert_eq!(schema["type"], "object", "{}", t.name);
            assert_eq!(schema["additionalProperties"], false, "{}", t.name);
            let props = schema["properties"].as_object().expect("properties");
            for (name, p) in props {
                assert!(
                    p["description"].as_str().is_some_and(|d| !d.is_empty()),
                    "{}.{name} has no description",
                    t.name
                );
                assert!(p.get("type").is_some(), "{}.{name}: {p}", t.name);
            }
            for r in schema["required"].as_array().into_iter().flatten() {
                assert!(props.contains_key(r.as_str().unwrap()), "{}: {r}", t.name);
            }
        }
        assert_eq!(
            (query::TOOL.input)()["properties"]["level"]["enum"],
            json!(["symbol", "file", "module", "repo", "doc"])
        );
        assert_eq!((get_file::TOOL.input)()["required"], json!(["path"]));
    }
}
