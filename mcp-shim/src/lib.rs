//! `patina-mcp`: a Model Context Protocol server on stdio for AI agents (Claude Code and others).
//! Every tool call is forwarded to `patinad` over its Unix socket; a daemon is started when none
//! runs, in the background while the client initialises, so the first query is as fast as the
//! hundredth.
//!
//! Transport: newline-delimited JSON-RPC 2.0 on stdin/stdout; logs go to stderr only. A plain
//! thread reads stdin (lines over [`framing::MAX_MESSAGE_BYTES`] are discarded and answered with
//! an error), another writes stdout; requests run concurrently on a current-thread tokio runtime
//! and may be cancelled (`notifications/cancelled`).
//!
//! The modules, bottom up (each imports only modules above it in this list):
//! - `log`, `framing`, `versions`, `answers`: stderr logging, stdin line framing, the protocol
//!   revisions, the connection's recent answers (plain data);
//! - `jsonrpc`: the JSON-RPC envelope and its errors; `content`: a tool's `Outcome` and the
//!   `tools/call` result it becomes;
//! - `state`: the server state every handler takes (daemon channel, version, session, answers);
//! - `tools/`: the tools, one file each, on the state — they never see the dispatcher;
//! - `stdio`: the reader and writer threads; `protocol`: the MCP methods and the dispatch of each
//!   line; `serve`: the main loop; `fuzz`: entry points for the fuzz targets.

mod answers;
mod content;
pub(crate) mod framing;
mod jsonrpc;
mod log;
mod protocol;
mod serve;
mod state;
mod stdio;
mod tools;
mod versions;

#[doc(hidden)]
pub mod fuzz;

pub use serve::run;
