//! Serving files of registered repositories to clients, confined to the repository: no absolute
//! paths, no `..`, no symlinks that lead outside the root, nothing the repository's ignore rules
//! exclude (`patina_index::ignore`: the same rules as the indexer's walk — `.gitignore`, `.ignore`,
//! `.patinaignore`, `.git/info/exclude`, the user's global git excludes) and no well-known
//! secret files (`.env`, keys, certificates, `.git/`). `Files.GetFile` reads slices of files;
//! `Files.ExploreStructure` describes a directory from the index's file records.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result};
use patina_core::{Language, PathFilter, UserError, secret_reason};
use patina_index::ignore::is_ignored;

use crate::state::repo::Repo;

mod lines;

/// The most text one answer carries: a longer range is served in pages (`next_line`), well
/// inside the transport's 4 MiB message limit.
const MAX_SERVE_BYTES: usize = 1024 * 1024;

pub(crate) struct FileSlice {
    pub path: String,
    pub language: &'static str,
    /// Every line of the file, counted to its end.
    pub total_lines: u32,
    pub total_bytes: u64,
    pub start_line: u32,
    pub end_line: u32,
    pub text: String,
    /// The answer stops before the end of the range asked for ([`MAX_SERVE_BYTES`]).
    pub truncated: bool,
    /// `end_line` alone is longer than [`MAX_SERVE_BYTES`]: only its first bytes are here.
    pub line_cut: bool,
    /// Where the rest of the range asked for continues (0 = nothing more).
    pub next_line: u32,
}

/// Resolve a client-supplied path, relative to the repository root, to a real path inside it.
/// Refuses (InvalidArgument) absolute paths, `..`, secret and ignored paths and anything whose
/// real location (after symlinks) is outside the root; a missing path is NotFound. `""` and `.`
/// are the root itself when `allow_root`. Returns the real root, the real path's place beneath it
/// (where a symlink inside the repository leads) and the normalised form of `rel`. What is then
/// read is opened beneath that root with `patina_confined`, following no link: if the tree
/// changes after these checks, the read is refused, never served from outside.
fn confine(repo: &Repo, rel: &str, allow_root: bool) -> Result<Confined> {
    let invalid = |m: String| -> anyhow::Error { UserError::Invalid(m).into() };
    let rel_path = Path::new(rel);
    if rel_path.is_absolute()
        || rel_path
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(invalid(format!(
            "'{rel}' is not a path inside the repository: give it relative to the repository \
             root, without '..'"
        )));
    }
    let norm: Vec<&str> = rel_path
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => s.to_str(),
            _ => None,
        })
        .collect();
    let norm = norm.join("/");
    if norm.is_empty() && !allow_root {
        return Err(invalid(format!(
            "'{rel}' is not a path inside the repository"
        )));
    }
    if let Some(why) = secret_reason(&norm) {
        return Err(invalid(format!(
            "'{rel}' is refused: it looks like {why}, and Patina never serves secret files"
        )));
    }
    let root = std::fs::canonicalize(repo.root())?;
    let is_dir = repo.root().join(&norm).is_dir();
    if !norm.is_empty() && is_ignored(&root, Path::new(&norm), is_dir) {
        return Err(ignored_error(rel));
    }
    let real = std::fs::canonicalize(repo.root().join(&norm)).map_err(|_| {
        UserError::NotFound(format!("no file '{rel}' in {}", repo.root().display()))
    })?;
    let Ok(real_rel) = real.strip_prefix(&root) else {
        return Err(invalid(format!("'{rel}' resolves outside the repository")));
    };
    let real_rel = real_rel
        .to_string_lossy()
        .replace(std::path::MAIN_SEPARATOR, "/");
    if real_rel != norm {
        // A symlink inside the repository: its target must pass the same checks.
        if let Some(why) = secret_reason(&real_rel) {
            return Err(invalid(format!(
                "'{rel}' is refused: it leads to {why}, and Patina never serves secret files"
            )));
        }
        if !real_rel.is_empty() && is_ignored(&root, Path::new(&real_rel), real.is_dir()) {
            return Err(ignored_error(rel));
        }
    }
    Ok(Confined {
        root,
        real,
        real_rel,
        norm,
    })
}

/// A path [`confine`] let through.
struct Confined {
    /// The repository's root, canonical.
    root: PathBuf,
    /// The real path (symlinks inside the repository resolved).
    real: PathBuf,
    /// `real` relative to `root`, '/'-separated ("" for the root).
    real_rel: String,
    /// The path asked for, normalised.
    norm: String,
}

/// What the confined reader refused, as the client should hear it.
fn refused(rel: &str, why: patina_confined::Refusal) -> anyhow::Error {
    use patina_confined::Refusal;
    match why {
        Refusal::NotFound => {
            UserError::NotFound(format!("no file '{rel}' in the repository")).into()
        }
        Refusal::NotRegular => UserError::Invalid(format!("'{rel}' is not a regular file")).into(),
        Refusal::Symlink => UserError::Invalid(format!(
            "'{rel}' was replaced by a symbolic link while it was read; Patina follows no link \
             it has not checked, so nothing was served (ask again once the file is settled)"
        ))
        .into(),
        Refusal::TooLong => {
            UserError::Invalid(format!("'{rel}' is a path too long for the system to open")).into()
        }
        Refusal::NotRelative => {
            UserError::Invalid(format!("'{rel}' is not a path inside the repository")).into()
        }
        Refusal::Io(e) => anyhow::Error::from(e).context(format!("reading '{rel}'")),
    }
}

fn ignored_error(rel: &str) -> anyhow::Error {
    UserError::Invalid(format!(
        "'{rel}' is refused: the repository's ignore rules (.gitignore, .ignore, .patinaignore, \
         the global git excludes) exclude it, and Patina does not serve ignored files"
    ))
    .into()
}

/// Lines `start..=end` of a file (1-based; `start` 0 is 1, `end` 0 the last line). A range that
/// ends before it starts is refused (InvalidArgument), not answered with nothing. The file is read
/// once, from a descriptor opened beneath the repository root following no link
/// (`patina_confined`); every line is counted, and at most [`MAX_SERVE_BYTES`] of the range come
/// back, whole lines but for a single line longer than that (`line_cut`), with `next_line` where
/// the rest continues.
pub(crate) fn read_slice(repo: &Repo, rel: &str, start: u32, end: u32) -> Result<FileSlice> {
    if end != 0 && start > end {
        return Err(UserError::Invalid(format!(
            "line range {start}-{end} ends before it starts: give start <= end (0 for the last line)"
        ))
        .into());
    }
    let rel_path = Path::new(rel);
    let place = confine(repo, rel, false)?;
    if place.real_rel.is_empty() {
        return Err(UserError::Invalid(format!("'{rel}' is not a regular file")).into());
    }
    let (file, _) = patina_confined::open(&place.root, Path::new(&place.real_rel))
        .map_err(|why| refused(rel, why))?;
    let start = start.max(1);
    let asked_end = if end == 0 { u32::MAX } else { end };
    let sliced = lines::slice(
        std::io::BufReader::new(file),
        start,
        asked_end,
        MAX_SERVE_BYTES,
    )
    .with_context(|| format!("reading '{rel}'"))?;
    if sliced.binary {
        return Err(UserError::Invalid(format!("'{rel}' is a binary file")).into());
    }
    let total = sliced.total_lines;
    let mut text = String::from_utf8_lossy(&sliced.body).into_owned();
    if sliced.line_cut {
        // A cut inside a character leaves a replacement mark at the end: drop it.
        while text.ends_with('\u{fffd}') {
            text.pop();
        }
    }
    // A repository that masks personal data is served masked, line for line.
    if let Some(s) = repo.index().scrubber()
        && let std::borrow::Cow::Owned(masked) = s.scrub(&text)
    {
        text = masked;
    }
    let clamped_end = asked_end.min(total);
    let (end_line, next_line) = if start > clamped_end {
        (clamped_end, 0)
    } else if sliced.line_cut || sliced.last < clamped_end {
        let last = sliced.last.max(start);
        (last, if last < clamped_end { last + 1 } else { 0 })
    } else {
        (clamped_end, 0)
    };
    Ok(FileSlice {
        path: rel.to_string(),
        language: Language::detect(rel_path, &String::from_utf8_lossy(&sliced.head)).name(),
        total_lines: total,
        total_bytes: sliced.total_bytes,
        start_line: start,
        end_line,
        text,
        truncated: sliced.line_cut || next_line != 0,
        line_cut: sliced.line_cut,
        next_line,
    })
}

/// What `explore` is asked.
pub(crate) struct ExploreOptions {
    /// Directory relative to the root; "" or "." = the root.
    pub path: String,
    /// Gitignore-style globs (as in queries); files must match one when any is given.
    pub globs: Vec<String>,
    /// Levels below `path` to list (0 = default 2).
    pub max_depth: u32,
    /// Directories + files listed at most (0 = default 500).
    pub max_entries: usize,
}

pub(crate) struct DirSummary {
    pub path: String,
    /// Files and lines in the whole subtree (after the globs).
    pub files: u64,
    pub lines: u64,
}

pub(crate) struct FileSummary {
    pub path: String,
    pub language: &'static str,
    pub lines: u32,
    pub bytes: u64,
    /// Why the indexer skipped it ("binary", "too_large", …); "" when indexed.
    pub skipped: &'static str,
}

pub(crate) struct KeyFile {
    pub path: String,
    /// "manifest", "readme", "docs" or "entry_point".
    pub role: &'static str,
}

pub(crate) struct Structure {
    pub path: String,
    pub dirs: Vec<DirSummary>,
    pub files: Vec<FileSummary>,
    pub key_files: Vec<KeyFile>,
    pub total_files: u64,
    pub total_lines: u64,
    /// Files per language in the subtree.
    pub languages: BTreeMap<String, u64>,
    /// Entries beyond `max_entries` or `max_depth` were left out.
    pub truncated: bool,
}

const DEFAULT_DEPTH: u32 = 2;
const MAX_DEPTH: u32 = 64;
const DEFAULT_ENTRIES: usize = 500;
const MAX_ENTRIES: usize = 5000;
const MAX_KEY_FILES: usize = 50;

/// The structure of a directory of `repo` as indexed: subdirectories with file and line counts,
/// files with language and line counts, and the key files (manifests, READMEs, entry points).
/// Confined like `read_slice`; secret files are left out.
pub(crate) fn explore(repo: &Repo, opts: &ExploreOptions) -> Result<Structure> {
    let Confined {
        real, norm: prefix, ..
    } = confine(repo, &opts.path, true)?;
    if !real.is_dir() {
        return Err(UserError::Invalid(format!(
            "'{}' is a file, not a directory; read it with get_file",
            opts.path
        ))
        .into());
    }
    let filter = if opts.globs.iter().any(|g| !g.trim().is_empty()) {
        Some(PathFilter::new(&opts.globs)?)
    } else {
        None
    };
    let max_depth = match opts.max_depth {
        0 => DEFAULT_DEPTH,
        d => d.min(MAX_DEPTH),
    } as usize;
    let max_entries = match opts.max_entries {
        0 => DEFAULT_ENTRIES,
        n => n.min(MAX_ENTRIES),
    };
    let mut dirs: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut files = Vec::new();
    let mut keys = Vec::new();
    let mut languages: BTreeMap<String, u64> = BTreeMap::new();
    let (mut total_files, mut total_lines) = (0u64, 0u64);
    let mut truncated = false;
    for (path, rec) in repo.index().file_records()? {
        let below = if prefix.is_empty() {
            path.as_str()
        } else {
            match path
                .strip_prefix(prefix.as_str())
                .and_then(|p| p.strip_prefix('/'))
            {
                Some(p) => p,
                None => continue,
            }
        };
        if secret_reason(&path).is_some() || filter.as_ref().is_some_and(|f| !f.matches(&path)) {
            continue;
        }
        let lines = rec.lines as u64;
        total_files += 1;
        total_lines += lines;
        let language = rec.language.map_or("", |l| l.name());
        if !language.is_empty() {
            *languages.entry(language.to_string()).or_insert(0) += 1;
        }
        let parts: Vec<&str> = below.split('/').collect();
        for depth in 1..parts.len() {
            let e = dirs
                .entry(join(&prefix, &parts[..depth].join("/")))
                .or_insert((0, 0));
            e.0 += 1;
            e.1 += lines;
        }
        if parts.len() <= max_depth {
            files.push(FileSummary {
                path: path.clone(),
                language,
                lines: rec.lines,
                bytes: rec.size,
                skipped: rec.skipped.map_or("", |s| s.name()),
            });
        } else {
            truncated = true;
        }
        if let Some(role) = key_role(&path) {
            keys.push((parts.len(), role, path.clone()));
        }
    }
    let depth_of = |p: &str| {
        p.strip_prefix(prefix.as_str())
            .unwrap_or(p)
            .trim_start_matches('/')
            .split('/')
            .count()
    };
    let mut dirs: Vec<DirSummary> = dirs
        .into_iter()
        .filter(|(p, _)| {
            let keep = depth_of(p) <= max_depth;
            truncated |= !keep;
            keep
        })
        .map(|(path, (files, lines))| DirSummary { path, files, lines })
        .collect();
    if dirs.len() + files.len() > max_entries {
        truncated = true;
        dirs.truncate(max_entries);
        files.truncate(max_entries - dirs.len());
    }
    keys.sort_by(|a, b| (a.0, role_rank(a.1), &a.2).cmp(&(b.0, role_rank(b.1), &b.2)));
    let key_files = keys
        .into_iter()
        .take(MAX_KEY_FILES)
        .map(|(_, role, path)| KeyFile { path, role })
        .collect();
    Ok(Structure {
        path: prefix,
        dirs,
        files,
        key_files,
        total_files,
        total_lines,
        languages,
        truncated,
    })
}

fn join(prefix: &str, rest: &str) -> String {
    if prefix.is_empty() {
        rest.to_string()
    } else {
        format!("{prefix}/{rest}")
    }
}

fn role_rank(role: &str) -> u8 {
    match role {
        "readme" => 0,
        "manifest" => 1,
        "entry_point" => 2,
        _ => 3,
    }
}

/// What makes a file a key file of its project, if anything.
fn key_role(path: &str) -> Option<&'static str> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let lower = name.to_ascii_lowercase();
    const MANIFESTS: &[&str] = &[
        "cargo.toml",
        "package.json",
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "requirements.txt",
        "pipfile",
        "go.mod",
        "pom.xml",
        "build.gradle",
        "build.gradle.kts",
        "settings.gradle",
        "cmakelists.txt",
        "makefile",
        "meson.build",
        "gemfile",
        "composer.json",
        "mix.exs",
        "pubspec.yaml",
        "package.swift",
        "description",
        "rebar.config",
        "podfile",
        "project.toml",
        "dune-project",
        "flake.nix",
        "deno.json",
        "build.bazel",
        "module.bazel",
        "workspace",
        "justfile",
        "dockerfile",
    ];
    const ENTRY_POINTS: &[&str] = &[
        "main.rs",
        "lib.rs",
        "main.go",
        "main.py",
        "__main__.py",
        "app.py",
        "manage.py",
        "index.js",
        "index.ts",
        "index.tsx",
        "index.mjs",
        "main.js",
        "main.ts",
        "server.js",
        "server.ts",
        "app.js",
        "app.ts",
        "main.c",
        "main.cc",
        "main.cpp",
        "main.java",
        "program.cs",
    ];
    const DOCS: &[&str] = &[
        "architecture.md",
        "contributing.md",
        "changelog.md",
        "design.md",
        "agents.md",
        "claude.md",
    ];
    if lower.starts_with("readme") {
        Some("readme")
    } else if MANIFESTS.contains(&lower.as_str())
        || [".csproj", ".sln", ".cabal", ".gemspec", ".podspec", ".opam"]
            .iter()
            .any(|e| lower.ends_with(e))
    {
        Some("manifest")
    } else if ENTRY_POINTS.contains(&lower.as_str()) {
        Some("entry_point")
    } else if DOCS.contains(&lower.as_str()) {
        Some("docs")
    } else {
        None
    }
}
