//! Building a [`GraphTable`]: the chunk table's definitions under its lock, then every file's
//! facts, one at a time, outside it — each file's references go to the compact table
//! (`graph/references.rs`) as it is decoded, so no moment holds every file's decoded facts (a
//! 100k-file tree's were most of its graph's peak).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use patina_core::{ChunkMeta, FileFacts, Language};

use super::{Def, GraphTable, is_definition, reexports, references};

/// A graph half built: the chunk table's part, made under its lock ([`GraphTable::of_chunks`]);
/// [`Chunked::with_facts`] adds the facts, read without it.
pub struct Chunked {
    paths: HashSet<Arc<str>>,
    languages: HashMap<Arc<str>, Language>,
    defs: HashMap<Arc<str>, Vec<Def>>,
    chunks: HashMap<Arc<str>, Vec<Def>>,
}

/// The copy of `s` in `set`, or the one `make` gives, kept there for the next.
fn shared(set: &mut HashSet<Arc<str>>, s: &str, make: impl FnOnce() -> Arc<str>) -> Arc<str> {
    match set.get(s) {
        Some(found) => found.clone(),
        None => {
            let made = make();
            set.insert(made.clone());
            made
        }
    }
}

impl GraphTable {
    pub fn build<'a>(
        chunks: impl Iterator<Item = (&'a u64, &'a ChunkMeta)>,
        facts: impl IntoIterator<Item = (Arc<str>, Arc<FileFacts>)>,
    ) -> GraphTable {
        GraphTable::of_chunks(chunks).with_facts(facts)
    }

    /// The definitions and chunks of the chunk table, by name and by file.
    pub fn of_chunks<'a>(chunks: impl Iterator<Item = (&'a u64, &'a ChunkMeta)>) -> Chunked {
        let mut paths: HashSet<Arc<str>> = HashSet::new();
        let mut names: HashSet<Arc<str>> = HashSet::new();
        let mut name = |s: &str| shared(&mut names, s, || Arc::from(s));
        let mut by_path: HashMap<Arc<str>, Vec<Def>> = HashMap::new();
        let mut languages = HashMap::new();
        for (&id, m) in chunks {
            let path = shared(&mut paths, &m.path, || m.path.clone());
            languages.entry(path.clone()).or_insert(m.language);
            by_path.entry(path.clone()).or_default().push(Def {
                chunk_id: id,
                path,
                start_line: m.start_line,
                end_line: m.end_line,
                symbol: name(m.symbol.as_deref().unwrap_or_default()),
                parent: m.parent.as_deref().map(&mut name),
                kind: m.kind,
            });
        }
        drop(names);
        let mut defs: HashMap<Arc<str>, Vec<Def>> = HashMap::new();
        for list in by_path.values_mut() {
            list.sort_by_key(|d| (d.start_line, d.end_line, d.chunk_id));
            list.shrink_to_fit();
            // The pieces of a split definition are one definition: the first piece, widened.
            let mut last: Option<Def> = None;
            for d in list.iter() {
                if d.symbol.is_empty() || !is_definition(d.kind) {
                    continue;
                }
                match &mut last {
                    Some(l)
                        if l.symbol == d.symbol
                            && l.parent == d.parent
                            && d.start_line <= l.end_line + 1 =>
                    {
                        l.end_line = l.end_line.max(d.end_line);
                    }
                    _ => {
                        if let Some(l) = last.take() {
                            defs.entry(l.symbol.clone()).or_default().push(l);
                        }
                        last = Some(d.clone());
                    }
                }
            }
            if let Some(l) = last {
                defs.entry(l.symbol.clone()).or_default().push(l);
            }
        }
        // Namesakes in path order: the files were visited in a hash map's order, which differs
        // from one process to the next, and a resolution's ties go to the first candidate.
        for list in defs.values_mut() {
            list.sort_by(|a, b| {
                (&a.path, a.start_line, a.chunk_id).cmp(&(&b.path, b.start_line, b.chunk_id))
            });
            list.shrink_to_fit();
        }
        Chunked {
            paths,
            languages,
            defs,
            chunks: by_path,
        }
    }
}

impl Chunked {
    /// The graph: these chunks with every file's facts (each file once, in any order). Each
    /// file's references go to the compact table as it comes, and its facts keep the rest.
    pub fn with_facts(
        self,
        facts: impl IntoIterator<Item = (Arc<str>, Arc<FileFacts>)>,
    ) -> GraphTable {
        let Chunked {
            mut paths,
            languages,
            defs,
            chunks,
        } = self;
        let mut refs = references::Builder::default();
        let mut kept: HashMap<Arc<str>, Arc<FileFacts>> = HashMap::new();
        for (path, f) in facts {
            let path = shared(&mut paths, &path.clone(), || path);
            let mut f = Arc::unwrap_or_clone(f);
            refs.add(path.clone(), &std::mem::take(&mut f.refs));
            kept.insert(path, Arc::new(f));
        }
        let references = refs.finish();
        let mut paths: Vec<Arc<str>> = paths.into_iter().collect();
        paths.sort();
        let (reexports, star_reexports) = reexports::index(&kept);
        GraphTable {
            facts: kept,
            languages,
            defs,
            chunks,
            references,
            paths,
            reexports,
            star_reexports,
            callers: Default::default(),
            ties: Default::default(),
            path_index: Default::default(),
        }
    }
}
