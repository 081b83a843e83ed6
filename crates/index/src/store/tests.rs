use super::*;

/// Open the store in `dir` once an earlier handle's lock is gone: sled's flusher thread lets go of
/// a dropped database a moment after the drop.
fn reopen(dir: &Path) -> Store {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        match Store::open(dir) {
            Ok(store) => return store,
            Err(e) if std::time::Instant::now() < deadline && format!("{e:#}").contains("lock") => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            Err(e) => panic!("{e:#}"),
        }
    }
}

#[test]
fn an_embedding_cache_kept_in_sled_by_an_earlier_release_is_moved_out() {
    let dir = tempfile::tempdir().unwrap();
    let key = |n: u16| *blake3::hash(&n.to_le_bytes()).as_bytes();
    let vector = |n: u16| -> Vec<f32> { (0..384).map(|i| n as f32 - i as f32).collect() };
    {
        // As releases before this one wrote it: a sled tree of key → little-endian f32s.
        let db = sled::Config::new().path(dir.path()).open().unwrap();
        let tree = db.open_tree(OLD_EMBEDDINGS).unwrap();
        for n in 0..3000u16 {
            let bytes: Vec<u8> = vector(n).iter().flat_map(|x| x.to_le_bytes()).collect();
            tree.insert(key(n), bytes).unwrap();
        }
        db.flush().unwrap();
    }
    let store = reopen(dir.path());
    let cache = store.embeddings();
    assert_eq!(cache.len(), 3000);
    for n in [0, 17, 1024, 2999] {
        assert_eq!(
            cache.get(&key(n)).unwrap(),
            Some(crate::embedding_cache::as_stored(&vector(n))),
            "vector {n}"
        );
    }
    assert!(
        !store
            .db
            .tree_names()
            .iter()
            .any(|t| t == OLD_EMBEDDINGS.as_bytes()),
        "the old tree is dropped"
    );
    // The files hold them (a store opened again reads them from there).
    let again = EmbeddingCache::open(&dir.path().join("embeddings")).unwrap();
    assert_eq!(again.len(), 3000);
    assert_eq!(
        again.get(&key(7)).unwrap(),
        Some(crate::embedding_cache::as_stored(&vector(7)))
    );
}

fn meta(path: &str, n: u32) -> ChunkMeta {
    ChunkMeta {
        path: path.into(),
        start_line: n,
        end_line: n + 1,
        symbol: None,
        kind: patina_core::ChunkKind::Window,
        parent: None,
        language: patina_core::Language::Rust,
        hash: Default::default(),
        role: None,
        licence: None,
    }
}

/// Text that does not compress much (hex digests), `n` bytes or so.
fn noise(seed: u64, n: usize) -> String {
    let mut out = String::new();
    let mut i = 0u64;
    while out.len() < n {
        out.push_str(&blake3::hash(&[seed.to_le_bytes(), i.to_le_bytes()].concat()).to_hex());
        i += 1;
    }
    out
}

#[test]
fn chunks_kept_in_sled_by_an_earlier_release_are_moved_out() {
    let dir = tempfile::tempdir().unwrap();
    {
        // As earlier releases wrote them: JSON rows, texts in a tree of their own; a crash
        // between their two writes could leave a row without its text or a text alone.
        let db = sled::Config::new().path(dir.path()).open().unwrap();
        let chunks = db.open_tree("chunks/r").unwrap();
        let texts = db.open_tree("texts/r").unwrap();
        for id in 0..2500u64 {
            let row = serde_json::to_vec(&meta("a.rs", id as u32)).unwrap();
            chunks.insert(id.to_be_bytes(), row).unwrap();
            if id != 17 {
                texts
                    .insert(id.to_be_bytes(), format!("fn f{id}() {{}}").as_bytes())
                    .unwrap();
            }
        }
        texts
            .insert(9999u64.to_be_bytes(), &b"an orphan"[..])
            .unwrap();
        db.flush().unwrap();
    }
    let store = reopen(dir.path());
    let trees = store.repo_trees("r").unwrap();
    assert_eq!(trees.text(1234).unwrap().as_deref(), Some("fn f1234() {}"));
    let metas: HashMap<u64, ChunkMeta> = trees.chunk_metas().unwrap().into_iter().collect();
    assert_eq!(metas.len(), 2499, "the row without its text is dropped");
    assert_eq!(metas[&1234], meta("a.rs", 1234));
    assert!(!metas.contains_key(&17));
    assert_eq!(trees.text(9999).unwrap(), None, "the orphan text is gone");
    assert!(
        !store.db.tree_names().iter().any(|t| t == b"texts/r"),
        "the old tree is dropped"
    );
    drop(trees);
    drop(store);
    // Reopened, the chunks are read from their log.
    let store = reopen(dir.path());
    let trees = store.repo_trees("r").unwrap();
    assert_eq!(trees.text(7).unwrap().as_deref(), Some("fn f7() {}"));
    assert_eq!(trees.chunk_metas().unwrap().len(), 2499);
}

#[test]
fn replaced_chunks_are_compacted_away_and_rm_deletes_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let store = reopen(dir.path());
    let trees = store.repo_trees("r").unwrap();
    let write = |round: u64, removed: Vec<u64>| {
        let added_chunks = (0..40u64)
            .map(|i| {
                (
                    round * 1000 + i,
                    meta("a.rs", i as u32),
                    noise(round * 1000 + i, 4096),
                )
            })
            .collect();
        trees
            .apply(&StoreBatch {
                added_chunks,
                removed_chunks: removed,
                ..Default::default()
            })
            .unwrap();
    };
    write(0, vec![]);
    let (disk0, live0) = trees.log_sizes();
    assert_eq!(disk0, live0);
    // Each round replaces the last one's chunks: garbage grows until it outweighs the live
    // texts, then the live ones are copied and the rest freed.
    for round in 1..6u64 {
        write(round, (0..40).map(|i| (round - 1) * 1000 + i).collect());
        let (disk, live) = trees.log_sizes();
        assert!(
            disk <= 2 * live + crate::chunk_log::MIN_GARBAGE,
            "round {round}: {disk} on disk for {live} live"
        );
    }
    let (_, live) = trees.log_sizes();
    assert!(
        live.abs_diff(live0) < live0 / 10,
        "live is one round's texts: {live} vs {live0}"
    );
    for i in 0..40u64 {
        assert_eq!(
            trees.text(5000 + i).unwrap().unwrap(),
            noise(5000 + i, 4096)
        );
        assert_eq!(trees.text(4000 + i).unwrap(), None);
    }
    // A reopen finds them where the compaction put them.
    drop(trees);
    drop(store);
    let store = reopen(dir.path());
    let trees = store.repo_trees("r").unwrap();
    assert_eq!(trees.text(5039).unwrap().unwrap(), noise(5039, 4096));
    let logs = dir.path().join("chunks");
    assert_eq!(
        std::fs::read_dir(&logs).unwrap().count(),
        1,
        "one generation left"
    );
    drop(trees);
    store.remove_repo("r").unwrap();
    assert_eq!(
        std::fs::read_dir(&logs).unwrap().count(),
        0,
        "rm deletes the chunk log"
    );
}
