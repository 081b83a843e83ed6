//! Which source files of a tree are cut into line windows instead of definitions: the files a
//! grammar could not read (or that define nothing, like a script of top-level commands), per
//! language. A grammar that lags its language shows here first (Kotlin's context parameters did).
//!
//! ```sh
//! cargo run --release -p patina-chunk --example fallbacks -- DIR [DIR …]
//! ```
//!
//! Prints one `FALLBACK <language> <path>` line per file of more than five lines whose chunks are
//! all windows, then per language the files read and how many of them fell back.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use patina_chunk::{ChunkKind, ChunkOptions, Language, chunk_file};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.file_name().is_some_and(|n| n == ".git") || path.is_symlink() {
            continue;
        }
        if path.is_dir() {
            walk(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn main() {
    let mut stats: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for root in std::env::args().skip(1) {
        let mut files = Vec::new();
        walk(Path::new(&root), &mut files);
        for file in files {
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            let language = Language::detect(&file, &text);
            if matches!(language, Language::Markdown | Language::Text) {
                continue;
            }
            let chunks = chunk_file(language, &text, &ChunkOptions::default());
            let windows = !chunks.is_empty() && chunks.iter().all(|c| c.kind == ChunkKind::Window);
            let entry = stats.entry(format!("{language:?}")).or_default();
            entry.0 += 1;
            if windows && text.lines().count() > 5 {
                entry.1 += 1;
                println!("FALLBACK {language:?} {}", file.display());
            }
        }
    }
    for (language, (files, windows)) in stats {
        println!("{language}: {files} files, {windows} windows only");
    }
}
