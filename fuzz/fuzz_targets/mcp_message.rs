//! One JSON-RPC message as `patina-mcp` checks it before any daemon call: the envelope, the
//! method, and a tool's arguments against its schema.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    patina_mcp::fuzz::message(data);
});
