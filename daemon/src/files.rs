//! Reading files of registered repositories for clients, confined to the repository: no absolute
//! paths, no `..`, no symlinks that lead outside the root.

use std::path::{Component, Path};

use anyhow::Result;

use crate::index::chunk::Language;
use crate::registry::UserError;
use crate::repo::Repo;

/// Files larger than this are served truncated.
const MAX_SERVE_BYTES: usize = 4 * 1024 * 1024;

pub(crate) struct FileSlice {
    pub path: String,
    pub language: &'static str,
    pub total_lines: u32,
    pub start_line: u32,
    pub end_line: u32,
    pub text: String,
    pub truncated: bool,
}

pub(crate) fn read_slice(repo: &Repo, rel: &str, start: u32, end: u32) -> Result<FileSlice> {
    let rel_path = Path::new(rel);
    if rel.is_empty()
        || rel_path.is_absolute()
        || rel_path
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(
            UserError::Invalid(format!("'{rel}' is not a path inside the repository")).into(),
        );
    }
    let joined = repo.root.join(rel_path);
    let real = std::fs::canonicalize(&joined)
        .map_err(|_| UserError::NotFound(format!("no file '{rel}' in {}", repo.root.display())))?;
    let root = std::fs::canonicalize(&repo.root)?;
    if !real.starts_with(&root) || real.components().any(|c| c.as_os_str() == ".git") {
        return Err(UserError::Invalid(format!("'{rel}' resolves outside the repository")).into());
    }
    if !real.is_file() {
        return Err(UserError::Invalid(format!("'{rel}' is not a regular file")).into());
    }
    let bytes = std::fs::read(&real)?;
    let truncated_bytes = bytes.len() > MAX_SERVE_BYTES;
    let bytes = &bytes[..bytes.len().min(MAX_SERVE_BYTES)];
    if bytes[..bytes.len().min(8000)].contains(&0) {
        return Err(UserError::Invalid(format!("'{rel}' is a binary file")).into());
    }
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    let total = lines.len() as u32;
    let start = start.max(1);
    let end = if end == 0 { total } else { end.min(total) };
    let body = if start <= end && total > 0 {
        lines[(start - 1) as usize..end as usize].join("\n")
    } else {
        String::new()
    };
    Ok(FileSlice {
        path: rel.to_string(),
        language: Language::from_path(rel_path).name(),
        total_lines: total,
        start_line: start,
        end_line: end,
        text: body,
        truncated: truncated_bytes,
    })
}
