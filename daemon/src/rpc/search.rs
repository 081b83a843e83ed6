//! `patina.v1.Search`: `Query` (ranked hits) and `Context` (hits merged into a token budget).

use patina_proto::v1 as pb;
use tonic::{Request, Response, Status};

use super::Services;
use super::convert::{
    blame_pb, context_format, context_response, granularity, query_response, roles, status,
};
use crate::blame::Target;
use crate::search::SearchRequest;
use patina_proto::kinds::HitKind;

#[tonic::async_trait]
impl pb::search_server::Search for Services {
    async fn query(
        &self,
        req: Request<pb::QueryRequest>,
    ) -> Result<Response<pb::QueryResponse>, Status> {
        let r = req.into_inner();
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
            })
            .await
            .map_err(status)?;
        let mut resp = query_response(res);
        if r.blame {
            blame_hits(&mut resp.hits).await;
        }
        Ok(Response::new(resp))
    }

    async fn context(
        &self,
        req: Request<pb::ContextRequest>,
    ) -> Result<Response<pb::ContextResponse>, Status> {
        let r = req.into_inner();
        let blame = r.blame;
        let format = context_format(r.format)?;
        let c = crate::context::assemble(
            &self.0.engine,
            crate::context::ContextRequest {
                text: r.query,
                budget_tokens: r.token_budget as usize,
                repos: r.repos,
                globs: r.path_globs,
                oracles: r.oracles,
                format,
                roles: roles(&r.roles)?,
                exclude_roles: roles(&r.exclude_roles)?,
                near: r.near,
            },
        )
        .await
        .map_err(status)?;
        let mut resp = context_response(c);
        if blame {
            blame_items(&mut resp.items).await;
        }
        Ok(Response::new(resp))
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
async fn blame_hits(hits: &mut [pb::Hit]) {
    let found = crate::blame::blame_all(hits.iter().map(hit_target).collect()).await;
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
    let found = crate::blame::blame_all(targets).await;
    for (i, b) in items.iter_mut().zip(found) {
        i.blame = b.map(blame_pb);
    }
}
