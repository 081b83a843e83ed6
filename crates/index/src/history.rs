//! A repository's commit history as the history oracles read it: every commit the daemon has seen
//! (message, author, date, files touched with their renames), persisted in `history.bin` beside
//! the other derived data, and a [`HistoryView`] of the commits reachable from the current HEAD —
//! only those are ever searched, so an answer never depends on commits after the checked-out one.
//!
//! The view holds an in-memory BM25 index over the code-aware tokens of the messages
//! ([`patina_core::tokens`]), each commit's files under their *current* names (renames followed
//! from HEAD backwards), and a file → commits table for `log --file` and co-change.
//! Pure logic beside the file: git is read by the caller, which hands in `git log` output
//! ([`parse_log`]) and the `git rev-list HEAD` order.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use patina_core::tokens::for_each_token;

/// The format `git log` is asked for (see [`parse_log`]): a record separator, then hash,
/// author, committer time and the raw message separated by unit separators; `-z --name-status`
/// follow.
pub const LOG_FORMAT: &str = "--format=%x1e%H%x1f%an%x1f%ct%x1f%B%x1f";

/// One file a commit touched, under its name in that commit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Touched {
    pub path: String,
    /// The name before a rename (status `R`), if this was one.
    pub from: Option<String>,
    /// `A`, `M`, `D`, `R`, `C`, `T`.
    pub status: char,
}

/// One commit as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitRecord {
    pub hash: String,
    pub author: String,
    /// Committer time, seconds since the epoch.
    pub time: i64,
    pub message: String,
    pub files: Vec<Touched>,
}

impl CommitRecord {
    pub fn subject(&self) -> &str {
        self.message.lines().next().unwrap_or("").trim()
    }
}

/// Parse `git log -z --name-status -M` output produced with [`LOG_FORMAT`].
pub fn parse_log(out: &[u8]) -> Vec<CommitRecord> {
    let text = String::from_utf8_lossy(out);
    let mut commits = Vec::new();
    for rec in text.split('\u{1e}').filter(|r| !r.trim().is_empty()) {
        let mut parts = rec.splitn(5, '\u{1f}');
        let (Some(hash), Some(author), Some(time), Some(message)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let rest = parts.next().unwrap_or("");
        let mut fields = rest
            .split('\0')
            .map(|f| f.trim_start_matches('\n'))
            .filter(|f| !f.is_empty());
        let mut files = Vec::new();
        while let Some(st) = fields.next() {
            let status = st.chars().next().unwrap_or('M');
            if matches!(status, 'R' | 'C') {
                let (Some(from), Some(to)) = (fields.next(), fields.next()) else {
                    break;
                };
                files.push(Touched {
                    path: to.to_string(),
                    from: (status == 'R').then(|| from.to_string()),
                    status,
                });
            } else {
                let Some(p) = fields.next() else { break };
                files.push(Touched {
                    path: p.to_string(),
                    from: None,
                    status,
                });
            }
        }
        commits.push(CommitRecord {
            hash: hash.trim().to_string(),
            author: author.to_string(),
            time: time.trim().parse().unwrap_or(0),
            message: message.trim_end().to_string(),
            files,
        });
    }
    commits
}

/// The scope a conventional commit subject names: `sync: add …` → `sync`, `rt(alt): tweak …` →
/// `rt`, `tokio-util/codec: …` → `tokio-util/codec`; lower-case. `None` when the text does not
/// start with a one-word scope and a colon.
pub fn scope_of(text: &str) -> Option<String> {
    let head = text.trim_start().split(": ").next()?;
    if head.len() == text.trim_start().len() || head.is_empty() || head.len() > 40 {
        return None;
    }
    let main = head.split('(').next().unwrap_or(head);
    let ok = !main.is_empty()
        && main
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '/' | '.'));
    ok.then(|| main.to_lowercase())
}

/// The parent directory of a path (`""` for a top-level file).
fn parent_dir(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// A commit of the view: the stored record and its files under their current names.
#[derive(Clone, Debug)]
pub struct ViewCommit {
    pub record: Arc<CommitRecord>,
    /// Files touched, renamed to their names at HEAD (deduplicated, in the commit's order).
    pub files: Vec<String>,
}

/// The commits reachable from one HEAD, searchable.
#[derive(Debug, Default)]
pub struct HistoryView {
    pub head: Option<String>,
    /// Newest first (`git rev-list` order).
    pub commits: Vec<ViewCommit>,
    /// Time of the newest commit: ages are measured from it, not from the wall clock, so the same
    /// HEAD always gives the same answer.
    pub newest: i64,
    postings: HashMap<String, Vec<(u32, u32)>>,
    lengths: Vec<u32>,
    avg_len: f64,
    by_file: HashMap<String, Vec<u32>>,
    /// Commits by the scope of their subject ([`scope_of`]).
    by_scope: HashMap<String, Vec<u32>>,
}

const BM25_K1: f64 = 1.2;
const BM25_B: f64 = 0.75;

impl HistoryView {
    /// The view of `order` (hashes newest first) over `records`; hashes without a record are
    /// skipped.
    pub fn build(
        head: Option<String>,
        order: &[String],
        records: &HashMap<String, Arc<CommitRecord>>,
    ) -> HistoryView {
        let mut renamed: HashMap<String, String> = HashMap::new();
        let mut commits = Vec::with_capacity(order.len());
        for h in order {
            let Some(rec) = records.get(h) else { continue };
            let mut files: Vec<String> = Vec::with_capacity(rec.files.len());
            for t in &rec.files {
                let current = renamed
                    .get(&t.path)
                    .cloned()
                    .unwrap_or_else(|| t.path.clone());
                if let Some(from) = &t.from {
                    renamed.insert(from.clone(), current.clone());
                }
                if !files.contains(&current) {
                    files.push(current);
                }
            }
            commits.push(ViewCommit {
                record: rec.clone(),
                files,
            });
        }
        let mut postings: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
        let mut lengths = Vec::with_capacity(commits.len());
        let mut by_file: HashMap<String, Vec<u32>> = HashMap::new();
        let mut by_scope: HashMap<String, Vec<u32>> = HashMap::new();
        for (i, c) in commits.iter().enumerate() {
            if let Some(scope) = scope_of(c.record.subject()) {
                by_scope.entry(scope).or_default().push(i as u32);
            }
            let mut tf: HashMap<String, u32> = HashMap::new();
            let mut len = 0u32;
            for_each_token(&c.record.message, |_, _, t| {
                len += 1;
                *tf.entry(t.to_string()).or_default() += 1;
            });
            lengths.push(len);
            for (t, n) in tf {
                postings.entry(t).or_default().push((i as u32, n));
            }
            for f in &c.files {
                by_file.entry(f.clone()).or_default().push(i as u32);
            }
        }
        let avg_len = if lengths.is_empty() {
            1.0
        } else {
            (lengths.iter().map(|l| *l as f64).sum::<f64>() / lengths.len() as f64).max(1.0)
        };
        HistoryView {
            head,
            newest: commits.iter().map(|c| c.record.time).max().unwrap_or(0),
            commits,
            postings,
            lengths,
            avg_len,
            by_file,
            by_scope,
        }
    }

    /// Where the commits of a scope change things: for each directory, the share of the commits
    /// of `scope` (those made before `before`, of at most `max_files` files) that touched a file
    /// directly in it. Empty when no such commit exists.
    pub fn scope_dirs(
        &self,
        scope: &str,
        before: Option<i64>,
        max_files: usize,
    ) -> HashMap<String, f64> {
        let mut counts: HashMap<&str, u32> = HashMap::new();
        let mut n = 0u32;
        for &i in self.by_scope.get(scope).map_or(&[][..], |v| v.as_slice()) {
            let c = &self.commits[i as usize];
            if c.files.is_empty()
                || c.files.len() > max_files
                || before.is_some_and(|b| c.record.time >= b)
            {
                continue;
            }
            n += 1;
            let mut dirs: Vec<&str> = c.files.iter().map(|f| parent_dir(f)).collect();
            dirs.sort_unstable();
            dirs.dedup();
            for d in dirs {
                *counts.entry(d).or_default() += 1;
            }
        }
        counts
            .into_iter()
            .map(|(d, k)| (d.to_string(), k as f64 / n.max(1) as f64))
            .collect()
    }

    /// [`Self::scope_dirs`]' share for the directory of `path`.
    pub fn dir_of(path: &str) -> &str {
        parent_dir(path)
    }

    pub fn len(&self) -> usize {
        self.commits.len()
    }

    pub fn is_empty(&self) -> bool {
        self.commits.is_empty()
    }

    /// Inverse document frequency of a term among the view's messages (0 when unknown).
    fn idf(&self, term: &str) -> f64 {
        let Some(p) = self.postings.get(term) else {
            return 0.0;
        };
        let n = self.commits.len() as f64;
        let df = p.len() as f64;
        ((n - df + 0.5) / (df + 0.5) + 1.0).ln()
    }

    /// BM25 of the messages for `text`: `(commit index, score)`, best first, at most `limit`. A
    /// long text queries with its `max_terms` most informative tokens (IDF × dampened frequency).
    pub fn search(&self, text: &str, limit: usize, max_terms: usize) -> Vec<(usize, f64)> {
        self.search_before(text, limit, max_terms, None)
    }

    /// [`HistoryView::search`] among the commits made strictly before `before` (committer time,
    /// seconds; `None`: every commit): what the history knew at that moment (`patina tune` asks
    /// with the time of the commit whose message is the query, so it never sees its answer).
    pub fn search_before(
        &self,
        text: &str,
        limit: usize,
        max_terms: usize,
        before: Option<i64>,
    ) -> Vec<(usize, f64)> {
        let mut counts: HashMap<String, u32> = HashMap::new();
        for_each_token(text, |_, _, t| {
            if t.len() >= 2 && !t.chars().all(|c| c.is_ascii_digit()) {
                *counts.entry(t.to_string()).or_default() += 1;
            }
        });
        let mut terms: Vec<(String, f64, f64)> = counts
            .into_iter()
            .filter_map(|(t, n)| {
                let idf = self.idf(&t);
                (idf > 0.0).then(|| (t, idf, 1.0 + (n as f64).ln()))
            })
            .collect();
        terms.sort_by(|a, b| (b.1 * b.2).total_cmp(&(a.1 * a.2)).then(a.0.cmp(&b.0)));
        terms.truncate(max_terms);
        let mut scores: HashMap<u32, f64> = HashMap::new();
        for (t, idf, w) in &terms {
            for (doc, tf) in &self.postings[t] {
                let tf = *tf as f64;
                let norm =
                    1.0 - BM25_B + BM25_B * self.lengths[*doc as usize] as f64 / self.avg_len;
                *scores.entry(*doc).or_default() +=
                    w * idf * tf * (BM25_K1 + 1.0) / (tf + BM25_K1 * norm);
            }
        }
        let mut out: Vec<(usize, f64)> = scores
            .into_iter()
            .map(|(d, s)| (d as usize, s))
            .filter(|(d, _)| before.is_none_or(|b| self.commits[*d].record.time < b))
            .collect();
        // Ties: the newer commit first.
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out.truncate(limit);
        out
    }

    /// Indices of the commits that touched `path` (its current name), newest first.
    pub fn commits_of(&self, path: &str) -> &[u32] {
        self.by_file.get(path).map_or(&[], |v| v.as_slice())
    }

    /// Age of commit `i` in days, measured from the newest commit of the view.
    pub fn age_days(&self, i: usize) -> f64 {
        ((self.newest - self.commits[i].record.time).max(0)) as f64 / 86_400.0
    }

    /// How much `path` changed lately: the commits that touched it (those of at most
    /// `max_files` files), each counting 0.5^(age / `half_life_days`) — recency-weighted churn.
    pub fn activity(&self, path: &str, half_life_days: f64, max_files: usize) -> f64 {
        self.commits_of(path)
            .iter()
            .map(|&i| i as usize)
            .filter(|&i| self.commits[i].files.len() <= max_files)
            .map(|i| {
                if half_life_days > 0.0 {
                    0.5f64.powf(self.age_days(i) / half_life_days)
                } else {
                    1.0
                }
            })
            .sum()
    }
}

/// How matching commits vote for files.
#[derive(Clone, Debug)]
pub struct VoteOptions {
    /// Commits older than the newest by this many days count half as much (0: no decay).
    pub half_life_days: f64,
    /// Commits touching more files than this (mass renames, formatting, merges of branches) do
    /// not vote.
    pub max_files: usize,
    /// Ages are measured from this time (seconds) instead of the view's newest commit: the moment
    /// a [`HistoryView::search_before`] looked from.
    pub now: Option<i64>,
}

impl Default for VoteOptions {
    fn default() -> Self {
        VoteOptions {
            half_life_days: 365.0,
            max_files: 40,
            now: None,
        }
    }
}

/// The files that matching commits touched, with their votes, best first: each commit gives
/// `score / best score × 0.5^(age / half life) / √files` to every file it touched (commits
/// touching more than `max_files` files give nothing). Ties break on the path.
pub fn votes(
    view: &HistoryView,
    matches: &[(usize, f64)],
    opts: &VoteOptions,
) -> Vec<(String, f64)> {
    let best = matches.iter().map(|m| m.1).fold(0.0f64, f64::max);
    if best <= 0.0 {
        return Vec::new();
    }
    let mut acc: HashMap<&str, f64> = HashMap::new();
    for (i, score) in matches {
        let c = &view.commits[*i];
        let n = c.files.len();
        if n == 0 || n > opts.max_files {
            continue;
        }
        let age = match opts.now {
            Some(now) => (now - c.record.time).max(0) as f64 / 86_400.0,
            None => view.age_days(*i),
        };
        let decay = if opts.half_life_days > 0.0 {
            0.5f64.powf(age / opts.half_life_days)
        } else {
            1.0
        };
        let v = score / best * decay / (n as f64).sqrt();
        for f in &c.files {
            *acc.entry(f.as_str()).or_default() += v;
        }
    }
    let mut out: Vec<(String, f64)> = acc.into_iter().map(|(f, v)| (f.to_string(), v)).collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}

/// A file that changes together with another.
#[derive(Clone, Debug, PartialEq)]
pub struct CoChange {
    pub path: String,
    /// Commits that touched both files.
    pub support: u32,
    /// `support` / commits that touched the asked-for file (both counted among commits of at most
    /// `max_files` files).
    pub confidence: f64,
}

/// The files that changed together with `path` in commits of at most `max_files` files: at least
/// `min_support` shared commits, by support then confidence, then path.
pub fn co_changes(
    view: &HistoryView,
    path: &str,
    max_files: usize,
    min_support: u32,
) -> Vec<CoChange> {
    let mut total = 0u32;
    let mut counts: HashMap<&str, u32> = HashMap::new();
    for &i in view.commits_of(path) {
        let c = &view.commits[i as usize];
        if c.files.len() > max_files {
            continue;
        }
        total += 1;
        for f in &c.files {
            if f != path {
                *counts.entry(f.as_str()).or_default() += 1;
            }
        }
    }
    let mut out: Vec<CoChange> = counts
        .into_iter()
        .filter(|(_, n)| *n >= min_support)
        .map(|(f, n)| CoChange {
            path: f.to_string(),
            support: n,
            confidence: n as f64 / total.max(1) as f64,
        })
        .collect();
    out.sort_by(|a, b| {
        b.support
            .cmp(&a.support)
            .then(b.confidence.total_cmp(&a.confidence))
            .then(a.path.cmp(&b.path))
    });
    out
}

/// Every commit seen (persisted) and the view of the current HEAD.
///
/// Locks: `sync` (one sync at a time), then `records`, then `view`; none is held while calling
/// out, except `sync`, held across the caller's `reachable` and `fetch` (git).
pub struct HistoryStore {
    file: PathBuf,
    records: Mutex<HashMap<String, Arc<CommitRecord>>>,
    view: RwLock<Arc<HistoryView>>,
    sync: Mutex<()>,
    /// When the history was last asked for or worked on ([`HistoryStore::touch`]); `None`: never.
    used: Mutex<Option<std::time::Instant>>,
    /// The records and view were dropped by [`HistoryStore::release_idle`]: the next sync reads
    /// the records file again. Holds how many records were stored then.
    released: Mutex<Option<Released>>,
}

/// What is still known of a released history: how many commits were stored and how many the
/// view reached.
#[derive(Clone, Copy)]
struct Released {
    stored: usize,
    reachable: usize,
}

fn load_records(file: &Path) -> HashMap<String, Arc<CommitRecord>> {
    std::fs::read(file)
        .ok()
        .and_then(|b| bincode::deserialize::<Vec<CommitRecord>>(&b).ok())
        .unwrap_or_default()
        .into_iter()
        .map(|c| (c.hash.clone(), Arc::new(c)))
        .collect()
}

impl HistoryStore {
    /// Open `file` (`history.bin`); a missing or unreadable file starts empty (it is derived from
    /// git and refilled by the next sync).
    pub fn open(file: &Path) -> HistoryStore {
        HistoryStore {
            file: file.to_path_buf(),
            records: Mutex::new(load_records(file)),
            view: RwLock::new(Arc::new(HistoryView::default())),
            sync: Mutex::new(()),
            used: Mutex::new(None),
            released: Mutex::new(None),
        }
    }

    /// Mark the history as in use (a question asked of it, a worker going through its commits), so
    /// it is not released. A [`HistoryStore::sync`] alone (an index job following HEAD) is not use.
    pub fn touch(&self) {
        *self.used.lock().expect("history clock") = Some(std::time::Instant::now());
    }

    /// Drop the records and the view from memory when the history has not been touched for
    /// `idle`; the next [`HistoryStore::sync`] reads the records file again and
    /// rebuilds the view. Until then [`HistoryStore::view`] has the same HEAD and no commits.
    /// Whether anything was dropped.
    pub fn release_idle(&self, idle: std::time::Duration) -> bool {
        if self
            .used
            .lock()
            .expect("history clock")
            .is_some_and(|t| t.elapsed() < idle)
        {
            return false;
        }
        let _one = self.sync.lock().expect("history sync lock");
        let mut released = self.released.lock().expect("history released lock");
        if released.is_some() {
            return false;
        }
        let mut records = self.records.lock().expect("history records lock");
        let mut view = self.view.write().expect("history view lock");
        *released = Some(Released {
            stored: records.len(),
            reachable: view.len(),
        });
        *records = HashMap::new();
        // Its HEAD stays: answers are a function of it, so reading it back changes nothing.
        *view = Arc::new(HistoryView {
            head: view.head.clone(),
            ..HistoryView::default()
        });
        true
    }

    /// The view of the HEAD last synced.
    pub fn view(&self) -> Arc<HistoryView> {
        self.view.read().expect("history view lock").clone()
    }

    /// Bring the view to `head` (nothing to do when it is there already). `reachable` lists the
    /// commits reachable from it newest first (`git rev-list`); `fetch` is asked for the records of
    /// those not stored yet. The stored records are persisted when new ones arrived.
    pub fn sync(
        &self,
        head: Option<String>,
        reachable: impl FnOnce() -> Result<Vec<String>>,
        fetch: impl FnOnce(&[String]) -> Result<Vec<CommitRecord>>,
    ) -> Result<Arc<HistoryView>> {
        let _one = self.sync.lock().expect("history sync lock");
        if self
            .released
            .lock()
            .expect("history released lock")
            .take()
            .is_some()
        {
            *self.records.lock().expect("history records lock") = load_records(&self.file);
        }
        let current = self.view();
        if current.head == head && (head.is_none() || !current.is_empty()) {
            return Ok(current);
        }
        let order = if head.is_some() {
            reachable()?
        } else {
            Vec::new()
        };
        let missing: Vec<String> = {
            let records = self.records.lock().expect("history records lock");
            order
                .iter()
                .filter(|h| !records.contains_key(*h))
                .cloned()
                .collect()
        };
        let fetched = if missing.is_empty() {
            Vec::new()
        } else {
            fetch(&missing)?
        };
        let view = {
            let mut records = self.records.lock().expect("history records lock");
            let fresh = !fetched.is_empty();
            for c in fetched {
                records.insert(c.hash.clone(), Arc::new(c));
            }
            if fresh {
                self.persist(&records)?;
            }
            Arc::new(HistoryView::build(head, &order, &records))
        };
        *self.view.write().expect("history view lock") = view.clone();
        Ok(view)
    }

    /// Write every record atomically (temporary file, fsync, rename).
    fn persist(&self, records: &HashMap<String, Arc<CommitRecord>>) -> Result<()> {
        let mut all: Vec<&CommitRecord> = records.values().map(|c| c.as_ref()).collect();
        all.sort_by(|a, b| a.hash.cmp(&b.hash));
        let bytes = bincode::serialize(&all)?;
        if let Some(dir) = self.file.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let tmp = self.file.with_extension("bin.tmp");
        {
            use std::io::Write;
            let mut f = std::fs::File::create(&tmp)
                .with_context(|| format!("writing {}", tmp.display()))?;
            f.write_all(&bytes)?;
            f.sync_all()?;
        }
        std::fs::rename(&tmp, &self.file)
            .with_context(|| format!("writing {}", self.file.display()))?;
        Ok(())
    }

    /// How many commits are stored (reachable or not).
    pub fn stored(&self) -> usize {
        if let Some(r) = *self.released.lock().expect("history released lock") {
            return r.stored;
        }
        self.records.lock().expect("history records lock").len()
    }

    /// While released: how many commits the view reached (`None` when it is in memory).
    pub fn released_reachable(&self) -> Option<usize> {
        self.released
            .lock()
            .expect("history released lock")
            .map(|r| r.reachable)
    }
}

#[cfg(test)]
mod tests;
