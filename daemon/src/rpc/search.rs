//! `patina.v1.Search`: `Query` (ranked hits) and `Context` (hits merged into a token budget).
//! Beyond conversion, the answers as they travel are kept here: the query cache (`crate::query::cache`,
//! wire answers by request), blame attribution on request (`crate::services::blame`) and the query id
//! every answer carries (`crate::services::feedback`).

use patina_proto::v1 as pb;
use tonic::{Request, Response, Status};

use super::Services;
use super::convert::{
    blame_pb, context_format, context_response, freshness_pb, granularity, query_response, roles,
    status,
};
use crate::query::cache::Lookup;
use crate::query::request::SearchRequest;
use crate::services::blame::Target;
use patina_core::OracleStatus;
use patina_proto::kinds::HitKind;

#[tonic::async_trait]
impl pb::search_server::Search for Services {
    async fn query(
        &self,
        req: Request<pb::QueryRequest>,
    ) -> Result<Response<pb::QueryResponse>, Status> {
        let r = req.into_inner();
        let started = std::time::Instant::now();
        let d = self.0.clone();
        let key = cache_key(&r);
        // A read-your-writes query first indexes what changed on disk (even what the watcher has
        // not reported yet): never from the cache.
        // Nor one that asks the team's store, which changes outside this daemon.
        if !r.no_cache && !r.org && r.fresh_timeout_ms == 0 && d.qcache.is_on() {
            let (d2, k) = (d.clone(), key.clone());
            if let Some(mut resp) = super::blocking(move || Ok(cached(&d2, &k))).await? {
                resp.took_us = started.elapsed().as_micros() as u64;
                resp.query_id = remember(&d, &r.query, &resp.hits);
                resp.remedies = remedies(&d.repos);
                return Ok(Response::new(resp));
            }
        }
        // Taken before computing: a change during the computation makes the answer unservable.
        let stamp = crate::query::cache::stamp_now(&d.repos);
        let text = r.query.clone();
        let blame = r.blame;
        let r_org = r.org;
        let granularity = granularity(r.granularity)?;
        let res = self
            .0
            .engine
            .search(SearchRequest {
                text: r.query,
                limit: r.limit as usize,
                repos: r.repos,
                globs: r.path_globs,
                granularity,
                oracles: r.oracles,
                snippet_lines: r.snippet_lines as usize,
                fresh_timeout: std::time::Duration::from_millis(r.fresh_timeout_ms as u64),
                roles: roles(&r.roles)?,
                exclude_roles: roles(&r.exclude_roles)?,
                near: r.near,
                complete: r.complete,
                features: r.features,
                org: r.org,
                licences: patina_core::LicenceFilter {
                    allowed: r.licences,
                    no_copyleft: r.no_copyleft,
                },
            })
            .await
            .map_err(status)?;
        // Only an answer from a quiescent index is kept (it carries no "still indexing" notices).
        // Nor one that an oracle could not complete (a timeout need not repeat): read from the
        // engine's own reports, before they become wire strings.
        let complete = res
            .reports
            .iter()
            .all(|o| matches!(o.status, OracleStatus::Ok | OracleStatus::Unavailable));
        let mut resp = query_response(res);
        if blame {
            blame_hits(&mut resp.hits).await;
            for h in resp.hits.iter_mut() {
                mask_blame(&d.repos, &h.repo_id, h.blame.as_mut());
            }
        }
        if d.qcache.is_on() && !r_org && complete && resp.freshness.iter().all(|f| f.fresh) {
            let ids: Vec<&str> = resp.freshness.iter().map(|f| f.repo_id.as_str()).collect();
            if let Some(stamp) = stamp.narrow(&ids) {
                d.qcache.put(key, resp.clone(), stamp);
            }
        }
        resp.query_id = remember(&d, &text, &resp.hits);
        resp.remedies = remedies(&d.repos);
        Ok(Response::new(resp))
    }

    async fn context(
        &self,
        req: Request<pb::ContextRequest>,
    ) -> Result<Response<pb::ContextResponse>, Status> {
        let r = req.into_inner();
        let d = self.0.clone();
        let key = {
            use prost::Message as _;
            let mut k = r.clone();
            k.no_cache = false;
            k.encode_to_vec()
        };
        if !r.no_cache && d.ccache.is_on() {
            let (d2, k) = (d.clone(), key.clone());
            let found = super::blocking(move || {
                Ok(d2.ccache.get(&k, |stamp| {
                    crate::query::cache::still_valid(&d2.repos, stamp).is_some()
                }))
            })
            .await?;
            if let Lookup::Hit(mut resp) = found {
                resp.cached = true;
                resp.query_id = d.feedback.new_query_id();
                let refs = resp.items.iter().map(|i| i.r#ref.clone()).collect();
                d.feedback.remember(&resp.query_id, &r.query, refs);
                resp.remedies = remedies(&d.repos);
                return Ok(Response::new(resp));
            }
        }
        // Stamped with every registered repository (a context does not list its scope), before
        // computing; kept only if it still holds afterwards (nothing changed, all fresh).
        let stamp = crate::query::cache::stamp_now(&d.repos);
        let started = std::time::Instant::now();
        let blame = r.blame;
        let text = r.query.clone();
        let format = context_format(r.format)?;
        let c = crate::query::context::assemble(
            &self.0.engine,
            crate::query::context::ContextRequest {
                text: r.query,
                budget_tokens: r.token_budget as usize,
                repos: r.repos,
                globs: r.path_globs,
                oracles: r.oracles,
                format,
                roles: roles(&r.roles)?,
                exclude_roles: roles(&r.exclude_roles)?,
                near: r.near,
                expand: r.expand,
                complete: r.complete,
                licences: patina_core::LicenceFilter {
                    allowed: r.licences,
                    no_copyleft: r.no_copyleft,
                },
            },
        )
        .await
        .map_err(status)?;
        let mut resp = context_response(c);
        if blame {
            blame_items(&mut resp.items).await;
            for i in resp.items.iter_mut() {
                mask_blame(&d.repos, &i.repo_id, i.blame.as_mut());
            }
        }
        // An answer that took as long as an oracle may (one may have timed out) is not kept.
        let timeout = std::time::Duration::from_millis(d.config.retrieval.oracle_timeout_ms);
        if d.ccache.is_on() && started.elapsed() < timeout {
            let (d2, stored) = (d.clone(), resp.clone());
            super::blocking(move || {
                if crate::query::cache::still_valid(&d2.repos, &stamp).is_some() {
                    d2.ccache.put(key, stored, stamp);
                }
                Ok(())
            })
            .await?;
        }
        resp.query_id = d.feedback.new_query_id();
        let refs = resp.items.iter().map(|i| i.r#ref.clone()).collect();
        self.0.feedback.remember(&resp.query_id, &text, refs);
        resp.remedies = remedies(&d.repos);
        Ok(Response::new(resp))
    }
}

/// What the caller can do about an answer's notices: register a repository when none is (the
/// notice says so in words; clients phrase the remedy, `patina_core::Remedy`).
pub(super) fn remedies(repos: &crate::state::repos::Repos) -> Vec<i32> {
    if repos.all().is_empty() {
        vec![pb::Remedy::from(patina_core::Remedy::AddRepo) as i32]
    } else {
        Vec::new()
    }
}

/// A new query id for an answer with `hits`, remembered for feedback on it.
fn remember(d: &super::Daemon, query: &str, hits: &[pb::Hit]) -> String {
    let id = d.feedback.new_query_id();
    let refs = hits
        .iter()
        .map(|h| match HitKind::of(h) {
            HitKind::Chunk(_) => format!("{}:{}-{}", h.path, h.start_line, h.end_line),
            _ => h.path.clone(),
        })
        .collect();
    d.feedback.remember(&id, query, refs);
    id
}

/// The query cache's key: the request as it travels, without `no_cache`.
fn cache_key(r: &pb::QueryRequest) -> Vec<u8> {
    use prost::Message as _;
    let mut k = r.clone();
    k.no_cache = false;
    k.encode_to_vec()
}

/// The cached answer for `key` if it may be served now, with the freshness of now.
fn cached(d: &super::Daemon, key: &[u8]) -> Option<pb::QueryResponse> {
    let mut fresh = None;
    let found = d.qcache.get(key, |stamp| {
        fresh = crate::query::cache::still_valid(&d.repos, stamp);
        fresh.is_some()
    });
    match found {
        Lookup::Hit(mut resp) => {
            resp.freshness = fresh?.iter().map(freshness_pb).collect();
            resp.cached = true;
            Some(resp)
        }
        Lookup::Miss => None,
    }
}

/// The blame target of a chunk hit (groups and notes have none).
fn hit_target(h: &pb::Hit) -> Option<Target> {
    let chunk = matches!(HitKind::of(h), HitKind::Chunk(_));
    (chunk && !h.repo_root.is_empty()).then(|| Target {
        root: h.repo_root.clone().into(),
        path: h.path.clone(),
        start: h.start_line,
        end: h.end_line,
    })
}

/// Fill `Hit.blame` of the chunk hits (`QueryRequest.blame`).
/// A repository that masks personal data (`[pii]`) masks it in blame authors and subjects too.
fn mask_blame(repos: &crate::state::repos::Repos, repo_id: &str, blame: Option<&mut pb::Blame>) {
    let Some(b) = blame else { return };
    let Some(s) = repos
        .resolve(repo_id)
        .ok()
        .and_then(|r| r.index().scrubber())
    else {
        return;
    };
    b.author = s.scrub(&b.author).into_owned();
    b.subject = s.scrub(&b.subject).into_owned();
}

async fn blame_hits(hits: &mut [pb::Hit]) {
    let found = crate::services::blame::blame_all(hits.iter().map(hit_target).collect()).await;
    for (h, b) in hits.iter_mut().zip(found) {
        h.blame = b.map(blame_pb);
    }
}

/// Fill `ContextItem.blame` of the items from files (`ContextRequest.blame`).
async fn blame_items(items: &mut [pb::ContextItem]) {
    let targets = items
        .iter()
        .map(|i| {
            (!i.repo_root.is_empty() && i.kind != HitKind::Note.wire()).then(|| Target {
                root: i.repo_root.clone().into(),
                path: i.path.clone(),
                start: i.start_line,
                end: i.end_line,
            })
        })
        .collect();
    let found = crate::services::blame::blame_all(targets).await;
    for (i, b) in items.iter_mut().zip(found) {
        i.blame = b.map(blame_pb);
    }
}
