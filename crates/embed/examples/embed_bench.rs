//! Embedding throughput on real code chunks.
//!
//! ```text
//! cargo run --release -p patina-embed --example embed_bench -- <corpus.jsonl> [N=512] [model_dir]
//! ```
//!
//! Embeds the `text` field of the first N lines of a JSONL corpus (e.g. /work/shared/eval/cosqa/corpus.jsonl)
//! with fp32 and int8, at 2 and 1 intra-op threads, in batches of 16, and prints chunks/s (wall clock) and
//! chunks per CPU-second (less sensitive to other load on the machine), plus single-query latency. The model is
//! `model_dir`, else `$PATINA_MODEL_DIR`, else `<state root>/models/all-MiniLM-L6-v2`.
//!
//! `EMBED_BENCH_ONLY=fp32` (or `int8`) runs that precision at 2 threads only — the daemon's bulk
//! configuration, for `bench/embed_rate.py --standalone`, which compares the two on the same texts.

use std::io::BufRead;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use patina_embed as embed;
use patina_embed::{Embedder, ModelPaths, Precision};

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let corpus = PathBuf::from(
        args.next()
            .context("usage: embed_bench <corpus.jsonl> [N=512] [model_dir]")?,
    );
    let n: usize = args
        .next()
        .map(|s| s.parse())
        .transpose()
        .context("N must be a number")?
        .unwrap_or(512);
    let paths = match args.next() {
        Some(dir) => ModelPaths::in_dir(dir),
        None => ModelPaths::locate(&state_root()),
    };
    if let Some(why) = paths.missing() {
        anyhow::bail!(why);
    }

    let file =
        std::fs::File::open(&corpus).with_context(|| format!("opening {}", corpus.display()))?;
    let mut texts = Vec::with_capacity(n);
    for line in std::io::BufReader::new(file).lines().take(n) {
        let v: serde_json::Value = serde_json::from_str(&line?)?;
        texts.push(
            v["text"]
                .as_str()
                .context("a line without `text`")?
                .to_owned(),
        );
    }
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    println!(
        "model: {}  runtime: {}",
        paths.model_dir.display(),
        paths.ort_lib.display()
    );
    println!(
        "corpus: {} chunks from {}; load average {}",
        refs.len(),
        corpus.display(),
        loadavg()
    );

    let only = match std::env::var("EMBED_BENCH_ONLY").ok().as_deref() {
        None | Some("") => None,
        Some("fp32") => Some(Precision::Fp32),
        Some("int8") => Some(Precision::Int8),
        Some(other) => anyhow::bail!("EMBED_BENCH_ONLY must be fp32 or int8, not {other:?}"),
    };
    // EMBED_BENCH_BUDGET=N: the attention budget (texts × longest², tokens) instead of the default.
    let budget: Option<usize> = std::env::var("EMBED_BENCH_BUDGET")
        .ok()
        .map(|s| s.parse())
        .transpose()
        .context("EMBED_BENCH_BUDGET must be a number")?;
    let mut vectors: Vec<Vec<[f32; embed::DIM]>> = Vec::new();
    for precision in [Precision::Fp32, Precision::Int8] {
        if only.is_some_and(|p| p != precision) {
            continue;
        }
        for threads in [2, 1] {
            if only.is_some() && threads != 2 {
                continue;
            }
            let mut e = Embedder::load(&paths, precision, threads)?.with_max_batch(16);
            if let Some(b) = budget {
                e = e.with_attention_budget(b);
            }
            if threads == 1 {
                vectors.push(e.embed(&refs)?);
            }
            if threads == 2 && precision == Precision::Fp32 {
                let counts: Vec<usize> = refs
                    .iter()
                    .map(|t| e.token_count(t))
                    .collect::<Result<_>>()?;
                let capped = counts.iter().filter(|&&c| c == embed::MAX_TOKENS).count();
                println!(
                    "tokens/chunk: mean {:.0}, truncated at {}: {capped}",
                    counts.iter().sum::<usize>() as f64 / counts.len().max(1) as f64,
                    embed::MAX_TOKENS
                );
            }
            e.embed(&refs[..refs.len().min(16)])?; // warm-up: first run allocates the arena
            let (wall, cpu) = timed(|| e.embed(&refs).map(drop))?;
            let mut lat = Vec::new();
            for _ in 0..30 {
                let (w, _) = timed(|| e.embed(&["how do I parse a config file"]).map(drop))?;
                lat.push(w);
            }
            lat.sort();
            println!(
                "{precision:?} threads={threads} batch=16: {:6.1} chunks/s  {:5.1} chunks/CPU-s  ({:.1} s wall, {:.1} s CPU)  query p50 {:.1} ms",
                refs.len() as f64 / wall.as_secs_f64(),
                refs.len() as f64 / cpu.as_secs_f64().max(1e-9),
                wall.as_secs_f64(),
                cpu.as_secs_f64(),
                lat[lat.len() / 2].as_secs_f64() * 1e3,
            );
        }
    }
    println!("peak resident (VmHWM): {}", peak_resident());
    if vectors.len() < 2 {
        return Ok(());
    }
    let cos: Vec<f32> = vectors[0]
        .iter()
        .zip(&vectors[1])
        .map(|(a, b)| embed::cosine(a, b))
        .collect();
    println!(
        "int8 vs fp32 cosine on these chunks: mean {:.4}, min {:.4}",
        cos.iter().sum::<f32>() / cos.len().max(1) as f32,
        cos.iter().copied().fold(f32::INFINITY, f32::min)
    );
    Ok(())
}

/// Wall-clock and process CPU time of `f`.
fn timed(f: impl FnOnce() -> Result<()>) -> Result<(Duration, Duration)> {
    let (w0, c0) = (Instant::now(), cpu_time());
    f()?;
    Ok((w0.elapsed(), cpu_time().saturating_sub(c0)))
}

fn cpu_time() -> Duration {
    // SAFETY: getrusage only writes the struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

/// `$PATINA_HOME`, else `$XDG_DATA_HOME/patina`, else `~/.local/share/patina` (what the daemon uses on Linux).
fn state_root() -> PathBuf {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    env("PATINA_HOME")
        .or_else(|| env("XDG_DATA_HOME").map(|d| d.join("patina")))
        .or_else(|| env("HOME").map(|h| h.join(".local/share/patina")))
        .unwrap_or_else(|| std::env::temp_dir().join("patina"))
}

/// The process's peak resident memory, as `/proc/self/status` says it.
fn peak_resident() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .map(|l| l["VmHWM:".len()..].trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}
