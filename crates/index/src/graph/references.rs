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

/// A reference in a file: the file's index among the graph's files with facts (in path order),
/// the reference's in that file's list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct RefAt {
    pub(super) file: u32,
    at: u32,
}

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
    /// Each file's references, in its facts' order; files in the order they were given.
    files: Vec<Box<[Ref]>>,
    /// Where each name's references begin in `by_name` (by name id; one more than `names`).
    starts: Vec<u32>,
    /// The references of every name, name after name, each name's in file and line order.
    by_name: Vec<RefAt>,
}

/// Files' references made compact one file at a time ([`Builder::add`]): a large repository's
/// facts are never all decoded at once.
#[derive(Default)]
pub(super) struct Builder {
    names: Vec<Arc<str>>,
    ids: HashMap<Arc<str>, u32>,
    files: Vec<(Arc<str>, Box<[Ref]>)>,
}

impl Builder {
    fn id(&mut self, name: &Arc<str>) -> u32 {
        if let Some(&id) = self.ids.get(&**name) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(name.clone());
        self.ids.insert(name.clone(), id);
        id
    }

    /// The references of the file at `path` (each file once).
    pub(super) fn add(&mut self, path: Arc<str>, refs: &[Reference]) {
        let compact: Box<[Ref]> = refs
            .iter()
            .map(|r| Ref {
                name: self.id(&r.name),
                qualifier: r.qualifier.as_ref().map_or(NONE, |q| self.id(q)),
                line_call: (r.line.min(u32::MAX >> 1) << 1) | u32::from(r.call),
            })
            .collect();
        self.files.push((path, compact));
    }

    /// The table, and the paths of the files added, sorted: [`RefAt::file`] numbers them.
    pub(super) fn finish(mut self) -> (References, Vec<Arc<str>>) {
        self.files.sort_by(|a, b| a.0.cmp(&b.0));
        let (paths, files): (Vec<Arc<str>>, Vec<Box<[Ref]>>) = self.files.into_iter().unzip();
        let mut table = References {
            names: self.names,
            ids: self.ids,
            files,
            starts: Vec::new(),
            by_name: Vec::new(),
        };
        table.names.shrink_to_fit();
        table.ids.shrink_to_fit();
        // Counting sort by name: each name's references in file order, then by line within a
        // file (a file's facts list them in the order the extractor met them).
        let mut counts = vec![0u32; table.names.len() + 1];
        for refs in &table.files {
            for r in refs.iter() {
                counts[r.name as usize + 1] += 1;
            }
        }
        for i in 1..counts.len() {
            counts[i] += counts[i - 1];
        }
        let mut next = counts.clone();
        let total = *counts.last().unwrap_or(&0) as usize;
        let mut by_name = vec![RefAt { file: 0, at: 0 }; total];
        for (file, refs) in table.files.iter().enumerate() {
            for (at, r) in refs.iter().enumerate() {
                let slot = &mut next[r.name as usize];
                by_name[*slot as usize] = RefAt {
                    file: file as u32,
                    at: at as u32,
                };
                *slot += 1;
            }
        }
        drop(next);
        for w in counts.windows(2) {
            by_name[w[0] as usize..w[1] as usize]
                .sort_by_key(|r| (r.file, table.files[r.file as usize][r.at as usize].line()));
        }
        table.starts = counts;
        table.by_name = by_name;
        (table, paths)
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

    /// The references named `name`, in file and line order (empty for a name nothing uses).
    pub(super) fn named(&self, name: &str) -> &[RefAt] {
        match self.ids.get(name) {
            Some(&id) => {
                &self.by_name
                    [self.starts[id as usize] as usize..self.starts[id as usize + 1] as usize]
            }
            None => &[],
        }
    }

    pub(super) fn at(&self, r: RefAt) -> RefView<'_> {
        self.view(self.files[r.file as usize][r.at as usize])
    }

    /// The references of the `file`th file, in its facts' order.
    pub(super) fn of_file(&self, file: usize) -> impl Iterator<Item = RefView<'_>> + '_ {
        self.files
            .get(file)
            .into_iter()
            .flat_map(|refs| refs.iter().map(|&r| self.view(r)))
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

    /// The table of `files`, named `f0`, `f1`, … (so path order is the given order below ten).
    fn table(files: &[Vec<Reference>]) -> References {
        let mut b = Builder::default();
        // Added out of order: the table numbers files by path whatever the order they came in.
        for (i, refs) in files.iter().enumerate().rev() {
            b.add(format!("f{i}").into(), refs);
        }
        let (table, paths) = b.finish();
        let want: Vec<Arc<str>> = (0..files.len()).map(|i| format!("f{i}").into()).collect();
        assert_eq!(paths, want);
        table
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
        for (file, refs) in files.iter().enumerate() {
            let back: Vec<Reference> = table
                .of_file(file)
                .map(|v| Reference {
                    name: v.name.clone(),
                    line: v.line,
                    call: v.call,
                    qualifier: v.qualifier.cloned(),
                })
                .collect();
            assert_eq!(&back, refs);
        }
        // By name: file order, then line order within a file; a qualifier is not a use.
        let open: Vec<(u32, u32)> = table
            .named("open")
            .iter()
            .map(|&r| (r.file, table.at(r).line))
            .collect();
        assert_eq!(open, vec![(0, 2), (0, 9), (2, 7)]);
        let os: Vec<u32> = table
            .named("os")
            .iter()
            .map(|&r| table.at(r).line)
            .collect();
        assert_eq!(os, vec![1]);
        assert!(table.named("self").is_empty());
        assert!(table.named("missing").is_empty());
        assert_eq!(table.of_file(7).count(), 0);
    }

    #[test]
    fn a_line_beyond_what_the_record_holds_is_clamped_not_wrapped() {
        let table = table(&[vec![reference("x", u32::MAX, true, None)]]);
        let r = table.of_file(0).next().unwrap();
        assert_eq!((r.line, r.call), (u32::MAX >> 1, true));
    }
}
