//! Logging: stderr only (stdout belongs to the protocol). `PATINA_MCP_LOG=debug` logs every
//! message.

/// Log to stderr (stdout belongs to the protocol).
pub(crate) fn log(msg: impl std::fmt::Display) {
    eprintln!("patina-mcp: {msg}");
}

pub(crate) fn debug_enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("PATINA_MCP_LOG").is_ok_and(|v| v == "debug"))
}

/// At most the first 2,000 bytes of a message, for the debug log.
pub(crate) fn truncate_for_log(s: &str) -> &str {
    let mut end = s.len().min(2000);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}
