//! `patina-chunk`: a file's text → the chunks Patina indexes and returns. Tree-sitter cuts code
//! at symbol level for eight languages (Rust, Python, JavaScript, TypeScript/TSX, Go, Java, C,
//! C++), Markdown is cut into heading sections, anything else into overlapping line windows; see
//! [`chunk_file`]. [`extract_facts`] gives a file's graph facts (references, calls, imports, type
//! relations). [`Language`] recognises a file's language from its path.
//!
//! Architecture invariant: this crate only turns a string into chunks. It never does I/O (the
//! caller reads the file), knows nothing of the index, the store, repositories or the daemon, and
//! has no runtime (no tokio): every function is a pure, synchronous computation on its arguments.

mod chunk;
mod graph;
mod languages;

pub use chunk::{Chunk, ChunkKind, ChunkOptions, chunk_file};
pub use graph::{GRAPH_VERSION, extract_facts};
pub use languages::Language;

/// The version of the chunking rules. Bump it whenever the chunks of some text change (boundaries,
/// symbols, kinds, parents): an index made with another version re-chunks every file at its next
/// full round, so an upgrade takes effect without the user removing and re-adding repositories.
///
/// 2: JavaScript definitions by assignment and by named callback.
/// 3: [`Chunk::prose_share`] (chunks of help text become documentation).
pub const VERSION: u32 = 3;
