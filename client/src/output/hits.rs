//! Search hits (`patina q`): ripgrep-like lines for people (`path:start-end` first, colour only on
//! a terminal), `--vimgrep`, `-A/-B/-C` lines around each hit's best line, and JSON Lines
//! (`--json`).

use std::io::Write;
use std::path::Path;

use anyhow::Result;
use patina_core::paths::{printable_path, printable_text};
use patina_proto::kinds::{self, OracleStatus};
use patina_proto::v1 as pb;
use serde_json::json;

use crate::output::freshness::{freshness_json, freshness_line};
use crate::output::paths::{display_path, shown_path};
use crate::output::style::stdout_style;
use crate::output::units::ymd;

/// `--vimgrep`: `path:line:column:text` per hit, at the line of its snippet (the chunk) that
/// contains the most distinct words of the query (the first line when none does); the column is
/// that line's first match, 1-based.
pub(crate) fn print_vimgrep(resp: &pb::QueryResponse, cwd: &Path, query: &str) {
    let words = query_words(query);
    for h in &resp.hits {
        if h.note.is_some() {
            continue;
        }
        let (line, col, text) = best_line(&h.snippet, &words);
        outln!(
            "{}:{}:{}:{}",
            shown_path(h, cwd),
            h.start_line + line as u32,
            col,
            text
        );
    }
}

/// The words of a query a hit's lines are matched against (`--vimgrep`, `-A/-B/-C`).
pub(crate) fn query_words(query: &str) -> Vec<String> {
    query
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| w.len() >= 2)
        .map(str::to_lowercase)
        .collect()
}

/// The file line (1-based) of `hit` that best matches `words`: the line of its snippet with the
/// most distinct query words, else its first line.
pub(crate) fn best_hit_line(hit: &pb::Hit, words: &[String]) -> u32 {
    hit.start_line + best_line(&hit.snippet, words).0 as u32
}

/// Lines of a file around a hit's best-matching line (`-A/-B/-C`), as read from the daemon.
pub(crate) struct Around {
    /// File line of the first line of `text`.
    pub start_line: u32,
    /// The best-matching line, within `start_line ..= start_line + lines - 1`.
    pub best_line: u32,
    pub text: String,
}

/// The (0-based index, 1-based column, text) of the line of `snippet` matching most `words`.
fn best_line<'a>(snippet: &'a str, words: &[String]) -> (usize, usize, &'a str) {
    let mut best = (0, 1, snippet.lines().next().unwrap_or(""));
    let mut best_score = 0;
    for (i, line) in snippet.lines().enumerate() {
        let lower = line.to_lowercase();
        let found: Vec<usize> = words
            .iter()
            .filter_map(|w| lower.find(w.as_str()))
            .collect();
        let score = found.len();
        if score > best_score {
            best_score = score;
            let col = found.iter().min().map_or(1, |c| c + 1);
            best = (i, col, line);
        }
    }
    best
}

/// `--json`: JSON Lines, as ripgrep's — one `{"type":"hit",…}` object per hit, best first, then
/// one `{"type":"summary",…}` with what the query as a whole reported (oracles, notices,
/// freshness, timing). Each line is a complete JSON document, so a consumer can stream them and a
/// reader cut short by `head` still holds whole hits.
fn print_hits_json(
    resp: &pb::QueryResponse,
    cwd: &Path,
    around: Option<&[Option<Around>]>,
) -> Result<()> {
    for (i, h) in resp.hits.iter().enumerate() {
        let mut v = json!({
            "type": "hit",
            "rank": i + 1,
            "path": display_path(h, cwd),
            "repo_path": h.path,
            "repo_root": h.repo_root,
            "repo_id": h.repo_id,
            "start_line": h.start_line,
            "end_line": h.end_line,
            "symbol": h.symbol,
            "kind": h.kind,
            "parent": h.parent,
            "language": h.language,
            "role": patina_proto::roles::from_wire(h.role).map(|r| r.name()),
            "score": h.score,
            "oracles": h.provenance.iter().map(|p| json!({"oracle": kinds::oracle_name(p.oracle), "rank": p.rank, "score": p.score})).collect::<Vec<_>>(),
            "snippet": h.snippet,
            "blame": h.blame.as_ref().map(blame_json),
            "licence": (!h.licence.is_empty()).then_some(&h.licence),
            "licence_source": (!h.licence_source.is_empty()).then_some(&h.licence_source),
            "published": h.published.as_ref().map(|p| json!({"remote": p.remote, "name": p.name, "commit": p.commit})),
        });
        if let Some(a) = around.and_then(|a| a.get(i)).and_then(Option::as_ref) {
            v["context"] =
                json!({"start_line": a.start_line, "best_line": a.best_line, "text": a.text});
        }
        outln!("{v}");
    }
    let oracles: Vec<_> = resp
        .oracles
        .iter()
        .map(|o| json!({"oracle": kinds::oracle_name(o.oracle), "status": kinds::status_name(o.status), "hits": o.hits, "took_us": o.took_us, "message": o.message, "weight": o.weight, "static_hits": o.static_hits}))
        .collect();
    let freshness: Vec<_> = resp.freshness.iter().map(freshness_json).collect();
    // The oracles this answer lacks (timed out or failed): best effort, named.
    let degraded: Vec<&str> = resp
        .oracles
        .iter()
        .filter(|o| {
            matches!(
                kinds::status_of(o.status),
                Some(OracleStatus::Timeout | OracleStatus::Error)
            )
        })
        .map(|o| kinds::oracle_name(o.oracle))
        .collect();
    let summary = json!({"type": "summary", "hits": resp.hits.len(), "oracles": oracles, "degraded": degraded, "took_us": resp.took_us, "notices": resp.notices, "remedies": patina_proto::kinds::remedies(&resp.remedies).iter().map(|r| r.code()).collect::<Vec<_>>(), "freshness": freshness, "intent": kinds::intent_name(resp.intent), "query_id": resp.query_id, "cached": resp.cached});
    outln!("{summary}");
    Ok(())
}

/// Hits for a person: `path:start-end  kind symbol  [oracle#rank …]`, then the snippet — or,
/// with `around` (`-A/-B/-C`), the file's lines around the hit's best-matching line, numbered as
/// ripgrep does (`12:` the matching line, `11-` context).
pub(crate) fn print_hits(
    resp: &pb::QueryResponse,
    cwd: &Path,
    json: bool,
    files: bool,
    around: Option<&[Option<Around>]>,
) -> Result<()> {
    if json {
        return print_hits_json(resp, cwd, around);
    }
    let mut out = std::io::stdout().lock();
    for n in crate::daemon::notice_lines(&resp.notices, &resp.remedies) {
        eprintln!("patina: {n}");
    }
    let behind: Vec<&pb::Freshness> = resp
        .freshness
        .iter()
        .filter(|f| !f.fresh && (f.pending_files != 0 || f.indexed_commit != f.head_commit))
        .collect();
    // A few are named one by one; hundreds (an `--all` query while they catch up) are counted.
    const NAMED: usize = 3;
    for f in behind.iter().take(if behind.len() > NAMED {
        NAMED - 1
    } else {
        NAMED
    }) {
        eprintln!("patina: {} is {}", f.repo_name, freshness_line(f));
    }
    if behind.len() > NAMED {
        eprintln!(
            "patina: … and {} more repositories are behind (`patina status` lists them)",
            behind.len() - (NAMED - 1)
        );
    }
    // "unavailable" oracles already explain themselves in a notice.
    for o in resp.oracles.iter().filter(|o| {
        !matches!(
            kinds::status_of(o.status),
            Some(OracleStatus::Ok | OracleStatus::Unavailable)
        )
    }) {
        eprintln!(
            "patina: oracle {} {}: {}",
            kinds::oracle_name(o.oracle),
            kinds::status_name(o.status),
            o.message
        );
    }
    let st = stdout_style();
    for (i, h) in resp.hits.iter().enumerate() {
        let shown = shown_path(h, cwd);
        let loc = format!(
            "{}:{}",
            if h.note.is_some() || h.published.is_some() {
                st.path(&shown)
            } else {
                st.link(&Path::new(&h.repo_root).join(&h.path), &st.path(&shown))
            },
            st.lines(&format!("{}-{}", h.start_line, h.end_line))
        );
        let (symbol, parent) = (printable_path(&h.symbol), printable_path(&h.parent));
        let what = if h.symbol.is_empty() {
            st.dim(&h.kind)
        } else if h.parent.is_empty() {
            format!("{} {}", st.dim(&h.kind), st.symbol(&symbol))
        } else {
            format!(
                "{} {}{}",
                st.dim(&h.kind),
                st.dim(&format!("{parent}::")),
                st.symbol(&symbol)
            )
        };
        let prov: Vec<String> = h
            .provenance
            .iter()
            .map(|p| format!("{}#{}", kinds::oracle_name(p.oracle), p.rank))
            .collect();
        writeln!(
            out,
            "{loc}  {what}  {}",
            st.dim(&format!("[{}]", prov.join(" ")))
        )?;
        if let Some(b) = &h.blame {
            writeln!(out, "    {}", st.dim(&blame_line(b)))?;
        }
        if let Some(a) = around.and_then(|a| a.get(i)).and_then(Option::as_ref) {
            for (k, line) in a.text.lines().enumerate() {
                let n = a.start_line + k as u32;
                let sep = if n == a.best_line { ':' } else { '-' };
                let line: String = line.chars().take(200).collect();
                writeln!(
                    out,
                    "    {}{sep}{}",
                    st.lines(&n.to_string()),
                    printable_text(line.trim_end())
                )?;
            }
        } else if !files {
            for line in h.snippet.lines() {
                let line: String = line.chars().take(160).collect();
                writeln!(out, "    {}", printable_text(line.trim_end()))?;
            }
        }
    }
    Ok(())
}

/// A hit's blame (`--blame`) as JSON.
fn blame_json(b: &pb::Blame) -> serde_json::Value {
    json!({
        "commit": b.commit, "short": b.short, "time_unix": b.time_unix,
        "date": if b.commit.is_empty() { String::new() } else { ymd(b.time_unix) },
        "author": b.author, "subject": b.subject, "lines": b.lines, "commits": b.commits,
    })
}

/// One line: "last changed 2026-01-02 abc1234567 Ann: subject (3 of its lines; 2 commits)".
fn blame_line(b: &pb::Blame) -> String {
    if b.commit.is_empty() {
        return format!("last changed: not committed yet ({} lines)", b.lines);
    }
    format!(
        "last changed {} {} {}: {} ({} lines{})",
        ymd(b.time_unix),
        b.short,
        b.author,
        b.subject,
        b.lines,
        if b.commits > 1 {
            format!("; {} commits in range", b.commits)
        } else {
            String::new()
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vimgrep_picks_the_line_with_most_query_words() {
        let words = vec!["parse".to_string(), "args".to_string()];
        let snippet = "/// Options.\npub fn parse_args(args: &[String]) {\n    let x = 1;";
        assert_eq!(
            best_line(snippet, &words),
            (1, 8, "pub fn parse_args(args: &[String]) {")
        );
        assert_eq!(best_line("a\nb", &words), (0, 1, "a"));
    }
}
