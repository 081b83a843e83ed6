//! Where an import leads: the files of the repository a module path may name, by the rules of
//! the importing file's language.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use patina_core::{Import, Language};

use super::{GraphTable, dir_of, join, normalize, stem};

/// Whether `language`'s imports name files (or folders), so that an import leading to none of
/// the repository's files comes from outside it. PHP's `use` names a namespace's class, not a
/// file (composer maps namespaces to folders in its own configuration), and C#'s `using` a
/// namespace any assembly may add to: such an import leads nowhere here, and the names it binds
/// are resolved as if it were not there. Kotlin's `import a.b.C` leads to `a/b/C.kt` when the
/// file is named for what it declares, but a file may declare anything under any name (and so
/// may Scala's, and an Elixir module's file is only named for it by convention).
pub(super) fn imports_name_files(language: Option<Language>) -> bool {
    !matches!(
        language,
        Some(
            Language::Php
                | Language::CSharp
                | Language::Kotlin
                | Language::Scala
                | Language::Elixir
        )
    )
}

/// The file names a module is, in a language where a module is its file by the compiler's rule:
/// Erlang's `ledger` is `ledger.erl`; OCaml's `Support.Money` is `money.ml` (or its interface
/// `money.mli`). `None` elsewhere.
pub(super) fn module_file_names(language: Option<Language>, module: &str) -> Option<Vec<String>> {
    match language? {
        Language::Erlang => Some(vec![format!("{module}.erl")]),
        Language::OCaml | Language::OCamlInterface => {
            let last = module.rsplit('.').next().unwrap_or(module);
            let mut chars = last.chars();
            let first = chars.next()?;
            let stem = format!("{}{}", first.to_ascii_lowercase(), chars.as_str());
            Some(vec![format!("{stem}.ml"), format!("{stem}.mli")])
        }
        _ => None,
    }
}

/// The Swift module a file belongs to, as the folder holding all of it: SwiftPM's target folder
/// (`Sources/Shop/` for `Sources/Shop/Models/Cart.swift`, `Tests/ShopTests/` likewise), else the
/// file's own folder (an Xcode target's files are listed in its project, not laid out by folder).
pub(super) fn swift_module(path: &str) -> &str {
    for root in ["Sources/", "Tests/"] {
        let at = if path.starts_with(root) {
            Some(0)
        } else {
            path.find(&format!("/{root}")).map(|i| i + 1)
        };
        if let Some(at) = at {
            let target = at + root.len();
            if let Some(len) = path[target..].find('/') {
                return &path[..target + len];
            }
        }
    }
    dir_of(path)
}

/// Elixir's file for a module, by Mix's convention: `Acme.HTTPClient` → `acme/http_client`.
fn elixir_path(module: &str) -> String {
    let underscore = |segment: &str| {
        let chars: Vec<char> = segment.chars().collect();
        let mut out = String::with_capacity(segment.len() + 4);
        for (i, &c) in chars.iter().enumerate() {
            if c.is_uppercase() && i > 0 {
                let prev = chars[i - 1];
                let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
                if prev.is_lowercase() || prev.is_ascii_digit() || prev.is_uppercase() && next_lower
                {
                    out.push('_');
                }
            }
            out.extend(c.to_lowercase());
        }
        out
    };
    module
        .split('.')
        .map(underscore)
        .collect::<Vec<_>>()
        .join("/")
}

impl GraphTable {
    /// The files of the repository an import may reach.
    pub fn module_files(&self, from: &str, imp: &Import) -> HashSet<Arc<str>> {
        self.files_of_module(from, imp, true)
    }

    /// [`GraphTable::module_files`] of a module path named as a module (`pub use a::b::*`):
    /// in Rust, `a::b` is then not tried as an item of `a` (whose file would seem re-exported).
    pub(super) fn files_of_glob(&self, from: &str, imp: &Import) -> HashSet<Arc<str>> {
        self.files_of_module(from, imp, false)
    }

    fn files_of_module(&self, from: &str, imp: &Import, item_path: bool) -> HashSet<Arc<str>> {
        let reach = self.reach(from, imp, item_path);
        let index = self.path_index.get_or_init(|| PathIndex::of(&self.paths));
        match index.candidates(&reach) {
            Some(candidates) => candidates
                .into_iter()
                .map(|i| &self.paths[i as usize])
                .filter(|p| reach.reaches(p))
                .cloned()
                .collect(),
            None => self
                .paths
                .iter()
                .filter(|p| reach.reaches(p))
                .cloned()
                .collect(),
        }
    }

    /// Whether one of `from`'s imports may reach the file `path` (what
    /// [`GraphTable::imported_files`] would list, asked of one file: no walk over every path).
    pub fn imports_file(&self, from: &str, path: &str) -> bool {
        from != path
            && self.facts.get(from).is_some_and(|f| {
                f.imports
                    .iter()
                    .any(|imp| self.reach(from, imp, true).reaches(path))
            })
    }

    /// What an import of `from` may reach, by its language's rules.
    fn reach<'a>(&self, from: &str, imp: &'a Import, item_path: bool) -> Reach<'a> {
        let lang = self.languages.get(from).copied();
        let module = imp.module.as_str();
        let mut exact: Vec<String> = Vec::new();
        let mut suffixes: Vec<String> = Vec::new();
        let mut dirs: Vec<String> = Vec::new();
        let mut go_package: Option<&str> = None;
        // A C header: its sources (the same stem, another name) anywhere.
        let mut header: Option<&str> = None;
        // Folders whose every file the import reaches (a Swift module).
        let mut trees: Vec<String> = Vec::new();
        let dir = dir_of(from);
        match lang {
            Some(Language::Python) => {
                let dots = module.chars().take_while(|c| *c == '.').count();
                let rest = module[dots..].replace('.', "/");
                let sub = imp.name.as_deref().filter(|n| *n != "*");
                let mut bases = Vec::new();
                if dots > 0 {
                    let mut base = dir.to_string();
                    for _ in 1..dots {
                        base = dir_of(&base).to_string();
                    }
                    bases.push(join(&base, &rest));
                } else {
                    suffixes.push(format!("{rest}.py"));
                    suffixes.push(format!("{rest}/__init__.py"));
                    if let Some(s) = sub {
                        suffixes.push(format!("{rest}/{s}.py"));
                    }
                }
                for b in bases {
                    exact.push(format!("{b}.py"));
                    exact.push(join(&b, "__init__.py"));
                    if let Some(s) = sub {
                        exact.push(join(&b, &format!("{s}.py")));
                    }
                }
            }
            Some(Language::Rust) => {
                let segs: Vec<&str> = module.split("::").filter(|s| !s.is_empty()).collect();
                let file_name = from.rsplit('/').next().unwrap_or(from);
                let own_mod_dir = if matches!(file_name, "lib.rs" | "main.rs" | "mod.rs") {
                    dir.to_string()
                } else {
                    join(dir, stem(from))
                };
                let (base, rest): (Option<String>, &[&str]) = match segs.first() {
                    Some(&"crate") => (
                        from.find("src/").map(|i| from[..i + 3].to_string()),
                        &segs[1..],
                    ),
                    Some(&"self") => (Some(own_mod_dir.clone()), &segs[1..]),
                    Some(&"super") => {
                        let mut b = own_mod_dir.clone();
                        let mut i = 0;
                        while segs.get(i) == Some(&"super") {
                            b = dir_of(&b).to_string();
                            i += 1;
                        }
                        (Some(b), &segs[i..])
                    }
                    _ => (None, &segs[..]),
                };
                let mut add = |prefix: &[&str]| {
                    let p = prefix.join("/");
                    match &base {
                        Some(b) => {
                            exact.push(format!("{}.rs", join(b, &p)));
                            exact.push(join(&join(b, &p), "mod.rs"));
                            if p.is_empty() {
                                exact.push(join(b, "lib.rs"));
                                exact.push(join(b, "main.rs"));
                                exact.push(format!("{b}.rs"));
                            }
                        }
                        None if !p.is_empty() => {
                            suffixes.push(format!("{p}.rs"));
                            suffixes.push(format!("{p}/mod.rs"));
                        }
                        None => {}
                    }
                };
                // `a::b` may be a module path or a module's item; try both.
                add(rest);
                if !rest.is_empty() && item_path {
                    add(&rest[..rest.len() - 1]);
                }
                if base.is_none()
                    && let Some(krate) = segs.first()
                {
                    // Another crate of the workspace: `patina_core::x` → `…/core/src/x.rs`.
                    let tail = rest.get(1..).unwrap_or(&[]).join("/");
                    let k = krate.replace('_', "-");
                    for name in [k.as_str(), k.rsplit('-').next().unwrap_or(&k)] {
                        suffixes.push(join(&format!("{name}/src"), &format!("{tail}.rs")));
                        suffixes.push(format!("{name}/src/lib.rs"));
                    }
                }
            }
            Some(Language::JavaScript | Language::TypeScript | Language::Tsx) => {
                if module.starts_with('.')
                    && let Some(p) = normalize(&join(dir, module))
                {
                    exact.push(p.clone());
                    for ext in ["js", "ts", "tsx", "jsx", "mjs", "cjs", "d.ts"] {
                        exact.push(format!("{p}.{ext}"));
                        exact.push(join(&p, &format!("index.{ext}")));
                    }
                }
            }
            Some(Language::Ruby) => {
                let file = if module.ends_with(".rb") {
                    module.to_string()
                } else {
                    format!("{module}.rb")
                };
                if module.starts_with('.') {
                    // `require_relative`: a path from the requiring file's folder.
                    exact.extend(normalize(&join(dir, &file)));
                } else {
                    // `require`: a name on the load path, which holds each gem's `lib/`.
                    suffixes.push(format!("lib/{file}"));
                }
            }
            Some(Language::Lua) => {
                // `require "a.b"`: `a/b.lua` or `a/b/init.lua` on the package path.
                let p = module.replace('.', "/");
                suffixes.push(format!("{p}.lua"));
                suffixes.push(format!("{p}/init.lua"));
            }
            // `source FILE` reads FILE from the shell's working folder: the script's own folder
            // or the repository's root, as scripts are usually run (never `/etc/…` or `~/…`).
            Some(Language::Bash) if !module.starts_with(['/', '~']) => {
                exact.extend(normalize(&join(dir, module)));
                exact.extend(normalize(module));
            }
            // `-include("x.hrl")` from the file's folder or an include folder; `-include_lib(
            // "app/include/x.hrl")` from application `app`'s folder, wherever it lies;
            // `-import(money, …)`: module `money` is the file `money.erl`, wherever it lies.
            Some(Language::Erlang) if module.ends_with(".hrl") || module.ends_with(".erl") => {
                exact.extend(normalize(&join(dir, module)));
                suffixes.push(module.to_string());
                let file = module.rsplit('/').next().unwrap_or(module);
                suffixes.push(format!("include/{file}"));
            }
            // `include("money.jl")` from the including file's folder; `using Shop`, `import Shop:
            // f`: a package of the repository is its `src/Shop.jl` (others are outside).
            Some(Language::Julia) => {
                if module.ends_with(".jl") {
                    exact.extend(normalize(&join(dir, module)));
                } else if let Some(name) = module.strip_prefix('.').or(Some(module)) {
                    let name = name.trim_start_matches('.');
                    suffixes.push(format!("src/{name}.jl"));
                }
            }
            // `open Support.Money`, `module S = Support.Money`: module `Money` is the file
            // `money.ml` (or its interface), wherever it lies (a dune library wraps its folder).
            Some(Language::Erlang | Language::OCaml | Language::OCamlInterface) => {
                suffixes.extend(module_file_names(lang, module).unwrap_or_default());
            }
            // `source("R/money.R")` likewise; `library(pkg)` names a package, outside the
            // repository (the repository's own package shares one namespace, resolved by folder).
            Some(Language::R) if module.to_ascii_lowercase().ends_with(".r") => {
                exact.extend(normalize(&join(dir, module)));
                exact.extend(normalize(module));
            }
            Some(Language::Elixir) => {
                // `alias A.B` names module `A.B`; `import`/`require`/`use A` module `A`.
                let full = match imp.name.as_deref() {
                    Some("*") | None => module.to_string(),
                    Some(n) => format!("{module}.{n}"),
                };
                let p = elixir_path(&full);
                suffixes.push(format!("{p}.ex"));
                suffixes.push(format!("{p}.exs"));
            }
            // `import Acme.Billing`: GHC's file for the module is `Acme/Billing.hs`, under a
            // source folder (`src/`, `lib/`, …) the .cabal file names.
            Some(Language::Haskell) => {
                let p = module.replace('.', "/");
                suffixes.push(format!("{p}.hs"));
                suffixes.push(format!("{p}.hs-boot"));
            }
            // `@import("money.zig")` is a file beside the importing one; `@import("std")` and
            // the packages build.zig.zon names are outside the repository.
            Some(Language::Zig) if module.ends_with(".zig") => {
                exact.extend(normalize(&join(dir, module)));
            }
            // `import 'package:acme/billing.dart'` is `lib/billing.dart` of package acme;
            // `import 'util.dart'` a path from the importing file's folder; `dart:…` is the SDK.
            Some(Language::Dart) => match module.strip_prefix("package:") {
                Some(rest) => {
                    if let Some((_, path)) = rest.split_once('/') {
                        suffixes.push(format!("lib/{path}"));
                    }
                }
                None if !module.contains(':') => exact.extend(normalize(&join(dir, module))),
                None => {}
            },
            // `import "acme/money.proto"`: a path from one of protoc's include folders.
            Some(Language::Protobuf) => suffixes.push(module.to_string()),
            Some(Language::Go) => go_package = Some(module),
            // `import Shop`: SwiftPM's target `Shop`, the folder `Sources/Shop/` and all below it.
            // A module with no such folder (Foundation, a dependency) is outside the repository.
            Some(Language::Swift) if !module.contains('/') => {
                trees.push(format!("Sources/{module}/"));
            }
            Some(Language::Java) => {
                let p = module.replace('.', "/");
                match imp.name.as_deref() {
                    Some("*") | None => dirs.push(p),
                    Some(n) => suffixes.push(format!("{p}/{n}.java")),
                }
            }
            Some(Language::Kotlin | Language::Scala) => {
                let p = module.replace('.', "/");
                let extensions: &[&str] = if lang == Some(Language::Kotlin) {
                    &["kt", "kts"]
                } else {
                    &["scala", "sc"]
                };
                // `import a.b.C` is `a/b/C.kt`; `import a.b.Obj.member` and `a.b.Obj.*` reach
                // into `a/b/Obj.kt`.
                for ext in extensions {
                    suffixes.push(format!("{p}.{ext}"));
                }
                match imp.name.as_deref() {
                    Some("*") | None => dirs.push(p),
                    Some(n) => {
                        for ext in extensions {
                            suffixes.push(format!("{p}/{n}.{ext}"));
                        }
                    }
                }
            }
            Some(Language::C | Language::Cpp | Language::ObjC) => {
                if let Some(p) = normalize(&join(dir, module)) {
                    exact.push(p);
                }
                suffixes.push(module.to_string());
                // The header's sources: `foo.h` → `foo.c`, `foo.cpp`, … anywhere.
                header = Some(module);
            }
            _ => {}
        }
        // Each pattern once with its leading slash: a walk over every path of the repository
        // tests them for every import, and is no place to allocate.
        let slashed = |v: &[String]| v.iter().map(|s| format!("/{s}")).collect::<Vec<_>>();
        Reach {
            slashed_suffixes: slashed(&suffixes),
            slashed_trees: slashed(&trees),
            slashed_dirs: slashed(&dirs),
            exact,
            suffixes,
            trees,
            dirs,
            go_package,
            header,
        }
    }
}

/// The repository's paths (their places in the graph's sorted `paths`) by file name, by the name
/// of their folder (`""` for the root's files) and by stem: every pattern of a [`Reach`] but a
/// folder tree names one of these, so an import is tested against the few paths that can match
/// instead of every path — walking all 100k paths of a tree for each import of each candidate
/// took the tree's questions 0.5–1.9 s (bench/RESULTS.md, fifty-first session).
pub(super) struct PathIndex {
    by_name: HashMap<Box<str>, Vec<u32>>,
    by_dir: HashMap<Box<str>, Vec<u32>>,
    by_stem: HashMap<Box<str>, Vec<u32>>,
}

fn last_segment(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

impl PathIndex {
    fn of(paths: &[Arc<str>]) -> PathIndex {
        let mut index = PathIndex {
            by_name: HashMap::new(),
            by_dir: HashMap::new(),
            by_stem: HashMap::new(),
        };
        for (i, p) in paths.iter().enumerate() {
            let i = i as u32;
            index
                .by_name
                .entry(last_segment(p).into())
                .or_default()
                .push(i);
            index
                .by_dir
                .entry(last_segment(dir_of(p)).into())
                .or_default()
                .push(i);
            index.by_stem.entry(stem(p).into()).or_default().push(i);
        }
        index
    }

    /// The paths that may match `reach`, sorted and distinct; `None` when a folder tree is among
    /// its patterns (every path below it matches: test them all).
    fn candidates(&self, reach: &Reach) -> Option<Vec<u32>> {
        if !reach.trees.is_empty() {
            return None;
        }
        let mut out: Vec<u32> = Vec::new();
        let mut take = |map: &HashMap<Box<str>, Vec<u32>>, key: &str| {
            if let Some(ids) = map.get(key) {
                out.extend_from_slice(ids);
            }
        };
        for e in reach.exact.iter().chain(&reach.suffixes) {
            take(&self.by_name, last_segment(e));
        }
        for d in &reach.dirs {
            take(&self.by_dir, last_segment(d));
        }
        if let Some(m) = reach.go_package {
            take(&self.by_dir, last_segment(m));
        }
        if let Some(module) = reach.header {
            take(&self.by_stem, stem(module));
        }
        out.sort_unstable();
        out.dedup();
        Some(out)
    }
}

/// The files one import may reach, as patterns a path is tested against.
struct Reach<'a> {
    exact: Vec<String>,
    suffixes: Vec<String>,
    slashed_suffixes: Vec<String>,
    trees: Vec<String>,
    slashed_trees: Vec<String>,
    dirs: Vec<String>,
    slashed_dirs: Vec<String>,
    go_package: Option<&'a str>,
    header: Option<&'a str>,
}

impl Reach<'_> {
    fn reaches(&self, p: &str) -> bool {
        self.exact.iter().any(|e| p == e)
            || self
                .suffixes
                .iter()
                .zip(&self.slashed_suffixes)
                .any(|(s, slashed)| p == s || p.ends_with(slashed.as_str()))
            || self
                .trees
                .iter()
                .zip(&self.slashed_trees)
                .any(|(t, slashed)| p.starts_with(t.as_str()) || p.contains(slashed.as_str()))
            || self.dirs.iter().zip(&self.slashed_dirs).any(|(d, slashed)| {
                let pd = dir_of(p);
                pd == d || pd.ends_with(slashed.as_str())
            })
            // A Go package is its directory: `github.com/o/r/util` → `util/*.go`.
            || self.go_package.is_some_and(|m| {
                let pd = dir_of(p);
                p.ends_with(".go")
                    && !pd.is_empty()
                    && (m == pd
                        || (m.len() > pd.len()
                            && m.ends_with(pd)
                            && m.as_bytes()[m.len() - pd.len() - 1] == b'/'))
            })
            || self.header.is_some_and(|module| {
                let name = p.rsplit('/').next().unwrap_or(p);
                stem(p) == stem(module) && name != module.rsplit('/').next().unwrap_or(module)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reach<'a>(
        exact: &[&str],
        suffixes: &[&str],
        dirs: &[&str],
        go_package: Option<&'a str>,
        header: Option<&'a str>,
    ) -> Reach<'a> {
        let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let slashed = |v: &[String]| v.iter().map(|s| format!("/{s}")).collect::<Vec<_>>();
        let (suffixes, dirs) = (owned(suffixes), owned(dirs));
        Reach {
            slashed_suffixes: slashed(&suffixes),
            slashed_trees: Vec::new(),
            slashed_dirs: slashed(&dirs),
            exact: owned(exact),
            suffixes,
            trees: Vec::new(),
            dirs,
            go_package,
            header,
        }
    }

    #[test]
    fn the_path_index_finds_every_path_a_walk_of_all_of_them_finds() {
        let paths: Vec<Arc<str>> = [
            "README.md",
            "setup.py",
            "pkg/__init__.py",
            "pkg/util.py",
            "pkg/sub/util.py",
            "vendor/pkg/util.py",
            "cmd/tool/main.go",
            "internal/util/strings.go",
            "internal/util/numbers.go",
            "src/util/strings.c",
            "include/util/strings.h",
            "lib/util.rb",
        ]
        .into_iter()
        .map(Arc::from)
        .collect::<Vec<_>>();
        let index = PathIndex::of(&paths);
        let cases = [
            reach(
                &["pkg/util.py", "pkg/util/__init__.py"],
                &[],
                &[],
                None,
                None,
            ),
            reach(&[], &["util.py", "sub/util.py"], &[], None, None),
            reach(&[], &[], &["pkg", ""], None, None),
            reach(&[], &[], &[], Some("github.com/o/r/internal/util"), None),
            reach(&[], &[], &[], None, Some("util/strings.h")),
            reach(&["nowhere.py"], &["lib/util.rb"], &["cmd/tool"], None, None),
        ];
        for (i, r) in cases.iter().enumerate() {
            let walked: Vec<&str> = paths
                .iter()
                .filter(|p| r.reaches(p))
                .map(|p| &**p)
                .collect();
            let indexed: Vec<&str> = index
                .candidates(r)
                .expect("no folder tree")
                .into_iter()
                .map(|j| &*paths[j as usize])
                .filter(|p| r.reaches(p))
                .collect();
            assert_eq!(indexed, walked, "case {i}");
            assert!(!walked.is_empty() || i == 5, "case {i} reaches something");
        }
    }
}
