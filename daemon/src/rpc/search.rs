//! `patina.v1.Search`: `Query` (ranked hits) and `Context` (hits merged into a token budget).

use patina_proto::v1 as pb;
use tonic::{Request, Response, Status};

use super::Services;
use super::convert::{
    context_format, context_response, granularity, query_response, roles, status,
};
use crate::search::SearchRequest;

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
        Ok(Response::new(query_response(res)))
    }

    async fn context(
        &self,
        req: Request<pb::ContextRequest>,
    ) -> Result<Response<pb::ContextResponse>, Status> {
        let r = req.into_inner();
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
                expand: r.expand,
            },
        )
        .await
        .map_err(status)?;
        Ok(Response::new(context_response(c)))
    }
}
