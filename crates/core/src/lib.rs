//! Patina's shared vocabulary: the types every layer agrees on, decided from a path (and at most the
//! first lines of a file) alone.
//!
//! Architecture invariant: this crate does no I/O and knows nothing of indices, stores, models,
//! async runtimes or the wire protocol. Everything here is a pure function of its arguments.

pub mod oracle;
pub mod role;
pub mod tokens;

pub use oracle::{OracleId, OracleStatus};
pub use role::FileRole;
