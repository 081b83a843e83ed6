use super::*;

fn meta(text: &str) -> ChunkMeta {
    ChunkMeta {
        path: "src/lib.rs".into(),
        start_line: 1,
        end_line: 9,
        symbol: Some("parse".into()),
        kind: patina_chunk::ChunkKind::Function,
        parent: None,
        language: patina_chunk::Language::Rust,
        hash: patina_core::ContentHash::of(text),
        role: None,
        licence: None,
    }
}

#[test]
fn cache_keys_depend_on_precision_and_content() {
    let m = meta("0123abcd");
    let fp32 = chunk_key(Precision::Fp32, &m);
    assert_ne!(
        fp32,
        chunk_key(Precision::Int8, &m),
        "fp32 and int8 vectors must never share a key"
    );
    assert_eq!(fp32, chunk_key(Precision::Fp32, &meta("0123abcd")));
    assert_ne!(fp32, chunk_key(Precision::Fp32, &meta("ffff")));
    // fp32 keys are the ones written before precision was part of the key, so an existing
    // cache stays valid.
    let hex = blake3::hash(b"0123abcd").to_hex();
    let old = blake3::hash(format!("all-MiniLM-L6-v2/2\0src/lib.rs\0\0parse\0{hex}").as_bytes());
    assert_eq!(fp32, *old.as_bytes());

    let note = "we chose sled because it is embedded";
    assert_ne!(
        note_key(Precision::Fp32, note),
        note_key(Precision::Int8, note)
    );
    let old = blake3::hash(format!("patina-note/all-MiniLM-L6-v2/1\0{note}").as_bytes());
    assert_eq!(note_key(Precision::Fp32, note), *old.as_bytes());
}
