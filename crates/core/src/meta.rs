//! What the index records about a file and a chunk: plain data, stored by `patina-index`, read by
//! the oracles and the ranking.

use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::{ChunkKind, FileRole, Language};

/// The blake3 of a chunk's text: 32 bytes in memory (a chunk table holds one per chunk), 64 hex
/// digits wherever it is written or shown, as before (stored rows, snapshots, cache keys).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContentHash([u8; 32]);

impl ContentHash {
    /// The hash of `text`.
    pub fn of(text: &str) -> ContentHash {
        ContentHash(*blake3::hash(text.as_bytes()).as_bytes())
    }

    /// From 64 hex digits; anything else is `None`.
    pub fn from_hex(hex: &str) -> Option<ContentHash> {
        blake3::Hash::from_hex(hex)
            .ok()
            .map(|h| ContentHash(*h.as_bytes()))
    }

    /// The 64 hex digits.
    pub fn to_hex(&self) -> String {
        blake3::Hash::from_bytes(self.0).to_hex().to_string()
    }

    pub fn from_bytes(bytes: [u8; 32]) -> ContentHash {
        ContentHash(bytes)
    }

    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl std::fmt::Display for ContentHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl std::fmt::Debug for ContentHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ContentHash({})", self.to_hex())
    }
}

impl Serialize for ContentHash {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_hex())
    }
}

impl<'de> Deserialize<'de> for ContentHash {
    /// Hex as written; a row written with anything else (never by a release) gets the hash of
    /// what it holds, so it stays distinct rather than failing the whole table's load.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ContentHash, D::Error> {
        let s = String::deserialize(d)?;
        Ok(ContentHash::from_hex(&s).unwrap_or_else(|| ContentHash::of(&s)))
    }
}

/// The paths and licences chunk rows share ([`ChunkMeta::share`]).
#[derive(Default)]
pub struct Shared {
    paths: std::collections::HashSet<Arc<str>>,
    licences: std::collections::HashSet<Arc<crate::Licence>>,
}

impl Shared {
    /// A fresh copy of `meta` (its strings newly allocated) sharing what `self` holds.
    pub fn copy(&mut self, meta: &ChunkMeta) -> ChunkMeta {
        let path = match self.paths.get(&*meta.path) {
            Some(p) => p.clone(),
            None => {
                let p: Arc<str> = Arc::from(&*meta.path);
                self.paths.insert(p.clone());
                p
            }
        };
        let licence = meta
            .licence
            .as_ref()
            .map(|l| match self.licences.get(&**l) {
                Some(s) => s.clone(),
                None => {
                    let s = Arc::new((**l).clone());
                    self.licences.insert(s.clone());
                    s
                }
            });
        ChunkMeta {
            path,
            licence,
            ..meta.clone()
        }
    }
}

fn serialize_path<S: Serializer>(path: &Arc<str>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(path)
}

fn deserialize_path<'de, D: Deserializer<'de>>(d: D) -> Result<Arc<str>, D::Error> {
    Ok(Arc::from(String::deserialize(d)?))
}

/// The kind of a hit, or of a context item, that is a note of a working session rather than a
/// chunk of a file (`Hit.kind` on the wire; `patina_proto::kinds::HitKind::Note`).
pub const NOTE_KIND: &str = "note";

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
    /// A directory whose path is longer than the system opens (`PATH_MAX`, or a name past
    /// `NAME_MAX`): nothing below it is indexed.
    PathTooLong,
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
            SkipReason::PathTooLong => "path_too_long",
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
    /// Repository-relative, `/`-separated. Shared by the chunks of one file (a chunk table
    /// interns it: [`ChunkMeta::share`]).
    #[serde(
        serialize_with = "serialize_path",
        deserialize_with = "deserialize_path"
    )]
    pub path: Arc<str>,
    pub start_line: u32,
    pub end_line: u32,
    pub symbol: Option<String>,
    pub kind: ChunkKind,
    pub parent: Option<String>,
    pub language: Language,
    /// blake3 of the chunk text.
    pub hash: ContentHash,
    /// What the chunk's file (or the chunk itself: a Rust `mod tests`) is for. Absent in indices
    /// written before roles existed: [`ChunkMeta::role`] falls back to the path rules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<FileRole>,
    /// The file's licence, decided at index time (header, manifest, licence file). Absent in
    /// indices written before licences: the next round reads such files again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub licence: Option<Arc<crate::Licence>>,
}

impl ChunkMeta {
    /// Make this chunk's path and licence the same allocations as those of the chunks seen so
    /// far (`seen` holds one of each): a table loaded row by row has one of each per chunk, where
    /// a file's chunks share one path and a directory's files one licence.
    pub fn share(&mut self, seen: &mut Shared) {
        match seen.paths.get(&*self.path) {
            Some(p) => self.path = p.clone(),
            None => {
                seen.paths.insert(self.path.clone());
            }
        }
        if let Some(l) = &mut self.licence {
            match seen.licences.get(&**l) {
                Some(s) => *l = s.clone(),
                None => {
                    seen.licences.insert(l.clone());
                }
            }
        }
    }

    /// The chunk's role: as decided at index time, else from its path.
    pub fn role(&self) -> FileRole {
        self.role
            .unwrap_or_else(|| crate::role::classify(&self.path, None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(path: &str) -> ChunkMeta {
        ChunkMeta {
            path: path.into(),
            start_line: 1,
            end_line: 3,
            symbol: Some("parse".into()),
            kind: ChunkKind::Function,
            parent: None,
            language: Language::Rust,
            hash: ContentHash::of("fn parse() {}"),
            role: None,
            licence: None,
        }
    }

    #[test]
    fn a_content_hash_is_written_as_the_hex_rows_always_held() {
        let h = ContentHash::of("fn parse() {}");
        let hex = blake3::hash(b"fn parse() {}").to_hex().to_string();
        assert_eq!(h.to_hex(), hex);
        assert_eq!(ContentHash::from_hex(&hex), Some(h));
        assert_eq!(ContentHash::from_hex(&hex.to_uppercase()), Some(h));
        assert_eq!(ContentHash::from_hex(&hex[..62]), None);
        assert_eq!(ContentHash::from_hex(&format!("{}zz", &hex[..62])), None);

        // A row as earlier releases stored it reads back, and is written the same way.
        let json = serde_json::to_value(meta("src/lib.rs")).unwrap();
        assert_eq!(json["hash"], serde_json::Value::String(hex.clone()));
        assert_eq!(json["path"], "src/lib.rs");
        let back: ChunkMeta = serde_json::from_value(json).unwrap();
        assert_eq!(back, meta("src/lib.rs"));
        // Anything but hex (never written by a release) still loads, distinct per value.
        let mut odd = serde_json::to_value(meta("a")).unwrap();
        odd["hash"] = "not hex".into();
        let odd: ChunkMeta = serde_json::from_value(odd).unwrap();
        assert_eq!(odd.hash, ContentHash::of("not hex"));
    }

    #[test]
    fn chunks_of_one_file_share_one_path_and_equal_licences_one_licence() {
        let mit = || {
            Some(Arc::new(crate::Licence {
                expr: Some("MIT".into()),
                source: crate::LicenceSource::Manifest,
            }))
        };
        let mut seen = Shared::default();
        let (mut a, mut b, mut c) = (meta("src/a.rs"), meta("src/a.rs"), meta("src/b.rs"));
        (a.licence, c.licence) = (mit(), mit());
        assert!(!Arc::ptr_eq(&a.path, &b.path));
        for m in [&mut a, &mut b, &mut c] {
            m.share(&mut seen);
        }
        assert!(Arc::ptr_eq(&a.path, &b.path));
        assert!(!Arc::ptr_eq(&a.path, &c.path));
        assert!(Arc::ptr_eq(
            a.licence.as_ref().unwrap(),
            c.licence.as_ref().unwrap()
        ));
        assert_eq!(b.licence, None);

        let mut fresh = Shared::default();
        let (a2, c2) = (fresh.copy(&a), fresh.copy(&c));
        assert_eq!((&a2, &c2), (&a, &c), "the same rows");
        assert!(!Arc::ptr_eq(&a2.path, &a.path), "newly allocated");
        assert!(Arc::ptr_eq(
            a2.licence.as_ref().unwrap(),
            c2.licence.as_ref().unwrap()
        ));
    }
}
