//! `patina-lsp`: a language server on stdio for editors. Workspace symbols, definitions,
//! references and hovers, `patina/search` and the `patina.*` commands are forwarded to `patinad`
//! over its Unix socket; a daemon is started when none runs (in the background while the editor
//! initialises), exactly as `patina-mcp` does — the connection code is shared with it.
//!
//! Transport: LSP base protocol (`Content-Length` frames, `framing.rs`) on stdin/stdout; logs go
//! to stderr. A plain thread reads frames, another writes them; requests run concurrently on a
//! current-thread tokio runtime; buffer changes are forwarded in order by one task (`buffers.rs`)
//! and every request waits until the changes sent before it are indexed. `server.rs` holds the
//! JSON-RPC and LSP lifecycle, `methods.rs` the methods, `convert.rs` the pure conversions.

mod buffers;
mod convert;
// The daemon connection (start when absent, reconnect with backoff) is patina-mcp's, shared as
// source rather than as a crate of two files.
#[allow(dead_code)]
use patina_lsp::framing;
mod methods;
mod server;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::Value;

const HELP: &str = "\
patina-lsp: Patina's language server (stdio) for editors.

Usage: patina-lsp [--socket PATH]

Speaks the Language Server Protocol on stdin/stdout and forwards workspace/symbol, definition,
references, hover, patina/search and the patina.search / patina.context / patina.related commands
to the patinad daemon, starting it when none runs. Unsaved buffers are indexed as overlays of
their files, so searches see what the editor shows. Editor set-up: editors/ in the repository.

Options:
  --socket PATH   daemon socket (default: $PATINA_SOCKET, $PATINA_HOME/run/patina.sock,
                  $XDG_RUNTIME_DIR/patina/patina.sock)
  -h, --help      this help
  -V, --version   version

Environment: PATINA_HOME, PATINA_SOCKET, PATINA_DAEMON_BIN (the daemon to start),
PATINA_LSP_LOG=debug (log every message to stderr).";

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
                println!("patina-lsp {}", env!("CARGO_PKG_VERSION"));
                return ExitCode::SUCCESS;
            }
            // Editors often pass this; stdio is the only transport.
            "--stdio" => {}
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
            eprintln!("patina-lsp: cannot start a runtime: {e}");
            return ExitCode::from(2);
        }
    };
    rt.block_on(serve(socket))
}

fn usage(msg: &str) -> ExitCode {
    eprintln!("patina-lsp: {msg}\n\n{HELP}");
    ExitCode::from(2)
}

/// Log to stderr (stdout belongs to the protocol).
pub(crate) fn log(msg: impl std::fmt::Display) {
    eprintln!("patina-lsp: {msg}");
}

pub(crate) fn debug_enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("PATINA_LSP_LOG").is_ok_and(|v| v == "debug"))
}

/// Read frames from stdin on a thread. The channel closes at end of input.
fn spawn_reader(tx: tokio::sync::mpsc::Sender<framing::Frame>) {
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut input = stdin.lock();
        loop {
            match framing::read_frame(&mut input) {
                Ok(Some(frame)) => {
                    if tx.blocking_send(frame).is_err() {
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

/// The stdout side: framed messages written by a dedicated thread.
#[derive(Clone)]
pub(crate) struct Out(std::sync::mpsc::Sender<Option<String>>);

impl Out {
    fn spawn() -> (Out, std::thread::JoinHandle<()>) {
        let (tx, rx) = std::sync::mpsc::channel::<Option<String>>();
        let handle = std::thread::spawn(move || {
            let stdout = std::io::stdout();
            while let Ok(Some(msg)) = rx.recv() {
                let mut out = stdout.lock();
                if framing::write_frame(&mut out, msg.as_bytes()).is_err() {
                    return;
                }
            }
            let _ = stdout.lock().flush();
        });
        (Out(tx), handle)
    }

    pub fn send(&self, msg: &Value) {
        let text = msg.to_string();
        if debug_enabled() {
            log(format!("-> {}", &text[..text.floor_char_boundary(2000)]));
        }
        let _ = self.0.send(Some(text));
    }

    fn close(&self) {
        let _ = self.0.send(None);
    }
}

async fn serve(socket: PathBuf) -> ExitCode {
    let (in_tx, mut in_rx) = tokio::sync::mpsc::channel::<framing::Frame>(64);
    spawn_reader(in_tx);
    let (out, writer) = Out::spawn();
    let server = Arc::new(server::Server::new(socket, out.clone()));
    {
        let server = server.clone();
        tokio::spawn(async move {
            if let Err(e) = server.daemon.warm_up().await {
                log(format!("daemon not reachable yet: {e}"));
            }
        });
    }
    buffers::spawn_worker(server.clone());
    let mut exit = None;
    while let Some(frame) = in_rx.recv().await {
        if let Some(code) = server::dispatch(&server, frame) {
            exit = Some(code);
            break;
        }
    }
    // `exit` (or the end of input): give running requests a moment, flush and leave. Without a
    // `shutdown` first the exit code is 1, as the protocol prescribes.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(2);
    while server.busy() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    out.close();
    let _ = writer.join();
    let code = exit.unwrap_or(if server.is_shut_down() { 0 } else { 1 });
    ExitCode::from(code)
}
