//! How long a stage of background work has left, from how fast it has gone so far.
//!
//! Two shapes of work need an estimate. An index round knows its total (the files the walk
//! found) and how far it is, so its estimate is the elapsed time scaled by what is left
//! ([`remaining`]). The embedder drains a backlog that grows and shrinks with edits, in batches
//! separated by idle time, so it keeps a [`Throughput`]: a rate smoothed over the last half
//! minute of *busy* time, which an idle hour neither raises nor lowers.
//!
//! Pure arithmetic: the callers own the clocks.

use std::time::Duration;

/// Busy time over which a rate forgets: an observation older than this weighs about a third.
const SMOOTHING: Duration = Duration::from_secs(30);

/// Items per second of busy time, smoothed exponentially over [`SMOOTHING`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Throughput {
    per_sec: Option<f64>,
}

impl Throughput {
    /// Add an observation: `items` finished in `busy` (the time spent on them, not the time since
    /// the last batch). Observations of no time or no items are ignored.
    pub fn observe(&mut self, items: u64, busy: Duration) {
        let secs = busy.as_secs_f64();
        if items == 0 || secs <= 0.0 {
            return;
        }
        let now = items as f64 / secs;
        self.per_sec = Some(match self.per_sec {
            None => now,
            Some(before) => {
                // A batch of `secs` weighs as much as that much of the smoothing window.
                let w = 1.0 - (-secs / SMOOTHING.as_secs_f64()).exp();
                before + w * (now - before)
            }
        });
    }

    /// Items per second, once something was observed.
    pub fn per_sec(&self) -> Option<f64> {
        self.per_sec.filter(|r| *r > 0.0)
    }

    /// Time to finish `left` items at this rate (`None` before the first observation).
    pub fn eta(&self, left: u64) -> Option<Duration> {
        if left == 0 {
            return Some(Duration::ZERO);
        }
        let r = self.per_sec()?;
        Some(Duration::from_secs_f64((left as f64 / r).min(1e9)))
    }
}

/// Time left for a stage of known size that did `done` of `total` in `elapsed`: what is left at
/// the pace so far. `None` until there is a pace to go by (nothing done, or under a second in).
pub fn remaining(done: u64, total: u64, elapsed: Duration) -> Option<Duration> {
    if total == 0 || done >= total {
        return Some(Duration::ZERO);
    }
    if done == 0 || elapsed < Duration::from_secs(1) {
        return None;
    }
    let per_item = elapsed.as_secs_f64() / done as f64;
    Some(Duration::from_secs_f64(per_item * (total - done) as f64))
}

/// How long a graph build of `n` items takes, from the last build (`last_n` items in `last`):
/// an HNSW build costs about `n log n` (each insertion searches a graph of the ones before it).
/// `None` when the last build is too small to scale from.
pub fn build_time(n: u64, last_n: u64, last: Duration) -> Option<Duration> {
    if last_n < 2 || n < 2 {
        return None;
    }
    let (n, m) = (n as f64, last_n as f64);
    Some(Duration::from_secs_f64(
        (last.as_secs_f64() * (n / m) * (n.ln() / m.ln())).min(1e9),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_scales_as_n_log_n_from_the_last_one() {
        // The tree's builds: 160k vectors in 517 s.
        let t = build_time(320_000, 160_000, secs(517.0))
            .unwrap()
            .as_secs_f64();
        assert!((t - 517.0 * 2.0 * (320_000f64.ln() / 160_000f64.ln())).abs() < 1e-6);
        assert!(t > 2.0 * 517.0 && t < 2.2 * 517.0, "{t}");
        assert_eq!(build_time(10, 1, secs(1.0)), None);
        assert_eq!(build_time(160_000, 160_000, secs(517.0)), Some(secs(517.0)));
    }

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    #[test]
    fn a_rate_is_unknown_until_work_is_seen() {
        let t = Throughput::default();
        assert_eq!(t.per_sec(), None);
        assert_eq!(t.eta(100), None);
        assert_eq!(
            t.eta(0),
            Some(Duration::ZERO),
            "nothing left is done, rate or not"
        );
    }

    #[test]
    fn the_first_observation_is_the_rate() {
        let mut t = Throughput::default();
        t.observe(80, secs(1.0));
        assert_eq!(t.per_sec(), Some(80.0));
        assert_eq!(t.eta(8_000), Some(secs(100.0)));
    }

    #[test]
    fn a_slowdown_moves_the_rate_by_how_long_it_lasted() {
        let mut short = Throughput::default();
        short.observe(100, secs(1.0));
        short.observe(10, secs(1.0)); // one slow second
        let mut long = Throughput::default();
        long.observe(100, secs(1.0));
        long.observe(600, secs(60.0)); // a slow minute
        let (s, l) = (short.per_sec().unwrap(), long.per_sec().unwrap());
        assert!(
            s < 100.0 && s > 90.0,
            "one slow second barely moves it: {s}"
        );
        assert!(
            l < 25.0 && l > 10.0,
            "a slow minute nearly replaces it: {l}"
        );
    }

    #[test]
    fn empty_observations_leave_the_rate_alone() {
        let mut t = Throughput::default();
        t.observe(50, secs(1.0));
        t.observe(0, secs(10.0));
        t.observe(10, Duration::ZERO);
        assert_eq!(t.per_sec(), Some(50.0));
    }

    #[test]
    fn a_round_scales_its_elapsed_time_by_what_is_left() {
        assert_eq!(remaining(250, 1_000, secs(10.0)), Some(secs(30.0)));
        assert_eq!(remaining(1_000, 1_000, secs(10.0)), Some(Duration::ZERO));
        assert_eq!(remaining(0, 1_000, secs(10.0)), None, "no pace yet");
        assert_eq!(remaining(10, 1_000, secs(0.2)), None, "too early to tell");
        assert_eq!(
            remaining(0, 0, secs(0.0)),
            Some(Duration::ZERO),
            "an empty round is done"
        );
    }
}
