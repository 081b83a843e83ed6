//! The graph's index of references by name. Each entry is a place in a file's facts, which the
//! graph keeps anyway; a [`Site`] is made when one is asked for. Copying every site of a
//! 100k-file tree, each with its qualifier as an owned string, took a quarter of its graph's heap
//! (deno: 262 → 200 MiB without the copies, one run; bench/RESULTS.md, fifty-first session).

use std::collections::HashMap;
use std::sync::Arc;

use patina_core::{FileFacts, Reference};

use super::{GraphTable, Site};

/// A reference in the facts: the file's index in the graph's `fact_files` (in path order), the
/// reference's in that file's `refs`.
#[derive(Clone, Copy, Debug)]
pub(super) struct RefAt {
    file: u32,
    at: u32,
}

/// Every reference of `fact_files` (sorted by path) by name, each name's in path and line order.
pub(super) fn index(fact_files: &[(Arc<str>, Arc<FileFacts>)]) -> HashMap<Arc<str>, Vec<RefAt>> {
    let mut refs: HashMap<Arc<str>, Vec<RefAt>> = HashMap::new();
    for (file, (_, f)) in fact_files.iter().enumerate() {
        for (at, r) in f.refs.iter().enumerate() {
            let at = RefAt {
                file: file as u32,
                at: at as u32,
            };
            match refs.get_mut(&*r.name) {
                Some(list) => list.push(at),
                None => {
                    refs.insert(r.name.clone(), vec![at]);
                }
            }
        }
    }
    for list in refs.values_mut() {
        list.sort_by_key(|r| {
            (
                r.file,
                fact_files[r.file as usize].1.refs[r.at as usize].line,
            )
        });
        list.shrink_to_fit();
    }
    refs.shrink_to_fit();
    refs
}

impl GraphTable {
    pub(super) fn reference(&self, r: RefAt) -> &Reference {
        &self.fact_files[r.file as usize].1.refs[r.at as usize]
    }

    pub(super) fn site(&self, r: RefAt) -> Site {
        let reference = self.reference(r);
        Site {
            path: self.fact_files[r.file as usize].0.clone(),
            line: reference.line,
            call: reference.call,
            qualifier: reference.qualifier.clone(),
        }
    }
}
