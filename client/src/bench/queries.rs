//! The query set (JSON Lines) and the oracle subsets it is evaluated with, one row each.

use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::Deserialize;

#[derive(Deserialize)]
pub(crate) struct Query {
    #[serde(default)]
    pub(crate) id: String,
    pub(crate) query: String,
    pub(crate) relevant: Vec<Relevant>,
    #[serde(default)]
    pub(crate) kind: String,
    #[serde(default)]
    pub(crate) repo: Option<String>,
    #[serde(default)]
    pub(crate) commit: Option<String>,
}

#[derive(Deserialize)]
pub(crate) struct Relevant {
    pub(crate) path: String,
}

/// One oracle subset (one row).
pub(crate) struct Subset {
    pub(crate) name: String,
    pub(crate) oracles: Vec<String>,
}

impl Subset {
    pub(crate) fn uses_semantic(&self) -> bool {
        self.oracles.is_empty() || self.oracles.iter().any(|o| o == "semantic")
    }

    pub(crate) fn uses_history(&self) -> bool {
        self.oracles.iter().any(|o| o == "history")
    }
}

pub(crate) fn subsets(args: &[String]) -> Vec<Subset> {
    if args.is_empty() {
        return vec![Subset {
            name: "all".into(),
            oracles: Vec::new(),
        }];
    }
    args.iter()
        .map(|s| {
            let oracles: Vec<String> = s
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty() && *s != "all")
                .map(String::from)
                .collect();
            Subset {
                name: if oracles.is_empty() {
                    "all".into()
                } else {
                    oracles.join("+")
                },
                oracles,
            }
        })
        .collect()
}

pub(crate) fn read_queries(path: &Path, max: Option<usize>) -> Result<Vec<Query>> {
    read_jsonl(path, max, "a query")
}

/// The records of a JSON Lines file (blank lines skipped), at most `max`; an error names the line
/// that is not `what`, or says the file holds none.
pub(crate) fn read_jsonl<T: serde::de::DeserializeOwned>(
    path: &Path,
    max: Option<usize>,
    what: &str,
) -> Result<Vec<T>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let q: T = serde_json::from_str(line)
            .with_context(|| format!("{}:{}: not {what}", path.display(), i + 1))?;
        out.push(q);
    }
    if let Some(m) = max {
        out.truncate(m);
    }
    if out.is_empty() {
        bail!("{} holds no records", path.display());
    }
    Ok(out)
}
