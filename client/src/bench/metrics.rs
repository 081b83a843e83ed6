//! What an answer is worth: each query's evaluation (`Eval`), the rows of metrics over many
//! (Recall@1/5/10, MRR@10, nDCG@10, latency percentiles), and the role of the files misses
//! return instead.

use std::collections::{BTreeMap, HashSet};

/// A file-level hit as the bench keeps it: path and provenance (`oracle#rank`).
pub(crate) struct FileHit {
    pub(crate) path: String,
    /// The role the index gave the file (from its path and its first lines: an extensionless
    /// script is source by its shebang).
    pub(crate) role: Role,
    pub(crate) oracles: Vec<String>,
}

/// One query evaluated with one subset.
pub(crate) struct Eval {
    pub(crate) query: usize,
    /// 0-based rank of the first relevant file among the file-level hits.
    pub(crate) first: Option<usize>,
    /// Each relevant path with its 0-based file-level rank.
    pub(crate) ranks: Vec<(String, Option<usize>)>,
    pub(crate) hits: Vec<FileHit>,
    pub(crate) ndcg: f64,
    pub(crate) chunk_ndcg: f64,
    pub(crate) latency_ms: f64,
    pub(crate) chunk_latency_ms: f64,
    /// With `--features`: the query's line of the features file.
    pub(crate) features: Option<serde_json::Value>,
}

impl Eval {
    pub(crate) fn is_miss(&self) -> bool {
        self.first != Some(0)
    }
}

pub(crate) struct Row {
    pub(crate) oracles: String,
    pub(crate) kind: Option<String>,
    pub(crate) n: usize,
    pub(crate) r1: f64,
    pub(crate) r5: f64,
    pub(crate) r10: f64,
    pub(crate) mrr10: f64,
    pub(crate) ndcg10: f64,
    pub(crate) chunk_ndcg10: f64,
    pub(crate) p50_ms: f64,
    pub(crate) p95_ms: f64,
}

/// What a hit's file is for, in the five groups the error analysis of misses counts
/// ([`file_role`]).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub(crate) enum Role {
    Source,
    Test,
    Docs,
    Example,
    Other,
}

impl Role {
    pub(crate) const ALL: [Role; 5] = [
        Role::Source,
        Role::Test,
        Role::Docs,
        Role::Example,
        Role::Other,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Role::Source => "source",
            Role::Test => "test",
            Role::Docs => "docs",
            Role::Example => "example",
            Role::Other => "other",
        }
    }
}

/// A hit's role as the daemon sent it (`Hit.role`, a wire value), in the report's five groups:
/// benchmarks with tests, configuration, generated and vendored files (and a value this version
/// does not know) with other. Read from the hit rather than classified again from the path here:
/// the index also reads a file's first lines (a shebang, a generated-code marker).
pub(crate) fn file_role(wire: i32) -> Role {
    use patina_core::FileRole;
    match patina_proto::roles::from_wire(wire).unwrap_or(FileRole::Other) {
        FileRole::Source => Role::Source,
        FileRole::Test | FileRole::Benchmark => Role::Test,
        FileRole::Docs => Role::Docs,
        FileRole::Example => Role::Example,
        _ => Role::Other,
    }
}

/// nDCG@10 with binary gain (a hit is relevant when its path is), the ideal DCG from
/// min(10, number of relevant paths). File level the paths are distinct, so it is at most 1; chunk
/// level several chunks of one relevant file can push it above 1, which callers cap.
pub(crate) fn ndcg10(ranked: &[&str], relevant: &HashSet<&str>) -> f64 {
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

pub(crate) fn row(name: &str, kind: Option<&str>, evals: &[&Eval]) -> Row {
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
pub(crate) fn miss_roles(evals: &[Eval]) -> BTreeMap<&'static str, usize> {
    let mut counts: BTreeMap<&'static str, usize> =
        Role::ALL.iter().map(|r| (r.name(), 0)).collect();
    counts.insert("none", 0);
    for e in evals.iter().filter(|e| e.is_miss()) {
        let role = e.hits.first().map_or("none", |h| h.role.name());
        *counts.entry(role).or_default() += 1;
    }
    counts
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i]
}
