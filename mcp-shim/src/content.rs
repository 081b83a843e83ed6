//! What a tool answers and how it travels: an [`Outcome`] (text blocks for the model plus the
//! structured form) or the reason it failed, rendered as a `tools/call` result; and the daemon's
//! remedies said for agents. Shared by the tools and the protocol layer.

use serde_json::{Value, json};

use crate::versions::at_least;

/// A tool's answer: text blocks for the model and the structured form.
pub(crate) struct Outcome {
    pub texts: Vec<String>,
    pub structured: Value,
}

/// A tool's answer, or why it failed (the daemon's error text, or a bad argument).
pub(crate) type ToolResult = Result<Outcome, String>;

/// The `tools/call` result: text content, plus `structuredContent` from 2025-06-18; a failure is a
/// result with `isError: true` and the reason.
pub(crate) fn result(outcome: ToolResult, version: &str) -> Value {
    match outcome {
        Ok(o) => {
            let content: Vec<Value> = o
                .texts
                .into_iter()
                .map(|t| json!({"type": "text", "text": t}))
                .collect();
            let mut v = json!({"content": content, "isError": false});
            if at_least(version, "2025-06-18") {
                v["structuredContent"] = o.structured;
            }
            v
        }
        Err(message) => json!({
            "content": [{"type": "text", "text": message}],
            "isError": true,
        }),
    }
}

/// A remedy (`patina_core::Remedy`, the code the daemon sends beside a message) as an agent
/// acts on it: what it can do itself is named as its MCP tool; what only the user can do
/// (register a repository) says so.
pub(crate) fn for_agent(remedy: patina_proto::kinds::Remedy) -> &'static str {
    use patina_proto::kinds::Remedy;
    match remedy {
        Remedy::ListRepos => "list_repos lists them",
        Remedy::AddRepo => "ask the user to register one (`patina add PATH` in a shell)",
    }
}
