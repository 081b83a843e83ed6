//! A team's shared store: repositories' indices published at commits, so that vectors are
//! computed once per organisation and a daemon can search what it has not cloned.
//!
//! The store is an existing engine, reached through its own protocol; [`SharedStore`] is the
//! small surface the daemon uses, and [`Postgres`] (PostgreSQL with pgvector) is the first
//! engine behind it. What the store holds, per repository (keyed by its normalised remote):
//! - the chunks of each published file's content (text, lines, symbol), with a full-text vector;
//!   the named ones are the repository's symbols (definitions), looked up by name;
//! - each file content's graph facts (references, imports, type relations), whole, and its
//!   imports as rows, so the engine itself answers "which files import this module";
//! - the vectors of those chunks, keyed by the publishing daemon's cache key (a hash of the model,
//!   its precision and the chunk's content), so a daemon with the same model looks them up by
//!   the key it would have computed;
//! - commits: which file contents make up the repository at a commit. A commit becomes visible
//!   in one transaction, after its content is stored, so a publish cut off halfway leaves no
//!   partial commit, and a second publisher of the same commit changes nothing.
//!
//! Who reads what is the engine's business: every table has row-level security by repository,
//! and a role reads a repository only when `patina.grants` names it (or a role it is a member
//! of) for that repository. This crate knows nothing of the daemon, its index or its model.

#[cfg(feature = "postgres")]
mod postgres;
pub mod remote;

use std::future::Future;
use std::pin::Pin;

#[cfg(feature = "postgres")]
pub use postgres::Postgres;

/// A future the store returns (boxed, so [`SharedStore`] can be a trait object).
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = anyhow::Result<T>> + Send + 'a>>;

/// A content key: 32 bytes of BLAKE3.
pub type Key = [u8; 32];

/// One chunk of a published file.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub parent: String,
    pub symbol: String,
    /// The chunk kind's name (`function`, `section`, …).
    pub kind: String,
    /// The key of this chunk's vector (the publisher's embedding-cache key).
    pub vkey: Key,
    pub body: String,
}

/// A commit about to be published: which repository, which commit, which model, who may read it.
#[derive(Debug, Clone)]
pub struct CommitHead {
    /// The normalised remote ([`remote::normalise`]): what identifies the repository.
    pub remote: String,
    /// A short name to show (`owner/name`).
    pub name: String,
    pub sha: String,
    /// The model and precision the vectors come from.
    pub model: String,
    /// Engine roles that may read this repository (added to those already granted).
    pub readers: Vec<String>,
}

/// A publish under way ([`SharedStore::begin`]): the store's handle on the repository.
#[derive(Debug, Clone)]
pub struct Begun {
    pub repo: i64,
    pub sha: String,
    pub model: String,
    /// The commit is already published (by this or another publisher): nothing needs sending.
    pub already: bool,
}

/// One file's content: its key ([`file_key`]), its chunks in order, and its graph facts (`None`:
/// the language has no extractor, or the file none).
#[derive(Debug, Clone)]
pub struct FileContent {
    pub key: Key,
    pub path: String,
    pub chunks: Vec<Chunk>,
    pub facts: Option<patina_core::FileFacts>,
}

/// What a publish did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PublishReport {
    /// The commit was already published (by this or another publisher): nothing was written.
    pub already: bool,
    pub files: usize,
    /// Files whose content the store lacked, and their chunks.
    pub files_sent: usize,
    pub chunks_sent: usize,
    /// Vectors the store lacked, and vectors it already held.
    pub vectors_sent: usize,
    pub vectors_present: usize,
    /// The vectors went in as a bulk load ([`SharedStore::load_begin`]): the store built its
    /// vector index once, after them, rather than insert by insert.
    pub bulk_load: bool,
}

/// A published repository as a reader sees it: its newest published commit.
#[derive(Debug, Clone, PartialEq)]
pub struct Published {
    pub remote: String,
    pub name: String,
    pub sha: String,
    pub model: String,
    pub files: u64,
    pub chunks: u64,
    /// Seconds since the epoch.
    pub published_at: i64,
}

/// A question for the published repositories.
#[derive(Debug, Clone)]
pub struct OrgQuery {
    pub text: String,
    /// The question's vector under `model`, when the asker has the model.
    pub vector: Option<Vec<f32>>,
    pub model: String,
    pub limit: usize,
    /// The question's words that carry meaning (the asker's analysis: no stop words), for the
    /// full-text ranking; empty: every word of `text`.
    pub words: Vec<String>,
    /// The identifiers the question names (the asker's query analysis), most mentioned first:
    /// the names of definitions to look up.
    pub names: Vec<String>,
    /// Remotes not to search (the asker's own clones answer for them).
    pub skip: Vec<String>,
}

/// One chunk of a published repository that answers an [`OrgQuery`].
#[derive(Debug, Clone, PartialEq)]
pub struct OrgHit {
    pub remote: String,
    pub name: String,
    pub sha: String,
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub symbol: String,
    pub body: String,
    /// The engine's score in its ranking (cosine similarity, or full-text rank).
    pub score: f32,
}

/// The rankings the store answers a question with; the asker fuses them.
#[derive(Debug, Clone, Default)]
pub struct OrgHits {
    pub lexical: Vec<OrgHit>,
    pub semantic: Vec<OrgHit>,
    /// Definitions named by one of [`OrgQuery::names`], in the order of the names, then by
    /// repository, path and line.
    pub symbols: Vec<OrgHit>,
}

/// What a daemon asks of a team's store. A publish is a sequence, so the publisher holds one
/// batch of content at a time: [`SharedStore::begin`], then the files and vectors the store lacks
/// ([`SharedStore::missing_files`], [`SharedStore::put_files`], the same for vectors), then
/// [`SharedStore::commit`], which makes the commit visible whole. Content stored by a publish that
/// never commits is harmless (content-addressed); a second publisher of a commit changes nothing.
pub trait SharedStore: Send + Sync {
    /// The engine and where it is, without credentials (for logs, notices and status).
    fn describe(&self) -> String;
    /// Start publishing `head`: the repository's row and its readers' grants.
    fn begin<'a>(&'a self, head: &'a CommitHead) -> StoreFuture<'a, Begun>;
    /// Of `keys` (file keys), those the store lacks for the repository.
    fn missing_files<'a>(&'a self, b: &'a Begun, keys: &'a [Key]) -> StoreFuture<'a, Vec<Key>>;
    /// Of `keys` (vector keys), those the store lacks for the repository.
    fn missing_vectors<'a>(&'a self, b: &'a Begun, keys: &'a [Key]) -> StoreFuture<'a, Vec<Key>>;
    /// Store files' contents (each whole or not at all); returns the chunks written.
    fn put_files<'a>(&'a self, b: &'a Begun, files: &'a [FileContent]) -> StoreFuture<'a, usize>;
    /// About to send `incoming` vectors ([`SharedStore::put_vectors`]): the store may set itself
    /// up for a bulk load. Returns whether it did; [`SharedStore::load_end`] follows either way.
    fn load_begin<'a>(&'a self, b: &'a Begun, incoming: usize) -> StoreFuture<'a, bool>;
    /// The vectors are sent, or the publish gave up: what [`SharedStore::load_begin`] set aside
    /// is whole again.
    fn load_end<'a>(&'a self, b: &'a Begun) -> StoreFuture<'a, ()>;
    /// Store vectors by key; returns how many.
    fn put_vectors<'a>(
        &'a self,
        b: &'a Begun,
        vectors: &'a [(Key, Vec<f32>)],
    ) -> StoreFuture<'a, usize>;
    /// Make the commit visible: its files (path, file key), in one transaction; false when another
    /// publisher was first.
    fn commit<'a>(
        &'a self,
        b: &'a Begun,
        files: &'a [(String, Key)],
        chunks: usize,
    ) -> StoreFuture<'a, bool>;
    /// Vectors under `model` the store holds for `keys`, in any repository the caller may read.
    fn vectors<'a>(
        &'a self,
        model: &'a str,
        keys: &'a [Key],
    ) -> StoreFuture<'a, Vec<(Key, Vec<f32>)>>;
    /// The repositories the caller may read, newest commit each.
    fn published(&self) -> StoreFuture<'_, Vec<Published>>;
    /// Search the newest commit of every repository the caller may read.
    fn search<'a>(&'a self, query: &'a OrgQuery) -> StoreFuture<'a, OrgHits>;
}

/// A file's content key: its path and its chunks (vector keys and lines, in order), so that the
/// same content at the same path is stored once however many commits contain it.
pub fn file_key(path: &str, chunks: impl IntoIterator<Item = (Key, u32, u32)>) -> Key {
    let mut h = blake3::Hasher::new();
    h.update(b"patina-file/1\0");
    h.update(path.as_bytes());
    for (vkey, start, end) in chunks {
        h.update(b"\0");
        h.update(&vkey);
        h.update(&start.to_le_bytes());
        h.update(&end.to_le_bytes());
    }
    *h.finalize().as_bytes()
}

/// The words of `words` a full-text query may hold: split at anything but letters, digits and
/// `_` (so no text can inject query syntax), lowercased, at least two characters, each once, at
/// most 32, quoted as lexemes (`'bind'`).
fn query_words<'a>(words: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut kept: Vec<String> = Vec::new();
    for w in words
        .into_iter()
        .flat_map(|w| w.split(|c: char| !(c.is_alphanumeric() || c == '_')))
    {
        let w = format!("'{}'", w.to_lowercase());
        if w.chars().count() < 4 || kept.contains(&w) {
            continue;
        }
        kept.push(w);
        if kept.len() == 32 {
            break;
        }
    }
    kept
}

/// The full-text queries a question is asked as, most demanding first (coordination levels, as
/// search engines rank before scoring): every word; every word but one (any one); any word. A
/// search stops at the first level that fills its answer, so the last, which ranks every chunk
/// holding one common word (the slow part of a large store), runs only when the others fall
/// short. Levels that repeat the one before (one or two words) are left out; no word, no query.
pub fn coordination_queries<'a>(words: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let kept = query_words(words);
    let all_of = |ws: &[&String]| {
        ws.iter()
            .map(|w| w.as_str())
            .collect::<Vec<_>>()
            .join(" & ")
    };
    let every: Vec<&String> = kept.iter().collect();
    let mut out = Vec::new();
    if kept.is_empty() {
        return out;
    }
    out.push(all_of(&every));
    if kept.len() >= 3 {
        let but_one: Vec<String> = (0..kept.len())
            .map(|skip| {
                let rest: Vec<&String> = kept
                    .iter()
                    .enumerate()
                    .filter_map(|(i, w)| (i != skip).then_some(w))
                    .collect();
                format!("({})", all_of(&rest))
            })
            .collect();
        out.push(but_one.join(" | "));
    }
    if kept.len() >= 2 {
        out.push(kept.join(" | "));
    }
    out
}

/// The test hook `PATINA_TEST_CRASH_AT=publish-before-commit`: abort the process (as a crash would)
/// after a publish stored its content and before its commit transaction commits.
#[cfg(feature = "postgres")]
fn before_commit_hook() {
    crash_point("publish-before-commit");
}

/// The test hook `PATINA_TEST_CRASH_AT=publish-before-index`: abort the process in a bulk load,
/// after the vectors went in without their index and before the index is built again.
#[cfg(feature = "postgres")]
fn before_index_hook() {
    crash_point("publish-before-index");
}

#[cfg(feature = "postgres")]
fn crash_point(name: &str) {
    let named = patina_core::hooks::test_hook("PATINA_TEST_CRASH_AT")
        .is_some_and(|v| v.split(',').any(|p| p.trim() == name));
    if named {
        eprintln!("patinad: test crash point {name}: aborting");
        std::process::abort();
    }
}

/// Whether `role` is a plain role name this crate will quote into SQL.
pub fn valid_role(role: &str) -> bool {
    let mut chars = role.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && role.len() <= 63
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_files_key_changes_with_its_path_its_chunks_and_their_lines() {
        let (a, b) = (([1u8; 32], 1, 4), ([2u8; 32], 5, 8));
        let k = file_key("a.rs", [a, b]);
        assert_eq!(k, file_key("a.rs", [a, b]));
        assert_ne!(k, file_key("b.rs", [a, b]));
        assert_ne!(k, file_key("a.rs", [a]));
        assert_ne!(k, file_key("a.rs", [a, ([2u8; 32], 6, 9)]));
    }

    #[test]
    fn a_questions_words_become_lexemes_without_syntax() {
        assert_eq!(
            coordination_queries(["How does the bind? (bind!) x"])
                .last()
                .map(String::as_str),
            Some("'how' | 'does' | 'the' | 'bind'")
        );
        assert!(coordination_queries(["a ' & | ! :*"]).is_empty());
        assert_eq!(
            coordination_queries(["it's O'Reilly", "x&y", "ab|cd"]),
            [
                "'it' & 'reilly' & 'ab' & 'cd'",
                "('reilly' & 'ab' & 'cd') | ('it' & 'ab' & 'cd') | ('it' & 'reilly' & 'cd') | ('it' & 'reilly' & 'ab')",
                "'it' | 'reilly' | 'ab' | 'cd'"
            ]
        );
    }

    #[test]
    fn a_question_is_asked_with_every_word_then_all_but_one_then_any() {
        assert_eq!(
            coordination_queries(["socket", "bind", "port"]),
            [
                "'socket' & 'bind' & 'port'",
                "('bind' & 'port') | ('socket' & 'port') | ('socket' & 'bind')",
                "'socket' | 'bind' | 'port'",
            ]
        );
        assert_eq!(
            coordination_queries(["socket", "bind"]),
            ["'socket' & 'bind'", "'socket' | 'bind'"]
        );
        assert_eq!(coordination_queries(["Socket", "socket"]), ["'socket'"]);
        assert!(coordination_queries(["a", "!"]).is_empty());
    }

    #[test]
    fn only_plain_role_names_are_accepted() {
        assert!(valid_role("team_backend"));
        assert!(valid_role("ci-publisher"));
        assert!(!valid_role("x\"; drop table y; --"));
        assert!(!valid_role(""));
        assert!(!valid_role("1abc"));
    }
}
