//! `patina.v1.Snapshots`: `Create`, `Verify`, `Restore` over `crate::services::snapshot`.

use patina_proto::v1 as pb;
use tonic::{Request, Response, Status};

use super::convert::{repo_pb, status};
use super::{Services, blocking};
use crate::services::snapshot::{self, Info};
use patina_index::Progress;

fn info_pb(i: &Info) -> pb::SnapshotInfo {
    pb::SnapshotInfo {
        file: i.file.to_string_lossy().into_owned(),
        digest: i.digest.clone(),
        commit: i.header.commit.clone(),
        model: i.header.model.clone(),
        chunks: i.chunks as u64,
        vectors: i.vectors as u64,
        bytes: i.bytes as u64,
        format: i.header.format,
    }
}

#[tonic::async_trait]
impl pb::snapshots_server::Snapshots for Services {
    async fn create(
        &self,
        req: Request<pb::CreateSnapshotRequest>,
    ) -> Result<Response<pb::SnapshotInfo>, Status> {
        let r = req.into_inner();
        if r.repo.trim().is_empty() {
            return Err(Status::invalid_argument(
                "which repository? (an id, name or path)",
            ));
        }
        let (repos, semantic) = (self.0.repos.clone(), self.0.semantic.clone());
        let repo = repos.resolve(&r.repo).map_err(status)?;
        let info = blocking(move || snapshot::create(&semantic, &repo, &r.out)).await?;
        Ok(Response::new(info_pb(&info)))
    }

    async fn verify(
        &self,
        req: Request<pb::VerifySnapshotRequest>,
    ) -> Result<Response<pb::SnapshotInfo>, Status> {
        let file = req.into_inner().file;
        let (_, info) = blocking(move || snapshot::read(&file)).await?;
        Ok(Response::new(info_pb(&info)))
    }

    async fn restore(
        &self,
        req: Request<pb::RestoreSnapshotRequest>,
    ) -> Result<Response<pb::RestoreSnapshotResponse>, Status> {
        let r = req.into_inner();
        let (indexer, semantic) = (self.0.indexer.clone(), self.0.semantic.clone());
        // Everything is checked before anything is registered or imported.
        let (info, imported, repo, rx) = blocking(move || {
            let (s, info) = snapshot::read(&r.file)?;
            let into = snapshot::check_restore(&semantic, &s, &r.into)?;
            let imported = snapshot::import(&semantic, &s)?;
            let added = indexer.add(&into.to_string_lossy(), false)?;
            Ok((info, imported, added.repo, added.progress))
        })
        .await?;
        let mut rx = rx;
        let _ = rx.wait_for(Progress::finished).await;
        let repo_info = blocking(move || Ok(repo_pb(&repo, true))).await?;
        Ok(Response::new(pb::RestoreSnapshotResponse {
            snapshot: Some(info_pb(&info)),
            repo: Some(repo_info),
            vectors_imported: imported as u64,
        }))
    }
}
