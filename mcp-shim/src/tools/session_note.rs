//! `patina_session_note`: record a note in a working session (durably, exactly once).

use patina_proto::v1 as pb;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::content::{Outcome, ToolResult};
use crate::state::State;
use crate::tools::args::{List, Str};
use crate::tools::common::*;
use crate::tools::session::{output, remember, session_name};
use crate::tools::spec::Tool;

pub(super) const TOOL: Tool = Tool {
    name: "patina_session_note",
    description: "Record a decision, finding or dead end. Use it when you learn something.",
    input: crate::tools::args::input_schema::<Args>,
    output,
    read_only: false,
    idempotent: false,
};

/// The arguments of `patina_session_note`; its `inputSchema` is generated from this struct.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Args {
    /// The note (≤ 32 KiB).
    text: Str,
    /// Default: the last started.
    session: Option<Str>,
    /// Tags.
    #[serde(default)]
    tags: List,
}

pub(super) async fn call(state: &State, a: Args) -> ToolResult {
    let text = a.text.0;
    let session = a.session.map(|s| s.0);
    let tags = a.tags.0;
    let req = pb::NoteRequest {
        session: session_name(state, session)?,
        text,
        tags,
        idempotency_key: patina_proto::daemon::idempotency_key(),
    };
    let resp = rpc!(state, pb::sessions_client::SessionsClient<_>, note, req)?;
    let note = resp.note.clone().unwrap_or_default();
    remember(state, &note.session);
    Ok(Outcome {
        texts: vec![format!("Noted as {} (stored durably).", note.r#ref)],
        structured: to_json(&resp),
    })
}
