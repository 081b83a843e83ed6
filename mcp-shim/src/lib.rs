//! `patina-mcp`: a Model Context Protocol server on stdio for AI agents (Claude Code and others).
//! Every tool call is forwarded to `patinad` over its Unix socket; a daemon is started when none
//! runs, in the background while the client initialises, so the first query is as fast as the
//! hundredth.
//!
//! Transport: newline-delimited JSON-RPC 2.0 on stdin/stdout; logs go to stderr only. A plain
//! thread reads stdin (lines over [`MAX_MESSAGE_BYTES`] are discarded and answered with an error),
//! another writes stdout; requests run concurrently on a current-thread tokio runtime and may be
//! cancelled (`notifications/cancelled`). See `protocol.rs` for the MCP layer and `tools/` for
//! the tools (one file each).

pub(crate) mod framing;
mod protocol;
mod tools;

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use framing::{Input, MAX_MESSAGE_BYTES};

/// Serve MCP on stdin/stdout until the client closes stdin, forwarding tool calls to the daemon
/// at `socket`.
pub fn run(socket: PathBuf) -> ExitCode {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("patina-mcp: cannot start a runtime: {e}");
            return ExitCode::from(2);
        }
    };
    rt.block_on(serve(socket))
}

/// Log to stderr (stdout belongs to the protocol).
pub(crate) fn log(msg: impl std::fmt::Display) {
    eprintln!("patina-mcp: {msg}");
}

pub(crate) fn debug_enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("PATINA_MCP_LOG").is_ok_and(|v| v == "debug"))
}

/// Read newline-delimited messages from stdin on a thread (see [`framing::Lines`]). The channel
/// closes at end of input.
fn spawn_reader(tx: tokio::sync::mpsc::Sender<Input>) {
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut lines = framing::Lines::new(stdin.lock(), MAX_MESSAGE_BYTES);
        loop {
            match lines.next_input() {
                Ok(Some(input)) => {
                    if tx.blocking_send(input).is_err() {
                        return;
                    }
                }
                Ok(None) => return,
                Err(e) => {
                    log(format!("reading stdin: {e}"));
                    return;
                }
            }
        }
    });
}

/// The stdout side: messages are written, one per line, by a dedicated thread so a slow reader
/// never blocks request handling.
#[derive(Clone)]
pub(crate) struct Out(std::sync::mpsc::Sender<Option<String>>);

impl Out {
    fn spawn() -> (Out, std::thread::JoinHandle<()>) {
        let (tx, rx) = std::sync::mpsc::channel::<Option<String>>();
        let handle = std::thread::spawn(move || {
            let stdout = std::io::stdout();
            // `None` ends the stream (everything sent before it is written first).
            while let Ok(Some(msg)) = rx.recv() {
                let mut out = stdout.lock();
                if out
                    .write_all(msg.as_bytes())
                    .and_then(|_| out.write_all(b"\n"))
                    .and_then(|_| out.flush())
                    .is_err()
                {
                    return;
                }
            }
        });
        (Out(tx), handle)
    }

    pub fn send(&self, msg: &Value) {
        let text = msg.to_string();
        if debug_enabled() {
            log(format!("-> {}", truncate_for_log(&text)));
        }
        let _ = self.0.send(Some(text));
    }

    /// Write what was sent so far, then stop the writer.
    fn close(&self) {
        let _ = self.0.send(None);
    }
}

fn truncate_for_log(s: &str) -> &str {
    let mut end = s.len().min(2000);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

async fn serve(socket: PathBuf) -> ExitCode {
    let (in_tx, mut in_rx) = tokio::sync::mpsc::channel::<Input>(64);
    spawn_reader(in_tx);
    let (out, writer) = Out::spawn();
    let server = Arc::new(protocol::Server::new(socket));
    // Connect (starting the daemon if needed) while the client initialises.
    {
        let server = server.clone();
        tokio::spawn(async move {
            if let Err(e) = server.daemon.warm_up().await {
                log(format!("daemon not reachable yet: {e}"));
            }
        });
    }
    let mut inflight: HashMap<String, tokio::task::AbortHandle> = HashMap::new();
    while let Some(input) = in_rx.recv().await {
        inflight.retain(|_, h| !h.is_finished());
        match input {
            Input::TooLong(n) => out.send(&protocol::error_response(
                Value::Null,
                protocol::INVALID_REQUEST,
                &format!(
                    "message of {n} bytes exceeds the limit of {MAX_MESSAGE_BYTES} bytes and was discarded"
                ),
            )),
            Input::Line(bytes) => {
                if debug_enabled() {
                    log(format!(
                        "<- {}",
                        truncate_for_log(&String::from_utf8_lossy(&bytes))
                    ));
                }
                protocol::dispatch(&server, &out, &bytes, &mut inflight);
            }
        }
    }
    // End of input: let running requests finish (briefly), then flush and exit.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while inflight.values().any(|h| !h.is_finished()) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    out.close();
    let _ = writer.join();
    ExitCode::SUCCESS
}

/// Entry points for the fuzz targets in `fuzz/` (not an API): the line framing and the handling
/// of one message up to the daemon call, on arbitrary bytes.
#[doc(hidden)]
pub mod fuzz {
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
        let Ok(crate::protocol::Message::Request { method, params, .. }) =
            crate::protocol::classify(v)
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
}
