//! Rendering for humans (ripgrep-like: `path:start-end` first, colour only on a terminal) and for
//! machines (`--json`), one module per kind of answer. Output knows the answers' messages, never
//! the commands or the daemon connection; `style`, `paths`, `units` and `freshness` are shared
//! below the others.

pub(crate) mod feedback;
pub(crate) mod freshness;
pub(crate) mod history;
pub(crate) mod hits;
pub(crate) mod paths;
pub(crate) mod repair;
pub(crate) mod status;
pub(crate) mod style;
pub(crate) mod units;
