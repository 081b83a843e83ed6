//! `patina log` (commits) and `patina related` (files that change together).

use std::io::Write;

use anyhow::Result;
use patina_core::paths::printable_path;
use patina_proto::v1 as pb;
use serde_json::json;

use crate::output::units::ymd;

pub(crate) fn print_log(resp: &pb::LogResponse, json: bool) -> Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        let v = json!({
            "commits": resp.commits.iter().map(|c| json!({
                "repo_id": c.repo_id, "repo": c.repo_name, "hash": c.hash, "author": c.author,
                "time_unix": c.time_unix, "date": ymd(c.time_unix), "subject": c.subject,
                "body": c.body, "files": c.files, "files_total": c.files_total, "score": c.score,
            })).collect::<Vec<_>>(),
            "searched": resp.searched,
            "notices": resp.notices,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(());
    }
    for n in crate::daemon::notice_lines(&resp.notices, &resp.remedies) {
        eprintln!("note: {n}");
    }
    for c in &resp.commits {
        writeln!(
            out,
            "{} {} {}  {}",
            &c.hash[..c.hash.len().min(12)],
            ymd(c.time_unix),
            c.author,
            c.subject
        )?;
        let more = c.files_total as usize - c.files.len().min(c.files_total as usize);
        let mut files = c.files.join(" ");
        if more > 0 {
            files.push_str(&format!(" (+{more} more)"));
        }
        if !files.is_empty() {
            writeln!(out, "    {files}")?;
        }
    }
    Ok(())
}

pub(crate) fn print_related(resp: &pb::RelatedResponse, json: bool) -> Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        let v = json!({
            "repo_id": resp.repo_id, "path": resp.path, "commits": resp.commits,
            "files": resp.files.iter().map(|f| json!({
                "path": f.path, "support": f.support, "confidence": f.confidence,
            })).collect::<Vec<_>>(),
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(());
    }
    if resp.files.is_empty() {
        eprintln!(
            "no file changes together with {} ({} commits touched it)",
            resp.path, resp.commits
        );
    }
    for f in &resp.files {
        writeln!(
            out,
            "{}\t{} of {} commits ({:.0}%)",
            printable_path(&f.path),
            f.support,
            resp.commits,
            f.confidence * 100.0
        )?;
    }
    Ok(())
}
