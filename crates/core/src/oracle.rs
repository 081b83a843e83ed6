//! Oracles by name: which retriever found a result ([`OracleId`]) and how a retriever's run ended
//! ([`OracleStatus`]). Both travel as their lowercase names (config keys, the wire, JSON output).

use serde::{Deserialize, Serialize};

/// One of Patina's retrievers. Serialized as its lowercase name, so a config table keyed by
/// oracle (`[retrieval.weights]`) rejects a name that is not one of these.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OracleId {
    /// BM25 over code-aware tokens.
    Lexical,
    /// Exact and prefix symbol names, file names.
    Symbol,
    /// Embeddings of chunks (the model).
    Semantic,
    /// Notes of working sessions.
    Session,
    /// Commit messages reachable from HEAD: matching commits vote for the files they touched.
    History,
    /// Co-change partners (files that change together in the history) of the strongest hits.
    Cochange,
    /// Callers, callees and type neighbours of the other oracles' strongest hits (a second
    /// stage after their fusion).
    Graph,
    /// Repositories published to a team's store and not cloned here (the engine's full-text and
    /// vector search, `patina q --org`); only when a request asks for it.
    Org,
}

impl OracleId {
    /// Every oracle, in the order the daemon runs them.
    pub const ALL: [OracleId; 8] = [
        OracleId::Lexical,
        OracleId::Symbol,
        OracleId::Semantic,
        OracleId::Session,
        OracleId::History,
        OracleId::Cochange,
        OracleId::Graph,
        OracleId::Org,
    ];

    /// Stable lowercase name (the serialized form, the wire's and the CLI's spelling).
    pub fn name(self) -> &'static str {
        match self {
            OracleId::Lexical => "lexical",
            OracleId::Symbol => "symbol",
            OracleId::Semantic => "semantic",
            OracleId::Session => "session",
            OracleId::History => "history",
            OracleId::Cochange => "cochange",
            OracleId::Graph => "graph",
            OracleId::Org => "org",
        }
    }

    /// The oracle called `name` (exact lowercase name), if any.
    pub fn parse(name: &str) -> Option<OracleId> {
        OracleId::ALL.into_iter().find(|o| o.name() == name)
    }
}

impl std::fmt::Display for OracleId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How one oracle's run for a query ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OracleStatus {
    /// It answered (possibly with nothing).
    Ok,
    /// It did not answer within the oracle timeout; left out of the fusion.
    Timeout,
    /// It failed (or crashed); left out of the fusion.
    Error,
    /// It cannot answer at all (e.g. no model installed); a notice says why.
    Unavailable,
}

impl OracleStatus {
    pub const ALL: [OracleStatus; 4] = [
        OracleStatus::Ok,
        OracleStatus::Timeout,
        OracleStatus::Error,
        OracleStatus::Unavailable,
    ];

    /// Stable lowercase name (the wire's `OracleReport.status`).
    pub fn name(self) -> &'static str {
        match self {
            OracleStatus::Ok => "ok",
            OracleStatus::Timeout => "timeout",
            OracleStatus::Error => "error",
            OracleStatus::Unavailable => "unavailable",
        }
    }

    /// The status called `name`, if any.
    pub fn parse(name: &str) -> Option<OracleStatus> {
        OracleStatus::ALL.into_iter().find(|s| s.name() == name)
    }
}

impl std::fmt::Display for OracleStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_match_serde() {
        for o in OracleId::ALL {
            assert_eq!(OracleId::parse(o.name()), Some(o));
            let json = format!("\"{}\"", o.name());
            assert_eq!(serde_json::to_string(&o).unwrap(), json);
        }
        for s in OracleStatus::ALL {
            assert_eq!(OracleStatus::parse(s.name()), Some(s));
            assert_eq!(
                serde_json::to_string(&s).unwrap(),
                format!("\"{}\"", s.name())
            );
        }
        assert_eq!(OracleId::parse("lexcal"), None);
        assert!(serde_json::from_str::<OracleId>("\"lexcal\"").is_err());
    }
}
