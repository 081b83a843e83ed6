//! `patina.v1.Files`: `GetFile` (confined slices of files) and `ExploreStructure`.

use patina_proto::v1 as pb;
use tonic::{Request, Response, Status};

use super::convert::{status, structure_pb};
use super::{Services, blocking};

#[tonic::async_trait]
impl pb::files_server::Files for Services {
    async fn get_file(
        &self,
        req: Request<pb::GetFileRequest>,
    ) -> Result<Response<pb::GetFileResponse>, Status> {
        let r = req.into_inner();
        let repo = self.0.repos.resolve(&r.repo).map_err(status)?;
        let id = repo.id().to_string();
        let slice = blocking(move || {
            crate::services::files::read_slice(&repo, &r.path, r.start_line, r.end_line)
        })
        .await?;
        Ok(Response::new(pb::GetFileResponse {
            repo_id: id,
            path: slice.path,
            language: slice.language.into(),
            total_lines: slice.total_lines,
            start_line: slice.start_line,
            end_line: slice.end_line,
            text: slice.text,
            truncated: slice.truncated,
            next_line: slice.next_line,
            total_bytes: slice.total_bytes,
            line_cut: slice.line_cut,
        }))
    }

    async fn explore_structure(
        &self,
        req: Request<pb::ExploreRequest>,
    ) -> Result<Response<pb::ExploreResponse>, Status> {
        let r = req.into_inner();
        let repo = self.0.repos.resolve(&r.repo).map_err(status)?;
        let (id, name) = (repo.id().to_string(), repo.record().name);
        let st = blocking(move || {
            crate::services::files::explore(
                &repo,
                &crate::services::files::ExploreOptions {
                    path: r.path,
                    globs: r.path_globs,
                    max_depth: r.max_depth,
                    max_entries: r.max_entries as usize,
                },
            )
        })
        .await?;
        Ok(Response::new(structure_pb(id, name, st)))
    }
}
