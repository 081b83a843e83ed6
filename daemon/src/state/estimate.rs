//! What indexing a large repository will cost, from its file count and the rates measured on two
//! cores (bench/RESULTS.md, "Large repositories: what `patina add` says first"). A large git
//! repository is indexed like any other; this is what its `patina add` says before it proceeds,
//! so nobody waits for an hour without knowing. Pure arithmetic: no I/O.

use std::time::Duration;

/// Above this many files (not counting ignored ones) `patina add` says what indexing will cost.
pub const LARGE_FILES: u64 = 50_000;

/// Chunks per indexed file, measured on real large trees (denoland/deno 5.0, the 100k-file tree
/// of nine repositories 5.5; small repositories have more: cobra 13, tokio 15).
const CHUNKS_PER_FILE: u64 = 6;
/// Lexical + symbol + graph indexing, release build, 2 cores: the 100k-file tree's 552,556
/// chunks in 153 s, deno's 74,220 in 21 s (~3,600/s; bench/RESULTS.md, twenty-second session).
const LEXICAL_CHUNKS_PER_S: u64 = 3_000;
/// The model's background pass (fp32, in the daemon, 2 cores, vector-index builds included):
/// deno's 74,220 chunks in 28.4 min (44 chunks/s).
const MODEL_CHUNKS_PER_S: u64 = 44;
/// The state on disk per chunk, no model: sled rows and records, the chunk log, the lexical
/// index, graph facts (the 100k-file tree: 790 MB for 552,556 chunks; deno: 102 MB for 74,220).
const DISK_BYTES_PER_CHUNK: u64 = 1_500;
/// What the model adds per chunk: its 8-bit vector in the embedding cache (428 bytes) and in the
/// vector index with its graph (deno: 53 MB for 74,220 chunks, ~720 bytes).
const MODEL_DISK_BYTES_PER_CHUNK: u64 = 1_150;
/// Resident memory while indexing: an empty daemon plus the chunk tables, store and writer heap
/// (the 100k-file tree's peak: 1,138 MiB at 552,556 chunks, no model).
const BASE_MEMORY: u64 = 150 << 20;
const MEMORY_BYTES_PER_CHUNK: u64 = 1_900;

/// The expected cost of indexing a repository of `files` files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Estimate {
    pub files: u64,
    pub chunks: u64,
    /// Until lexical and symbol search answer for the whole tree.
    pub lexical: Duration,
    /// Until every chunk has a model vector (static vectors answer before).
    pub model: Duration,
    /// On disk without the model's vectors, and what they add.
    pub disk_bytes: u64,
    pub model_disk_bytes: u64,
    pub memory_bytes: u64,
}

impl Estimate {
    pub fn of(files: u64) -> Estimate {
        let chunks = files * CHUNKS_PER_FILE;
        Estimate {
            files,
            chunks,
            lexical: Duration::from_secs(chunks.div_ceil(LEXICAL_CHUNKS_PER_S)),
            model: Duration::from_secs(chunks.div_ceil(MODEL_CHUNKS_PER_S)),
            disk_bytes: chunks * DISK_BYTES_PER_CHUNK,
            model_disk_bytes: chunks * MODEL_DISK_BYTES_PER_CHUNK,
            memory_bytes: BASE_MEMORY + chunks * MEMORY_BYTES_PER_CHUNK,
        }
    }

    /// The estimate for a repository of `files` files when it is large enough to be worth
    /// saying, else `None`.
    pub fn for_large(files: u64) -> Option<Estimate> {
        (files > LARGE_FILES).then(|| Estimate::of(files))
    }

    /// What `patina add` prints (`semantic`: the model is installed, so its pass follows).
    pub fn describe(&self, semantic: bool) -> String {
        let mut s = format!(
            "a large repository: {} files (about {} chunks). Expect lexical and symbol search \
             within about {}, about {} of index on disk and up to about {} of memory while it \
             indexes",
            thousands(self.files),
            thousands(self.chunks),
            duration(self.lexical),
            bytes(self.disk_bytes + if semantic { self.model_disk_bytes } else { 0 }),
            bytes(self.memory_bytes),
        );
        if semantic {
            s.push_str(&format!(
                "; the model's vectors follow in the background in about {} (static vectors \
                 answer meanwhile)",
                duration(self.model)
            ));
        }
        s.push_str(
            ". Vendored and generated files are indexed last; a `.patinaignore` leaves out what \
             you never search.",
        );
        s
    }
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Rounded up to what a person plans by: minutes below two hours, then hours.
pub(crate) fn duration(d: Duration) -> String {
    let minutes = d.as_secs().div_ceil(60).max(1);
    if minutes < 120 {
        format!("{minutes} min")
    } else {
        format!("{:.1} h", minutes as f64 / 60.0)
    }
}

fn bytes(n: u64) -> String {
    const GIB: f64 = (1u64 << 30) as f64;
    const MIB: f64 = (1u64 << 20) as f64;
    if n as f64 >= GIB {
        format!("{:.1} GiB", n as f64 / GIB)
    } else {
        format!("{:.0} MiB", n as f64 / MIB)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_repositories_get_no_estimate() {
        assert_eq!(Estimate::for_large(LARGE_FILES), None);
        assert!(Estimate::for_large(LARGE_FILES + 1).is_some());
    }

    #[test]
    fn the_estimate_grows_with_the_tree_and_reads_in_units_people_plan_by() {
        let e = Estimate::of(100_000);
        assert_eq!(e.chunks, 600_000);
        // The 100k-file tree's 552,556 chunks took 153 s.
        assert_eq!(e.lexical, Duration::from_secs(200));
        assert!(e.model > Duration::from_secs(3 * 3600));
        let text = e.describe(true);
        assert!(text.contains("100,000 files"), "{text}");
        assert!(text.contains("about 600,000 chunks"), "{text}");
        assert!(text.contains("within about 4 min"), "{text}");
        assert!(text.contains("3.8 h"), "{text}");
        // 1,500 + 1,150 bytes a chunk with the model, 1,500 without.
        assert!(text.contains("1.5 GiB"), "{text}");
        assert!(e.describe(false).contains("0.8 GiB") || e.describe(false).contains("858 MiB"));
        assert!(!Estimate::of(60_000).describe(false).contains("model"));
        assert!(Estimate::of(200_000).lexical > e.lexical);
    }

    #[test]
    fn numbers_are_grouped_by_thousands() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(60_000), "60,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
