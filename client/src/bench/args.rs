//! The arguments of `patina bench retrieval`.

use std::path::PathBuf;

use clap::Args;

#[derive(Args)]
pub(crate) struct RetrievalArgs {
    /// Queries, JSON Lines: {"id", "query", "relevant": [{"path"}], "kind"?, "repo"?, "commit"?}.
    #[arg(long)]
    pub(crate) queries: PathBuf,
    /// A directory to index as is, or a corpus JSON Lines file ({"path", "text"}) to materialise.
    #[arg(
        long,
        required_unless_present = "repo_dir",
        conflicts_with = "repo_dir"
    )]
    pub(crate) corpus: Option<PathBuf>,
    /// A git clone of the repository the queries are tied to (their `commit` is checked out in it,
    /// one commit after the other; the original HEAD is restored at the end).
    #[arg(long, value_name = "CLONE")]
    pub(crate) repo_dir: Option<PathBuf>,
    /// With --repo-dir: go ahead even when the clone has uncommitted changes (they are lost).
    #[arg(long, requires = "repo_dir")]
    pub(crate) force: bool,
    /// With --repo-dir: how long to wait, per checkout, for the index (and, when a subset uses
    /// semantic, the embeddings) to catch up.
    #[arg(long, default_value_t = 600_000, value_name = "MS")]
    pub(crate) fresh_ms: u32,
    /// An oracle subset to evaluate (comma-separated; `all`: every oracle); repeat for one row per
    /// subset. Default: all.
    #[arg(long)]
    pub(crate) oracle: Vec<String>,
    /// Use only the first N queries (of the file's order).
    #[arg(long)]
    pub(crate) max_queries: Option<usize>,
    /// Print every miss (relevant file not at rank 1): its ranks and the top 3 hits.
    #[arg(long, short)]
    pub(crate) verbose: bool,
    #[arg(long)]
    pub(crate) json: bool,
    /// Also write, per query and subset, the learned stage's pool (up to 30 file hits, at the
    /// plain query's depth) with what the ranking knew of each (`patina_retrieve::features`) and
    /// whether it is relevant, as JSON Lines: the data `bench/learn_rank.py` fits the learned
    /// ranking on. The figures stay those of the first 10, the plain answer.
    #[arg(long, value_name = "FILE")]
    pub(crate) features: Option<PathBuf>,
}
