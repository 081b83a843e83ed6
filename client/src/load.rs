//! `patina bench load`: many clients querying one repository at once, each over its own
//! connection (as agents, editors and shells hold them), optionally while a file is rewritten
//! underneath; reports errors, latency percentiles and throughput. A benchmark, not a test.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use clap::Args;
use patina_proto::v1 as pb;
use serde_json::json;

use crate::daemon::Client;

#[derive(Args)]
pub(crate) struct LoadArgs {
    /// The repository to query (registered; a path, id or name).
    #[arg(long)]
    repo: String,
    /// Concurrent clients, each with its own connection.
    #[arg(long, default_value_t = 64)]
    clients: usize,
    /// Queries per client, one after the other.
    #[arg(long, default_value_t = 500)]
    queries: usize,
    /// Rewrite this file (inside the repository) every `--edit-ms` while the load runs.
    #[arg(long)]
    edit: Option<PathBuf>,
    #[arg(long, default_value_t = 100)]
    edit_ms: u64,
    #[arg(long)]
    json: bool,
}

/// The mix: identifiers, questions, a file-level question, single oracles.
fn mix(repo: &str, i: usize) -> pb::QueryRequest {
    let (text, oracles, granularity): (&str, &[&str], pb::Granularity) = match i % 7 {
        0 => ("parse_token_3", &[], pb::Granularity::Chunk),
        1 => ("how are items limited", &[], pb::Granularity::Chunk),
        2 => ("RenderCache12", &["symbol"], pb::Granularity::Chunk),
        3 => ("retry socket", &["lexical"], pb::Granularity::Chunk),
        4 => ("which module encodes vectors", &[], pb::Granularity::File),
        5 => ("schedule", &[], pb::Granularity::Chunk),
        _ => ("merge filter report", &[], pb::Granularity::Chunk),
    };
    pb::QueryRequest {
        query: text.into(),
        limit: 10,
        repos: vec![repo.into()],
        oracles: oracles.iter().map(|s| s.to_string()).collect(),
        granularity: granularity as i32,
        ..Default::default()
    }
}

fn pct(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

pub(crate) async fn run(socket: &Path, args: LoadArgs) -> Result<ExitCode> {
    if args.clients == 0 || args.queries == 0 {
        bail!("--clients and --queries must be at least 1");
    }
    let mut first = Client::connect_or_start(socket).await?;
    let repo = crate::scope::repo_key(&args.repo);
    let probe = first.query(mix(&repo, 0)).await;
    if let Err(s) = probe {
        bail!("cannot query '{}': {}", args.repo, s.message());
    }
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = args.edit.clone().map(|file| {
        let stop = stop.clone();
        let every = Duration::from_millis(args.edit_ms.max(1));
        tokio::spawn(async move {
            let mut i = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let _ =
                    tokio::fs::write(&file, format!("def edited_{i}():\n    return {i}\n")).await;
                i += 1;
                tokio::time::sleep(every).await;
            }
        })
    });
    let t0 = Instant::now();
    let mut tasks = Vec::with_capacity(args.clients);
    for c in 0..args.clients {
        let (socket, repo, n) = (socket.to_path_buf(), repo.clone(), args.queries);
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::with_capacity(n);
            let mut errors: Vec<String> = Vec::new();
            let mut client = match Client::connect(&socket).await {
                Ok(c) => c,
                Err(e) => return (lat, vec![format!("connect: {e:#}")]),
            };
            for q in 0..n {
                let t = Instant::now();
                let r = client.query(mix(&repo, c * 7 + q)).await;
                lat.push(t.elapsed().as_secs_f64() * 1000.0);
                if let Err(s) = r {
                    errors.push(format!("{:?}: {}", s.code(), s.message()));
                }
            }
            (lat, errors)
        }));
    }
    let mut lat: Vec<f64> = Vec::new();
    let mut errors: Vec<String> = Vec::new();
    for t in tasks {
        let (l, e) = t.await?;
        lat.extend(l);
        errors.extend(e);
    }
    let wall = t0.elapsed().as_secs_f64();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    if let Some(w) = writer {
        let _ = w.await;
    }
    lat.sort_by(f64::total_cmp);
    let out = json!({
        "clients": args.clients, "queries_each": args.queries, "queries": lat.len(),
        "errors": errors.len(), "error_examples": errors.iter().take(5).collect::<Vec<_>>(),
        "wall_s": wall, "queries_per_s": lat.len() as f64 / wall,
        "p50_ms": pct(&lat, 0.5), "p95_ms": pct(&lat, 0.95), "p99_ms": pct(&lat, 0.99),
        "max_ms": lat.last().copied().unwrap_or(f64::NAN),
    });
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        outln!(
            "{} clients x {} queries: {} errors; p50 {:.1} ms, p95 {:.1} ms, p99 {:.1} ms; {:.0} queries/s",
            args.clients,
            args.queries,
            errors.len(),
            pct(&lat, 0.5),
            pct(&lat, 0.95),
            pct(&lat, 0.99),
            lat.len() as f64 / wall
        );
    }
    Ok(if errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
