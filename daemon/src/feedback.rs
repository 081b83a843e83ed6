//! Feedback on answers: every answer is named by a query id ([`new_query_id`]).

use std::sync::atomic::{AtomicU64, Ordering};

static SEQ: AtomicU64 = AtomicU64::new(0);

/// A new query id: unique across the daemon's restarts (start time in ms, process id and a
/// sequence number), short enough to pass around: `q<ms>-<pid>-<n>` in hex.
pub(crate) fn new_query_id() -> String {
    format!(
        "q{:x}-{:x}-{:x}",
        crate::now_unix_ms(),
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    )
}
