//! Navigation on one repository's dependency graph ([`GraphTable`]): the definitions of a symbol,
//! its references, its callers and what it calls (`patina refs|callers|callees|defs`,
//! `Graph.Navigate`).

use anyhow::Result;
use patina_core::UserError;

use crate::graph::{Def, GraphTable};

/// What to find about a symbol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Navigation {
    /// Where it is defined.
    Defs,
    /// Every resolved reference to it.
    Refs,
    /// The references that call it.
    Callers,
    /// What its definitions call.
    Callees,
}

impl Navigation {
    /// From its name on the wire (`defs`, `refs`, `callers`, `callees`): a clear error otherwise.
    pub fn parse(what: &str) -> Result<Navigation> {
        Ok(match what {
            "defs" => Navigation::Defs,
            "refs" => Navigation::Refs,
            "callers" => Navigation::Callers,
            "callees" => Navigation::Callees,
            other => {
                return Err(UserError::Invalid(format!(
                    "unknown navigation '{other}' (refs, callers, callees, defs)"
                ))
                .into());
            }
        })
    }
}

/// One answer line.
#[derive(Clone, Debug)]
pub struct NavSite {
    pub path: String,
    pub line: u32,
    pub end_line: u32,
    pub symbol: String,
    pub kind: String,
    pub resolution: String,
    pub target: String,
    pub call: bool,
}

/// The sites of `symbol` (trimmed, not empty) in `graph`.
pub fn navigate(graph: &GraphTable, what: Navigation, symbol: &str) -> Result<Vec<NavSite>> {
    let symbol = symbol.trim();
    if symbol.is_empty() {
        return Err(UserError::Invalid("empty symbol".into()).into());
    }
    let target_of = |d: &Def| format!("{}:{}-{}", d.path, d.start_line, d.end_line);
    let mut out = Vec::new();
    match what {
        Navigation::Defs => {
            for d in graph.defs(symbol) {
                out.push(NavSite {
                    path: d.path.to_string(),
                    line: d.start_line,
                    end_line: d.end_line,
                    symbol: match &d.parent {
                        Some(p) => format!("{p}.{}", d.symbol),
                        None => d.symbol.to_string(),
                    },
                    kind: d.kind.name().to_string(),
                    resolution: String::new(),
                    target: String::new(),
                    call: false,
                });
            }
        }
        Navigation::Refs | Navigation::Callers => {
            for e in graph.references(symbol, what == Navigation::Callers) {
                out.push(NavSite {
                    path: e.site.path.to_string(),
                    line: e.site.line,
                    end_line: e.site.line,
                    symbol: e
                        .from
                        .as_ref()
                        .map(|f| f.symbol.to_string())
                        .unwrap_or_default(),
                    kind: e
                        .from
                        .as_ref()
                        .map(|f| f.kind.name().to_string())
                        .unwrap_or_default(),
                    resolution: e.resolution.name().to_string(),
                    target: target_of(&e.to),
                    call: e.site.call,
                });
            }
        }
        Navigation::Callees => {
            for d in graph.defs(symbol) {
                for e in graph.calls_in(&d) {
                    out.push(NavSite {
                        path: e.site.path.to_string(),
                        line: e.site.line,
                        end_line: e.site.line,
                        symbol: e.to.symbol.to_string(),
                        kind: e.to.kind.name().to_string(),
                        resolution: e.resolution.name().to_string(),
                        target: target_of(&e.to),
                        call: true,
                    });
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn navigations_parse_from_their_wire_names_and_others_are_refused() {
        assert_eq!(Navigation::parse("defs").unwrap(), Navigation::Defs);
        assert_eq!(Navigation::parse("refs").unwrap(), Navigation::Refs);
        assert_eq!(Navigation::parse("callers").unwrap(), Navigation::Callers);
        assert_eq!(Navigation::parse("callees").unwrap(), Navigation::Callees);
        let e = Navigation::parse("siblings").unwrap_err();
        assert!(
            e.to_string().contains("unknown navigation 'siblings'"),
            "{e}"
        );
    }
}
