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
//! Every first-stage oracle is asked once per question; the rankings are kept, and each setting
//! tried replays the search's own ranking pipeline on them (`crate::query::pipeline::run`, every
//! stage after retrieval: weights, subject steps, votes, fusion, co-change, graph, ranking rules,
//! priors, files), its lookups remembered by their inputs ([`Replay`]). Coordinate ascent
//! (`patina_retrieve::tune::ascend`) from the configured settings keeps a change only when it raises MRR@10 on the
//! training slice, so the result is never worse there than the defaults. The held-out slice then
//! decides: the tuned settings are stored and used (`tuned.json`, [`effective`]) only when they
//! beat the defaults on it; otherwise the defaults are kept and the result says so.
//!
//! A run is a thread of its own at the lowest CPU priority; queries never wait for it.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use patina_core::OracleId;
use patina_core::tokens::for_each_token;
use patina_retrieve::QueryPlan;
use patina_retrieve::fusion::{Fused, Ranking};
use patina_retrieve::priors::FileKey;
use patina_retrieve::rank::{self, Candidate, Scored};

use crate::query::engine::QueryEngine;
use crate::query::oracles::{HitKey, Oracle, OracleQuery};
use crate::query::pipeline::{self, Live, Settings, Stage, World};
use crate::query::request::Granularity;
use crate::state::config::{Config, HistoryConfig, TuneConfig};
use crate::state::repo::Repo;
use crate::state::tuned::{Knob, TunePhase, TuneResult, Tuned, Tuning};
use patina_core::UserError;
use patina_retrieve::tune::{ascend, first_answer_scores};

/// Start tuning `repo` in the background (a thread at the lowest CPU priority). `feedback`:
/// questions with the files used in their answers. An error when a run is going on.
pub(crate) fn start(
    engine: QueryEngine,
    repo: Arc<Repo>,
    feedback: Vec<(String, Vec<String>)>,
) -> Result<()> {
    if let Err(p) = repo.tune().begin(TunePhase::History) {
        return Err(UserError::Invalid(format!(
            "{} is being tuned already ({} {}/{})",
            repo.record().name,
            p.phase.name(),
            p.done,
            p.total
        ))
        .into());
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

/// One question: its oracles' rankings (asked once) and what replaying the pipeline needs.
struct Case {
    plan: Arc<QueryPlan>,
    /// Every first-stage oracle a query naming none runs, the history oracle included (the
    /// replay leaves it out when the setting tried does not run it by default).
    rankings: Vec<Ranking<HitKey>>,
    prose: bool,
    /// The share of the content words the best lexical chunk holds (0 for a question that is
    /// not prose).
    coverage: f64,
    statics: (usize, usize),
    graph: bool,
    near: Vec<String>,
    ambiguous: Vec<String>,
    /// The stores' answers to the stages, remembered.
    world: Replay,
    answers: HashSet<String>,
}

/// The files (repository index, path; `None` for a note) of the first ten results of `case`
/// under `t`: the search pipeline (`crate::query::pipeline::run`) replayed at file granularity.
fn replay(case: &mut Case, t: &Tuning, history: &HistoryConfig) -> Vec<Option<String>> {
    // The history oracle runs only when it is in the default set.
    let rankings: Vec<Ranking<HitKey>> = case
        .rankings
        .iter()
        .filter(|r| r.oracle != OracleId::History || t.history_by_default)
        .map(|r| Ranking {
            oracle: r.oracle,
            weight: r.weight,
            items: r.items.clone(),
        })
        .collect();
    let settings = Settings {
        plan: &case.plan,
        tuning: t,
        history,
        prose: case.prose,
        coverage: case.coverage,
        statics: case.statics,
        graph: case.graph,
        near: case.near.clone(),
        ambiguous_mentions: case.ambiguous.clone(),
        roles_asked: false,
        granularity: Granularity::File,
        limit: crate::query::request::DEFAULT_LIMIT,
        features: false,
    };
    let run = pipeline::run(rankings, Vec::new(), &settings, &mut case.world);
    run.grouped
        .map(|g| {
            g.files()
                .into_iter()
                .map(|f| f.map(|(_, p)| p.to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// The position (0-based) of the first answer among the top 10 files under `t`.
fn first_answer(case: &mut Case, t: &Tuning, history: &HistoryConfig) -> Option<usize> {
    let files = replay(case, t, history);
    files
        .iter()
        .take(10)
        .position(|f| f.as_ref().is_some_and(|p| case.answers.contains(p)))
}

/// MRR@10 and Recall@5 (an answer among the first five files) of `cases` under `t`.
fn measure(cases: &mut [Case], t: &Tuning, history: &HistoryConfig) -> (f64, f64) {
    first_answer_scores(cases.iter_mut().map(|c| first_answer(c, t, history)))
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
    let config = engine.config().clone();
    let semantic = engine.semantic().clone();
    let cfg = &config;
    let tcfg: &TuneConfig = &cfg.tune;
    let view = crate::services::history::sync(repo)?;
    let indexed: HashSet<String> =
        repo.with_chunks(|c| c.values().map(|m| m.path.to_string()).collect());
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
        if text.len() > crate::query::request::MAX_QUERY_BYTES {
            let mut cut = crate::query::request::MAX_QUERY_BYTES;
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

    // The first-stage oracles of a query that names none, history included (tuning decides
    // whether it runs); the second stages are the pipeline's.
    let (oracles, second): (Oracles, Oracles) = engine
        .select_oracles(&[], true)?
        .into_iter()
        .partition(|o| !o.second_stage());
    let graph = second.iter().any(|o| o.id() == OracleId::Graph);
    let total = (train_commits.len() + fb.len() + heldout.len()) as u32;
    repo.tune().update(|p| {
        p.phase = TunePhase::Asking;
        p.done = 0;
        p.total = total;
    });
    let ask = |qs: Vec<Question>| -> Result<Vec<Case>> {
        let mut out = Vec::with_capacity(qs.len());
        for q in qs {
            if repo.is_cancelled() {
                anyhow::bail!("the repository was removed");
            }
            out.push(ask_case(engine, repo, &oracles, graph, cfg, q)?);
            repo.tune().update(|p| p.done += 1);
        }
        Ok(out)
    };
    let mut train = ask(train_commits)?;
    let feedback_from = train.len();
    train.extend(ask(fb)?);
    let mut held_cases = ask(heldout)?;

    let mut knobs = vec![
        Knob::Weight(OracleId::Lexical),
        Knob::Weight(OracleId::Symbol),
        Knob::Evidence,
    ];
    if semantic.is_on() {
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
        p.phase = TunePhase::Fitting;
        p.done = 0;
        p.total = 0;
    });
    let (tuned, train_after, train_before) =
        ascend(&defaults, &knobs, tcfg.rounds, tcfg.min_gain, |t| {
            repo.tune().update(|p| p.done += 1);
            measure(&mut train, t, &cfg.history).0
        });
    repo.tune().update(|p| p.phase = TunePhase::Checking);
    let (held_before, r5_before) = measure(&mut held_cases, &defaults, &cfg.history);
    let (held_after, r5_after) = measure(&mut held_cases, &tuned, &cfg.history);
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
        finished_unix_ms: crate::process::clock::now_unix_ms(),
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
    // (The slot moves its own version: cached answers are not served.)
    repo.tune().store(Some(Tuned { result }))?;
    if let Some(path) = patina_core::hooks::test_hook("PATINA_TEST_TUNE_REPLAY") {
        let now = crate::state::tuned::effective(cfg, &[repo.tune()]);
        let feedback = &mut train[feedback_from..];
        dump_replays(&path, cfg, &now, &defaults, feedback, &mut held_cases)?;
    }
    Ok(())
}

/// The test hook `PATINA_TEST_TUNE_REPLAY`: writes to `path`, a JSON line each, the first ten
/// files of the replays of the feedback questions under the settings search now uses (`now`)
/// and under the configuration's, and of the held-out questions under the configuration's, with
/// their answers. The suite compares them with live searches (tests/tune.rs).
fn dump_replays(
    path: &str,
    cfg: &Config,
    now: &Tuning,
    defaults: &Tuning,
    feedback: &mut [Case],
    heldout: &mut [Case],
) -> Result<()> {
    let mut out = String::new();
    let mut write = |slice: &str, settings: &str, t: &Tuning, cases: &mut [Case]| {
        for case in cases {
            let files = replay(case, t, &cfg.history);
            let mut answers: Vec<&String> = case.answers.iter().collect();
            answers.sort();
            let line = serde_json::json!({
                "slice": slice,
                "settings": settings,
                "question": case.world.live.q.text,
                "files": files,
                "answers": answers,
            });
            out.push_str(&format!("{line}\n"));
        }
    };
    write("feedback", "now", now, feedback);
    write("feedback", "defaults", defaults, feedback);
    write("heldout", "defaults", defaults, heldout);
    std::fs::write(path, out).with_context(|| format!("writing {path}"))
}

/// Ask every first-stage oracle `q` once, as a query naming none would (file level), and keep
/// what replaying the pipeline needs.
fn ask_case(
    engine: &QueryEngine,
    repo: &Arc<Repo>,
    oracles: &[Arc<dyn Oracle>],
    graph: bool,
    cfg: &Config,
    q: Question,
) -> Result<Case> {
    let repos = vec![repo.clone()];
    let (plan, _) = crate::query::oracles::lexical::plan(
        &q.text,
        &repos,
        cfg.retrieval.expand,
        engine.semantic().lexicon(),
    );
    let plan = Arc::new(plan);
    let limit = cfg
        .retrieval
        .oracle_depth(crate::query::request::DEFAULT_LIMIT, true);
    let oq = Arc::new(OracleQuery {
        text: q.text.clone(),
        plan: plan.clone(),
        limit,
        repos: repos.clone(),
        filter: None,
        expand: cfg.retrieval.expand,
        org: Default::default(),
        history_before: q.before,
    });
    let mut rankings = Vec::with_capacity(oracles.len());
    let mut reexports = HashSet::new();
    for o in oracles {
        let items = match o.search(&oq) {
            Ok(hits) => {
                reexports.extend(hits.iter().filter(|h| h.reexport).map(|h| h.key));
                hits.into_iter().map(|h| (h.key, h.score)).collect()
            }
            Err(e) => {
                tracing::debug!(oracle = o.id().name(), "tune: {e:#}");
                Vec::new()
            }
        };
        rankings.push(Ranking {
            oracle: o.id(),
            weight: cfg.retrieval.weight(o.id()),
            items,
        });
    }
    let prose = engine.is_prose(oracles, &plan);
    let coverage = if prose {
        engine.lexical_coverage(&rankings, &oq)
    } else {
        0.0
    };
    Ok(Case {
        near: crate::query::engine::named_folders(&q.text, &repos),
        ambiguous: crate::query::engine::ambiguous_mentions(&plan, &repos),
        statics: crate::query::engine::static_hits(&rankings, &oq),
        plan,
        rankings,
        prose,
        coverage,
        graph,
        world: Replay::new(Live {
            q: oq,
            reexports,
            history: cfg.history.clone(),
            graph_budget: None,
        }),
        answers: q.answers,
    })
}

/// The live lookups of one question, each answer remembered by its inputs: a replay asks the
/// same question hundreds of times under other weights, and most stages see the same inputs
/// again (the subject steps and the votes always do; the graph and co-change whenever the
/// strongest hits did not move). Same inputs, same answer: what search would get.
struct Replay {
    live: Live,
    reorders: HashMap<(u8, Vec<ItemsKey>), Vec<Items>>,
    votes: HashMap<(Vec<ItemsKey>, usize), (Votes, Vec<Items>)>,
    cochange: HashMap<Vec<HitKey>, Items>,
    graph: HashMap<SeedsKey, Items>,
    scope: Option<Vec<HashMap<String, f64>>>,
}

/// A ranking's items as a map key (scores by their bits).
type ItemsKey = Vec<(HitKey, u32)>;
/// The graph stage's seeds as a map key (scores by their bits).
type SeedsKey = Vec<(HitKey, u64)>;
type Items = Vec<(HitKey, f32)>;
type Votes = HashMap<FileKey, f64>;
type Oracles = Vec<Arc<dyn Oracle>>;

fn items_key(r: &Ranking<HitKey>) -> ItemsKey {
    r.items.iter().map(|(k, s)| (*k, s.to_bits())).collect()
}

impl Replay {
    fn new(live: Live) -> Replay {
        Replay {
            live,
            reorders: HashMap::new(),
            votes: HashMap::new(),
            cochange: HashMap::new(),
            graph: HashMap::new(),
            scope: None,
        }
    }
}

/// The rankings a stage reads and writes, in order: the lexical and semantic ones for the subject
/// steps, the history one for the votes.
fn touched(rankings: &mut [Ranking<HitKey>], of: &[OracleId]) -> Vec<usize> {
    (0..rankings.len())
        .filter(|&i| of.contains(&rankings[i].oracle))
        .collect()
}

impl World for Replay {
    fn reorder(&mut self, step: Stage, rankings: &mut [Ranking<HitKey>]) {
        let at = touched(rankings, &[OracleId::Lexical, OracleId::Semantic]);
        let key = (
            step as u8,
            at.iter().map(|&i| items_key(&rankings[i])).collect(),
        );
        if let Some(out) = self.reorders.get(&key) {
            for (&i, items) in at.iter().zip(out) {
                rankings[i].items = items.clone();
            }
            return;
        }
        self.live.reorder(step, rankings);
        let out = at.iter().map(|&i| rankings[i].items.clone()).collect();
        self.reorders.insert(key, out);
    }

    fn votes(&mut self, rankings: &mut [Ranking<HitKey>], files: usize) -> HashMap<FileKey, f64> {
        let at = touched(rankings, &[OracleId::History]);
        let key = (at.iter().map(|&i| items_key(&rankings[i])).collect(), files);
        if let Some((votes, out)) = self.votes.get(&key) {
            for (&i, items) in at.iter().zip(out) {
                rankings[i].items = items.clone();
            }
            return votes.clone();
        }
        let votes = self.live.votes(rankings, files);
        let out = at.iter().map(|&i| rankings[i].items.clone()).collect();
        self.votes.insert(key, (votes.clone(), out));
        votes
    }

    fn cochange(&mut self, fused: &[HitKey]) -> Vec<(HitKey, f32)> {
        if let Some(out) = self.cochange.get(fused) {
            return out.clone();
        }
        let out = self.live.cochange(fused);
        self.cochange.insert(fused.to_vec(), out.clone());
        out
    }

    fn graph(
        &mut self,
        seeds: &[(HitKey, f64)],
    ) -> std::result::Result<Vec<(HitKey, f32)>, (patina_core::OracleStatus, String)> {
        let key: Vec<(HitKey, u64)> = seeds.iter().map(|(k, s)| (*k, s.to_bits())).collect();
        if let Some(out) = self.graph.get(&key) {
            return Ok(out.clone());
        }
        let out = self.live.graph(seeds)?;
        self.graph.insert(key, out.clone());
        Ok(out)
    }

    fn candidates(
        &mut self,
        fused: Vec<Fused<HitKey>>,
    ) -> (Vec<Candidate<HitKey>>, rank::Definitions<HitKey>) {
        self.live.candidates(fused)
    }

    fn scope_shares(&mut self) -> Vec<HashMap<String, f64>> {
        self.scope
            .get_or_insert_with(|| self.live.scope_shares())
            .clone()
    }

    fn recency(&mut self, scored: &mut [Scored<HitKey>]) {
        self.live.recency(scored);
    }

    fn describe(&self, key: HitKey) -> String {
        self.live.describe(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
