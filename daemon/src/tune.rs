//! `patina tune`: a repository's own fusion weights and ranking-rule strengths, learned from its
//! history. Recent commits with informative messages become questions and the files they changed
//! the answers (`Case`); feedback records (`patina_feedback`, hits an agent read) add questions
//! with the files that were used. The newest [`TuneConfig::queries`] commits are the held-out
//! slice, the as many before them the training slice.
//!
//! No leakage from the future of a question: the history oracle is asked with
//! `OracleQuery::history_before` = the commit's time, so only older commits vote. The corpus is a
//! *time split of the current index* — the files as they are now, not at the commit's parent —
//! which keeps a run within minutes (checking out and re-indexing the parent of every question
//! would take hours on two cores); the files' later edits are the leakage that remains, the same
//! for every setting compared.
//!
//! Every oracle is asked once per question; the rankings are kept, and each setting tried replays
//! only the fusion and the ranking rules (pure, ~ms per question): [`adjust_weights`], RRF,
//! `rank::score`, `rank::files` — the query engine's own steps. Coordinate ascent
//! ([`ascend`]) from the configured settings keeps a change only when it raises MRR@10 on the
//! training slice, so the result is never worse there than the defaults. The held-out slice then
//! decides: the tuned settings are stored and used (`tuned.json`, [`effective`]) only when they
//! beat the defaults on it; otherwise the defaults are kept and the result says so.
//!
//! A run is a thread of its own at the lowest CPU priority; queries never wait for it.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use anyhow::{Context, Result};
use patina_core::OracleId;
use patina_core::tokens::for_each_token;
use patina_retrieve::QueryPlan;
use patina_retrieve::fusion::{Ranking, rrf};
use patina_retrieve::rank::{self, Candidate, RankOptions};
use serde::{Deserialize, Serialize};

use crate::config::{Config, RetrievalConfig, TuneConfig};
use crate::oracles::{HitKey, Oracle, OracleQuery};
use crate::registry::UserError;
use crate::repo::Repo;
use crate::search::{QueryEngine, adjust_weights};

/// The settings a query is answered with: the configuration, or a tuned repository's own.
#[derive(Clone, Debug)]
pub(crate) struct Tuning {
    pub retrieval: RetrievalConfig,
    pub ranking: RankOptions,
    /// Whether a query that names no oracles runs the history oracle.
    pub history_by_default: bool,
    /// `[history] vote_prior` and `scope_prior`.
    pub vote_prior: f64,
    pub scope_prior: f64,
}

impl Tuning {
    pub fn from_config(cfg: &Config) -> Tuning {
        Tuning {
            retrieval: cfg.retrieval.clone(),
            ranking: cfg.ranking.clone(),
            history_by_default: cfg.history.by_default,
            vote_prior: cfg.history.vote_prior,
            scope_prior: cfg.history.scope_prior,
        }
    }
}

/// The settings for a query over `repos`: a single tuned repository's overrides on top of the
/// configuration, else the configuration.
pub(crate) fn effective(cfg: &Config, repos: &[Arc<Repo>]) -> Tuning {
    let plain = Tuning::from_config(cfg);
    let [repo] = repos else { return plain };
    let Some(tuned) = repo.tune().tuned() else {
        return plain;
    };
    if !tuned.result.applied || tuned.result.overrides.is_empty() {
        return plain;
    }
    let mut t = Tuning::from_config(cfg);
    // The history switch last: setting its weight turns it on (see `Knob::set`).
    let mut names: Vec<(&String, &f64)> = tuned.result.overrides.iter().collect();
    names.sort_by_key(|(n, _)| Knob::parse(n) == Some(Knob::HistoryOn));
    for (name, v) in names {
        if let Some(k) = Knob::parse(name) {
            k.set(&mut t, *v);
        }
    }
    t
}

/// One tunable setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Knob {
    /// `[retrieval.weights] <oracle>`; a history weight above 0 also runs it by default.
    Weight(OracleId),
    /// `[history] by_default` (1 = on, 0 = off).
    HistoryOn,
    /// `[history] vote_prior`, `scope_prior`.
    VotePrior,
    ScopePrior,
    /// `[retrieval.prose_weights] lexical`.
    ProseLexical,
    /// `[ranking] definition_boost`, `parent_boost`, `mention_boost` (factors ≥ 1).
    Definition,
    Parent,
    Mention,
    /// `[ranking] path_word_boost` (an excess over 1 per word).
    PathWord,
    /// `[ranking] coherence[0]`: the share of a file's second best chunk.
    Coherence,
}

impl Knob {
    pub fn name(self) -> String {
        match self {
            Knob::Weight(o) => format!("weight.{}", o.name()),
            Knob::HistoryOn => "history.by_default".into(),
            Knob::VotePrior => "history.vote_prior".into(),
            Knob::ScopePrior => "history.scope_prior".into(),
            Knob::ProseLexical => "prose_weight.lexical".into(),
            Knob::Definition => "ranking.definition_boost".into(),
            Knob::Parent => "ranking.parent_boost".into(),
            Knob::Mention => "ranking.mention_boost".into(),
            Knob::PathWord => "ranking.path_word_boost".into(),
            Knob::Coherence => "ranking.coherence".into(),
        }
    }

    pub fn parse(name: &str) -> Option<Knob> {
        Some(match name {
            "prose_weight.lexical" => Knob::ProseLexical,
            "history.by_default" => Knob::HistoryOn,
            "history.vote_prior" => Knob::VotePrior,
            "history.scope_prior" => Knob::ScopePrior,
            "ranking.definition_boost" => Knob::Definition,
            "ranking.parent_boost" => Knob::Parent,
            "ranking.mention_boost" => Knob::Mention,
            "ranking.path_word_boost" => Knob::PathWord,
            "ranking.coherence" => Knob::Coherence,
            _ => Knob::Weight(OracleId::parse(name.strip_prefix("weight.")?)?),
        })
    }

    pub fn get(self, t: &Tuning) -> f64 {
        match self {
            Knob::Weight(o) => t.retrieval.weight(o),
            Knob::HistoryOn => t.history_by_default as u8 as f64,
            Knob::VotePrior => t.vote_prior,
            Knob::ScopePrior => t.scope_prior,
            Knob::ProseLexical => t.retrieval.prose_weight(OracleId::Lexical),
            Knob::Definition => t.ranking.definition_boost,
            Knob::Parent => t.ranking.parent_boost,
            Knob::Mention => t.ranking.mention_boost,
            Knob::PathWord => t.ranking.path_word_boost,
            Knob::Coherence => t.ranking.coherence.first().copied().unwrap_or(0.0),
        }
    }

    pub fn set(self, t: &mut Tuning, v: f64) {
        match self {
            Knob::Weight(o) => {
                t.retrieval.weights.insert(o, v);
                if o == OracleId::History && v > 0.0 {
                    t.history_by_default = true;
                }
            }
            Knob::HistoryOn => t.history_by_default = v > 0.5,
            Knob::VotePrior => t.vote_prior = v,
            Knob::ScopePrior => t.scope_prior = v,
            Knob::ProseLexical => {
                t.retrieval.prose_weights.insert(OracleId::Lexical, v);
            }
            Knob::Definition => t.ranking.definition_boost = v,
            Knob::Parent => t.ranking.parent_boost = v,
            Knob::Mention => t.ranking.mention_boost = v,
            Knob::PathWord => t.ranking.path_word_boost = v,
            Knob::Coherence => match t.ranking.coherence.first_mut() {
                Some(c) => *c = v,
                None => t.ranking.coherence.push(v),
            },
        }
    }

    /// The values tried from `v`: scaled down and up (and off), rounded to 3 decimals; a weight
    /// that is off is tried at small to full weights. Factors scale their excess over 1.
    pub fn candidates(self, v: f64) -> Vec<f64> {
        let scaled = |base: f64, steps: &[f64]| -> Vec<f64> {
            steps.iter().map(|s| base * s).collect::<Vec<f64>>()
        };
        let raw = match self {
            Knob::Weight(_) | Knob::ProseLexical if v <= 0.0 => vec![0.05, 0.1, 0.2, 0.5, 1.0],
            Knob::Weight(_) => scaled(v, &[0.0, 0.25, 0.5, 0.75, 1.5, 2.0, 3.0]),
            Knob::ProseLexical => scaled(v, &[0.0, 0.5, 2.0, 4.0, 8.0]),
            Knob::Definition | Knob::Parent | Knob::Mention => {
                scaled(v - 1.0, &[0.0, 0.5, 1.5, 2.0])
                    .into_iter()
                    .map(|e| 1.0 + e)
                    .collect()
            }
            Knob::HistoryOn => vec![1.0 - v],
            Knob::PathWord | Knob::Coherence | Knob::VotePrior | Knob::ScopePrior if v <= 0.0 => {
                vec![0.05, 0.1, 0.25]
            }
            Knob::PathWord | Knob::Coherence | Knob::VotePrior | Knob::ScopePrior => {
                scaled(v, &[0.0, 0.5, 1.5, 2.0])
            }
        };
        let mut out: Vec<f64> = Vec::new();
        for x in raw {
            let x = (x * 1000.0).round() / 1000.0;
            if (x - v).abs() > 1e-9 && !out.iter().any(|o| (o - x).abs() < 1e-9) {
                out.push(x);
            }
        }
        out
    }
}

/// Coordinate ascent: for each knob in turn, the candidate value that raises `eval` the most
/// (by more than `min_gain`) replaces the current one; passes repeat until one changes nothing or `rounds` are
/// done. Starts from `start` and only ever accepts improvements, so the result scores at least
/// `eval(start)`. Returns the settings, their score and the score of `start`.
pub(crate) fn ascend(
    start: &Tuning,
    knobs: &[Knob],
    rounds: usize,
    min_gain: f64,
    mut eval: impl FnMut(&Tuning) -> f64,
) -> (Tuning, f64, f64) {
    let first = eval(start);
    let (mut best, mut score) = (start.clone(), first);
    for _ in 0..rounds.max(1) {
        let mut changed = false;
        for &k in knobs {
            let mut pick: Option<(f64, f64)> = None;
            for v in k.candidates(k.get(&best)) {
                let mut t = best.clone();
                k.set(&mut t, v);
                let s = eval(&t);
                if s > pick.map_or(score + min_gain, |p| p.1) + 1e-9 {
                    pick = Some((v, s));
                }
            }
            if let Some((v, s)) = pick {
                k.set(&mut best, v);
                score = s;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    (best, score, first)
}

/// What a run found, as stored in `tuned.json`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct TuneResult {
    /// The overrides are in use: they beat the defaults on the held-out slice.
    pub applied: bool,
    /// Setting ([`Knob::name`]) → tuned value, for the settings that differ from the defaults.
    pub overrides: BTreeMap<String, f64>,
    /// Setting → the configured value it replaces.
    pub defaults: BTreeMap<String, f64>,
    pub train_queries: usize,
    pub heldout_queries: usize,
    pub feedback_queries: usize,
    pub train_before: f64,
    pub train_after: f64,
    pub heldout_before: f64,
    pub heldout_after: f64,
    pub heldout_r5_before: f64,
    pub heldout_r5_after: f64,
    pub took_ms: u64,
    pub head: String,
    pub finished_unix_ms: i64,
    pub oracles: Vec<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Tuned {
    pub result: TuneResult,
}

/// Progress of a run.
#[derive(Clone, Debug, Default)]
pub(crate) struct Progress {
    pub running: bool,
    pub phase: String,
    pub done: u32,
    pub total: u32,
    /// Why the last run failed ("" when it did not).
    pub error: String,
}

/// A repository's stored tuning (`tuned.json`) and the progress of its run.
pub(crate) struct TuneSlot {
    file: PathBuf,
    tuned: RwLock<Option<Arc<Tuned>>>,
    progress: Mutex<Progress>,
}

impl TuneSlot {
    /// Load `file`; a missing or unreadable one means untuned.
    pub fn open(file: &Path) -> TuneSlot {
        let tuned = std::fs::read(file)
            .ok()
            .and_then(|b| serde_json::from_slice::<Tuned>(&b).ok())
            .map(Arc::new);
        TuneSlot {
            file: file.to_path_buf(),
            tuned: RwLock::new(tuned),
            progress: Mutex::new(Progress::default()),
        }
    }

    pub fn tuned(&self) -> Option<Arc<Tuned>> {
        self.tuned.read().expect("tuned lock").clone()
    }

    pub fn progress(&self) -> Progress {
        self.progress.lock().expect("tune progress lock").clone()
    }

    fn update(&self, f: impl FnOnce(&mut Progress)) {
        f(&mut self.progress.lock().expect("tune progress lock"));
    }

    /// Store (atomically) or remove the tuned result.
    fn store(&self, tuned: Option<Tuned>) -> Result<()> {
        match &tuned {
            Some(t) => {
                let tmp = self.file.with_extension("json.tmp");
                std::fs::write(&tmp, serde_json::to_vec_pretty(t)?)
                    .with_context(|| format!("writing {}", tmp.display()))?;
                std::fs::rename(&tmp, &self.file)
                    .with_context(|| format!("writing {}", self.file.display()))?;
            }
            None => match std::fs::remove_file(&self.file) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e).context("removing tuned.json"),
            },
        }
        *self.tuned.write().expect("tuned lock") = tuned.map(Arc::new);
        Ok(())
    }
}

/// Drop `repo`'s tuned settings: its queries use the configuration again.
pub(crate) fn reset(repo: &Repo) -> Result<()> {
    if repo.tune().progress().running {
        return Err(UserError::Invalid(format!(
            "{} is being tuned; reset when it is done",
            repo.record().name
        ))
        .into());
    }
    repo.tune().store(None)?;
    repo.bump_generation();
    Ok(())
}

/// Start tuning `repo` in the background (a thread at the lowest CPU priority). `feedback`:
/// questions with the files used in their answers. An error when a run is going on.
pub(crate) fn start(
    engine: QueryEngine,
    repo: Arc<Repo>,
    feedback: Vec<(String, Vec<String>)>,
) -> Result<()> {
    {
        let mut p = repo.tune().progress.lock().expect("tune progress lock");
        if p.running {
            return Err(UserError::Invalid(format!(
                "{} is being tuned already ({} {}/{})",
                repo.record().name,
                p.phase,
                p.done,
                p.total
            ))
            .into());
        }
        *p = Progress {
            running: true,
            phase: "history".into(),
            ..Progress::default()
        };
    }
    let r = repo.clone();
    let spawned = std::thread::Builder::new()
        .name("patina-tune".into())
        .spawn(move || {
            lower_priority();
            let res = run(&engine, &r, &feedback);
            let error = match res {
                Ok(()) => String::new(),
                Err(e) => {
                    tracing::warn!(repo = %r.id(), "tune: {e:#}");
                    format!("{e:#}")
                }
            };
            r.tune().update(|p| {
                p.running = false;
                p.error = error;
            });
        });
    if let Err(e) = spawned {
        repo.tune().update(|p| p.running = false);
        return Err(e).context("starting the tune thread");
    }
    Ok(())
}

/// This thread at nice 19 (Linux: per thread), so tuning yields to queries and indexing.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain system calls on the calling thread's own id.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, 19);
    }
}

/// One question: its oracles' rankings (asked once) and what replaying the fusion needs.
struct Case {
    plan: Arc<QueryPlan>,
    rankings: Vec<Ranking<HitKey>>,
    prose: bool,
    /// The best lexical chunk holds every content word (before `trust_full_match`).
    covers_all: bool,
    near: Vec<String>,
    templates: HashMap<HitKey, Candidate<HitKey>>,
    /// The history oracle's votes per file (`crate::history::split_votes`).
    votes: HashMap<(usize, String), f64>,
    /// The scope prior's directory shares (`crate::history::scope_shares`).
    scope: Vec<HashMap<String, f64>>,
    answers: HashSet<String>,
}

/// The position (0-based) of the first answer among the top 10 files under `t`.
fn first_answer(case: &mut Case, t: &Tuning) -> Option<usize> {
    let recognised = case.prose && t.retrieval.trust_full_match && case.covers_all;
    adjust_weights(
        &mut case.rankings,
        &t.retrieval,
        &case.plan,
        case.prose,
        recognised,
    );
    // The history oracle runs only when it is in the default set.
    let history = t.history_by_default;
    let mut active: Vec<Ranking<HitKey>> = Vec::with_capacity(case.rankings.len());
    for r in case.rankings.iter_mut() {
        if r.oracle == OracleId::History && !history {
            continue;
        }
        active.push(Ranking {
            oracle: r.oracle,
            weight: r.weight,
            items: std::mem::take(&mut r.items),
        });
    }
    let k = t.retrieval.rrf_k;
    let fused = rrf(&active, k);
    let weights: Vec<(OracleId, f64)> = active.iter().map(|r| (r.oracle, r.weight)).collect();
    let exact_oracles_ran = active
        .iter()
        .any(|r| r.oracle != rank::SEMANTIC && r.oracle != OracleId::Graph);
    for a in active {
        if let Some(r) = case.rankings.iter_mut().find(|r| r.oracle == a.oracle) {
            r.items = a.items;
        }
    }
    let candidates: Vec<Candidate<HitKey>> = fused
        .into_iter()
        .filter_map(|f| {
            let mut c = case.templates.get(&f.key)?.clone();
            c.fused = f.score;
            c.provenance = f.provenance;
            Some(c)
        })
        .collect();
    let opts = RankOptions {
        near: case.near.clone(),
        exact_oracles_ran,
        ..t.ranking.clone()
    };
    let mut scored = rank::score(candidates, &case.plan, &opts);
    if history {
        crate::history::apply_vote_prior(&mut scored, &case.votes, t.vote_prior);
        crate::history::apply_scope_prior(&mut scored, &case.scope, t.scope_prior);
    }
    let files = rank::files(scored, &opts, Some(&rank::FileFusion { k, weights }));
    files.iter().take(10).position(|f| {
        f.best
            .candidate
            .file
            .as_ref()
            .is_some_and(|(_, p)| case.answers.contains(p))
    })
}

/// MRR@10 and Recall@5 (an answer among the first five files) of `cases` under `t`.
fn measure(cases: &mut [Case], t: &Tuning) -> (f64, f64) {
    if cases.is_empty() {
        return (0.0, 0.0);
    }
    let (mut rr, mut r5) = (0.0, 0.0);
    for c in cases.iter_mut() {
        if let Some(i) = first_answer(c, t) {
            rr += 1.0 / (i + 1) as f64;
            r5 += (i < 5) as u8 as f64;
        }
    }
    let n = cases.len() as f64;
    (rr / n, r5 / n)
}

/// Whether a commit message says enough to be a question: at least `min_words` distinct words of
/// three or more letters.
pub(crate) fn informative(message: &str, min_words: usize) -> bool {
    let mut words: HashSet<String> = HashSet::new();
    for_each_token(message, |_, _, t| {
        if t.len() >= 3 && t.chars().all(|c| c.is_alphabetic()) {
            words.insert(t.to_lowercase());
        }
    });
    words.len() >= min_words
}

/// A question of the history: the message, the commit's time and the files it changed that the
/// index has now.
struct Question {
    text: String,
    before: Option<i64>,
    answers: HashSet<String>,
}

fn run(engine: &QueryEngine, repo: &Arc<Repo>, feedback: &[(String, Vec<String>)]) -> Result<()> {
    let t0 = Instant::now();
    let registry = engine.registry().clone();
    let cfg = &registry.config;
    let tcfg: &TuneConfig = &cfg.tune;
    let view = crate::history::sync(repo)?;
    let indexed: HashSet<String> =
        repo.with_chunks(|c| c.values().map(|m| m.path.clone()).collect());
    // Newest first: the first `queries` are held out, the next `queries` train.
    let mut commits: Vec<Question> = Vec::new();
    for c in &view.commits {
        if commits.len() >= 2 * tcfg.queries {
            break;
        }
        if c.files.is_empty() || c.files.len() > tcfg.max_answer_files {
            continue;
        }
        if !informative(&c.record.message, tcfg.min_words) {
            continue;
        }
        let answers: HashSet<String> = c
            .files
            .iter()
            .filter(|f| indexed.contains(*f))
            .cloned()
            .collect();
        if answers.is_empty() {
            continue;
        }
        let mut text = c.record.message.clone();
        if text.len() > crate::search::MAX_QUERY_BYTES {
            let mut cut = crate::search::MAX_QUERY_BYTES;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
        }
        commits.push(Question {
            text,
            before: Some(c.record.time),
            answers,
        });
    }
    if commits.len() < 10 {
        anyhow::bail!(
            "too few informative commits to tune on: {} (at least 10 with {}+ words, \
             touching 1-{} indexed files)",
            commits.len(),
            tcfg.min_words,
            tcfg.max_answer_files
        );
    }
    let held = commits.len().div_ceil(2).min(tcfg.queries);
    let train_commits = commits.split_off(held);
    let heldout = commits;
    let fb: Vec<Question> = feedback
        .iter()
        .filter_map(|(q, paths)| {
            let answers: HashSet<String> = paths
                .iter()
                .filter(|p| indexed.contains(*p))
                .cloned()
                .collect();
            (!answers.is_empty() && !q.trim().is_empty()).then(|| Question {
                text: q.clone(),
                before: None,
                answers,
            })
        })
        .collect();
    let feedback_queries = fb.len();

    // The oracles of a query that names none, history included (tuning decides whether it runs).
    let oracles: Vec<Arc<dyn Oracle>> = engine
        .select_oracles(&[], true)?
        .into_iter()
        .filter(|o| {
            matches!(
                o.id(),
                OracleId::Lexical | OracleId::Symbol | OracleId::Semantic | OracleId::History
            )
        })
        .filter(|o| o.id() != OracleId::Semantic || registry.semantic.is_on())
        .collect();
    let total = (train_commits.len() + fb.len() + heldout.len()) as u32;
    repo.tune().update(|p| {
        p.phase = "asking".into();
        p.done = 0;
        p.total = total;
    });
    let ask = |qs: Vec<Question>| -> Result<Vec<Case>> {
        let mut out = Vec::with_capacity(qs.len());
        for q in qs {
            if repo.is_cancelled() {
                anyhow::bail!("the repository was removed");
            }
            out.push(ask_case(engine, repo, &oracles, cfg, q)?);
            repo.tune().update(|p| p.done += 1);
        }
        Ok(out)
    };
    let mut train = ask(train_commits)?;
    train.extend(ask(fb)?);
    let mut held_cases = ask(heldout)?;

    let mut knobs = vec![
        Knob::Weight(OracleId::Lexical),
        Knob::Weight(OracleId::Symbol),
    ];
    if registry.semantic.is_on() {
        knobs.push(Knob::Weight(OracleId::Semantic));
        knobs.push(Knob::ProseLexical);
    }
    knobs.extend([
        Knob::Weight(OracleId::History),
        Knob::HistoryOn,
        Knob::VotePrior,
        Knob::ScopePrior,
        Knob::Definition,
        Knob::Parent,
        Knob::Mention,
        Knob::PathWord,
        Knob::Coherence,
    ]);
    let defaults = Tuning::from_config(cfg);
    repo.tune().update(|p| {
        p.phase = "fitting".into();
        p.done = 0;
        p.total = 0;
    });
    let (tuned, train_after, train_before) =
        ascend(&defaults, &knobs, tcfg.rounds, tcfg.min_gain, |t| {
            repo.tune().update(|p| p.done += 1);
            measure(&mut train, t).0
        });
    repo.tune().update(|p| p.phase = "checking".into());
    let (held_before, r5_before) = measure(&mut held_cases, &defaults);
    let (held_after, r5_after) = measure(&mut held_cases, &tuned);
    let mut overrides = BTreeMap::new();
    let mut replaced = BTreeMap::new();
    for k in &knobs {
        let (a, b) = (k.get(&defaults), k.get(&tuned));
        if (a - b).abs() > 1e-9 {
            overrides.insert(k.name(), b);
            replaced.insert(k.name(), a);
        }
    }
    let applied = !overrides.is_empty() && held_after > held_before + 1e-9;
    let result = TuneResult {
        applied,
        overrides,
        defaults: replaced,
        train_queries: train.len(),
        heldout_queries: held_cases.len(),
        feedback_queries,
        train_before,
        train_after,
        heldout_before: held_before,
        heldout_after: held_after,
        heldout_r5_before: r5_before,
        heldout_r5_after: r5_after,
        took_ms: t0.elapsed().as_millis() as u64,
        head: view.head.clone().unwrap_or_default(),
        finished_unix_ms: crate::now_unix_ms(),
        oracles: oracles.iter().map(|o| o.id().name().to_string()).collect(),
    };
    tracing::info!(
        repo = %repo.id(),
        applied,
        train_before,
        train_after,
        heldout_before = held_before,
        heldout_after = held_after,
        ms = result.took_ms,
        "tune: done"
    );
    repo.tune().store(Some(Tuned { result }))?;
    // Answers may change: cached ones must not be served.
    repo.bump_generation();
    Ok(())
}

/// Ask every oracle `q` once, as a query naming none would (file level), and keep what replaying
/// the fusion needs.
fn ask_case(
    engine: &QueryEngine,
    repo: &Arc<Repo>,
    oracles: &[Arc<dyn Oracle>],
    cfg: &Config,
    q: Question,
) -> Result<Case> {
    let repos = vec![repo.clone()];
    let (plan, _) = crate::oracles::lexical::plan(
        &q.text,
        &repos,
        cfg.retrieval.expand,
        engine.registry().semantic.lexicon(),
    );
    let plan = Arc::new(plan);
    let limit = crate::search::DEFAULT_LIMIT * cfg.retrieval.overfetch.max(1) * 3;
    let oq = OracleQuery {
        text: q.text.clone(),
        plan: plan.clone(),
        limit,
        repos: repos.clone(),
        filter: None,
        expand: cfg.retrieval.expand,
        history_before: q.before,
    };
    let mut rankings = Vec::with_capacity(oracles.len());
    for o in oracles {
        let items = match o.search(&oq) {
            Ok(hits) => hits.into_iter().map(|h| (h.key, h.score)).collect(),
            Err(e) => {
                tracing::debug!(oracle = o.id().name(), "tune: {e:#}");
                Vec::new()
            }
        };
        rankings.push(Ranking {
            oracle: o.id(),
            weight: 0.0,
            items,
        });
    }
    let votes = crate::history::split_votes(&mut rankings, &repos, cfg.history.files);
    let prose = engine.is_prose(oracles, &plan);
    let covers_all = prose && engine.lexical_covers_all(&rankings, &oq);
    let all = rrf(&rankings, cfg.retrieval.rrf_k);
    let templates = engine
        .candidates(all, &repos)
        .into_iter()
        .map(|c| (c.key, c))
        .collect();
    Ok(Case {
        near: crate::search::named_folders(&q.text, &repos),
        plan,
        rankings,
        prose,
        covers_all,
        templates,
        votes,
        scope: crate::history::scope_shares(&repos, &q.text, q.before, &cfg.history),
        answers: q.answers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Tuning {
        Tuning::from_config(&Config::default())
    }

    #[test]
    fn knobs_round_trip_their_names_and_values() {
        let mut t = base();
        for k in [
            Knob::Weight(OracleId::Lexical),
            Knob::Weight(OracleId::History),
            Knob::VotePrior,
            Knob::ScopePrior,
            Knob::ProseLexical,
            Knob::Definition,
            Knob::Parent,
            Knob::Mention,
            Knob::PathWord,
            Knob::Coherence,
        ] {
            assert_eq!(Knob::parse(&k.name()), Some(k), "{}", k.name());
            k.set(&mut t, 0.42);
            assert_eq!(k.get(&t), 0.42);
        }
        assert_eq!(Knob::parse("weight.nonsense"), None);
        assert!(
            t.history_by_default,
            "a history weight above 0 runs it by default"
        );
        Knob::HistoryOn.set(&mut t, 0.0);
        assert!(!t.history_by_default);
        assert_eq!(Knob::HistoryOn.candidates(0.0), vec![1.0]);
    }

    #[test]
    fn an_off_weight_is_tried_on_and_factors_scale_their_excess() {
        let t = base();
        assert!(!t.history_by_default);
        let c = Knob::Weight(OracleId::History).candidates(0.0);
        assert!(c.iter().all(|v| *v > 0.0) && !c.is_empty());
        let c = Knob::Definition.candidates(1.3);
        assert!(c.contains(&1.0) && c.contains(&1.6) && !c.contains(&1.3));
    }

    #[test]
    fn ascent_never_ends_below_its_start_and_finds_a_better_setting() {
        // A score with its best at lexical 0.5 and history 0.2.
        let f = |t: &Tuning| {
            let l = t.retrieval.weight(OracleId::Lexical);
            let h = t.retrieval.weight(OracleId::History);
            1.0 - (l - 0.5).abs() - (h - 0.2).abs()
        };
        let knobs = [
            Knob::Weight(OracleId::Lexical),
            Knob::Weight(OracleId::History),
        ];
        let (t, after, before) = ascend(&base(), &knobs, 3, 0.0, f);
        assert!(after >= before);
        assert_eq!(t.retrieval.weight(OracleId::Lexical), 0.5);
        assert_eq!(t.retrieval.weight(OracleId::History), 0.2);
        // A flat score changes nothing.
        let (t, after, before) = ascend(&base(), &knobs, 3, 0.0, |_| 0.3);
        assert_eq!(after, before);
        assert_eq!(t.retrieval.weight(OracleId::Lexical), 1.0);
    }

    #[test]
    fn informative_messages_have_words() {
        assert!(informative(
            "Fix timer wheel overflow when the deadline is far",
            4
        ));
        assert!(!informative("wip", 4));
        assert!(!informative("v1.2.3 bump", 4));
    }
}
