//! `patina repair`: what each index's audit found, what was repaired, what remains.

use anyhow::Result;
use patina_proto::v1 as pb;
use serde_json::json;

fn audit_json(a: &pb::IndexAudit) -> serde_json::Value {
    json!({"orphan_chunks": a.orphan_chunks, "dangling_records": a.dangling_records,
           "stray_docs": a.stray_docs, "missing_docs": a.missing_docs, "vanished_files": a.vanished_files})
}

fn audit_clean(a: &pb::IndexAudit) -> bool {
    *a == pb::IndexAudit::default()
}

fn audit_text(a: &pb::IndexAudit) -> String {
    let parts: Vec<String> = [
        (a.orphan_chunks, "orphan chunks"),
        (
            a.dangling_records,
            "file records pointing at missing chunks",
        ),
        (a.stray_docs, "stray lexical documents"),
        (a.missing_docs, "chunks missing from the lexical index"),
        (a.vanished_files, "records of files gone from disk"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    if parts.is_empty() {
        "consistent".into()
    } else {
        parts.join(", ")
    }
}

/// Print `patina repair`'s reports; returns whether every index is (now) consistent.
pub(crate) fn print_repair(resp: &pb::RepairResponse, check: bool, json: bool) -> Result<bool> {
    let mut ok = true;
    let mut out = Vec::new();
    for r in &resp.reports {
        let found = r.found.unwrap_or_default();
        let remaining = r.remaining;
        let clean = match &remaining {
            Some(rem) => audit_clean(rem),
            None => audit_clean(&found),
        };
        ok &= clean;
        let repo = r.repo.clone().unwrap_or_default();
        if json {
            out.push(
                json!({"id": repo.id, "name": repo.name, "root": repo.root, "chunks": repo.chunks,
                            "found": audit_json(&found), "repaired": r.repaired,
                            "remaining": remaining.as_ref().map(audit_json), "consistent": clean}),
            );
            continue;
        }
        let mut line = format!("{}  {}: {}", repo.name, repo.root, audit_text(&found));
        match &remaining {
            Some(rem) if audit_clean(rem) => line.push_str("; repaired"),
            Some(rem) => line.push_str(&format!("; after repair: {}", audit_text(rem))),
            None if !audit_clean(&found) && check => line.push_str("; `patina repair` fixes it"),
            None => {}
        }
        outln!("{line}");
    }
    if json {
        outln!("{}", serde_json::to_string_pretty(&out)?);
    } else if resp.reports.is_empty() {
        outln!("no repositories registered");
    }
    Ok(ok)
}
