//! Per-request logic: the query engine (plan, run the oracles, fuse and rank, collect, notices),
//! the oracles, context assembly and the query cache.
//!
//! Architecture invariant: a query never starts a worker or an index job itself — it asks the
//! [`crate::state::schedule::Scheduler`] — and knows nothing of the wire.

pub(crate) mod cache;
pub(crate) mod collect;
pub(crate) mod context;
pub(crate) mod engine;
mod notices;
pub(crate) mod oracles;
pub(crate) mod pipeline;
mod prepare;
pub(crate) mod priors;
pub(crate) mod request;
mod subjects;
