//! The restarter: watches for the moment a restart in place pays — idle (no index job, no
//! embedding backlog, no graph build due, no request for the idle time) with much heap held but
//! unused — and then calls back; the app stops and hands over ([`crate::process::restart`]).

use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::process::restart::{FLOOR, Heap, forced, quiet_for, worth_it};
use crate::services::embedding::Semantic;
use crate::state::repos::Repos;

/// After a restart in place, the next is considered no sooner than this: a daemon whose own
/// start leaves it fragmented must not restart over and over.
const AFTER_A_RESTART: Duration = Duration::from_secs(3600);
/// How often the daemon looks.
const CHECK_EVERY: Duration = Duration::from_secs(30);
/// How often the heap is measured again (a trim and a walk of glibc's statistics) when nothing
/// was seen running or asked since the last measurement.
const REMEASURE_IDLE: Duration = Duration::from_secs(600);
/// Whether nothing is running: no index job, no embedding backlog (chunks, or commit messages
/// while the model is on), no graph build due.
fn idle(repos: &Repos, sem: &Semantic) -> bool {
    repos.all().iter().all(|r| {
        r.running_job().is_none()
            && r.backlog() == 0
            && !r.graph_build_due()
            && (!sem.is_on() || r.message_backlog() == 0)
    })
}

/// Watch for the moment a restart in place pays (see the module doc); then call `restart`.
/// `restarts`: how many restarts in place preceded this image.
pub(crate) fn spawn(
    registered: Weak<Repos>,
    semantic: Arc<Semantic>,
    started: std::time::Instant,
    restarts: u32,
    restart: impl FnOnce(Heap) + Send + 'static,
) {
    let min_uptime = if restarts > 0 {
        AFTER_A_RESTART
    } else {
        Duration::ZERO
    };
    tokio::spawn(async move {
        let mut restart = Some(restart);
        let mut tick = tokio::time::interval(CHECK_EVERY.min(crate::state::config::idle_release()));
        tick.tick().await;
        // Whether work or requests were seen since the heap was last measured, and when that was.
        let mut active_since_measured = true;
        let mut measured = tokio::time::Instant::now();
        let mut said_held_back = false;
        loop {
            tick.tick().await;
            if started.elapsed() < min_uptime {
                // Said once, when the watch first looks: the moment a second restart would have
                // come is visible (the suite waits for it rather than for a while).
                if !said_held_back {
                    said_held_back = true;
                    tracing::info!(
                        restarts,
                        "no restart in place within {} min of the last one",
                        min_uptime.as_secs() / 60
                    );
                }
                active_since_measured = true;
                continue;
            }
            if quiet_for(started) < crate::state::config::idle_release() {
                active_since_measured = true;
                continue;
            }
            let Some(reg) = registered.upgrade() else {
                return;
            };
            if !idle(&reg, &semantic) {
                active_since_measured = true;
                continue;
            }
            drop(reg);
            if !active_since_measured && measured.elapsed() < REMEASURE_IDLE {
                continue;
            }
            let Ok(heap) = tokio::task::spawn_blocking(Heap::now).await else {
                continue;
            };
            (active_since_measured, measured) = (false, tokio::time::Instant::now());
            tracing::debug!(
                resident_mib = heap.resident >> 20,
                in_use_mib = heap.in_use >> 20,
                "idle; heap held but unused: {} MiB",
                heap.held_unused() >> 20
            );
            if (forced() || worth_it(heap, FLOOR))
                && let Some(restart) = restart.take()
            {
                restart(heap);
                return;
            }
        }
    });
}
