//! The chunker and the graph-fact extractor on arbitrary text, in every language: no panic,
//! chunks inside the file, in order of their start.
#![no_main]

use libfuzzer_sys::fuzz_target;
use patina_chunk::{ChunkOptions, Language, chunk_file, extract_facts};

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let language = Language::ALL[pick as usize % Language::ALL.len()];
    // The indexer reads files as UTF-8 with replacement; so does this.
    let text = String::from_utf8_lossy(rest);
    let lines = text.lines().count().max(1) as u32;
    let chunks = chunk_file(language, &text, &ChunkOptions::default());
    for c in &chunks {
        assert!(1 <= c.start_line && c.start_line <= c.end_line, "{language:?}: {}-{}", c.start_line, c.end_line);
        assert!(c.end_line <= lines + 1, "{language:?}: chunk ends at {} of {lines} lines", c.end_line);
        assert!((0.0..=1.0).contains(&c.prose_share), "{language:?}: prose share {}", c.prose_share);
    }
    let _ = extract_facts(language, &text);
});
