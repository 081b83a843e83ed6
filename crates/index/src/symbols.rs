//! In-memory lookup tables for the symbol oracle: symbol names (exact, style-insensitive and
//! prefix) and file names/paths, rebuilt from chunk metadata after every index commit.

use std::collections::HashMap;

use patina_core::ChunkMeta;

pub struct SymbolEntry {
    /// Lowercased name.
    pub key: String,
    pub name: String,
    pub chunk_id: u64,
}

pub struct FileEntry {
    /// Lowercased path and file name.
    pub path: String,
    pub file_name: String,
    pub chunk_id: u64,
}

#[derive(Default)]
pub struct SymbolTable {
    /// Sorted by key, for exact and prefix lookups.
    pub symbols: Vec<SymbolEntry>,
    /// Style-insensitive key (`parse_args` = `parseArgs`) → indices into `symbols`.
    pub normalized: HashMap<String, Vec<usize>>,
    pub files: Vec<FileEntry>,
}

/// `Parse_Args`, `parseArgs`, `parse-args` → `parseargs`.
pub fn normalize(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

impl SymbolTable {
    pub fn build<'a>(metas: impl Iterator<Item = (&'a u64, &'a ChunkMeta)>) -> SymbolTable {
        let mut symbols = Vec::new();
        let mut first_chunk: HashMap<&str, (u32, u64)> = HashMap::new();
        for (&id, m) in metas {
            if let Some(name) = &m.symbol {
                symbols.push(SymbolEntry {
                    key: name.to_lowercase(),
                    name: name.clone(),
                    chunk_id: id,
                });
            }
            let e = first_chunk.entry(&*m.path).or_insert((m.start_line, id));
            if m.start_line < e.0 || (m.start_line == e.0 && id < e.1) {
                *e = (m.start_line, id);
            }
        }
        symbols.sort_by(|a, b| a.key.cmp(&b.key).then(a.chunk_id.cmp(&b.chunk_id)));
        let mut normalized: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, s) in symbols.iter().enumerate() {
            normalized.entry(normalize(&s.name)).or_default().push(i);
        }
        let mut files: Vec<FileEntry> = first_chunk
            .into_iter()
            .map(|(path, (_, id))| {
                let lower = path.to_lowercase();
                let file_name = lower.rsplit('/').next().unwrap_or(&lower).to_string();
                FileEntry {
                    path: lower,
                    file_name,
                    chunk_id: id,
                }
            })
            .collect();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        SymbolTable {
            symbols,
            normalized,
            files,
        }
    }

    /// Entries whose lowercased name starts with `prefix` (lowercase).
    pub fn with_prefix(&self, prefix: &str) -> &[SymbolEntry] {
        let lo = self.symbols.partition_point(|s| s.key.as_str() < prefix);
        let hi = lo + self.symbols[lo..].partition_point(|s| s.key.starts_with(prefix));
        &self.symbols[lo..hi]
    }
}
