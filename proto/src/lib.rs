//! The `patina.v1` wire protocol: one gRPC service per concern (health, repos, search, files,
//! sessions), generated from `proto/patina/v1/*.proto`, plus [`endpoint`]: where the daemon's
//! socket lives, how a client connects to it and starts a daemon when none runs. Clients enable
//! the `client` feature, the daemon `server`; `json` makes every message `serde::Serialize`.

#[cfg(feature = "client")]
pub mod daemon;
pub mod endpoint;
pub mod kinds;
pub mod roles;

/// Bumped whenever a change makes old clients and new daemons (or the reverse) misunderstand each other.
pub const PROTOCOL_VERSION: u32 = 2;

#[allow(clippy::all, missing_docs)]
pub mod v1 {
    tonic::include_proto!("patina.v1");
}
