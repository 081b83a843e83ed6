//! The graph builder: a large repository's dependency graph is built here, on the blocking pool,
//! when a query wanted it and found none resident (`crate::state::repo::graph_for_query` only
//! records the wish: a request never waits for, nor starts, a build). One build per repository
//! at a time, and none while an index round is running (the round's commits would leave it
//! stale at once).

use std::sync::{Arc, Weak};

use crate::state::repos::Repos;

/// How often the wishes are looked at: a query that wanted a graph finds it built this much
/// sooner or later than the build alone takes.
const POLL_INTERVAL: std::time::Duration = std::time::Duration::from_millis(200);

pub(crate) fn spawn(registered: Weak<Repos>) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(POLL_INTERVAL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let Some(repos) = registered.upgrade() else {
                return;
            };
            for repo in repos.all() {
                let index = repo.index();
                if index.graph_building() || index.in_round() || !repo.take_graph_wish() {
                    continue;
                }
                let repo: Arc<_> = repo.clone();
                tokio::task::spawn_blocking(move || {
                    let started = std::time::Instant::now();
                    repo.index().graph();
                    // The facts were decoded file by file and dropped: their pages go back.
                    crate::process::memory::release_free_heap();
                    tracing::info!(
                        repo = %repo.id(),
                        ms = started.elapsed().as_millis() as u64,
                        "graph built in the background for queries"
                    );
                });
            }
        }
    });
}
