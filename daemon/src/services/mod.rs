//! External resources and the stores beside the index: the embedding model (sessions, cache keys,
//! query embedding, static and model vectors), git and blame, the commit history, session notes,
//! feedback, files, snapshots, a team's shared store, editor buffers and index freshness.
//!
//! Architecture invariant: a service answers one call; it starts no long-lived task (that is a
//! worker's) and knows nothing of queries' ranking or of the wire.

pub(crate) mod blame;
pub(crate) mod buffers;
pub(crate) mod commits;
pub(crate) mod embedding;
pub(crate) mod feedback;
pub(crate) mod files;
pub(crate) mod freshness;
pub(crate) mod git;
pub(crate) mod history;
pub(crate) mod navigate;
pub(crate) mod sessions;
pub(crate) mod snapshot;
pub(crate) mod team;
