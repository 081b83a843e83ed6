//! Which repository a command is about and paths as the daemon wants them: a repository argument
//! that names a directory becomes its absolute path, the current repository is found from the
//! working directory, and file or directory arguments are made relative to its root.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// A repository argument that names an existing directory is sent as an absolute path.
pub(crate) fn repo_key(arg: &str) -> String {
    match std::fs::canonicalize(arg) {
        Ok(p) if p.is_dir() => p.to_string_lossy().into_owned(),
        _ => arg.to_string(),
    }
}

/// `--near DIR` as the daemon wants it: relative to the repository root. A directory given
/// relative to the working directory (or absolute) inside the current repository is rewritten;
/// anything else is passed as written (already relative to the root).
pub(crate) fn repo_relative(dir: &str, cwd: &Path, root: Option<&Path>) -> String {
    let Some(root) = root else {
        return dir.to_string();
    };
    let abs = cwd.join(dir);
    let abs = abs.canonicalize().unwrap_or(abs);
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    match abs.strip_prefix(&root) {
        Ok(rel) if abs.exists() => rel.to_string_lossy().into_owned(),
        _ => dir.to_string(),
    }
}

/// The root of the git repository containing `dir`, if any.
pub(crate) fn git_root(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

/// The repository a graph command is about (`--repo`, else the current one, else all) and a
/// path argument made relative to its root when it names a file on disk.
pub(crate) fn graph_scope(repo: Option<&str>, target: &str) -> Result<(Vec<String>, String)> {
    let cwd = std::env::current_dir().context("no current directory")?;
    let here = git_root(&cwd);
    let repos = match (repo, &here) {
        (Some(r), _) => vec![repo_key(r)],
        (None, Some(root)) => vec![root.to_string_lossy().into_owned()],
        (None, None) => Vec::new(),
    };
    let target = if repo.is_none() {
        repo_relative(target, &cwd, here.as_deref())
    } else {
        target.to_string()
    };
    Ok((repos, target))
}

/// The repository a history command is about: `--repo`, else the one containing the current
/// directory; and a file argument as the daemon wants it (relative to that repository's root).
pub(crate) fn history_scope(
    repo: Option<&str>,
    file: Option<&str>,
) -> Result<(String, Option<String>)> {
    let cwd = std::env::current_dir().context("no current directory")?;
    let here = git_root(&cwd);
    let key = match (repo, &here) {
        (Some(r), _) => repo_key(r),
        (None, Some(root)) => root.to_string_lossy().into_owned(),
        (None, None) => String::new(),
    };
    let file = file.map(|f| {
        let abs = cwd.join(f);
        match (abs.canonicalize(), git_root(&abs).or(here.clone())) {
            (Ok(abs), Some(root)) => {
                let root = root.canonicalize().unwrap_or(root);
                abs.strip_prefix(&root)
                    .map(|r| r.to_string_lossy().into_owned())
                    .unwrap_or_else(|_| f.to_string())
            }
            _ => f.trim_start_matches("./").to_string(),
        }
    });
    Ok((key, file))
}
