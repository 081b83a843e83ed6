//! Re-exports in the graph: the files that make a name public under their own path (`pub use`,
//! `export … from`, a package's `__init__.py`; [`patina_core::Import::reexport`]). They are where
//! users import the name from, so a question naming it wants that line beside its definition.

use std::collections::HashMap;
use std::sync::Arc;

use patina_core::{FileFacts, Import};

use super::{Def, GraphTable};

/// An import a file makes public again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReExport {
    pub path: Arc<str>,
    pub import: Import,
}

/// The re-exports of `facts`: those that name an item, by its lowercased name and alias (both:
/// `pub use a::B as C` answers for `C`, the name users import, and for `B`, the name they may
/// know it by), and those of everything a module has. Each list by path and line.
pub(super) fn index(
    facts: &HashMap<Arc<str>, Arc<FileFacts>>,
) -> (HashMap<String, Vec<ReExport>>, Vec<ReExport>) {
    let mut named: HashMap<String, Vec<ReExport>> = HashMap::new();
    let mut star = Vec::new();
    for (path, f) in facts {
        for i in f.imports.iter().filter(|i| i.reexport) {
            let r = ReExport {
                path: path.clone(),
                import: i.clone(),
            };
            if i.name.as_deref() == Some("*") {
                star.push(r);
                continue;
            }
            let local = i.local_name().to_lowercase();
            if let Some(n) = i.name.as_deref().map(str::to_lowercase)
                && n != local
            {
                named.entry(n).or_default().push(r.clone());
            }
            named.entry(local).or_default().push(r);
        }
    }
    let order =
        |a: &ReExport, b: &ReExport| a.path.cmp(&b.path).then(a.import.line.cmp(&b.import.line));
    for list in named.values_mut() {
        list.sort_by(order);
    }
    star.sort_by(order);
    (named, star)
}

impl GraphTable {
    /// The re-exports that make `name` (any case) public, each with the chunk holding its line:
    /// those naming it, then those of everything of a module where it is defined or re-exported
    /// by name. By path and line within each.
    pub fn reexports_of(&self, name: &str) -> Vec<(ReExport, Option<Def>)> {
        let key = name.to_lowercase();
        let named: &[ReExport] = self.reexports.get(&key).map_or(&[], Vec::as_slice);
        let mut out: Vec<ReExport> = named.to_vec();
        if !self.star_reexports.is_empty() {
            let mut homes: Vec<Arc<str>> = self.defs(name).into_iter().map(|d| d.path).collect();
            homes.extend(named.iter().map(|r| r.path.clone()));
            if !homes.is_empty() {
                for r in &self.star_reexports {
                    let reached = self.files_of_glob(&r.path, &r.import);
                    if homes.iter().any(|h| reached.contains(h) && *h != r.path) {
                        out.push(r.clone());
                    }
                }
            }
        }
        out.into_iter()
            .map(|r| {
                let chunk = self.enclosing(&r.path, r.import.line).cloned();
                (r, chunk)
            })
            .collect()
    }
}
