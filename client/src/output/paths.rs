//! A hit's path as a person sees it: relative to the working directory, control characters
//! escaped.

use std::path::{Component, Path, PathBuf};

use patina_core::paths::printable_path;
use patina_proto::v1 as pb;

/// `target` relative to `base` (`../x/y` when needed), or absolute when they share nothing.
fn relative(target: &Path, base: &Path) -> PathBuf {
    let t: Vec<Component> = target.components().collect();
    let b: Vec<Component> = base.components().collect();
    let common = t.iter().zip(&b).take_while(|(x, y)| x == y).count();
    if common <= 1 {
        return target.to_path_buf();
    }
    let mut out = PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    for c in &t[common..] {
        out.push(c.as_os_str());
    }
    out
}

pub(crate) fn display_path(hit: &pb::Hit, cwd: &Path) -> String {
    // A session note is not a file: its path is its reference, `session:<name>#<n>`.
    if hit.note.is_some() {
        return hit.path.clone();
    }
    // A published repository's hit (`--org`): `owner/name@commit:path`, no local file.
    if let Some(p) = &hit.published {
        let commit: String = p.commit.chars().take(10).collect();
        return format!("{}@{commit}:{}", p.name, hit.path);
    }
    let abs = Path::new(&hit.repo_root).join(&hit.path);
    relative(&abs, cwd).to_string_lossy().into_owned()
}

/// A hit's path for a human's terminal: [`display_path`] with control characters escaped, so a
/// file name with a newline stays on its line.
pub(crate) fn shown_path(hit: &pb::Hit, cwd: &Path) -> String {
    printable_path(&display_path(hit, cwd)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths() {
        assert_eq!(
            relative(Path::new("/r/src/a.rs"), Path::new("/r")),
            PathBuf::from("src/a.rs")
        );
        assert_eq!(
            relative(Path::new("/r/src/a.rs"), Path::new("/r/tests")),
            PathBuf::from("../src/a.rs")
        );
        assert_eq!(
            relative(Path::new("/r/a.rs"), Path::new("/other")),
            PathBuf::from("/r/a.rs")
        );
    }
}
