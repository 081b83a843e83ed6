//! `patina.v1.History`: `Log` (matching commits, the commits that shaped a file) and `Related`
//! (co-change partners of a file).

use patina_proto::v1 as pb;
use tonic::{Request, Response, Status};

use super::convert::status;
use super::{Services, blocking};
use crate::services::history::{LogRequest, parse_since};

#[tonic::async_trait]
impl pb::history_server::History for Services {
    async fn log(&self, req: Request<pb::LogRequest>) -> Result<Response<pb::LogResponse>, Status> {
        let r = req.into_inner();
        let repos = if r.repo.is_empty() {
            self.0.repos.all()
        } else {
            vec![self.0.repos.resolve(&r.repo).map_err(status)?]
        };
        let since = parse_since(&r.since).map_err(status)?;
        let max_files = if r.max_files == 0 {
            20
        } else {
            r.max_files as usize
        };
        let cfg = self.0.config.history.clone();
        let request = LogRequest {
            query: r.query,
            file: r.file,
            globs: r.path_globs,
            since,
            limit: r.limit as usize,
        };
        let mut notices = Vec::new();
        if repos.is_empty() {
            notices.push("no repositories are registered".into());
        }
        let (entries, searched) =
            blocking(move || crate::services::history::log(&repos, &request, &cfg)).await?;
        let commits = entries
            .into_iter()
            .map(|e| {
                let rec = &e.commit.record;
                // A repository that masks personal data masks it in commit messages and authors.
                let scrubber = e.repo.index().scrubber();
                let mask = |s: String| match &scrubber {
                    Some(sc) => sc.scrub(&s).into_owned(),
                    None => s,
                };
                let body = rec
                    .message
                    .split_once('\n')
                    .map_or("", |(_, b)| b)
                    .trim()
                    .to_string();
                pb::Commit {
                    repo_id: e.repo.id().to_string(),
                    repo_name: e.repo.record().name,
                    hash: rec.hash.clone(),
                    author: mask(rec.author.clone()),
                    time_unix: rec.time,
                    subject: mask(rec.subject().to_string()),
                    body: mask(body),
                    files_total: e.commit.files.len() as u32,
                    files: e.commit.files.iter().take(max_files).cloned().collect(),
                    score: e.score,
                }
            })
            .collect();
        Ok(Response::new(pb::LogResponse {
            commits,
            searched: searched as u32,
            notices,
            remedies: super::search::remedies(&self.0.repos),
        }))
    }

    async fn related(
        &self,
        req: Request<pb::RelatedRequest>,
    ) -> Result<Response<pb::RelatedResponse>, Status> {
        let r = req.into_inner();
        if r.path.trim().is_empty() {
            return Err(Status::invalid_argument("no path given"));
        }
        let repo = self
            .0
            .repos
            .resolve(if r.repo.is_empty() { &r.path } else { &r.repo })
            .map_err(status)?;
        // An absolute path (or one the repository contains) is made relative to its root.
        let path = match std::path::Path::new(&r.path).strip_prefix(repo.root()) {
            Ok(rel) => rel.to_string_lossy().into_owned(),
            Err(_) => r.path.clone(),
        };
        let cfg = self.0.config.history.clone();
        let id = repo.id().to_string();
        let (p, limit) = (path.clone(), r.limit as usize);
        let (files, commits) =
            blocking(move || Ok(crate::services::history::related(&repo, &p, limit, &cfg))).await?;
        Ok(Response::new(pb::RelatedResponse {
            repo_id: id,
            path,
            commits: commits as u32,
            files: files
                .into_iter()
                .map(|c| pb::RelatedFile {
                    path: c.path,
                    support: c.support,
                    confidence: c.confidence,
                })
                .collect(),
        }))
    }
}
