//! `patina.v1.Team`: `Publish`, `Published` over `crate::services::team`.

use patina_proto::v1 as pb;
use tonic::{Request, Response, Status};

use super::convert::status;
use super::{Services, blocking};
use crate::services::team;

#[tonic::async_trait]
impl pb::team_server::Team for Services {
    async fn publish(
        &self,
        req: Request<pb::PublishRequest>,
    ) -> Result<Response<pb::PublishResponse>, Status> {
        let r = req.into_inner();
        if r.repo.trim().is_empty() {
            return Err(Status::invalid_argument(
                "which repository? (an id, name or path)",
            ));
        }
        let (repos, semantic, t) = (
            self.0.repos.clone(),
            self.0.semantic.clone(),
            self.0.team.clone(),
        );
        let repo = repos.resolve(&r.repo).map_err(status)?;
        let store = t.describe().unwrap_or_default();
        let p = blocking(move || t.publish(&semantic, &repo, &r.readers)).await?;
        Ok(Response::new(pb::PublishResponse {
            remote: p.remote,
            commit: p.commit,
            model: p.model,
            files: p.report.files as u64,
            chunks: p.chunks as u64,
            files_sent: p.report.files_sent as u64,
            chunks_sent: p.report.chunks_sent as u64,
            vectors_sent: p.report.vectors_sent as u64,
            vectors_present: p.report.vectors_present as u64,
            bulk_load: p.report.bulk_load,
            already: p.report.already,
            store,
        }))
    }

    async fn published(
        &self,
        _req: Request<pb::PublishedRequest>,
    ) -> Result<Response<pb::PublishedResponse>, Status> {
        let (repos, t) = (self.0.repos.clone(), self.0.team.clone());
        // No store configured: nothing published, and `store` empty says why.
        let Some(store) = t.describe() else {
            return Ok(Response::new(pb::PublishedResponse::default()));
        };
        let list = blocking(move || {
            let published = t.published()?;
            let local: Vec<String> = repos
                .all()
                .iter()
                .filter_map(|r| team::origin(r).ok())
                .filter_map(|u| patina_team::remote::normalise(&u))
                .collect();
            Ok(published
                .into_iter()
                .map(|p| pb::PublishedRepo {
                    cloned: local.contains(&p.remote),
                    remote: p.remote,
                    name: p.name,
                    commit: p.sha,
                    model: p.model,
                    files: p.files,
                    chunks: p.chunks,
                    published_at: p.published_at,
                })
                .collect())
        })
        .await?;
        Ok(Response::new(pb::PublishedResponse { repos: list, store }))
    }
}
