//! JSON-RPC 2.0: the error codes this server answers with and the envelopes of its messages.

use serde_json::{Value, json};

pub(crate) const PARSE_ERROR: i64 = -32700;
pub(crate) const INVALID_REQUEST: i64 = -32600;
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
pub(crate) const INVALID_PARAMS: i64 = -32602;
pub(crate) const INTERNAL_ERROR: i64 = -32603;
pub(crate) const SERVER_NOT_INITIALIZED: i64 = -32002;
pub(crate) const REQUEST_CANCELLED: i64 = -32800;
pub(crate) const REQUEST_FAILED: i64 = -32803;

/// A method's failure: a JSON-RPC error code and message.
pub(crate) type Failure = (i64, String);

/// The response to request `id`: its result or its error.
pub(crate) fn response(id: Value, result: Result<Value, Failure>) -> Value {
    match result {
        Ok(r) => json!({"jsonrpc": "2.0", "id": id, "result": r}),
        Err((code, msg)) => error_response(id, code, &msg),
    }
}

pub(crate) fn error_response(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

pub(crate) fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

pub(crate) fn request(id: &str, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A typed value as JSON (LSP shapes and Patina's own always serialize; the error is for form).
pub(crate) fn to_json(value: impl serde::Serialize) -> Result<Value, Failure> {
    serde_json::to_value(value).map_err(|e| (INTERNAL_ERROR, format!("serializing: {e}")))
}
