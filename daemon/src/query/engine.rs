//! The query engine: validates a request, runs the selected oracles in parallel (each under a
//! timeout), hands their rankings to the ranking pipeline (`crate::query::pipeline`: fusion,
//! second stages, ranking, priors, grouping) and attaches metadata, snippets and freshness.
//! Knows nothing of gRPC.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;

use patina_core::{OracleId, OracleStatus};
use patina_retrieve::QueryPlan;
use patina_retrieve::fusion::Ranking;
use patina_retrieve::rank;

use crate::query::collect::collect_hits;
use crate::query::notices::{degraded_notice, refuse_incomplete};
use crate::query::oracles::{HitKey, Oracle, OracleHit, OracleQuery, Unavailable};
use crate::query::prepare::{commit_locations, filter_of, scope_notices, validate};
use crate::query::request::{
    Granularity, HitItem, OracleReport, SearchHit, SearchRequest, SearchResponse,
};
use crate::services::embedding::Semantic;
use crate::services::freshness::Freshness;
use crate::services::sessions::Sessions;
use crate::state::config::Config;
use crate::state::repo::Repo;
use crate::state::repos::Repos;
use crate::state::schedule::{Change, Scheduler};
use patina_core::UserError;

/// Folders of the repositories in scope that a short query names (`src/net`, `crates/ignore/`):
/// their files are lifted like `--near`.
pub(crate) fn named_folders(text: &str, repos: &[Arc<Repo>]) -> Vec<String> {
    if text.len() > 600 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for w in text.split_whitespace() {
        let w = w
            .trim_matches(|c: char| matches!(c, '`' | '\'' | '"' | ',' | ';' | '(' | ')' | '?'))
            .trim_start_matches("./")
            .trim_end_matches('/');
        if !w.contains('/') || w.contains("://") || w.contains("..") || w.starts_with('/') {
            continue;
        }
        if repos.iter().any(|r| r.root().join(w).is_dir()) && !out.iter().any(|o| o == w) {
            out.push(w.to_string());
        }
    }
    out
}

/// The file names (no folder) the query mentions that several indexed files in scope share: a
/// mention names a file only when it names one.
pub(crate) fn ambiguous_mentions(plan: &QueryPlan, repos: &[Arc<Repo>]) -> Vec<String> {
    plan.paths
        .iter()
        .filter(|m| !m.contains('/') && !plan.frames.iter().any(|f| &f.path == *m))
        .filter(|m| {
            let want = m.to_lowercase();
            let mut n = 0;
            for repo in repos {
                n += repo
                    .symbols()
                    .files()
                    .filter(|f| rank::same_file(&want, f.path))
                    .take(2)
                    .count();
                if n > 1 {
                    return true;
                }
            }
            false
        })
        .cloned()
        .collect()
}

/// The folder part of a glob: `src/index/*.rs` → `src/index`; `*.rs` → `` (none).
fn is_exclusion(glob: &str) -> bool {
    patina_core::paths::is_exclusion(glob)
}

fn glob_folder(glob: &str) -> String {
    let g = glob.trim().trim_start_matches("./");
    let mut parts = Vec::new();
    for seg in g.split('/') {
        if seg.contains(['*', '?', '[', '{']) {
            break;
        }
        parts.push(seg);
    }
    if parts.len() == g.split('/').count() {
        // No wildcard: a plain path; its folder is itself minus the last segment.
        parts.pop();
    }
    parts.join("/")
}

#[derive(Clone)]
pub(crate) struct QueryEngine {
    repos: Arc<Repos>,
    config: Arc<Config>,
    semantic: Arc<Semantic>,
    /// Index rounds a request waits for (`--fresh`).
    scheduler: Arc<dyn Scheduler>,
    oracles: Vec<Arc<dyn Oracle>>,
    /// Where note hits (session oracle) are looked up.
    pub(super) sessions: Option<Arc<Sessions>>,
}

impl QueryEngine {
    pub fn new(
        repos: Arc<Repos>,
        config: Arc<Config>,
        semantic: Arc<Semantic>,
        scheduler: Arc<dyn Scheduler>,
        oracles: Vec<Arc<dyn Oracle>>,
    ) -> QueryEngine {
        QueryEngine {
            repos,
            config,
            semantic,
            scheduler,
            oracles,
            sessions: None,
        }
    }

    /// Resolve session-note hits through `sessions`.
    pub fn with_sessions(mut self, sessions: Arc<Sessions>) -> QueryEngine {
        self.sessions = Some(sessions);
        self
    }

    pub fn oracle_names(&self) -> Vec<&'static str> {
        self.oracles.iter().map(|o| o.id().name()).collect()
    }

    /// Answer `req`. When hard filters (roles, path globs) leave nothing, they are relaxed in
    /// order — roles, then each glob to its folder, then no glob — and the answer says so.
    pub async fn search(&self, req: SearchRequest) -> Result<SearchResponse> {
        let mut resp = self.search_once(req.clone()).await?;
        let filtered =
            !req.roles.is_empty() || !req.exclude_roles.is_empty() || !req.globs.is_empty();
        if !resp.hits.is_empty() || !filtered {
            return Ok(resp);
        }
        let mut relaxed = req;
        let mut steps: Vec<String> = Vec::new();
        loop {
            if !relaxed.roles.is_empty() || !relaxed.exclude_roles.is_empty() {
                relaxed.roles.clear();
                relaxed.exclude_roles.clear();
                steps.push("the role filter".into());
            } else if relaxed.globs.iter().any(|g| {
                !is_exclusion(g) && (g.contains('*') || g.contains('?') || g.contains('['))
            }) {
                // Exclusions (`!*_test.go`) are what the user never wants: they stay.
                relaxed.globs = relaxed
                    .globs
                    .iter()
                    .map(|g| {
                        if is_exclusion(g) {
                            g.clone()
                        } else {
                            glob_folder(g)
                        }
                    })
                    .filter(|g| !g.is_empty())
                    .collect();
                steps.push("path patterns to their folders".into());
                if !relaxed.globs.iter().any(|g| !is_exclusion(g)) {
                    continue;
                }
            } else if relaxed.globs.iter().any(|g| !is_exclusion(g)) {
                relaxed.globs.retain(|g| is_exclusion(g));
                steps.push("the path filter".into());
            } else {
                return Ok(resp);
            }
            let mut next = self.search_once(relaxed.clone()).await?;
            if !next.hits.is_empty() {
                next.notices.push(format!(
                    "nothing matched the filters as given; relaxed {} to answer",
                    steps.join(", then ")
                ));
                return Ok(next);
            }
            resp = next;
        }
    }

    /// One pass: plan → run oracles → the ranking pipeline → collect hits.
    async fn search_once(&self, mut req: SearchRequest) -> Result<SearchResponse> {
        let started = Instant::now();
        let mut notices = Vec::new();
        let limit = validate(&mut req, &mut notices)?;
        let repos = self.scope(&req.repos)?;
        // A repository tuned by `patina tune` answers with its own weights and rule strengths.
        let slots: Vec<_> = repos.iter().map(|r| r.tune()).collect();
        let tuning = crate::state::tuned::effective(&self.config, &slots);
        let mut oracles = self.select_oracles(&req.oracles, tuning.history_by_default)?;
        if req.org && !oracles.iter().any(|o| o.id() == OracleId::Org) {
            match self.oracles.iter().find(|o| o.id() == OracleId::Org) {
                Some(o) => oracles.push(o.clone()),
                None => {
                    return Err(UserError::Invalid(
                        "--org searches the team's store, and none is configured: set [team] url \
                         in config.toml (docs/team.md)"
                            .into(),
                    )
                    .into());
                }
            }
        }
        if repos.is_empty() {
            notices.push("no repositories are registered".into()); // remedy: rpc/search.rs
        }
        let semantic_asked = oracles.iter().any(|o| o.id() == OracleId::Semantic);
        if !req.fresh_timeout.is_zero()
            && !self
                .catch_up(&repos, req.fresh_timeout, semantic_asked)
                .await
        {
            notices.push(format!(
                "not fully fresh: pending changes were still being indexed after {} ms",
                req.fresh_timeout.as_millis()
            ));
        }
        notices.extend(scope_notices(&repos, semantic_asked));
        let filter = filter_of(&req)?;
        let cfg = &tuning.retrieval;
        // File, module and repo granularities fold chunks together, so ask for more of them.
        let per_oracle = cfg.oracle_depth(
            limit,
            match req.granularity {
                Granularity::Chunk | Granularity::Doc => false,
                Granularity::File | Granularity::Module | Granularity::Repo => true,
            },
        );
        let (mut plan, read_as) = crate::query::oracles::lexical::plan(
            &req.text,
            &repos,
            cfg.expand,
            self.semantic.lexicon(),
        );
        notices.extend(read_as);
        // A commit named by the query points at what it changed: its regions at HEAD become the
        // query's locations, and only the oracle that locates answers.
        let mut oracles = oracles;
        if let Some((commit_notices, frames)) = commit_locations(&req.text, &repos).await {
            notices.extend(commit_notices);
            if !frames.is_empty() {
                plan.frames = frames;
                plan.trace = true;
                oracles.retain(|o| o.id() == OracleId::Symbol);
            }
        }
        if !plan.locations().is_empty() {
            notices.extend(crate::query::oracles::symbol::location_notices(
                &plan, &repos,
            ));
        }
        let plan = Arc::new(plan);
        let q = Arc::new(OracleQuery {
            text: req.text.clone(),
            plan: plan.clone(),
            limit: per_oracle,
            repos: repos.clone(),
            filter,
            expand: cfg.expand,
            history_before: None,
            org: Default::default(),
        });
        let (first, second): (Vec<_>, Vec<_>) =
            oracles.iter().cloned().partition(|o| !o.second_stage());
        let Answers {
            rankings,
            reports,
            reexports,
            prose,
            coverage,
            statics,
        } = self
            .run_oracles(&first, q.clone(), cfg, &mut notices)
            .await?;
        let mut near = req.near.clone();
        near.extend(named_folders(&req.text, &repos));
        let ambiguous = ambiguous_mentions(&plan, &repos);
        let graph = second.iter().any(|o| o.id() == OracleId::Graph);
        let mut live = crate::query::pipeline::Live {
            q: q.clone(),
            reexports,
            history: self.config.history.clone(),
            graph_budget: Some((
                tokio::runtime::Handle::current(),
                cfg.oracle_timeout(q.text.len()),
            )),
        };
        // The stages, snippets and freshness read the stores and git: on the blocking pool.
        let sessions = self.sessions.clone();
        let (hits, freshness, reports, stage_notices) = tokio::task::spawn_blocking(move || {
            let settings = crate::query::pipeline::Settings {
                plan: &plan,
                tuning: &tuning,
                history: &live.history.clone(),
                prose,
                coverage,
                statics,
                graph,
                near,
                ambiguous_mentions: ambiguous,
                roles_asked: !req.roles.is_empty(),
                granularity: req.granularity,
                limit,
                features: req.features,
            };
            let run = crate::query::pipeline::run(rankings, reports, &settings, &mut live);
            let mut reports = run.reports;
            if req.complete {
                refuse_incomplete(&reports)?;
            }
            let weights = run.rankings.iter().map(|r| (r.oracle, r.weight));
            let weights: Vec<(OracleId, f64)> = weights.collect();
            for r in &mut reports {
                r.weight = weights
                    .iter()
                    .find(|w| w.0 == r.oracle)
                    .map_or(0.0, |w| w.1);
            }
            let grouped = run.grouped.expect("the pipeline ends with grouping");
            let found = live.q.org.take();
            let hits = collect_hits(
                grouped,
                run.features,
                &repos,
                &req,
                sessions.as_ref(),
                &found,
            )?;
            note_answered(&hits);
            let freshness: Vec<Freshness> = repos.iter().map(|r| Freshness::of(r)).collect();
            anyhow::Ok((hits, freshness, reports, run.notices))
        })
        .await
        .map_err(|e| anyhow::anyhow!("collecting hits failed: {e}"))??;
        notices.extend(stage_notices);
        Ok(SearchResponse {
            hits,
            reports,
            took: started.elapsed(),
            notices,
            freshness,
            intent: q.plan.intent,
        })
    }

    /// The oracles `names` asks for; none named: every oracle, the history oracle only with
    /// `history` (`[history] by_default`, or a repository tuned to use it), the org oracle only
    /// when a request asks for it (`SearchRequest::org`).
    pub(crate) fn select_oracles(
        &self,
        names: &[String],
        history: bool,
    ) -> Result<Vec<Arc<dyn Oracle>>> {
        if names.is_empty() {
            return Ok(self
                .oracles
                .iter()
                .filter(|o| (history || o.id() != OracleId::History) && o.id() != OracleId::Org)
                .cloned()
                .collect());
        }
        let mut chosen = Vec::new();
        for name in names {
            match self.oracles.iter().find(|o| o.id().name() == name) {
                Some(o) => chosen.push(o.clone()),
                None => {
                    return Err(UserError::Invalid(format!(
                        "unknown oracle '{name}' (available: {})",
                        self.oracle_names().join(", ")
                    ))
                    .into());
                }
            }
        }
        Ok(chosen)
    }

    fn scope(&self, keys: &[String]) -> Result<Vec<Arc<Repo>>> {
        let repos = if keys.is_empty() {
            self.repos.all()
        } else {
            let mut v: Vec<Arc<Repo>> = Vec::new();
            for key in keys {
                let r = self.repos.resolve(key)?;
                if !v.iter().any(|x| x.id() == r.id()) {
                    v.push(r);
                }
            }
            v
        };
        // Their embedding backlogs go first.
        for r in &repos {
            r.touch_query();
        }
        Ok(repos)
    }

    /// Every oracle on the blocking pool under the timeout; their rankings with fusion weights.
    async fn run_oracles(
        &self,
        oracles: &[Arc<dyn Oracle>],
        q: Arc<OracleQuery>,
        cfg: &crate::state::config::RetrievalConfig,
        notices: &mut Vec<String>,
    ) -> Result<Answers> {
        let timeout = cfg.oracle_timeout(q.text.len());
        let prose = self.is_prose(oracles, &q.plan);
        let tasks: Vec<_> = oracles
            .iter()
            .map(|o| {
                let (o, q) = (o.clone(), q.clone());
                tokio::spawn(async move {
                    let t0 = Instant::now();
                    let id = o.id();
                    let res = tokio::time::timeout(
                        timeout,
                        tokio::task::spawn_blocking(move || {
                            if let Some(d) = crate::query::oracles::test_delay(o.id()) {
                                std::thread::sleep(d);
                            }
                            o.search(&q)
                        }),
                    )
                    .await;
                    (id, t0.elapsed(), res)
                })
            })
            .collect();
        let mut rankings = Vec::new();
        let mut reports = Vec::new();
        let mut reexports = HashSet::new();
        for t in tasks {
            let (id, took, res) = t.await?;
            let (status, message, hits): (OracleStatus, String, Vec<OracleHit>) = match res {
                Err(_) => (
                    OracleStatus::Timeout,
                    format!("no answer within {} ms", timeout.as_millis()),
                    Vec::new(),
                ),
                Ok(Err(join)) => (
                    OracleStatus::Error,
                    format!("oracle crashed: {join}"),
                    Vec::new(),
                ),
                Ok(Ok(Err(e))) if e.is::<Unavailable>() => {
                    (OracleStatus::Unavailable, e.to_string(), Vec::new())
                }
                Ok(Ok(Err(e))) => (OracleStatus::Error, format!("{e:#}"), Vec::new()),
                Ok(Ok(Ok(hits))) => (OracleStatus::Ok, String::new(), hits),
            };
            match status {
                OracleStatus::Ok => {}
                OracleStatus::Unavailable => notices.push(message.clone()),
                OracleStatus::Timeout | OracleStatus::Error => {
                    tracing::warn!(oracle = id.name(), status = status.name(), "{message}");
                    notices.push(degraded_notice(id, status, &message));
                }
            }
            reports.push(OracleReport {
                oracle: id,
                status,
                weight: 0.0,
                hits: hits.len(),
                took,
                message,
                static_hits: 0,
            });
            reexports.extend(hits.iter().filter(|h| h.reexport).map(|h| h.key));
            rankings.push(Ranking {
                oracle: id,
                weight: cfg.weight(id),
                items: hits.into_iter().map(|h| (h.key, h.score)).collect(),
            });
        }
        let coverage = if prose {
            self.lexical_coverage(&rankings, &q)
        } else {
            0.0
        };
        let statics = static_hits(&rankings, &q);
        if let Some(r) = reports.iter_mut().find(|r| r.oracle == OracleId::Semantic) {
            r.static_hits = statics.0;
        }
        Ok(Answers {
            rankings,
            reports,
            reexports,
            prose,
            coverage,
            statics,
        })
    }

    /// A prose question with the model on: semantic leads, lexical breaks ties.
    pub(crate) fn is_prose(&self, oracles: &[Arc<dyn Oracle>], plan: &QueryPlan) -> bool {
        self.semantic.is_on()
            && oracles.iter().any(|o| o.id() == OracleId::Semantic)
            && plan.intent != patina_retrieve::Intent::Identifier
            && (plan.long || !plan.names_code())
    }

    pub(crate) fn config(&self) -> &Arc<Config> {
        &self.config
    }

    pub(crate) fn semantic(&self) -> &Arc<Semantic> {
        &self.semantic
    }

    /// The share (0..=1) of the question's content words the lexical oracle's best chunk
    /// contains (`patina_retrieve::confidence::coverage`); 0 without a lexical hit.
    pub(crate) fn lexical_coverage(&self, rankings: &[Ranking<HitKey>], q: &OracleQuery) -> f64 {
        let words = &q.plan.content_words;
        let Some((HitKey::Chunk { repo, chunk }, _)) = rankings
            .iter()
            .find(|r| r.oracle == OracleId::Lexical)
            .and_then(|r| r.items.first())
        else {
            return 0.0;
        };
        let repo = &q.repos[*repo];
        let (Some(meta), Ok(Some(text))) = (repo.chunk(*chunk), repo.index().text(*chunk)) else {
            return 0.0;
        };
        patina_retrieve::confidence::coverage(words, &text, &meta.path)
    }

    /// Index (and embed) whatever changed on disk in `repos`, waiting at most `budget`; true when
    /// everything was caught up in time. A full reconciliation is cheap when little changed (files
    /// whose size and mtime match their records are not read) and does not depend on watcher timing.
    async fn catch_up(&self, repos: &[Arc<Repo>], budget: Duration, embeddings: bool) -> bool {
        let started = tokio::time::Instant::now();
        let deadline = started + budget;
        let jobs: Vec<_> = repos
            .iter()
            .map(|r| self.scheduler.schedule(r, Change::Full))
            .collect();
        let mut changed = false;
        for mut rx in jobs {
            match tokio::time::timeout_at(deadline, rx.wait_for(|p| p.finished())).await {
                Ok(Ok(p)) => changed |= p.files_changed > 0 || p.files_removed > 0,
                Ok(Err(_)) => {}
                Err(_) => return false,
            }
        }
        // The watcher reports a write up to its debounce window after it happened. When this
        // round indexed changes, their events are still on the way: let them land (they mark the
        // files dirty again) and wait for the round they start, so the answer is fresh by the
        // watcher's account too — not just by the walk's.
        if changed {
            let settle = started + crate::state::schedule::DEBOUNCE + Duration::from_millis(150);
            tokio::time::sleep_until(settle.min(deadline)).await;
            for r in repos {
                if let Some(mut rx) = r.running_job()
                    && tokio::time::timeout_at(deadline, rx.wait_for(|p| p.finished()))
                        .await
                        .is_err()
                {
                    return false;
                }
            }
        }
        if embeddings && self.semantic.is_on() {
            // With the model's pass off, a static vector is all a chunk will get.
            let model_pass = self.semantic.model_pass();
            let waiting =
                |r: &Arc<Repo>| r.backlog() > if model_pass { 0 } else { r.provisional_count() };
            while repos.iter().any(waiting) {
                if tokio::time::Instant::now() >= deadline {
                    return false;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
        true
    }
}

/// The files of an answer's first hits a repository's model pass embeds first (what an agent or
/// a person reads next is there or near it).
const ANSWERED_FILES: usize = 10;

/// Tell each repository the files of the answer's first [`ANSWERED_FILES`] hits.
fn note_answered(hits: &[SearchHit]) {
    for h in hits.iter().take(ANSWERED_FILES) {
        match &h.item {
            HitItem::Chunk { repo, meta, .. } => repo.note_answered([&*meta.path]),
            HitItem::Group { repo, best, .. } => repo.note_answered([&*best.path]),
            HitItem::Note(_) | HitItem::Org(_) => {}
        }
    }
}

/// How many of the semantic ranking's leading hits (its first [`STATIC_LEADING`]) are answered
/// by static vectors, and how many leading hits there are.
pub(crate) fn static_hits(rankings: &[Ranking<HitKey>], q: &OracleQuery) -> (usize, usize) {
    let Some(r) = rankings.iter().find(|r| r.oracle == OracleId::Semantic) else {
        return (0, 0);
    };
    let leading = &r.items[..r.items.len().min(STATIC_LEADING)];
    let statics = leading
        .iter()
        .filter(|(k, _)| match k {
            HitKey::Chunk { repo, chunk } => q.repos[*repo].is_provisional(*chunk),
            _ => false,
        })
        .count();
    (statics, leading.len())
}

/// The semantic hits whose vectors decide how much its ranking counts: those an answer shows.
const STATIC_LEADING: usize = 10;

/// What the first-stage oracles answered: their rankings, their reports, the hits that are
/// re-exports, and what the fusion weights depend on.
struct Answers {
    rankings: Vec<Ranking<HitKey>>,
    reports: Vec<OracleReport>,
    reexports: HashSet<HitKey>,
    /// A prose question with the model on ([`QueryEngine::is_prose`]).
    prose: bool,
    /// The lexical oracle's coverage of the question (0 unless prose).
    coverage: f64,
    /// Static vectors among the semantic oracle's leading hits ([`static_hits`]).
    statics: (usize, usize),
}
