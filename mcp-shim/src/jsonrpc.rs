//! JSON-RPC 2.0: the error codes, the response envelopes, and the validation of one incoming
//! message (`classify`). Knows nothing of MCP's methods.

use serde_json::{Map, Value, json};

use crate::log::log;

pub(crate) const PARSE_ERROR: i64 = -32700;
pub(crate) const INVALID_REQUEST: i64 = -32600;
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
pub(crate) const INVALID_PARAMS: i64 = -32602;

pub(crate) fn error_response(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

pub(crate) fn result_response(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

pub(crate) enum Message {
    Request {
        id: Value,
        method: String,
        params: Map<String, Value>,
    },
    Notification {
        method: String,
        params: Map<String, Value>,
    },
    /// A response or error from the client: we send no requests, so it is ignored.
    Response,
}

/// Validate the envelope. `Err` carries the error response to send (`None` for a broken
/// notification, which gets no answer).
pub(crate) fn classify(msg: Value) -> Result<Message, Option<Value>> {
    let Value::Object(mut m) = msg else {
        return Err(Some(error_response(
            Value::Null,
            INVALID_REQUEST,
            "invalid request: a message must be a JSON object",
        )));
    };
    let id = m.remove("id");
    let id_valid = matches!(id, None | Some(Value::String(_)) | Some(Value::Number(_)));
    let reply_id = match &id {
        Some(v @ (Value::String(_) | Value::Number(_))) => v.clone(),
        _ => Value::Null,
    };
    let is_notification = id.is_none();
    let fail = |code: i64, msg: &str| {
        if is_notification {
            log(format!("ignoring a malformed notification: {msg}"));
            Err(None)
        } else {
            Err(Some(error_response(reply_id.clone(), code, msg)))
        }
    };
    if m.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return fail(
            INVALID_REQUEST,
            "invalid request: \"jsonrpc\" must be \"2.0\"",
        );
    }
    if !id_valid {
        return Err(Some(error_response(
            Value::Null,
            INVALID_REQUEST,
            "invalid request: \"id\" must be a string or a number",
        )));
    }
    let method = match m.remove("method") {
        Some(Value::String(method)) => method,
        Some(_) => {
            return fail(
                INVALID_REQUEST,
                "invalid request: \"method\" must be a string",
            );
        }
        None if m.contains_key("result") || m.contains_key("error") => {
            return Ok(Message::Response);
        }
        None => return fail(INVALID_REQUEST, "invalid request: \"method\" is missing"),
    };
    let params = match m.remove("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(p)) => p,
        Some(_) => {
            return fail(
                INVALID_PARAMS,
                &format!("invalid params for {method}: \"params\" must be an object"),
            );
        }
    };
    Ok(match id {
        Some(id) => Message::Request { id, method, params },
        None => Message::Notification { method, params },
    })
}
