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
        let (repos, semantic, budget) = (
            d.repos.clone(),
            d.semantic.clone(),
            d.config.daemon.budget(),
        );
        let memory = tokio::task::spawn_blocking(move || memory_parts(&repos, &semantic, &budget))
            .await
            .unwrap_or_default();
        Ok(Response::new(pb::CheckResponse {
            version: env!("CARGO_PKG_VERSION").into(),
            protocol: patina_proto::PROTOCOL_VERSION,
            pid: std::process::id(),
            uptime_ms: d.started.elapsed().as_millis() as u64,
            rss_bytes: crate::process::memory::rss_bytes(),
            socket: d.socket.clone(),
            data_dir: d.data_dir.clone(),
            socket_activated: d.socket_activated,
            semantic_on: d.semantic.is_on(),
            semantic: d.semantic.describe(),
            semantic_off_reason: d.semantic.off_reason().unwrap_or_default().to_string(),
            model_pass: d.semantic.model_pass(),
            embeddings_computed: d.semantic.computed(),
            memory_budget_bytes: d.config.daemon.budget().total,
            memory,
            binary_replaced: d.exe.replaced(),
            restarts_in_place: d.restarts,
            team_store: d.team.describe().unwrap_or_default(),
            team_trouble: d.team.trouble().unwrap_or_default(),
            embeddings_from_team: d.team.taken(),
        }))
    }

    async fn shutdown(
        &self,
        _req: Request<pb::ShutdownRequest>,
    ) -> Result<Response<pb::ShutdownResponse>, Status> {
        tracing::info!("shutdown requested by a client");
        crate::process::restart::ask_stop();
        self.0.shutdown.notify_one();
        Ok(Response::new(pb::ShutdownResponse {}))
    }
}

/// The resident memory by component (walks the chunk tables: off the async workers).
fn memory_parts(
    repos: &crate::state::repos::Repos,
    semantic: &crate::services::embedding::Semantic,
    budget: &crate::process::memory::Budget,
) -> Vec<pb::MemoryPart> {
    let now = crate::process::memory::Resident::now();
    let held = repos.held_bytes();
    crate::process::memory::breakdown(now, budget, semantic.session_bytes(), held)
        .into_iter()
        .map(|p| pb::MemoryPart {
            component: p.component.into(),
            bytes: p.bytes,
            limit_bytes: p.limit,
            estimated: p.estimated,
        })
        .collect()
}
