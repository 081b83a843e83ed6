//! What the index records about a file and a chunk: plain data, stored by `patina-index`, read by
//! the oracles and the ranking.

use serde::{Deserialize, Serialize};

use crate::{ChunkKind, FileRole, Language};

/// Why a file was not indexed.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    Binary,
    TooLarge,
    InvalidUtf8,
    Unreadable,
    /// Credentials and environment files (`.env`, keys, …): never read, never searchable.
    Secret,
    /// A file whose name is not valid UTF-8 (the walk lists it, escaped, as an example).
    InvalidName,
    /// Not a regular file: a FIFO, a socket or a device node (never opened).
    NotRegular,
    /// A directory the walk could not read (permissions): nothing below it is indexed.
    UnreadableDir,
}

impl SkipReason {
    pub fn name(self) -> &'static str {
        match self {
            SkipReason::Binary => "binary",
            SkipReason::TooLarge => "too_large",
            SkipReason::InvalidUtf8 => "invalid_utf8",
            SkipReason::Unreadable => "unreadable",
            SkipReason::Secret => "secret",
            SkipReason::InvalidName => "invalid_name",
            SkipReason::NotRegular => "not_regular",
            SkipReason::UnreadableDir => "unreadable_dir",
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FileRecord {
    pub mtime_ns: i128,
    pub size: u64,
    /// blake3 of the content, hex; `None` for files skipped before reading.
    pub hash: Option<String>,
    pub language: Option<Language>,
    pub lines: u32,
    pub chunk_ids: Vec<u64>,
    pub skipped: Option<SkipReason>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ChunkMeta {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub symbol: Option<String>,
    pub kind: ChunkKind,
    pub parent: Option<String>,
    pub language: Language,
    /// blake3 of the chunk text, hex.
    pub hash: String,
    /// What the chunk's file (or the chunk itself: a Rust `mod tests`) is for. Absent in indices
    /// written before roles existed: [`ChunkMeta::role`] falls back to the path rules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<FileRole>,
    /// The file's licence, decided at index time (header, manifest, licence file). Absent in
    /// indices written before licences: the next round reads such files again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub licence: Option<crate::Licence>,
}

impl ChunkMeta {
    /// The chunk's role: as decided at index time, else from its path.
    pub fn role(&self) -> FileRole {
        self.role
            .unwrap_or_else(|| crate::role::classify(&self.path, None))
    }
}
