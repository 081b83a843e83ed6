//! `patina_session_note`: record a note in a working session (durably, exactly once).

use patina_proto::v1 as pb;
use schemars::JsonSchema;
use serde::Deserialize;

use super::args::{List, Str};
use super::common::*;
use super::session::{output, remember, session_name};
use super::{Outcome, Tool, ToolResult};
use crate::protocol::Server;

pub(super) const TOOL: Tool = Tool {
    name: "patina_session_note",
    description: "Record a decision, finding or dead end. Use it when you learn something.",
    input: super::args::input_schema::<Args>,
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

pub(super) async fn call(server: &Server, a: Args) -> ToolResult {
    let text = a.text.0;
    let session = a.session.map(|s| s.0);
    let tags = a.tags.0;
    let req = pb::NoteRequest {
        session: session_name(server, session)?,
        text,
        tags,
        idempotency_key: patina_proto::daemon::idempotency_key(),
    };
    let resp = rpc!(server, pb::sessions_client::SessionsClient<_>, note, req)?;
    let note = resp.note.clone().unwrap_or_default();
    remember(server, &note.session);
    Ok(Outcome {
        texts: vec![format!("Noted as {} (stored durably).", note.r#ref)],
        structured: to_json(&resp),
    })
}
