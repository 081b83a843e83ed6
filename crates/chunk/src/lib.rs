//! `patina-chunk`: a file's text → the chunks Patina indexes and returns. Tree-sitter cuts code
//! at symbol level for eight languages (Rust, Python, JavaScript, TypeScript/TSX, Go, Java, C,
//! C++), Markdown is cut into heading sections, anything else into overlapping line windows; see
//! [`chunk_file`]. [`Language`] recognises a file's language from its path.
//!
//! Architecture invariant: this crate only turns a string into chunks. It never does I/O (the
//! caller reads the file), knows nothing of the index, the store, repositories or the daemon, and
//! has no runtime (no tokio): every function is a pure, synchronous computation on its arguments.

mod chunk;
mod languages;

pub use chunk::{Chunk, ChunkKind, ChunkOptions, chunk_file};
pub use languages::Language;
