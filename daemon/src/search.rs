//! The query engine: validates a request, runs the selected oracles in parallel (each under a
//! timeout), fuses their rankings with weighted RRF, applies the result granularity and attaches
//! metadata and snippets. Knows nothing of gRPC.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::fusion::{Contribution, Ranking, rrf};
use crate::oracles::{Oracle, OracleHit, OracleQuery, Unavailable};
use crate::registry::{Registry, UserError};
use crate::repo::Repo;
use crate::store::ChunkMeta;

/// Queries longer than this are cut (with a notice): nothing useful is lost and cost stays bounded.
pub(crate) const MAX_QUERY_BYTES: usize = 8 * 1024;
pub(crate) const DEFAULT_LIMIT: usize = 10;
pub(crate) const MAX_LIMIT: usize = 1000;
const MAX_SNIPPET_LINES: usize = 200;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) enum Granularity {
    #[default]
    Chunk,
    File,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct SearchRequest {
    pub text: String,
    pub limit: usize,
    pub repos: Vec<String>,
    pub globs: Vec<String>,
    pub granularity: Granularity,
    pub oracles: Vec<String>,
    pub snippet_lines: usize,
}

pub(crate) struct SearchHit {
    pub repo: Arc<Repo>,
    pub meta: ChunkMeta,
    pub score: f64,
    pub provenance: Vec<Contribution>,
    pub snippet: String,
}

#[derive(Clone, Debug)]
pub(crate) struct OracleReport {
    pub oracle: &'static str,
    pub status: &'static str,
    pub hits: usize,
    pub took: Duration,
    pub message: String,
}

pub(crate) struct SearchResponse {
    pub hits: Vec<SearchHit>,
    pub reports: Vec<OracleReport>,
    pub took: Duration,
    pub notices: Vec<String>,
}

/// Path globs, gitignore-style: `*.rs` matches at any depth, `src/*.rs` is anchored at the root,
/// and a directory pattern (`src/index`) matches everything below it.
pub(crate) struct PathFilter {
    set: GlobSet,
}

impl PathFilter {
    pub fn new(globs: &[String]) -> Result<PathFilter> {
        let mut b = GlobSetBuilder::new();
        for g in globs {
            let g = g.trim().trim_start_matches("./");
            if g.is_empty() {
                continue;
            }
            let anchored = g.trim_start_matches('/');
            let pattern = if g.contains('/') {
                anchored.trim_end_matches('/').to_string()
            } else {
                format!("**/{g}")
            };
            for p in [pattern.clone(), format!("{pattern}/**")] {
                let glob = GlobBuilder::new(&p)
                    .literal_separator(true)
                    .build()
                    .map_err(|e| UserError::Invalid(format!("invalid path glob '{g}': {e}")))?;
                b.add(glob);
            }
        }
        Ok(PathFilter { set: b.build()? })
    }

    pub fn matches(&self, path: &str) -> bool {
        self.set.is_match(path)
    }

    /// A predicate over the chunk ids of `repo` that pass the filter, computed once per query.
    pub fn allowed_chunks(&self, repo: &Repo) -> Arc<dyn Fn(u64) -> bool + Send + Sync> {
        let chunks = repo.chunks.read().expect("chunks lock");
        let mut by_path: HashMap<&str, bool> = HashMap::new();
        let mut allowed = HashSet::new();
        for (id, m) in chunks.iter() {
            if *by_path
                .entry(m.path.as_str())
                .or_insert_with(|| self.matches(&m.path))
            {
                allowed.insert(*id);
            }
        }
        Arc::new(move |id| allowed.contains(&id))
    }
}

pub(crate) struct QueryEngine {
    registry: Arc<Registry>,
    oracles: Vec<Arc<dyn Oracle>>,
}

impl QueryEngine {
    pub fn new(registry: Arc<Registry>, oracles: Vec<Arc<dyn Oracle>>) -> QueryEngine {
        QueryEngine { registry, oracles }
    }

    pub fn oracle_names(&self) -> Vec<&'static str> {
        self.oracles.iter().map(|o| o.name()).collect()
    }

    pub async fn search(&self, mut req: SearchRequest) -> Result<SearchResponse> {
        let started = Instant::now();
        let mut notices = Vec::new();
        if req.text.trim().is_empty() {
            return Err(UserError::Invalid("empty query".into()).into());
        }
        if req.text.len() > MAX_QUERY_BYTES {
            let mut cut = MAX_QUERY_BYTES;
            while !req.text.is_char_boundary(cut) {
                cut -= 1;
            }
            req.text.truncate(cut);
            notices.push(format!(
                "query truncated to its first {MAX_QUERY_BYTES} bytes"
            ));
        }
        let limit = match req.limit {
            0 => DEFAULT_LIMIT,
            n => n.min(MAX_LIMIT),
        };
        let oracles: Vec<Arc<dyn Oracle>> = if req.oracles.is_empty() {
            self.oracles.clone()
        } else {
            let mut chosen = Vec::new();
            for name in &req.oracles {
                match self.oracles.iter().find(|o| o.name() == name) {
                    Some(o) => chosen.push(o.clone()),
                    None => {
                        return Err(UserError::Invalid(format!(
                            "unknown oracle '{name}' (available: {})",
                            self.oracle_names().join(", ")
                        ))
                        .into());
                    }
                }
            }
            chosen
        };
        let repos = if req.repos.is_empty() {
            self.registry.all()
        } else {
            let mut v: Vec<Arc<Repo>> = Vec::new();
            for key in &req.repos {
                let r = self.registry.resolve(key)?;
                if !v.iter().any(|x| x.id == r.id) {
                    v.push(r);
                }
            }
            v
        };
        if repos.is_empty() {
            notices.push("no repositories are registered; add one with `patina add PATH`".into());
        }
        let semantic_asked = oracles.iter().any(|o| o.name() == "semantic");
        for r in &repos {
            let backlog = crate::semantic::backlog(r);
            if semantic_asked && backlog > 0 {
                notices.push(format!(
                    "{}: {backlog} of {} chunks not embedded yet; semantic results are partial",
                    r.record().name,
                    r.chunks.read().expect("chunks lock").len()
                ));
            }
            if let Some(rx) = r.running_job() {
                let p = rx.borrow().clone();
                notices.push(format!(
                    "{} is being indexed ({}/{} files); results may be incomplete",
                    r.record().name,
                    p.files_done,
                    p.files_total
                ));
            }
        }
        let filter = if req.globs.iter().any(|g| !g.trim().is_empty()) {
            Some(Arc::new(PathFilter::new(&req.globs)?))
        } else {
            None
        };
        let cfg = &self.registry.config.retrieval;
        // File granularity folds chunks together, so ask for more of them.
        let per_oracle = limit
            * cfg.overfetch.max(1)
            * if req.granularity == Granularity::File {
                3
            } else {
                1
            };
        let q = Arc::new(OracleQuery {
            text: req.text.clone(),
            limit: per_oracle,
            repos: repos.clone(),
            filter,
        });

        let timeout = Duration::from_millis(cfg.oracle_timeout_ms);
        let tasks: Vec<_> = oracles
            .iter()
            .map(|o| {
                let (o, q) = (o.clone(), q.clone());
                tokio::spawn(async move {
                    let t0 = Instant::now();
                    let name = o.name();
                    let res = tokio::time::timeout(
                        timeout,
                        tokio::task::spawn_blocking(move || o.search(&q)),
                    )
                    .await;
                    (name, t0.elapsed(), res)
                })
            })
            .collect();
        let mut rankings = Vec::new();
        let mut reports = Vec::new();
        for t in tasks {
            let (name, took, res) = t.await?;
            let (status, message, hits): (&'static str, String, Vec<OracleHit>) = match res {
                Err(_) => (
                    "timeout",
                    format!("no answer within {} ms", timeout.as_millis()),
                    Vec::new(),
                ),
                Ok(Err(join)) => ("error", format!("oracle crashed: {join}"), Vec::new()),
                Ok(Ok(Err(e))) if e.is::<Unavailable>() => {
                    ("unavailable", e.to_string(), Vec::new())
                }
                Ok(Ok(Err(e))) => ("error", format!("{e:#}"), Vec::new()),
                Ok(Ok(Ok(hits))) => ("ok", String::new(), hits),
            };
            match status {
                "ok" => {}
                "unavailable" => notices.push(message.clone()),
                _ => tracing::warn!(oracle = name, status, "{message}"),
            }
            reports.push(OracleReport {
                oracle: name,
                status,
                hits: hits.len(),
                took,
                message,
            });
            rankings.push(Ranking {
                oracle: name,
                weight: cfg.weight(name),
                items: hits
                    .into_iter()
                    .map(|h| ((h.repo, h.chunk_id), h.score))
                    .collect(),
            });
        }

        let fused = rrf(&rankings, cfg.rrf_k);
        let mut hits = Vec::new();
        let mut seen_files: HashSet<(usize, String)> = HashSet::new();
        for f in fused {
            if hits.len() >= limit {
                break;
            }
            let (ri, chunk_id) = f.key;
            let repo = &repos[ri];
            let Some(meta) = repo.chunk(chunk_id) else {
                continue;
            };
            if req.granularity == Granularity::File && !seen_files.insert((ri, meta.path.clone())) {
                continue;
            }
            let snippet = if req.snippet_lines > 0 {
                let text = repo.trees.text(chunk_id)?.unwrap_or_default();
                text.lines()
                    .take(req.snippet_lines.min(MAX_SNIPPET_LINES))
                    .collect::<Vec<_>>()
                    .join("\n")
            } else {
                String::new()
            };
            hits.push(SearchHit {
                repo: repo.clone(),
                meta,
                score: f.score,
                provenance: f.provenance,
                snippet,
            });
        }
        Ok(SearchResponse {
            hits,
            reports,
            took: started.elapsed(),
            notices,
        })
    }
}
