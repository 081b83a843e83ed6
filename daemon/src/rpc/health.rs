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
        let reg = d.registry.clone();
        let memory = tokio::task::spawn_blocking(move || memory_parts(&reg))
            .await
            .unwrap_or_default();
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
            memory_budget_bytes: d.registry.config.daemon.budget().total,
            memory,
            binary_replaced: d.exe.replaced(),
            restarts_in_place: d.restarts,
        }))
    }

    async fn shutdown(
        &self,
        _req: Request<pb::ShutdownRequest>,
    ) -> Result<Response<pb::ShutdownResponse>, Status> {
        tracing::info!("shutdown requested by a client");
        crate::restart::ask_stop();
        self.0.shutdown.notify_one();
        Ok(Response::new(pb::ShutdownResponse {}))
    }
}

/// The resident memory by component (walks the chunk tables: off the async workers).
fn memory_parts(reg: &crate::registry::Registry) -> Vec<pb::MemoryPart> {
    let now = crate::memory::Resident::now();
    let (mut vectors, mut tables) = (0u64, 0u64);
    for repo in reg.all() {
        // 8-bit components and one f32 scale per vector (patina_index::vectors::Vector).
        vectors += (repo.vector_count() * (patina_embed::DIM + 4)) as u64;
        vectors += (repo.messages().len() * crate::messages::MESSAGE_VECTOR_BYTES) as u64;
        vectors += repo.provisional_count() as u64 * crate::semantic::STATIC_VECTOR_BYTES;
        tables += repo.with_chunks(|chunks| {
            chunks
                .values()
                .map(crate::memory::chunk_entry_bytes)
                .sum::<u64>()
        });
    }
    crate::memory::breakdown(
        now,
        &reg.config.daemon.budget(),
        reg.semantic.session_bytes(),
        vectors,
        tables,
    )
    .into_iter()
    .map(|p| pb::MemoryPart {
        component: p.component.into(),
        bytes: p.bytes,
        limit_bytes: p.limit,
        estimated: p.estimated,
    })
    .collect()
}
