//! `patinad`: the Patina daemon. Keeps the indices of every registered repository warm and answers
//! retrieval queries over gRPC on a Unix socket. See ARCHITECTURE.md for the map.
//!
//! The crate is built in floors, each importing only the floors below it (checked by
//! `tests/tidy.rs`):
//!
//! - [`process`]: the process itself — socket, memory, the allocator's region apart, restarting in
//!   place, the clock.
//! - `state`: what is kept and locked — the repositories, their indices and vectors, the config,
//!   generations, the tuned settings, the embedding backlog's policy, the scheduler interface.
//! - `services`: external resources and stores — the embedding model, git, the commit history,
//!   session notes, feedback, files, blame, snapshots, editor buffers.
//! - `query`: per-request logic — the engine, the oracles, context assembly, the query cache.
//! - `workers`: what happens without a request — the indexer, the embedder, the watcher, the
//!   tuner, the restarter, idle release.
//! - `rpc`: the wire — the gRPC services over the floors below.
//!
//! `app` (with this file) wires them together.

pub mod process;
pub(crate) mod query;
pub(crate) mod rpc;
pub(crate) mod services;
pub(crate) mod state;
pub(crate) mod workers;

mod app;

pub use app::{Exit, Options, check_config, serve};
pub use process::socket::take_inherited as take_activation_socket;
pub use state::config::Config;

/// The system allocator, except for work that must keep its few survivors together (see
/// `process::apart`).
#[cfg(target_os = "linux")]
#[global_allocator]
static ALLOCATOR: process::apart::Allocator = process::apart::Allocator;

/// glibc's allocator for a long-lived process (see `process::memory::tune_allocator`); call before
/// any thread exists.
pub fn tune_allocator() {
    process::memory::tune_allocator();
}
