//! `patina_feedback`: say which results of an answer helped (or did not) and rate it; and the
//! implicit feedback this connection records by itself: reading a result with `get_file` soon
//! after the answer that listed it marks it used (which answers count: `answers.rs`).

use patina_proto::v1 as pb;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::content::{Outcome, ToolResult};
use crate::state::State;
use crate::tools::args::{Int, List, Str};
use crate::tools::spec::Tool;

pub(super) const TOOL: Tool = Tool {
    name: "patina_feedback",
    description: "Name the results of an answer that helped, and rate it. Use it after a search.",
    input: crate::tools::args::input_schema::<Args>,
    output,
    read_only: false,
    idempotent: false,
};

/// The arguments of `patina_feedback`; its `inputSchema` is generated from this struct.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Args {
    /// The answer's `query_id`.
    query_id: Str,
    /// Results that helped.
    #[serde(default)]
    used: List,
    /// Results that did not help.
    #[serde(default)]
    unhelpful: List,
    /// 1 (useless) to 5 (exact).
    rating: Option<Int<1, 5>>,
}

fn output() -> Value {
    json!({
        "type": "object",
        "properties": {
            "id": {"type": "integer", "description": "the stored record"},
            "known_query": {"type": "boolean", "description": "the daemon still remembered the answer"}
        },
        "required": ["id"]
    })
}

pub(super) async fn call(state: &State, a: Args) -> ToolResult {
    let req = pb::FeedbackRequest {
        query_id: a.query_id.0,
        used: a.used.0,
        unhelpful: a.unhelpful.0,
        rating: a.rating.map_or(0, |r| r.0 as u32),
        implicit: false,
        session: state
            .session
            .lock()
            .expect("session lock")
            .clone()
            .unwrap_or_default(),
    };
    let resp = rpc!(state, pb::feedback_client::FeedbackClient<_>, record, req)?;
    Ok(Outcome {
        texts: vec![format!("Feedback recorded (#{}).", resp.id)],
        structured: json!({"id": resp.id, "known_query": resp.known_query}),
    })
}

/// `get_file` read `path` of `repo_id`: if a recent answer listed it, record that it was used.
/// Best effort: a failure is logged, never the agent's problem.
pub(super) async fn file_read(state: &State, repo_id: &str, path: &str) {
    let Some(query_id) = state.answers.claim(repo_id, path) else {
        return;
    };
    let req = pb::FeedbackRequest {
        query_id,
        used: vec![path.to_string()],
        implicit: true,
        session: state
            .session
            .lock()
            .expect("session lock")
            .clone()
            .unwrap_or_default(),
        ..Default::default()
    };
    if let Err(e) = rpc!(state, pb::feedback_client::FeedbackClient<_>, record, req) {
        crate::log::log(format!("implicit feedback not recorded: {e}"));
    }
}
