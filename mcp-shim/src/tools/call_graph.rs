//! `call_graph`: the callers or the callees of a function.

use schemars::JsonSchema;
use serde::Deserialize;

use super::args::Str;
use super::navigate::{navigate, output};
use super::{Tool, ToolResult};
use crate::protocol::Server;

pub(super) const TOOL: Tool = Tool {
    name: "call_graph",
    title: "Callers or callees of a function",
    description: "The functions that call a symbol (`direction` callers, the default) or the \
functions of the repository it calls (`direction` callees), each with the file, the line of the \
call and how the call was resolved (exact, import or name_only).",
    input: super::args::input_schema::<Args>,
    output,
    read_only: true,
    idempotent: true,
};

/// The arguments of `call_graph`; its `inputSchema` is generated from this struct.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Args {
    /// The function: `name`, `Parent.name` or `Parent::name`.
    symbol: Str,
    /// `callers` (default) or `callees`.
    direction: Option<Str>,
    /// A repository (id, name or path). Default: every repository.
    repo: Option<Str>,
}

pub(super) async fn call(server: &Server, a: Args) -> ToolResult {
    let what = match a.direction.as_ref().map(|d| d.0.as_str()) {
        None | Some("callers") => "callers",
        Some("callees") => "callees",
        Some(other) => {
            return Err(format!(
                "invalid direction '{other}': expected callers or callees"
            ));
        }
    };
    navigate(server, what, a.symbol.0, a.repo.map(|r| r.0)).await
}
