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

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use patina_proto::v1 as pb;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::daemon::Client;

/// Hits asked for per query (file and chunk level); ranks beyond it are "not in top N".
const TOP_N: u32 = 10;

#[derive(Args)]
pub(crate) struct RetrievalArgs {
    /// Queries, JSON Lines: {"id", "query", "relevant": [{"path"}], "kind"?, "repo"?, "commit"?}.
    #[arg(long)]
    queries: PathBuf,
    /// A directory to index as is, or a corpus JSON Lines file ({"path", "text"}) to materialise.
    #[arg(
        long,
        required_unless_present = "repo_dir",
        conflicts_with = "repo_dir"
    )]
    corpus: Option<PathBuf>,
    /// A git clone of the repository the queries are tied to (their `commit` is checked out in it,
    /// one commit after the other; the original HEAD is restored at the end).
    #[arg(long, value_name = "CLONE")]
    repo_dir: Option<PathBuf>,
    /// With --repo-dir: go ahead even when the clone has uncommitted changes (they are lost).
    #[arg(long, requires = "repo_dir")]
    force: bool,
    /// With --repo-dir: how long to wait, per checkout, for the index (and, when a subset uses
    /// semantic, the embeddings) to catch up.
    #[arg(long, default_value_t = 600_000, value_name = "MS")]
    fresh_ms: u32,
    /// An oracle subset to evaluate (comma-separated; `all`: every oracle); repeat for one row per
    /// subset. Default: all.
    #[arg(long)]
    oracle: Vec<String>,
    /// Use only the first N queries (of the file's order).
    #[arg(long)]
    max_queries: Option<usize>,
    /// Print every miss (relevant file not at rank 1): its ranks and the top 3 hits.
    #[arg(long, short)]
    verbose: bool,
    #[arg(long)]
    json: bool,
}

#[derive(Deserialize)]
struct Query {
    #[serde(default)]
    id: String,
    query: String,
    relevant: Vec<Relevant>,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    repo: Option<String>,
    #[serde(default)]
    commit: Option<String>,
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

/// One oracle subset (one row).
struct Subset {
    name: String,
    oracles: Vec<String>,
}

impl Subset {
    fn uses_semantic(&self) -> bool {
        self.oracles.is_empty() || self.oracles.iter().any(|o| o == "semantic")
    }

    fn uses_history(&self) -> bool {
        self.oracles.iter().any(|o| o == "history")
    }
}

/// A file-level hit as the bench keeps it: path and provenance (`oracle#rank`).
struct FileHit {
    path: String,
    oracles: Vec<String>,
}

/// One query evaluated with one subset.
struct Eval {
    query: usize,
    /// 0-based rank of the first relevant file among the file-level hits.
    first: Option<usize>,
    /// Each relevant path with its 0-based file-level rank.
    ranks: Vec<(String, Option<usize>)>,
    hits: Vec<FileHit>,
    ndcg: f64,
    chunk_ndcg: f64,
    latency_ms: f64,
    chunk_latency_ms: f64,
}

impl Eval {
    fn is_miss(&self) -> bool {
        self.first != Some(0)
    }
}

struct Row {
    oracles: String,
    kind: Option<String>,
    n: usize,
    r1: f64,
    r5: f64,
    r10: f64,
    mrr10: f64,
    ndcg10: f64,
    chunk_ndcg10: f64,
    p50_ms: f64,
    p95_ms: f64,
}

/// Where a file sits in a repository, for the error analysis of misses. Path-based for now; the
/// daemon will return a role per hit later, which replaces this function.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub(crate) enum Role {
    Source,
    Test,
    Docs,
    Example,
    Other,
}

impl Role {
    const ALL: [Role; 5] = [
        Role::Source,
        Role::Test,
        Role::Docs,
        Role::Example,
        Role::Other,
    ];

    fn name(self) -> &'static str {
        match self {
            Role::Source => "source",
            Role::Test => "test",
            Role::Docs => "docs",
            Role::Example => "example",
            Role::Other => "other",
        }
    }
}

/// The role of `path` (repository-relative, '/'-separated): tests, then docs, then examples, then
/// source code by extension, else other.
pub(crate) fn file_role(path: &str) -> Role {
    let lower = path.to_ascii_lowercase();
    let mut parts: Vec<&str> = lower.split('/').collect();
    let name = parts.pop().unwrap_or("");
    let dirs = parts;
    let ext = name.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    let in_dir = |names: &[&str]| dirs.iter().any(|d| names.contains(d));
    if in_dir(&["tests", "test", "testing", "__tests__"])
        || dirs.iter().any(|d| d.starts_with("tests-"))
        || (name.starts_with("test_") && ext == "py")
        || name.ends_with("_test.py")
        || name == "conftest.py"
        || name.ends_with("_test.go")
        || [".spec.ts", ".spec.js", ".test.ts", ".test.js"]
            .iter()
            .any(|s| name.ends_with(s))
    {
        return Role::Test;
    }
    if matches!(ext, "md" | "rst" | "txt") || in_dir(&["docs", "doc", "changelog"]) {
        return Role::Docs;
    }
    if in_dir(&["examples", "example"]) {
        return Role::Example;
    }
    const CODE: &[&str] = &[
        "rs", "py", "pyi", "pyx", "js", "jsx", "mjs", "cjs", "ts", "tsx", "go", "java", "kt",
        "scala", "c", "h", "cc", "cpp", "cxx", "hh", "hpp", "hxx", "cs", "rb", "php", "swift", "m",
        "mm", "lua", "sh", "bash", "zig", "ex", "exs", "erl", "hs", "ml", "clj", "dart", "vue",
        "svelte",
    ];
    if CODE.contains(&ext) {
        Role::Source
    } else {
        Role::Other
    }
}

/// How the index followed the checkouts of a repository run.
#[derive(Default)]
struct RepoRun {
    root: String,
    original_head: String,
    commits: usize,
    initial_index_s: f64,
    catch_up_s: Vec<f64>,
}

pub(crate) async fn retrieval(c: &mut Client, args: RetrievalArgs) -> Result<ExitCode> {
    let queries = read_queries(&args.queries, args.max_queries)?;
    let subsets = subsets(&args.oracle);
    let tied = queries.iter().filter(|q| q.commit.is_some()).count();
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
            let (info, evals, run) = run_repo(c, &args, dir, &queries, &subsets).await?;
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
                evals[s] = run_queries(c, &info.id, &queries, &all, subset).await?;
            }
            (info, evals, None)
        }
        (None, None) => bail!("give --corpus or --repo-dir"),
    };
    report(&args, &info, &queries, &subsets, &evals, repo_run.as_ref())?;
    Ok(ExitCode::SUCCESS)
}

fn subsets(args: &[String]) -> Vec<Subset> {
    if args.is_empty() {
        return vec![Subset {
            name: "all".into(),
            oracles: Vec::new(),
        }];
    }
    args.iter()
        .map(|s| {
            let oracles: Vec<String> = s
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty() && *s != "all")
                .map(String::from)
                .collect();
            Subset {
                name: if oracles.is_empty() {
                    "all".into()
                } else {
                    oracles.join("+")
                },
                oracles,
            }
        })
        .collect()
}

/// Run `which` queries with one subset: a file-level query (the metrics and latency) and a
/// chunk-level one (chunk nDCG@10) each.
async fn run_queries(
    c: &mut Client,
    repo: &str,
    queries: &[Query],
    which: &[usize],
    subset: &Subset,
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
        let files = c
            .query(req(pb::Granularity::File))
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
                    oracles: h
                        .provenance
                        .iter()
                        .map(|p| format!("{}#{}", p.oracle, p.rank))
                        .collect(),
                })
                .collect(),
            ndcg: ndcg10(&ranked, &relevant).min(1.0),
            chunk_ndcg: ndcg10(&chunk_paths, &relevant).min(1.0),
            latency_ms,
            chunk_latency_ms,
        });
    }
    Ok(out)
}

/// nDCG@10 with binary gain (a hit is relevant when its path is), the ideal DCG from
/// min(10, number of relevant paths). File level the paths are distinct, so it is at most 1; chunk
/// level several chunks of one relevant file can push it above 1, which callers cap.
fn ndcg10(ranked: &[&str], relevant: &HashSet<&str>) -> f64 {
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
    if idcg > 0.0 { dcg / idcg } else { 0.0 }
}

fn row(name: &str, kind: Option<&str>, evals: &[&Eval]) -> Row {
    let n = evals.len().max(1) as f64;
    let frac = |k: usize| {
        evals
            .iter()
            .filter(|e| e.first.is_some_and(|i| i < k))
            .count() as f64
            / n
    };
    let mut lat: Vec<f64> = evals.iter().map(|e| e.latency_ms).collect();
    lat.sort_by(f64::total_cmp);
    Row {
        oracles: name.to_string(),
        kind: kind.map(String::from),
        n: evals.len(),
        r1: frac(1),
        r5: frac(5),
        r10: frac(10),
        mrr10: evals
            .iter()
            .filter_map(|e| e.first.filter(|&i| i < 10))
            .map(|i| 1.0 / (i as f64 + 1.0))
            .sum::<f64>()
            / n,
        ndcg10: evals.iter().map(|e| e.ndcg).sum::<f64>() / n,
        chunk_ndcg10: evals.iter().map(|e| e.chunk_ndcg).sum::<f64>() / n,
        p50_ms: percentile(&lat, 0.50),
        p95_ms: percentile(&lat, 0.95),
    }
}

/// The role of each miss's top-1 file ("none": the query found nothing).
fn miss_roles(evals: &[Eval]) -> BTreeMap<&'static str, usize> {
    let mut counts: BTreeMap<&'static str, usize> =
        Role::ALL.iter().map(|r| (r.name(), 0)).collect();
    counts.insert("none", 0);
    for e in evals.iter().filter(|e| e.is_miss()) {
        let role = e.hits.first().map_or("none", |h| file_role(&h.path).name());
        *counts.entry(role).or_default() += 1;
    }
    counts
}

fn excerpt(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let cut: String = flat.chars().take(max).collect();
    format!("{cut}…")
}

fn report(
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
            file_role(&h.path).name(),
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
        "hits": e.hits.iter().map(|h| json!({"path": h.path, "role": file_role(&h.path).name(), "oracles": h.oracles})).collect::<Vec<_>>(),
    })
}

// ---------------------------------------------------------------------------------------------
// Real repositories

/// Run `git -C dir ARGS`; its trimmed stdout, or an error with git's own message.
fn git(dir: &Path, args: &[&str]) -> Result<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .with_context(|| format!("running git {}", args.join(" ")))?;
    if !out.status.success() {
        bail!(
            "git {} in {}: {}",
            args.join(" "),
            dir.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Puts the clone back on the commit or branch it was on, whatever happens to the run.
struct Restore {
    root: PathBuf,
    head: String,
    armed: bool,
}

impl Restore {
    fn now(&mut self) {
        if !self.armed {
            return;
        }
        self.armed = false;
        match git(&self.root, &["checkout", "-qf", &self.head]) {
            Ok(_) => eprintln!("restored {} to {}", self.root.display(), self.head),
            Err(e) => eprintln!(
                "patina: could not restore {} to {}: {e:#}",
                self.root.display(),
                self.head
            ),
        }
    }
}

impl Drop for Restore {
    fn drop(&mut self) {
        self.now();
    }
}

async fn run_repo(
    c: &mut Client,
    args: &RetrievalArgs,
    dir: &Path,
    queries: &[Query],
    subsets: &[Subset],
) -> Result<(pb::RepoInfo, Vec<Vec<Eval>>, RepoRun)> {
    let dir = std::fs::canonicalize(dir)
        .with_context(|| format!("cannot use --repo-dir '{}'", dir.display()))?;
    let root = PathBuf::from(
        git(&dir, &["rev-parse", "--show-toplevel"])
            .with_context(|| format!("{} is not a git clone", dir.display()))?,
    );
    let names: HashSet<&str> = queries.iter().filter_map(|q| q.repo.as_deref()).collect();
    if names.len() > 1 {
        let mut names: Vec<_> = names.into_iter().collect();
        names.sort();
        bail!(
            "the queries name several repositories ({}); one --repo-dir evaluates one",
            names.join(", ")
        );
    }
    let dirty = git(
        &root,
        &["status", "--porcelain", "--untracked-files=normal"],
    )?;
    if !dirty.is_empty() && !args.force {
        let n = dirty.lines().count();
        bail!(
            "{} has uncommitted changes ({n} paths, e.g. `{}`): the bench checks out other \
             commits with `git checkout -f` and would destroy them. Commit or stash them, use a \
             private clone, or pass --force to discard them",
            root.display(),
            dirty.lines().next().unwrap_or("").trim()
        );
    }
    let head = match git(&root, &["symbolic-ref", "-q", "--short", "HEAD"]) {
        Ok(branch) if !branch.is_empty() => branch,
        _ => git(&root, &["rev-parse", "HEAD"])?,
    };

    // Group the queries by commit, commits in commit-date order (ties: first appearance).
    let mut groups: Vec<(String, i64, Vec<usize>)> = Vec::new();
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, q) in queries.iter().enumerate() {
        let commit = q.commit.as_deref().expect("checked by the caller");
        if let Some(&g) = seen.get(commit) {
            groups[g].2.push(i);
            continue;
        }
        let sha = git(
            &root,
            &[
                "rev-parse",
                "--verify",
                "-q",
                &format!("{commit}^{{commit}}"),
            ],
        )
        .map_err(|_| {
            anyhow!(
                "commit {commit} (query {}) is not in {}; fetch it first",
                q.id,
                root.display()
            )
        })?;
        let time: i64 = git(&root, &["log", "-1", "--format=%ct", &sha])?
            .parse()
            .context("git log %ct")?;
        seen.insert(commit, groups.len());
        groups.push((sha, time, vec![i]));
    }
    groups.sort_by_key(|g| g.1);

    let health = c.health().await?;
    let semantic = subsets.iter().any(Subset::uses_semantic);
    if semantic && !health.semantic_on {
        eprintln!("semantic search {}", health.semantic);
    }
    let catch_up_oracles = if semantic && health.semantic_on {
        vec!["semantic".to_string()]
    } else {
        vec!["lexical".to_string()]
    };

    let mut restore = Restore {
        root: root.clone(),
        head: head.clone(),
        armed: true,
    };
    let mut run = RepoRun {
        root: root.to_string_lossy().into_owned(),
        original_head: head,
        commits: groups.len(),
        ..Default::default()
    };
    let work = async {
        let mut evals: Vec<Vec<Eval>> = subsets.iter().map(|_| Vec::new()).collect();
        let mut info: Option<pb::RepoInfo> = None;
        for (n, (sha, _, members)) in groups.iter().enumerate() {
            git(&root, &["checkout", "-qf", sha])?;
            let id = match &info {
                Some(i) => i.id.clone(),
                None => {
                    let t0 = Instant::now();
                    let i = c.add_with(&root, true, true).await?;
                    run.initial_index_s = t0.elapsed().as_secs_f64();
                    let id = i.id.clone();
                    info = Some(i);
                    id
                }
            };
            let t0 = Instant::now();
            let resp = c
                .query(pb::QueryRequest {
                    query: queries[members[0]].query.clone(),
                    limit: 1,
                    repos: vec![id.clone()],
                    oracles: catch_up_oracles.clone(),
                    fresh_timeout_ms: args.fresh_ms,
                    ..Default::default()
                })
                .await
                .map_err(crate::daemon::status_error)
                .with_context(|| format!("catching up with {sha}"))?;
            let took = t0.elapsed().as_secs_f64();
            run.catch_up_s.push(took);
            if let Some(note) = resp.notices.iter().find(|n| n.contains("not fully fresh")) {
                bail!("at {sha}: {note} (raise --fresh-ms)");
            }
            match resp.freshness.iter().find(|f| f.repo_id == id) {
                Some(f) if f.indexed_commit == *sha => {}
                Some(f) => bail!(
                    "at {sha}: the index reports commit '{}' after catching up",
                    f.indexed_commit
                ),
                None => bail!("at {sha}: the daemon reported no freshness for the repository"),
            }
            if subsets.iter().any(Subset::uses_history) {
                // The history oracle also matches commit messages by meaning once they are
                // embedded (after every chunk): wait, so that no answer depends on timing.
                wait_for_messages(c, &id).await?;
            }
            eprintln!(
                "[{}/{}] {} ({} queries): caught up in {took:.1}s",
                n + 1,
                groups.len(),
                &sha[..12],
                members.len()
            );
            for (s, subset) in subsets.iter().enumerate() {
                let e = run_queries(c, &id, queries, members, subset).await?;
                evals[s].extend(e);
            }
        }
        Ok::<_, anyhow::Error>((info.expect("at least one commit"), evals))
    };
    let mut sigint = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
    let mut sigterm = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let result = tokio::select! {
        biased;
        _ = sigint.recv() => Err(anyhow!("interrupted")),
        _ = sigterm.recv() => Err(anyhow!("terminated")),
        r = work => r,
    };
    restore.now();
    let (info, evals) = result?;
    Ok((info, evals, run))
}

// ---------------------------------------------------------------------------------------------
// Corpora

/// Poll `repo`'s row until `left` says nothing is left (reporting every 10 s what is); returns
/// the row and the seconds waited.
async fn wait_until_drained(
    c: &mut Client,
    repo: &str,
    what: &str,
    left: impl Fn(&pb::RepoInfo) -> u64,
) -> Result<(pb::RepoInfo, f64)> {
    let t0 = Instant::now();
    let mut last_report = Instant::now();
    loop {
        let list = c.list().await?;
        let Some(r) = list.repos.into_iter().find(|r| r.id == repo) else {
            bail!("the repository disappeared")
        };
        let n = left(&r);
        if n == 0 {
            return Ok((r, t0.elapsed().as_secs_f64()));
        }
        if last_report.elapsed().as_secs() >= 10 {
            eprintln!("waiting for {what}: {n} left");
            last_report = Instant::now();
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
}

/// Semantic rows are only meaningful once every chunk is embedded: wait for the backlog to drain.
async fn wait_for_embeddings(c: &mut Client, repo: &str) -> Result<()> {
    let h = c.health().await?;
    if !h.semantic_on {
        eprintln!("semantic search {}", h.semantic);
        return Ok(());
    }
    let (r, waited) = wait_until_drained(c, repo, "embeddings", |r| r.embed_backlog).await?;
    eprintln!(
        "embeddings ready: {} chunks ({waited:.0}s waited)",
        r.vectors
    );
    Ok(())
}

/// With the model, the history oracle matches commit messages by meaning too: wait until every
/// reachable commit's message is embedded (without the model there is nothing to wait for).
async fn wait_for_messages(c: &mut Client, repo: &str) -> Result<()> {
    if !c.health().await?.semantic_on {
        return Ok(());
    }
    let (_, waited) =
        wait_until_drained(c, repo, "commit-message embeddings", |r| r.message_backlog).await?;
    if waited >= 1.0 {
        eprintln!("commit messages embedded ({waited:.0}s waited)");
    }
    Ok(())
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
