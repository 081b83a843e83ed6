//! Fault-injection hooks for the end-to-end suite (`PATINA_TEST_*` variables): a crash at an
//! exact point, a slow oracle, a short idle release, a forced restart in place, a start without
//! its catch-up round, a held-back model. Compiled only
//! with the `test-hooks` feature, which the suite's build turns on (`tests/Cargo.toml`) and
//! `scripts/setup`'s release build does not: an installed daemon reads no such variable.

/// The value of the hook variable `name` (`PATINA_TEST_…`), when hooks are compiled in and it is
/// set; `None` otherwise.
pub fn test_hook(name: &str) -> Option<String> {
    debug_assert!(name.starts_with("PATINA_TEST_"), "{name}");
    #[cfg(feature = "test-hooks")]
    {
        std::env::var(name).ok()
    }
    #[cfg(not(feature = "test-hooks"))]
    {
        let _ = name;
        None
    }
}

/// Whether the hooks are compiled in (`patinad --version` and Health say so, so the suite can
/// refuse binaries built without them instead of failing obscurely).
pub const HOOKS: bool = cfg!(feature = "test-hooks");
