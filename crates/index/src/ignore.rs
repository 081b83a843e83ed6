//! The ignore rules of a repository: the walk's (indexing and watching) and, rebuilt for one path,
//! the file server's. `.gitignore` files, `.git/info/exclude`, `.ignore` and Patina's own
//! `.patinaignore` (same syntax, highest precedence). `.git` itself is never listed.

use std::path::{Component, Path};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::{Match, WalkBuilder};

/// The rules every listing of a repository follows (indexing and watching alike). Starting below
/// the root still applies the ignore files of the parent directories.
pub(crate) fn walker(start: &Path) -> WalkBuilder {
    let mut b = WalkBuilder::new(start);
    b.hidden(false)
        .parents(true)
        .follow_links(false)
        .same_file_system(true)
        .require_git(false)
        .add_custom_ignore_filename(".patinaignore")
        .filter_entry(|e| e.file_name() != ".git");
    b
}

/// Do the repository's ignore rules exclude `rel` (or a directory above it)? The same rules as
/// [`walker`], for one path: per directory `.patinaignore` beats `.ignore`, which beats
/// `.gitignore` (and `.git/info/exclude`); within each kind the deepest file that matches decides.
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
    let mut dir = root.to_path_buf();
    for (i, c) in comps.iter().enumerate() {
        git.extend(matcher(&dir, &dir.join(".gitignore")));
        dot.extend(matcher(&dir, &dir.join(".ignore")));
        custom.extend(matcher(&dir, &dir.join(".patinaignore")));
        let path = dir.join(c);
        let path_is_dir = i + 1 < comps.len() || is_dir;
        for class in [&custom, &dot, &git] {
            match class
                .iter()
                .rev()
                .map(|m| m.matched(&path, path_is_dir))
                .find(|m| !m.is_none())
            {
                Some(Match::Ignore(_)) => return true,
                Some(_) => break,
                None => {}
            }
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
}
