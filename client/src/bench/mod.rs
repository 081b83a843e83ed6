//! `patina bench retrieval`: quality (Recall@1/5/10, MRR@10, nDCG@10 at file level, nDCG@10 at
//! chunk level) and latency (p50/p95 of the query RPC) through the real daemon, on the same code
//! path as `patina q`.
//!
//! Two kinds of query sets:
//! - a corpus (`--corpus`): a directory indexed as is, or a JSON Lines file of documents;
//! - a real repository (`--repo-dir CLONE`): every query carries the `commit` to evaluate at. The
//!   clone is registered, the commits are visited in commit-date order (`git checkout -qf`), the
//!   daemon's live index follows each checkout and is awaited through the read-your-writes
//!   mechanism (`fresh_timeout_ms`) before the queries of that commit run. The original HEAD is
//!   restored at the end.
//!
//! Formats: see the `bench retrieval` section of README.md and `/work/shared/eval/README.md`.

//!
//! The modules: `args`, `context` (`patina bench context`), `queries` (the query set and the oracle subsets), `eval` (queries through
//! the daemon), `metrics`, `corpus`, `repo` (`--repo-dir`), `wait` (background work), `report`.
//! This file only runs them in order.

pub(crate) mod args;
pub(crate) mod context;
mod corpus;
mod eval;
mod metrics;
mod queries;
mod repo;
mod report;
mod wait;

use std::process::ExitCode;

use anyhow::{Result, bail};

use crate::bench::args::RetrievalArgs;
use crate::bench::corpus::corpus_dir;
use crate::bench::eval::run_queries;
use crate::bench::metrics::Eval;
use crate::bench::queries::{Subset, read_queries, subsets};
use crate::bench::repo::{RepoOpts, run_repo};
use crate::bench::report::report;
use crate::bench::wait::wait_for_embeddings;
use crate::daemon::Client;

/// The `--features` file: one JSON line per query and subset.
fn write_features(path: &std::path::Path, evals: &[Vec<Eval>]) -> Result<()> {
    use anyhow::Context as _;
    let mut out = String::new();
    for e in evals.iter().flatten() {
        if let Some(line) = &e.features {
            out.push_str(&line.to_string());
            out.push('\n');
        }
    }
    std::fs::write(path, out).with_context(|| format!("writing {}", path.display()))
}

pub(crate) async fn retrieval(c: &mut Client, args: RetrievalArgs) -> Result<ExitCode> {
    let queries = read_queries(&args.queries, args.max_queries)?;
    let subsets = subsets(&args.oracle);
    let tied = queries.iter().filter(|q| q.commit.is_some()).count();
    let logs = args.features.is_some();
    let (info, evals, repo_run) = match (&args.repo_dir, &args.corpus) {
        (Some(dir), _) => {
            if tied != queries.len() {
                bail!(
                    "{}: {} of {} queries carry no `commit`; --repo-dir needs one on every query",
                    args.queries.display(),
                    queries.len() - tied,
                    queries.len()
                );
            }
            let opts = RepoOpts {
                force: args.force,
                fresh_ms: args.fresh_ms,
                semantic: subsets.iter().any(Subset::uses_semantic),
                history: subsets.iter().any(Subset::uses_history),
            };
            let mut evals: Vec<Vec<Eval>> = subsets.iter().map(|_| Vec::new()).collect();
            let (info, run) = run_repo(c, &opts, dir, &queries, async |c, id, members| {
                for (s, subset) in subsets.iter().enumerate() {
                    evals[s].extend(run_queries(c, id, &queries, members, subset, logs).await?);
                }
                Ok(())
            })
            .await?;
            (info, evals, Some(run))
        }
        (None, Some(corpus)) => {
            if tied > 0 {
                bail!(
                    "{} is tied to a repository at given commits (`repo`/`commit` fields): \
                     evaluate it with --repo-dir CLONE instead of --corpus",
                    args.queries.display()
                );
            }
            let root = corpus_dir(corpus)?;
            let info = c.add_with(&root, true, true).await?;
            if subsets.iter().any(Subset::uses_semantic) {
                wait_for_embeddings(c, &info.id).await?;
            }
            let all: Vec<usize> = (0..queries.len()).collect();
            let mut evals: Vec<Vec<Eval>> = subsets.iter().map(|_| Vec::new()).collect();
            for (s, subset) in subsets.iter().enumerate() {
                evals[s] = run_queries(c, &info.id, &queries, &all, subset, logs).await?;
            }
            (info, evals, None)
        }
        (None, None) => bail!("give --corpus or --repo-dir"),
    };
    if let Some(path) = &args.features {
        write_features(path, &evals)?;
    }
    report(&args, &info, &queries, &subsets, &evals, repo_run.as_ref())?;
    Ok(ExitCode::SUCCESS)
}
