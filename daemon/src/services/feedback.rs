//! Feedback on answers. Every answer is named by a query id ([`Feedback::new_query_id`]); the daemon
//! remembers the latest answers (question and results, [`RECENT`] of them) so a feedback record
//! can carry what it is about. Records — explicit (`patina_feedback`: used / unhelpful results,
//! a rating) or implicit (an agent read a hit soon after the query) — are stored durably in the
//! store's `feedback` tree (`patina_index::store::FeedbackTree`) and counted by [`stats_of`]
//! (`patina feedback stats`).

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::Result;
use patina_index::store::{FeedbackRecord, FeedbackTree, Store};

use patina_core::UserError;

/// Answers remembered for feedback (question and results), newest kept.
pub(crate) const RECENT: usize = 2000;
/// Paths per list and characters per path accepted in one record.
const MAX_PATHS: usize = 100;
const MAX_PATH_CHARS: usize = 4096;

/// What one feedback call says.
#[derive(Clone, Debug, Default)]
pub(crate) struct FeedbackInput {
    pub query_id: String,
    pub used: Vec<String>,
    pub unhelpful: Vec<String>,
    /// 0 = none, else 1..=5.
    pub rating: u32,
    pub implicit: bool,
    pub session: String,
}

#[derive(Clone)]
struct Answer {
    query: String,
    hits: Vec<String>,
}

#[derive(Default)]
struct Recent {
    order: VecDeque<String>,
    answers: HashMap<String, Answer>,
}

pub(crate) struct Feedback {
    tree: FeedbackTree,
    recent: Mutex<Recent>,
    /// The sequence number of query ids ([`Feedback::new_query_id`]).
    seq: AtomicU64,
}

/// Counts over every record.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Stats {
    pub records: u64,
    pub explicit: u64,
    pub implicit: u64,
    pub queries: u64,
    pub used: u64,
    pub unhelpful: u64,
    /// Ratings of 1..=5.
    pub ratings: [u64; 5],
    pub mean_rating: f64,
    /// Most used paths (at most 10), most first.
    pub most_used: Vec<(String, u64)>,
    pub last_unix_ms: i64,
}

/// The path of a result reference: `src/a.rs:3-9` → `src/a.rs`.
fn path_of(r: &str) -> &str {
    match r.rsplit_once(':') {
        Some((p, lines))
            if !lines.is_empty() && lines.bytes().all(|b| b.is_ascii_digit() || b == b'-') =>
        {
            p
        }
        _ => r,
    }
}

pub(crate) fn stats_of(records: &[FeedbackRecord]) -> Stats {
    let mut s = Stats {
        records: records.len() as u64,
        ..Stats::default()
    };
    let mut queries = HashSet::new();
    let mut used: BTreeMap<&str, u64> = BTreeMap::new();
    let mut sum = 0u64;
    for r in records {
        if r.implicit {
            s.implicit += 1;
        } else {
            s.explicit += 1;
        }
        queries.insert(r.query_id.as_str());
        s.used += r.used.len() as u64;
        s.unhelpful += r.unhelpful.len() as u64;
        for u in &r.used {
            *used.entry(path_of(u)).or_default() += 1;
        }
        if let Some(n @ 1..=5) = r.rating {
            s.ratings[n as usize - 1] += 1;
            sum += n as u64;
        }
        s.last_unix_ms = s.last_unix_ms.max(r.created_unix_ms);
    }
    s.queries = queries.len() as u64;
    let rated: u64 = s.ratings.iter().sum();
    if rated > 0 {
        s.mean_rating = sum as f64 / rated as f64;
    }
    let mut most: Vec<(String, u64)> = used.into_iter().map(|(p, n)| (p.to_string(), n)).collect();
    most.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    most.truncate(10);
    s.most_used = most;
    s
}

fn invalid(msg: impl Into<String>) -> anyhow::Error {
    UserError::Invalid(msg.into()).into()
}

fn check_paths(what: &str, paths: &[String]) -> Result<Vec<String>> {
    if paths.len() > MAX_PATHS {
        return Err(invalid(format!(
            "{what}: at most {MAX_PATHS} results per call"
        )));
    }
    paths
        .iter()
        .map(|p| {
            let p = p.trim();
            if p.is_empty() || p.len() > MAX_PATH_CHARS {
                Err(invalid(format!(
                    "{what}: a result must be a path or path:start-end (1..{MAX_PATH_CHARS} characters)"
                )))
            } else {
                Ok(p.to_string())
            }
        })
        .collect()
}

impl Feedback {
    pub fn open(store: &Store) -> Result<Feedback> {
        Ok(Feedback {
            tree: store.feedback()?,
            recent: Mutex::new(Recent::default()),
            seq: AtomicU64::new(0),
        })
    }

    /// A new query id: unique across the daemon's restarts (time in ms, process id and a sequence
    /// number), short enough to pass around: `q<ms>-<pid>-<n>` in hex.
    pub fn new_query_id(&self) -> String {
        format!(
            "q{:x}-{:x}-{:x}",
            crate::process::clock::now_unix_ms(),
            std::process::id(),
            self.seq.fetch_add(1, Ordering::Relaxed)
        )
    }

    /// Questions with the files an agent used in their answers (explicitly or by reading them),
    /// for `patina tune`: `(question, paths)`, oldest first. Records whose question the daemon
    /// no longer remembered when they arrived carry no question and are left out.
    pub fn examples(&self) -> Result<Vec<(String, Vec<String>)>> {
        let mut by_query: BTreeMap<String, (i64, String, Vec<String>)> = BTreeMap::new();
        for (_, r) in self.tree.all()? {
            if r.query.trim().is_empty() || r.used.is_empty() {
                continue;
            }
            let e = by_query
                .entry(r.query_id.clone())
                .or_insert_with(|| (r.created_unix_ms, r.query.clone(), Vec::new()));
            for u in &r.used {
                let path = strip_range(u).to_string();
                if !e.2.contains(&path) {
                    e.2.push(path);
                }
            }
        }
        let mut out: Vec<(i64, String, Vec<String>)> = by_query.into_values().collect();
        out.sort_by_key(|e| e.0);
        Ok(out.into_iter().map(|(_, q, p)| (q, p)).collect())
    }

    /// Remember an answer for feedback on it (the oldest is forgotten beyond [`RECENT`]).
    pub fn remember(&self, query_id: &str, query: &str, hits: Vec<String>) {
        let mut r = self.recent.lock().expect("recent lock");
        if r.order.len() >= RECENT
            && let Some(old) = r.order.pop_front()
        {
            r.answers.remove(&old);
        }
        r.order.push_back(query_id.to_string());
        r.answers.insert(
            query_id.to_string(),
            Answer {
                query: query.chars().take(2000).collect(),
                hits,
            },
        );
    }

    /// Validate and store a record durably (blocking: fsync). Returns its id and whether the
    /// answer was still remembered.
    pub fn record(&self, input: FeedbackInput) -> Result<(u64, bool)> {
        let query_id = input.query_id.trim().to_string();
        if query_id.is_empty() || query_id.len() > 100 {
            return Err(invalid(
                "query_id is required: the `query_id` of the answer the feedback is about",
            ));
        }
        if input.rating > 5 {
            return Err(invalid("rating must be 1 (useless) to 5 (exactly right)"));
        }
        let used = check_paths("used", &input.used)?;
        let unhelpful = check_paths("unhelpful", &input.unhelpful)?;
        if used.is_empty() && unhelpful.is_empty() && input.rating == 0 {
            return Err(invalid(
                "say something: results used, results unhelpful, or a rating",
            ));
        }
        let answer = self
            .recent
            .lock()
            .expect("recent lock")
            .answers
            .get(&query_id)
            .cloned();
        let known = answer.is_some();
        let answer = answer.unwrap_or(Answer {
            query: String::new(),
            hits: Vec::new(),
        });
        let rec = FeedbackRecord {
            query_id,
            query: answer.query,
            hits: answer.hits,
            used,
            unhelpful,
            rating: (input.rating > 0).then_some(input.rating as u8),
            implicit: input.implicit,
            session: (!input.session.trim().is_empty()).then(|| input.session.trim().to_string()),
            created_unix_ms: crate::process::clock::now_unix_ms(),
        };
        let id = self.tree.add(&rec)?;
        tracing::debug!(id, known, implicit = rec.implicit, "feedback recorded");
        Ok((id, known))
    }

    /// Counts over every stored record (blocking: reads the store).
    pub fn stats(&self) -> Result<Stats> {
        let all: Vec<FeedbackRecord> = self.tree.all()?.into_iter().map(|(_, r)| r).collect();
        Ok(stats_of(&all))
    }
}

/// `path:12-40` → `path` (a path without a line range is returned whole).
fn strip_range(s: &str) -> &str {
    match s.rsplit_once(':') {
        Some((p, r)) if !r.is_empty() && r.chars().all(|c| c.is_ascii_digit() || c == '-') => p,
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_used_result_names_its_file() {
        assert_eq!(super::strip_range("src/a.rs:12-40"), "src/a.rs");
        assert_eq!(super::strip_range("src/a.rs"), "src/a.rs");
        assert_eq!(super::strip_range("C:odd"), "C:odd");
    }

    use super::*;

    fn rec(q: &str, used: &[&str], rating: Option<u8>, implicit: bool) -> FeedbackRecord {
        FeedbackRecord {
            query_id: q.into(),
            used: used.iter().map(|s| s.to_string()).collect(),
            rating,
            implicit,
            created_unix_ms: 7,
            ..Default::default()
        }
    }

    #[test]
    fn stats_count_records_queries_paths_and_ratings() {
        let s = stats_of(&[
            rec("q1", &["src/a.rs:1-9", "src/b.rs"], Some(5), false),
            rec("q1", &["src/a.rs"], None, true),
            rec("q2", &[], Some(2), false),
        ]);
        assert_eq!((s.records, s.explicit, s.implicit, s.queries), (3, 2, 1, 2));
        assert_eq!(s.used, 3);
        assert_eq!(s.ratings, [0, 1, 0, 0, 1]);
        assert!((s.mean_rating - 3.5).abs() < 1e-9);
        assert_eq!(
            s.most_used,
            vec![("src/a.rs".to_string(), 2), ("src/b.rs".to_string(), 1)]
        );
        assert_eq!(s.last_unix_ms, 7);
        assert_eq!(stats_of(&[]), Stats::default());
    }

    #[test]
    fn result_references_name_their_path() {
        assert_eq!(path_of("src/a.rs:3-9"), "src/a.rs");
        assert_eq!(path_of("src/a.rs"), "src/a.rs");
        assert_eq!(path_of("session:s1#2"), "session:s1#2");
        assert_eq!(path_of("C:dir"), "C:dir");
    }
}
