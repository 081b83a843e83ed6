//! The ranking pipeline after retrieval, declared once: [`STAGES`] lists, in order, what happens
//! to the first-stage oracles' rankings until they are results at a granularity — the fusion
//! weights, the subject steps, the history votes, fusion, the co-change and graph second stages,
//! candidates and hand-over, the ranking rules, the history priors and grouping. A live search
//! (`crate::query::engine`) and `patina tune`'s replays (`crate::workers::tuner`) both run
//! [`run`]; nothing else fuses and ranks.
//!
//! Each stage is a function over the [`Run`] (the rankings, then the fused list, the candidates,
//! the scored results, the groups) and the [`Settings`] (the plan, the tuning, what was gathered
//! about the question beforehand). What a stage needs from the stores — a chunk's metadata, the
//! graph's neighbours, co-change partners, scope shares, recency — it asks through [`World`]:
//! [`Live`] answers from the daemon's state; the tuner wraps it to remember answers it will be
//! asked again with the same inputs. The pure parts are `patina_retrieve`'s (`fusion`, `rank`,
//! `priors`, `stages`).
//!
//! With `PATINA_LOG=patina::explain=debug` every stage logs the first results before and after
//! it, and the ranking stage each candidate's factors ([`explain_scored`]).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use patina_core::{OracleId, OracleStatus};
use patina_retrieve::QueryPlan;
use patina_retrieve::features::{self, Evidence, Vector};
use patina_retrieve::fusion::{Fused, Fusion, Ranking, fuse};
use patina_retrieve::learned::Model;
use patina_retrieve::priors::FileKey;
use patina_retrieve::rank::{self, Candidate, Definitions, FileFusion, RankOptions, Scored};

use crate::query::collect::{Grouped, group};
use crate::query::notices::degraded_notice;
use crate::query::oracles::{HitKey, OracleQuery};
use crate::query::request::{Granularity, OracleReport};
use crate::state::config::HistoryConfig;
use crate::state::generations::Input;
use crate::state::tuned::Tuning;

/// One stage of the pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stage {
    /// Each ranking's fusion weight for this question (`fusion::adjust_weights`), the semantic
    /// weight lowered for static vectors (`fusion::weigh_static`).
    Weights,
    /// Release notes after every other hit of the lexical and semantic rankings
    /// (`subjects::release_notes_last`), unless the question asks about releases.
    ReleaseNotesLast,
    /// For a question about how code works, a test gives its place to its subject.
    TestsStandForSubjects,
    /// For a question about tests, a source brings its tests.
    SourcesBringTheirTests,
    /// The history oracle's votes per file taken aside, its ranking cut (`priors::split_votes`).
    SplitVotes,
    /// Weighted reciprocal-rank fusion of the rankings.
    Fuse,
    /// Co-change partners of the strongest fused files, fused again.
    Cochange,
    /// The dependency graph's neighbours of the strongest fused hits, fused again.
    Graph,
    /// The fused results with what ranking needs; declarations hand their place to their
    /// definitions (`rank::hand_over`).
    Candidates,
    /// The ranking rules' bounded factors (`rank::score`).
    Score,
    /// The history votes as evidence among the candidates (`priors::apply_vote_prior`).
    VotePrior,
    /// The question's scope in the history (`priors::apply_scope_prior`).
    ScopePrior,
    /// The files' recent activity (`priors::recency_factor`).
    RecencyPrior,
    /// Results at the asked granularity (`collect::group`): the first `limit`, or at file level
    /// the learned stage's pool when it runs.
    Group,
    /// File level: each result's ranking features (`patina_retrieve::features`), when asked or
    /// when the learned model reorders the first results (`[ranking] learned`); then the first
    /// `limit` (asked for the features: the whole pool).
    Learned,
}

/// The stages after retrieval, in the order they run.
pub(crate) const STAGES: &[Stage] = &[
    Stage::Weights,
    Stage::ReleaseNotesLast,
    Stage::TestsStandForSubjects,
    Stage::SourcesBringTheirTests,
    Stage::SplitVotes,
    Stage::Fuse,
    Stage::Cochange,
    Stage::Graph,
    Stage::Candidates,
    Stage::Score,
    Stage::VotePrior,
    Stage::ScopePrior,
    Stage::RecencyPrior,
    Stage::Group,
    Stage::Learned,
];

impl Stage {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Stage::Weights => "weights",
            Stage::ReleaseNotesLast => "release notes last",
            Stage::TestsStandForSubjects => "tests stand for subjects",
            Stage::SourcesBringTheirTests => "sources bring their tests",
            Stage::SplitVotes => "history votes",
            Stage::Fuse => "fusion",
            Stage::Cochange => "co-change",
            Stage::Graph => "graph",
            Stage::Candidates => "candidates and hand-over",
            Stage::Score => "ranking rules",
            Stage::VotePrior => "vote prior",
            Stage::ScopePrior => "scope prior",
            Stage::RecencyPrior => "recency prior",
            Stage::Group => "grouping",
            Stage::Learned => "learned order",
        }
    }

    /// The state this stage reads through its [`World`] lookups (the query cache checks their
    /// versions, [`inputs`]).
    pub(crate) fn reads(self) -> &'static [Input] {
        match self {
            // Static vectors among the semantic oracle's leading hits.
            Stage::Weights => &[Input::Vectors],
            Stage::ReleaseNotesLast
            | Stage::TestsStandForSubjects
            | Stage::SourcesBringTheirTests => &[Input::Index],
            Stage::SplitVotes => &[Input::Index],
            Stage::Fuse | Stage::Score | Stage::VotePrior | Stage::Group | Stage::Learned => &[],
            Stage::Cochange => &[Input::History, Input::Index],
            Stage::Graph => &[Input::Index],
            // Chunks' metadata, symbols, the graph, the repository's name (module roots).
            Stage::Candidates => &[Input::Index, Input::Record],
            Stage::ScopePrior | Stage::RecencyPrior => &[Input::History],
        }
    }

    fn apply(self, run: &mut Run, s: &Settings, w: &mut dyn World) {
        // The subject steps are for the default oracles: a single oracle asked for by name ranks
        // as it finds.
        let several = run.rankings.len() > 1;
        match self {
            Stage::Weights => weights(run, s),
            Stage::ReleaseNotesLast => {
                if s.tuning.ranking.changelog < 1.0 && !s.plan.asks_about_releases() && several {
                    w.reorder(self, &mut run.rankings);
                }
            }
            Stage::TestsStandForSubjects => {
                if s.plan.intent == patina_retrieve::Intent::Implementation && several {
                    w.reorder(self, &mut run.rankings);
                }
            }
            Stage::SourcesBringTheirTests => {
                if s.plan.intent == patina_retrieve::Intent::Tests && several {
                    w.reorder(self, &mut run.rankings);
                }
            }
            Stage::SplitVotes => run.votes = w.votes(&mut run.rankings, s.history.files),
            Stage::Fuse => run.fused = fuse(&run.rankings, run.fusion),
            Stage::Cochange => cochange(run, w),
            Stage::Graph => graph(run, s, w),
            Stage::Candidates => candidates(run, s, w),
            Stage::Score => {
                run.scored = rank::score(std::mem::take(&mut run.candidates), s.plan, &run.opts);
            }
            Stage::VotePrior => {
                patina_retrieve::priors::apply_vote_prior(
                    &mut run.scored,
                    &run.votes,
                    s.tuning.vote_prior,
                );
                explain_scored(&run.scored);
            }
            Stage::ScopePrior => {
                let history_ran = run.rankings.iter().any(|r| r.oracle == OracleId::History);
                if history_ran && s.tuning.scope_prior > 0.0 {
                    let shares = w.scope_shares();
                    patina_retrieve::priors::apply_scope_prior(
                        &mut run.scored,
                        &shares,
                        s.tuning.scope_prior,
                    );
                }
            }
            Stage::RecencyPrior => w.recency(&mut run.scored),
            Stage::Group => {
                let fusion = FileFusion {
                    fusion: run.fusion,
                    weights: run.weights(),
                };
                let scored = std::mem::take(&mut run.scored);
                let limit = if learns(s, &run.opts) {
                    s.limit.max(Model::shipped().pool)
                } else {
                    s.limit
                };
                run.grouped = Some(group(scored, s.granularity, limit, &run.opts, &fusion));
            }
            Stage::Learned => {
                if learns(s, &run.opts) {
                    learned(run, s);
                }
            }
        }
    }
}

/// What the engine reads before and after the stages: the repositories in scope, their tuned
/// settings and names, the query's plan (the index's vocabulary, symbols and folders), the hits'
/// metadata and snippets, session notes.
const ENGINE_READS: &[Input] = &[
    Input::Registry,
    Input::Tuned,
    Input::Record,
    Input::Index,
    Input::Notes,
];

/// The state each oracle reads.
pub(crate) fn oracle_reads(oracle: OracleId) -> &'static [Input] {
    match oracle {
        OracleId::Lexical | OracleId::Symbol | OracleId::Graph => &[Input::Index],
        OracleId::Semantic => &[Input::Index, Input::Vectors],
        OracleId::Session => &[Input::Notes],
        // The team's store changes outside this daemon: an answer with it is never cached.
        OracleId::Org => &[],
        OracleId::History => &[Input::History, Input::Index],
        OracleId::Cochange => &[Input::History, Input::Index],
    }
}

/// Every input an answer may read: the engine's, the oracles' and every stage's, each once. The
/// query cache stamps answers with the versions of these (`crate::query::cache::stamp_now`).
/// `more`: inputs read besides (the unit tests add one).
pub(crate) fn inputs(more: &[&[Input]]) -> Vec<Input> {
    let mut all: Vec<Input> = ENGINE_READS.to_vec();
    for o in OracleId::ALL {
        all.extend_from_slice(oracle_reads(o));
    }
    for stage in STAGES {
        all.extend_from_slice(stage.reads());
    }
    for m in more {
        all.extend_from_slice(m);
    }
    all.sort();
    all.dedup();
    all
}

/// What the stages know of the question and its settings, gathered before they run.
pub(crate) struct Settings<'a> {
    pub plan: &'a QueryPlan,
    /// The fusion weights and rule strengths (the configuration's, or a tuned repository's).
    pub tuning: &'a Tuning,
    pub history: &'a HistoryConfig,
    /// A prose question with the model on (`QueryEngine::is_prose`).
    pub prose: bool,
    /// The share of the content words the best lexical chunk holds (0 unless prose).
    pub coverage: f64,
    /// How many of the semantic ranking's leading hits have static vectors, of how many.
    pub statics: (usize, usize),
    /// Whether the graph oracle was selected (it runs only for questions about code).
    pub graph: bool,
    /// Folders whose files are lifted (`--near` and those the question names).
    pub near: Vec<String>,
    /// File names the question mentions that several files share.
    pub ambiguous_mentions: Vec<String>,
    /// Whether the request asked for roles (then the intent's role priors stay off).
    pub roles_asked: bool,
    pub granularity: Granularity,
    pub limit: usize,
    /// Say each file result's ranking features ([`Run::features`]).
    pub features: bool,
}

/// The pipeline's state as the stages hand it on.
pub(crate) struct Run {
    /// The oracles' rankings: the first stage's, then the second stages' added.
    pub rankings: Vec<Ranking<HitKey>>,
    /// What each oracle answered; the second stages add theirs.
    pub reports: Vec<OracleReport>,
    /// Notices the stages add to the answer.
    pub notices: Vec<String>,
    fusion: Fusion,
    votes: HashMap<FileKey, f64>,
    fused: Vec<Fused<HitKey>>,
    candidates: Vec<Candidate<HitKey>>,
    scored: Vec<Scored<HitKey>>,
    /// The ranking options the question was ranked with.
    pub opts: RankOptions,
    /// The results at the asked granularity (after the last stage).
    pub grouped: Option<Grouped>,
    /// With [`Settings::features`] at file level: each result's features, in the results' order.
    pub features: Vec<Vector>,
}

impl Run {
    /// Each ranking's weight in this answer.
    pub(crate) fn weights(&self) -> Vec<(OracleId, f64)> {
        self.rankings.iter().map(|r| (r.oracle, r.weight)).collect()
    }

    /// The first few results as they stand, for the explain log.
    fn top(&self, w: &dyn World) -> String {
        const N: usize = 5;
        let of = |c: &Candidate<HitKey>| match &c.file {
            Some((_, path)) => format!("{path}:{}", c.lines.0),
            None => w.describe(c.key),
        };
        if let Some(g) = &self.grouped {
            return match g {
                Grouped::Ranked(r) => r.iter().take(N).map(|(s, ..)| of(&s.candidate)).collect(),
                Grouped::Folders(_) => g
                    .files()
                    .iter()
                    .take(N)
                    .map(|f| f.map_or(String::new(), |(_, d)| format!("{d}/")))
                    .collect::<Vec<_>>(),
            }
            .join(", ");
        }
        if !self.scored.is_empty() {
            let v: Vec<String> = self
                .scored
                .iter()
                .take(N)
                .map(|s| of(&s.candidate))
                .collect();
            return v.join(", ");
        }
        if !self.candidates.is_empty() {
            let v: Vec<String> = self.candidates.iter().take(N).map(of).collect();
            return v.join(", ");
        }
        if !self.fused.is_empty() {
            let v: Vec<String> = self
                .fused
                .iter()
                .take(N)
                .map(|f| w.describe(f.key))
                .collect();
            return v.join(", ");
        }
        let v: Vec<String> = self
            .rankings
            .iter()
            .filter(|r| !r.items.is_empty())
            .map(|r| {
                let keys: Vec<String> = r.items.iter().take(3).map(|i| w.describe(i.0)).collect();
                format!("{} ×{:.2} [{}]", r.oracle.name(), r.weight, keys.join(", "))
            })
            .collect();
        v.join("; ")
    }
}

/// Run every stage of [`STAGES`] in order over the first-stage oracles' `rankings` (and their
/// `reports`). The result's `grouped` holds the answer's results.
pub(crate) fn run(
    rankings: Vec<Ranking<HitKey>>,
    reports: Vec<OracleReport>,
    s: &Settings,
    w: &mut dyn World,
) -> Run {
    let mut run = Run {
        rankings,
        reports,
        notices: Vec::new(),
        fusion: s.tuning.retrieval.fusion(),
        votes: HashMap::new(),
        fused: Vec::new(),
        candidates: Vec::new(),
        scored: Vec::new(),
        opts: s.tuning.ranking.clone(),
        grouped: None,
        features: Vec::new(),
    };
    let explaining = tracing::enabled!(target: "patina::explain", tracing::Level::DEBUG);
    for &stage in STAGES {
        let before = explaining.then(|| run.top(w));
        stage.apply(&mut run, s, w);
        if let Some(before) = before {
            let after = run.top(w);
            if before == after {
                tracing::debug!(target: "patina::explain", stage = stage.name(), "unchanged");
            } else {
                tracing::debug!(
                    target: "patina::explain",
                    stage = stage.name(),
                    "{before} → {after}"
                );
            }
        }
    }
    run
}

/// Whether the learned stage has work: file results whose features are asked for or that the
/// model reorders.
fn learns(s: &Settings, opts: &RankOptions) -> bool {
    s.granularity == Granularity::File && (s.features || (opts.enabled && opts.learned))
}

/// The learned stage: the file results' features, the first reordered by the model when it is
/// on, then the first `limit`.
fn learned(run: &mut Run, s: &Settings) {
    let Some(Grouped::Ranked(results)) = run.grouped.as_mut() else {
        return;
    };
    let evidence: Vec<Evidence> = results
        .iter()
        .map(|(best, score, provenance)| Evidence {
            score: *score,
            provenance,
            factors: best.factors,
            role: best.candidate.role,
            reexport: best.candidate.reexport,
            module_root: best.candidate.module_root,
            declaration: best.candidate.declaration,
        })
        .collect();
    let mut vectors = features::vectors(s.plan, &evidence);
    if run.opts.enabled && run.opts.learned {
        let order = Model::shipped().order(&vectors);
        let mut taken: Vec<Option<_>> = std::mem::take(results).into_iter().map(Some).collect();
        *results = order.iter().filter_map(|&i| taken[i].take()).collect();
        let mut vs: Vec<Option<Vector>> = vectors.into_iter().map(Some).collect();
        vectors = order.iter().filter_map(|&i| vs[i].take()).collect();
    }
    // Asked for its features, the answer is the whole pool the stage orders (the first `limit`
    // are the same files either way): what a learner fits on is what the stage would see.
    let keep = if s.features { results.len() } else { s.limit };
    results.truncate(keep);
    vectors.truncate(keep);
    if s.features {
        run.features = vectors;
    }
}

fn weights(run: &mut Run, s: &Settings) {
    let cfg = &s.tuning.retrieval;
    let recognised = s.prose && cfg.trust_full_match && s.coverage >= 1.0;
    run.fusion = patina_retrieve::fusion::adjust_weights(
        &mut run.rankings,
        cfg,
        s.plan,
        s.prose,
        recognised,
        s.coverage,
    );
    // At the default weight (1) static hits count fully.
    let (statics, leading) = s.statics;
    if cfg.static_weight < 1.0 && statics > 0 {
        let factor = patina_retrieve::fusion::weigh_static(
            &mut run.rankings,
            statics as f64 / leading as f64,
            cfg.static_weight,
        );
        if factor < 1.0 {
            run.notices.push(format!(
                "{statics} of the semantic oracle's first {leading} hits have static vectors \
                 (the model has not embedded them yet), which rank less well: its ranking \
                 counts {:.0}% of its weight",
                factor * 100.0
            ));
        }
    }
}

/// The co-change oracle ranks after the others: partners of the strongest fused files.
fn cochange(run: &mut Run, w: &mut dyn World) {
    let Some(at) = run
        .rankings
        .iter()
        .position(|r| r.oracle == OracleId::Cochange && r.weight > 0.0)
    else {
        return;
    };
    let keys: Vec<HitKey> = run.fused.iter().map(|f| f.key).collect();
    let t0 = Instant::now();
    let lift = w.cochange(&keys);
    if let Some(r) = run
        .reports
        .iter_mut()
        .find(|r| r.oracle == OracleId::Cochange)
    {
        r.hits = lift.len();
        r.took += t0.elapsed();
    }
    if !lift.is_empty() {
        run.rankings[at].items = lift;
        run.fused = fuse(&run.rankings, run.fusion);
    }
}

/// The graph oracle, a second stage: the callers, callees and type neighbours of the first
/// fusion's strongest hits. Code's neighbours answer questions about code; a question about
/// usage or the tests wants documentation or test files, which the graph does not reach.
fn graph(run: &mut Run, s: &Settings, w: &mut dyn World) {
    let code_question = matches!(
        s.plan.intent,
        patina_retrieve::Intent::Implementation | patina_retrieve::Intent::Identifier
    );
    let weight = s.tuning.retrieval.weight(OracleId::Graph);
    if !s.graph || weight <= 0.0 || !code_question {
        return;
    }
    let seeds = patina_retrieve::stages::graph_seeds(
        &run.rankings,
        &run.fused,
        s.plan,
        &s.tuning.ranking,
        run.fusion,
        crate::query::oracles::graph::SEEDS,
        |k| matches!(k, HitKey::Chunk { .. }),
    );
    let t0 = Instant::now();
    let answer = w.graph(&seeds);
    let (status, message, items) = match answer {
        Ok(items) => (OracleStatus::Ok, String::new(), items),
        Err((status, message)) => (status, message, Vec::new()),
    };
    if status != OracleStatus::Ok {
        tracing::warn!(oracle = "graph", status = status.name(), "{message}");
        run.notices
            .push(degraded_notice(OracleId::Graph, status, &message));
    }
    run.reports.push(OracleReport {
        oracle: OracleId::Graph,
        status,
        weight,
        hits: items.len(),
        took: t0.elapsed(),
        message,
        static_hits: 0,
    });
    run.rankings.push(Ranking {
        oracle: OracleId::Graph,
        weight,
        items,
    });
    run.fused = fuse(&run.rankings, run.fusion);
}

fn candidates(run: &mut Run, s: &Settings, w: &mut dyn World) {
    let mut opts = RankOptions {
        near: s.near.clone(),
        ambiguous_mentions: s.ambiguous_mentions.clone(),
        ..s.tuning.ranking.clone()
    };
    // A role asked for explicitly is not second-guessed by the intent's priors.
    opts.role_priors &= !s.roles_asked;
    opts.exact_oracles_ran = run
        .rankings
        .iter()
        .any(|r| r.oracle != rank::SEMANTIC && r.oracle != OracleId::Graph);
    let (mut candidates, definitions) = w.candidates(std::mem::take(&mut run.fused));
    rank::hand_over(&mut candidates, &definitions, s.plan, &opts);
    run.candidates = candidates;
    run.opts = opts;
}

/// What the stages ask of the stores. [`Live`] answers from the daemon's state; a replay may
/// remember answers, as long as it gives the same answer for the same inputs.
pub(crate) trait World {
    /// One of the subject steps ([`Stage::ReleaseNotesLast`], [`Stage::TestsStandForSubjects`],
    /// [`Stage::SourcesBringTheirTests`]) over the lexical and semantic rankings.
    fn reorder(&mut self, step: Stage, rankings: &mut [Ranking<HitKey>]);
    /// The history oracle's votes per file; its ranking cut to its best `files`.
    fn votes(&mut self, rankings: &mut [Ranking<HitKey>], files: usize) -> HashMap<FileKey, f64>;
    /// Co-change partners of the files of `fused` (keys best first), as a ranking.
    fn cochange(&mut self, fused: &[HitKey]) -> Vec<(HitKey, f32)>;
    /// The dependency graph's neighbours of `seeds`, or why there are none.
    fn graph(
        &mut self,
        seeds: &[(HitKey, f64)],
    ) -> Result<Vec<(HitKey, f32)>, (OracleStatus, String)>;
    /// The fused results with what ranking needs, and the definitions declarations stand for.
    fn candidates(
        &mut self,
        fused: Vec<Fused<HitKey>>,
    ) -> (Vec<Candidate<HitKey>>, Definitions<HitKey>);
    /// Per repository in scope: each directory's share of the question's scope in the history.
    fn scope_shares(&mut self) -> Vec<HashMap<String, f64>>;
    /// The recency prior (`[history] recency_prior`) applied to `scored`.
    fn recency(&mut self, scored: &mut [Scored<HitKey>]);
    /// A key as a person reads it (the explain log).
    fn describe(&self, key: HitKey) -> String;
}

/// The stages' lookups answered from the daemon's state for one query. Blocking.
pub(crate) struct Live {
    pub q: Arc<OracleQuery>,
    pub reexports: std::collections::HashSet<HitKey>,
    pub history: HistoryConfig,
    /// The graph oracle's budget, and the runtime whose blocking pool runs it under that budget;
    /// without a runtime (a replay) the graph is asked on this thread, without a budget.
    pub graph_budget: Option<(tokio::runtime::Handle, Duration)>,
}

impl World for Live {
    fn reorder(&mut self, step: Stage, rankings: &mut [Ranking<HitKey>]) {
        use crate::query::subjects;
        match step {
            Stage::ReleaseNotesLast => subjects::release_notes_last(rankings, &self.q),
            Stage::TestsStandForSubjects => subjects::tests_stand_for_subjects(rankings, &self.q),
            Stage::SourcesBringTheirTests => subjects::sources_bring_their_tests(rankings, &self.q),
            other => debug_assert!(false, "{other:?} is no subject step"),
        }
    }

    fn votes(&mut self, rankings: &mut [Ranking<HitKey>], files: usize) -> HashMap<FileKey, f64> {
        crate::query::priors::split_votes(rankings, &self.q.repos, files, HitKey::chunk)
    }

    fn cochange(&mut self, fused: &[HitKey]) -> Vec<(HitKey, f32)> {
        crate::query::oracles::history::cochange_lift(fused, &self.q, &self.history)
            .into_iter()
            .map(|h| (h.key, h.score))
            .collect()
    }

    fn graph(
        &mut self,
        seeds: &[(HitKey, f64)],
    ) -> Result<Vec<(HitKey, f32)>, (OracleStatus, String)> {
        let neighbours = |q: &OracleQuery, seeds: &[(HitKey, f64)]| {
            if let Some(d) = crate::query::oracles::test_delay(OracleId::Graph) {
                std::thread::sleep(d);
            }
            let hits = crate::query::oracles::graph::GraphOracle::neighbours(q, seeds);
            hits.into_iter().map(|h| (h.key, h.score)).collect()
        };
        let Some((rt, timeout)) = &self.graph_budget else {
            return Ok(neighbours(&self.q, seeds));
        };
        let (q, seeds, timeout) = (self.q.clone(), seeds.to_vec(), *timeout);
        let res = rt.block_on(tokio::time::timeout(
            timeout,
            tokio::task::spawn_blocking(move || neighbours(&q, &seeds)),
        ));
        match res {
            Ok(Ok(items)) => Ok(items),
            Ok(Err(e)) => Err((OracleStatus::Error, format!("oracle crashed: {e}"))),
            Err(_) => Err((
                OracleStatus::Timeout,
                format!("no answer within {} ms", timeout.as_millis()),
            )),
        }
    }

    fn candidates(
        &mut self,
        fused: Vec<Fused<HitKey>>,
    ) -> (Vec<Candidate<HitKey>>, Definitions<HitKey>) {
        crate::query::collect::candidates(fused, &self.q.repos, &self.reexports, &self.q.plan)
    }

    fn scope_shares(&mut self) -> Vec<HashMap<String, f64>> {
        crate::services::history::scope_shares(
            &self.q.repos,
            &self.q.text,
            self.q.history_before,
            &self.history,
        )
    }

    fn recency(&mut self, scored: &mut [Scored<HitKey>]) {
        crate::query::priors::apply_recency_prior(
            scored,
            &self.q.repos,
            &self.q.plan,
            &self.history,
        );
    }

    fn describe(&self, key: HitKey) -> String {
        match key {
            HitKey::Chunk { repo, chunk } => self.q.repos[repo].chunk(chunk).map_or_else(
                || format!("chunk {chunk}"),
                |m| format!("{}:{}", m.path, m.start_line),
            ),
            HitKey::Note(id) => format!("note {id}"),
            HitKey::Org(i) => format!("published hit {i}"),
        }
    }
}

/// With `PATINA_LOG=patina::explain=debug`: why the first candidates rank as they do — score
/// after ranking and the history votes, fused score, the ranking factors, each oracle's place and
/// score evidence (in percent). The history scope and recency priors (off by default) come after.
fn explain_scored<K>(scored: &[Scored<K>]) {
    if !tracing::enabled!(target: "patina::explain", tracing::Level::DEBUG) {
        return;
    }
    for s in scored.iter().take(12) {
        let c = &s.candidate;
        let (path, symbol) = (c.file.as_ref().map_or("", |f| f.1.as_str()), &c.symbol);
        let places: Vec<(&str, u32, f64)> = c
            .provenance
            .iter()
            .map(|p| (p.oracle.name(), p.rank, (p.score_evidence * 100.0).round()))
            .collect();
        tracing::debug!(
            target: "patina::explain",
            "{:.4} fused {:.4} {:?} {path}:{}-{} {symbol:?} {places:?}",
            s.score,
            c.fused,
            s.factors,
            c.lines.0,
            c.lines.1,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_input_is_declared_by_a_stage_or_an_oracle() {
        let declared = inputs(&[]);
        for input in Input::ALL {
            assert!(
                declared.contains(input),
                "{input:?} has a version but nothing declares reading it"
            );
        }
    }

    #[test]
    fn every_stage_runs_once_in_its_place() {
        for (i, a) in STAGES.iter().enumerate() {
            assert!(!STAGES[i + 1..].contains(a), "{a:?} twice");
        }
        let at = |s: Stage| STAGES.iter().position(|x| *x == s).expect("listed");
        // Weights before fusion, fusion before its second stages, ranking before the priors,
        // grouping, then the learned order of the grouped files last.
        assert!(at(Stage::Weights) < at(Stage::Fuse));
        assert!(at(Stage::SplitVotes) < at(Stage::Fuse));
        assert!(at(Stage::Fuse) < at(Stage::Cochange) && at(Stage::Cochange) < at(Stage::Graph));
        assert!(at(Stage::Candidates) < at(Stage::Score));
        assert!(at(Stage::Score) < at(Stage::VotePrior));
        assert_eq!(STAGES[STAGES.len() - 2..], [Stage::Group, Stage::Learned]);
    }
}
