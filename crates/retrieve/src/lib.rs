//! Patina's retrieval logic, pure: understanding a query ([`query`]), expanding it with a
//! repository's vocabulary ([`expand`]), fusing the rankings of
//! independent oracles ([`fusion`]) and ranking the fused candidates ([`rank`]).
//!
//! Architecture invariant: this crate knows nothing of stores, indices, models, async runtimes or
//! the wire protocol. It takes plain values (query text, ranked keys with metadata) and returns
//! plain values, so every rule here is unit-tested on a few in-memory candidates in milliseconds.

pub mod confidence;
pub mod context;
pub mod expand;
pub mod features;
pub mod fusion;
pub mod learned;
pub mod locate;
pub mod mentions;
pub mod pagerank;
pub mod priors;
pub mod query;
pub mod rank;
pub mod stages;
pub mod tune;

pub use query::{Intent, QueryPlan};
