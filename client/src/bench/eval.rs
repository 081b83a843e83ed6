//! Run queries through the daemon, as `patina q` does, and evaluate each answer.

use std::collections::HashSet;
use std::time::Instant;

use anyhow::{Context, Result};
use patina_proto::v1 as pb;

use crate::bench::metrics::{Eval, FileHit, file_role, ndcg10};
use crate::bench::queries::{Query, Subset};
use crate::daemon::Client;

/// Hits asked for per query (file and chunk level); ranks beyond it are "not in top N".
pub(crate) const TOP_N: u32 = 10;

/// Run `which` queries with one subset: a file-level query (the metrics and latency) and a
/// chunk-level one (chunk nDCG@10) each.
pub(crate) async fn run_queries(
    c: &mut Client,
    repo: &str,
    queries: &[Query],
    which: &[usize],
    subset: &Subset,
    features: bool,
) -> Result<Vec<Eval>> {
    let mut out = Vec::with_capacity(which.len());
    for &qi in which {
        let q = &queries[qi];
        let req = |granularity: pb::Granularity| pb::QueryRequest {
            query: q.query.clone(),
            limit: TOP_N,
            repos: vec![repo.to_string()],
            path_globs: Vec::new(),
            granularity: granularity as i32,
            oracles: subset.oracles.clone(),
            snippet_lines: 0,
            ..Default::default()
        };
        let t0 = Instant::now();
        // With the features, the answer is the learned stage's whole pool (up to 30 files), at
        // the same oracle depth as the plain query: its first 10 are the plain answer.
        let mut file_req = req(pb::Granularity::File);
        file_req.features = features;
        let mut files = c
            .query(file_req)
            .await
            .map_err(crate::daemon::status_error)
            .with_context(|| format!("query {}", q.id))?;
        let latency_ms = t0.elapsed().as_secs_f64() * 1000.0;
        let t0 = Instant::now();
        let chunks = c
            .query(req(pb::Granularity::Chunk))
            .await
            .map_err(crate::daemon::status_error)
            .with_context(|| format!("query {}", q.id))?;
        let chunk_latency_ms = t0.elapsed().as_secs_f64() * 1000.0;

        let relevant: HashSet<&str> = q.relevant.iter().map(|r| r.path.as_str()).collect();
        let logged = features.then(|| feature_line(q, subset, &files.hits, &relevant));
        files.hits.truncate(TOP_N as usize);
        let ranked: Vec<&str> = files.hits.iter().map(|h| h.path.as_str()).collect();
        let chunk_paths: Vec<&str> = chunks.hits.iter().map(|h| h.path.as_str()).collect();
        out.push(Eval {
            query: qi,
            first: ranked.iter().position(|p| relevant.contains(p)),
            ranks: q
                .relevant
                .iter()
                .map(|r| (r.path.clone(), ranked.iter().position(|p| *p == r.path)))
                .collect(),
            hits: files
                .hits
                .iter()
                .map(|h| FileHit {
                    path: h.path.clone(),
                    role: file_role(h.role),
                    oracles: h
                        .provenance
                        .iter()
                        .map(|p| {
                            format!("{}#{}", patina_proto::kinds::oracle_name(p.oracle), p.rank)
                        })
                        .collect(),
                })
                .collect(),
            ndcg: ndcg10(&ranked, &relevant).min(1.0),
            chunk_ndcg: ndcg10(&chunk_paths, &relevant).min(1.0),
            latency_ms,
            chunk_latency_ms,
            features: logged,
        });
    }
    Ok(out)
}

/// One query's line of the `--features` file: the query, its relevant files, and each file hit
/// (today's order) with its features by name and whether it is relevant.
fn feature_line(
    q: &Query,
    subset: &Subset,
    hits: &[pb::Hit],
    relevant: &HashSet<&str>,
) -> serde_json::Value {
    let hits: Vec<serde_json::Value> = hits
        .iter()
        .map(|h| {
            let features: serde_json::Map<String, serde_json::Value> = h
                .features
                .iter()
                .filter_map(|f| {
                    let name = pb::RankFeature::try_from(f.feature).ok()?.as_str_name();
                    let name = name.strip_prefix("RANK_FEATURE_")?.to_lowercase();
                    Some((name, serde_json::json!(f.value)))
                })
                .collect();
            serde_json::json!({
                "path": h.path,
                "relevant": relevant.contains(h.path.as_str()),
                "features": features,
            })
        })
        .collect();
    serde_json::json!({
        "id": q.id,
        "query": q.query,
        "kind": q.kind,
        "commit": q.commit,
        "subset": subset.name,
        "relevant": q.relevant.iter().map(|r| &r.path).collect::<Vec<_>>(),
        "hits": hits,
    })
}
