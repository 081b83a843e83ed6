use super::*;

fn unit(seed: u64, dim: usize) -> Vec<f32> {
    let mut x = seed.wrapping_mul(0x9E3779B97F4A7C15) | 1;
    let mut v: Vec<f32> = (0..dim)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 2000) as f32 / 1000.0 - 1.0
        })
        .collect();
    let n = dot(&v, &v).sqrt();
    v.iter_mut().for_each(|a| *a /= n);
    v
}

#[test]
fn the_segment_stays_consistent_through_inserts_replacements_and_removals() {
    let mut seg = Segment::default();
    for i in 0..10u64 {
        seg.insert(i, &Vector::quantize(&unit(i, 4)));
    }
    seg.insert(3, &Vector::quantize(&unit(33, 4))); // replaced in place
    seg.remove(0); // the last moves into its slot
    seg.remove(42); // absent: nothing happens
    seg.retain(|id| id % 2 == 1);
    let got: HashMap<u64, (Vec<i8>, f32)> =
        seg.iter().map(|(id, q, s)| (id, (q.to_vec(), s))).collect();
    let want: HashMap<u64, (Vec<i8>, f32)> = [1u64, 3, 5, 7, 9]
        .into_iter()
        .map(|i| {
            let v = Vector::quantize(&unit(if i == 3 { 33 } else { i }, 4));
            (i, (v.q.to_vec(), v.scale))
        })
        .collect();
    assert_eq!(got, want);
    assert_eq!(seg.len(), 5);
    assert!(seg.contains(7) && !seg.contains(0));
}

#[test]
fn dot_matches_the_plain_sum_at_every_length() {
    for dim in [0, 1, 7, 8, 9, 31, 384] {
        let (a, b) = (unit(1, dim.max(1)), unit(2, dim.max(1)));
        let (a, b) = (&a[..dim], &b[..dim]);
        let plain: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
        assert!((dot(a, b) - plain).abs() < 1e-5, "{dim}");
    }
}

#[test]
fn quantized_cosines_stay_within_half_a_percent_of_the_exact_ones() {
    let mut worst = 0.0f32;
    for i in 0..200u64 {
        let (a, b) = (unit(i, 384), unit(i + 1000, 384));
        let exact = dot(&a, &b);
        let stored = Vector::quantize(&b);
        worst = worst.max((stored.score(&a) - exact).abs());
        // Both sides stored (graph walk): close too.
        let both = 1.0 - Vector::quantize(&a).distance(&stored);
        worst = worst.max((both - exact).abs());
    }
    assert!(worst < 0.005, "worst error {worst}");
    // A vector is nearest to itself, and zero vectors do not divide by zero.
    let v = unit(7, 384);
    assert!((Vector::quantize(&v).score(&v) - 1.0).abs() < 0.005);
    assert_eq!(Vector::quantize(&[0.0; 8]).score(&[1.0; 8]), 0.0);
}

#[test]
fn an_index_written_with_other_vectors_is_discarded_and_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vectors.bin");
    // An older release's file: the graph with f32 points, no format line.
    #[derive(Clone, Serialize, Deserialize)]
    struct OldPoint(Vec<f32>);
    impl Point for OldPoint {
        fn distance(&self, other: &Self) -> f32 {
            1.0 - dot(&self.0, &other.0)
        }
    }
    let old: HnswMap<OldPoint, u64> = Builder::default().seed(1).build(
        (0..50).map(|i| OldPoint(unit(i, 8))).collect(),
        (0..50).collect(),
    );
    std::fs::write(&path, bincode::serialize(&old).unwrap()).unwrap();
    let mut idx = VectorIndex::open(&path);
    assert!(
        idx.built_ids().is_empty(),
        "nothing loaded from the old file"
    );
    // The daemon re-inserts the cached vectors; a rebuild writes the new format.
    for i in 0..MIN_HNSW as u64 + 10 {
        idx.insert(i, unit(i, 8));
    }
    let built = VectorIndex::build(idx.snapshot());
    idx.install(built).unwrap();
    assert_eq!(VectorIndex::open(&path).built_ids().len(), MIN_HNSW + 10);
}

#[test]
fn segment_tombstones_and_rebuild_agree_with_brute_force() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vectors.bin");
    let mut idx = VectorIndex::open(&path);
    let n = MIN_HNSW + 500;
    for i in 0..n as u64 {
        idx.insert(i, unit(i, 32));
    }
    assert!(idx.needs_rebuild(false));
    assert!(
        idx.needs_rebuild(true),
        "a first graph is built even while filling"
    );
    // The estimate counts each fresh vector's integers and bookkeeping, and a graph point's links.
    let fresh_bytes = idx.heap_bytes();
    assert!(
        fresh_bytes >= (n * 32) as u64 && fresh_bytes <= (n * 128) as u64,
        "{fresh_bytes}"
    );
    let snap = idx.snapshot();
    let built = VectorIndex::build(snap);
    // Changes while the graph was being built.
    idx.remove(3);
    idx.insert(n as u64 + 1, unit(99_999, 32));
    idx.install(built).unwrap();
    assert!(path.exists());
    assert!(!idx.contains(3));
    assert!(idx.contains(n as u64 + 1));
    assert_eq!(idx.len(), n);
    let graph_bytes = idx.heap_bytes();
    assert!(
        graph_bytes >= (n * (32 + 256)) as u64,
        "{graph_bytes} for {n} points"
    );
    assert!(
        graph_bytes <= (n * 512) as u64,
        "{graph_bytes} for {n} points"
    );

    // The nearest neighbour of an indexed vector is itself; a removed one is never returned.
    let hits = idx.search(&unit(42, 32), 5, &|_| true);
    assert_eq!(hits[0].0, 42);
    let hits = idx.search(&unit(3, 32), 5, &|_| true);
    assert!(hits.iter().all(|h| h.0 != 3));
    let hits = idx.search(&unit(99_999, 32), 1, &|_| true);
    assert_eq!(hits[0].0, n as u64 + 1);
    // Filters apply to both parts.
    let hits = idx.search(&unit(42, 32), 5, &|id| id != 42);
    assert!(hits.iter().all(|h| h.0 != 42));

    // Reload: the graph comes back without the in-memory segment.
    let again = VectorIndex::open(&path);
    assert_eq!(again.built_ids().len(), n);
}

#[test]
fn while_a_backlog_fills_the_index_a_graph_is_rebuilt_only_when_the_segment_doubles_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut idx = VectorIndex::open(&dir.path().join("vectors.bin"));
    let n = MIN_HNSW as u64 * 2;
    for i in 0..n {
        idx.insert(i, unit(i, 16));
    }
    let built = VectorIndex::build(idx.snapshot());
    idx.install(built).unwrap();
    // Half as many more: due when idle, not while filling.
    for i in n..n + n / 2 {
        idx.insert(i, unit(i, 16));
    }
    assert!(idx.needs_rebuild(false));
    assert!(!idx.needs_rebuild(true));
    // As many new vectors as the graph holds: due either way.
    for i in n + n / 2..2 * n {
        idx.insert(i, unit(i, 16));
    }
    assert!(idx.needs_rebuild(true));
}

#[test]
fn a_graph_file_cut_short_or_with_bytes_after_it_is_discarded_and_an_intact_one_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vectors.bin");
    let mut idx = VectorIndex::open(&path);
    let n = MIN_HNSW as u64 + 20;
    for i in 0..n {
        idx.insert(i, unit(i, 16));
    }
    let built = VectorIndex::build(idx.snapshot());
    idx.install(built).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    // The hash a saved segment is checked against is the file's own.
    assert_eq!(idx.graph_hash, Some(*blake3::hash(&bytes).as_bytes()));
    let again = VectorIndex::open(&path);
    assert_eq!(again.built_ids().len() as u64, n);
    assert_eq!(again.graph_hash, idx.graph_hash);

    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    assert!(VectorIndex::open(&path).built_ids().is_empty(), "cut short");
    let mut longer = bytes.clone();
    longer.extend_from_slice(b"junk");
    std::fs::write(&path, &longer).unwrap();
    assert!(
        VectorIndex::open(&path).built_ids().is_empty(),
        "bytes after"
    );
    std::fs::write(&path, b"").unwrap();
    assert!(VectorIndex::open(&path).built_ids().is_empty(), "empty");
}

fn save(idx: &mut VectorIndex, tag: &str) -> bool {
    match idx.segment_bytes(tag) {
        Some((changes, bytes)) => {
            write_segment(&idx.segment_file(), &bytes).unwrap();
            idx.mark_saved(changes);
            true
        }
        None => false,
    }
}

#[test]
fn the_segment_and_tombstones_come_back_after_a_restart_with_the_same_model() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vectors.bin");
    let mut idx = VectorIndex::open(&path);
    let n = MIN_HNSW + 40;
    for i in 0..n as u64 {
        idx.insert(i, unit(i, 16));
    }
    let built = VectorIndex::build(idx.snapshot());
    idx.install(built).unwrap();
    // After the build: a segment of new vectors and a tombstone in the graph.
    for i in 0..25u64 {
        idx.insert(10_000 + i, unit(10_000 + i, 16));
    }
    idx.remove(7);
    assert!(save(&mut idx, "model-a"), "changes are saved");
    assert!(!save(&mut idx, "model-a"), "nothing to save twice");

    let mut again = VectorIndex::open(&path);
    assert!(again.restore_segment("model-a"));
    assert_eq!(again.len(), idx.len());
    assert!(again.contains(10_024) && !again.contains(7));
    let mut ids: Vec<u64> = again.ids().collect();
    let mut want: Vec<u64> = idx.ids().collect();
    ids.sort_unstable();
    want.sort_unstable();
    assert_eq!(ids, want);
    for probe in [3u64, 10_005, 7] {
        assert_eq!(
            again.search(&unit(probe, 16), 5, &|_| true),
            idx.search(&unit(probe, 16), 5, &|_| true),
            "same answers for {probe}"
        );
    }
    assert!(
        !save(&mut again, "model-a"),
        "a restored index is already saved"
    );

    // Another model's daemon does not take them: graph only, the rest from the cache.
    let mut other = VectorIndex::open(&path);
    assert!(!other.restore_segment("model-b"));
    assert_eq!(other.len(), n);
}

#[test]
fn a_damaged_or_outdated_segment_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vectors.bin");
    let mut idx = VectorIndex::open(&path);
    for i in 0..30u64 {
        idx.insert(i, unit(i, 8));
    }
    assert!(save(&mut idx, "m"));
    let seg = idx.segment_file();
    let good = std::fs::read(&seg).unwrap();
    assert!(VectorIndex::open(&path).restore_segment("m"));

    // One flipped byte, a truncated file, garbage.
    let mut bad = good.clone();
    let mid = bad.len() / 2;
    bad[mid] ^= 0x40;
    for bytes in [bad, good[..good.len() - 5].to_vec(), b"nonsense".to_vec()] {
        std::fs::write(&seg, &bytes).unwrap();
        let mut idx = VectorIndex::open(&path);
        assert!(!idx.restore_segment("m"));
        assert!(idx.is_empty());
    }

    // A segment saved beside another graph than the one on disk now.
    std::fs::write(&seg, &good).unwrap();
    let mut grown = VectorIndex::open(&path);
    for i in 0..MIN_HNSW as u64 + 5 {
        grown.insert(i, unit(i, 8));
    }
    let built = VectorIndex::build(grown.snapshot());
    grown.install(built).unwrap();
    let mut idx = VectorIndex::open(&path);
    assert!(!idx.restore_segment("m"), "the segment completes no graph");
    assert_eq!(idx.len(), MIN_HNSW + 5);
}

#[test]
fn a_restored_segment_holds_no_growth_slack() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vectors.bin");
    let mut idx = VectorIndex::open(&path);
    // More than the 1 MiB serde allocates up front for a sequence, which then doubles.
    let n = 70_000u64;
    for i in 0..n {
        idx.insert(i, unit(i, 16));
    }
    assert!(save(&mut idx, "m"));
    let mut again = VectorIndex::open(&path);
    assert!(again.restore_segment("m"));
    assert_eq!(again.len(), n as usize);
    let f = &again.fresh;
    assert_eq!(f.data.capacity(), f.data.len());
    assert_eq!(f.ids.capacity(), f.ids.len());
    assert_eq!(f.scales.capacity(), f.scales.len());
}

#[test]
fn packed_vectors_score_replace_reuse_slots_and_empty_to_nothing() {
    let unit = |i: usize| {
        let mut v = vec![0.0f32; 8];
        v[i] = 1.0;
        v
    };
    let mut p = Packed::default();
    p.insert(7, &unit(0));
    p.insert(9, &unit(1));
    assert_eq!(p.len(), 2);
    assert!((p.score(7, &unit(0)).unwrap() - 1.0).abs() < 0.01);
    assert!(p.score(7, &unit(1)).unwrap().abs() < 0.01);
    assert_eq!(p.score(8, &unit(0)), None);
    p.insert(7, &unit(2));
    assert_eq!(p.len(), 2, "replaced, not added");
    assert!((p.score(7, &unit(2)).unwrap() - 1.0).abs() < 0.01);
    p.remove(9);
    p.insert(11, &unit(3));
    assert_eq!(p.scales.len(), 2, "the freed slot is reused");
    let mut all: Vec<(u64, f32)> = p.scores(&unit(3)).collect();
    all.sort_by_key(|x| x.0);
    assert_eq!(all.len(), 2);
    assert!((all[1].1 - 1.0).abs() < 0.01 && all[1].0 == 11);
    p.retain(|k| k == 11);
    assert_eq!(p.len(), 1);
    p.remove(11);
    assert_eq!(p.bytes(), 0, "an empty set holds nothing");
}

#[test]
fn vectors_read_back_by_id_are_what_the_embedding_cache_gives_from_graph_and_segment() {
    let dir = tempfile::tempdir().unwrap();
    let mut idx = VectorIndex::open(&dir.path().join("vectors.bin"));
    let n = MIN_HNSW as u64 + 10;
    for i in 0..n {
        idx.insert(i, unit(i, 16));
    }
    let built = VectorIndex::build(idx.snapshot());
    idx.install(built).unwrap();
    idx.insert(50_000, unit(50_000, 16));
    idx.remove(3);
    let asked: HashSet<u64> = [1, 3, n - 1, 50_000, 99_999].into();
    let got = idx.vectors_of(&asked);
    let mut ids: Vec<u64> = got.keys().copied().collect();
    ids.sort();
    assert_eq!(
        ids,
        [1, n - 1, 50_000],
        "removed and unknown ids are not held"
    );
    for id in ids {
        assert_eq!(
            got[&id],
            crate::embedding_cache::as_stored(&unit(id, 16)),
            "vector {id}"
        );
    }
    assert!(idx.vectors_of(&HashSet::new()).is_empty());
}
