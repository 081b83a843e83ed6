//! In-memory lookup tables for the symbol oracle: symbol names (exact, style-insensitive and
//! prefix) and file names/paths, rebuilt from chunk metadata after every index commit.
//!
//! Compact by construction, since a large tree has hundreds of thousands of symbols: every name,
//! lowercased key and lowercased path lives once in one text buffer and the rows hold spans into
//! it (a name repeated across the tree — `new`, `test`, `String` — is stored once); the
//! style-insensitive index is a sorted list of 64-bit hashes checked against the name on lookup,
//! not a map of strings to vectors.

use std::collections::HashMap;

use patina_core::ChunkMeta;

/// A symbol as the oracle sees it: its lowercased name, its name and its chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Symbol<'a> {
    /// Lowercased name.
    pub key: &'a str,
    pub name: &'a str,
    pub chunk_id: u64,
}

/// An indexed file: its lowercased path and file name, and its first chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct File<'a> {
    pub path: &'a str,
    pub file_name: &'a str,
    pub chunk_id: u64,
}

/// A run of the table's text buffer.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Span {
    start: u32,
    len: u32,
}

struct SymbolRow {
    key: Span,
    name: Span,
    chunk_id: u64,
}

struct FileRow {
    /// The lowercased path; its file name starts `name_at` bytes in.
    path: Span,
    name_at: u32,
    chunk_id: u64,
}

#[derive(Default)]
pub struct SymbolTable {
    text: String,
    /// Sorted by key then chunk id, for exact and prefix lookups.
    symbols: Vec<SymbolRow>,
    /// (hash of the style-insensitive key, index into `symbols`), sorted.
    normalized: Vec<(u64, u32)>,
    /// Sorted by lowercased path.
    files: Vec<FileRow>,
}

/// `Parse_Args`, `parseArgs`, `parse-args` → `parseargs`.
pub fn normalize(name: &str) -> String {
    normalized_chars(name).collect()
}

fn normalized_chars(name: &str) -> impl Iterator<Item = char> + '_ {
    name.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
}

/// FNV-1a over the normalized form's UTF-8, without building it. Stable across runs and builds.
fn normalized_hash(name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut buf = [0u8; 4];
    for c in normalized_chars(name) {
        for &b in c.encode_utf8(&mut buf).as_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// Append `s` to `text` and return its span. The text of one repository's names and paths stays
/// far below 4 GiB (it is a fraction of the chunk table, itself bounded by the memory budget).
fn push(text: &mut String, s: &str) -> Span {
    let start = u32::try_from(text.len()).expect("symbol table text below 4 GiB");
    text.push_str(s);
    Span {
        start,
        len: s.len() as u32,
    }
}

impl SymbolTable {
    pub fn build<'a>(metas: impl Iterator<Item = (&'a u64, &'a ChunkMeta)>) -> SymbolTable {
        let mut named: Vec<(&str, u64)> = Vec::new();
        let mut first_chunk: HashMap<&str, (u32, u64)> = HashMap::new();
        for (&id, m) in metas {
            if let Some(name) = &m.symbol {
                named.push((name, id));
            }
            let e = first_chunk.entry(&*m.path).or_insert((m.start_line, id));
            if m.start_line < e.0 || (m.start_line == e.0 && id < e.1) {
                *e = (m.start_line, id);
            }
        }
        // Lowercased names compared char by char order the same as their UTF-8 bytes.
        let lower = |s: &str| s.chars().flat_map(char::to_lowercase).collect::<String>();
        named.sort_by(|a, b| {
            let (ka, kb) = (
                a.0.chars().flat_map(char::to_lowercase),
                b.0.chars().flat_map(char::to_lowercase),
            );
            ka.cmp(kb).then(a.1.cmp(&b.1))
        });
        let mut text = String::new();
        let mut symbols = Vec::with_capacity(named.len());
        let mut last: Option<(&str, Span, Span)> = None;
        for (name, chunk_id) in named {
            let (key, name_span) = match last {
                Some((n, key, span)) if n == name => (key, span),
                _ => {
                    let key_text = lower(name);
                    let name_span = push(&mut text, name);
                    let key = match last {
                        Some((_, key, _)) if text_of(&text, key) == key_text => key,
                        _ if key_text == name => name_span,
                        _ => push(&mut text, &key_text),
                    };
                    (key, name_span)
                }
            };
            last = Some((name, key, name_span));
            symbols.push(SymbolRow {
                key,
                name: name_span,
                chunk_id,
            });
        }
        let mut normalized: Vec<(u64, u32)> = symbols
            .iter()
            .enumerate()
            .map(|(i, s)| (normalized_hash(text_of(&text, s.name)), i as u32))
            .collect();
        normalized.sort_unstable();
        let mut paths: Vec<(String, u64)> = first_chunk
            .into_iter()
            .map(|(path, (_, id))| (lower(path), id))
            .collect();
        paths.sort_unstable();
        let files = paths
            .into_iter()
            .map(|(path, chunk_id)| {
                let name_at = path.rfind('/').map_or(0, |i| i + 1) as u32;
                FileRow {
                    path: push(&mut text, &path),
                    name_at,
                    chunk_id,
                }
            })
            .collect();
        text.shrink_to_fit();
        SymbolTable {
            text,
            symbols,
            normalized,
            files,
        }
    }

    fn symbol(&self, row: &SymbolRow) -> Symbol<'_> {
        Symbol {
            key: text_of(&self.text, row.key),
            name: text_of(&self.text, row.name),
            chunk_id: row.chunk_id,
        }
    }

    /// Every symbol, by key.
    pub fn symbols(&self) -> impl Iterator<Item = Symbol<'_>> {
        self.symbols.iter().map(|r| self.symbol(r))
    }

    /// Symbols whose lowercased name starts with `prefix` (lowercase), by key.
    pub fn with_prefix<'a>(&'a self, prefix: &str) -> impl Iterator<Item = Symbol<'a>> + 'a {
        let key = |r: &SymbolRow| text_of(&self.text, r.key);
        let lo = self.symbols.partition_point(|r| key(r) < prefix);
        let hi = lo + self.symbols[lo..].partition_point(|r| key(r).starts_with(prefix));
        self.symbols[lo..hi].iter().map(|r| self.symbol(r))
    }

    /// Symbols whose lowercased name is `key` (lowercase).
    pub fn named<'a>(&'a self, key: &'a str) -> impl Iterator<Item = Symbol<'a>> + 'a {
        self.with_prefix(key).filter(move |s| s.key == key)
    }

    /// Symbols with the same style-insensitive name as `name` (`parse_args` finds `parseArgs`).
    pub fn same_words<'a>(&'a self, name: &str) -> impl Iterator<Item = Symbol<'a>> + 'a {
        let h = normalized_hash(name);
        let want = normalize(name);
        let lo = self.normalized.partition_point(|&(k, _)| k < h);
        self.normalized[lo..]
            .iter()
            .take_while(move |&&(k, _)| k == h)
            .map(|&(_, i)| self.symbol(&self.symbols[i as usize]))
            .filter(move |s| normalized_chars(s.name).eq(want.chars()))
    }

    /// Every indexed file, by lowercased path.
    pub fn files(&self) -> impl Iterator<Item = File<'_>> {
        self.files.iter().map(|r| {
            let path = text_of(&self.text, r.path);
            File {
                path,
                file_name: &path[r.name_at as usize..],
                chunk_id: r.chunk_id,
            }
        })
    }

    /// Every indexed file's first chunk by the style-insensitive stem of its name (up to its first
    /// dot): `SafeAggregateSink.cs` and `safe_aggregate_sink.rb` → `safeaggregatesink`,
    /// `pyenv-latest` → `pyenvlatest`. Built on each call: one pass over the files.
    pub fn files_by_stem(&self) -> HashMap<String, Vec<u64>> {
        let mut by_stem: HashMap<String, Vec<u64>> = HashMap::new();
        for f in self.files() {
            let stem = f.file_name.split('.').next().unwrap_or(f.file_name);
            by_stem.entry(normalize(stem)).or_default().push(f.chunk_id);
        }
        by_stem
    }

    /// Heap bytes held (for the daemon's memory breakdown).
    pub fn heap_bytes(&self) -> u64 {
        (self.text.capacity()
            + self.symbols.capacity() * std::mem::size_of::<SymbolRow>()
            + self.normalized.capacity() * std::mem::size_of::<(u64, u32)>()
            + self.files.capacity() * std::mem::size_of::<FileRow>()) as u64
    }
}

fn text_of(text: &str, span: Span) -> &str {
    &text[span.start as usize..(span.start + span.len) as usize]
}

#[cfg(test)]
mod tests {
    use super::*;
    use patina_core::{ChunkKind, ContentHash, Language};
    use std::sync::Arc;

    fn meta(path: &str, line: u32, symbol: Option<&str>) -> ChunkMeta {
        ChunkMeta {
            path: Arc::from(path),
            start_line: line,
            end_line: line + 1,
            symbol: symbol.map(str::to_string),
            kind: ChunkKind::Function,
            parent: None,
            language: Language::Rust,
            hash: ContentHash::of(path),
            role: None,
            licence: None,
        }
    }

    fn table(rows: &[(u64, ChunkMeta)]) -> SymbolTable {
        SymbolTable::build(rows.iter().map(|(id, m)| (id, m)))
    }

    #[test]
    fn files_are_found_by_their_stem_in_any_style() {
        let rows = vec![
            (1, meta("libexec/pyenv-latest", 1, None)),
            (
                2,
                meta("src/SafeAggregateSink.cs", 1, Some("SafeAggregateSink")),
            ),
            (3, meta("lib/safe_aggregate_sink.rb", 1, None)),
            (4, meta("lib/safe_aggregate_sink.rb", 9, Some("emit"))),
        ];
        let by_stem = table(&rows).files_by_stem();
        assert_eq!(by_stem["pyenvlatest"], [1]);
        let mut sinks = by_stem["safeaggregatesink"].clone();
        sinks.sort();
        assert_eq!(sinks, [2, 3], "one entry per file: its first chunk");
        assert_eq!(by_stem.len(), 2);
    }

    #[test]
    fn finds_names_exactly_by_prefix_and_in_other_styles() {
        let rows = vec![
            (1, meta("src/Args.rs", 1, Some("parse_args"))),
            (2, meta("src/Args.rs", 20, Some("ParseArgs"))),
            (3, meta("lib/cli.py", 5, Some("parseArgs"))),
            (4, meta("lib/cli.py", 1, Some("parse"))),
            (5, meta("lib/cli.py", 9, Some("Parser"))),
            (6, meta("lib/cli.py", 12, Some("parse"))),
            (7, meta("README.md", 1, None)),
        ];
        let t = table(&rows);
        let ids =
            |it: &mut dyn Iterator<Item = Symbol<'_>>| it.map(|s| s.chunk_id).collect::<Vec<_>>();
        assert_eq!(ids(&mut t.named("parse")), vec![4, 6]);
        assert_eq!(ids(&mut t.named("parseargs")), vec![2, 3]);
        assert_eq!(ids(&mut t.with_prefix("parse")), vec![4, 6, 1, 2, 3, 5]);
        let mut same: Vec<u64> = t.same_words("parse-args").map(|s| s.chunk_id).collect();
        same.sort();
        assert_eq!(same, vec![1, 2, 3]);
        assert_eq!(t.same_words("parsers").count(), 0);
        let s = t.named("parser").next().unwrap();
        assert_eq!((s.key, s.name), ("parser", "Parser"));
        // A file's entry is its first chunk; paths and names lowercased.
        let files: Vec<_> = t
            .files()
            .map(|f| (f.path, f.file_name, f.chunk_id))
            .collect();
        assert_eq!(
            files,
            vec![
                ("lib/cli.py", "cli.py", 4),
                ("readme.md", "readme.md", 7),
                ("src/args.rs", "args.rs", 1)
            ]
        );
        assert_eq!(t.with_prefix("zz").count(), 0);
        assert_eq!(t.symbols().count(), 6);
    }

    #[test]
    fn a_repeated_name_is_stored_once() {
        let rows: Vec<(u64, ChunkMeta)> = (0..1000)
            .map(|i| (i, meta(&format!("m{}.rs", i % 10), i as u32, Some("new"))))
            .collect();
        let t = table(&rows);
        assert_eq!(t.named("new").count(), 1000);
        // "new" once, ten short paths.
        assert!(t.text.len() < 3 + 10 * 6, "{}", t.text.len());
    }

    #[test]
    fn non_ascii_names_sort_and_match_by_their_lowercase() {
        let rows = vec![
            (1, meta("a.kt", 1, Some("Über"))),
            (2, meta("a.kt", 2, Some("über_alles"))),
            (3, meta("a.kt", 3, Some("ÜberAlles"))),
            (4, meta("a.kt", 4, Some("Zebra"))),
        ];
        let t = table(&rows);
        assert_eq!(
            t.named("über").map(|s| s.chunk_id).collect::<Vec<_>>(),
            vec![1]
        );
        assert_eq!(t.with_prefix("über").count(), 3);
        assert_eq!(t.same_words("uber_alles").count(), 0);
        assert_eq!(t.same_words("Über-alles").count(), 2);
        let keys: Vec<&str> = t.symbols().map(|s| s.key).collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
    }
}
