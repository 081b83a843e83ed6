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
//! only the fusion and the ranking rules (pure, ~ms per question): `adjust_weights`, RRF,
//! `rank::score`, `rank::files` — the query engine's own steps. Coordinate ascent
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
use patina_retrieve::fusion::{Ranking, fuse};
use patina_retrieve::rank::{self, Candidate, RankOptions};

use crate::query::engine::QueryEngine;
use crate::query::oracles::{HitKey, Oracle, OracleQuery};
use crate::state::config::{Config, TuneConfig};
use crate::state::repo::Repo;
use crate::state::tuned::{Knob, TunePhase, TuneResult, Tuned, Tuning};
use patina_core::UserError;
use patina_retrieve::fusion::adjust_weights;
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

/// One question: its oracles' rankings (asked once) and what replaying the fusion needs.
struct Case {
    plan: Arc<QueryPlan>,
    rankings: Vec<Ranking<HitKey>>,
    prose: bool,
    /// The share of the content words the best lexical chunk holds (0 for a question that is
    /// not prose).
    coverage: f64,
    near: Vec<String>,
    templates: HashMap<HitKey, Candidate<HitKey>>,
    /// What declarations among the templates hand their place to (`collect::hand_over`).
    definitions: rank::Definitions<HitKey>,
    /// The history oracle's votes per file (`crate::query::priors::split_votes`).
    votes: HashMap<(usize, String), f64>,
    /// The scope prior's directory shares (`crate::services::history::scope_shares`).
    scope: Vec<HashMap<String, f64>>,
    answers: HashSet<String>,
}

/// The position (0-based) of the first answer among the top 10 files under `t`.
fn first_answer(case: &mut Case, t: &Tuning) -> Option<usize> {
    let recognised = case.prose && t.retrieval.trust_full_match && case.coverage >= 1.0;
    let fusion = adjust_weights(
        &mut case.rankings,
        &t.retrieval,
        &case.plan,
        case.prose,
        recognised,
        case.coverage,
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
    let fused = fuse(&active, fusion);
    let weights: Vec<(OracleId, f64)> = active.iter().map(|r| (r.oracle, r.weight)).collect();
    let exact_oracles_ran = active
        .iter()
        .any(|r| r.oracle != rank::SEMANTIC && r.oracle != OracleId::Graph);
    for a in active {
        if let Some(r) = case.rankings.iter_mut().find(|r| r.oracle == a.oracle) {
            r.items = a.items;
        }
    }
    let mut candidates: Vec<Candidate<HitKey>> = fused
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
    rank::hand_over(&mut candidates, &case.definitions, &case.plan, &opts);
    let mut scored = rank::score(candidates, &case.plan, &opts);
    if history {
        patina_retrieve::priors::apply_vote_prior(&mut scored, &case.votes, t.vote_prior);
        patina_retrieve::priors::apply_scope_prior(&mut scored, &case.scope, t.scope_prior);
    }
    let files = rank::files(scored, &opts, Some(&rank::FileFusion { fusion, weights }));
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
    first_answer_scores(cases.iter_mut().map(|c| first_answer(c, t)))
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
        .filter(|o| o.id() != OracleId::Semantic || semantic.is_on())
        .collect();
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
            measure(&mut train, t).0
        });
    repo.tune().update(|p| p.phase = TunePhase::Checking);
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
            weight: 0.0,
            items,
        });
    }
    let votes =
        crate::query::priors::split_votes(&mut rankings, &repos, cfg.history.files, HitKey::chunk);
    let prose = engine.is_prose(oracles, &plan);
    let coverage = if prose {
        engine.lexical_coverage(&rankings, &oq)
    } else {
        0.0
    };
    // (Every candidate, whatever the fusion: the replays fuse again.)
    let all = fuse(
        &rankings,
        patina_retrieve::fusion::Fusion::rrf(cfg.retrieval.rrf_k),
    );
    let (candidates, definitions) = engine.candidates(all, &repos, &reexports, &plan);
    let templates = candidates.into_iter().map(|c| (c.key, c)).collect();
    Ok(Case {
        near: crate::query::engine::named_folders(&q.text, &repos),
        plan,
        rankings,
        prose,
        coverage,
        templates,
        definitions,
        votes,
        scope: crate::services::history::scope_shares(&repos, &q.text, q.before, &cfg.history),
        answers: q.answers,
    })
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
