//! The chunks of files as the index cuts them: one line per chunk with its lines, kind, parent
//! and name — to see what a grammar made of a file.
//!
//! ```sh
//! cargo run --release -p patina-chunk --example chunks -- FILE [FILE …]
//! ```

use std::path::Path;

use patina_chunk::{ChunkOptions, Language, chunk_file};

fn main() {
    for file in std::env::args().skip(1) {
        let path = Path::new(&file);
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) => {
                eprintln!("{file}: {e}");
                continue;
            }
        };
        let language = Language::detect(path, &text);
        println!("{file} ({language:?})");
        for chunk in chunk_file(language, &text, &ChunkOptions::default()) {
            let parent = chunk.parent.map(|p| format!("{p}::")).unwrap_or_default();
            println!(
                "  {:>5}-{:<5} {:<8} {parent}{}",
                chunk.start_line,
                chunk.end_line,
                chunk.kind.name(),
                chunk.symbol.unwrap_or_default()
            );
        }
    }
}
