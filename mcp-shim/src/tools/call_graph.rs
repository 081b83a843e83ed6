//! `call_graph`: the callers or the callees of a function.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::content::ToolResult;
use crate::state::State;
use crate::tools::args::Str;
use crate::tools::navigate::{navigate, output};
use crate::tools::spec::Tool;

pub(super) const TOOL: Tool = Tool {
    name: "call_graph",
    description: "Callers or callees of a function. Use it to trace the flow.",
    input: crate::tools::args::input_schema::<Args>,
    output,
    read_only: true,
    idempotent: true,
};

/// The arguments of `call_graph`; its `inputSchema` is generated from this struct.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Args {
    /// e.g. `name`, `Parent.name`.
    symbol: Str,
    /// callers (default), callees.
    direction: Option<Str>,
    /// Repository (default: all).
    repo: Option<Str>,
}

pub(super) async fn call(state: &State, a: Args) -> ToolResult {
    let what = match a.direction.as_ref().map(|d| d.0.as_str()) {
        None | Some("callers") => "callers",
        Some("callees") => "callees",
        Some(other) => {
            return Err(format!(
                "invalid direction '{other}': expected callers or callees"
            ));
        }
    };
    navigate(state, what, a.symbol.0, a.repo.map(|r| r.0)).await
}
