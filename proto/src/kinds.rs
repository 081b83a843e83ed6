//! The closed sets of the wire as the types both sides share: what a search hit is ([`HitKind`],
//! `Hit.kind`, a string), which oracle found it ([`OracleId`] ↔ `pb::Oracle`), how an oracle's run
//! ended ([`OracleStatus`] ↔ `pb::OracleStatus`), the intent and tune's phase (by name), and what
//! a caller can do about an error or notice ([`Remedy`]). Clients key off these, never off text;
//! as JSON ([`json`]) the enums keep their names.

pub use patina_core::{OracleId, OracleStatus, Remedy};

/// The gRPC metadata key of an error's [`Remedy`] (its code).
pub const REMEDY_KEY: &str = "patina-remedy";

impl From<Remedy> for pb::Remedy {
    fn from(r: Remedy) -> pb::Remedy {
        match r {
            Remedy::ListRepos => pb::Remedy::ListRepos,
            Remedy::AddRepo => pb::Remedy::AddRepo,
        }
    }
}

/// The remedies of an answer (`QueryResponse.remedies`, …), as the shared type; unknown codes
/// (a newer daemon's) are left out.
pub fn remedies(codes: &[i32]) -> Vec<Remedy> {
    codes
        .iter()
        .filter_map(|&c| match pb::Remedy::try_from(c).ok()? {
            pb::Remedy::ListRepos => Some(Remedy::ListRepos),
            pb::Remedy::AddRepo => Some(Remedy::AddRepo),
            pb::Remedy::Unspecified => None,
        })
        .collect()
}

/// An answer's notices, then what to do about them (its `remedies`), each said by `phrase` in
/// the caller's terms.
pub fn notices_with_remedies(
    notices: &[String],
    remedies: &[i32],
    phrase: fn(Remedy) -> &'static str,
) -> Vec<String> {
    let mut out = notices.to_vec();
    out.extend(
        self::remedies(remedies)
            .into_iter()
            .map(|r| phrase(r).to_string()),
    );
    out
}

/// Mark `status` with what the caller can do about it.
pub fn set_remedy(status: &mut tonic::Status, remedy: Remedy) {
    if let Ok(v) = remedy.code().parse() {
        status.metadata_mut().insert(REMEDY_KEY, v);
    }
}

/// What the caller can do about `status`, if the daemon said.
pub fn remedy_of(status: &tonic::Status) -> Option<Remedy> {
    Remedy::parse(status.metadata().get(REMEDY_KEY)?.to_str().ok()?)
}

use crate::v1 as pb;

/// What a search hit is. On the wire (`Hit.kind`, `ContextItem.kind`) a chunk carries its chunk
/// kind (`function`, `struct`, `section`, … — or `module` for a module/namespace *chunk*); groups
/// and notes carry their own names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HitKind<'a> {
    /// A chunk of a file, with its chunk kind.
    Chunk(&'a str),
    /// Module granularity: the chunks of one directory (`Hit.path` is the directory).
    Module,
    /// Repo granularity: the chunks of one repository (`Hit.symbol` is its name).
    Repo,
    /// A note of a working session (`Hit.note` is set, `Hit.path` is `session:<name>#<n>`).
    Note,
}

impl<'a> HitKind<'a> {
    /// The `kind` string on the wire.
    pub fn wire(self) -> &'a str {
        match self {
            HitKind::Chunk(kind) => kind,
            HitKind::Module => "module",
            HitKind::Repo => "repo",
            HitKind::Note => patina_core::NOTE_KIND,
        }
    }

    /// What `hit` is. A group (module/repo granularity) is told from a chunk of kind `module` by
    /// its `best` chunk, which only groups carry.
    pub fn of(hit: &'a pb::Hit) -> HitKind<'a> {
        let group = !hit.best.is_empty();
        match hit.kind.as_str() {
            _ if hit.note.is_some() => HitKind::Note,
            patina_core::NOTE_KIND => HitKind::Note,
            "module" if group => HitKind::Module,
            "repo" if group => HitKind::Repo,
            kind => HitKind::Chunk(kind),
        }
    }
}

/// Which oracle an answer's field names (`OracleRank.oracle`, `OracleReport.oracle`, …), as the
/// shared type; `None` for an oracle this build does not know (a newer daemon's).
pub fn oracle_of(code: i32) -> Option<OracleId> {
    Some(match pb::Oracle::try_from(code).ok()? {
        pb::Oracle::Lexical => OracleId::Lexical,
        pb::Oracle::Symbol => OracleId::Symbol,
        pb::Oracle::Semantic => OracleId::Semantic,
        pb::Oracle::Session => OracleId::Session,
        pb::Oracle::History => OracleId::History,
        pb::Oracle::Cochange => OracleId::Cochange,
        pb::Oracle::Graph => OracleId::Graph,
        pb::Oracle::Org => OracleId::Org,
        pb::Oracle::Unspecified => return None,
    })
}

impl From<OracleId> for pb::Oracle {
    fn from(o: OracleId) -> pb::Oracle {
        match o {
            OracleId::Lexical => pb::Oracle::Lexical,
            OracleId::Symbol => pb::Oracle::Symbol,
            OracleId::Semantic => pb::Oracle::Semantic,
            OracleId::Session => pb::Oracle::Session,
            OracleId::History => pb::Oracle::History,
            OracleId::Cochange => pb::Oracle::Cochange,
            OracleId::Graph => pb::Oracle::Graph,
            OracleId::Org => pb::Oracle::Org,
        }
    }
}

/// An oracle's name ("lexical", …), or "unknown".
pub fn oracle_name(code: i32) -> &'static str {
    oracle_of(code).map_or("unknown", OracleId::name)
}

/// How an oracle's run ended, as the shared type.
pub fn status_of(code: i32) -> Option<OracleStatus> {
    Some(match pb::OracleStatus::try_from(code).ok()? {
        pb::OracleStatus::Ok => OracleStatus::Ok,
        pb::OracleStatus::Timeout => OracleStatus::Timeout,
        pb::OracleStatus::Error => OracleStatus::Error,
        pb::OracleStatus::Unavailable => OracleStatus::Unavailable,
        pb::OracleStatus::Unspecified => return None,
    })
}

impl From<OracleStatus> for pb::OracleStatus {
    fn from(s: OracleStatus) -> pb::OracleStatus {
        match s {
            OracleStatus::Ok => pb::OracleStatus::Ok,
            OracleStatus::Timeout => pb::OracleStatus::Timeout,
            OracleStatus::Error => pb::OracleStatus::Error,
            OracleStatus::Unavailable => pb::OracleStatus::Unavailable,
        }
    }
}

/// A status's name ("ok", "timeout", …), or "unknown".
pub fn status_name(code: i32) -> &'static str {
    status_of(code).map_or("unknown", OracleStatus::name)
}

/// What a query was understood to ask, by name: "identifier", "implementation", "usage",
/// "tests" (`patina_retrieve::Intent::name`), or "unknown".
pub fn intent_name(code: i32) -> &'static str {
    match pb::Intent::try_from(code) {
        Ok(pb::Intent::Identifier) => "identifier",
        Ok(pb::Intent::Implementation) => "implementation",
        Ok(pb::Intent::Usage) => "usage",
        Ok(pb::Intent::Tests) => "tests",
        _ => "unknown",
    }
}

/// Where a tune run is, by name: "history", "asking", "fitting", "checking" ("" before any).
pub fn tune_phase_name(code: i32) -> &'static str {
    match pb::TunePhase::try_from(code) {
        Ok(pb::TunePhase::History) => "history",
        Ok(pb::TunePhase::Asking) => "asking",
        Ok(pb::TunePhase::Fitting) => "fitting",
        Ok(pb::TunePhase::Checking) => "checking",
        _ => "",
    }
}

/// Why a context piece is there, by name: "matched" or "located".
pub fn context_reason_name(code: i32) -> &'static str {
    match pb::ContextReason::try_from(code) {
        Ok(pb::ContextReason::Located) => "located",
        _ => "matched",
    }
}

/// JSON of the enum fields by their names (the `json` feature; `proto/build.rs` names these on
/// the fields), so what clients pass through reads as it always did.
#[cfg(feature = "json")]
pub mod json {
    use serde::Serializer;

    pub fn oracle<S: Serializer>(v: &i32, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(super::oracle_name(*v))
    }

    pub fn oracles<S: Serializer>(v: &[i32], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter().map(|c| super::oracle_name(*c)))
    }

    pub fn status<S: Serializer>(v: &i32, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(super::status_name(*v))
    }

    pub fn intent<S: Serializer>(v: &i32, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(super::intent_name(*v))
    }

    pub fn context_reason<S: Serializer>(v: &i32, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(super::context_reason_name(*v))
    }

    pub fn tune_phase<S: Serializer>(v: &i32, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(super::tune_phase_name(*v))
    }

    pub fn remedies<S: Serializer>(v: &[i32], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(super::remedies(v).into_iter().map(|r| r.code()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_through_a_hit() {
        let hit = |kind: HitKind, best: &str, note: bool| pb::Hit {
            kind: kind.wire().into(),
            best: best.into(),
            note: note.then(pb::Note::default),
            ..Default::default()
        };
        let cases = [
            (HitKind::Module, "src/a.rs:1-9", false),
            (HitKind::Repo, "src/a.rs:1-9", false),
            (HitKind::Note, "", true),
            (HitKind::Chunk("function"), "", false),
            // A module *chunk* (`mod foo { … }`) is a chunk, not a group.
            (HitKind::Chunk("module"), "", false),
        ];
        for (kind, best, note) in cases {
            let h = hit(kind, best, note);
            assert_eq!(HitKind::of(&h), kind, "{h:?}");
        }
    }
}
