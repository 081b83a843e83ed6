//! Waiting for the daemon, which works asynchronously: one way to poll, with the reason in the
//! failure message; what an answer held, for failure messages; the paths of the workspace the
//! tests run from.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long [`eventually`] waits: generous, since the e2e binary runs many daemons at once on a
/// busy machine. A condition that never holds fails with its reason, not a hang.
pub const EVENTUALLY: Duration = Duration::from_secs(120);

/// Poll `cond` until it holds, for at most [`EVENTUALLY`]; panics with "timed out waiting until
/// {what}".
pub fn eventually(what: &str, cond: impl FnMut() -> bool) {
    eventually_within(EVENTUALLY, what, cond)
}

/// [`eventually`] with a deadline of its own (a whole repository embedded on two cores).
pub fn eventually_within(limit: Duration, what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !cond() {
        assert!(
            Instant::now() < deadline,
            "timed out after {} s waiting until {what}",
            limit.as_secs()
        );
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// The workspace root (`tests/` is one level below it).
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// PYTHONPATH with the pinned client libraries `.ci/run` installs into `target/pydeps`
/// (`PATINA_PYDEPS` moves them), before any PYTHONPATH the caller had.
pub fn pythonpath() -> std::ffi::OsString {
    let pydeps = std::env::var_os("PATINA_PYDEPS")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target/pydeps"));
    let mut path = std::ffi::OsString::from(&pydeps);
    if let Some(old) = std::env::var_os("PYTHONPATH").filter(|p| !p.is_empty()) {
        path.push(":");
        path.push(old);
    }
    path
}

/// Poll `probe` until it gives `Ok(value)`, for at most `limit`; its last `Err` (what it saw, as
/// text) is in the failure message beside `what`.
pub fn poll<T>(limit: Duration, what: &str, mut probe: impl FnMut() -> Result<T, String>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        match probe() {
            Ok(v) => return v,
            Err(seen) => assert!(
                Instant::now() < deadline,
                "timed out after {} s waiting until {what}; last seen: {seen}",
                limit.as_secs()
            ),
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// The hits as `path:start-end symbol [oracle#rank …]`, for messages.
pub fn seen(resp: &patina_proto::v1::QueryResponse) -> Vec<String> {
    resp.hits
        .iter()
        .take(8)
        .map(|h| {
            let by: Vec<String> = h
                .provenance
                .iter()
                .map(|p| format!("{}#{}", p.oracle, p.rank))
                .collect();
            format!(
                "{}:{}-{} {} [{}]",
                h.path,
                h.start_line,
                h.end_line,
                h.symbol,
                by.join(" ")
            )
        })
        .collect()
}
