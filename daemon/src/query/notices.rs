//! The notices an answer carries: an oracle that could not answer, repositories whose answer may
//! be partial (still indexing or embedding).

use anyhow::Result;
use patina_core::{OracleId, OracleStatus};

use crate::query::request::OracleReport;

pub(crate) fn verb(status: OracleStatus) -> &'static str {
    match status {
        OracleStatus::Timeout => "timed out",
        _ => "failed",
    }
}

/// The notice of an oracle left out of an answer: which one, what happened, what it costs.
pub(crate) fn degraded_notice(id: OracleId, status: OracleStatus, message: &str) -> String {
    format!(
        "the {} oracle {} ({message}): this answer lacks its results; ask with `complete` \
         (`patina q --complete`) to get an error instead",
        id.name(),
        verb(status)
    )
}

/// Repositories named one by one in an answer's notices; past this, one notice names the first
/// few and counts the rest (an `--all` query while hundreds of repositories catch up after a
/// restart would otherwise print hundreds of lines before its answer).
const NAMED_REPOSITORIES: usize = 3;

/// The notices for repositories whose answer may be partial: `partial` = (name, chunks not
/// embedded, chunks), `indexing` = (name, files done, files found).
pub(crate) fn repository_notices(
    partial: &[(String, u64, u64)],
    indexing: &[(String, u64, u64)],
) -> Vec<String> {
    let some = |names: &mut dyn Iterator<Item = &String>| {
        let first: Vec<&str> = names.take(NAMED_REPOSITORIES).map(String::as_str).collect();
        format!("{}, …", first.join(", "))
    };
    let mut out = Vec::new();
    if partial.len() > NAMED_REPOSITORIES {
        let (backlog, chunks) = partial.iter().fold((0, 0), |(b, c), p| (b + p.1, c + p.2));
        out.push(format!(
            "{} repositories ({}): {backlog} of {chunks} chunks not embedded yet; semantic results are partial",
            partial.len(),
            some(&mut partial.iter().map(|p| &p.0))
        ));
    } else {
        out.extend(partial.iter().map(|(name, backlog, chunks)| {
            format!("{name}: {backlog} of {chunks} chunks not embedded yet; semantic results are partial")
        }));
    }
    if indexing.len() > NAMED_REPOSITORIES {
        out.push(format!(
            "{} repositories are being indexed ({}); results may be incomplete",
            indexing.len(),
            some(&mut indexing.iter().map(|p| &p.0))
        ));
    } else {
        out.extend(indexing.iter().map(|(name, done, total)| {
            if *total == 0 {
                // The round has not listed the files yet (a restart checking what changed).
                format!("{name} is being checked for changes; results may be incomplete")
            } else {
                format!("{name} is being indexed ({done}/{total} files); results may be incomplete")
            }
        }));
    }
    out
}

/// An error naming the oracles that timed out or failed, when any did (a complete answer was
/// asked for).
pub(crate) fn refuse_incomplete(reports: &[OracleReport]) -> Result<()> {
    let failed: Vec<String> = reports
        .iter()
        .filter(|r| matches!(r.status, OracleStatus::Timeout | OracleStatus::Error))
        .map(|r| {
            format!(
                "the {} oracle {}: {}",
                r.oracle.name(),
                verb(r.status),
                r.message
            )
        })
        .collect();
    if !failed.is_empty() {
        return Err(crate::query::oracles::Incomplete(format!(
            "incomplete answer refused (a complete one was asked for): {}",
            failed.join("; ")
        ))
        .into());
    }
    Ok(())
}

#[cfg(test)]
mod notice_tests {
    use super::repository_notices;

    fn repos(n: usize) -> Vec<(String, u64, u64)> {
        (0..n).map(|i| (format!("repo{i}"), 10, 100)).collect()
    }

    #[test]
    fn a_few_repositories_are_named_one_by_one() {
        let out = repository_notices(&repos(2), &repos(3));
        assert_eq!(out.len(), 5);
        assert_eq!(
            out[0],
            "repo0: 10 of 100 chunks not embedded yet; semantic results are partial"
        );
        assert_eq!(
            out[4],
            "repo2 is being indexed (10/100 files); results may be incomplete"
        );
    }

    #[test]
    fn a_round_that_has_not_counted_its_files_says_it_is_checking() {
        let out = repository_notices(&[], &[("flask".into(), 0, 0)]);
        assert_eq!(
            out,
            ["flask is being checked for changes; results may be incomplete"]
        );
    }

    #[test]
    fn many_repositories_make_one_notice_each_kind() {
        let out = repository_notices(&repos(216), &repos(154));
        assert_eq!(
            out,
            vec![
                "216 repositories (repo0, repo1, repo2, …): 2160 of 21600 chunks not embedded yet; semantic results are partial",
                "154 repositories are being indexed (repo0, repo1, repo2, …); results may be incomplete",
            ]
        );
        assert!(repository_notices(&[], &[]).is_empty());
    }
}
