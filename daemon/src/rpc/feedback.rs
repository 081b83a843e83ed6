//! `patina.v1.Feedback`: `Record` (feedback on one answer, stored durably) and `Stats`.

use patina_proto::v1 as pb;
use tonic::{Request, Response, Status};

use super::{Services, blocking};
use crate::services::feedback::FeedbackInput;

#[tonic::async_trait]
impl pb::feedback_server::Feedback for Services {
    async fn record(
        &self,
        req: Request<pb::FeedbackRequest>,
    ) -> Result<Response<pb::FeedbackResponse>, Status> {
        let r = req.into_inner();
        let d = self.0.clone();
        let input = FeedbackInput {
            query_id: r.query_id,
            used: r.used,
            unhelpful: r.unhelpful,
            rating: r.rating,
            implicit: r.implicit,
            session: r.session,
        };
        let (id, known_query) = blocking(move || d.feedback.record(input)).await?;
        Ok(Response::new(pb::FeedbackResponse { id, known_query }))
    }

    async fn stats(
        &self,
        _req: Request<pb::FeedbackStatsRequest>,
    ) -> Result<Response<pb::FeedbackStatsResponse>, Status> {
        let d = self.0.clone();
        let s = blocking(move || d.feedback.stats()).await?;
        Ok(Response::new(pb::FeedbackStatsResponse {
            records: s.records,
            explicit: s.explicit,
            implicit: s.implicit,
            queries: s.queries,
            used: s.used,
            unhelpful: s.unhelpful,
            ratings: s.ratings.to_vec(),
            mean_rating: s.mean_rating,
            most_used: s
                .most_used
                .into_iter()
                .map(|(path, count)| pb::PathCount { path, count })
                .collect(),
            last_unix_ms: s.last_unix_ms,
        }))
    }
}
