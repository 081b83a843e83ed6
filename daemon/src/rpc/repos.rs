//! `patina.v1.Repos`: add (streaming the first index round's progress), remove, list, watch a
//! running job, repair.

use std::pin::Pin;
use std::sync::Arc;

use futures::Stream;
use patina_index::{Phase, Progress};
use patina_proto::v1 as pb;
use tokio::sync::watch;
use tonic::{Request, Response, Status};

use super::convert::{audit_pb, progress_pb, repo_pb, stage_pb, status};
use super::{Services, blocking};
use crate::services::embedding::Semantic;
use crate::state::repo::Repo;

/// How long `Repos.Add` waits, after its first round, for every chunk to have a vector (static
/// or the model's, `Semantic::first_pass_done`).
const FIRST_PASS_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

type ProgressStream = Pin<Box<dyn Stream<Item = Result<pb::IndexProgress, Status>> + Send>>;

/// Forward a job's progress until it finishes (the job itself keeps running if the client leaves).
fn follow(
    repo: Arc<Repo>,
    mut rx: watch::Receiver<Progress>,
    mut notice: Option<String>,
    first_pass: Option<Arc<Semantic>>,
) -> ProgressStream {
    let (tx, out) = tokio::sync::mpsc::channel(16);
    tokio::spawn(async move {
        loop {
            let p = rx.borrow_and_update().clone();
            let finished = p.finished();
            // An added repository is done once its chunks can answer by meaning too (static
            // vectors take microseconds a chunk), within FIRST_PASS_WAIT: the first question
            // after `add` is then hybrid.
            if let (true, Phase::Done, Some(sem)) = (finished, p.phase, &first_pass) {
                let deadline = tokio::time::Instant::now() + FIRST_PASS_WAIT;
                while !sem.first_pass_done(&repo) && tokio::time::Instant::now() < deadline {
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                }
            }
            let mut msg = progress_pb(&p, Some(&repo));
            // The first message carries the note `add` makes before indexing (a large tree's cost).
            if let Some(note) = notice.take()
                && msg.message.is_empty()
            {
                msg.message = note;
            }
            if tx.send(Ok(msg)).await.is_err() || finished {
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
impl pb::repos_server::Repos for Services {
    type AddStream = ProgressStream;
    type WatchStream = ProgressStream;

    async fn add(&self, req: Request<pb::AddRequest>) -> Result<Response<ProgressStream>, Status> {
        let req = req.into_inner();
        let (indexer, path, force) = (self.0.indexer.clone(), req.path, req.force);
        let added = blocking(move || indexer.add(&path, force)).await?;
        Ok(Response::new(follow(
            added.repo,
            added.progress,
            added.notice,
            Some(self.0.semantic.clone()),
        )))
    }

    async fn remove(
        &self,
        req: Request<pb::RemoveRequest>,
    ) -> Result<Response<pb::RemoveResponse>, Status> {
        let rec = self
            .0
            .indexer
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
        // Freshness asks git (a subprocess) per repository: on the blocking pool.
        let all = self.0.repos.all();
        let semantic = self.0.semantic.clone();
        let repos = blocking(move || {
            let held: usize = all.iter().map(|r| r.provisional_count()).sum();
            Ok(all
                .iter()
                .map(|r| {
                    let mut info = repo_pb(r, true);
                    let (statics, model) = semantic.stages(r, held);
                    info.static_eta = statics.map(stage_pb);
                    info.embed_eta = model.map(stage_pb);
                    info
                })
                .collect())
        })
        .await?;
        Ok(Response::new(pb::ListResponse {
            repos,
            daemon_uptime_ms: self.0.started.elapsed().as_millis() as u64,
            daemon_rss_bytes: crate::process::memory::rss_bytes(),
            semantic: self.0.semantic.describe(),
            semantic_on: self.0.semantic.is_on(),
        }))
    }

    async fn watch(
        &self,
        req: Request<pb::WatchRequest>,
    ) -> Result<Response<ProgressStream>, Status> {
        let repo = self
            .0
            .repos
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
        Ok(Response::new(follow(repo, rx, None, None)))
    }

    async fn repair(
        &self,
        req: Request<pb::RepairRequest>,
    ) -> Result<Response<pb::RepairResponse>, Status> {
        let r = req.into_inner();
        let reports = self
            .0
            .indexer
            .repair(&r.repo, r.check_only)
            .await
            .map_err(status)?;
        let reports = blocking(move || {
            Ok(reports
                .into_iter()
                .map(|(repo, found, remaining)| pb::RepairReport {
                    repo: Some(repo_pb(&repo, true)),
                    found: Some(audit_pb(found)),
                    repaired: remaining.is_some(),
                    remaining: remaining.map(audit_pb),
                })
                .collect())
        })
        .await?;
        Ok(Response::new(pb::RepairResponse { reports }))
    }
}
