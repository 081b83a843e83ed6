//! `patina.v1.Graph`: navigation on the dependency graph (`patina refs|callers|callees|defs`).

use patina_proto::v1 as pb;
use tonic::{Request, Response, Status};

use super::{Services, blocking};

#[tonic::async_trait]
impl pb::graph_server::Graph for Services {
    async fn navigate(
        &self,
        req: Request<pb::NavigateRequest>,
    ) -> Result<Response<pb::NavigateResponse>, Status> {
        let req = req.into_inner();
        let registry = self.0.registry.clone();
        let sites = blocking(move || {
            let repos = if req.repos.is_empty() {
                registry.all()
            } else {
                req.repos
                    .iter()
                    .map(|k| registry.resolve(k))
                    .collect::<anyhow::Result<Vec<_>>>()?
            };
            crate::navigate::navigate(&repos, &req.what, &req.symbol)
        })
        .await?;
        Ok(Response::new(pb::NavigateResponse {
            sites: sites
                .into_iter()
                .map(|s| pb::GraphSite {
                    repo: s.repo,
                    path: s.path,
                    line: s.line,
                    end_line: s.end_line,
                    symbol: s.symbol,
                    kind: s.kind,
                    resolution: s.resolution,
                    target: s.target,
                    call: s.call,
                })
                .collect(),
        }))
    }
}
