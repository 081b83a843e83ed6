//! The graph's references, compact: every file's references as 12-byte records naming ids in one
//! table of the repository's distinct names, and an index from each name to its references.
//!
//! They are most of a graph (a 100k-file tree has millions). As [`Reference`]s — two shared
//! strings each, 40 bytes, and each file's own copy of every name it uses — they were half of
//! deno's graph (bench/RESULTS.md, fifty-second session); copying every site into a by-name
//! index, each with its qualifier owned, had been a quarter more (fifty-first).

use std::collections::HashMap;
use std::sync::Arc;

use patina_core::Reference;

/// `qualifier` of a reference without one.
const NONE: u32 = u32::MAX;

/// One reference: its name and qualifier as ids into [`References::names`], its line shifted
/// left by one with the call flag below.
#[derive(Clone, Copy, Debug)]
struct Ref {
    name: u32,
    qualifier: u32,
    line_call: u32,
}

impl Ref {
    fn line(self) -> u32 {
        self.line_call >> 1
    }

    fn call(self) -> bool {
        self.line_call & 1 != 0
    }
}

/// A reference: its place in the table's one array of every file's references.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct RefAt(u32);

/// A reference as the graph hands it out: what [`Reference`] says, borrowed from the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RefView<'a> {
    pub name: &'a Arc<str>,
    /// 1-based line.
    pub line: u32,
    pub call: bool,
    pub qualifier: Option<&'a Arc<str>>,
}

/// Every file's references, and each name's, in path and line order.
#[derive(Default)]
pub(super) struct References {
    /// The distinct names and qualifiers, by id.
    names: Vec<Arc<str>>,
    /// The id of each of `names`.
    ids: HashMap<Arc<str>, u32>,
    /// Every file's references, file after file in the order they were added, each file's in its
    /// facts' order: one allocation, not one per file.
    refs: Vec<Ref>,
    /// The files, in the order they were added, and where each one's references begin in
    /// `refs` (one more entry than files).
    paths: Vec<Arc<str>>,
    file_starts: Vec<u32>,
    /// The files' numbers in path order.
    by_path: Vec<u32>,
    /// Where each name's references begin in `by_name` (by name id; one more than `names`).
    name_starts: Vec<u32>,
    /// The references of every name, name after name, each name's in path and line order.
    by_name: Vec<RefAt>,
}

/// Files' references made compact one file at a time ([`Builder::add`]): a large repository's
/// facts are never all decoded at once.
#[derive(Default)]
pub(super) struct Builder {
    table: References,
}

impl Builder {
    fn id(&mut self, name: &Arc<str>) -> u32 {
        let t = &mut self.table;
        if let Some(&id) = t.ids.get(&**name) {
            return id;
        }
        let id = t.names.len() as u32;
        t.names.push(name.clone());
        t.ids.insert(name.clone(), id);
        id
    }

    /// The references of the file at `path` (each file once, in any order).
    pub(super) fn add(&mut self, path: Arc<str>, refs: &[Reference]) {
        if self.table.file_starts.is_empty() {
            self.table.file_starts.push(0);
        }
        for r in refs {
            let compact = Ref {
                name: self.id(&r.name),
                qualifier: r.qualifier.as_ref().map_or(NONE, |q| self.id(q)),
                line_call: (r.line.min(u32::MAX >> 1) << 1) | u32::from(r.call),
            };
            self.table.refs.push(compact);
        }
        self.table.paths.push(path);
        self.table.file_starts.push(self.table.refs.len() as u32);
    }

    /// The table: files by path, and each name's references in path and line order.
    pub(super) fn finish(self) -> References {
        let mut t = self.table;
        if t.file_starts.is_empty() {
            t.file_starts.push(0);
        }
        t.file_starts.shrink_to_fit();
        t.refs.shrink_to_fit();
        t.names.shrink_to_fit();
        t.ids.shrink_to_fit();
        t.paths.shrink_to_fit();
        let mut by_path: Vec<u32> = (0..t.paths.len() as u32).collect();
        by_path.sort_by(|&a, &b| t.paths[a as usize].cmp(&t.paths[b as usize]));
        // Counting sort by name, the files visited in path order: each name's references come
        // out in path order, each file's in its facts' order, sorted by line below.
        let mut counts = vec![0u32; t.names.len() + 1];
        for r in &t.refs {
            counts[r.name as usize + 1] += 1;
        }
        for i in 1..counts.len() {
            counts[i] += counts[i - 1];
        }
        let mut next = counts.clone();
        let mut by_name = vec![RefAt(0); t.refs.len()];
        let mut rank = vec![0u32; t.paths.len()];
        for (k, &file) in by_path.iter().enumerate() {
            rank[file as usize] = k as u32;
            let (a, b) = (
                t.file_starts[file as usize],
                t.file_starts[file as usize + 1],
            );
            for i in a..b {
                let slot = &mut next[t.refs[i as usize].name as usize];
                by_name[*slot as usize] = RefAt(i);
                *slot += 1;
            }
        }
        drop(next);
        for w in counts.windows(2) {
            by_name[w[0] as usize..w[1] as usize]
                .sort_by_key(|&r| (rank[t.file_of(r) as usize], t.refs[r.0 as usize].line()));
        }
        t.by_path = by_path;
        t.name_starts = counts;
        t.by_name = by_name;
        t
    }
}

impl References {
    fn view(&self, r: Ref) -> RefView<'_> {
        RefView {
            name: &self.names[r.name as usize],
            line: r.line(),
            call: r.call(),
            qualifier: (r.qualifier != NONE).then(|| &self.names[r.qualifier as usize]),
        }
    }

    fn file_of(&self, r: RefAt) -> u32 {
        // The last file beginning at or before it (files without references begin where the
        // next one does, and hold none).
        (self.file_starts.partition_point(|&s| s <= r.0) - 1) as u32
    }

    /// The references named `name`, in path and line order (empty for a name nothing uses).
    pub(super) fn named(&self, name: &str) -> &[RefAt] {
        match self.ids.get(name) {
            Some(&id) => {
                let (a, b) = (
                    self.name_starts[id as usize],
                    self.name_starts[id as usize + 1],
                );
                &self.by_name[a as usize..b as usize]
            }
            None => &[],
        }
    }

    pub(super) fn at(&self, r: RefAt) -> RefView<'_> {
        self.view(self.refs[r.0 as usize])
    }

    /// The path of the file a reference is in.
    pub(super) fn path_of(&self, r: RefAt) -> &Arc<str> {
        &self.paths[self.file_of(r) as usize]
    }

    fn of_file(&self, file: usize) -> impl Iterator<Item = RefView<'_>> + '_ {
        let end = file.checked_add(1).and_then(|n| self.file_starts.get(n));
        let (a, b) = match (self.file_starts.get(file), end) {
            (Some(&a), Some(&b)) => (a as usize, b as usize),
            _ => (0, 0),
        };
        self.refs[a..b].iter().map(|&r| self.view(r))
    }

    /// The references made in `path`, in its facts' order.
    pub(super) fn of_path(&self, path: &str) -> impl Iterator<Item = RefView<'_>> + '_ {
        let file = self
            .by_path
            .binary_search_by(|&f| (*self.paths[f as usize]).cmp(path))
            .map_or(usize::MAX, |k| self.by_path[k] as usize);
        self.of_file(file)
    }

    /// Every file with its references, in path order.
    pub(super) fn by_file(
        &self,
    ) -> impl Iterator<Item = (&Arc<str>, impl Iterator<Item = RefView<'_>> + '_)> + '_ {
        self.by_path
            .iter()
            .map(|&f| (&self.paths[f as usize], self.of_file(f as usize)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(name: &str, line: u32, call: bool, qualifier: Option<&str>) -> Reference {
        Reference {
            name: name.into(),
            line,
            call,
            qualifier: qualifier.map(Into::into),
        }
    }

    /// The table of `files`, named `f0`, `f1`, … (path order is the given order below ten),
    /// added in reverse: the table orders files by path whatever order they came in.
    fn table(files: &[Vec<Reference>]) -> References {
        let mut b = Builder::default();
        for (i, refs) in files.iter().enumerate().rev() {
            b.add(format!("f{i}").into(), refs);
        }
        b.finish()
    }

    fn owned(v: RefView<'_>) -> Reference {
        Reference {
            name: v.name.clone(),
            line: v.line,
            call: v.call,
            qualifier: v.qualifier.cloned(),
        }
    }

    #[test]
    fn every_reference_reads_back_as_it_was_given_and_is_found_by_its_name() {
        let files = vec![
            vec![
                reference("open", 9, true, Some("os")),
                reference("path", 3, false, None),
                reference("open", 2, false, Some("self")),
            ],
            vec![],
            vec![
                reference("os", 1, false, None),
                reference("open", 7, true, None),
            ],
        ];
        let table = table(&files);
        for (i, refs) in files.iter().enumerate() {
            let back: Vec<Reference> = table.of_path(&format!("f{i}")).map(owned).collect();
            assert_eq!(&back, refs);
        }
        // Every file in path order, the empty one too.
        let by_file: Vec<(String, usize)> = table
            .by_file()
            .map(|(p, refs)| (p.to_string(), refs.count()))
            .collect();
        assert_eq!(
            by_file,
            vec![("f0".into(), 3), ("f1".into(), 0), ("f2".into(), 2)]
        );
        // By name: path order, then line order within a file; a qualifier is not a use.
        let open: Vec<(String, u32)> = table
            .named("open")
            .iter()
            .map(|&r| (table.path_of(r).to_string(), table.at(r).line))
            .collect();
        assert_eq!(
            open,
            vec![("f0".into(), 2), ("f0".into(), 9), ("f2".into(), 7)]
        );
        let os: Vec<u32> = table
            .named("os")
            .iter()
            .map(|&r| table.at(r).line)
            .collect();
        assert_eq!(os, vec![1]);
        assert!(table.named("self").is_empty());
        assert!(table.named("missing").is_empty());
        assert_eq!(table.of_path("f9").count(), 0);
    }

    #[test]
    fn a_table_of_no_files_answers_nothing() {
        let table = Builder::default().finish();
        assert!(table.named("x").is_empty());
        assert_eq!(table.of_path("a.rs").count(), 0);
        assert_eq!(table.by_file().count(), 0);
    }

    #[test]
    fn a_line_beyond_what_the_record_holds_is_clamped_not_wrapped() {
        let table = table(&[vec![reference("x", u32::MAX, true, None)]]);
        let r = table.of_path("f0").next().unwrap();
        assert_eq!((r.line, r.call), (u32::MAX >> 1, true));
    }
}
