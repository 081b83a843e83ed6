//! How far the static and the model's passes are for a repository, and the time each has left
//! at the recent pace (`patina status`, `add`'s closing lines).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use patina_core::eta::Throughput;

use super::{Semantic, WORK_BATCH};
use crate::state::repo::Repo;

impl Semantic {
    /// Where `repo`'s two background stages stand: the static pass (every backlog chunk given a
    /// static vector) and the model's (every chunk given its vector), with the time each has left
    /// at the recent pace; `None` for a stage that is done or not run. `held_static`: static
    /// vectors held over every repository (the pass stops at its share of the memory budget).
    pub fn stages(&self, repo: &Repo, held_static: usize) -> (Option<Stage>, Option<Stage>) {
        if !self.is_on() {
            return (None, None);
        }
        let backlog = repo.backlog() as u64;
        let provisional = repo.provisional_count() as u64;
        let static_on = !self.statics.unavailable();
        let static_left = backlog.saturating_sub(provisional);
        // The pass leaves a backlog of one model batch to the model (see `fill_static`).
        let statics =
            (static_on && static_left > 0 && (backlog > WORK_BATCH as u64 || !self.model_pass))
                .then(|| {
                    let pace = *self.static_pace.lock().expect("pace lock");
                    let full = self.static_room(held_static) == 0;
                    Stage::new(
                static_left,
                pace,
                full.then(|| {
                    "the static vectors' share of the memory budget is full: the rest wait for \
                     the model"
                        .to_string()
                }),
            )
                });
        let model = (backlog > 0).then(|| {
            let pace = *self.model_pace.lock().expect("pace lock");
            let off = (!self.model_pass)
                .then(|| "off by `[semantic] model_pass = false`: static vectors only".to_string());
            Stage::new(backlog, pace, off.or_else(|| repo.vector_build_waiting()))
        });
        (statics, model)
    }
}

/// How far one background stage of a repository is (see [`Semantic::stages`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Stage {
    /// Chunks still to do.
    pub left: u64,
    /// Recent pace, chunks per second of work (`None` before the first batch).
    pub per_sec: Option<f64>,
    /// `left` at that pace.
    pub eta: Option<Duration>,
    /// Why the stage does not advance now.
    pub waiting: Option<String>,
}

impl Stage {
    fn new(left: u64, pace: Throughput, waiting: Option<String>) -> Stage {
        Stage {
            left,
            per_sec: pace.per_sec(),
            eta: if waiting.is_some() {
                None
            } else {
                pace.eta(left)
            },
            waiting,
        }
    }
}

/// Add a batch of `n` items begun at `started` to `pace`.
pub(super) fn observe(pace: &Mutex<Throughput>, n: usize, started: Instant) {
    pace.lock()
        .expect("pace lock")
        .observe(n as u64, started.elapsed());
}
