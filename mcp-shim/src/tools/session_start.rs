//! `patina_session_start`: start or resume a working session.

use std::fmt::Write as _;

use patina_proto::v1 as pb;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::content::{Outcome, ToolResult};
use crate::state::State;
use crate::tools::args::Str;
use crate::tools::common::*;
use crate::tools::session::{output, remember};
use crate::tools::spec::Tool;

pub(super) const TOOL: Tool = Tool {
    name: "patina_session_start",
    description: "Start or resume a working session. Use it when a task begins.",
    input: crate::tools::args::input_schema::<Args>,
    output,
    read_only: false,
    idempotent: true,
};

/// The arguments of `patina_session_start`; its `inputSchema` is generated from this struct.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Args {
    /// `A-Za-z0-9._-`; an existing one resumes.
    name: Option<Str>,
    /// Its goal.
    goal: Option<Str>,
    /// Repository its notes belong to.
    repo: Option<Str>,
}

pub(super) async fn call(state: &State, a: Args) -> ToolResult {
    let name = a.name.map(|s| s.0).unwrap_or_default();
    let goal = a.goal.map(|s| s.0).unwrap_or_default();
    let repo = a.repo.map(|s| s.0).unwrap_or_default();
    let req = pb::StartSessionRequest { name, repo, goal };
    let resp = rpc!(state, pb::sessions_client::SessionsClient<_>, start, req)?;
    let session = resp.session.clone().unwrap_or_default();
    remember(state, &session.name);
    let mut structured = to_json(&resp);
    let mut text = format!(
        "Session '{}' {} ({} note(s) so far). Record decisions and findings with \
         patina_session_note; they surface in later searches as session:{}#<n>.",
        session.name,
        if resp.resumed { "resumed" } else { "started" },
        session.notes,
        session.name
    );
    if resp.resumed && session.notes > 0 {
        let req = pb::ListSessionsRequest {
            session: session.name.clone(),
        };
        let notes = rpc!(state, pb::sessions_client::SessionsClient<_>, list, req)?.notes;
        text.push_str("\nNotes so far:");
        for n in &notes {
            let _ = write!(text, "\n- {}: {}", n.r#ref, one_line(&n.text, 200));
        }
        structured["notes"] = Value::Array(notes.iter().map(to_json).collect());
    }
    Ok(Outcome {
        texts: vec![text],
        structured,
    })
}
