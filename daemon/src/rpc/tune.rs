//! `patina.v1.Tune`: `Start` (tune a repository in the background, or reset it) and `Status`.

use patina_proto::v1 as pb;
use tonic::{Request, Response, Status};

use super::{Services, blocking, convert};
use crate::state::repo::Repo;
use crate::state::tuned::TunePhase;

fn state_pb(repo: &Repo) -> pb::TuneState {
    let p = repo.tune().progress();
    let rec = repo.record();
    pb::TuneState {
        repo_id: repo.id().to_string(),
        repo_name: rec.name,
        running: p.running,
        phase: match p.phase {
            TunePhase::None => pb::TunePhase::Unspecified,
            TunePhase::History => pb::TunePhase::History,
            TunePhase::Asking => pb::TunePhase::Asking,
            TunePhase::Fitting => pb::TunePhase::Fitting,
            TunePhase::Checking => pb::TunePhase::Checking,
        } as i32,
        done: p.done,
        total: p.total,
        error: p.error,
        result: repo.tune().tuned().map(|t| {
            let r = &t.result;
            pb::TuneResult {
                applied: r.applied,
                overrides: r.overrides.clone().into_iter().collect(),
                defaults: r.defaults.clone().into_iter().collect(),
                train_queries: r.train_queries as u32,
                heldout_queries: r.heldout_queries as u32,
                feedback_queries: r.feedback_queries as u32,
                train_before: r.train_before,
                train_after: r.train_after,
                heldout_before: r.heldout_before,
                heldout_after: r.heldout_after,
                heldout_r5_before: r.heldout_r5_before,
                heldout_r5_after: r.heldout_r5_after,
                took_ms: r.took_ms,
                head: r.head.clone(),
                finished_unix_ms: r.finished_unix_ms,
                oracles: convert::oracles_pb(r.oracles.iter().map(String::as_str)),
            }
        }),
    }
}

#[tonic::async_trait]
impl pb::tune_server::Tune for Services {
    async fn start(
        &self,
        req: Request<pb::TuneRequest>,
    ) -> Result<Response<pb::TuneStatusResponse>, Status> {
        let r = req.into_inner();
        if r.repo.trim().is_empty() {
            return Err(Status::invalid_argument(
                "which repository? (an id, name or path)",
            ));
        }
        let d = self.0.clone();
        let repo = d.repos.resolve(&r.repo).map_err(convert::status)?;
        let state = blocking(move || {
            if r.reset {
                // (The slot moves its own version: cached answers are not served.)
                repo.tune().reset(&repo.record().name)?;
            } else {
                let feedback = d.feedback.examples()?;
                crate::workers::tuner::start(d.engine.clone(), repo.clone(), feedback)?;
            }
            Ok(state_pb(&repo))
        })
        .await?;
        Ok(Response::new(pb::TuneStatusResponse { repos: vec![state] }))
    }

    async fn status(
        &self,
        req: Request<pb::TuneStatusRequest>,
    ) -> Result<Response<pb::TuneStatusResponse>, Status> {
        let r = req.into_inner();
        let repos = if r.repo.trim().is_empty() {
            self.0.repos.all()
        } else {
            vec![self.0.repos.resolve(&r.repo).map_err(convert::status)?]
        };
        Ok(Response::new(pb::TuneStatusResponse {
            repos: repos.iter().map(|r| state_pb(r)).collect(),
        }))
    }
}
