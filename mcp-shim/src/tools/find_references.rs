//! `find_references`: where a symbol is used, with the line and how each use was resolved.

use schemars::JsonSchema;
use serde::Deserialize;

use super::args::Str;
use super::navigate::{navigate, output};
use super::{Tool, ToolResult};
use crate::protocol::Server;

pub(super) const TOOL: Tool = Tool {
    name: "find_references",
    title: "Find the references to a symbol",
    description: "Every place in the indexed repositories that uses a symbol (a function, \
method, class or type: `name` or `Parent.name`), grouped by file with the line and the \
enclosing function, and how the use was tied to the definition: exact (same file or package), \
import (through the file's imports) or name_only (same name, nearest first).",
    input: super::args::input_schema::<Args>,
    output,
    read_only: true,
    idempotent: true,
};

/// The arguments of `find_references`; its `inputSchema` is generated from this struct.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Args {
    /// The symbol: `name`, `Parent.name` or `Parent::name`.
    symbol: Str,
    /// A repository (id, name or path). Default: every repository.
    repo: Option<Str>,
}

pub(super) async fn call(server: &Server, a: Args) -> ToolResult {
    navigate(server, "refs", a.symbol.0, a.repo.map(|r| r.0)).await
}
