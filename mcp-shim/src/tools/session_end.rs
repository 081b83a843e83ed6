//! `patina_session_end`: end a working session, optionally with a summary.

use std::fmt::Write as _;

use patina_proto::v1 as pb;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::content::{Outcome, ToolResult};
use crate::state::State;
use crate::tools::args::Str;
use crate::tools::common::*;
use crate::tools::session::{output, session_name};
use crate::tools::spec::Tool;

pub(super) const TOOL: Tool = Tool {
    name: "patina_session_end",
    description: "End the session, with an optional summary. Use it when done.",
    input: crate::tools::args::input_schema::<Args>,
    output,
    read_only: false,
    idempotent: true,
};

/// The arguments of `patina_session_end`; its `inputSchema` is generated from this struct.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Args {
    /// Default: the last started.
    session: Option<Str>,
    /// Stored as the last note.
    summary: Option<Str>,
}

pub(super) async fn call(state: &State, a: Args) -> ToolResult {
    let session = a.session.map(|s| s.0);
    let summary = a.summary.map(|s| s.0).unwrap_or_default();
    let req = pb::EndSessionRequest {
        session: session_name(state, session)?,
        summary,
        idempotency_key: patina_proto::daemon::idempotency_key(),
    };
    let resp = rpc!(state, pb::sessions_client::SessionsClient<_>, end, req)?;
    let session = resp.session.clone().unwrap_or_default();
    let mut text = format!(
        "Session '{}' ended with {} note(s); they stay searchable.",
        session.name, session.notes
    );
    if let Some(s) = &resp.summary {
        let _ = write!(text, " Summary stored as {}.", s.r#ref);
    }
    Ok(Outcome {
        texts: vec![text],
        structured: to_json(&resp),
    })
}
