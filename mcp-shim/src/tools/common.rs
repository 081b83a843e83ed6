//! Helpers the tools share: JSON of daemon answers, the repository a call is about, and short
//! renderings (freshness, ages, previews).

use patina_proto::v1 as pb;
use serde_json::Value;

use crate::state::State;

/// Lines of preview per hit, and characters per preview line.
pub(super) const PREVIEW_LINES: u32 = 6;
const PREVIEW_LINE_CHARS: usize = 160;

/// A prost message as JSON, with `null`s (unset optional messages) removed; enum fields read by
/// name (`patina_proto::kinds::json`).
pub(super) fn to_json<T: serde::Serialize>(msg: &T) -> Value {
    let mut v = serde_json::to_value(msg).unwrap_or(Value::Null);
    prune(&mut v);
    v
}

fn prune(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|_, x| !x.is_null());
            m.values_mut().for_each(prune);
        }
        Value::Array(a) => a.iter_mut().for_each(prune),
        _ => {}
    }
}

/// The repository containing the working directory, when it is registered (agents run their MCP
/// servers in the project they work on): the default `repo`.
pub(super) async fn cwd_repo(state: &State) -> Result<Option<pb::RepoInfo>, String> {
    let repos = repo_list(state).await?.repos;
    let Ok(cwd) = std::env::current_dir().and_then(std::fs::canonicalize) else {
        return Ok(None);
    };
    Ok(repos
        .into_iter()
        .filter(|r| cwd.starts_with(&r.root))
        .max_by_key(|r| r.root.len()))
}

pub(super) async fn repo_list(state: &State) -> Result<pb::ListResponse, String> {
    rpc!(
        state,
        pb::repos_client::ReposClient<_>,
        list,
        pb::ListRequest {}
    )
}

/// The repositories a search covers: `repo` (`*` or `all` = every one), else the working
/// directory's repository when registered, else every one.
pub(super) async fn search_scope(
    state: &State,
    repo: Option<String>,
) -> Result<Vec<String>, String> {
    match repo.as_deref().map(str::trim) {
        Some("*" | "all") => Ok(Vec::new()),
        Some(r) => Ok(vec![r.to_string()]),
        None => Ok(cwd_repo(state).await?.map(|r| r.id).into_iter().collect()),
    }
}

/// The one repository a file tool works in: `repo`, else the working directory's repository,
/// else the only registered one.
pub(super) async fn target_repo(state: &State, repo: Option<String>) -> Result<String, String> {
    if let Some(r) = repo {
        return Ok(r);
    }
    if let Some(r) = cwd_repo(state).await? {
        return Ok(r.id);
    }
    let repos = repo_list(state).await?.repos;
    match repos.as_slice() {
        [] => Err(
            "no repository is registered with Patina; register one from a shell with \
                   `patina add PATH`"
                .into(),
        ),
        [only] => Ok(only.id.clone()),
        many => Err(format!(
            "{} repositories are registered; pass 'repo' with one of: {}",
            many.len(),
            many.iter()
                .map(|r| r.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

fn short_commit(c: &str) -> &str {
    &c[..c.len().min(10)]
}

pub(super) fn human_age(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0 => format!("{ms} ms"),
        1..=119 => format!("{s} s"),
        120..=7199 => format!("{} min", s / 60),
        7200..=172_799 => format!("{} h", s / 3600),
        _ => format!("{} d", s / 86_400),
    }
}

/// One line on how current a repository's index is, from a `Freshness` (as JSON, so fields the
/// daemon adds do not break it).
pub(super) fn freshness_line(f: &Value) -> String {
    let name = f["repo_name"].as_str().unwrap_or("?");
    let mut parts: Vec<String> = Vec::new();
    parts.push(if f["fresh"].as_bool() == Some(true) {
        "fresh".into()
    } else {
        "not fully fresh".into()
    });
    if let Some(c) = f["indexed_commit"].as_str().filter(|c| !c.is_empty()) {
        parts.push(format!("indexed commit {}", short_commit(c)));
    }
    if let Some(age) = f["age_ms"]
        .as_u64()
        .filter(|_| f["last_indexed_unix_ms"].as_i64() > Some(0))
    {
        parts.push(format!("updated {} ago", human_age(age)));
    }
    match f["pending_files"].as_i64() {
        Some(n) if n > 0 => parts.push(format!("{n} changed file(s) pending")),
        Some(n) if n < 0 => parts.push("a full rescan is pending".into()),
        _ => {}
    }
    if f["indexing"].as_bool() == Some(true) {
        parts.push("indexing now".into());
    }
    if let Some(n) = f["embed_backlog"].as_u64().filter(|n| *n > 0) {
        parts.push(format!("{n} chunk(s) not embedded yet"));
    }
    format!("{name}: {}", parts.join(", "))
}

pub(super) fn one_line(s: &str, max: usize) -> String {
    let line = s.lines().next().unwrap_or("").trim();
    if line.chars().count() > max {
        let cut: String = line.chars().take(max).collect();
        format!("{cut}…")
    } else {
        line.to_string()
    }
}

pub(super) fn preview(s: &str) -> String {
    s.lines()
        .take(PREVIEW_LINES as usize)
        .map(|l| {
            if l.chars().count() > PREVIEW_LINE_CHARS {
                let cut: String = l.chars().take(PREVIEW_LINE_CHARS).collect();
                format!("{cut}…")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `YYYY-MM-DD` (UTC) of a unix time in seconds.
pub(super) fn ymd(unix: i64) -> String {
    // Days since 1970-01-01 → civil date (Howard Hinnant's algorithm).
    let z = unix.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// A hit's blame in one line: "last changed 2026-01-02 abc1234567 Ann: subject".
pub(super) fn blame_line(b: &pb::Blame) -> String {
    if b.commit.is_empty() {
        return "last changed: not committed yet".into();
    }
    format!(
        "last changed {} {} {}: {}",
        ymd(b.time_unix),
        b.short,
        b.author,
        one_line(&b.subject, 120)
    )
}

/// The `licence` argument (`MIT,Apache-2.0`) as the SPDX ids the daemon filters by.
pub(super) fn licence_list(arg: Option<crate::tools::args::Str>) -> Vec<String> {
    arg.map(|s| {
        s.0.split(',')
            .map(|id| id.trim().to_string())
            .filter(|id| !id.is_empty())
            .collect()
    })
    .unwrap_or_default()
}

/// Notices as the last lines of a tool's text, where the model reads them, then what it can do
/// about them (the answer's remedies, in an agent's terms).
pub(super) fn notices_text(notices: &[String], remedies: &[i32]) -> String {
    let mut out: String = notices
        .iter()
        .map(|n| format!("-- notice: {n}\n"))
        .collect();
    for r in patina_proto::kinds::remedies(remedies) {
        out.push_str(&format!("-- to do: {}\n", crate::content::for_agent(r)));
    }
    out
}

#[cfg(test)]
mod date_tests {
    #[test]
    fn civil_dates() {
        assert_eq!(super::ymd(0), "1970-01-01");
        assert_eq!(super::ymd(951_782_400), "2000-02-29");
        assert_eq!(super::ymd(1_700_000_000), "2023-11-14");
    }
}
