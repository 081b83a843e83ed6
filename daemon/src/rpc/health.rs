//! `patina.v1.Health`: liveness, version and daemon facts; `Shutdown`.

use patina_proto::v1 as pb;
use tonic::{Request, Response, Status};

use super::Services;

#[tonic::async_trait]
impl pb::health_server::Health for Services {
    async fn check(
        &self,
        _req: Request<pb::CheckRequest>,
    ) -> Result<Response<pb::CheckResponse>, Status> {
        let d = &self.0;
        Ok(Response::new(pb::CheckResponse {
            version: env!("CARGO_PKG_VERSION").into(),
            protocol: patina_proto::PROTOCOL_VERSION,
            pid: std::process::id(),
            uptime_ms: d.started.elapsed().as_millis() as u64,
            rss_bytes: crate::rss_bytes(),
            socket: d.socket.clone(),
            data_dir: d.data_dir.clone(),
            socket_activated: d.socket_activated,
            semantic_on: d.registry.semantic.is_on(),
            semantic: d.registry.semantic.describe(),
            embeddings_computed: d.registry.semantic.computed(),
        }))
    }

    async fn shutdown(
        &self,
        _req: Request<pb::ShutdownRequest>,
    ) -> Result<Response<pb::ShutdownResponse>, Status> {
        tracing::info!("shutdown requested by a client");
        self.0.shutdown.notify_one();
        Ok(Response::new(pb::ShutdownResponse {}))
    }
}
