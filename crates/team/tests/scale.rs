//! The store at the scale of a 100k-file tree (issue 66, item 6), without the model: synthetic
//! files, chunks and unit vectors through the same `SharedStore` calls a daemon makes, against
//! a real server. A benchmark, not a test of behaviour: ignored by default, and it needs a server.
//!
//! ```sh
//! python3 tests/pg_server.py /tmp/pg-scale        # prints its socket_dir and port
//! PATINA_TEAM_BENCH_URL="host=/tmp/pg-scale/data port=5432 user=postgres dbname=postgres" \
//!   PATINA_TEAM_BENCH_FILES=100000 \
//!   cargo test --release -p patina-team --test scale -- --ignored --nocapture
//! ```
//!
//! Vectors are uniform on the sphere: harder for an HNSW graph than a model's (which cluster),
//! so search figures are on the slow side.
//!
//! With `PATINA_TEAM_BENCH_TREE=DIR` (a git work tree, e.g. the 100k-file tree of
//! `bench/large_repo.py prepare`) the files and their text are the tree's own: every tracked file
//! that is UTF-8 and at most 1 MiB, cut into windows of 20 lines (chunks as many as Patina makes of
//! that tree, within a tenth), so the full-text figures meet a real vocabulary. The questions are
//! then real ones too.

use std::time::{Duration, Instant};

use patina_team::{Chunk, CommitHead, FileContent, Key, OrgQuery, Postgres, SharedStore, file_key};

const DIM: usize = 384;
/// Questions for a real tree (those of `bench/large_repo.py`), and identifiers.
const QUESTIONS: &[&str] = &[
    "how are command line flags parsed",
    "where is the configuration file loaded",
    "retry a failed request",
    "how are permissions checked before reading a file",
    "main",
    "Error",
    "parse",
    "handler",
    "config",
];
const WORDS: &[&str] = &[
    "buffer", "request", "timeout", "parse", "config", "socket", "retry", "handler", "stream",
    "cache", "token", "error", "index", "worker", "channel", "schedule", "reader", "writer",
    "runtime", "future", "signal", "encode", "decode", "session",
];

/// A small deterministic generator (xorshift), so every run sends the same content.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn unit(&mut self) -> f32 {
        (self.next() >> 11) as f32 / (1u64 << 53) as f32
    }

    /// A vector uniform on the unit sphere (Box-Muller, then normalised).
    fn vector(&mut self) -> Vec<f32> {
        let mut v: Vec<f32> = (0..DIM)
            .map(|_| {
                let (u, w) = (self.unit().max(1e-9), self.unit());
                (-2.0 * u.ln()).sqrt() * (std::f32::consts::TAU * w).cos()
            })
            .collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter_mut().for_each(|x| *x /= n);
        v
    }

    fn words(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| WORDS[(self.next() % WORDS.len() as u64) as usize])
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The words of a question that carry meaning (the stop words of these questions left out).
fn q_words(text: &str) -> Vec<String> {
    const STOP: &[&str] = &["how", "are", "the", "where", "is", "before", "a"];
    text.split(' ')
        .map(str::to_lowercase)
        .filter(|w| !STOP.contains(&w.as_str()))
        .collect()
}

fn key(i: u64) -> Key {
    *blake3::hash(&i.to_le_bytes()).as_bytes()
}

fn secs(d: Duration) -> f64 {
    (d.as_secs_f64() * 10.0).round() / 10.0
}

#[test]
#[ignore = "a benchmark: needs PATINA_TEAM_BENCH_URL (a PostgreSQL with pgvector)"]
fn store_at_the_scale_of_a_large_tree() {
    let url = std::env::var("PATINA_TEAM_BENCH_URL").expect("PATINA_TEAM_BENCH_URL");
    let files: u64 = std::env::var("PATINA_TEAM_BENCH_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // The tree's files (tracked, UTF-8, at most 1 MiB), when one is given.
    let tree = std::env::var("PATINA_TEAM_BENCH_TREE").ok().map(|dir| {
        let root = std::path::PathBuf::from(dir);
        let out = std::process::Command::new("git")
            .args(["ls-files", "-z"])
            .current_dir(&root)
            .output()
            .unwrap();
        let paths: Vec<String> = out
            .stdout
            .split(|b| *b == 0)
            .filter_map(|p| std::str::from_utf8(p).ok())
            .filter(|p| !p.is_empty())
            .filter(|p| {
                let full = root.join(p);
                std::fs::metadata(&full).is_ok_and(|m| m.is_file() && m.len() <= 1 << 20)
                    && std::fs::read(&full)
                        .is_ok_and(|b| !b.contains(&0) && std::str::from_utf8(&b).is_ok())
            })
            .map(str::to_string)
            .collect();
        (root, paths)
    });
    let files = tree.as_ref().map_or(files, |t| t.1.len() as u64);
    let store = Postgres::new(&url, Duration::from_secs(600), DIM, None).unwrap();
    let mut rng = Rng(0x9e3779b97f4a7c15);
    let head = CommitHead {
        remote: "bench.example/large/tree".into(),
        name: "large/tree".into(),
        sha: "0".repeat(40),
        model: "bench".into(),
        readers: vec![],
    };
    rt.block_on(async {
        let t0 = Instant::now();
        let begun = store.begin(&head).await.unwrap();
        let mut list: Vec<(String, Key)> = Vec::new();
        let mut all_keys: Vec<Key> = Vec::new();
        let mut chunks = 0usize;
        let (mut t_files, mut t_vectors) = (Duration::ZERO, Duration::ZERO);
        let mut batch: Vec<FileContent> = Vec::new();
        let mut vectors: Vec<(Key, Vec<f32>)> = Vec::new();
        // A daemon knows how many vectors it sends before it sends them; this one, about 5.5 a
        // file.
        let bulk = store
            .load_begin(&begun, files as usize * 11 / 2)
            .await
            .unwrap();
        for f in 0..files {
            let mut cs = Vec::new();
            let path = match &tree {
                Some((root, paths)) => {
                    let path = paths[f as usize].clone();
                    let text = std::fs::read_to_string(root.join(&path)).unwrap_or_default();
                    let lines: Vec<&str> = text.lines().collect();
                    for (c, window) in lines.chunks(20).enumerate() {
                        let id = chunks as u64;
                        chunks += 1;
                        let start = c as u32 * 20 + 1;
                        cs.push(Chunk {
                            path: path.clone(),
                            start_line: start,
                            end_line: start + window.len() as u32 - 1,
                            parent: String::new(),
                            symbol: format!("fn_{id}"),
                            kind: "function".into(),
                            vkey: key(id),
                            body: window.join("\n"),
                        });
                    }
                    path
                }
                None => {
                    let path = format!("src/m{}/f{f}.rs", f % 997);
                    // 5.5 chunks a file on average, as the 100k-file tree has (552k chunks).
                    let n = 3 + (rng.next() % 6) as u32;
                    for c in 0..n {
                        let id = chunks as u64;
                        chunks += 1;
                        cs.push(Chunk {
                            path: path.clone(),
                            start_line: c * 20 + 1,
                            end_line: c * 20 + 18,
                            parent: String::new(),
                            symbol: format!("fn_{id}"),
                            kind: "function".into(),
                            vkey: key(id),
                            body: rng.words(90),
                        });
                    }
                    path
                }
            };
            for c in &cs {
                vectors.push((c.vkey, rng.vector()));
                all_keys.push(c.vkey);
            }
            let k = file_key(&path, cs.iter().map(|c| (c.vkey, c.start_line, c.end_line)));
            list.push((path.clone(), k));
            // A few imports a file, as graph facts.
            let imports = (0..(rng.next() % 5))
                .map(|i| patina_core::Import {
                    module: format!("m{}", rng.next() % 997),
                    name: None,
                    alias: None,
                    line: i as u32 + 1,
                    reexport: false,
                })
                .collect();
            batch.push(FileContent {
                key: k,
                path,
                chunks: cs,
                facts: Some(patina_core::FileFacts {
                    imports,
                    ..Default::default()
                }),
            });
            if batch.len() == 500 || f + 1 == files {
                let t = Instant::now();
                store.put_files(&begun, &batch).await.unwrap();
                t_files += t.elapsed();
                batch.clear();
            }
            if vectors.len() >= 5_000 || f + 1 == files {
                let t = Instant::now();
                store.put_vectors(&begun, &vectors).await.unwrap();
                t_vectors += t.elapsed();
                vectors.clear();
            }
        }
        let t = Instant::now();
        store.load_end(&begun).await.unwrap();
        let t_index = t.elapsed();
        let t = Instant::now();
        assert!(store.commit(&begun, &list, chunks).await.unwrap());
        let t_commit = t.elapsed();
        let publish = t0.elapsed();
        println!(
            "publish: {files} files, {chunks} chunks in {} s (files {} s, vectors {} s, index \
             built once: {bulk}, {} s; commit {} s)",
            secs(publish),
            secs(t_files),
            secs(t_vectors),
            secs(t_index),
            secs(t_commit)
        );

        // A clone taking every vector, in the embedder's batches of 128.
        let t = Instant::now();
        let mut got = 0;
        for b in all_keys.chunks(128) {
            got += store.vectors("bench", b).await.unwrap().len();
        }
        assert_eq!(got, chunks);
        println!("take every vector, 128 a request: {} s", secs(t.elapsed()));

        org_questions(&store, &mut rng, tree.is_some(), chunks).await;
    });
}

/// Twenty `--org` questions (the real ones of [`QUESTIONS`] for a real tree, else random words),
/// each with a random vector and one definition's name; prints the median and the slowest.
async fn org_questions(store: &Postgres, rng: &mut Rng, real: bool, chunks: usize) {
    let mut took = Vec::new();
    for i in 0..20 {
        let text = if real {
            QUESTIONS[i % QUESTIONS.len()].to_string()
        } else {
            rng.words(6)
        };
        let q = OrgQuery {
            text: text.clone(),
            vector: Some(rng.vector()),
            model: "bench".into(),
            limit: 10,
            // As the daemon's query analysis gives them: no stop words.
            words: q_words(&text),
            names: vec![format!("fn_{}", rng.next() % chunks as u64)],
            skip: vec![],
        };
        let t = Instant::now();
        let hits = store.search(&q).await.unwrap();
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        println!("  {ms:.1} ms: {text}");
        took.push(ms);
        assert!(!hits.semantic.is_empty());
        assert!(real || !hits.lexical.is_empty());
        assert_eq!(hits.symbols.len(), 1);
    }
    took.sort_by(f64::total_cmp);
    println!(
        "org search (20 questions): median {:.1} ms, max {:.1} ms",
        took[took.len() / 2],
        took[took.len() - 1]
    );
}

/// Only the questions, against what an earlier run of the benchmark published (the same
/// `PATINA_TEAM_BENCH_TREE`, or none).
#[test]
#[ignore = "a benchmark: needs PATINA_TEAM_BENCH_URL and a store the benchmark published to"]
fn org_questions_on_a_published_store() {
    let url = std::env::var("PATINA_TEAM_BENCH_URL").expect("PATINA_TEAM_BENCH_URL");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let store = Postgres::new(&url, Duration::from_secs(600), DIM, None).unwrap();
    let real = std::env::var("PATINA_TEAM_BENCH_TREE").is_ok();
    rt.block_on(async {
        let published = store.published().await.unwrap();
        let chunks = published
            .iter()
            .find(|p| p.model == "bench")
            .expect("nothing the benchmark published")
            .chunks as usize;
        org_questions(&store, &mut Rng(0x9e3779b97f4a7c15), real, chunks).await;
    });
}
