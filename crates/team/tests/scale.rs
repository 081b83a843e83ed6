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

use std::time::{Duration, Instant};

use patina_team::{Chunk, CommitHead, FileContent, Key, OrgQuery, Postgres, SharedStore, file_key};

const DIM: usize = 384;
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
        for f in 0..files {
            let path = format!("src/m{}/f{f}.rs", f % 997);
            // 5.5 chunks a file on average, as the 100k-file tree has (552k chunks).
            let n = 3 + (rng.next() % 6) as u32;
            let mut cs = Vec::new();
            for c in 0..n {
                let id = chunks as u64;
                chunks += 1;
                let vkey = key(id);
                cs.push(Chunk {
                    path: path.clone(),
                    start_line: c * 20 + 1,
                    end_line: c * 20 + 18,
                    parent: String::new(),
                    symbol: format!("fn_{id}"),
                    kind: "function".into(),
                    vkey,
                    body: rng.words(90),
                });
                vectors.push((vkey, rng.vector()));
                all_keys.push(vkey);
            }
            let k = file_key(&path, cs.iter().map(|c| (c.vkey, c.start_line, c.end_line)));
            list.push((path.clone(), k));
            batch.push(FileContent {
                key: k,
                path,
                chunks: cs,
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
        assert!(store.commit(&begun, &list, chunks).await.unwrap());
        let t_commit = t.elapsed();
        let publish = t0.elapsed();
        println!(
            "publish: {files} files, {chunks} chunks in {} s (files {} s, vectors {} s, commit {} s)",
            secs(publish),
            secs(t_files),
            secs(t_vectors),
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

        // --org questions: full text and nearest neighbours over the newest commit.
        let mut took = Vec::new();
        for _ in 0..20 {
            let q = OrgQuery {
                text: rng.words(6),
                vector: Some(rng.vector()),
                model: "bench".into(),
                limit: 10,
                skip: vec![],
            };
            let t = Instant::now();
            let hits = store.search(&q).await.unwrap();
            took.push(t.elapsed().as_secs_f64() * 1000.0);
            assert!(!hits.semantic.is_empty() && !hits.lexical.is_empty());
        }
        took.sort_by(f64::total_cmp);
        println!(
            "org search (20 questions): median {:.1} ms, max {:.1} ms",
            took[took.len() / 2],
            took[took.len() - 1]
        );
    });
}
