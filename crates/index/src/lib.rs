//! `patina-index`: one repository on disk. The sled store ([`store`], the only code that knows its
//! layout — repositories, file records, chunk rows and texts, session notes), the chunk log's and
//! embedding cache's files beside it ([`chunk_log`], [`embedding_cache`]),
//! the tantivy lexical index ([`lexical`]), the vector index ([`vectors`]), the symbol table
//! ([`symbols`]), the walk and the repository's ignore rules ([`walk`], [`ignore`]), and the
//! incremental index round ([`RepoIndex::index_round`]) that walks, chunks and commits in batches,
//! handing every commit's [`Delta`] to its caller.
//!
//! Architecture invariant: this crate is synchronous library code. It never imports tokio, tonic
//! or the embedder (`patina-embed`), and knows nothing of the daemon's registry, jobs, watchers or
//! the wire: a round reports through a [`RoundSink`], and whoever keeps vectors brings them in
//! line with each [`Delta`]. sled, tantivy and the `ignore` crate are dependencies of this crate
//! only.

pub mod chunk_log;
pub mod embedding_cache;
pub mod expansion;
pub mod graph;
pub mod history;
pub mod ignore;
pub mod lexical;
pub mod licences;
pub mod navigate;
pub mod neighbourhood;
pub mod repo;
pub mod repo_map;
pub mod round;
pub mod snapshot;
pub mod store;
pub mod symbols;
pub mod tokens;
pub mod vectors;
pub mod walk;

pub use lexical::LexicalIndex;
pub use repo::{Delta, RepoIndex};
pub use round::{Phase, Progress, Repaired, RoundOptions, RoundSink, Scope, Summary};

/// Test hook: when `PATINA_TEST_CRASH_AT` names this point (a comma-separated list may name
/// several), run `before` (e.g. make some state durable) and abort the process as a crash would:
/// no destructors, no flush, no reply. Lets the end-to-end suite kill the daemon at an exact
/// moment instead of at a random one.
pub fn crash_point(name: &str, before: impl FnOnce()) {
    static POINTS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    let points = POINTS.get_or_init(|| {
        patina_core::hooks::test_hook("PATINA_TEST_CRASH_AT")
            .unwrap_or_default()
            .split(',')
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty())
            .collect()
    });
    if points.iter().any(|p| p == name) {
        before();
        tracing::warn!(point = name, "PATINA_TEST_CRASH_AT: aborting");
        eprintln!("patinad: test crash point {name}: aborting");
        std::process::abort();
    }
}
