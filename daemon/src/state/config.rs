//! `config.toml`: indexing limits and retrieval weights. Every key is optional; a missing file
//! means defaults. Unknown keys are rejected so typos do not silently do nothing.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use patina_core::OracleId;
use patina_embed::Precision;
use serde::{Deserialize, Deserializer};

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[derive(Default)]
pub struct Config {
    pub index: IndexConfig,
    pub retrieval: RetrievalConfig,
    pub semantic: SemanticConfig,
    /// Strengths of the ranking rules applied after fusion (`patina_retrieve::rank`).
    pub ranking: patina_retrieve::rank::RankOptions,
    /// The history oracles (commit messages, co-change).
    pub history: HistoryConfig,
    /// The query cache (`crate::query::cache`).
    pub cache: CacheConfig,
    /// Context assembly (`crate::query::context`).
    pub context: ContextConfig,
    /// Personal-data masking, opt-in per repository.
    pub pii: PiiConfig,
    /// `patina tune` (`crate::workers::tuner`).
    pub tune: TuneConfig,
    /// The daemon process itself (its memory budget).
    pub daemon: DaemonConfig,
    /// A team's shared store (`crate::services::team`), off unless a URL is given.
    pub team: TeamConfig,
}

/// `[team]`: a team's shared store (docs/team.md). Off unless `url` (or the environment's
/// `PATINA_TEAM_URL`, which wins) names a PostgreSQL server with pgvector. The URL may carry a
/// password; it is never logged or shown (its `Debug` hides it).
#[derive(Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TeamConfig {
    /// A libpq connection string or URI (`postgresql://role@host/db?sslmode=…`).
    pub url: String,
    /// Each request to the store (connecting included) gives up after this long; publishing
    /// bounds only its connecting.
    pub timeout_ms: u64,
    /// The CA (PEM) that signed the store's certificate: with it every connection is TLS, verified
    /// for the URL's host; without it, the protocol in the clear (`sslmode=require` is refused).
    pub ca_file: String,
}

impl Default for TeamConfig {
    fn default() -> Self {
        TeamConfig {
            url: String::new(),
            timeout_ms: 2_000,
            ca_file: String::new(),
        }
    }
}

impl std::fmt::Debug for TeamConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TeamConfig")
            .field("url", &if self.url.is_empty() { "" } else { "(set)" })
            .field("timeout_ms", &self.timeout_ms)
            .field("ca_file", &self.ca_file)
            .finish()
    }
}

impl TeamConfig {
    /// The store's URL: the environment's `PATINA_TEAM_URL`, else the config's; `None` when off.
    pub fn url(&self) -> Option<String> {
        std::env::var("PATINA_TEAM_URL")
            .ok()
            .filter(|u| !u.trim().is_empty())
            .or_else(|| Some(self.url.clone()).filter(|u| !u.trim().is_empty()))
    }
}

/// `[pii]`: in the repositories listed, e-mail and IP addresses and the `patterns` are masked
/// (`*` per character) in everything Patina stores and returns: chunks, the lexical index,
/// embeddings, snippets, contexts, `get_file` and commit messages.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PiiConfig {
    /// Repositories (names, ids or root paths; `*` = all) whose personal data is masked.
    pub repos: Vec<String>,
    pub emails: bool,
    pub ips: bool,
    /// More regular expressions to mask (Rust `regex` syntax).
    pub patterns: Vec<String>,
}

impl Default for PiiConfig {
    fn default() -> Self {
        PiiConfig {
            repos: Vec::new(),
            emails: true,
            ips: true,
            patterns: Vec::new(),
        }
    }
}

impl PiiConfig {
    /// The masking of the repository with this id, name and root, if it opted in.
    pub fn scrubber_for(
        &self,
        id: &str,
        name: &str,
        root: &Path,
    ) -> Option<std::sync::Arc<patina_core::pii::Scrubber>> {
        let listed = self
            .repos
            .iter()
            .any(|r| r == "*" || r == id || r == name || Path::new(r) == root);
        if !listed {
            return None;
        }
        // Checked when the configuration was loaded.
        patina_core::pii::Scrubber::new(self.emails, self.ips, &self.patterns)
            .ok()
            .map(std::sync::Arc::new)
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TuneConfig {
    /// Commits per slice: the newest this many informative commits are the held-out slice, the
    /// this many before them the training slice.
    pub queries: usize,
    /// Commits touching more files than this are not asked (their answer is diffuse).
    pub max_answer_files: usize,
    /// A commit message needs at least this many distinct words (3+ letters) to be a question.
    pub min_words: usize,
    /// Passes of coordinate ascent over the settings at most.
    pub rounds: usize,
    /// A change of one setting is kept only when it raises the training MRR@10 by more than
    /// this (one question in 200 moving to rank 1): smaller gains are mostly noise of the slice.
    pub min_gain: f64,
}

impl Default for TuneConfig {
    fn default() -> Self {
        TuneConfig {
            queries: 100,
            max_answer_files: 10,
            min_words: 4,
            rounds: 3,
            min_gain: 0.005,
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DaemonConfig {
    /// Memory budget in MiB, split by [`crate::process::memory::Budget::of`] into sled's page cache,
    /// tantivy's writer heap and how long the bulk embedding session stays loaded when idle.
    pub memory_mb: u64,
    /// Restart in place (same process id, socket and lock) when idle with a heap that holds far
    /// more than it uses, as bulk indexing leaves it (`crate::process::restart`).
    pub restart_when_fragmented: bool,
    /// Client connections open at once; one more is closed at once, and the log says so
    /// (`crate::process::connections`).
    pub max_connections: usize,
    /// A connection that has not begun its HTTP/2 handshake this long after it was accepted is
    /// closed.
    pub handshake_timeout_ms: u64,
}

impl Default for DaemonConfig {
    fn default() -> Self {
        DaemonConfig {
            memory_mb: crate::process::memory::DEFAULT_MEMORY_MB,
            restart_when_fragmented: true,
            max_connections: 256,
            handshake_timeout_ms: 10_000,
        }
    }
}

impl DaemonConfig {
    pub(crate) fn budget(&self) -> crate::process::memory::Budget {
        crate::process::memory::Budget::of(self.memory_mb)
    }
}

/// `[context]`: how `Search.Context` assembles what an agent reads.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ContextConfig {
    /// The regions of this many of the search's best files are located against the whole
    /// question and join the matched pieces (`patina_retrieve::locate`); 0: matched pieces only.
    pub locate_files: usize,
    /// How steeply a file's place in the ranking lowers the weight of its pieces
    /// (`patina_retrieve::locate::order`): 1 reads the best file whole before the next.
    pub file_depth: f64,
    /// Every file the matched pieces alone would show in the budget keeps its best piece before
    /// any file is read in depth (`patina_retrieve::locate::keep_files`), so locating never
    /// costs the answer a file.
    pub keep_files: bool,
    /// With `keep_files`, each kept file's best piece but the best file's is cut to its first
    /// lines within this many tokens (0: whole), keeping its surroundings on top: the other
    /// files are named and begun, and the budget goes on to the best file's regions.
    pub lead_tokens: usize,
    /// A located file's regions that weigh alike are read outward from its best piece
    /// (`patina_retrieve::locate::nearest_first`), not from its first line. Off: 3 questions of
    /// 782 moved (line recall 0.444 → 0.445 at 4000 tokens, forty-sixth session).
    pub near_best: bool,
    /// Locating also knows the names the question writes as code, whatever their case
    /// (`patina_retrieve::locate::Needle::with_code_names`: `parse(`, `` `strict` ``,
    /// `req.fresh`). Off: 5 questions of 782 moved (0.444 → 0.448 at 4000 tokens, three up
    /// and two down; forty-sixth session).
    pub code_names: bool,
    /// A file's pieces weigh by its best hit's score against the best file's, to the power
    /// `file_depth` (`patina_retrieve::locate::confidence_priors`), not by its rank: depth when
    /// the search is sure of one file, breadth when it is not. On (forty-sixth session): at 4000
    /// tokens over bench/context_run.py's 20 sets, leave one set out chose it on every fold,
    /// held-out line recall 0.444 → 0.455, file recall 0.82 → 0.83.
    pub by_confidence: bool,
    /// With `keep_files`, only the best this many files keep their best piece first (0: every
    /// file the matched pieces alone would show; `patina_retrieve::locate::keep_at_most`).
    pub keep_at_most: usize,
    /// With `by_confidence`, a located file whose whole text fits in what its prior earns of the
    /// budget is read whole, in line order (`patina_retrieve::locate::whole_files`): `"share"`
    /// (its prior's share among the files'), `"prior"` (its prior times the budget) or `"off"`.
    /// Off: at 4000 tokens over 19 context sets, leave one set out chose `share` on every fold
    /// for a held-out line recall of 0.454 against 0.453 (two sets up, one down: noise), and
    /// `prior` lost 0.027 in sample (fifty-first session).
    pub whole_files: WholeFiles,
}

/// `[context] whole_files`: which located files are read whole.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum WholeFiles {
    #[default]
    Off,
    Share,
    Prior,
}

impl WholeFiles {
    /// How a file earns its budget, if files are read whole at all.
    pub fn by(self) -> Option<patina_retrieve::locate::WholeBy> {
        match self {
            WholeFiles::Off => None,
            WholeFiles::Share => Some(patina_retrieve::locate::WholeBy::Share),
            WholeFiles::Prior => Some(patina_retrieve::locate::WholeBy::Prior),
        }
    }
}

impl Default for ContextConfig {
    fn default() -> Self {
        ContextConfig {
            locate_files: 4,
            file_depth: 1.0,
            keep_files: true,
            lead_tokens: 150,
            near_best: false,
            code_names: false,
            by_confidence: true,
            keep_at_most: 0,
            whole_files: WholeFiles::Off,
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CacheConfig {
    /// Answers kept at most (least recently used first out); 0 turns the cache off.
    pub entries: usize,
    /// An answer is served from the cache for at most this long, even when nothing changed.
    pub ttl_secs: u64,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig {
            entries: 256,
            ttl_secs: 300,
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HistoryConfig {
    /// Whether the history oracle runs when a query does not name its oracles. Off: it lifts
    /// the files of similar past changes, which helps change requests (commits-tokio +0.011 to
    /// +0.016 MRR@10) and costs questions about the code as it is (own set: flask −0.027,
    /// cobra −0.005, ripgrep −0.006; bench/RESULTS.md). `--oracle …,history` asks for it.
    pub by_default: bool,
    /// How many best-matching commits vote for files (history oracle).
    pub commits: usize,
    /// How many of the voted files the history oracle ranks (its long tail is noise).
    pub files: usize,
    /// A commit this many days older than HEAD's newest commit votes half as much (0: no decay).
    pub half_life_days: f64,
    /// Commits touching more files than this neither vote nor count for co-change.
    pub max_commit_files: usize,
    /// Co-change oracle: partners of this many of the best fused files are lifted.
    pub cochange_seeds: usize,
    /// Co-change oracle: at least this many shared commits make a partner.
    pub cochange_min_support: u32,
    /// Recency/churn prior: a file's results × (1 + this × a/(a+1)), a = its recency-weighted
    /// churn ([`patina_index::history::HistoryView::activity`]); never for queries that name an
    /// identifier or a path. 0 = off (the default: see bench/RESULTS.md).
    pub recency_prior: f64,
    /// Recency/churn prior: a change this many days older than the newest commit counts half.
    pub recency_half_life_days: f64,
    /// When the history oracle runs: the results of a file it voted for × (1 + this × vote / best
    /// vote) before files are ranked (`crate::services::history::apply_vote_prior`); 0 = off (the default:
    /// at 0.2 it cost swebench-pytest one Acc@1 and commits-tokio one R@5; bench/RESULTS.md).
    pub vote_prior: f64,
    /// When the history oracle runs and the question starts with a commit scope (`sync: …`):
    /// results × (1 + this × the share of that scope's past commits that changed their
    /// directory) (`crate::services::history::apply_scope_prior`); 0 = off. commits-tokio +0.012 MRR@10
    /// over the history oracle alone (85 of its 100 questions carry a scope); bench/RESULTS.md.
    pub scope_prior: f64,
    /// With the model on, commits whose message embedding is at least this close (cosine) to the
    /// question's join the BM25 matches (fused by rank); below it a message is not about the same
    /// thing (sentence pairs on one topic score ≈ 0.5+ with all-MiniLM-L6-v2).
    pub message_floor: f32,
}

impl Default for HistoryConfig {
    fn default() -> Self {
        HistoryConfig {
            by_default: false,
            commits: 30,
            files: 5,
            half_life_days: 365.0,
            max_commit_files: 40,
            cochange_seeds: 3,
            cochange_min_support: 2,
            recency_prior: 0.0,
            recency_half_life_days: 90.0,
            vote_prior: 0.0,
            scope_prior: 0.3,
            message_floor: 0.5,
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SemanticConfig {
    /// `fp32` (reference quality) or `int8` (faster, cosine ≈ 0.997 to fp32).
    #[serde(deserialize_with = "precision")]
    pub precision: Precision,
    /// Give every chunk waiting for the model a static vector first (the table
    /// `scripts/setup-model` distils, `static.bin`), so semantic search covers a new repository
    /// in seconds; the model's vectors replace them as the backlog drains.
    pub static_pass: bool,
    /// Let the model embed the chunks (the default). Off, chunks keep their static vectors and
    /// questions are still embedded by the model: semantic search at the static table's quality
    /// (bench/RESULTS.md, "static-only") without the model's pass on a slow or battery machine.
    pub model_pass: bool,
}

impl Default for SemanticConfig {
    fn default() -> Self {
        SemanticConfig {
            precision: Precision::Fp32,
            static_pass: true,
            model_pass: true,
        }
    }
}

/// `fp32` or `int8`; anything else is an error naming both.
fn precision<'de, D: Deserializer<'de>>(d: D) -> Result<Precision, D::Error> {
    let name = String::deserialize(d)?;
    Precision::parse(&name)
        .ok_or_else(|| serde::de::Error::unknown_variant(&name, &["fp32", "int8"]))
}

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IndexConfig {
    /// Files larger than this are skipped (reason `too_large`).
    pub max_file_bytes: u64,
    /// Definitions longer than this many lines are split into overlapping pieces (Markdown
    /// sections at their own length, `patina_chunk::ChunkOptions::max_prose_lines`). The model
    /// reads a chunk's first 256 tokens: a piece's own vector finds what the middle of a long
    /// function does (bench/RESULTS.md, twenty-eighth session: 40, 80 and 150 measured).
    pub max_chunk_lines: usize,
    /// Extract the dependency graph (references, calls, imports, type relations) while indexing;
    /// off, navigation, the graph oracle, context expansion's callees and the map have nothing.
    pub graph: bool,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetrievalConfig {
    /// Reciprocal Rank Fusion constant; also the depth an oracle's scores are read against.
    pub rrf_k: f64,
    /// The share (0..=1) of a hit's place in the fusion read from its score rather than its rank
    /// (`patina_retrieve::fusion`; 0 is plain RRF).
    pub evidence: f64,
    /// The place, read by score, of a hit scored as its oracle's `rrf_k`-th.
    pub evidence_depth: f64,
    /// Each oracle is asked for `limit × overfetch` candidates before fusion (three times that
    /// for file, module and repository results, which fold chunks together), and never fewer
    /// than `pool` ([`RetrievalConfig::oracle_depth`]).
    pub overfetch: usize,
    /// The fewest candidates each oracle returns, whatever the limit. The fusion reads every
    /// candidate (a hit 50th in one ranking still counts), so a depth that followed the limit
    /// would rank the first hits differently for `-n 3` and `-n 10`; under the pool they are
    /// the same.
    pub pool: usize,
    /// An oracle that has not answered within this budget is left out of the fusion (and named
    /// in the answer's notices). The budget grows with the query's length
    /// ([`RetrievalConfig::oracle_timeout`]).
    pub oracle_timeout_ms: u64,
    /// Fusion weight per oracle (a key that names no oracle is an error).
    pub weights: BTreeMap<OracleId, f64>,
    /// Weights that replace `weights` for prose questions (no identifier or file name in the
    /// query) while semantic search is on: BM25 over the words of a question mostly matches
    /// filler words, so it only breaks ties among semantic hits.
    pub prose_weights: BTreeMap<OracleId, f64>,
    /// The best semantic cosine at which a prose question counts as recognised by the model
    /// `[unsure, sure]`: at or below `unsure` the ordinary `weights` apply (words count fully), at
    /// or above `sure` the `prose_weights`, in between a blend. A dense model matches a question
    /// phrased like a function's docstring closely (web questions: best cosine ≈ 0.70 on CoSQA);
    /// questions about a repository's own concepts match less closely (≈ 0.47–0.61 on four
    /// repositories) and are answered better when their words count (bench/RESULTS.md).
    pub semantic_confidence: [f32; 2],
    /// Let the lexical oracle keep its full weight for a prose question when its best chunk
    /// contains every content word of the question (by stem), however sure the model is.
    pub trust_full_match: bool,
    /// Scale a prose question's lexical weight by the share of its content words the best
    /// lexical chunk contains (`patina_retrieve::fusion::adjust_weights`).
    pub lexical_by_coverage: bool,
    /// While the semantic oracle's leading hits are answered by static vectors (a repository
    /// whose backlog the model has not reached, or `[semantic] model_pass = false`), that share
    /// of its ranking counts this much (0..=1) of its weight
    /// (`patina_retrieve::fusion::weigh_static`).
    pub static_weight: f64,
    /// Expand the words of a question with the repository's inflections, abbreviations and glued
    /// forms of them (`generated` -> `generate`, `configuration` -> `config`, `file name` ->
    /// `filename`) in the lexical oracle, and read a short question's misspelt words as the
    /// indexed word one edit away (with the model, whose vocabulary tells English words apart).
    pub expand: bool,
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            max_file_bytes: 1024 * 1024,
            max_chunk_lines: 80,
            graph: true,
        }
    }
}

impl Default for RetrievalConfig {
    fn default() -> Self {
        RetrievalConfig {
            rrf_k: 60.0,
            // Fitted leave-one-set-out over seven sets in four languages (CoSQA, the own sets of
            // cobra, flask, ripgrep and express, SWE-bench pytest, tokio's commits): 0.5 and 120
            // were chosen with six of the seven held out, 0.7 and 120 with ripgrep held out
            // (bench/RESULTS.md, eighteenth session; `bench/loo.py`).
            evidence: 0.5,
            evidence_depth: 120.0,
            overfetch: 5,
            // What a file-level question at the default limit (10 × 5 × 3) has always read, the
            // depth every benchmark figure was measured at.
            pool: 150,
            oracle_timeout_ms: 2000,
            weights: BTreeMap::from([
                (OracleId::Lexical, 1.0),
                (OracleId::Symbol, 1.5),
                (OracleId::Semantic, 1.0),
                // Measured on commits-tokio (bench/RESULTS.md, issue 11): history at 1.0 cost
                // 0.04 MRR@10, at 0.1 (5 files) it gains 0.018; co-change lowered every
                // setting tried, so it is off in the fusion unless weighted in config.
                (OracleId::History, 0.1),
                (OracleId::Cochange, 0.0),
                // The dependency oracle, for questions about code, over resolved edges: at 0.1
                // it lowers no set and lifts pytest's R@5 (bench/RESULTS.md, issue 12); at 0.3
                // it cost the own question sets.
                (OracleId::Graph, 0.1),
            ]),
            prose_weights: BTreeMap::from([(OracleId::Lexical, 0.06)]),
            semantic_confidence: [0.55, 0.70],
            trust_full_match: true,
            // Thirteen sets in ten languages, on (linear in the share of words) against off:
            // +0.112 nDCG@10 summed, chosen in every leave-one-set-out fold (bench/RESULTS.md,
            // twentieth session).
            lexical_by_coverage: true,
            static_weight: 1.0,
            expand: true,
        }
    }
}

/// A query text of this many bytes adds one `oracle_timeout_ms` to every oracle's budget.
const TIMEOUT_STEP_BYTES: usize = 2048;
/// The budget never exceeds this many times `oracle_timeout_ms`.
const TIMEOUT_MAX_FACTOR: u64 = 4;

impl RetrievalConfig {
    /// How many candidates each oracle returns for a query asking `limit` results, of chunks
    /// (`folded` false) or of files, modules or repositories (`folded`): `limit × overfetch`
    /// (× 3 folded), never fewer than `pool`, so the first hits of a query are the same for
    /// every limit up to `pool / overfetch` chunks or a third of that in files.
    pub fn oracle_depth(&self, limit: usize, folded: bool) -> usize {
        let per_result = self.overfetch.max(1) * if folded { 3 } else { 1 };
        limit.saturating_mul(per_result).max(self.pool)
    }

    /// Each oracle's budget for a query of `text_len` bytes: `oracle_timeout_ms` for a short
    /// query, one more for every 2 KiB of text (a pasted issue costs more terms, more
    /// embedding, more names), at most four times the base.
    pub fn oracle_timeout(&self, text_len: usize) -> std::time::Duration {
        let factor = (1 + (text_len / TIMEOUT_STEP_BYTES) as u64).min(TIMEOUT_MAX_FACTOR);
        std::time::Duration::from_millis(self.oracle_timeout_ms.saturating_mul(factor))
    }

    pub fn weight(&self, oracle: OracleId) -> f64 {
        self.weights.get(&oracle).copied().unwrap_or(1.0)
    }

    /// How sure (0..=1) the model is of a prose question whose best semantic cosine is `best`.
    pub fn sureness(&self, best: f32) -> f64 {
        let [unsure, sure] = self.semantic_confidence;
        if sure > unsure {
            ((best - unsure) / (sure - unsure)).clamp(0.0, 1.0) as f64
        } else {
            (best >= sure) as u8 as f64
        }
    }

    /// The fusion these settings make.
    pub fn fusion(&self) -> patina_retrieve::fusion::Fusion {
        patina_retrieve::fusion::Fusion {
            k: self.rrf_k,
            evidence: self.evidence,
            depth: self.evidence_depth,
        }
    }

    pub fn prose_weight(&self, oracle: OracleId) -> f64 {
        self.prose_weights
            .get(&oracle)
            .copied()
            .unwrap_or_else(|| self.weight(oracle))
    }
}

impl Config {
    /// Read `path`, or defaults when it does not exist.
    pub fn load(path: &Path) -> Result<Config> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Config::default()),
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        let mut cfg: Config = toml::from_str(&text)
            .with_context(|| format!("invalid config file {}", path.display()))?;
        if let Err(e) =
            patina_core::pii::Scrubber::new(cfg.pii.emails, cfg.pii.ips, &cfg.pii.patterns)
        {
            anyhow::bail!("invalid config file {}: {e}", path.display());
        }
        crate::process::memory::Budget::check(cfg.daemon.memory_mb)
            .map_err(anyhow::Error::msg)
            .with_context(|| format!("invalid config file {}", path.display()))?;
        if cfg.daemon.max_connections == 0 || cfg.daemon.handshake_timeout_ms == 0 {
            anyhow::bail!(
                "invalid config file {}: [daemon] max_connections and handshake_timeout_ms must \
                 be at least 1 (a daemon that admits no connection answers nobody)",
                path.display()
            );
        }
        if cfg.retrieval.pool > MAX_POOL {
            anyhow::bail!(
                "invalid config file {}: [retrieval] pool = {} is more than {MAX_POOL} candidates \
                 per oracle (every query would read and rank that many)",
                path.display(),
                cfg.retrieval.pool
            );
        }
        // Keep the defaults' weights for oracles the file does not mention.
        for (k, v) in RetrievalConfig::default().weights {
            cfg.retrieval.weights.entry(k).or_insert(v);
        }
        Ok(cfg)
    }
}

/// The most candidates `[retrieval] pool` may ask of each oracle: memory and ranking time follow
/// it for every query.
const MAX_POOL: usize = 5000;

/// A repository's dependency graph or commit history not used in this long is dropped from
/// memory (rebuilt from the store on next use: about the time of one round's graph update, and
/// of reading `history.bin`).
const IDLE_RELEASE: std::time::Duration = std::time::Duration::from_secs(300);

/// [`IDLE_RELEASE`], or the seconds `PATINA_TEST_IDLE_RELEASE_SECS` gives (the tests' way to see
/// a release without waiting five minutes; the poller then ticks at least that often).
pub(crate) fn idle_release() -> std::time::Duration {
    static IDLE: std::sync::OnceLock<std::time::Duration> = std::sync::OnceLock::new();
    *IDLE.get_or_init(|| {
        patina_core::hooks::test_hook("PATINA_TEST_IDLE_RELEASE_SECS")
            .and_then(|s| s.parse().ok())
            .map(std::time::Duration::from_secs)
            .unwrap_or(IDLE_RELEASE)
    })
}

impl patina_retrieve::fusion::Weights for RetrievalConfig {
    fn weight(&self, oracle: OracleId) -> f64 {
        RetrievalConfig::weight(self, oracle)
    }

    fn prose_weight(&self, oracle: OracleId) -> f64 {
        RetrievalConfig::prose_weight(self, oracle)
    }

    fn sureness(&self, best: f32) -> f64 {
        RetrievalConfig::sureness(self, best)
    }

    fn fusion(&self) -> patina_retrieve::fusion::Fusion {
        RetrievalConfig::fusion(self)
    }

    fn lexical_by_coverage(&self) -> bool {
        self.lexical_by_coverage
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn oracle_budgets_grow_with_the_query_up_to_four_times() {
        let cfg = super::RetrievalConfig::default();
        let ms = |len| cfg.oracle_timeout(len).as_millis();
        assert_eq!(ms(20), 2000);
        assert_eq!(ms(2047), 2000);
        assert_eq!(ms(2048), 4000);
        assert_eq!(ms(5000), 6000);
        assert_eq!(ms(8192), 8000);
        assert_eq!(ms(1 << 20), 8000);
    }

    #[test]
    fn the_oracle_depth_does_not_follow_the_limit_below_the_pool() {
        let cfg = super::RetrievalConfig::default();
        // Chunks: 150 for every limit up to 30, then five per result.
        for limit in [1, 3, 10, 30] {
            assert_eq!(cfg.oracle_depth(limit, false), 150, "{limit} chunks");
        }
        assert_eq!(cfg.oracle_depth(31, false), 155);
        // Files fold chunks: 150 up to 10, then fifteen per result.
        for limit in [1, 5, 10] {
            assert_eq!(cfg.oracle_depth(limit, true), 150, "{limit} files");
        }
        assert_eq!(cfg.oracle_depth(20, true), 300);
        // A huge limit saturates instead of overflowing.
        assert_eq!(cfg.oracle_depth(usize::MAX, true), usize::MAX);
    }

    use super::*;

    #[test]
    fn partial_files_keep_defaults_and_typos_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config.toml");
        std::fs::write(
            &p,
            "[index]\nmax_file_bytes = 10\n[retrieval.weights]\nlexical = 2.0\n",
        )
        .unwrap();
        let c = Config::load(&p).unwrap();
        assert_eq!(c.index.max_file_bytes, 10);
        assert_eq!(c.retrieval.weight(OracleId::Lexical), 2.0);
        assert_eq!(c.retrieval.weight(OracleId::Symbol), 1.5);
        assert_eq!(c.semantic.precision, Precision::Fp32);
        std::fs::write(&p, "[index]\nmax_file_byte = 10\n").unwrap();
        assert!(Config::load(&p).is_err());
        std::fs::write(&p, "[retrieval]\npool = 300\n").unwrap();
        assert_eq!(Config::load(&p).unwrap().retrieval.pool, 300);
        let e = load_error(&p, "[retrieval]\npool = 1000000\n");
        assert!(e.contains("pool = 1000000 is more than 5000"), "{e}");
        assert!(Config::load(&dir.path().join("missing.toml")).is_ok());
    }

    #[test]
    fn pii_patterns_that_do_not_compile_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config.toml");
        let e = load_error(&p, "[pii]\nrepos = [\"*\"]\npatterns = [\"(\"]\n");
        assert!(e.contains("invalid [pii] pattern '('"), "{e}");
        std::fs::write(&p, "[pii]\nrepos = [\"app\"]\n").unwrap();
        let c = Config::load(&p).unwrap();
        let root = Path::new("/r/app");
        assert!(c.pii.scrubber_for("id1", "app", root).is_some());
        assert!(
            c.pii
                .scrubber_for("id2", "other", Path::new("/r/other"))
                .is_none()
        );
    }

    /// The full error chain, as the daemon prints it.
    fn load_error(p: &Path, text: &str) -> String {
        std::fs::write(p, text).unwrap();
        format!("{:#}", Config::load(p).expect_err(text))
    }

    #[test]
    fn unknown_oracles_and_precisions_are_errors_that_name_the_choices() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config.toml");
        for table in ["[retrieval.weights]", "[retrieval.prose_weights]"] {
            let e = load_error(&p, &format!("{table}\nlexcal = 2.0\n"));
            assert!(
                e.contains("lexcal") && e.contains("lexical") && e.contains("semantic"),
                "{e}"
            );
        }
        let e = load_error(&p, "[retrieval]\nweights = { symbl = 1.0 }\n");
        assert!(e.contains("symbl") && e.contains("symbol"), "{e}");
        let e = load_error(&p, "[semantic]\nprecision = \"fp16\"\n");
        assert!(
            e.contains("fp16") && e.contains("fp32") && e.contains("int8"),
            "{e}"
        );
        std::fs::write(
            &p,
            "[semantic]\nprecision = \"int8\"\n[retrieval.weights]\nsession = 0.5\n",
        )
        .unwrap();
        let c = Config::load(&p).unwrap();
        assert_eq!(c.semantic.precision, Precision::Int8);
        assert_eq!(c.retrieval.weight(OracleId::Session), 0.5);
        assert_eq!(c.retrieval.weight(OracleId::Semantic), 1.0);
    }

    #[test]
    fn memory_budgets_out_of_range_are_errors_that_say_the_unit_and_range() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config.toml");
        for bad in ["0", "64", "99999999"] {
            let e = load_error(&p, &format!("[daemon]\nmemory_mb = {bad}\n"));
            assert!(
                e.contains("config.toml") && e.contains("memory_mb") && e.contains("MiB"),
                "{e}"
            );
        }
        let e = load_error(&p, "[daemon]\nmemory_mb = -5\n");
        assert!(e.contains("memory_mb"), "{e}");
        let e = load_error(&p, "[daemon]\nmemory_mb = \"1G\"\n");
        assert!(e.contains("memory_mb") || e.contains("integer"), "{e}");
        std::fs::write(&p, "[daemon]\nmemory_mb = 256\n").unwrap();
        let c = Config::load(&p).unwrap();
        assert_eq!(c.daemon.budget().sled_cache, 16 * 1024 * 1024);
        assert_eq!(
            Config::default().daemon.memory_mb,
            crate::process::memory::DEFAULT_MEMORY_MB
        );
    }
}
