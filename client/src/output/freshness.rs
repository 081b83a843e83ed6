//! How current a repository's index is (`Freshness`), as a line and as JSON.

use patina_proto::v1 as pb;
use serde_json::json;

use crate::output::units::human_duration_ms;

pub(crate) fn freshness_json(f: &pb::Freshness) -> serde_json::Value {
    json!({
        "repo_id": f.repo_id, "repo": f.repo_name, "indexed_commit": f.indexed_commit, "head_commit": f.head_commit,
        "pending_files": f.pending_files, "embed_backlog": f.embed_backlog, "last_indexed_unix_ms": f.last_indexed_unix_ms,
        "age_ms": f.age_ms, "indexing": f.indexing, "watch": f.watch, "fresh": f.fresh,
    })
}

/// One line: "fresh", or what is behind.
pub(crate) fn freshness_line(f: &pb::Freshness) -> String {
    let short = |c: &str| {
        if c.is_empty() {
            "-".to_string()
        } else {
            c.chars().take(10).collect()
        }
    };
    let mut parts = vec![format!(
        "indexed at {} (HEAD {})",
        short(&f.indexed_commit),
        short(&f.head_commit)
    )];
    match f.pending_files {
        -1 => parts.push("reconciling".into()),
        0 => {}
        n => parts.push(format!("{n} changed files pending")),
    }
    if f.embed_backlog > 0 {
        parts.push(format!("{} chunks to embed", f.embed_backlog));
    }
    parts.push(format!("updated {} ago", human_duration_ms(f.age_ms)));
    parts.push(f.watch.clone());
    format!(
        "{}: {}",
        if f.fresh { "fresh" } else { "behind" },
        parts.join(", ")
    )
}
