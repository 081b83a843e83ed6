//! The code a documentation chunk names, for the dependency oracle's walk: each name a code span
//! of the chunk may stand for ([`patina_retrieve::mentions`]), resolved in the chunk's repository
//! to a source file whose stem is spelled so (`pyenv latest` → `libexec/pyenv-latest`,
//! style-insensitive) or else to a definition named so (`setupKoinFragmentFactory`). A name
//! shared by more than [`MAX_DEFINITIONS`] files or definitions (`run`, `new`, `init`) names
//! none of them; a name of fewer than four letters names nothing.

use std::collections::{HashMap, HashSet};

use patina_core::FileRole;
use patina_index::symbols::normalize;
use patina_retrieve::mentions::{code_spans, names_in};

use super::OracleQuery;

/// At most this many pieces of code stand for one documentation chunk.
const MAX_NAMED: usize = 3;
/// A name spelled by more files or definitions than this points nowhere in particular.
const MAX_DEFINITIONS: usize = 2;

/// What documentation chunks name, for one query: each repository's files by stem are read once,
/// when a first documentation seed has code spans.
#[derive(Default)]
pub(super) struct Named {
    stems: HashMap<usize, HashMap<String, Vec<u64>>>,
}

impl Named {
    /// The source chunks (of repository `ri`, allowed by the query's filter) that the code spans
    /// of documentation chunk `chunk` name, in the order the text names them; empty for a chunk
    /// that is not documentation.
    pub(super) fn code_named_by(&mut self, q: &OracleQuery, ri: usize, chunk: u64) -> Vec<u64> {
        let repo = &q.repos[ri];
        let Some(meta) = repo.chunk(chunk) else {
            return Vec::new();
        };
        if meta.role() != FileRole::Docs {
            return Vec::new();
        }
        let Ok(Some(text)) = repo.index().text(chunk) else {
            return Vec::new();
        };
        let usable = |id: u64| {
            repo.chunk(id).is_some_and(|m| {
                m.role() == FileRole::Source && q.filter.as_ref().is_none_or(|f| f.allows(&m))
            })
        };
        let spans = code_spans(&text);
        if spans.is_empty() {
            return Vec::new();
        }
        let stems = self
            .stems
            .entry(ri)
            .or_insert_with(|| repo.symbols().files_by_stem());
        let symbols = repo.symbols();
        let mut out: Vec<u64> = Vec::new();
        let mut seen: HashSet<u64> = HashSet::from([chunk]);
        'spans: for span in spans {
            for name in names_in(span) {
                if out.len() >= MAX_NAMED {
                    break 'spans;
                }
                let key = normalize(&name.replace(' ', ""));
                if key.chars().count() < 4 {
                    continue;
                }
                let files: Vec<u64> = stems
                    .get(&key)
                    .into_iter()
                    .flatten()
                    .copied()
                    .filter(|&id| usable(id))
                    .collect();
                let found = if (1..=MAX_DEFINITIONS).contains(&files.len()) {
                    files
                } else if name.contains(' ') {
                    // Two words name a file or nothing.
                    continue;
                } else {
                    symbols
                        .same_words(&name)
                        .map(|s| s.chunk_id)
                        .filter(|&id| usable(id))
                        .collect()
                };
                if found.len() <= MAX_DEFINITIONS {
                    out.extend(found.into_iter().filter(|id| seen.insert(*id)));
                }
            }
        }
        out.truncate(MAX_NAMED);
        out
    }
}
