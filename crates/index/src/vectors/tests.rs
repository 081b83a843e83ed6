use std::collections::HashMap;

use super::fresh::Fresh;
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

/// Vector `i` of `n` in clusters, as embeddings are: a cluster centre plus noise of about the
/// centre's length (cosine ~0.7 with the centre, ~0.5 within a cluster), normalised.
fn clustered(i: u64, n: u64, dim: usize) -> Vec<f32> {
    let clusters = (n / 200).max(8);
    let centre = unit(1_000_000_007 + i % clusters, dim);
    let noise = unit(i, dim);
    let mut v: Vec<f32> = centre.iter().zip(&noise).map(|(c, e)| c + e).collect();
    let len = dot(&v, &v).sqrt();
    v.iter_mut().for_each(|a| *a /= len);
    v
}

/// Vector `i` of `n` in topics and subtopics, for the bench: a topic centre (one per 5,000
/// vectors), a subtopic centre (one per 100) at 0.8 of its length and noise at 0.9, normalised —
/// a query's nearest neighbours are its subtopic's, nearly tied, then its topic's.
fn topical(i: u64, n: u64, dim: usize) -> Vec<f32> {
    let (topics, subtopics) = ((n / 5_000).max(4), (n / 100).max(16));
    let sub = i.wrapping_mul(0x2545_F491_4F6C_DD1D) % subtopics;
    let topic = unit(2_000_000_011 + sub % topics, dim);
    let centre = unit(3_000_000_019 + sub, dim);
    let noise = unit(i, dim);
    let mut v: Vec<f32> = (0..dim)
        .map(|k| topic[k] + 0.8 * centre[k] + 0.9 * noise[k])
        .collect();
    let len = dot(&v, &v).sqrt();
    v.iter_mut().for_each(|a| *a /= len);
    v
}

/// The exact `k` best of `vectors` for `query`, scored as the index scores (the query exact, the
/// stored vector 8-bit), ties by id.
fn exact(vectors: &HashMap<u64, Vec<f32>>, query: &[f32], k: usize) -> Vec<u64> {
    let mut all: Vec<(u64, f32)> = vectors
        .iter()
        .map(|(id, v)| (*id, Vector::quantize(v).score(query)))
        .collect();
    all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    all.into_iter().take(k).map(|(id, _)| id).collect()
}

/// Run the seals and merges due, as the daemon does; the (merge?, vectors) of each build.
fn settle(idx: &mut VectorIndex) -> Vec<(bool, usize)> {
    let mut builds = Vec::new();
    while idx.needs_build() {
        let snap = idx.snapshot();
        builds.push((snap.is_merge(), snap.len()));
        let built = VectorIndex::build(snap);
        idx.install(built).unwrap();
        assert!(builds.len() < 10_000, "builds never end");
    }
    builds
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

fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

const SEAL: usize = Limits::DEFAULT.seal_at;
const BOUND: usize = Limits::DEFAULT.max_segment;

#[test]
fn the_fresh_segment_stays_consistent_through_inserts_replacements_and_removals() {
    let mut seg = Fresh::default();
    for i in 0..10u64 {
        seg.insert(i, &Vector::quantize(&unit(i, 4)));
    }
    seg.insert(3, &Vector::quantize(&unit(33, 4))); // replaced in place
    seg.remove(0); // the last moves into its slot
    seg.remove(42); // absent: nothing happens
    for id in [2, 4, 6, 8] {
        seg.remove(id);
    }
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
        // Both sides stored (how a graph is built): close too.
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
fn an_older_releases_single_graph_is_discarded_and_its_vectors_are_sealed_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vectors");
    // An older release's file (instant-distance's graph, bincode): whatever its bytes, it goes.
    let old = dir.path().join("vectors.bin");
    std::fs::write(&old, b"patina-vectors-i8-1\n\x05\x00\x00\x00junk").unwrap();
    let mut idx = VectorIndex::open(&path);
    assert!(!old.exists(), "the old graph is deleted");
    assert_eq!(idx.discarded().len(), 1, "{:?}", idx.discarded());
    assert!(idx.is_empty(), "nothing loaded from the old file");
    // The daemon re-inserts the cached vectors; a seal writes the new format.
    for i in 0..SEAL as u64 + 10 {
        idx.insert(i, unit(i, 8));
    }
    assert_eq!(settle(&mut idx), [(false, SEAL)]);
    let again = VectorIndex::open(&path);
    assert!(again.discarded().is_empty());
    assert_eq!(again.sealed_ids().count(), SEAL);
}

#[test]
fn no_build_takes_more_than_the_seal_or_merge_bound_however_large_the_index_grows() {
    let dir = tempfile::tempdir().unwrap();
    let mut idx = VectorIndex::open(&dir.path().join("vectors"));
    let n = 3 * BOUND as u64;
    let mut builds = Vec::new();
    for i in 0..n {
        idx.insert(i, unit(i, 8));
        if i % 97 == 0 {
            builds.extend(settle(&mut idx));
        }
    }
    builds.extend(settle(&mut idx));
    assert_eq!(idx.len(), n as usize);
    for &(merge, len) in &builds {
        let bound = if merge { BOUND } else { SEAL };
        assert!(len <= bound, "a build of {len} vectors (merge: {merge})");
    }
    let seals = builds.iter().filter(|b| !b.0).count();
    let merges = builds.iter().filter(|b| b.0).count();
    // Each vector is sealed once, and merged a few times (once per tier), not once per doubling.
    assert_eq!(seals, n as usize / SEAL);
    let merged: usize = builds.iter().filter(|b| b.0).map(|b| b.1).sum();
    assert!(
        merges > 0 && merged <= 3 * n as usize,
        "{merges} merges, {merged} vectors"
    );
    // Few segments: the large ones, a few tiers of small ones.
    assert!(
        builds.iter().any(|b| b.0 && b.1 > 4 * SEAL),
        "merges of merges: {builds:?}"
    );
    assert!(idx.segments() <= 3 + 2 * MERGE_FACTOR, "{}", idx.segments());
    assert!(idx.fresh.len() < SEAL);
}

#[test]
fn seals_and_merges_answer_as_exact_search_does_on_small_data() {
    let dir = tempfile::tempdir().unwrap();
    let mut idx = VectorIndex::open(&dir.path().join("vectors"));
    let n = 5 * SEAL as u64 + 50;
    let mut vectors = HashMap::new();
    for i in 0..n {
        let v = clustered(i, n, 32);
        vectors.insert(i, v.clone());
        idx.insert(i, v);
    }
    let builds = settle(&mut idx);
    assert!(builds.iter().any(|b| b.0), "a merge ran: {builds:?}");
    assert_eq!(idx.len(), n as usize);
    assert_eq!(idx.fresh.len(), 50);
    for probe in 0..40u64 {
        let q = clustered(probe * 7 + 3, n, 32);
        let got: Vec<u64> = idx.search(&q, 10, &|_| true).iter().map(|h| h.0).collect();
        assert_eq!(got, exact(&vectors, &q, 10), "probe {probe}");
    }
    // Best first, ties by id; a filter applies to every segment.
    let hits = idx.search(&vectors[&42], 20, &|id| id % 2 == 0);
    assert!(hits.iter().all(|h| h.0 % 2 == 0) && hits[0].0 == 42);
    assert!(
        hits.windows(2)
            .all(|w| w[0].1 > w[1].1 || (w[0].1 == w[1].1 && w[0].0 < w[1].0))
    );
    assert!(idx.search(&vectors[&42], 0, &|_| true).is_empty());
}

#[test]
fn recall_at_ten_on_clustered_vectors_is_high() {
    let dir = tempfile::tempdir().unwrap();
    let mut idx = VectorIndex::open(&dir.path().join("vectors"));
    let (n, dim) = (3_000u64, 48);
    let mut vectors = HashMap::new();
    for i in 0..n {
        let v = clustered(i, n, dim);
        vectors.insert(i, v.clone());
        idx.insert(i, v);
        if i % 500 == 0 {
            settle(&mut idx);
        }
    }
    settle(&mut idx);
    assert!(idx.segments() >= 2);
    let (mut found, mut asked) = (0, 0);
    for probe in 0..60u64 {
        // Queries near the data, not on it.
        let q = clustered(n + probe * 13, n, dim);
        let want = exact(&vectors, &q, 10);
        let got: HashSet<u64> = idx.search(&q, 10, &|_| true).iter().map(|h| h.0).collect();
        found += want.iter().filter(|id| got.contains(id)).count();
        asked += want.len();
    }
    let recall = found as f64 / asked as f64;
    assert!(recall >= 0.95, "recall@10 {recall}");
}

#[test]
fn removals_between_snapshot_and_install_are_never_returned() {
    let dir = tempfile::tempdir().unwrap();
    let mut idx = VectorIndex::open(&dir.path().join("vectors"));
    for i in 0..SEAL as u64 {
        idx.insert(i, unit(i, 16));
    }
    // A seal: while it builds, one vector goes, one is replaced, one is added.
    let snap = idx.snapshot();
    assert!(!snap.is_merge() && snap.len() == SEAL);
    idx.remove(3);
    idx.remove(4);
    idx.insert(4, unit(40_004, 16));
    idx.insert(90_000, unit(90_000, 16));
    let built = VectorIndex::build(snap);
    idx.install(built).unwrap();
    assert_eq!(idx.segments(), 1);
    assert!(!idx.contains(3) && idx.contains(4) && idx.contains(90_000));
    assert_eq!(idx.len(), SEAL, "one gone, one added");
    assert!(
        idx.search(&unit(3, 16), 10, &|_| true)
            .iter()
            .all(|h| h.0 != 3)
    );
    assert_eq!(idx.search(&unit(40_004, 16), 1, &|_| true)[0].0, 4);
    assert!(
        idx.search(&unit(4, 16), 10, &|_| true)[0].0 != 4,
        "the old vector is gone"
    );
    assert_eq!(
        idx.fresh.len(),
        2,
        "the replacement and the addition stay fresh"
    );

    // A merge: the same while it builds.
    for i in 0..(MERGE_FACTOR as u64 - 1) * SEAL as u64 - 2 {
        idx.insert(100_000 + i, unit(100_000 + i, 16));
    }
    while idx.plan() == Job::Seal {
        let built = VectorIndex::build(idx.snapshot());
        idx.install(built).unwrap();
    }
    assert_eq!(idx.segments(), MERGE_FACTOR);
    assert_eq!(idx.fresh.len(), 0);
    let snap = idx.snapshot();
    assert!(snap.is_merge());
    idx.remove(5);
    idx.remove(100_001);
    idx.remove(100_002);
    idx.insert(100_002, unit(7, 16));
    let built = VectorIndex::build(snap);
    idx.install(built).unwrap();
    assert_eq!(idx.segments(), 1);
    for gone in [3u64, 5, 100_001] {
        assert!(!idx.contains(gone));
        let hits = idx.search(&unit(gone, 16), 10, &|_| true);
        assert!(hits.iter().all(|h| h.0 != gone), "{gone} came back");
    }
    assert!(idx.search(&unit(100_002, 16), 10, &|_| true)[0].0 != 100_002);
    let near7: Vec<u64> = idx
        .search(&unit(7, 16), 2, &|_| true)
        .iter()
        .map(|h| h.0)
        .collect();
    assert!(near7.contains(&7) && near7.contains(&100_002), "{near7:?}");
    assert_eq!(idx.len(), MERGE_FACTOR * SEAL - 4);
    // A merge built from segments another build replaced meanwhile is dropped, not installed.
    let snap = VectorIndex::build(Snapshot {
        job: Job::Merge(vec![1]),
        ..idx.snapshot()
    });
    idx.install(snap).unwrap();
    assert_eq!(idx.len(), MERGE_FACTOR * SEAL - 4);
    assert_eq!(idx.segments(), 1);
}

#[test]
fn any_interleaving_of_changes_builds_and_restarts_holds_what_a_plain_map_holds() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vectors");
    let mut idx = VectorIndex::open(&path);
    let mut model: HashMap<u64, Vec<f32>> = HashMap::new();
    let mut pending: Option<Snapshot> = None;
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut rand = |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m
    };
    let dim = 8;
    for step in 0..4_000u64 {
        match rand(100) {
            // A new vector for a chunk (as the daemon: a changed chunk is removed, then added).
            0..=54 => {
                let id = rand(1_500);
                let v = unit(step * 7 + 1, dim);
                idx.remove(id);
                idx.insert(id, v.clone());
                model.insert(id, crate::embedding_cache::as_stored(&v));
            }
            55..=79 => {
                let id = rand(1_500);
                idx.remove(id);
                model.remove(&id);
            }
            // A build begins, or the one under way ends.
            80..=93 => match pending.take() {
                None if idx.needs_build() => pending = Some(idx.snapshot()),
                None => {}
                Some(snap) => {
                    assert!(snap.len() <= if snap.is_merge() { BOUND } else { SEAL });
                    idx.install(VectorIndex::build(snap)).unwrap();
                }
            },
            // Idle: saved; or a restart (a build under way is lost, as in a crash).
            _ => {
                save(&mut idx, "m");
                if rand(3) == 0 {
                    pending = None;
                    idx = VectorIndex::open(&path);
                    assert!(idx.discarded().is_empty(), "{:?}", idx.discarded());
                    assert!(idx.restore_segment("m"));
                }
            }
        }
        if step % 200 == 199 {
            assert_eq!(idx.len(), model.len(), "step {step}");
            let mut ids: Vec<u64> = idx.ids().collect();
            ids.sort_unstable();
            let mut want: Vec<u64> = model.keys().copied().collect();
            want.sort_unstable();
            assert_eq!(ids, want, "step {step}");
            let all: HashSet<u64> = (0..1_500).collect();
            assert_eq!(idx.vectors_of(&all), model, "step {step}");
            for probe in 0..5 {
                let q = unit(rand(1_000_000), dim);
                for (id, sim) in idx.search(&q, 10, &|_| true) {
                    let stored = Vector::quantize(&model[&id]).score(&q);
                    assert!(
                        (sim - stored).abs() < 1e-4,
                        "step {step} probe {probe}: {id}"
                    );
                }
            }
        }
    }
    assert!(idx.segments() > 0, "builds ran");
}

#[test]
fn sealed_segments_fresh_vectors_and_tombstones_come_back_after_a_restart_with_the_same_model() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vectors");
    let mut idx = VectorIndex::open(&path);
    let n = 3 * SEAL as u64 + 40;
    for i in 0..n {
        idx.insert(i, unit(i, 16));
    }
    settle(&mut idx);
    idx.remove(7);
    idx.remove(n - 1);
    assert!(save(&mut idx, "model-a"), "changes are saved");
    assert!(!save(&mut idx, "model-a"), "nothing to save twice");

    let mut again = VectorIndex::open(&path);
    assert!(again.discarded().is_empty());
    assert!(again.restore_segment("model-a"));
    assert_eq!(again.len(), idx.len());
    assert!(again.contains(n - 2) && !again.contains(7) && !again.contains(n - 1));
    let mut ids: Vec<u64> = again.ids().collect();
    let mut want: Vec<u64> = idx.ids().collect();
    ids.sort_unstable();
    want.sort_unstable();
    assert_eq!(ids, want);
    for probe in [3u64, n - 5, 7, 500] {
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

    // Another model's daemon does not take them: sealed segments only, the rest from the cache.
    let mut other = VectorIndex::open(&path);
    assert!(!other.restore_segment("model-b"));
    assert_eq!(
        other.len(),
        3 * SEAL,
        "the sealed vectors, tombstones as of the last commit"
    );
}

#[test]
fn a_damaged_or_outdated_fresh_segment_file_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vectors");
    let mut idx = VectorIndex::open(&path);
    for i in 0..30u64 {
        idx.insert(i, unit(i, 8));
    }
    assert!(save(&mut idx, "m"));
    let seg = idx.segment_file();
    assert_eq!(seg, dir.path().join("vectors.seg"));
    let good = std::fs::read(&seg).unwrap();
    assert!(VectorIndex::open(&path).restore_segment("m"));

    // One flipped byte, a truncated file, garbage, the first format.
    let mut bad = good.clone();
    let mid = bad.len() / 2;
    bad[mid] ^= 0x40;
    let mut first = b"patina-segment-i8-1\n".to_vec();
    first.extend_from_slice(&good[fresh::FORMAT.len()..]);
    for bytes in [
        bad,
        good[..good.len() - 5].to_vec(),
        b"nonsense".to_vec(),
        first,
    ] {
        std::fs::write(&seg, &bytes).unwrap();
        let mut idx = VectorIndex::open(&path);
        assert!(!idx.restore_segment("m"));
        assert!(idx.is_empty());
    }

    // A file saved beside other sealed segments than those on disk now.
    std::fs::write(&seg, &good).unwrap();
    let mut grown = VectorIndex::open(&path);
    for i in 0..SEAL as u64 + 5 {
        grown.insert(i, unit(i, 8));
    }
    settle(&mut grown);
    let mut idx = VectorIndex::open(&path);
    assert!(
        !idx.restore_segment("m"),
        "the file completes other segments"
    );
    assert_eq!(idx.len(), SEAL);
}

#[test]
fn a_damaged_segment_or_manifest_opens_without_panic_and_says_what_it_lost() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vectors");
    let mut idx = VectorIndex::open(&path);
    for i in 0..2 * SEAL as u64 {
        idx.insert(i, unit(i, 16));
    }
    settle(&mut idx);
    assert_eq!(idx.segments(), 2);
    let names = files(&path);
    assert_eq!(names.len(), 3, "{names:?}");
    let (first, manifest) = (path.join(&names[0]), path.join(manifest::FILE));
    let saved: Vec<(PathBuf, Vec<u8>)> = names
        .iter()
        .map(|n| (path.join(n), std::fs::read(path.join(n)).unwrap()))
        .collect();
    let good = std::fs::read(&first).unwrap();
    let good_manifest = std::fs::read(&manifest).unwrap();
    let restore = || {
        for (p, bytes) in &saved {
            std::fs::write(p, bytes).unwrap();
        }
    };

    // A segment cut short, with bytes after it, with one byte changed, empty.
    let mut longer = good.clone();
    longer.extend_from_slice(b"junk");
    let mut flipped = good.clone();
    flipped[good.len() / 2] ^= 1;
    for bytes in [good[..good.len() / 2].to_vec(), longer, flipped, Vec::new()] {
        std::fs::write(&first, &bytes).unwrap();
        let idx = VectorIndex::open(&path);
        assert_eq!(idx.len(), SEAL, "the other segment is served");
        assert_eq!(idx.discarded().len(), 1, "{:?}", idx.discarded());
        assert!(idx.discarded()[0].contains(&format!("({SEAL} vectors)")));
        assert!(!first.exists(), "the damaged file is deleted");
        assert_eq!(
            idx.search(&unit(SEAL as u64 + 3, 16), 1, &|_| true)[0].0,
            SEAL as u64 + 3
        );
        // The manifest was rewritten without it: the next open is clean.
        assert!(VectorIndex::open(&path).discarded().is_empty());
        restore();
    }
    assert_eq!(VectorIndex::open(&path).len(), 2 * SEAL);

    // A manifest cut short, changed, or garbage: everything is derived again, nothing panics.
    let mut changed = good_manifest.clone();
    changed[10] ^= 1;
    for bytes in [
        good_manifest[..good_manifest.len() - 3].to_vec(),
        changed,
        b"{".to_vec(),
    ] {
        std::fs::write(&manifest, &bytes).unwrap();
        let idx = VectorIndex::open(&path);
        assert!(idx.is_empty());
        assert!(
            idx.discarded()[0].starts_with("the manifest"),
            "{:?}",
            idx.discarded()
        );
        assert_eq!(
            files(&path),
            [manifest::FILE],
            "the files it named are gone"
        );
        restore();
    }
    assert_eq!(VectorIndex::open(&path).len(), 2 * SEAL);
}

#[test]
fn files_the_manifest_does_not_name_are_removed_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vectors");
    let mut idx = VectorIndex::open(&path);
    for i in 0..SEAL as u64 {
        idx.insert(i, unit(i, 16));
    }
    settle(&mut idx);
    let named = files(&path);
    // What a kill -9 leaves: a segment written but not committed, temporaries.
    std::fs::write(path.join(sealed::file_name(99)), b"half a segment").unwrap();
    std::fs::write(path.join("manifest.json.tmp"), b"{").unwrap();
    std::fs::write(path.join("00000100.hnsw.tmp"), b"").unwrap();
    let again = VectorIndex::open(&path);
    assert_eq!(files(&path), named);
    assert_eq!(again.len(), SEAL);

    // A kill -9 after a seal's file was written, before the manifest named it: the index opens
    // as the manifest names it (the daemon's start-up audit refills the rest).
    let mut idx = again;
    for i in 0..(MERGE_FACTOR as u64 - 1) * SEAL as u64 {
        idx.insert(10_000 + i, unit(10_000 + i, 16));
    }
    while idx.plan() == Job::Seal {
        let built = VectorIndex::build(idx.snapshot());
        idx.install(built).unwrap();
    }
    let merge = VectorIndex::build(idx.snapshot());
    assert_eq!(
        files(&path).len(),
        MERGE_FACTOR + 2,
        "four segments, the merged one, manifest"
    );
    drop(merge);
    drop(idx);
    let mut idx = VectorIndex::open(&path);
    assert_eq!(idx.len(), MERGE_FACTOR * SEAL);
    assert_eq!(files(&path).len(), MERGE_FACTOR + 1);
    // Installed, the merged files go and only the new one is named.
    assert_eq!(settle(&mut idx), [(true, MERGE_FACTOR * SEAL)]);
    assert_eq!(files(&path).len(), 2, "{:?}", files(&path));
    assert!(idx.next > MERGE_FACTOR as u64, "numbers are not reused");
    assert_eq!(VectorIndex::open(&path).len(), MERGE_FACTOR * SEAL);
}

#[test]
fn a_restored_fresh_segment_holds_no_growth_slack() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vectors");
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
fn the_heap_holds_the_fresh_segment_and_tombstones_and_the_sealed_vectors_are_mapped() {
    let dir = tempfile::tempdir().unwrap();
    let mut idx = VectorIndex::open(&dir.path().join("vectors"));
    let dim = 32;
    for i in 0..SEAL as u64 - 1 {
        idx.insert(i, unit(i, dim));
    }
    let fresh = idx.heap_bytes();
    let n = SEAL - 1;
    assert!(
        fresh >= (n * (dim + 12)) as u64 && fresh <= (n * 256) as u64,
        "{fresh}"
    );
    assert_eq!(idx.mapped_bytes(), 0);
    idx.insert(SEAL as u64, unit(SEAL as u64, dim));
    settle(&mut idx);
    idx.mark_saved(idx.changes); // idle: the fresh arrays give back what the seal emptied
    // Sealed: a few hundred bytes on the heap; the vectors and links in the mapped file.
    let sealed = idx.heap_bytes();
    assert!(sealed < 4096, "{sealed}");
    assert!(idx.mapped_bytes() >= (SEAL * (dim + 8 + 4 + 4 * hnsw::M0)) as u64);
    idx.remove(3);
    assert!(idx.heap_bytes() > sealed, "a tombstone counts");
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
fn vectors_read_back_by_id_are_what_the_embedding_cache_gives_from_sealed_and_fresh_segments() {
    let dir = tempfile::tempdir().unwrap();
    let mut idx = VectorIndex::open(&dir.path().join("vectors"));
    let n = SEAL as u64 + 10;
    for i in 0..n {
        idx.insert(i, unit(i, 16));
    }
    settle(&mut idx);
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

/// Recall@10 against exact search and the time of a search at 10k, 100k and 500k synthetic
/// clustered vectors of dimension 384 ([`topical`]), with the production seal and merge sizes.
/// Run:
/// `cargo test --release -p patina-index vector_bench -- --ignored --nocapture`
/// (`PATINA_VECTOR_BENCH=10000,100000` for other sizes).
#[test]
#[ignore]
fn vector_bench() {
    let sizes: Vec<u64> = std::env::var("PATINA_VECTOR_BENCH")
        .unwrap_or_else(|_| "10000,100000,500000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    // `PATINA_VECTOR_BENCH_SEAL`: another seal size (at 10k the production one builds no graph).
    let limits = match std::env::var("PATINA_VECTOR_BENCH_SEAL")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        Some(seal_at) => Limits {
            seal_at,
            ..Limits::PRODUCTION
        },
        None => Limits::PRODUCTION,
    };
    let dim = 384;
    for n in sizes {
        let dir = tempfile::tempdir().unwrap();
        let mut idx = VectorIndex::open_with(&dir.path().join("vectors"), limits);
        let (mut q, mut scales) = (Vec::with_capacity(n as usize * dim), Vec::new());
        let t0 = std::time::Instant::now();
        let mut build_time = std::time::Duration::ZERO;
        let mut builds = Vec::new();
        for i in 0..n {
            let v = topical(i, n, dim);
            let stored = Vector::quantize(&v);
            q.extend_from_slice(&stored.q);
            scales.push(stored.scale);
            idx.insert(i, v);
            if i % 1024 == 1023 || i == n - 1 {
                let t = std::time::Instant::now();
                builds.extend(settle(&mut idx));
                build_time += t.elapsed();
            }
        }
        let fill = t0.elapsed();
        let largest = builds.iter().map(|b| b.1).max().unwrap_or(0);
        let queries = 200u64;
        let (mut found, mut search_time) = (0usize, std::time::Duration::ZERO);
        let mut exact_time = std::time::Duration::ZERO;
        for probe in 0..queries {
            let query = topical(n + probe * 7919, n, dim);
            let t = std::time::Instant::now();
            let got: HashSet<u64> = idx
                .search(&query, 10, &|_| true)
                .iter()
                .map(|h| h.0)
                .collect();
            search_time += t.elapsed();
            let t = std::time::Instant::now();
            let mut all: Vec<(u64, f32)> = (0..n as usize)
                .map(|i| {
                    (
                        i as u64,
                        dot_q(&query, &q[i * dim..(i + 1) * dim]) * scales[i],
                    )
                })
                .collect();
            all.select_nth_unstable_by(9, |a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            exact_time += t.elapsed();
            found += all[..10].iter().filter(|(id, _)| got.contains(id)).count();
        }
        // Again, the mapped pages those queries touched now resident.
        let t = std::time::Instant::now();
        for probe in 0..queries {
            let query = topical(n + probe * 7919, n, dim);
            std::hint::black_box(idx.search(&query, 10, &|_| true));
        }
        let warm = t.elapsed();
        let rss_file = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("RssFile:"))
                    .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
            })
            .unwrap_or(0.0);
        println!(
            "n={n} dim={dim} seal={}: recall@10 {:.4} over {queries} queries; search {:.2} ms a query \
             cold, {:.2} ms warm (exact scan {:.2} ms); {} segments + {} fresh; {} builds (largest {largest}) took \
             {:.1} s of the {:.1} s fill; heap {:.1} MB, mapped {:.1} MB (process RssFile \
             {:.1} MB)",
            limits.seal_at,
            found as f64 / (10 * queries) as f64,
            search_time.as_secs_f64() * 1e3 / queries as f64,
            warm.as_secs_f64() * 1e3 / queries as f64,
            exact_time.as_secs_f64() * 1e3 / queries as f64,
            idx.segments(),
            idx.fresh.len(),
            builds.len(),
            build_time.as_secs_f64(),
            fill.as_secs_f64(),
            idx.heap_bytes() as f64 / 1e6,
            idx.mapped_bytes() as f64 / 1e6,
            rss_file / 1e3,
        );
    }
}
