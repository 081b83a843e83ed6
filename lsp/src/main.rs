//! `patina-lsp`: a language server on stdio for editors. Workspace symbols, definitions,
//! references and hovers, `patina/search` and the `patina.*` commands are forwarded to `patinad`
//! over its Unix socket; a daemon is started when none runs (in the background while the editor
//! initialises), exactly as `patina-mcp` does — the connection code is shared with it.
//!
//! Transport: LSP base protocol (`Content-Length` frames, `framing.rs` in the library) on
//! stdin/stdout (`stdio.rs`); logs go to stderr (`logging.rs`). A plain thread reads frames,
//! another writes them; requests run concurrently on a current-thread tokio runtime; buffer
//! changes are forwarded in order by one task (`buffers.rs` over the queue in `overlays.rs`) and
//! every request waits until the changes sent before it are indexed.
//!
//! Modules, bottom up (each imports only those below it): `logging`, `stdio`, `jsonrpc`,
//! `overlays`, `convert` (pure conversions to `lsp_types` shapes); `state` (what handlers share);
//! the handlers `buffers` and `methods/` (one file per job), which take the state; and `server`,
//! the loop and dispatcher with the LSP lifecycle. Handlers know the state, never the dispatcher.

mod buffers;
mod convert;
mod jsonrpc;
mod logging;
mod methods;
mod overlays;
mod server;
mod state;
mod stdio;

use std::path::PathBuf;
use std::process::ExitCode;

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
    rt.block_on(server::serve(socket))
}

fn usage(msg: &str) -> ExitCode {
    eprintln!("patina-lsp: {msg}\n\n{HELP}");
    ExitCode::from(2)
}
