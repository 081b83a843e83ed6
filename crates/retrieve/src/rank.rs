//! Ranking after fusion: what the fused rank score cannot know — what each file is for, whether a
//! chunk *defines* what the query names, whether its path says what the query says, how much of a
//! file matches — applied as bounded multiplicative adjustments, then ordered for the granularity
//! asked: chunks (overlaps removed, repeats of a file decayed) or files (chunk scores aggregated).
//!
//! Every adjustment multiplies the fused score by a factor near 1, so ranking reorders close
//! candidates and never removes one (the relevance floor aside).

use std::collections::{HashMap, HashSet};

use patina_core::{FileRole, OracleId};

use crate::fusion::Contribution;
use crate::query::{QueryPlan, path_words, stem};

/// A fused candidate with what ranking needs to know about it.
#[derive(Clone, Debug)]
pub struct Candidate<K> {
    pub key: K,
    /// The fused (RRF) score.
    pub fused: f64,
    pub provenance: Vec<Contribution>,
    /// Which file it belongs to: the repository's index in the query's scope and the path. `None`
    /// for results that are not part of a file (session notes).
    pub file: Option<(usize, String)>,
    pub role: FileRole,
    pub symbol: Option<String>,
    pub parent: Option<String>,
    /// First and last line, 1-based inclusive.
    pub lines: (u32, u32),
    /// The chunk makes a name the query mentions public under its own path (`pub use`, `export
    /// … from`, a package's `__init__.py`): where users import the name from. Known from the
    /// symbol oracle, which offers such chunks beside the definition.
    pub reexport: bool,
    /// The file stands for its folder: what the language loads for it (`mod.rs`, `lib.rs`,
    /// `__init__.py`, `index.ts`, a Go package's main file) or the file that ties the folder's
    /// files together in the dependency graph. Only asked of files whose folder the query names.
    pub module_root: bool,
    /// The chunk declares and runs nothing: an enum, an interface or a method of one, a type alias.
    pub declaration: bool,
}

/// A candidate with its final score and the adjustments that made it (for explanations).
#[derive(Clone, Debug)]
pub struct Scored<K> {
    pub candidate: Candidate<K>,
    pub score: f64,
    pub factors: Factors,
}

/// The multiplicative adjustments applied to one candidate (1.0 = none).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Factors {
    pub role: f64,
    pub definition: f64,
    pub path: f64,
    pub mention: f64,
    pub near: f64,
}

impl Default for Factors {
    fn default() -> Self {
        Factors {
            role: 1.0,
            definition: 1.0,
            path: 1.0,
            mention: 1.0,
            near: 1.0,
        }
    }
}

impl Factors {
    pub fn product(&self) -> f64 {
        self.role * self.definition * self.path * self.mention * self.near
    }
}

/// Strengths of the ranking rules. The defaults follow from what each rule means rather than from
/// one evaluation set; `bench/RESULTS.md` records how each was checked on several. Read from the
/// `[ranking]` table of the configuration (every key optional, unknown keys rejected).
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RankOptions {
    /// Apply the rules at all; off, results come in fused (RRF) order and a file is its best chunk.
    pub enabled: bool,
    /// Apply the file-role priors of the query's intent.
    pub role_priors: bool,
    /// A test file that is test data (`fixtures/`, `testdata/`: [`patina_core::role::is_test_data`])
    /// takes this share of a test's prior, unless the query asks for fixtures in words: it is
    /// what a test reads, neither the code nor the test.
    pub test_data: f64,
    /// Release notes ([`patina_core::role::is_changelog`]) take this share of their prior, unless
    /// the query asks about releases or changes in words ([`QueryPlan::asks_about_releases`]): a
    /// changelog names every part of the program in a line each, so it matches every question a
    /// little and answers none of them. Below 1, they also come after every other hit of the
    /// lexical and semantic rankings before fusion (the daemon's `release_notes_last`), so their
    /// many sections take no oracle's places from the code.
    pub changelog: f64,
    /// A chunk that declares and runs nothing ([`Candidate::declaration`]: an enum, an
    /// interface and its members, a type alias) takes this share of its prior for a question about how or where
    /// something is done: an option's enum (`DefaultValueHandling`) says in the user's words
    /// what the code that reads it does, but that code is the answer.
    pub declaration: f64,
    /// A chunk that defines a name the query mentions.
    pub definition_boost: f64,
    /// A chunk that re-exports a name the query mentions ([`Candidate::reexport`]): the path
    /// users import it by, so nearly a definition — but below one, so the definition leads and
    /// the re-export follows it rather than the other way round.
    pub reexport_boost: f64,
    /// A chunk whose enclosing symbol (class, impl, heading) is a name the query mentions.
    pub parent_boost: f64,
    /// Per query word found in the file's path (at most [`RankOptions::path_words_max`] count).
    pub path_word_boost: f64,
    pub path_words_max: usize,
    /// A folder's root file ([`Candidate::module_root`]) when the query names the folder ("how
    /// does the searcher work" → `searcher/mod.rs`, `crates/searcher/src/lib.rs`): it names the
    /// folder's parts and how they fit, the first thing to read. On top of the path words, which
    /// lift every file of the folder alike; modest, since a specific chunk elsewhere may still be
    /// the answer.
    pub module_root_boost: f64,
    /// A file the query names (a path or a file name in its text).
    pub mention_boost: f64,
    /// File names the query mentions that name several files in scope (`init.lua` in "my
    /// init.lua", `conftest.py`): they lift none of them. Per query.
    #[serde(skip)]
    pub ambiguous_mentions: Vec<String>,
    /// A file named by a stack-trace frame.
    pub frame_boost: f64,
    /// The chunk a pasted location or a trace's frame points at (the innermost chunk holding its
    /// line, or the test a node id names): this for the first frame, × 0.75 per frame after it,
    /// so a trace's chunks come first, in its order.
    pub location_boost: f64,
    /// Directories the caller wants lifted (`--near DIR`): per query, not configuration.
    #[serde(skip)]
    pub near: Vec<String>,
    /// Whether an oracle of exact evidence (words, names) took part in this query: only then does
    /// "nothing but semantic neighbours" mean the query shares nothing with the code. Per query.
    #[serde(skip)]
    pub exact_oracles_ran: bool,
    pub near_boost: f64,
    /// Chunk level: the n-th chunk of the same file is multiplied by `repeat_decay^(n-1)`.
    pub repeat_decay: f64,
    /// Chunk level, after the repeat decay: maximal marginal relevance. Each next chunk is the one
    /// with the best `λ·relevance − (1−λ)·similarity` to the chunks already chosen, where
    /// similarity is 1 within a file, ½ within a directory or between namesakes (the same symbol
    /// defined in two files). 1.0 turns it off.
    pub mmr_lambda: f64,
    /// File level: a file's score is its best chunk plus these shares of its next best chunks.
    pub coherence: Vec<f64>,
    /// A candidate found by the semantic oracle alone with a cosine below this is not a hit.
    pub semantic_floor: f32,
    /// The same floor for a name (an identifier-like query) when no other oracle matched
    /// anything: the name occurs nowhere in the repository, and a sentence model finds *some*
    /// neighbour for any string (`zzqqxnotathing` reaches cosine 0.47 on CoSQA's functions), so
    /// only a close one counts.
    pub unmatched_floor: f32,
    /// File level: the learned stage reorders the first results by the shipped model
    /// ([`crate::learned`]) after the rules. Off until a fitted model holds out of sample.
    pub learned: bool,
}

impl Default for RankOptions {
    fn default() -> Self {
        RankOptions {
            enabled: true,
            role_priors: true,
            test_data: 0.8,
            changelog: 0.5,
            declaration: 0.8,
            definition_boost: 1.3,
            reexport_boost: 1.2,
            parent_boost: 1.1,
            path_word_boost: 0.08,
            path_words_max: 3,
            module_root_boost: 1.1,
            mention_boost: 1.5,
            ambiguous_mentions: Vec::new(),
            frame_boost: 1.2,
            location_boost: 3.0,
            near: Vec::new(),
            exact_oracles_ran: true,
            near_boost: 1.3,
            repeat_decay: 0.8,
            mmr_lambda: 1.0,
            coherence: vec![0.25, 0.1],
            semantic_floor: 0.2,
            unmatched_floor: 0.55,
            learned: false,
        }
    }
}

/// The oracle whose scores are cosines (for the relevance floor).
pub const SEMANTIC: OracleId = OracleId::Semantic;

/// Does a candidate carry any evidence beyond a weak semantic neighbour?
pub fn above_floor(provenance: &[Contribution], floor: f32) -> bool {
    provenance
        .iter()
        .any(|c| c.oracle != SEMANTIC || c.score >= floor)
}

/// Score every candidate under `plan`, drop those below the relevance floor, best first.
pub fn score<K: Clone>(
    candidates: Vec<Candidate<K>>,
    plan: &QueryPlan,
    opts: &RankOptions,
) -> Vec<Scored<K>> {
    let query_stems = query_stems(plan);
    let ident_names: Vec<String> = plan
        .identifiers
        .iter()
        .map(|i| normalize(&i.name))
        .collect();
    // Qualified names (`Plug.Router.forward`, `Config::load`): name and parent together.
    let ident_qualified: Vec<(String, String)> = plan
        .identifiers
        .iter()
        .filter_map(|i| Some((normalize(&i.name), normalize(i.parent.as_deref()?))))
        .collect();
    let ident_parents: Vec<String> = plan
        .identifiers
        .iter()
        .filter_map(|i| i.parent.as_deref().map(normalize))
        .collect();
    let mut path_cache: HashMap<String, (f64, f64, f64)> = HashMap::new();
    let matched = !opts.exact_oracles_ran
        || candidates.iter().any(|c| {
            c.provenance
                .iter()
                .any(|p| p.oracle != SEMANTIC && p.oracle != OracleId::Graph)
        });
    // (The graph oracle's hits are neighbours of the others' hits: no evidence of their own.)
    // A name that occurs nowhere in the code (no word, no symbol matched) names nothing here: its
    // semantic neighbours must be close to count. A question that shares no word with the code
    // is still a fair semantic question.
    let floor = if !matched && plan.intent == crate::Intent::Identifier {
        opts.unmatched_floor
    } else {
        opts.semantic_floor
    };
    // Per frame, the narrowest candidate holding its line: only that one is where it points.
    let located = |c: &Candidate<K>| -> Vec<usize> {
        let Some((_, path)) = &c.file else {
            return Vec::new();
        };
        plan.locations()
            .iter()
            .enumerate()
            .filter(|(_, f)| same_file(&f.path, path))
            .filter(|(_, f)| match (f.line, &f.function) {
                (Some(l), _) => c.lines.0 <= l && l <= c.lines.1,
                (None, Some(name)) => c.symbol.as_deref() == Some(name.as_str()),
                (None, None) => false,
            })
            .map(|(k, _)| k)
            .collect()
    };
    // Folders one of whose files the query names by its own name ("the scorer" of
    // `searcher/scorer.rs`): a question about that part, not about the folder as a whole.
    let parts_named: HashSet<(usize, String)> = candidates
        .iter()
        .filter(|c| !c.module_root)
        .filter_map(|c| c.file.as_ref())
        .filter(|(_, path)| file_named(path, &query_stems))
        .map(|(repo, path)| (*repo, dir_of(path).to_string()))
        .collect();
    let mut narrowest: HashMap<usize, u32> = HashMap::new();
    for c in &candidates {
        for k in located(c) {
            let span = c.lines.1.saturating_sub(c.lines.0);
            let e = narrowest.entry(k).or_insert(span);
            *e = (*e).min(span);
        }
    }
    let test_data = if asks_for_test_data(plan) {
        1.0
    } else {
        opts.test_data
    };
    let changelog = if plan.asks_about_releases() {
        1.0
    } else {
        opts.changelog
    };
    let mut out: Vec<Scored<K>> = candidates
        .into_iter()
        .filter(|c| !opts.enabled || above_floor(&c.provenance, floor))
        .map(|c| {
            let mut f = Factors::default();
            if !opts.enabled {
                return Scored {
                    score: c.fused,
                    candidate: c,
                    factors: f,
                };
            }
            if let Some((repo, path)) = &c.file {
                if opts.role_priors {
                    f.role = plan.role_prior(c.role);
                    if c.declaration && plan.intent == crate::query::Intent::Implementation {
                        f.role *= opts.declaration;
                    }
                    if c.role == FileRole::Test
                        && test_data < 1.0
                        && patina_core::role::is_test_data(path)
                    {
                        f.role *= test_data;
                    }
                    if changelog < 1.0 && patina_core::role::is_changelog(path) {
                        f.role *= changelog;
                    }
                }
                let (pw, mention, near) = *path_cache.entry(path.clone()).or_insert_with(|| {
                    let words: Vec<String> = path_words(path)
                        .iter()
                        .map(|w| stem(w).to_string())
                        .collect();
                    let matched = query_stems
                        .iter()
                        .filter(|q| words.iter().any(|w| w == *q))
                        .count();
                    let pw = 1.0 + opts.path_word_boost * matched.min(opts.path_words_max) as f64;
                    let mention = if plan.paths.iter().any(|m| {
                        same_file(m, path)
                            && !plan.frames.iter().any(|fr| &fr.path == m)
                            && !opts.ambiguous_mentions.contains(m)
                    }) {
                        opts.mention_boost
                    } else if plan.frames.iter().any(|fr| same_file(&fr.path, path)) {
                        opts.frame_boost
                    } else {
                        1.0
                    };
                    let near = if opts.near.iter().any(|d| in_dir(path, d)) {
                        opts.near_boost
                    } else {
                        1.0
                    };
                    (pw, mention, near)
                });
                f.path = pw;
                f.mention = mention;
                f.near = near;
                if c.module_root
                    && folder_named(path, &query_stems)
                    && !parts_named.contains(&(*repo, dir_of(path).to_string()))
                {
                    f.path *= opts.module_root_boost;
                }
            }
            let span = c.lines.1.saturating_sub(c.lines.0);
            if let Some(k) = located(&c)
                .into_iter()
                .filter(|k| narrowest.get(k) == Some(&span))
                .min()
            {
                f.mention = f
                    .mention
                    .max(opts.location_boost * 0.75f64.powi(k.min(50) as i32));
            }
            if c.reexport {
                // A re-export named like what it re-exports (a Go type alias) is still not the
                // definition: it follows it.
                f.definition = opts.reexport_boost;
            } else if !ident_names.is_empty() {
                let sym = c.symbol.as_deref().map(normalize);
                let parent = c.parent.as_deref().map(normalize);
                if let Some(s) = sym.as_ref().filter(|s| ident_names.contains(s)) {
                    f.definition = opts.definition_boost;
                    // The very name asked, under the parent it was asked under: above its
                    // namesakes elsewhere, as the parent's own members are above other code.
                    if parent
                        .as_ref()
                        .is_some_and(|p| ident_qualified.iter().any(|(n, q)| n == s && q == p))
                    {
                        f.definition *= opts.parent_boost;
                    }
                } else if parent
                    .as_ref()
                    .is_some_and(|p| ident_names.contains(p) || ident_parents.contains(p))
                {
                    f.definition = opts.parent_boost;
                }
            }
            Scored {
                score: c.fused * f.product(),
                candidate: c,
                factors: f,
            }
        })
        .collect();
    sort(&mut out);
    // A pasted location or trace points at its chunks exactly: they come first, in the trace's
    // order (innermost first), whatever the words and meaning say; the rest follow by score.
    if !narrowest.is_empty() {
        let at = |c: &Candidate<K>| {
            let span = c.lines.1.saturating_sub(c.lines.0);
            located(c)
                .into_iter()
                .filter(|k| narrowest.get(k) == Some(&span))
                .min()
                .unwrap_or(usize::MAX)
        };
        out.sort_by_cached_key(|s| at(&s.candidate));
    }
    out
}

/// The stems of a short query's content words (none for a long text: its words are too many to
/// say what a path should hold).
fn query_stems(plan: &QueryPlan) -> Vec<String> {
    if plan.long {
        return Vec::new();
    }
    let mut v: Vec<String> = plan
        .content_words
        .iter()
        .map(|w| stem(w).to_string())
        .collect();
    v.dedup();
    v
}

/// The folder a root file stands for: its own, or the one above a package's `src`/`lib`
/// (`crates/searcher/src/lib.rs` → `searcher`). `None` at the top of the repository.
pub fn module_folder(path: &str) -> Option<&str> {
    let mut dirs = path.rsplit('/').skip(1);
    let dir = dirs.next()?;
    if matches!(dir, "src" | "lib") {
        return dirs.next();
    }
    Some(dir)
}

/// Does the query name the folder `path` would stand for as its root: every word of the folder's
/// name (`query_engine` → query, engine) among the query's words, compared by stem?
pub fn names_module_folder(plan: &QueryPlan, path: &str) -> bool {
    folder_named(path, &query_stems(plan))
}

/// Does the query name the file `path` by a word of its own name (`scorer` of `scorer.rs`)?
fn file_named(path: &str, query_stems: &[String]) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    path_words(name)
        .iter()
        .any(|w| query_stems.iter().any(|q| q == stem(w)))
}

fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

fn folder_named(path: &str, query_stems: &[String]) -> bool {
    let Some(folder) = module_folder(path) else {
        return false;
    };
    // A compound name comes whole, then in parts (`query_engine`, `query`, `engine`): the
    // parts are what a question says.
    let mut words = path_words(folder);
    if words.len() > 1 {
        words.remove(0);
    }
    !words.is_empty()
        && words
            .iter()
            .all(|w| query_stems.iter().any(|q| q == stem(w)))
}

fn sort<K>(v: &mut [Scored<K>]) {
    // Stable: equal scores keep the fused order (itself deterministic).
    v.sort_by(|a, b| b.score.total_cmp(&a.score));
}

/// Chunk level: drop chunks that overlap a better chunk of the same file, and decay the n-th chunk
/// of a file by `repeat_decay^(n-1)` so one file does not fill the list.
pub fn chunks<K: Clone>(mut scored: Vec<Scored<K>>, opts: &RankOptions) -> Vec<Scored<K>> {
    let mut kept: Vec<Scored<K>> = Vec::with_capacity(scored.len());
    // Per file: how many chunks were kept, and their line ranges.
    type Kept = (u32, Vec<(u32, u32)>);
    let mut per_file: HashMap<(usize, String), Kept> = HashMap::new();
    for mut s in scored.drain(..) {
        if let Some(file) = &s.candidate.file {
            let e = per_file.entry(file.clone()).or_default();
            let (a, b) = s.candidate.lines;
            if e.1.iter().any(|&(x, y)| a <= y && x <= b) {
                continue;
            }
            e.1.push((a, b));
            if opts.enabled {
                s.score *= opts.repeat_decay.powi(e.0 as i32);
            }
            e.0 += 1;
        }
        kept.push(s);
    }
    sort(&mut kept);
    if opts.enabled && opts.mmr_lambda < 1.0 {
        kept = mmr(kept, opts.mmr_lambda);
    }
    kept
}

/// How alike two candidates are for diversity: 1 in the same file, ½ in the same directory or
/// when both define the same name, else 0.
fn similarity<K>(a: &Candidate<K>, b: &Candidate<K>) -> f64 {
    let (Some((ra, pa)), Some((rb, pb))) = (&a.file, &b.file) else {
        return 0.0;
    };
    if ra == rb && pa == pb {
        return 1.0;
    }
    let dir = |p: &str| p.rsplit_once('/').map_or("", |(d, _)| d).to_string();
    let namesakes = a.symbol.is_some() && a.symbol == b.symbol;
    if (ra == rb && dir(pa) == dir(pb)) || namesakes {
        0.5
    } else {
        0.0
    }
}

/// Greedy maximal-marginal-relevance order of `ranked` (best first). Scores are kept: only the
/// order changes, and relevance is each score relative to the best.
fn mmr<K>(ranked: Vec<Scored<K>>, lambda: f64) -> Vec<Scored<K>> {
    let top = ranked
        .first()
        .map_or(1.0, |s| s.score)
        .max(f64::MIN_POSITIVE);
    let mut rest: Vec<Option<Scored<K>>> = ranked.into_iter().map(Some).collect();
    let mut max_sim = vec![0.0f64; rest.len()];
    let mut out: Vec<Scored<K>> = Vec::with_capacity(rest.len());
    // Only the head is worth diversifying; the tail keeps its order.
    const HEAD: usize = 50;
    while out.len() < HEAD {
        let best = rest
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|s| (i, s)))
            .map(|(i, s)| (i, lambda * s.score / top - (1.0 - lambda) * max_sim[i]))
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)));
        let Some((i, _)) = best else { break };
        let chosen = rest[i].take().expect("present");
        for (j, other) in rest.iter().enumerate() {
            if let Some(o) = other {
                max_sim[j] = max_sim[j].max(similarity(&chosen.candidate, &o.candidate));
            }
        }
        out.push(chosen);
    }
    out.extend(rest.into_iter().flatten());
    out
}

/// A file's aggregate: its best chunk (the representative) and the file's score.
#[derive(Clone, Debug)]
pub struct FileScore<K> {
    pub best: Scored<K>,
    pub score: f64,
    /// How many candidate chunks of the file matched.
    pub matches: usize,
    /// Provenance of the whole file: each oracle's best rank over its chunks.
    pub provenance: Vec<Contribution>,
}

/// How file-level fusion weighs each oracle (the same method, weights and `k` as the chunks').
#[derive(Clone, Debug)]
pub struct FileFusion {
    pub fusion: crate::fusion::Fusion,
    pub weights: Vec<(OracleId, f64)>,
}

impl FileFusion {
    fn weight(&self, oracle: OracleId) -> f64 {
        self.weights
            .iter()
            .find(|(o, _)| *o == oracle)
            .map_or(1.0, |(_, w)| *w)
    }
}

/// File level: the oracles' rankings are fused again *per file* — each oracle ranks files as it
/// would alone, by its best chunk there plus coherence shares of its next ones, so an oracle that
/// finds one chunk of a file and another that finds a different chunk of it agree on the file, and
/// a file an oracle finds in several places outranks its one lucky chunk elsewhere — and the file
/// takes the ranking factors of its best chunk. Then
/// shares ([`RankOptions::coherence`]) of its next best chunks are added, so a file that matches
/// in several places outranks one lucky chunk. Results that are not part of a file (notes) stand
/// alone with their chunk score. A file's score evidence from an oracle is that of its best chunk
/// there ([`crate::fusion::fuse`]).
pub fn files<K: Clone>(
    scored: Vec<Scored<K>>,
    opts: &RankOptions,
    fusion: Option<&FileFusion>,
) -> Vec<FileScore<K>> {
    let own = match (fusion, opts.enabled) {
        (Some(fusion), true) => oracle_file_scores(&scored, fusion, opts),
        _ => HashMap::new(),
    };
    let mut out = aggregate(scored, opts);
    if let (Some(fusion), true) = (fusion, opts.enabled) {
        let mut file_rrf = vec![0.0f64; out.len()];
        // Each oracle's file ranking: files ordered by the oracle's own file scores, ties by the
        // best rank of their chunks; a file's evidence is that of its best chunk there.
        let mut per_oracle: HashMap<OracleId, Vec<(f64, u32, usize, f64)>> = HashMap::new();
        for (i, f) in out.iter().enumerate() {
            let Some(file) = &f.best.candidate.file else {
                continue;
            };
            for c in &f.provenance {
                let s = own.get(&(c.oracle, file.clone())).copied().unwrap_or(0.0);
                per_oracle
                    .entry(c.oracle)
                    .or_default()
                    .push((s, c.rank, i, c.score_evidence));
            }
        }
        let fu = &fusion.fusion;
        // In oracle order: a sum in a hash map's order differs in its last bits between
        // processes, enough to flip a tie.
        let mut per_oracle: Vec<_> = per_oracle.into_iter().collect();
        per_oracle.sort_by_key(|(o, _)| *o);
        for (oracle, mut ranked) in per_oracle {
            let w = fusion.weight(oracle);
            ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
            for (file_rank, (_, _, i, e)) in ranked.into_iter().enumerate() {
                file_rrf[i] += w * fu.share(fu.place(file_rank as f64 + 1.0, e));
            }
        }
        for (f, rrf) in out.iter_mut().zip(file_rrf) {
            if f.best.candidate.file.is_some() {
                // Half the chunk-level view (the best chunk and its coherence), half the
                // file-level agreement of the oracles.
                let factors = f.best.factors.product();
                let extra = f.score - f.best.score;
                f.score = 0.5 * f.score + 0.5 * (rrf * factors + extra);
            }
        }
        out.sort_by(|a, b| b.score.total_cmp(&a.score));
    }
    out
}

/// How each oracle alone scores each file: the share of its best chunk there plus coherence
/// shares of its next ones, as the file level scores a file from fused chunks. Empty when only
/// one oracle ranked anything (then files are ordered by their best chunk's rank).
fn oracle_file_scores<K>(
    scored: &[Scored<K>],
    fusion: &FileFusion,
    opts: &RankOptions,
) -> HashMap<(OracleId, (usize, String)), f64> {
    let fu = &fusion.fusion;
    let mut shares: HashMap<(OracleId, &(usize, String)), Vec<f64>> = HashMap::new();
    for s in scored {
        let Some(file) = &s.candidate.file else {
            continue;
        };
        for c in &s.candidate.provenance {
            shares
                .entry((c.oracle, file))
                .or_default()
                .push(fu.share(fu.place(c.rank as f64, c.score_evidence)));
        }
    }
    // One oracle alone needs no agreement: its files stand as the chunk level ranks them.
    let oracles: HashSet<OracleId> = shares.keys().map(|(o, _)| *o).collect();
    if oracles.len() < 2 {
        return HashMap::new();
    }
    shares
        .into_iter()
        .map(|((oracle, file), mut v)| {
            v.sort_by(|a, b| b.total_cmp(a));
            let extra: f64 = v
                .iter()
                .skip(1)
                .zip(&opts.coherence)
                .map(|(s, c)| s * c)
                .sum();
            ((oracle, file.clone()), v[0] + extra)
        })
        .collect()
}

/// Group chunk scores per file: best chunk plus coherence shares of the next ones.
fn aggregate<K: Clone>(scored: Vec<Scored<K>>, opts: &RankOptions) -> Vec<FileScore<K>> {
    let mut out: Vec<FileScore<K>> = Vec::new();
    let mut index: HashMap<(usize, String), usize> = HashMap::new();
    for s in scored {
        let at = match &s.candidate.file {
            Some(file) => match index.get(file) {
                Some(&i) => i,
                None => {
                    index.insert(file.clone(), out.len());
                    out.push(FileScore {
                        score: s.score,
                        matches: 0,
                        provenance: Vec::new(),
                        best: s.clone(),
                    });
                    out.len() - 1
                }
            },
            None => {
                out.push(FileScore {
                    score: s.score,
                    matches: 0,
                    provenance: Vec::new(),
                    best: s.clone(),
                });
                out.len() - 1
            }
        };
        let f = &mut out[at];
        if f.matches > 0 && opts.enabled {
            f.score += opts.coherence.get(f.matches - 1).copied().unwrap_or(0.0) * s.score;
        }
        f.matches += 1;
        for c in &s.candidate.provenance {
            match f.provenance.iter_mut().find(|p| p.oracle == c.oracle) {
                Some(p) if p.rank <= c.rank => {}
                Some(p) => *p = c.clone(),
                None => f.provenance.push(c.clone()),
            }
        }
    }
    out.sort_by(|a, b| b.score.total_cmp(&a.score));
    out
}

/// Whether the question asks for test data in words ("the fixtures for …", "testdata").
fn asks_for_test_data(plan: &QueryPlan) -> bool {
    plan.content_words.iter().any(|w| {
        matches!(
            w.as_str(),
            "fixture" | "fixtures" | "testdata" | "snapshot" | "snapshots"
        )
    })
}

/// Names compared across styles: `parseArgs`, `parse_args` and `ParseArgs` are one name.
pub fn normalize(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// Does the mention `m` (a path as written in a query or trace, possibly absolute or partial)
/// name the repository file `path`? The file names must be equal and, when the mention has
/// directories, the trailing directories the two share must include the mention's last one.
pub fn same_file(m: &str, path: &str) -> bool {
    let mut a = m.trim_start_matches("./").rsplit('/');
    let mut b = path.rsplit('/');
    let (Some(an), Some(bn)) = (a.next(), b.next()) else {
        return false;
    };
    if an != bn {
        return false;
    }
    match (a.next(), b.next()) {
        (None, _) => true,
        (Some(ad), Some(bd)) => ad == bd,
        (Some(_), None) => false,
    }
}

/// Is `path` inside directory `dir` (relative, `/`-separated)?
pub fn in_dir(path: &str, dir: &str) -> bool {
    let dir = dir.trim_matches('/').trim_start_matches("./");
    !dir.is_empty()
        && path.len() > dir.len()
        && path.starts_with(dir)
        && path.as_bytes()[dir.len()] == b'/'
}

mod handover;
#[cfg(test)]
mod tests;

pub use handover::{Definitions, hand_over};
