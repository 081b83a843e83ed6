//! `patina-mcp`: a Model Context Protocol server on stdio for AI agents (Claude Code and others).
//! The command line only; the server is the `patina_mcp` library (`lib.rs`).

use std::path::PathBuf;
use std::process::ExitCode;

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
    patina_mcp::run(patina_proto::endpoint::socket_path(socket.as_deref()))
}

fn usage(msg: &str) -> ExitCode {
    eprintln!("patina-mcp: {msg}\n\n{HELP}");
    ExitCode::from(2)
}
