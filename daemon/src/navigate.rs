//! Navigation on the dependency graph of each repository ([`patina_index::graph::GraphTable`]):
//! references, callers, callees and definitions of a symbol. Knows nothing of gRPC.

use std::sync::Arc;

use anyhow::Result;

use crate::registry::UserError;
use crate::repo::Repo;

/// One answer line.
pub(crate) struct NavSite {
    pub repo: String,
    pub path: String,
    pub line: u32,
    pub end_line: u32,
    pub symbol: String,
    pub kind: String,
    pub resolution: String,
    pub target: String,
    pub call: bool,
}

pub(crate) fn navigate(repos: &[Arc<Repo>], what: &str, symbol: &str) -> Result<Vec<NavSite>> {
    let symbol = symbol.trim();
    if symbol.is_empty() {
        return Err(UserError::Invalid("empty symbol".into()).into());
    }
    let mut out = Vec::new();
    for repo in repos {
        let name = repo.record().name.clone();
        let graph = repo.index().graph();
        let target_of =
            |d: &patina_index::graph::Def| format!("{}:{}-{}", d.path, d.start_line, d.end_line);
        match what {
            "defs" => {
                for d in graph.defs(symbol) {
                    out.push(NavSite {
                        repo: name.clone(),
                        path: d.path.to_string(),
                        line: d.start_line,
                        end_line: d.end_line,
                        symbol: match &d.parent {
                            Some(p) => format!("{p}.{}", d.symbol),
                            None => d.symbol.clone(),
                        },
                        kind: d.kind.name().to_string(),
                        resolution: String::new(),
                        target: String::new(),
                        call: false,
                    });
                }
            }
            "refs" | "callers" => {
                for e in graph.references(symbol, what == "callers") {
                    out.push(NavSite {
                        repo: name.clone(),
                        path: e.site.path.to_string(),
                        line: e.site.line,
                        end_line: e.site.line,
                        symbol: e
                            .from
                            .as_ref()
                            .map(|f| f.symbol.clone())
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
            "callees" => {
                for d in graph.defs(symbol) {
                    for e in graph.calls_in(&d) {
                        out.push(NavSite {
                            repo: name.clone(),
                            path: e.site.path.to_string(),
                            line: e.site.line,
                            end_line: e.site.line,
                            symbol: e.to.symbol.clone(),
                            kind: e.to.kind.name().to_string(),
                            resolution: e.resolution.name().to_string(),
                            target: target_of(&e.to),
                            call: true,
                        });
                    }
                }
            }
            other => {
                return Err(UserError::Invalid(format!(
                    "unknown navigation '{other}' (refs, callers, callees, defs)"
                ))
                .into());
            }
        }
    }
    Ok(out)
}
