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

mod protocol;
mod tools;

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

/// Messages longer than this are discarded unread (and answered with an Invalid Request error).
pub(crate) const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

const HELP: &str = "\
patina-mcp: Patina's MCP server (stdio) for AI agents.

Usage: patina-mcp [--socket PATH]

Speaks the Model Context Protocol (2025-06-18, 2025-03-26, 2024-11-05) on stdin/stdout and forwards
every tool call to the patinad daemon, starting it when none runs. Register it with an agent, e.g.

    claude mcp add patina -- patina-mcp

Options:
  --socket PATH   daemon socket (default: $PATINA_SOCKET, $PATINA_HOME/run/patina.sock,
                  $XDG_RUNTIME_DIR/patina/patina.sock)
  -h, --help      this help
  -V, --version   version

Environment: PATINA_HOME, PATINA_SOCKET, PATINA_DAEMON_BIN (the daemon to start),
PATINA_MCP_LOG=debug (log every message to stderr).";

fn main() -> ExitCode {
    let mut socket: Option<PathBuf> = None;
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        let arg_s = arg.to_string_lossy();
        match arg_s.as_ref() {
            "-h" | "--help" => {
                println!("{HELP}");
                return ExitCode::SUCCESS;
            }
            "-V" | "--version" => {
                println!("patina-mcp {}", env!("CARGO_PKG_VERSION"));
                return ExitCode::SUCCESS;
            }
            "--socket" => match args.next() {
                Some(p) => socket = Some(PathBuf::from(p)),
                None => return usage("--socket needs a path"),
            },
            s if s.starts_with("--socket=") => {
                socket = Some(PathBuf::from(&s["--socket=".len()..]));
            }
            s => return usage(&format!("unknown argument '{s}'")),
        }
    }
    let socket = patina_proto::endpoint::socket_path(socket.as_deref());
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

fn usage(msg: &str) -> ExitCode {
    eprintln!("patina-mcp: {msg}\n\n{HELP}");
    ExitCode::from(2)
}

/// Log to stderr (stdout belongs to the protocol).
pub(crate) fn log(msg: impl std::fmt::Display) {
    eprintln!("patina-mcp: {msg}");
}

pub(crate) fn debug_enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("PATINA_MCP_LOG").is_ok_and(|v| v == "debug"))
}

/// What the stdin thread reads.
enum Input {
    Line(Vec<u8>),
    /// A message over the limit, discarded: its size in bytes.
    TooLong(usize),
}

/// Read newline-delimited messages from stdin on a thread, bounding each to
/// [`MAX_MESSAGE_BYTES`]. The channel closes at end of input.
fn spawn_reader(tx: tokio::sync::mpsc::Sender<Input>) {
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut input = stdin.lock();
        let mut buf: Vec<u8> = Vec::new();
        let mut discarded = 0usize;
        loop {
            let available = match input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    log(format!("reading stdin: {e}"));
                    return;
                }
            };
            if available.is_empty() {
                // End of input: a last line without a newline still counts.
                let last = if discarded > 0 {
                    Some(Input::TooLong(discarded))
                } else if !buf.is_empty() {
                    Some(Input::Line(std::mem::take(&mut buf)))
                } else {
                    None
                };
                if let Some(m) = last {
                    let _ = tx.blocking_send(m);
                }
                return;
            }
            let (chunk, complete) = match available.iter().position(|&b| b == b'\n') {
                Some(i) => (&available[..i], Some(i + 1)),
                None => (available, None),
            };
            if discarded > 0 || buf.len() + chunk.len() > MAX_MESSAGE_BYTES {
                discarded += buf.len() + chunk.len();
                buf.clear();
            } else {
                buf.extend_from_slice(chunk);
            }
            let used = complete.unwrap_or(chunk.len());
            input.consume(used);
            if complete.is_some() {
                let msg = if discarded > 0 {
                    Input::TooLong(std::mem::take(&mut discarded))
                } else {
                    Input::Line(std::mem::take(&mut buf))
                };
                if tx.blocking_send(msg).is_err() {
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
