//! `definition`: where a name is defined.

use schemars::JsonSchema;
use serde::Deserialize;

use super::args::Str;
use super::navigate::{navigate, output};
use super::{Tool, ToolResult};
use crate::protocol::Server;

pub(super) const TOOL: Tool = Tool {
    name: "definition",
    title: "Where a name is defined",
    description: "The definitions of a name in the indexed repositories (functions, methods, \
classes, types, constants): file, line range, kind and owner. `name` may be qualified as \
`Parent.name`; an exact name is looked up first, then the same name in another case or style.",
    input: super::args::input_schema::<Args>,
    output,
    read_only: true,
    idempotent: true,
};

/// The arguments of `definition`; its `inputSchema` is generated from this struct.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Args {
    /// The name: `name`, `Parent.name` or `Parent::name`.
    name: Str,
    /// A repository (id, name or path). Default: every repository.
    repo: Option<Str>,
}

pub(super) async fn call(server: &Server, a: Args) -> ToolResult {
    navigate(server, "defs", a.name.0, a.repo.map(|r| r.0)).await
}
