//! Entry points for the fuzz targets in `fuzz/` (not an API): the line framing and the handling
//! of one message up to the daemon call, on arbitrary bytes.

use serde_json::{Map, Value};

/// Split `bytes` into messages as stdin is split, through a reader that hands out at most
/// `chunk` bytes at a time, with messages limited to `max` bytes; check what comes out.
pub fn framing(bytes: &[u8], chunk: usize, max: usize) {
    let reader = std::io::BufReader::with_capacity(chunk.max(1), bytes);
    let mut lines = crate::framing::Lines::new(reader, max);
    let mut seen = 0usize;
    while let Some(input) = lines.next_input().expect("reading from memory") {
        match input {
            crate::framing::Input::Line(l) => {
                assert!(l.len() <= max, "a line over the limit was delivered");
                assert!(!l.contains(&b'\n'), "a delivered line holds a newline");
                seen += l.len();
            }
            crate::framing::Input::TooLong(n) => {
                assert!(n > max, "a line within the limit was discarded");
                seen += n;
            }
        }
    }
    assert!(seen <= bytes.len(), "more bytes delivered than read");
}

/// One message as the server validates it before any daemon call: JSON, the JSON-RPC
/// envelope, and for `tools/call` the tool's arguments against its schema; `tools/list` for
/// any version string.
pub fn message(bytes: &[u8]) {
    let Ok(v) = serde_json::from_slice::<Value>(bytes) else {
        return;
    };
    let Ok(crate::jsonrpc::Message::Request { method, params, .. }) = crate::jsonrpc::classify(v)
    else {
        return;
    };
    match method.as_str() {
        "tools/call" => {
            let name = params.get("name").and_then(Value::as_str).unwrap_or("");
            let Some(tool) = crate::tools::find(name) else {
                return;
            };
            let arguments = params
                .get("arguments")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_else(Map::new);
            let _ = crate::tools::check_arguments(tool, arguments);
        }
        "tools/list" | "initialize" => {
            let version = params
                .get("protocolVersion")
                .and_then(Value::as_str)
                .unwrap_or("");
            let _ = crate::tools::list(version);
        }
        _ => {}
    }
}
