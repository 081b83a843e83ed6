//! Names that travel as strings on the wire, as enums both sides share: what a search hit is
//! ([`HitKind`], `Hit.kind`), which oracle found it ([`OracleId`], `OracleRank.oracle`) and how
//! an oracle's run ended ([`OracleStatus`], `OracleReport.status`). The daemon renders them with
//! these types and clients read them back with the same types, so the spellings cannot drift.

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
