//! What every tool declares: its name, description, schemas and hints. Each tool file defines
//! one `TOOL`; `tools/mod.rs` lists them.

use serde_json::Value;

pub(crate) struct Tool {
    pub name: &'static str,
    pub description: &'static str,
    /// The `inputSchema`, generated from the tool's `Args`.
    pub input: fn() -> Value,
    pub output: fn() -> Value,
    pub read_only: bool,
    pub idempotent: bool,
}
