//! The report: a table of rows (or JSON), the roles of the misses' top files, and with
//! `--verbose` every miss.

use std::collections::BTreeMap;

use anyhow::Result;
use patina_proto::v1 as pb;
use serde_json::{Value, json};

use crate::bench::args::RetrievalArgs;
use crate::bench::eval::TOP_N;
use crate::bench::metrics::{Eval, miss_roles, row};
use crate::bench::queries::{Query, Subset};
use crate::bench::repo::RepoRun;

fn excerpt(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let cut: String = flat.chars().take(max).collect();
    format!("{cut}…")
}

pub(crate) fn report(
    args: &RetrievalArgs,
    info: &pb::RepoInfo,
    queries: &[Query],
    subsets: &[Subset],
    evals: &[Vec<Eval>],
    repo_run: Option<&RepoRun>,
) -> Result<()> {
    let mut kinds: Vec<&str> = Vec::new();
    for q in queries {
        if !kinds.contains(&q.kind.as_str()) {
            kinds.push(&q.kind);
        }
    }
    let mut rows = Vec::new();
    for (s, subset) in subsets.iter().enumerate() {
        let all: Vec<&Eval> = evals[s].iter().collect();
        rows.push(row(&subset.name, None, &all));
        if kinds.len() > 1 {
            for k in &kinds {
                let of_kind: Vec<&Eval> = evals[s]
                    .iter()
                    .filter(|e| queries[e.query].kind == *k)
                    .collect();
                rows.push(row(&subset.name, Some(k), &of_kind));
            }
        }
    }
    let roles: Vec<BTreeMap<&'static str, usize>> = evals.iter().map(|e| miss_roles(e)).collect();
    if args.json {
        let rows_json: Vec<Value> = rows
            .iter()
            .map(|r| {
                json!({"oracles": r.oracles, "kind": r.kind, "queries": r.n, "recall@1": r.r1, "recall@5": r.r5,
                       "recall@10": r.r10, "mrr@10": r.mrr10, "ndcg@10": r.ndcg10, "chunk_ndcg@10": r.chunk_ndcg10,
                       "latency_p50_ms": r.p50_ms, "latency_p95_ms": r.p95_ms})
            })
            .collect();
        let subsets_json: Vec<Value> = subsets
            .iter()
            .enumerate()
            .map(|(s, subset)| {
                let results: Vec<Value> = evals[s].iter().map(|e| eval_json(e, queries)).collect();
                json!({"oracles": subset.name, "miss_top1_roles": roles[s],
                       "misses": evals[s].iter().filter(|e| e.is_miss()).count(), "queries": results})
            })
            .collect();
        let mut out = json!({"corpus": info.root, "files": info.files, "chunks": info.chunks,
                             "kinds": kinds, "rows": rows_json, "subsets": subsets_json});
        if let Some(r) = repo_run {
            out["repo"] = json!({
                "root": r.root, "original_head": r.original_head, "checkouts": r.commits,
                "initial_index_s": r.initial_index_s,
                "catch_up_total_s": r.catch_up_s.iter().sum::<f64>(),
                "catch_up_max_s": r.catch_up_s.iter().copied().fold(0.0, f64::max),
                "catch_up_s": r.catch_up_s,
            });
        }
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    match repo_run {
        Some(r) => {
            outln!(
                "repository {} ({} files, {} chunks at the first commit), {} queries at {} commits",
                r.root,
                info.files,
                info.chunks,
                queries.len(),
                r.commits
            );
            let total: f64 = r.catch_up_s.iter().sum();
            let max = r.catch_up_s.iter().copied().fold(0.0, f64::max);
            outln!(
                "index: initial {:.1}s; catch-up after {} checkouts {:.1}s in total (max {:.1}s)",
                r.initial_index_s,
                r.commits,
                total,
                max
            );
        }
        None => outln!(
            "corpus {} ({} files, {} chunks), {} queries",
            info.root,
            info.files,
            info.chunks,
            queries.len()
        ),
    }
    outln!(
        "{:<24} {:>6} {:>6} {:>6} {:>7} {:>8} {:>9} {:>8} {:>8}",
        "oracles",
        "R@1",
        "R@5",
        "R@10",
        "MRR@10",
        "nDCG@10",
        "c-nDCG@10",
        "p50 ms",
        "p95 ms"
    );
    for r in &rows {
        let label = match &r.kind {
            Some(k) => format!("  {k} ({})", r.n),
            None => r.oracles.clone(),
        };
        outln!(
            "{:<24} {:>6.3} {:>6.3} {:>6.3} {:>7.3} {:>8.3} {:>9.3} {:>8.2} {:>8.2}",
            label,
            r.r1,
            r.r5,
            r.r10,
            r.mrr10,
            r.ndcg10,
            r.chunk_ndcg10,
            r.p50_ms,
            r.p95_ms
        );
    }
    outln!("(file level; c-nDCG@10: chunk-level hits, a chunk relevant when its file is)");
    outln!("top-1 file of the misses (relevant file not at rank 1), by role:");
    for (s, subset) in subsets.iter().enumerate() {
        let misses = evals[s].iter().filter(|e| e.is_miss()).count();
        let parts: Vec<String> = roles[s]
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(role, n)| format!("{role} {n}"))
            .collect();
        outln!(
            "{:<24} {misses} misses: {}",
            subset.name,
            if parts.is_empty() {
                "-".into()
            } else {
                parts.join(", ")
            }
        );
    }
    if args.verbose {
        for (s, subset) in subsets.iter().enumerate() {
            outln!("\n== misses: {} ==", subset.name);
            for e in evals[s].iter().filter(|e| e.is_miss()) {
                print_miss(e, queries);
            }
        }
    }
    Ok(())
}

fn print_miss(e: &Eval, queries: &[Query]) {
    let q = &queries[e.query];
    let at = q
        .commit
        .as_deref()
        .map(|c| format!(" @{}", &c[..c.len().min(10)]))
        .unwrap_or_default();
    outln!("\n{}{at}: {}", q.id, excerpt(&q.query, 110));
    for (path, rank) in &e.ranks {
        match rank {
            Some(i) => outln!("  relevant #{:<2} {path}", i + 1),
            None => outln!("  relevant --  {path} (not in top {TOP_N})"),
        }
    }
    if e.hits.is_empty() {
        outln!("  no hits");
    }
    for (i, h) in e.hits.iter().take(3).enumerate() {
        outln!(
            "  top {}. {} [{}] {}",
            i + 1,
            h.path,
            h.role.name(),
            h.oracles.join(" ")
        );
    }
}

fn eval_json(e: &Eval, queries: &[Query]) -> Value {
    let q = &queries[e.query];
    json!({
        "id": q.id,
        "kind": q.kind,
        "commit": q.commit,
        "rank": e.first.map(|i| i + 1),
        "ndcg@10": e.ndcg,
        "chunk_ndcg@10": e.chunk_ndcg,
        "latency_ms": e.latency_ms,
        "chunk_latency_ms": e.chunk_latency_ms,
        "relevant": e.ranks.iter().map(|(p, r)| json!({"path": p, "rank": r.map(|i| i + 1)})).collect::<Vec<_>>(),
        "hits": e.hits.iter().map(|h| json!({"path": h.path, "role": h.role.name(), "oracles": h.oracles})).collect::<Vec<_>>(),
    })
}
