//! The server's main loop: a current-thread runtime, the stdio threads, the daemon warmed up in
//! the background, every input line handed to the protocol layer, and a clean end at end of
//! input (running requests get a moment to finish).

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::framing::{Input, MAX_MESSAGE_BYTES};
use crate::jsonrpc::{INVALID_REQUEST, error_response};
use crate::log::{debug_enabled, log, truncate_for_log};
use crate::protocol;
use crate::state::State;
use crate::stdio::{Out, spawn_reader};

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

async fn serve(socket: PathBuf) -> ExitCode {
    let (in_tx, mut in_rx) = tokio::sync::mpsc::channel::<Input>(64);
    spawn_reader(in_tx);
    let (out, writer) = Out::spawn();
    let state = Arc::new(State::new(socket));
    // Connect (starting the daemon if needed) while the client initialises.
    {
        let state = state.clone();
        tokio::spawn(async move {
            if let Err(e) = state.daemon.warm_up().await {
                log(format!("daemon not reachable yet: {e}"));
            }
        });
    }
    let mut inflight: HashMap<String, tokio::task::AbortHandle> = HashMap::new();
    while let Some(input) = in_rx.recv().await {
        inflight.retain(|_, h| !h.is_finished());
        match input {
            Input::TooLong(n) => out.send(&error_response(
                Value::Null,
                INVALID_REQUEST,
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
                protocol::dispatch(&state, &out, &bytes, &mut inflight);
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
