//! Patina's shared vocabulary: the types every layer agrees on — file roles, languages, chunk
//! kinds, chunk and repository ids, what the index records about files and chunks, errors a caller
//! can fix — and the rules decided from a path (and at most the first lines of a file) alone.
//!
//! Architecture invariant: this crate does no I/O and knows nothing of indices, stores, models,
//! async runtimes or the wire protocol. Everything here is a pure function of its arguments; the
//! rules that need the disk (a repository's ignore files) live in `patina-index`.

pub mod chunk_table;
pub mod error;
pub mod eta;
pub mod facts;
pub mod hooks;
pub mod ids;
pub mod lang;
pub mod licence;
pub mod meta;
pub mod oracle;
pub mod paths;
pub mod pii;
pub mod related;
pub mod role;
pub mod tokens;

pub use chunk_table::ChunkTable;
pub use error::{Remedy, UserError};
pub use facts::{FileFacts, Import, Reference, Resolution, TypeRelation};
pub use lang::{ChunkKind, Language, ModuleHalf};
pub use licence::{Licence, LicenceFilter, LicenceSource};
pub use meta::{ChunkMeta, ContentHash, FileRecord, NOTE_KIND, Shared, SkipReason};
pub use oracle::{OracleId, OracleStatus};
pub use paths::{PathFilter, is_doc_path, secret_reason};
pub use role::FileRole;
