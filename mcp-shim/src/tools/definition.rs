//! `definition`: where a name is defined.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::content::ToolResult;
use crate::state::State;
use crate::tools::args::Str;
use crate::tools::navigate::{navigate, output};
use crate::tools::spec::Tool;

pub(super) const TOOL: Tool = Tool {
    name: "definition",
    description: "Where a name is defined. Use it to jump to the code.",
    input: crate::tools::args::input_schema::<Args>,
    output,
    read_only: true,
    idempotent: true,
};

/// The arguments of `definition`; its `inputSchema` is generated from this struct.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Args {
    /// e.g. `name`, `Parent.name`.
    name: Str,
    /// Repository (default: all).
    repo: Option<Str>,
}

pub(super) async fn call(state: &State, a: Args) -> ToolResult {
    navigate(state, "defs", a.name.0, a.repo.map(|r| r.0)).await
}
