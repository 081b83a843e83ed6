//! Navigation over the repositories in scope: each one's [`patina_index::navigate`] on its
//! dependency graph, the sites named by repository. Knows nothing of gRPC.

use std::sync::Arc;

use anyhow::Result;
use patina_core::UserError;
use patina_index::navigate::{NavSite, Navigation};

use crate::state::repo::Repo;

/// `what` (`defs`, `refs`, `callers`, `callees`) of `symbol` in each of `repos`: (repository
/// name, site).
pub(crate) fn navigate(
    repos: &[Arc<Repo>],
    what: &str,
    symbol: &str,
) -> Result<Vec<(String, NavSite)>> {
    if symbol.trim().is_empty() {
        return Err(UserError::Invalid("empty symbol".into()).into());
    }
    let what = Navigation::parse(what)?;
    let mut out = Vec::new();
    for repo in repos {
        let name = repo.record().name;
        let graph = repo.index().graph();
        for site in patina_index::navigate::navigate(&graph, what, symbol)? {
            out.push((name.clone(), site));
        }
    }
    Ok(out)
}
