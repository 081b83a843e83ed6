//! File roles on the wire: [`patina_core::FileRole`] ⇄ [`FileRole`](crate::v1::FileRole), and the
//! `ROLE` / `!ROLE` filter syntax every client accepts.

use patina_core::FileRole;

use crate::v1 as pb;

/// The wire value of `role`.
pub fn to_wire(role: FileRole) -> pb::FileRole {
    match role {
        FileRole::Source => pb::FileRole::Source,
        FileRole::Test => pb::FileRole::Test,
        FileRole::Docs => pb::FileRole::Docs,
        FileRole::Example => pb::FileRole::Example,
        FileRole::Benchmark => pb::FileRole::Benchmark,
        FileRole::Generated => pb::FileRole::Generated,
        FileRole::Vendored => pb::FileRole::Vendored,
        FileRole::Config => pb::FileRole::Config,
        FileRole::Other => pb::FileRole::Other,
    }
}

/// The role of a wire value; `None` for `UNSPECIFIED` and values this version does not know.
pub fn from_wire(value: i32) -> Option<FileRole> {
    FileRole::ALL
        .into_iter()
        .find(|r| to_wire(*r) as i32 == value)
}

/// A filter as users write it: role names (`test`, `docs`, …), `!name` to exclude. Returns the
/// wire values (included, excluded), or an error naming the unknown role and the known ones.
pub fn parse_filter<S: AsRef<str>>(values: &[S]) -> Result<(Vec<i32>, Vec<i32>), String> {
    let (mut inc, mut exc) = (Vec::new(), Vec::new());
    for v in values {
        let v = v.as_ref().trim();
        let (negated, name) = match v.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, v),
        };
        let role = FileRole::parse(name).ok_or_else(|| {
            format!(
                "unknown role '{name}' (expected one of: {})",
                FileRole::ALL.map(FileRole::name).join(", ")
            )
        })?;
        let wire = to_wire(role) as i32;
        if negated {
            exc.push(wire)
        } else {
            inc.push(wire)
        }
    }
    Ok((inc, exc))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_role_round_trips_and_filters_parse() {
        for r in FileRole::ALL {
            assert_eq!(from_wire(to_wire(r) as i32), Some(r));
        }
        assert_eq!(from_wire(pb::FileRole::Unspecified as i32), None);
        assert_eq!(from_wire(999), None);
        let (inc, exc) = parse_filter(&["source", "!tests"]).unwrap();
        assert_eq!(inc, [pb::FileRole::Source as i32]);
        assert_eq!(exc, [pb::FileRole::Test as i32]);
        assert!(
            parse_filter(&["sauce"])
                .unwrap_err()
                .contains("unknown role 'sauce'")
        );
    }
}
