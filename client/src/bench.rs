//! `patina bench retrieval`: quality (Recall@1/5/10, MRR@10, nDCG@10, file level) and latency
//! (p50/p95 of the query RPC) through the real daemon, on the same code path as `patina q`.
//! Query and corpus formats: see `bench/README.md`.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::Args;
use patina_proto::v1 as pb;
use serde::Deserialize;
use serde_json::json;

use crate::daemon::Client;

#[derive(Args)]
pub(crate) struct RetrievalArgs {
    /// Queries, JSON Lines: {"id", "query", "relevant": [{"path"}]}.
    #[arg(long)]
    queries: PathBuf,
    /// A directory to index as is, or a corpus JSON Lines file ({"path", "text"}) to materialise.
    #[arg(long)]
    corpus: PathBuf,
    /// An oracle subset to evaluate (comma-separated); repeat for one row per subset. Default: all.
    #[arg(long)]
    oracle: Vec<String>,
    /// Use only the first N queries.
    #[arg(long)]
    max_queries: Option<usize>,
    #[arg(long)]
    json: bool,
}

#[derive(Deserialize)]
struct Query {
    #[serde(default)]
    id: String,
    query: String,
    relevant: Vec<Relevant>,
}

#[derive(Deserialize)]
struct Relevant {
    path: String,
}

#[derive(Deserialize)]
struct Doc {
    path: String,
    text: String,
}

struct Row {
    oracles: String,
    n: usize,
    r1: f64,
    r5: f64,
    r10: f64,
    mrr10: f64,
    ndcg10: f64,
    p50_ms: f64,
    p95_ms: f64,
}

pub(crate) async fn retrieval(c: &mut Client, args: RetrievalArgs) -> Result<ExitCode> {
    let queries = read_queries(&args.queries, args.max_queries)?;
    let root = corpus_dir(&args.corpus)?;
    let info = c.add(&root, true).await?;
    let subsets: Vec<Vec<String>> = if args.oracle.is_empty() {
        vec![Vec::new()]
    } else {
        args.oracle
            .iter()
            .map(|s| {
                s.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect()
            })
            .collect()
    };
    if subsets
        .iter()
        .any(|s| s.is_empty() || s.iter().any(|o| o == "semantic"))
    {
        wait_for_embeddings(c, &info.id).await?;
    }
    let mut rows = Vec::new();
    for subset in subsets {
        rows.push(run_subset(c, &info.id, &queries, &subset).await?);
    }
    if args.json {
        let v: Vec<_> = rows
            .iter()
            .map(|r| {
                json!({"oracles": r.oracles, "queries": r.n, "recall@1": r.r1, "recall@5": r.r5, "recall@10": r.r10,
                       "mrr@10": r.mrr10, "ndcg@10": r.ndcg10, "latency_p50_ms": r.p50_ms, "latency_p95_ms": r.p95_ms})
            })
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(
                &json!({"corpus": info.root, "chunks": info.chunks, "rows": v})
            )?
        );
    } else {
        println!(
            "corpus {} ({} files, {} chunks), {} queries",
            info.root,
            info.files,
            info.chunks,
            queries.len()
        );
        println!(
            "{:<24} {:>6} {:>6} {:>6} {:>7} {:>8} {:>8} {:>8}",
            "oracles", "R@1", "R@5", "R@10", "MRR@10", "nDCG@10", "p50 ms", "p95 ms"
        );
        for r in &rows {
            println!(
                "{:<24} {:>6.3} {:>6.3} {:>6.3} {:>7.3} {:>8.3} {:>8.2} {:>8.2}",
                r.oracles, r.r1, r.r5, r.r10, r.mrr10, r.ndcg10, r.p50_ms, r.p95_ms
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn run_subset(
    c: &mut Client,
    repo: &str,
    queries: &[Query],
    oracles: &[String],
) -> Result<Row> {
    let (mut r1, mut r5, mut r10, mut mrr, mut ndcg) = (0.0, 0.0, 0.0, 0.0, 0.0);
    let mut lat = Vec::with_capacity(queries.len());
    for q in queries {
        let req = pb::QueryRequest {
            query: q.query.clone(),
            limit: 10,
            repos: vec![repo.to_string()],
            path_globs: Vec::new(),
            granularity: pb::Granularity::File as i32,
            oracles: oracles.to_vec(),
            snippet_lines: 0,
            ..Default::default()
        };
        let t0 = Instant::now();
        let resp = c
            .query(req)
            .await
            .map_err(crate::daemon::status_error)
            .with_context(|| format!("query {}", q.id))?;
        lat.push(t0.elapsed().as_secs_f64() * 1000.0);
        let relevant: HashSet<&str> = q.relevant.iter().map(|r| r.path.as_str()).collect();
        let ranked: Vec<&str> = resp.hits.iter().map(|h| h.path.as_str()).collect();
        let first = ranked.iter().position(|p| relevant.contains(p));
        if let Some(i) = first {
            r1 += (i < 1) as u8 as f64;
            r5 += (i < 5) as u8 as f64;
            r10 += (i < 10) as u8 as f64;
            if i < 10 {
                mrr += 1.0 / (i as f64 + 1.0);
            }
        }
        let dcg: f64 = ranked
            .iter()
            .take(10)
            .enumerate()
            .filter(|(_, p)| relevant.contains(*p))
            .map(|(i, _)| 1.0 / (i as f64 + 2.0).log2())
            .sum();
        let idcg: f64 = (0..relevant.len().min(10))
            .map(|i| 1.0 / (i as f64 + 2.0).log2())
            .sum();
        if idcg > 0.0 {
            ndcg += dcg / idcg;
        }
    }
    let n = queries.len().max(1) as f64;
    lat.sort_by(f64::total_cmp);
    Ok(Row {
        oracles: if oracles.is_empty() {
            "all".into()
        } else {
            oracles.join("+")
        },
        n: queries.len(),
        r1: r1 / n,
        r5: r5 / n,
        r10: r10 / n,
        mrr10: mrr / n,
        ndcg10: ndcg / n,
        p50_ms: percentile(&lat, 0.50),
        p95_ms: percentile(&lat, 0.95),
    })
}

/// Semantic rows are only meaningful once every chunk is embedded: wait for the backlog to drain.
async fn wait_for_embeddings(c: &mut Client, repo: &str) -> Result<()> {
    let h = c.health().await?;
    if !h.semantic_on {
        eprintln!("semantic search {}", h.semantic);
        return Ok(());
    }
    let t0 = Instant::now();
    let mut last_report = Instant::now();
    loop {
        let list = c.list().await?;
        let Some(r) = list.repos.iter().find(|r| r.id == repo) else {
            bail!("the corpus repository disappeared")
        };
        if r.embed_backlog == 0 {
            eprintln!(
                "embeddings ready: {} chunks ({:.0}s waited)",
                r.vectors,
                t0.elapsed().as_secs_f64()
            );
            return Ok(());
        }
        if last_report.elapsed().as_secs() >= 10 {
            eprintln!("waiting for embeddings: {} of {} done", r.vectors, r.chunks);
            last_report = Instant::now();
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i]
}

fn read_queries(path: &Path, max: Option<usize>) -> Result<Vec<Query>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let q: Query = serde_json::from_str(line)
            .with_context(|| format!("{}:{}: not a query", path.display(), i + 1))?;
        out.push(q);
    }
    if let Some(m) = max {
        out.truncate(m);
    }
    if out.is_empty() {
        bail!("{} holds no queries", path.display());
    }
    Ok(out)
}

/// A directory is used as is; a JSONL corpus is written out once under the state root, keyed by
/// its content hash, and reused by later runs.
fn corpus_dir(corpus: &Path) -> Result<PathBuf> {
    if corpus.is_dir() {
        return std::fs::canonicalize(corpus).context("resolving the corpus directory");
    }
    let bytes = std::fs::read(corpus).with_context(|| format!("reading {}", corpus.display()))?;
    let key = &blake3::hash(&bytes).to_hex()[..12];
    let dir = patina_proto::endpoint::state_root()
        .join("bench")
        .join(format!("corpus-{key}"));
    let done = dir.with_extension("complete");
    if done.exists() {
        return Ok(dir);
    }
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    let text = String::from_utf8(bytes).context("corpus is not UTF-8")?;
    let mut n = 0;
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let d: Doc = serde_json::from_str(line)
            .with_context(|| format!("{}:{}: not a document", corpus.display(), i + 1))?;
        let rel = Path::new(&d.path);
        if rel.is_absolute()
            || rel
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            bail!(
                "{}:{}: path '{}' escapes the corpus",
                corpus.display(),
                i + 1,
                d.path
            );
        }
        let p = dir.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&p, d.text)?;
        n += 1;
    }
    std::fs::write(&done, format!("{n}\n"))?;
    eprintln!("materialised {n} documents in {}", dir.display());
    Ok(dir)
}
