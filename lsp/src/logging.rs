//! Logs go to stderr: stdout belongs to the protocol. `PATINA_LSP_LOG=debug` logs every message.

/// Log a line to stderr.
pub(crate) fn log(msg: impl std::fmt::Display) {
    eprintln!("patina-lsp: {msg}");
}

/// Is every message to be logged (`PATINA_LSP_LOG=debug`)?
pub(crate) fn debug_enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("PATINA_LSP_LOG").is_ok_and(|v| v == "debug"))
}
