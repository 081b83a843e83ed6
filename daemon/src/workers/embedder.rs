//! The embedder: one thread that drains every repository's embedding backlog — static vectors
//! first (microseconds each, so a new repository is searchable by meaning in seconds), then the
//! model's (once no long round needs the cores), one batch at a time from the repository that needs it most
//! ([`crate::state::backlog::embedding_order`]), then commit messages; idle, it saves vectors and
//! releases what it no longer needs. [`Semantic::stop`] stops it.

use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::services::embedding::{Semantic, seal_or_merge};
use crate::state::repo::Repo;
use crate::state::repos::Repos;

/// Start a due seal or merge of `repo`'s vector segments on a thread of its own. One at a time per
/// repository: the snapshot is taken here, on the embedder's one thread, and
/// `Repo::vectors_to_build` gives none while a build is under way. The model's pass goes on beside
/// it: a merge of up to 262,144 vectors takes minutes on two cores, and the pass used to wait for
/// every build (25 minutes of rebuilds on the 100k-file tree, bench/RESULTS.md).
fn build_beside(repo: &Arc<Repo>) {
    let Some(snapshot) = repo.vectors_to_build() else {
        return;
    };
    let builder = Arc::clone(repo);
    let spawned = std::thread::Builder::new()
        .name("patina-vectors".into())
        .spawn(move || {
            // A build that panics before its install ends its record, so the next may begin.
            struct Unfinished(Option<Arc<Repo>>);
            impl Drop for Unfinished {
                fn drop(&mut self) {
                    if let Some(r) = self.0.take() {
                        r.abandon_vector_build();
                    }
                }
            }
            let mut unfinished = Unfinished(Some(Arc::clone(&builder)));
            let result = seal_or_merge(&builder, snapshot);
            // Installed or refused, the install ended the record (a newer build may have begun).
            unfinished.0 = None;
            if let Err(e) = result {
                tracing::error!(repo = %builder.id(), "sealing or merging vector segments failed: {e:#}");
            }
        });
    if let Err(e) = spawned {
        repo.abandon_vector_build();
        tracing::error!(repo = %repo.id(), "starting a vector build: {e}");
    }
}

/// Backlog chunks given a static vector per turn of the worker (a few hundred milliseconds).
const STATIC_BATCH: usize = 2048;

/// How often a long pass gives the heap it freed back: the batches' buffers, the seals' and
/// merges' working memory and the rounds beside it leave whole free pages in the allocator's
/// arenas, which only a trim returns (591 MB of heap with 383 MB of it free during the 100k-file
/// tree's pass: bench/RESULTS.md, fifty-first session). A trim costs tens of milliseconds of one
/// core.
const PASS_TRIM: Duration = Duration::from_secs(30);

/// Start the background worker that drains every repository's backlog.
pub(crate) fn spawn(semantic: Arc<Semantic>, registered: Weak<Repos>) {
    if !semantic.is_on() {
        return;
    }
    std::thread::Builder::new()
        .name("patina-embed".into())
        .spawn(move || work(&semantic, registered))
        .expect("spawning the embedding worker");
}

/// The test hook `PATINA_TEST_EMBED_GATE=<path>`: while that file exists the model embeds
/// nothing (static vectors still fill), so the suite holds a backlog as long as it needs one
/// instead of hoping the machine is slow enough to show it.
fn gate_closed() -> bool {
    static GATE: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    GATE.get_or_init(|| {
        patina_core::hooks::test_hook("PATINA_TEST_EMBED_GATE").map(std::path::PathBuf::from)
    })
    .as_ref()
    .is_some_and(|p| p.exists())
}

/// A round with this many files still to read makes the model's pass wait: what a large
/// repository's first round (or a far branch switch) needs to be searchable comes first. On two
/// cores the model's batches took both from the round: the 100k-file tree's round ran at half
/// its pace once the static vectors' share of the budget was full and the model began
/// (bench/RESULTS.md, twenty-first session). An edit's round is never this long, so an edit in
/// one repository never waits on another's.
const LONG_ROUND_FILES: u64 = 1_000;

/// Whether `repo` is in a round with at least [`LONG_ROUND_FILES`] files still to read.
fn in_a_long_round(repo: &crate::state::repo::Repo) -> bool {
    repo.running_job().is_some_and(|rx| {
        let p = rx.borrow();
        !p.finished() && p.files_total.saturating_sub(p.files_done) >= LONG_ROUND_FILES
    })
}

/// One batch at a time from the repository that needs it most (`embedding_order`, decided
/// again after every batch), so a new or queried repository never waits for another's whole
/// backlog.
fn work(sem: &Semantic, registered: Weak<Repos>) {
    let mut seen = 0;
    let mut drained = false;
    let mut trimmed = std::time::Instant::now();
    loop {
        if sem.is_stopping() {
            return;
        }
        let Some(reg) = registered.upgrade() else {
            return;
        };
        let mut did = false;
        let repos = reg.all();
        // First every waiting chunk gets a static vector (microseconds each), so semantic
        // search covers a new repository in seconds; then the model works through them.
        // Within an eighth of the memory budget: past it the rest wait for the model.
        let mut room = sem.static_room(repos.iter().map(|r| r.provisional_count()).sum());
        for repo in &repos {
            if room == 0 {
                break;
            }
            if sem.is_stopping() || repo.is_cancelled() {
                continue;
            }
            match sem.fill_static(repo, room.min(STATIC_BATCH)) {
                Ok(0) => continue,
                Ok(n) => {
                    room = room.saturating_sub(n);
                    did = true;
                    break;
                }
                Err(e) => tracing::warn!(repo = %repo.id(), "static vectors: {e:#}"),
            }
        }
        if did {
            drop(repos);
            drop(reg);
            continue;
        }
        if gate_closed() || repos.iter().any(|r| in_a_long_round(r)) {
            drop(repos);
            drop(reg);
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        let stats: Vec<(usize, i64)> = repos
            .iter()
            .map(|r| (r.backlog(), r.last_queried_ms()))
            .collect();
        for i in
            crate::state::backlog::embedding_order(&stats, crate::process::clock::now_unix_ms())
        {
            let repo = &repos[i];
            if repo.is_cancelled() {
                continue;
            }
            match sem.embed_some(repo) {
                Ok(0) => continue,
                Ok(_) => did = true,
                Err(e) => {
                    tracing::error!(repo = %repo.id(), "embedding failed: {e:#}");
                    std::thread::sleep(Duration::from_secs(1));
                    continue;
                }
            }
            build_beside(repo);
            break;
        }
        if !did {
            // Commit messages once every chunk backlog is empty (the history oracle's dense
            // matching), one batch at a time like the chunks.
            for repo in &repos {
                if sem.is_stopping() || repo.is_cancelled() {
                    continue;
                }
                match sem.embed_messages(repo) {
                    Ok(0) => continue,
                    Ok(_) => {
                        did = true;
                        break;
                    }
                    Err(e) => {
                        tracing::warn!(repo = %repo.id(), "embedding commit messages failed: {e:#}");
                    }
                }
            }
        }
        if !did {
            for repo in &repos {
                build_beside(repo);
                // Idle: the vectors not sealed yet go to disk, so the next start reads
                // them from one file instead of from the embedding cache one by one.
                if !repo.is_cancelled() {
                    sem.save(repo);
                }
            }
        }
        drop(repos);
        drop(reg);
        if did {
            drained = true;
            if trimmed.elapsed() >= PASS_TRIM {
                crate::process::memory::release_free_heap();
                trimmed = std::time::Instant::now();
            }
            continue;
        }
        if std::mem::take(&mut drained) {
            sem.release_static();
            // The backlog is empty: batches, tokenizer buffers and ORT's working memory are
            // freed; give the pages back.
            crate::process::memory::release_free_heap();
        }
        sem.release_idle_sessions();
        seen = sem.wait_for_work(seen);
    }
}
