//! What the three session tools share: their output schema and the session remembered per
//! connection (the default `session` of note and end).

use serde_json::{Value, json};

use crate::state::State;

/// The `outputSchema` of every session tool.
pub(super) fn output() -> Value {
    let note = json!({"type": "object", "properties": {
        "id": {"type": "integer"}, "session": {"type": "string"}, "seq": {"type": "integer"},
        "ref": {"type": "string"}, "text": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}}, "created_unix_ms": {"type": "integer"}}});
    json!({
        "type": "object",
        "properties": {
            "session": {"type": "object", "properties": {
                "name": {"type": "string"}, "repo_id": {"type": "string"}, "goal": {"type": "string"},
                "started_unix_ms": {"type": "integer"}, "ended_unix_ms": {"type": "integer"},
                "notes": {"type": "integer"}}, "required": ["name"]},
            "resumed": {"type": "boolean"},
            "note": note.clone(),
            "summary": note.clone(),
            "notes": {"type": "array", "items": note}
        },
        "required": ["session"]
    })
}

pub(super) fn remember(state: &State, name: &str) {
    *state.session.lock().expect("session lock") = Some(name.to_string());
}

pub(super) fn session_name(state: &State, given: Option<String>) -> Result<String, String> {
    given
        .or_else(|| state.session.lock().expect("session lock").clone())
        .ok_or_else(|| {
            "no session given and none was started through this connection; pass 'session' or \
             call patina_session_start first"
                .into()
        })
}
