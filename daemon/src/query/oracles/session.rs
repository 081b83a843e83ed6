//! The session oracle: notes of working sessions (see `sessions/`) that bear on the query, so a
//! decision recorded once ("we chose sled because …") surfaces in later searches about it. Its hits
//! are notes, not chunks: [`OracleHit::note`]. Path globs restrict a query to files, so they leave
//! notes out.

use std::sync::Arc;

use anyhow::Result;

use patina_core::OracleId;

use super::{Oracle, OracleHit, OracleQuery};
use crate::services::sessions::Sessions;

pub(crate) struct SessionOracle(pub Arc<Sessions>);

impl Oracle for SessionOracle {
    fn id(&self) -> OracleId {
        OracleId::Session
    }

    fn search(&self, q: &OracleQuery) -> Result<Vec<OracleHit>> {
        // Notes are no file: path globs and licence filters leave them out.
        if q.filter
            .as_ref()
            .is_some_and(|f| f.has_globs() || f.has_licences())
        {
            return Ok(Vec::new());
        }
        let scope: Vec<&str> = q.repos.iter().map(|r| r.id()).collect();
        Ok(self
            .0
            .search(&q.text, &q.plan.semantic_text, q.limit, &scope)?
            .into_iter()
            .map(|(id, score)| OracleHit::note(id, score))
            .collect())
    }
}
