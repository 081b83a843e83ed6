//! What the daemon keeps and locks: the config, the registered repositories (each one's index,
//! vectors, commit-message vectors, history handle and tuned settings), the set of them and how a
//! name resolves, generations (what an answer was computed from), the embedding backlog's
//! policy, what indexing a large repository costs, and the scheduler interface through which a request asks for an index round.
//!
//! Architecture invariant: data and locks only. State runs no model, starts no task, reads no
//! git and knows no request or wire type; it imports only `process`.

pub(crate) mod backlog;
pub(crate) mod config;
pub(crate) mod estimate;
pub(crate) mod generations;
pub(crate) mod messages;
pub(crate) mod repo;
pub(crate) mod repos;
pub(crate) mod schedule;
pub(crate) mod tuned;
pub(crate) mod vector_builds;
