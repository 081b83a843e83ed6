//! End-to-end specifications for Patina: every test drives the real `patinad` over its real Unix
//! socket, through gRPC or through the real `patina` client, in an isolated `PATINA_HOME`.
//!
//! This module is the harness the test modules share (`tests/main.rs` makes them one test binary):
//!
//! - [`TestEnv`]: a private state root (`PATINA_HOME`) with its daemon; start, stop (SIGTERM), kill
//!   (SIGKILL), run the `patina` client, and call the gRPC services synchronously. Dropping it kills
//!   whatever daemon it owns (or a client started) and, when the test failed, prints the daemon logs.
//! - [`fixture_repo`]: a small multi-language git repository with known definitions, callers and
//!   files the indexer must skip (binary, too large, invalid UTF-8).
//!
//! The binaries are taken from the target directory the tests were built into (`target/<profile>/`),
//! or from `$PATINA_BIN_DIR`. `cargo test --workspace` builds them, with the fault-injection hooks
//! the suite needs (the `test-hooks` feature, turned on by this crate's dev-dependency on the
//! daemon); `cargo test -p patina-tests` does not, so run `cargo build --workspace --features
//! patinad/test-hooks` first in that case (the harness refuses a daemon without the hooks).

//! Its parts: `process` (the binaries, running a command with a timeout), `env` ([`TestEnv`]),
//! `git` (throwaway repositories), `fixtures` ([`fixture_repo`] and its contents), `wait`
//! ([`eventually`], the workspace's paths).

mod env;
mod fixtures;
mod git;
mod postgres;
mod process;
mod wait;

use std::time::Duration;

use patina_proto::v1 as pb;

pub use env::*;
pub use fixtures::*;
pub use git::*;
pub use patina_proto::kinds::{oracle_name, status_name};
pub use pb::{
    GetFileRequest, GetFileResponse, Granularity, Hit, IndexPhase, IndexProgress, ListResponse,
    QueryRequest, QueryResponse, RepoInfo,
};
pub use postgres::*;
pub use process::*;
pub use tonic::{Code, Status};
pub use wait::*;

/// How long a daemon may take to answer after being spawned.
pub const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How long any single client command or RPC may take before the test gives up on it.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(120);
/// The indexing size limit every [`TestEnv`] configures (the fixture's huge file exceeds it).
pub const MAX_FILE_BYTES: u64 = 64 * 1024;
