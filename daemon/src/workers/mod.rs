//! Everything that happens without a request: the indexer (index rounds, one at a time), the
//! embedder (static then model vectors, commit messages), the watcher (file-system and git
//! events), the graph builder, the tuner, the restarter and idle release. Each has a `spawn` and a `stop` (or ends
//! with what it serves).
//!
//! Architecture invariant: workers sit above queries (the tuner replays questions through the
//! engine) and below the wire; nothing below them names a worker — requests reach the indexer
//! through [`crate::state::schedule::Scheduler`].

pub(crate) mod embedder;
pub(crate) mod graphs;
pub(crate) mod idle;
pub(crate) mod indexer;
pub(crate) mod notes;
pub(crate) mod restarter;
pub(crate) mod round;
pub(crate) mod tuner;
pub(crate) mod watcher;
