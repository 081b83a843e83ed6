//! `patina.v1.Sessions`: working sessions and their notes (durable writes on the blocking pool).

use patina_proto::v1 as pb;
use tonic::{Request, Response, Status};

use super::convert::{note_pb, session_pb, status};
use super::{Services, blocking};

#[tonic::async_trait]
impl pb::sessions_server::Sessions for Services {
    async fn start(
        &self,
        req: Request<pb::StartSessionRequest>,
    ) -> Result<Response<pb::StartSessionResponse>, Status> {
        let r = req.into_inner();
        let repo_id = if r.repo.trim().is_empty() {
            None
        } else {
            Some(
                self.0
                    .repos
                    .resolve(r.repo.trim())
                    .map_err(status)?
                    .id()
                    .to_string(),
            )
        };
        let sessions = self.0.sessions.clone();
        let (session, resumed) =
            blocking(move || sessions.start(&r.name, repo_id, &r.goal)).await?;
        Ok(Response::new(pb::StartSessionResponse {
            session: Some(session_pb(session)),
            resumed,
        }))
    }

    async fn note(
        &self,
        req: Request<pb::NoteRequest>,
    ) -> Result<Response<pb::NoteResponse>, Status> {
        let r = req.into_inner();
        let sessions = self.0.sessions.clone();
        let note =
            blocking(move || sessions.add_note(&r.session, &r.text, &r.tags, &r.idempotency_key))
                .await?;
        let session = self
            .0
            .sessions
            .list()
            .into_iter()
            .find(|s| s.rec.name == note.session)
            .map(session_pb);
        Ok(Response::new(pb::NoteResponse {
            note: Some(note_pb(note)),
            session,
        }))
    }

    async fn end(
        &self,
        req: Request<pb::EndSessionRequest>,
    ) -> Result<Response<pb::EndSessionResponse>, Status> {
        let r = req.into_inner();
        let sessions = self.0.sessions.clone();
        let (session, summary) =
            blocking(move || sessions.end(&r.session, &r.summary, &r.idempotency_key)).await?;
        Ok(Response::new(pb::EndSessionResponse {
            session: Some(session_pb(session)),
            summary: summary.map(note_pb),
        }))
    }

    async fn list(
        &self,
        req: Request<pb::ListSessionsRequest>,
    ) -> Result<Response<pb::ListSessionsResponse>, Status> {
        let r = req.into_inner();
        let notes = if r.session.is_empty() {
            Vec::new()
        } else {
            self.0.sessions.notes_of(&r.session).map_err(status)?
        };
        Ok(Response::new(pb::ListSessionsResponse {
            sessions: self.0.sessions.list().into_iter().map(session_pb).collect(),
            notes: notes.into_iter().map(note_pb).collect(),
        }))
    }
}
