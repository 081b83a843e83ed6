//! Module roots: the file that stands for its folder — what a language loads for it (`mod.rs`,
//! `lib.rs`, `__init__.py`, `index.ts`) or, by the graph, the file that ties the folder's files
//! together. A question about how the folder's concept works ("how does the searcher work") is
//! answered first by that file: it names the parts and how they fit.

use std::collections::HashSet;
use std::sync::Arc;

use super::{GraphTable, dir_of};

/// A folder's root by the language's convention: Rust `mod.rs`, `lib.rs`, `main.rs`; Python
/// `__init__.py`; JS/TS `index.*`; a Go file named after its folder (the package's main file) or
/// its `doc.go`.
pub fn conventional_root(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    if matches!(
        name,
        "mod.rs" | "lib.rs" | "main.rs" | "__init__.py" | "doc.go"
    ) {
        return true;
    }
    let (s, ext) = name.rsplit_once('.').unwrap_or((name, ""));
    match ext {
        "js" | "ts" | "tsx" | "jsx" | "mjs" | "cjs" => s == "index" || s == "index.d",
        "go" => dir_of(path).rsplit('/').next() == Some(s),
        _ => false,
    }
}

/// A file the graph counts as a folder's root imports at least this many of the folder's files, or
/// is imported by that many, and at least half of them either way.
const MIN_TIES: usize = 2;

impl GraphTable {
    /// Whether `path` ties its folder together in the graph: it imports most of the folder's
    /// other files (a facade), or most of them import it (a shared core). The folder's files are
    /// the others beside it and the conventional roots of its subfolders.
    pub fn ties_its_folder(&self, path: &str) -> bool {
        if let Some(&known) = self.ties.lock().expect("ties memo").get(path) {
            return known;
        }
        let ties = self.compute_ties_its_folder(path);
        self.ties
            .lock()
            .expect("ties memo")
            .insert(Arc::from(path), ties);
        ties
    }

    fn compute_ties_its_folder(&self, path: &str) -> bool {
        let dir = dir_of(path);
        // Every member lies under the folder, a contiguous run of the sorted paths: walking every
        // path (and hashing each into the facts) for each candidate cost the 100k-file tree's
        // questions ~40 % of their time (bench/RESULTS.md, fifty-first session).
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let start = self.paths.partition_point(|p| **p < *prefix);
        let members: Vec<&Arc<str>> = self.paths[start..]
            .iter()
            .take_while(|p| p.starts_with(prefix.as_str()))
            .filter(|p| ***p != *path)
            .filter(|p| {
                let d = dir_of(p);
                d == dir || (dir_of(d) == dir && !d.is_empty() && conventional_root(p))
            })
            .filter(|p| self.facts.contains_key(&***p))
            .collect();
        let enough = |n: usize| n >= MIN_TIES && 2 * n >= members.len();
        if !enough(members.len()) {
            return false;
        }
        let imported: HashSet<Arc<str>> = self
            .imported_files(path)
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        if enough(members.iter().filter(|m| imported.contains(**m)).count()) {
            return true;
        }
        // Each member asked of this one file: resolving every member's imports against every
        // path cost a question naming tokio's `tests` folder 0.3–0.7 s (bench/RESULTS.md,
        // forty-fourth session).
        let importers = members
            .iter()
            .filter(|m| self.imports_file(m, path))
            .count();
        enough(importers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conventional_roots() {
        for root in [
            "src/searcher/mod.rs",
            "crates/searcher/src/lib.rs",
            "pkg/searcher/__init__.py",
            "web/searcher/index.ts",
            "web/searcher/index.js",
            "internal/searcher/searcher.go",
            "internal/searcher/doc.go",
        ] {
            assert!(conventional_root(root), "{root}");
        }
        for other in [
            "src/searcher/scorer.rs",
            "pkg/searcher/core.py",
            "web/searcher/indexer.ts",
            "internal/searcher/scorer.go",
            "searcher.go",
            "README.md",
        ] {
            assert!(!conventional_root(other), "{other}");
        }
    }
}
