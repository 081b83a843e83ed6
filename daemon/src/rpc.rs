//! The gRPC surface: thin adapters from `patina.v1` messages to the daemon's components.
//! No logic lives here beyond conversion and error mapping.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

use futures::Stream;
use patina_proto::v1 as pb;
use tokio::sync::{Notify, watch};
use tonic::{Request, Response, Status};

use crate::index::{Phase, Progress};
use crate::registry::{Registry, UserError};
use crate::repo::Repo;
use crate::search::{Granularity, QueryEngine, SearchRequest};

/// What every service shares.
pub(crate) struct Daemon {
    pub registry: Arc<Registry>,
    pub engine: QueryEngine,
    pub started: Instant,
    pub socket: String,
    pub data_dir: String,
    pub socket_activated: bool,
    pub shutdown: Arc<Notify>,
}

#[derive(Clone)]
pub(crate) struct Services(pub Arc<Daemon>);

fn status(e: anyhow::Error) -> Status {
    match e.downcast_ref::<UserError>() {
        Some(UserError::NotFound(m)) => Status::not_found(m.clone()),
        Some(UserError::Invalid(m)) => Status::invalid_argument(m.clone()),
        None => {
            tracing::error!("request failed: {e:#}");
            Status::internal(format!("{e:#}"))
        }
    }
}

fn progress_pb(p: &Progress, repo: Option<&Repo>) -> pb::IndexProgress {
    let phase = match p.phase {
        Phase::Queued => pb::IndexPhase::Queued,
        Phase::Walking => pb::IndexPhase::Walking,
        Phase::Indexing => pb::IndexPhase::Indexing,
        Phase::Committing => pb::IndexPhase::Committing,
        Phase::Done => pb::IndexPhase::Done,
        Phase::Failed => pb::IndexPhase::Failed,
    };
    pb::IndexProgress {
        repo: repo.map(|r| Box::new(repo_pb(r, false))),
        phase: phase as i32,
        files_total: p.files_total,
        files_done: p.files_done,
        files_changed: p.files_changed,
        files_removed: p.files_removed,
        chunks: p.chunks,
        message: p.message.clone(),
    }
}

fn repo_pb(repo: &Repo, with_progress: bool) -> pb::RepoInfo {
    let rec = repo.record();
    let running = repo.running_job();
    pb::RepoInfo {
        id: rec.id,
        name: rec.name,
        root: rec.root,
        files: rec.files,
        chunks: rec.chunks,
        skipped: rec
            .skipped
            .iter()
            .map(|(reason, n)| pb::SkipCount {
                reason: reason.clone(),
                files: *n,
                examples: rec
                    .skipped_examples
                    .get(reason)
                    .cloned()
                    .unwrap_or_default(),
            })
            .collect(),
        last_indexed_unix_ms: rec.last_indexed_unix_ms,
        indexing: running.is_some(),
        progress: if with_progress {
            running.map(|rx| Box::new(progress_pb(&rx.borrow(), None)))
        } else {
            None
        },
        languages: rec.languages.into_iter().collect(),
        last_error: rec.last_error.unwrap_or_default(),
        last_index_ms: rec.last_index_ms,
        vectors: repo.vectors.read().expect("vectors lock").len() as u64,
        embed_backlog: crate::semantic::backlog(repo) as u64,
    }
}

type ProgressStream = Pin<Box<dyn Stream<Item = Result<pb::IndexProgress, Status>> + Send>>;

/// Forward a job's progress until it finishes (the job itself keeps running if the client leaves).
fn follow(repo: Arc<Repo>, mut rx: watch::Receiver<Progress>) -> ProgressStream {
    let (tx, out) = tokio::sync::mpsc::channel(16);
    tokio::spawn(async move {
        loop {
            let p = rx.borrow_and_update().clone();
            let finished = p.finished();
            if tx.send(Ok(progress_pb(&p, Some(&repo)))).await.is_err() || finished {
                break;
            }
            if rx.changed().await.is_err() {
                let p = rx.borrow().clone();
                let _ = tx.send(Ok(progress_pb(&p, Some(&repo)))).await;
                break;
            }
        }
    });
    Box::pin(tokio_stream::wrappers::ReceiverStream::new(out))
}

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

#[tonic::async_trait]
impl pb::repos_server::Repos for Services {
    type AddStream = ProgressStream;
    type WatchStream = ProgressStream;

    async fn add(&self, req: Request<pb::AddRequest>) -> Result<Response<ProgressStream>, Status> {
        let (repo, rx) = self
            .0
            .registry
            .add(&req.into_inner().path)
            .map_err(status)?;
        Ok(Response::new(follow(repo, rx)))
    }

    async fn remove(
        &self,
        req: Request<pb::RemoveRequest>,
    ) -> Result<Response<pb::RemoveResponse>, Status> {
        let rec = self
            .0
            .registry
            .remove(&req.into_inner().repo)
            .await
            .map_err(status)?;
        Ok(Response::new(pb::RemoveResponse {
            removed: Some(pb::RepoInfo {
                id: rec.id,
                name: rec.name,
                root: rec.root,
                ..Default::default()
            }),
        }))
    }

    async fn list(
        &self,
        _req: Request<pb::ListRequest>,
    ) -> Result<Response<pb::ListResponse>, Status> {
        let repos = self
            .0
            .registry
            .all()
            .iter()
            .map(|r| repo_pb(r, true))
            .collect();
        Ok(Response::new(pb::ListResponse {
            repos,
            daemon_uptime_ms: self.0.started.elapsed().as_millis() as u64,
            daemon_rss_bytes: crate::rss_bytes(),
            semantic: self.0.registry.semantic.describe(),
        }))
    }

    async fn watch(
        &self,
        req: Request<pb::WatchRequest>,
    ) -> Result<Response<ProgressStream>, Status> {
        let repo = self
            .0
            .registry
            .resolve(&req.into_inner().repo)
            .map_err(status)?;
        let rx = match repo.running_job() {
            Some(rx) => rx,
            None => {
                watch::channel(Progress {
                    phase: Phase::Done,
                    ..Default::default()
                })
                .1
            }
        };
        Ok(Response::new(follow(repo, rx)))
    }
}

#[tonic::async_trait]
impl pb::search_server::Search for Services {
    async fn query(
        &self,
        req: Request<pb::QueryRequest>,
    ) -> Result<Response<pb::QueryResponse>, Status> {
        let r = req.into_inner();
        let granularity = match pb::Granularity::try_from(r.granularity) {
            Ok(pb::Granularity::Chunk) => Granularity::Chunk,
            Ok(pb::Granularity::File) => Granularity::File,
            Err(_) => {
                return Err(Status::invalid_argument(format!(
                    "unknown granularity {}",
                    r.granularity
                )));
            }
        };
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
            })
            .await
            .map_err(status)?;
        let hits = res
            .hits
            .into_iter()
            .map(|h| pb::Hit {
                repo_id: h.repo.id.clone(),
                repo_root: h.repo.root.to_string_lossy().into_owned(),
                path: h.meta.path,
                start_line: h.meta.start_line,
                end_line: h.meta.end_line,
                symbol: h.meta.symbol.unwrap_or_default(),
                kind: h.meta.kind.name().into(),
                parent: h.meta.parent.unwrap_or_default(),
                language: h.meta.language.name().into(),
                score: h.score,
                provenance: h
                    .provenance
                    .into_iter()
                    .map(|c| pb::OracleRank {
                        oracle: c.oracle.into(),
                        rank: c.rank,
                        score: c.score,
                    })
                    .collect(),
                snippet: h.snippet,
            })
            .collect();
        Ok(Response::new(pb::QueryResponse {
            hits,
            oracles: res
                .reports
                .into_iter()
                .map(|o| pb::OracleReport {
                    oracle: o.oracle.into(),
                    status: o.status.into(),
                    hits: o.hits as u32,
                    took_us: o.took.as_micros() as u64,
                    message: o.message,
                })
                .collect(),
            took_us: res.took.as_micros() as u64,
            notices: res.notices,
        }))
    }
}

#[tonic::async_trait]
impl pb::files_server::Files for Services {
    async fn get_file(
        &self,
        req: Request<pb::GetFileRequest>,
    ) -> Result<Response<pb::GetFileResponse>, Status> {
        let r = req.into_inner();
        let repo = self.0.registry.resolve(&r.repo).map_err(status)?;
        let slice =
            crate::files::read_slice(&repo, &r.path, r.start_line, r.end_line).map_err(status)?;
        Ok(Response::new(pb::GetFileResponse {
            repo_id: repo.id.clone(),
            path: slice.path,
            language: slice.language.into(),
            total_lines: slice.total_lines,
            start_line: slice.start_line,
            end_line: slice.end_line,
            text: slice.text,
            truncated: slice.truncated,
        }))
    }
}
