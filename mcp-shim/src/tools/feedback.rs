//! `patina_feedback`: say which results of an answer helped (or did not) and rate it; and the
//! implicit feedback this connection records by itself: reading a result with `get_file` within
//! [`IMPLICIT_WINDOW`] of the answer that listed it marks it used (once per answer and file).

use std::collections::{HashSet, VecDeque};
use std::time::{Duration, Instant};

use patina_proto::v1 as pb;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::args::{Int, List, Str};
use super::{Outcome, Tool, ToolResult};
use crate::protocol::Server;

pub(super) const TOOL: Tool = Tool {
    name: "patina_feedback",
    description: "Name the results of an answer that helped, and rate it. Use it after a search.",
    input: super::args::input_schema::<Args>,
    output,
    read_only: false,
    idempotent: false,
};

/// Reading a hit this soon after its answer counts as using it.
pub(crate) const IMPLICIT_WINDOW: Duration = Duration::from_secs(10 * 60);
/// Answers this connection remembers for implicit feedback.
const REMEMBERED: usize = 50;

/// The arguments of `patina_feedback`; its `inputSchema` is generated from this struct.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Args {
    /// The answer's `query_id`.
    query_id: Str,
    /// Results that helped.
    #[serde(default)]
    used: List,
    /// Results that did not help.
    #[serde(default)]
    unhelpful: List,
    /// 1 (useless) to 5 (exact).
    rating: Option<Int<1, 5>>,
}

fn output() -> Value {
    json!({
        "type": "object",
        "properties": {
            "id": {"type": "integer", "description": "the stored record"},
            "known_query": {"type": "boolean", "description": "the daemon still remembered the answer"}
        },
        "required": ["id"]
    })
}

pub(super) async fn call(server: &Server, a: Args) -> ToolResult {
    let req = pb::FeedbackRequest {
        query_id: a.query_id.0,
        used: a.used.0,
        unhelpful: a.unhelpful.0,
        rating: a.rating.map_or(0, |r| r.0 as u32),
        implicit: false,
        session: server
            .session
            .lock()
            .expect("session lock")
            .clone()
            .unwrap_or_default(),
    };
    let resp = rpc!(server, pb::feedback_client::FeedbackClient<_>, record, req)?;
    Ok(Outcome {
        texts: vec![format!("Feedback recorded (#{}).", resp.id)],
        structured: json!({"id": resp.id, "known_query": resp.known_query}),
    })
}

/// An answer this connection received: its files, and which of them were read since.
pub(crate) struct Answer {
    query_id: String,
    at: Instant,
    /// (repository id, path) of each result.
    files: Vec<(String, String)>,
    read: HashSet<(String, String)>,
}

/// Remember an answer's results for implicit feedback.
pub(super) fn remember_answer(server: &Server, query_id: &str, files: Vec<(String, String)>) {
    if query_id.is_empty() || files.is_empty() {
        return;
    }
    let mut answers = server.answers.lock().expect("answers lock");
    if answers.len() >= REMEMBERED {
        answers.pop_front();
    }
    answers.push_back(Answer {
        query_id: query_id.to_string(),
        at: Instant::now(),
        files,
        read: HashSet::new(),
    });
}

/// The newest recent answer listing `(repo_id, path)` that has not counted it yet; marks it.
fn claim(
    answers: &mut VecDeque<Answer>,
    repo_id: &str,
    path: &str,
    now: Instant,
) -> Option<String> {
    let key = (repo_id.to_string(), path.to_string());
    let a = answers
        .iter_mut()
        .rev()
        .filter(|a| now.duration_since(a.at) <= IMPLICIT_WINDOW)
        .find(|a| a.files.contains(&key))?;
    a.read.insert(key).then(|| a.query_id.clone())
}

/// `get_file` read `path` of `repo_id`: if a recent answer listed it, record that it was used.
/// Best effort: a failure is logged, never the agent's problem.
pub(super) async fn file_read(server: &Server, repo_id: &str, path: &str) {
    let query_id = {
        let mut answers = server.answers.lock().expect("answers lock");
        claim(&mut answers, repo_id, path, Instant::now())
    };
    let Some(query_id) = query_id else { return };
    let req = pb::FeedbackRequest {
        query_id,
        used: vec![path.to_string()],
        implicit: true,
        session: server
            .session
            .lock()
            .expect("session lock")
            .clone()
            .unwrap_or_default(),
        ..Default::default()
    };
    if let Err(e) = rpc!(server, pb::feedback_client::FeedbackClient<_>, record, req) {
        crate::log(format!("implicit feedback not recorded: {e}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(id: &str, at: Instant, files: &[&str]) -> Answer {
        Answer {
            query_id: id.into(),
            at,
            files: files
                .iter()
                .map(|f| ("r".to_string(), f.to_string()))
                .collect(),
            read: HashSet::new(),
        }
    }

    #[test]
    fn a_read_counts_once_for_the_newest_recent_answer_listing_it() {
        let now = Instant::now();
        let mut answers = VecDeque::from([
            answer(
                "old",
                now - IMPLICIT_WINDOW - Duration::from_secs(1),
                &["a.rs"],
            ),
            answer("q1", now, &["a.rs", "b.rs"]),
            answer("q2", now, &["b.rs"]),
        ]);
        assert_eq!(claim(&mut answers, "r", "b.rs", now).as_deref(), Some("q2"));
        assert_eq!(
            claim(&mut answers, "r", "b.rs", now),
            None,
            "once per answer"
        );
        assert_eq!(claim(&mut answers, "r", "a.rs", now).as_deref(), Some("q1"));
        assert_eq!(
            claim(&mut answers, "r", "a.rs", now),
            None,
            "too old for `old`"
        );
        assert_eq!(claim(&mut answers, "other", "c.rs", now), None);
    }
}
