//! Session names and tags: what is valid, and the name a session gets when none is given.

use std::collections::BTreeMap;

use anyhow::Result;

use super::{MAX_NAME_LEN, MAX_TAG_LEN, MAX_TAGS, invalid};
use patina_index::store::SessionRecord;

/// Names are 1–64 characters of `A-Z a-z 0-9 . _ -`, starting with a letter or digit.
pub(super) fn validate_name(name: &str) -> Result<()> {
    let ok = name.len() <= MAX_NAME_LEN
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(invalid(format!(
            "invalid session name '{name}': use 1-{MAX_NAME_LEN} letters, digits, '.', '_' or '-', \
             starting with a letter or digit"
        )))
    }
}

pub(super) fn validate_tags(tags: &[String]) -> Result<Vec<String>> {
    if tags.len() > MAX_TAGS {
        return Err(invalid(format!(
            "{} tags given; at most {MAX_TAGS}",
            tags.len()
        )));
    }
    let mut out = Vec::new();
    for t in tags {
        let t = t.trim();
        if t.is_empty() {
            continue;
        }
        if t.len() > MAX_TAG_LEN {
            return Err(invalid(format!(
                "tag '{t}' is longer than {MAX_TAG_LEN} bytes"
            )));
        }
        if !out.iter().any(|o| o == t) {
            out.push(t.to_string());
        }
    }
    Ok(out)
}

/// `YYYYMMDD-HHMMSS` (UTC) of now, with `-2`, `-3`, … when taken.
pub(super) fn generated_name(taken: &BTreeMap<String, SessionRecord>) -> String {
    let secs = crate::process::clock::now_unix_ms().max(0) / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days);
    let base = format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    );
    let mut name = base.clone();
    let mut n = 2;
    while taken.contains_key(&name) {
        name = format!("{base}-{n}");
        n += 1;
    }
    name
}

/// Days since 1970-01-01 to a (year, month, day) of the proleptic Gregorian calendar.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::services::sessions::search::is_topic_word;

    #[test]
    fn dates_and_names() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert!(validate_name("storage-choice_2.b").is_ok());
        for bad in ["", "-x", "a b", "a/b", "session:x", &"x".repeat(65)] {
            assert!(validate_name(bad).is_err(), "{bad:?}");
        }
        assert!(is_topic_word("sled") && !is_topic_word("the") && !is_topic_word("x"));
    }
}
