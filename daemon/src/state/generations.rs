//! The daemon-wide generation: a counter that moves whenever something every answer may depend on
//! changes — a repository registered or removed, session notes written or embedded. With each
//! repository's own generation (`Repo::generation`) it tells the query cache whether a stored
//! answer is still the answer. One is made at start and handed to whoever moves it or reads it.

use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Default)]
pub(crate) struct Generations {
    global: AtomicU64,
}

impl Generations {
    /// Something every answer may depend on changed.
    pub fn bump(&self) {
        self.global.fetch_add(1, Ordering::SeqCst);
    }

    pub fn global(&self) -> u64 {
        self.global.load(Ordering::SeqCst)
    }
}
