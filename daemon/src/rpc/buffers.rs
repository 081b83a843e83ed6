//! `patina.v1.Buffers`: `SetBuffer` (editor overlays, see `crate::services::buffers`).

use std::time::Duration;

use patina_proto::v1 as pb;
use tonic::{Request, Response, Status};

use super::Services;
use super::convert::status;

/// The longest a caller may ask `SetBuffer` to wait.
const MAX_WAIT: Duration = Duration::from_secs(60);

#[tonic::async_trait]
impl pb::buffers_server::Buffers for Services {
    async fn set_buffer(
        &self,
        req: Request<pb::SetBufferRequest>,
    ) -> Result<Response<pb::SetBufferResponse>, Status> {
        let r = req.into_inner();
        let text = (!r.clear).then_some(r.text);
        let wait = Duration::from_millis(r.wait_ms.into()).min(MAX_WAIT);
        let set = crate::services::buffers::set(
            &self.0.repos,
            self.0.indexer.as_ref(),
            &self.0.semantic,
            &r.path,
            text,
            wait,
        )
        .await
        .map_err(status)?;
        Ok(Response::new(pb::SetBufferResponse {
            repo_id: set.repo_id,
            path: set.path,
            indexed: set.indexed,
            overlays: set.overlays as u32,
        }))
    }
}
