use std::sync::Mutex;
use std::time::Duration;

use super::*;
use crate::store::Store;

/// A sink that keeps every commit's delta.
#[derive(Default)]
struct Recorder {
    deltas: Mutex<Vec<Delta>>,
}

impl RoundSink for Recorder {
    fn progress(&self, _: &Progress) {}

    fn committed(&self, delta: &Delta) -> Result<()> {
        self.deltas.lock().unwrap().push(delta.clone());
        Ok(())
    }
}

impl Recorder {
    /// Chunks added and removed since the last call, over all commits.
    fn take(&self) -> (BTreeSet<u64>, BTreeSet<u64>) {
        let deltas = std::mem::take(&mut *self.deltas.lock().unwrap());
        let added = deltas
            .iter()
            .flat_map(|d| d.added.iter().copied())
            .collect();
        let removed = deltas
            .iter()
            .flat_map(|d| d.removed.iter().copied())
            .collect();
        (added, removed)
    }
}

fn chunks_named(index: &RepoIndex, symbol: &str) -> BTreeSet<u64> {
    index.with_chunks(|c| {
        c.iter()
            .filter(|(_, m)| m.symbol.as_deref() == Some(symbol))
            .map(|(id, _)| *id)
            .collect()
    })
}

/// The index round without a daemon: a first round hands over every chunk it adds; a targeted
/// round after an edit only the edited file's chunks, old ones removed and new ones added; the
/// store, the chunk table and the lexical index agree all along.
/// A state directory with its store, and a tree where `alpha` (src/a.rs) calls `beta`
/// (src/b.rs).
fn alpha_calls_beta() -> (tempfile::TempDir, Store, tempfile::TempDir) {
    let state = tempfile::tempdir().unwrap();
    let tree = tempfile::tempdir().unwrap();
    let root = tree.path();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/a.rs"), "pub fn alpha() {\n    beta();\n}\n").unwrap();
    std::fs::write(root.join("src/b.rs"), "pub fn beta() {}\n").unwrap();
    let store = Store::open(&state.path().join("state")).unwrap();
    (state, store, tree)
}

fn open_index(state: &tempfile::TempDir, store: &Store, root: &std::path::Path) -> RepoIndex {
    RepoIndex::open(
        root.to_path_buf(),
        store.repo_trees("r").unwrap(),
        &state.path().join("lexical"),
    )
    .unwrap()
}

fn graph_opts() -> RoundOptions {
    RoundOptions {
        max_file_bytes: 1 << 20,
        max_chunk_lines: 150,
        rechunk: false,
        graph: true,
    }
}

/// A file record that points at a chunk whose row is gone (an earlier release's row without its
/// text is dropped when its store is opened) is read again by the next full round: the chunk
/// comes back, with its text, and nothing else changes.
#[test]
fn a_record_pointing_at_a_missing_chunk_is_read_again() {
    let (state, store, tree) = alpha_calls_beta();
    let sink = Recorder::default();
    let beta = {
        let index = open_index(&state, &store, tree.path());
        index
            .index_round(&graph_opts(), Scope::Full, &sink)
            .unwrap();
        let beta = *chunks_named(&index, "beta").first().unwrap();
        store.repo_trees("r").unwrap().drop_row(beta).unwrap();
        beta
    };
    let index = open_index(&state, &store, tree.path());
    assert!(index.chunk(beta).is_none());
    assert_eq!(index.audit().unwrap().dangling_records, 1);
    index
        .index_round(&graph_opts(), Scope::Full, &sink)
        .unwrap();
    assert!(index.audit().unwrap().is_clean());
    assert_eq!(chunks_named(&index, "beta"), BTreeSet::from([beta]));
    assert_eq!(
        index.text(beta).unwrap().as_deref(),
        Some("pub fn beta() {}")
    );
}

/// A large repository's resident graph is not rebuilt at each commit of a round (two graphs and
/// their facts at once, commit after commit): the round drops it; the next build has the round's
/// facts.
#[test]
fn a_large_graph_is_dropped_by_a_round_not_rebuilt_at_each_commit() {
    let (state, store, tree) = alpha_calls_beta();
    let index = open_index(&state, &store, tree.path());
    let sink = Recorder::default();
    index
        .index_round(&graph_opts(), Scope::Full, &sink)
        .unwrap();
    index.set_large_graph_chunks(0);
    let before = index.graph();
    assert!(index.graph_resident());
    let root = tree.path();
    std::fs::write(root.join("src/a.rs"), "pub fn alpha() {\n    gamma();\n}\n").unwrap();
    std::fs::write(root.join("src/b.rs"), "pub fn gamma() {}\n").unwrap();
    index
        .index_round(&graph_opts(), Scope::Full, &sink)
        .unwrap();
    assert!(!index.in_round());
    assert!(!index.graph_resident(), "dropped by the round");
    assert!(
        before.references("gamma", true).is_empty(),
        "a graph in use is left as it was"
    );
    assert!(!index.graph().references("gamma", true).is_empty());

    // A small repository's resident graph follows each commit.
    index.set_large_graph_chunks(usize::MAX);
    std::fs::write(root.join("src/a.rs"), "pub fn alpha() {\n    delta();\n}\n").unwrap();
    std::fs::write(root.join("src/b.rs"), "pub fn delta() {}\n").unwrap();
    index
        .index_round(&graph_opts(), Scope::Full, &sink)
        .unwrap();
    assert!(index.graph_resident());
    assert!(!index.graph().references("delta", true).is_empty());
}

/// A round that adds many chunks leaves the tables laid out afresh once, with the same rows
/// and the same symbols; a small edit after it does not trigger it again.
/// Whether the chunk table holds one path per file: every chunk of a file shares it.
fn one_path_per_file(index: &RepoIndex) -> bool {
    index.with_chunks(|c| {
        let mut by_file: HashMap<&str, &Arc<str>> = HashMap::new();
        c.values().all(|m| {
            let first = by_file.entry(&*m.path).or_insert(&m.path);
            Arc::ptr_eq(first, &m.path)
        })
    })
}

#[test]
fn after_bulk_growth_the_tables_are_laid_out_afresh_unchanged() {
    let (state, store, tree) = alpha_calls_beta();
    let root = tree.path();
    for f in 0..10 {
        let body: String = (0..6)
            .map(|i| format!("pub fn func_{f}_{i}() -> u32 {{\n    {i}\n}}\n\n"))
            .collect();
        std::fs::write(root.join(format!("src/m{f}.rs")), body).unwrap();
    }
    let index = open_index(&state, &store, root);
    let sink = Recorder::default();
    index
        .index_round(&graph_opts(), Scope::Full, &sink)
        .unwrap();
    let rows = index.with_chunks(|c| c.clone());
    let named = |i: &RepoIndex| {
        let mut v: Vec<(String, u64)> = i
            .symbols()
            .symbols()
            .map(|e| (e.key.to_string(), e.chunk_id))
            .collect();
        v.sort();
        v
    };
    let symbols = named(&index);
    assert!(rows.len() >= 60, "{} chunks", rows.len());
    assert!(one_path_per_file(&index), "as the round made them");

    assert!(index.repack_if_grown(), "60 new chunks: laid out afresh");
    assert_eq!(index.with_chunks(|c| c.clone()), rows);
    assert!(one_path_per_file(&index), "as laid out afresh");
    assert_eq!(named(&index), symbols);
    assert_eq!(chunks_named(&index, "func_3_4").len(), 1);
    assert!(!index.repack_if_grown(), "nothing added since");

    std::fs::write(
        root.join("src/b.rs"),
        "pub fn beta() {}\npub fn gamma() {}\n",
    )
    .unwrap();
    index
        .index_round(
            &graph_opts(),
            Scope::Paths(BTreeSet::from(["src/b.rs".to_string()])),
            &sink,
        )
        .unwrap();
    assert_eq!(chunks_named(&index, "gamma").len(), 1);
    assert!(
        !index.repack_if_grown(),
        "one file's chunks are not bulk growth"
    );
    let rows = index.with_chunks(|c| c.clone());
    drop(index);
    let reopened = open_index(&state, &store, root);
    assert_eq!(reopened.with_chunks(|c| c.clone()), rows);
    assert!(one_path_per_file(&reopened), "as loaded row by row");
}

#[test]
fn rounds_hand_over_exactly_what_they_change() {
    let (state, store, tree) = alpha_calls_beta();
    let root = tree.path();
    std::fs::write(root.join(".gitignore"), "ignored.rs\n").unwrap();
    std::fs::write(root.join("ignored.rs"), "pub fn hidden() {}\n").unwrap();
    let index = open_index(&state, &store, root);
    let mut opts = graph_opts();
    let sink = Recorder::default();

    let summary = index.index_round(&opts, Scope::Full, &sink).unwrap();
    assert_eq!(summary.files, 3, "a.rs, b.rs, .gitignore: {summary:?}");
    let (added, removed) = sink.take();
    assert!(removed.is_empty());
    assert_eq!(added.len(), index.chunk_count());
    assert_eq!(summary.chunks as usize, index.chunk_count());
    assert!(
        chunks_named(&index, "hidden").is_empty(),
        "ignored files are not indexed"
    );
    let beta = chunks_named(&index, "beta");
    assert_eq!(beta.len(), 1);

    // The graph: alpha calls beta (line 2).
    let callers: Vec<(String, u32)> = index
        .graph()
        .references("beta", true)
        .into_iter()
        .map(|e| (e.from.unwrap().symbol.to_string(), e.site.line))
        .collect();
    assert_eq!(callers, vec![("alpha".to_string(), 2)]);

    std::fs::write(root.join("src/b.rs"), "pub fn gamma_function() {}\n").unwrap();
    let scope = Scope::Paths(BTreeSet::from(["src/b.rs".to_string()]));
    index.index_round(&opts, scope, &sink).unwrap();
    let (added, removed) = sink.take();
    assert_eq!(removed, beta, "only the edited file's old chunks leave");
    assert_eq!(added, chunks_named(&index, "gamma_function"));
    assert!(chunks_named(&index, "beta").is_empty());
    assert!(
        index.graph().references("beta", true).is_empty(),
        "the edit's commit updated the graph"
    );
    std::fs::write(
        root.join("src/a.rs"),
        "pub fn alpha() {\n    gamma_function();\n}\n",
    )
    .unwrap();
    let scope = Scope::Paths(BTreeSet::from(["src/a.rs".to_string()]));
    index.index_round(&opts, scope, &sink).unwrap();
    sink.take();
    let graph = index.graph();
    let alpha = graph.defs("alpha").remove(0);
    let callees: Vec<String> = graph
        .calls_in(&alpha)
        .into_iter()
        .map(|e| e.to.symbol.to_string())
        .collect();
    assert_eq!(callees, vec!["gamma_function"]);
    assert_eq!(chunks_named(&index, "alpha").len(), 1);

    let mut in_lexical = index.lexical().chunk_ids().unwrap();
    in_lexical.sort_unstable();
    let live: Vec<u64> = index.with_chunks(|c| {
        let mut ids: Vec<u64> = c.keys().copied().collect();
        ids.sort_unstable();
        ids
    });
    assert_eq!(in_lexical, live, "one lexical document per live chunk");
    assert!(index.audit().unwrap().is_clean());

    // Nothing changed: a full round commits nothing.
    index.index_round(&opts, Scope::Full, &sink).unwrap();
    assert_eq!(sink.take(), (BTreeSet::new(), BTreeSet::new()));

    // New chunking rules: every file is chunked again although none changed. The same text
    // gives the same chunk ids, so the index ends where it was.
    opts.rechunk = true;
    let before = index.with_chunks(|c| c.keys().copied().collect::<BTreeSet<u64>>());
    let summary = index.index_round(&opts, Scope::Full, &sink).unwrap();
    let (added, _) = sink.take();
    assert_eq!(added, before, "every chunk was written again");
    assert_eq!(summary.chunks as usize, before.len());
    assert!(index.audit().unwrap().is_clean());

    // Graph extraction switched off: rechunked, the files keep their chunks and lose their
    // facts.
    opts.graph = false;
    index.index_round(&opts, Scope::Full, &sink).unwrap();
    assert_eq!(chunks_named(&index, "alpha").len(), 1);
    let graph = index.graph();
    assert!(graph.calls_in(&graph.defs("alpha").remove(0)).is_empty());
    assert!(graph.all_edges().is_empty());
}

/// What a walk passes over is accounted for: a file name that is not UTF-8 (escaped), a FIFO
/// and an unreadable directory each count under their reason, with the path as an example.
fn callers(index: &RepoIndex, name: &str) -> Vec<String> {
    index
        .graph()
        .references(name, true)
        .into_iter()
        .map(|e| e.from.unwrap().symbol.to_string())
        .collect()
}

/// The dependency graph is memory only while used: not built by indexing, built from the
/// store on first use, dropped when idle, and whatever changed while it was out of memory is
/// in the table built next; a resident graph follows each commit.
#[test]
fn the_graph_is_built_on_use_dropped_when_idle_and_never_stale() {
    let (state, store, tree) = alpha_calls_beta();
    let root = tree.path();
    let index = open_index(&state, &store, root);
    let opts = graph_opts();
    let sink = Recorder::default();
    index.index_round(&opts, Scope::Full, &sink).unwrap();
    assert!(!index.graph_resident(), "indexing does not build the graph");
    assert_eq!(callers(&index, "beta"), ["alpha"]);
    assert!(index.graph_resident());

    // Used just now: not idle.
    assert!(!index.release_idle_graph(Duration::from_secs(60)));
    assert!(index.release_idle_graph(Duration::ZERO));
    assert!(!index.graph_resident());

    // An edit while the graph is out of memory: the next build reads it from the store.
    std::fs::write(root.join("src/c.rs"), "pub fn gamma() {\n    beta();\n}\n").unwrap();
    let scope = Scope::Paths(BTreeSet::from(["src/c.rs".to_string()]));
    index.index_round(&opts, scope, &sink).unwrap();
    assert!(!index.graph_resident());
    assert_eq!(callers(&index, "beta"), ["alpha", "gamma"]);

    // Resident: an edit's commit updates it in place.
    std::fs::write(root.join("src/a.rs"), "pub fn alpha() {}\n").unwrap();
    let scope = Scope::Paths(BTreeSet::from(["src/a.rs".to_string()]));
    index.index_round(&opts, scope, &sink).unwrap();
    assert!(index.graph_resident());
    assert_eq!(callers(&index, "beta"), ["gamma"]);

    // Reopened (a daemon restart): nothing in memory until asked, then the same answer.
    drop(index);
    let index = open_index(&state, &store, root);
    assert!(!index.graph_resident());
    assert_eq!(callers(&index, "beta"), ["gamma"]);
}

#[test]
fn files_the_walk_passes_over_are_counted_with_a_reason() {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::PermissionsExt;
    let state = tempfile::tempdir().unwrap();
    let tree = tempfile::tempdir().unwrap();
    let root = tree.path();
    std::fs::write(root.join("ok.rs"), "pub fn fine() {}\n").unwrap();
    let bad = std::ffi::OsStr::from_bytes(b"bad\xffname.rs");
    std::fs::write(root.join(bad), "pub fn hidden() {}\n").unwrap();
    let fifo = std::ffi::CString::new(root.join("pipe").as_os_str().as_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    std::fs::create_dir(root.join("locked")).unwrap();
    std::fs::write(root.join("locked/x.rs"), "pub fn x() {}\n").unwrap();
    std::fs::set_permissions(root.join("locked"), std::fs::Permissions::from_mode(0o000)).unwrap();
    // root reads any directory: then there is no unreadable directory to count.
    let privileged = std::fs::read_dir(root.join("locked")).is_ok();
    let store = Store::open(&state.path().join("state")).unwrap();
    let index = RepoIndex::open(
        root.to_path_buf(),
        store.repo_trees("r").unwrap(),
        &state.path().join("lexical"),
    )
    .unwrap();
    let opts = RoundOptions {
        max_file_bytes: 1 << 20,
        max_chunk_lines: 150,
        rechunk: false,
        graph: true,
    };
    let summary = index
        .index_round(&opts, Scope::Full, &Recorder::default())
        .unwrap();
    std::fs::set_permissions(root.join("locked"), std::fs::Permissions::from_mode(0o700)).unwrap();
    let ex = |r: &str| summary.skipped_examples.get(r).cloned().unwrap_or_default();
    assert_eq!(summary.skipped.get("invalid_name"), Some(&1), "{summary:?}");
    assert_eq!(ex("invalid_name"), ["bad\\xffname.rs"]);
    assert_eq!(summary.skipped.get("not_regular"), Some(&1), "{summary:?}");
    assert_eq!(ex("not_regular"), ["pipe"]);
    if !privileged {
        assert_eq!(
            summary.skipped.get("unreadable_dir"),
            Some(&1),
            "{summary:?}"
        );
        assert_eq!(ex("unreadable_dir"), ["locked"]);
    }
    // A targeted round keeps the last walk's account.
    let scope = Scope::Paths(BTreeSet::from(["ok.rs".to_string()]));
    let again = index
        .index_round(&opts, scope, &Recorder::default())
        .unwrap();
    assert_eq!(again.skipped, summary.skipped);
}

/// A deleted directory named as one path (as watchers report it) takes every file recorded
/// below it out of the index, in a targeted round.
#[test]
fn a_deleted_directory_takes_its_files_along() {
    let state = tempfile::tempdir().unwrap();
    let tree = tempfile::tempdir().unwrap();
    let root = tree.path();
    std::fs::create_dir_all(root.join("pkg/inner")).unwrap();
    std::fs::write(root.join("pkg/inner/mod.rs"), "pub fn deep_one() {}\n").unwrap();
    std::fs::write(root.join("pkg/top.rs"), "pub fn deep_two() {}\n").unwrap();
    std::fs::write(root.join("pkgs.rs"), "pub fn sibling() {}\n").unwrap();
    let store = Store::open(&state.path().join("state")).unwrap();
    let index = RepoIndex::open(
        root.to_path_buf(),
        store.repo_trees("r").unwrap(),
        &state.path().join("lexical"),
    )
    .unwrap();
    let opts = RoundOptions {
        max_file_bytes: 1 << 20,
        max_chunk_lines: 150,
        rechunk: false,
        graph: true,
    };
    index
        .index_round(&opts, Scope::Full, &Recorder::default())
        .unwrap();
    std::fs::remove_dir_all(root.join("pkg")).unwrap();
    let scope = Scope::Paths(BTreeSet::from(["pkg".to_string()]));
    let summary = index
        .index_round(&opts, scope, &Recorder::default())
        .unwrap();
    assert_eq!(summary.files, 1, "{summary:?}");
    assert!(chunks_named(&index, "deep_one").is_empty());
    assert!(chunks_named(&index, "deep_two").is_empty());
    assert_eq!(chunks_named(&index, "sibling").len(), 1);
}

/// An overlay stands in for the file on disk while it is set (a path round reads it, even
/// though size and mtime are unchanged); once cleared, the next path round reads the disk
/// again and the buffer's symbols are gone.
#[test]
fn overlays_stand_in_for_the_disk_until_cleared() {
    let state = tempfile::tempdir().unwrap();
    let tree = tempfile::tempdir().unwrap();
    let root = tree.path();
    std::fs::write(root.join("a.rs"), "pub fn on_disk() {}\n").unwrap();
    let store = Store::open(&state.path().join("state")).unwrap();
    let index = RepoIndex::open(
        root.to_path_buf(),
        store.repo_trees("r").unwrap(),
        &state.path().join("lexical"),
    )
    .unwrap();
    let opts = RoundOptions {
        max_file_bytes: 1 << 20,
        max_chunk_lines: 150,
        rechunk: false,
        graph: true,
    };
    let sink = Recorder::default();
    let path_scope = || Scope::Paths(["a.rs".to_string()].into_iter().collect());
    index.index_round(&opts, Scope::Full, &sink).unwrap();
    assert_eq!(chunks_named(&index, "on_disk").len(), 1);

    index.set_overlay("a.rs", Some("pub fn in_buffer() {}\n".into()));
    index.index_round(&opts, path_scope(), &sink).unwrap();
    assert_eq!(chunks_named(&index, "in_buffer").len(), 1);
    assert!(chunks_named(&index, "on_disk").is_empty());
    // A full round keeps reading the overlay.
    index.index_round(&opts, Scope::Full, &sink).unwrap();
    assert_eq!(chunks_named(&index, "in_buffer").len(), 1);

    index.set_overlay("a.rs", None);
    assert_eq!(index.overlay_count(), 0);
    index.index_round(&opts, path_scope(), &sink).unwrap();
    assert_eq!(chunks_named(&index, "on_disk").len(), 1);
    assert!(chunks_named(&index, "in_buffer").is_empty());
}

#[test]
fn vendored_generated_and_built_files_are_deferred_and_first_party_code_is_not() {
    for rel in [
        "vendor/github.com/x/y.go",
        "third_party/zlib/inflate.c",
        "web/node_modules/left-pad/index.js",
        "Cargo.lock",
        "static/app.min.js",
        "packages/ui/dist/index.js",
    ] {
        assert!(deferred(rel), "{rel}");
    }
    for rel in [
        "src/main.rs",
        "cmd/dist/main.go",
        "lib/distance.py",
        "README.md",
        "tests/test_x.py",
    ] {
        assert!(!deferred(rel), "{rel}");
    }
}

#[test]
fn a_rounds_eta_counts_from_the_end_of_the_walk() {
    let mut p = Progress {
        phase: Phase::Walking,
        ..Default::default()
    };
    assert_eq!(p.eta(), None, "no pace while walking");
    p.phase = Phase::Indexing;
    p.files_total = 1_000;
    p.files_done = 250;
    p.indexing_since = Some(Instant::now() - Duration::from_secs(10));
    let eta = p.eta().expect("a pace after ten seconds");
    // 10 s for a quarter: 30 s for the rest (and the clock moved a little since).
    assert!(
        eta >= Duration::from_secs(30) && eta < Duration::from_secs(31),
        "{eta:?}"
    );
    p.phase = Phase::Done;
    assert_eq!(p.eta(), Some(Duration::ZERO));
}
