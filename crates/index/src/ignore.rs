//! The ignore rules of a repository, one source for every reader: the walk that decides what is
//! indexed and watched, and the file server that decides what is served. Built on the `ignore`
//! crate: `.gitignore` files (and the parents' ones), `.git/info/exclude`, the user's global
//! excludes (`core.excludesFile`, else `$XDG_CONFIG_HOME/git/ignore`), `.ignore` and Patina's own
//! `.patinaignore` (same syntax, highest precedence). `.git` itself is never listed.

use std::path::{Component, Path};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::{Match, WalkBuilder};

/// Patina's own ignore file, in every directory (gitignore syntax, highest precedence).
pub const PATINA_IGNORE: &str = ".patinaignore";

/// The rules every listing of a repository follows (indexing and watching alike). Starting below
/// the root still applies the ignore files of the parent directories. The global excludes are on
/// (the builder's default).
pub(crate) fn walker(start: &Path) -> WalkBuilder {
    let mut b = WalkBuilder::new(start);
    b.hidden(false)
        .parents(true)
        .follow_links(false)
        .same_file_system(true)
        .require_git(false)
        .git_global(true)
        .add_custom_ignore_filename(PATINA_IGNORE)
        .filter_entry(|e| e.file_name() != ".git");
    b
}

/// Do the repository's ignore rules exclude `rel` (or a directory above it)? The same rules as
/// the walk (`walker`), for one path: per directory `.patinaignore` beats `.ignore`, which beats
/// `.gitignore` (and `.git/info/exclude`); within each kind the deepest file that matches decides;
/// the user's global excludes apply last, to what no repository file decided.
pub fn is_ignored(root: &Path, rel: &Path, is_dir: bool) -> bool {
    let comps: Vec<&std::ffi::OsStr> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s),
            _ => None,
        })
        .collect();
    // Matchers by precedence class, shallowest first.
    let mut custom: Vec<Gitignore> = Vec::new();
    let mut dot: Vec<Gitignore> = Vec::new();
    let mut git: Vec<Gitignore> = Vec::new();
    git.extend(matcher(root, &root.join(".git/info/exclude")));
    // Read at every call, as every walk does: an edit of the global excludes applies at once.
    let (global, _) = Gitignore::global();
    let mut dir = root.to_path_buf();
    for (i, c) in comps.iter().enumerate() {
        git.extend(matcher(&dir, &dir.join(".gitignore")));
        dot.extend(matcher(&dir, &dir.join(".ignore")));
        custom.extend(matcher(&dir, &dir.join(PATINA_IGNORE)));
        let path = dir.join(c);
        let path_is_dir = i + 1 < comps.len() || is_dir;
        let mut decided = false;
        for class in [&custom, &dot, &git] {
            match class
                .iter()
                .rev()
                .map(|m| m.matched(&path, path_is_dir))
                .find(|m| !m.is_none())
            {
                Some(Match::Ignore(_)) => return true,
                Some(_) => {
                    decided = true;
                    break;
                }
                None => {}
            }
        }
        if !decided && global.matched(&path, path_is_dir).is_ignore() {
            return true;
        }
        dir = path;
    }
    false
}

fn matcher(dir: &Path, file: &Path) -> Option<Gitignore> {
    if !file.is_file() {
        return None;
    }
    let mut b = GitignoreBuilder::new(dir);
    b.add(file);
    b.build().ok().filter(|g| !g.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignore_rules_apply_by_depth_and_kind() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join(".gitignore"), "target/\n*.log\n").unwrap();
        std::fs::write(root.join("a/.gitignore"), "!keep.log\n").unwrap();
        std::fs::write(root.join(".patinaignore"), "vendor\n").unwrap();
        assert!(is_ignored(root, Path::new("target/debug/x"), false));
        assert!(is_ignored(root, Path::new("x.log"), false));
        assert!(!is_ignored(root, Path::new("a/keep.log"), false));
        assert!(is_ignored(root, Path::new("a/b/other.log"), false));
        assert!(is_ignored(root, Path::new("vendor/lib.rs"), false));
        assert!(!is_ignored(root, Path::new("a/b/c.rs"), false));
    }

    #[test]
    fn the_walk_and_is_ignored_agree() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for d in ["a/b", "target/x", "docs/private", "keep"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join(".gitignore"), "target/\n*.log\n").unwrap();
        std::fs::write(root.join("a/.gitignore"), "!keep.log\n").unwrap();
        std::fs::write(root.join(".ignore"), "docs/private\n").unwrap();
        std::fs::write(root.join(".patinaignore"), "b\n").unwrap();
        let files = [
            "x.rs",
            "x.log",
            "a/keep.log",
            "a/other.log",
            "a/b/c.rs",
            "target/x/y.rs",
            "docs/private/p.md",
            "docs/public.md",
            "keep/k.rs",
        ];
        for f in files {
            std::fs::write(root.join(f), "x").unwrap();
        }
        let walked: Vec<String> =
            crate::walk::walk(root, &std::sync::atomic::AtomicBool::new(false))
                .into_iter()
                .map(|e| e.rel)
                .collect();
        for f in files {
            assert_eq!(
                walked.contains(&f.to_string()),
                !is_ignored(root, Path::new(f), false),
                "{f}: walked {walked:?}"
            );
        }
    }
}
