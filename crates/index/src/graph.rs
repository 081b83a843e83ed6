//! The dependency graph of one repository, in memory: every file's facts (references, calls,
//! imports, type relations — [`patina_chunk::extract_facts`], stored per file) joined with the
//! definitions of the chunk table. Names are resolved to definitions with the language's import
//! rules where they are tractable (Python modules and relative imports, Rust `use`/`mod` paths, Go
//! packages, JS/TS relative specifiers, Java packages, C/C++ includes), else by same-name
//! candidates ranked by proximity (same file > same directory > elsewhere); every edge says how it
//! was resolved ([`Resolution`]). Rebuilt after every commit, like the symbol table.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use patina_core::{ChunkKind, ChunkMeta, FileFacts, Import, Language, Resolution};

pub use build::Chunked;
pub use references::RefView;

/// A definition: a named chunk (the pieces of a split definition are one). Its names are shared
/// by every copy the graph holds (by file, by name) and every namesake: as owned strings they were
/// a tenth of a 100k-file tree's graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Def {
    pub chunk_id: u64,
    pub path: Arc<str>,
    pub start_line: u32,
    pub end_line: u32,
    /// Empty for a chunk without a name.
    pub symbol: Arc<str>,
    pub parent: Option<Arc<str>>,
    pub kind: ChunkKind,
}

/// A place that names something.
#[derive(Clone, Debug)]
pub struct Site {
    pub path: Arc<str>,
    pub line: u32,
    pub call: bool,
    pub qualifier: Option<Arc<str>>,
}

/// A reference with what it was resolved to.
#[derive(Clone, Debug)]
pub struct Edge {
    pub site: Site,
    pub name: String,
    /// The chunk around the site (`None` at file level).
    pub from: Option<Def>,
    /// The definition it most likely names.
    pub to: Def,
    pub resolution: Resolution,
    /// How many candidates shared the best rank (1 for exact and import resolutions).
    pub candidates: usize,
}

#[derive(Default)]
pub struct GraphTable {
    /// Every file's imports and type relations; its references are in `references`.
    facts: HashMap<Arc<str>, Arc<FileFacts>>,
    languages: HashMap<Arc<str>, Language>,
    /// Definitions by name.
    defs: HashMap<Arc<str>, Vec<Def>>,
    /// The chunks of each file, by start line: (start, end, chunk id, symbol, parent, kind).
    chunks: HashMap<Arc<str>, Vec<Def>>,
    /// Every file's references, and each name's (`graph/references.rs`); a [`Site`] is made
    /// when one is asked for.
    references: references::References,
    /// Every file with chunks or facts, sorted.
    paths: Vec<Arc<str>>,
    /// Re-exports naming an item, by its lowercased name and alias ([`GraphTable::reexports_of`]).
    reexports: HashMap<String, Vec<ReExport>>,
    /// Re-exports of everything a module has (`pub use m::*`, `export * from './m'`).
    star_reexports: Vec<ReExport>,
    /// [`GraphTable::callers`] found so far, by (chunk id, hub limit).
    callers: std::sync::Mutex<CallersMemo>,
    /// [`GraphTable::ties_its_folder`] answered so far, by path: every candidate of a question
    /// naming a folder asks it, and the answer depends on the table alone.
    ties: std::sync::Mutex<HashMap<Arc<str>, bool>>,
    /// The paths by file name, folder name and stem, made when an import is first followed
    /// (`modules::PathIndex`).
    path_index: std::sync::OnceLock<modules::PathIndex>,
}

type CallersMemo = HashMap<(u64, usize), Arc<[(Option<u64>, Resolution)]>>;

/// Whether a chunk of this kind defines something (not a section, block or window).
pub fn is_definition(kind: ChunkKind) -> bool {
    !matches!(
        kind,
        ChunkKind::Section | ChunkKind::Block | ChunkKind::Window
    )
}

fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

fn stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.split_once('.').map_or(name, |(s, _)| s)
}

/// `a/b/../c/./d` → `a/c/d`; `None` when it climbs above the root.
fn normalize(path: &str) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                out.pop()?;
            }
            s => out.push(s),
        }
    }
    Some(out.join("/"))
}

fn join(dir: &str, rest: &str) -> String {
    if dir.is_empty() {
        rest.to_string()
    } else if rest.is_empty() {
        dir.to_string()
    } else {
        format!("{dir}/{rest}")
    }
}

const SELF_NAMES: &[&str] = &["self", "this", "cls", "Self"];

impl GraphTable {
    /// The imports and type relations of `path` (its references are [`GraphTable::refs_in`]:
    /// these facts' `refs` are empty).
    pub fn facts(&self, path: &str) -> Option<&Arc<FileFacts>> {
        self.facts.get(path)
    }

    /// The place of a reference, for resolving it.
    fn site(&self, r: references::RefAt) -> Site {
        let v = self.references.at(r);
        Site {
            path: self.references.path_of(r).clone(),
            line: v.line,
            call: v.call,
            qualifier: v.qualifier.cloned(),
        }
    }

    /// The references made in `path`, in its facts' order.
    pub fn refs_in(&self, path: &str) -> impl Iterator<Item = RefView<'_>> + '_ {
        self.references.of_path(path)
    }

    /// Definitions called `name` (exact; else case- and style-insensitive), nearest to nothing in
    /// particular: sorted by path and line.
    pub fn defs(&self, name: &str) -> Vec<Def> {
        let (parent, name) = split_qualified(name);
        let mut out: Vec<Def> = match self.defs.get(name) {
            Some(v) => v.clone(),
            None => {
                let key = crate::symbols::normalize(name);
                self.defs
                    .iter()
                    .filter(|(k, _)| crate::symbols::normalize(k) == key)
                    .flat_map(|(_, v)| v.iter().cloned())
                    .collect()
            }
        };
        if let Some(p) = parent {
            out.retain(|d| d.parent.as_deref() == Some(p) || dir_of(&d.path).ends_with(p));
        }
        out.sort_by(|a, b| a.path.cmp(&b.path).then(a.start_line.cmp(&b.start_line)));
        out
    }

    /// The chunk around `line` of `path`: the narrowest one, preferring named definitions.
    pub fn enclosing(&self, path: &str, line: u32) -> Option<&Def> {
        self.chunks
            .get(path)?
            .iter()
            .filter(|d| d.start_line <= line && line <= d.end_line)
            .min_by_key(|d| {
                (
                    d.symbol.is_empty() || !is_definition(d.kind),
                    d.end_line - d.start_line,
                )
            })
    }

    /// The definition a chunk belongs to (its own name, or the definition around it).
    pub fn def_of_chunk(&self, chunk_id: u64, meta: &ChunkMeta) -> Option<Def> {
        let name = meta.symbol.as_deref()?;
        self.defs.get(name).and_then(|v| {
            v.iter()
                .find(|d| {
                    *d.path == *meta.path
                        && d.start_line <= meta.start_line
                        && meta.end_line <= d.end_line
                })
                .or_else(|| v.iter().find(|d| d.chunk_id == chunk_id))
                .cloned()
        })
    }

    /// The definitions `site` (naming `name`) may refer to, best first, with how they were found.
    /// Empty when nothing in the repository has that name.
    pub fn resolve(&self, name: &str, site: &Site) -> (Vec<Def>, Resolution) {
        let Some(all) = self.defs.get(name) else {
            // An aliased import: `h()` after `from m import helper as h`.
            if let Some(imp) = self.import_binding(&site.path, name)
                && let Some(real) = imp.name.as_deref().filter(|n| *n != "*" && *n != name)
            {
                let files = self.module_files(&site.path, imp);
                let found: Vec<Def> = self
                    .defs
                    .get(real)
                    .into_iter()
                    .flatten()
                    .filter(|d| files.contains(&d.path))
                    .cloned()
                    .collect();
                if !found.is_empty() {
                    return (found, Resolution::Import);
                }
            }
            return (Vec::new(), Resolution::NameOnly);
        };
        let lang = self.languages.get(&*site.path).copied();
        let q = site.qualifier.as_deref();
        let via_self = q.is_some_and(|q| SELF_NAMES.contains(&q));
        // Through a module or package the file imports: `pkg.Func`, `mod.func`, `m::f`.
        if let Some(q) = q.filter(|_| !via_self) {
            let head = q.split(['.', ':']).find(|s| !s.is_empty()).unwrap_or(q);
            if let Some(imp) = self.import_binding(&site.path, head) {
                let files = self.module_files(&site.path, imp);
                if files.is_empty() && modules::imports_name_files(lang) {
                    // A module from outside the repository (`os.environ.get`, `std::fs::read`).
                    return (Vec::new(), Resolution::NameOnly);
                }
                let files = self.with_reexports(files, name);
                let found: Vec<Def> = all
                    .iter()
                    .filter(|d| files.contains(&d.path) || d.parent.as_deref() == Some(head))
                    .cloned()
                    .collect();
                if !found.is_empty() {
                    return (found, Resolution::Import);
                }
            }
        }
        // A module that is its file by the compiler's rule (Erlang's `m:f` → `m.erl`, OCaml's
        // `Money.add` → `money.ml`/`.mli`), wherever it lies.
        if let Some(q) = q
            && let Some(files) = modules::module_file_names(lang, q)
        {
            let found: Vec<Def> = all
                .iter()
                .filter(|d| {
                    files
                        .iter()
                        .any(|f| *f == *d.path.rsplit('/').next().unwrap_or(&d.path))
                })
                .cloned()
                .collect();
            if !found.is_empty() {
                return (found, Resolution::Import);
            }
            // Every Erlang module is a file: one of no file (`lists`, a dependency) is outside the
            // repository, never guessed. An OCaml module may be one of the same file (`Ledger.post`),
            // which the rules below find.
            if lang == Some(Language::Erlang) {
                return (Vec::new(), Resolution::NameOnly);
            }
        }
        // Imported by name: `from m import f`, `use a::f`, `import { f } from './m'`.
        if q.is_none()
            && let Some(imp) = self.import_binding(&site.path, name)
        {
            let files = self.module_files(&site.path, imp);
            if files.is_empty() && modules::imports_name_files(lang) {
                // Imported from outside the repository: `from json import loads`.
                return (Vec::new(), Resolution::NameOnly);
            }
            let files = self.with_reexports(files, name);
            let found: Vec<Def> = all
                .iter()
                .filter(|d| files.contains(&d.path))
                .cloned()
                .collect();
            if !found.is_empty() {
                return (found, Resolution::Import);
            }
        }
        // Which candidates the form of the site allows: a call through an object reaches a
        // method; a bare name in Python, Go or JavaScript (called or not: `for name in names`)
        // a function, class or variable, never a method.
        let qualified_object = q.is_some();
        let allowed = |d: &Def| -> bool {
            if via_self || (qualified_object && !self.is_module_qualifier(&site.path, q)) {
                return d.parent.is_some() || matches!(d.kind, ChunkKind::Method);
            }
            if q.is_none()
                && matches!(
                    lang,
                    Some(Language::Python | Language::Go | Language::JavaScript)
                )
            {
                return d.parent.is_none() || !matches!(d.kind, ChunkKind::Method);
            }
            true
        };
        // A Terraform address (`var.region`, `aws_s3_bucket.logs`) names one block of the
        // module, which is the folder: its owner is the address's first part.
        if lang == Some(Language::Hcl) {
            let dir = dir_of(&site.path);
            let same_module: Vec<Def> = all
                .iter()
                .filter(|d| dir_of(&d.path) == dir && d.parent.as_deref() == q)
                .cloned()
                .collect();
            if !same_module.is_empty() {
                return (same_module, Resolution::Exact);
            }
        }
        let same_file: Vec<Def> = all
            .iter()
            .filter(|d| d.path == site.path && allowed(d))
            .cloned()
            .collect();
        if !same_file.is_empty() {
            return (same_file, Resolution::Exact);
        }
        // One package, one namespace: Go, Java, Kotlin and Scala definitions of the same
        // directory, an R package's `R/` folder, and a Julia package's `src/` (its files are
        // included into the package's module).
        if matches!(
            lang,
            Some(
                Language::Go
                    | Language::Java
                    | Language::Kotlin
                    | Language::Scala
                    | Language::R
                    | Language::Julia
            )
        ) && !qualified_object
        {
            let dir = dir_of(&site.path);
            let same_pkg: Vec<Def> = all
                .iter()
                .filter(|d| dir_of(&d.path) == dir && allowed(d))
                .cloned()
                .collect();
            if !same_pkg.is_empty() {
                return (same_pkg, Resolution::Exact);
            }
        }
        // One module, one namespace: Swift definitions of the same target, in any of its folders.
        if lang == Some(Language::Swift) && !qualified_object {
            let module = modules::swift_module(&site.path);
            let same_module: Vec<Def> = all
                .iter()
                .filter(|d| modules::swift_module(&d.path) == module && allowed(d))
                .cloned()
                .collect();
            if !same_module.is_empty() {
                return (same_module, Resolution::Exact);
            }
        }
        // Wildcard imports: `from m import *`, `use m::*`, `import a.b.*`.
        if let Some(f) = self.facts.get(&*site.path) {
            for imp in f.imports.iter().filter(|i| i.name.as_deref() == Some("*")) {
                let files = self.module_files(&site.path, imp);
                let found: Vec<Def> = all
                    .iter()
                    .filter(|d| files.contains(&d.path) && allowed(d))
                    .cloned()
                    .collect();
                if !found.is_empty() {
                    return (found, Resolution::Import);
                }
            }
        }
        let mut found: Vec<Def> = all.iter().filter(|d| allowed(d)).cloned().collect();
        let dir = dir_of(&site.path);
        found.sort_by_key(|d| {
            let common = common_prefix_segments(dir, dir_of(&d.path));
            (
                dir_of(&d.path) != dir,
                std::cmp::Reverse(common),
                d.path.clone(),
                d.start_line,
            )
        });
        (found, Resolution::NameOnly)
    }

    fn is_module_qualifier(&self, path: &str, q: Option<&str>) -> bool {
        let Some(q) = q else { return false };
        let head = q.split(['.', ':']).find(|s| !s.is_empty()).unwrap_or(q);
        self.import_binding(path, head).is_some()
            || head.chars().next().is_some_and(char::is_uppercase)
                && self.defs.get(head).is_some_and(|v| {
                    v.iter()
                        .any(|d| !matches!(d.kind, ChunkKind::Function | ChunkKind::Method))
                })
    }

    /// `files` and the files their imports of `name` reach: a package's `__init__.py` (or a
    /// Rust `mod.rs`, a JS index) re-exporting `from .helpers import url_for` leads to
    /// `helpers.py`. Two hops at most.
    fn with_reexports(&self, files: HashSet<Arc<str>>, name: &str) -> HashSet<Arc<str>> {
        let mut all = files.clone();
        let mut frontier = files;
        for _ in 0..2 {
            let mut next = HashSet::new();
            for f in &frontier {
                if let Some(imp) = self.import_binding(f, name) {
                    for g in self.module_files(f, imp) {
                        if all.insert(g.clone()) {
                            next.insert(g);
                        }
                    }
                }
            }
            if next.is_empty() {
                break;
            }
            frontier = next;
        }
        all
    }

    /// The import of `path` that binds `local` in it.
    fn import_binding(&self, path: &str, local: &str) -> Option<&Import> {
        self.facts
            .get(path)?
            .imports
            .iter()
            .find(|i| i.name.as_deref() != Some("*") && i.local_name() == local)
    }

    fn edge(&self, name: &str, site: &Site) -> Option<Edge> {
        let (cands, resolution) = self.resolve(name, site);
        let to = cands.first()?.clone();
        let candidates = match resolution {
            Resolution::NameOnly => {
                let best_dir = dir_of(&to.path);
                cands.iter().filter(|d| dir_of(&d.path) == best_dir).count()
            }
            _ => cands.len(),
        };
        Some(Edge {
            from: self.enclosing(&site.path, site.line).cloned(),
            site: site.clone(),
            name: name.to_string(),
            to,
            resolution,
            candidates,
        })
    }

    /// How many call sites name `symbol` (its last segment), before any resolution: cheap, and an
    /// upper bound on its callers — what tells a hub (`new`, `poll`) from a function worth walking.
    pub fn call_sites(&self, symbol: &str) -> usize {
        let (_, name) = split_qualified(symbol);
        self.references
            .named(name)
            .iter()
            .filter(|&&r| self.references.at(r).call)
            .count()
    }

    /// The resolved callers of `def`, in the order of their call sites: the chunk around each
    /// site (`None` at file level) and how the call was resolved. Empty when more than `hub` call
    /// sites name it (`new`, `poll`: resolving thousands of sites says nothing). Remembered for
    /// the table's life: the same definitions come up query after query.
    pub fn callers(&self, def: &Def, hub: usize) -> Arc<[(Option<u64>, Resolution)]> {
        let key = (def.chunk_id, hub);
        if let Some(found) = self.callers.lock().expect("callers").get(&key) {
            return found.clone();
        }
        let found: Arc<[(Option<u64>, Resolution)]> = if self.call_sites(&def.symbol) > hub {
            Arc::from([])
        } else {
            self.references(&def.symbol, true)
                .into_iter()
                .filter(|e| e.to == *def)
                .map(|e| (e.from.map(|f| f.chunk_id), e.resolution))
                .collect()
        };
        self.callers
            .lock()
            .expect("callers")
            .insert(key, found.clone());
        found
    }

    /// How many places call `def`: its resolved callers, or — when more than `hub` call sites
    /// name it — those sites unresolved (an upper bound, cheap).
    pub fn caller_count(&self, def: &Def, hub: usize) -> usize {
        let sites = self.call_sites(&def.symbol);
        if sites > hub {
            sites
        } else {
            self.callers(def, hub).len()
        }
    }

    /// References to the definitions called `symbol` (`Parent.name` / `Parent::name` narrows to
    /// members of `Parent`): every site whose resolution reaches one of them, by path and line.
    pub fn references(&self, symbol: &str, calls_only: bool) -> Vec<Edge> {
        let targets = self.defs(symbol);
        let (_, name) = split_qualified(symbol);
        let mut out = Vec::new();
        for &at in self.references.named(name) {
            if calls_only && !self.references.at(at).call {
                continue;
            }
            let site = &self.site(at);
            let (cands, resolution) = self.resolve(name, site);
            // The edge goes to the best-ranked candidate among the targets.
            let Some(to) = cands.iter().find(|c| targets.contains(c)) else {
                continue;
            };
            if resolution == Resolution::NameOnly && cands.first() != Some(to) {
                continue;
            }
            // An attribute read through an object of unknown type (`x.name`), tied by its name
            // alone, is a guess too weak to report (flask: `.name` of anything is not App.name).
            if resolution == Resolution::NameOnly
                && !site.call
                && site
                    .qualifier
                    .as_deref()
                    .is_some_and(|q| !SELF_NAMES.contains(&q))
            {
                continue;
            }
            let from = self.enclosing(&site.path, site.line).cloned();
            // A definition's own line is not a reference to it (a recursive call still is).
            if from
                .as_ref()
                .is_some_and(|f| f == to && site.line == to.start_line && !site.call)
            {
                continue;
            }
            out.push(Edge {
                from,
                site: site.clone(),
                name: name.to_string(),
                to: to.clone(),
                resolution,
                candidates: cands.len(),
            });
        }
        out
    }

    /// The calls made inside `def`, resolved (unresolved calls — library functions — are left out).
    pub fn calls_in(&self, def: &Def) -> Vec<Edge> {
        let mut out: Vec<Edge> = self
            .refs_in(&def.path)
            .filter(|r| r.call && def.start_line <= r.line && r.line <= def.end_line)
            .filter_map(|r| {
                let site = Site {
                    path: def.path.clone(),
                    line: r.line,
                    call: true,
                    qualifier: r.qualifier.cloned(),
                };
                self.edge(r.name, &site)
            })
            .filter(|e| e.to != *def)
            .collect();
        out.sort_by_key(|e| e.site.line);
        out
    }

    /// Type neighbours of `def`: what it extends or implements, and what extends or implements it.
    pub fn type_neighbours(&self, def: &Def) -> Vec<(Def, Resolution)> {
        let mut out = Vec::new();
        // Rust `impl Trait for Type` chunks are named "Trait for Type".
        let name = def.symbol.rsplit(" for ").next().unwrap_or(&def.symbol);
        for (path, f) in &self.facts {
            for r in &f.relations {
                let other = if r.child == name && (**path == *def.path || r.line >= 1) {
                    &r.parent
                } else if r.parent == name {
                    &r.child
                } else {
                    continue;
                };
                let site = Site {
                    path: path.clone(),
                    line: r.line,
                    call: false,
                    qualifier: None,
                };
                let (cands, res) = self.resolve(other, &site);
                if let Some(d) = cands.into_iter().next()
                    && d != *def
                {
                    out.push((d, res));
                }
            }
        }
        out
    }

    /// Files `path` imports that are part of the repository, with the import line.
    pub fn imported_files(&self, path: &str) -> Vec<(Arc<str>, u32)> {
        let Some(f) = self.facts.get(path) else {
            return Vec::new();
        };
        let mut out: Vec<(Arc<str>, u32)> = Vec::new();
        for imp in &f.imports {
            let mut files: Vec<Arc<str>> = self.module_files(path, imp).into_iter().collect();
            files.sort();
            for file in files {
                if *file != *path && !out.iter().any(|(p, _)| *p == file) {
                    out.push((file, imp.line));
                }
            }
        }
        out
    }

    /// Every reference of the repository resolved to its most likely definition (references to
    /// nothing in the repository are left out), by path and line.
    pub fn all_edges(&self) -> Vec<Edge> {
        let mut out = Vec::new();
        for (path, refs) in self.references.by_file() {
            for r in refs {
                let site = Site {
                    path: path.clone(),
                    line: r.line,
                    call: r.call,
                    qualifier: r.qualifier.cloned(),
                };
                out.extend(self.edge(r.name, &site));
            }
        }
        out
    }

    /// Every chunk of `path` (named or not, Markdown sections included), by start line.
    pub fn chunks_in(&self, path: &str) -> &[Def] {
        self.chunks.get(path).map_or(&[], Vec::as_slice)
    }

    /// Every file with chunks or facts, sorted.
    pub fn paths(&self) -> &[Arc<str>] {
        &self.paths
    }

    pub fn has_file(&self, path: &str) -> bool {
        self.facts.contains_key(path) || self.chunks.contains_key(path)
    }
}

/// `Parent.name`, `Parent::name` → (Some(Parent), name).
pub fn split_qualified(symbol: &str) -> (Option<&str>, &str) {
    if let Some((p, n)) = symbol.rsplit_once("::") {
        return (Some(p.rsplit("::").next().unwrap_or(p)), n);
    }
    match symbol.rsplit_once('.') {
        Some((p, n)) if !p.is_empty() && !n.is_empty() => {
            (Some(p.rsplit('.').next().unwrap_or(p)), n)
        }
        _ => (None, symbol),
    }
}

fn common_prefix_segments(a: &str, b: &str) -> usize {
    a.split('/')
        .zip(b.split('/'))
        .take_while(|(x, y)| x == y && !x.is_empty())
        .count()
}

mod build;
mod modules;
mod reexports;
mod references;
mod roots;

pub use reexports::ReExport;
pub use roots::conventional_root;

#[cfg(test)]
pub(crate) mod tests;
