//! An embedding session held in a slot: loaded on demand, dropped when idle.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::Result;
use patina_embed::{DIM, Embedder};

/// An embedding session loaded on demand and dropped after `idle` without use (its weights and
/// working memory go back to the system), with the resident bytes it added when it was loaded.
pub(super) struct Slot {
    name: &'static str,
    idle: Duration,
    held: Mutex<Held>,
    bytes: AtomicU64,
}

struct Held {
    session: Option<Box<Embedder>>,
    /// When the session last embedded something (or was loaded).
    last_used: std::time::Instant,
}

impl Slot {
    pub(super) fn new(name: &'static str, idle: Duration, loaded: Option<(Embedder, u64)>) -> Slot {
        let (session, bytes) = match loaded {
            Some((e, b)) => (Some(Box::new(e)), b),
            None => (None, 0),
        };
        Slot {
            name,
            idle,
            held: Mutex::new(Held {
                session,
                last_used: std::time::Instant::now(),
            }),
            bytes: AtomicU64::new(bytes),
        }
    }

    /// Embed `inputs`, loading the session first (`load`: the session and the bytes it adds)
    /// when it is not in memory. `done` is asked once the session is ours: what a caller that
    /// held it meanwhile already computed (oracles embedding the same question at once wait for
    /// one another, and only the first computes).
    pub(super) fn embed(
        &self,
        inputs: &[&str],
        done: impl FnOnce() -> Option<Vec<[f32; DIM]>>,
        load: impl FnOnce() -> Result<(Embedder, u64)>,
    ) -> Result<Vec<[f32; DIM]>> {
        let mut held = self.held.lock().expect("session lock");
        if let Some(v) = done() {
            return Ok(v);
        }
        held.last_used = std::time::Instant::now();
        let session = match &mut held.session {
            Some(s) => s,
            slot @ None => {
                let started = std::time::Instant::now();
                let (loaded, bytes) = load()?;
                self.bytes.store(bytes, Ordering::Relaxed);
                tracing::info!(
                    ms = started.elapsed().as_millis() as u64,
                    "{} session loaded",
                    self.name
                );
                slot.insert(Box::new(loaded))
            }
        };
        session.embed(inputs)
    }

    /// Drop the session when it has had nothing to do for `idle`, and give its memory back to
    /// the operating system. Returns whether it was dropped.
    pub(super) fn release_if_idle(&self) -> bool {
        let mut held = self.held.lock().expect("session lock");
        if held.session.is_none() || held.last_used.elapsed() < self.idle {
            return false;
        }
        held.session = None;
        drop(held);
        self.bytes.store(0, Ordering::Relaxed);
        crate::process::memory::release_free_heap();
        tracing::info!("{} session released (idle)", self.name);
        true
    }

    pub(super) fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    pub(super) fn is_loaded(&self) -> bool {
        self.held.lock().expect("session lock").session.is_some()
    }
}
