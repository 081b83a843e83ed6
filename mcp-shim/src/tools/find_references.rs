//! `find_references`: where a symbol is used, with the line and how each use was resolved.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::content::ToolResult;
use crate::state::State;
use crate::tools::args::Str;
use crate::tools::navigate::{navigate, output};
use crate::tools::spec::Tool;

pub(super) const TOOL: Tool = Tool {
    name: "find_references",
    description: "Every use of a symbol. Use it before changing the symbol.",
    input: crate::tools::args::input_schema::<Args>,
    output,
    read_only: true,
    idempotent: true,
};

/// The arguments of `find_references`; its `inputSchema` is generated from this struct.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Args {
    /// e.g. `name`, `Parent.name`.
    symbol: Str,
    /// Repository (default: all).
    repo: Option<Str>,
}

pub(super) async fn call(state: &State, a: Args) -> ToolResult {
    navigate(state, "refs", a.symbol.0, a.repo.map(|r| r.0)).await
}
