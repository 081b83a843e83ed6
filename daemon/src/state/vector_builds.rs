//! A repository's vector-index builds — a seal of the fresh segment or a merge of sealed segments,
//! each bounded in size: the one under way and how long the last one took. A build runs on a
//! thread of its own beside the model's pass (`crate::workers::embedder`), one at a time per
//! repository; `patina status` names it and about how long it has left.

use std::time::{Duration, Instant};

use crate::state::estimate::duration;

/// The build under way and the last one.
#[derive(Debug, Default)]
pub(crate) struct VectorBuilds {
    /// Vectors, whether a merge, since when.
    running: Option<(usize, bool, Instant)>,
    last: Option<(usize, Duration)>,
}

impl VectorBuilds {
    /// A build of `n` vectors (a merge of sealed segments, or a seal) begins now.
    pub fn begin(&mut self, n: usize, merge: bool) {
        self.running = Some((n, merge, Instant::now()));
    }

    /// Whether a build is under way (then no other begins).
    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    /// The build under way has ended (installed or failed; again: nothing).
    pub fn end(&mut self) {
        if let Some((n, _, since)) = self.running.take() {
            self.last = Some((n, since.elapsed()));
        }
    }

    /// The line `patina status` shows beside the model's stage while a build runs.
    pub fn waiting(&self) -> Option<String> {
        let (n, merge, since) = self.running?;
        Some(describe(n, merge, since.elapsed(), self.last))
    }
}

/// The line for a build of `n` vectors (a merge, or a seal) running for `elapsed`, the last build
/// having taken `last` (vectors, time) if there was one.
pub(crate) fn describe(
    n: usize,
    merge: bool,
    elapsed: Duration,
    last: Option<(usize, Duration)>,
) -> String {
    let total = last.and_then(|(m, t)| patina_core::eta::build_time(n as u64, m as u64, t));
    let pace = match total {
        Some(total) => format!(
            ", ~{} left at the last build's pace",
            duration(total.saturating_sub(elapsed))
        ),
        None => String::new(),
    };
    let what = if merge {
        format!("segments of {n} vectors are being merged into one")
    } else {
        format!("a segment of {n} vectors is being sealed")
    };
    format!(
        "the vector index: {what} ({} so far{pace}), beside the model's pass",
        duration(elapsed)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_says_how_long_it_ran_and_how_long_it_has_left() {
        let first = describe(20_000, false, Duration::from_secs(12), None);
        assert_eq!(
            first,
            "the vector index: a segment of 20000 vectors is being sealed (1 min so far), beside \
             the model's pass"
        );
        // 320k after a 160k build of 517 s: ~1,100 s in all, 300 s done.
        let line = describe(
            320_000,
            true,
            Duration::from_secs(300),
            Some((160_000, Duration::from_secs(517))),
        );
        assert!(line.contains("(5 min so far, ~14 min left"), "{line}");
        // Past the estimate: about a minute, never a negative time.
        assert!(line.starts_with("the vector index: segments of 320000 vectors are being merged"));
        let late = describe(
            320_000,
            true,
            Duration::from_secs(2_000),
            Some((160_000, Duration::from_secs(517))),
        );
        assert!(late.contains("(34 min so far, ~1 min left"), "{late}");
    }

    #[test]
    fn the_last_build_is_remembered_once_it_ends() {
        let mut b = VectorBuilds::default();
        assert_eq!(b.waiting(), None);
        assert!(!b.is_running());
        b.begin(50_000, true);
        assert!(b.is_running(), "no other build begins while this one runs");
        assert!(b.waiting().unwrap().contains("50000 vectors"));
        b.end();
        assert!(!b.is_running());
        assert_eq!(b.waiting(), None);
        assert_eq!(b.last.map(|(n, _)| n), Some(50_000));
        b.end();
        assert_eq!(b.last.map(|(n, _)| n), Some(50_000));
    }
}
