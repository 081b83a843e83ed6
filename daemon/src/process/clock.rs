//! Wall-clock time as the daemon records it.

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub(crate) fn now_unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
