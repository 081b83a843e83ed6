//! The answers this connection received recently, for implicit feedback: reading a result with
//! `get_file` within [`IMPLICIT_WINDOW`] of the answer that listed it marks it used (once per
//! answer and file). Plain data: recording the feedback is `tools/feedback.rs`'s job.

use std::collections::{HashSet, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Reading a hit this soon after its answer counts as using it.
pub(crate) const IMPLICIT_WINDOW: Duration = Duration::from_secs(10 * 60);
/// Answers this connection remembers for implicit feedback.
const REMEMBERED: usize = 50;

/// An answer this connection received: its files, and which of them were read since.
pub(crate) struct Answer {
    query_id: String,
    at: Instant,
    /// (repository id, path) of each result.
    files: Vec<(String, String)>,
    read: HashSet<(String, String)>,
}

/// The last [`REMEMBERED`] answers of a connection, oldest first.
#[derive(Default)]
pub(crate) struct Answers(Mutex<VecDeque<Answer>>);

impl Answers {
    /// Remember an answer's results for implicit feedback.
    pub(crate) fn remember(&self, query_id: &str, files: Vec<(String, String)>) {
        if query_id.is_empty() || files.is_empty() {
            return;
        }
        let mut answers = self.0.lock().expect("answers lock");
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

    /// `path` of `repo_id` was read now: the query id of the newest recent answer listing it
    /// that has not counted it yet (which counts it now).
    pub(crate) fn claim(&self, repo_id: &str, path: &str) -> Option<String> {
        let mut answers = self.0.lock().expect("answers lock");
        claim(&mut answers, repo_id, path, Instant::now())
    }
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
