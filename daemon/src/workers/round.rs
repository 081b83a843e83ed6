//! The daemon's side of an index round: a `patina_index` round over a registered repository, its
//! progress forwarded to the job's watch channel, every commit's [`Delta`] handed to the semantic
//! component (vectors and embedding backlog) before the round goes on, and the summary and the
//! indexed commit written into the repository's record. Runs on the blocking pool.

use anyhow::Result;
use tokio::sync::watch;

use patina_index::{Delta, Progress, RoundOptions, RoundSink, Scope};

use crate::services::embedding::Semantic;
use crate::state::config::IndexConfig;
use crate::state::repo::Repo;

/// Index `repo` incrementally, reporting through `tx`. Returns when the index is consistent.
pub(crate) fn index_repo(
    repo: &Repo,
    cfg: &IndexConfig,
    pii: &crate::state::config::PiiConfig,
    sem: &Semantic,
    scope: Scope,
    tx: &watch::Sender<Progress>,
) -> Result<()> {
    let head = crate::services::git::head(repo.root());
    let full = matches!(scope, Scope::Full);
    let rec = repo.record();
    let scrubber = pii.scrubber_for(repo.id(), &rec.name, repo.root());
    let scrub = scrubber
        .as_ref()
        .map_or(String::new(), |s| s.fingerprint().to_string());
    repo.index().set_scrubber(scrubber);
    let opts = RoundOptions {
        max_file_bytes: cfg.max_file_bytes,
        max_chunk_lines: cfg.max_chunk_lines,
        // An index chunked by older rules is chunked again at its next full round.
        // So is one whose graph facts were extracted by older rules (or not at all).
        // And one whose personal data was masked under other rules (or not at all), or whose
        // long definitions were split at another length.
        rechunk: full
            && (rec.chunker != patina_chunk::VERSION
                || rec.graph != graph_version(cfg)
                || rec.scrub != scrub
                || rec.chunk_lines != cfg.max_chunk_lines),
        graph: cfg.graph,
    };
    if opts.rechunk {
        tracing::info!(repo = %repo.id(), "chunking rules changed; chunking every file again");
    }
    let summary = repo
        .index()
        .index_round(&opts, scope, &Sink { repo, sem, tx })?;
    // The history follows HEAD with the files: a checkout hides later commits, new ones are read.
    if let Err(e) = crate::services::history::sync(repo) {
        tracing::warn!(repo = %repo.id(), "history: {e:#}");
    }
    // Stored now; in memory only while asked for (or while its messages wait to be embedded):
    // registering many repositories must not hold every history at once.
    if !sem.is_on() || repo.message_backlog() == 0 {
        crate::services::history::release_idle(repo);
    }
    repo.update_record(|rec| {
        summary.apply_to(rec);
        rec.indexed_commit = head;
        if full {
            rec.chunker = patina_chunk::VERSION;
            rec.graph = graph_version(cfg);
            rec.scrub = scrub;
            rec.chunk_lines = cfg.max_chunk_lines;
        }
    });
    Ok(())
}

/// The graph rules an index made with `cfg` follows: 0 when graph extraction is off (so that
/// switching it on or off extracts again, or drops, every file's facts at the next full round).
fn graph_version(cfg: &IndexConfig) -> u32 {
    if cfg.graph {
        patina_chunk::GRAPH_VERSION
    } else {
        0
    }
}

struct Sink<'a> {
    repo: &'a Repo,
    sem: &'a Semantic,
    tx: &'a watch::Sender<Progress>,
}

impl RoundSink for Sink<'_> {
    fn progress(&self, p: &Progress) {
        self.tx.send_replace(p.clone());
    }

    fn committed(&self, delta: &Delta) -> Result<()> {
        self.repo.changed(crate::state::generations::Input::Index);
        self.sem.sync(self.repo, &delta.added, &delta.removed)
    }
}
