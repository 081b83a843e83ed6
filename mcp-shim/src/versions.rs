//! The MCP protocol revisions served, and how they compare.

/// The protocol revisions served, newest first. A client asking for another one is offered the
/// newest (as the specification prescribes); it may then disconnect.
pub(crate) const SUPPORTED_VERSIONS: [&str; 3] = ["2025-06-18", "2025-03-26", "2024-11-05"];
pub(crate) const LATEST_VERSION: &str = SUPPORTED_VERSIONS[0];

/// Is `version` at least `min`? (Revisions are dates, so they compare as strings.)
pub(crate) fn at_least(version: &str, min: &str) -> bool {
    version >= min
}
