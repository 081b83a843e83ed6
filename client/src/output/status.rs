//! The daemon and the registered repositories: `patina daemon status`, `patina repos`,
//! `patina status` (memory by component, languages, skipped files, embeddings, freshness).

use anyhow::Result;
use patina_core::paths::printable_path;
use patina_proto::v1 as pb;
use serde_json::json;

use crate::output::freshness::{freshness_json, freshness_line};
use crate::output::units::{ago, human_bytes, human_duration_ms};

pub(crate) fn print_health(h: &pb::CheckResponse) {
    outln!(
        "patinad {} running: pid {}, up {}{}, {} resident, socket {}{}",
        h.version,
        h.pid,
        human_duration_ms(h.uptime_ms),
        if h.restarts_in_place > 0 {
            " since restarting in place"
        } else {
            ""
        },
        human_bytes(h.rss_bytes),
        h.socket,
        if h.socket_activated {
            " (socket-activated)"
        } else {
            ""
        }
    );
}

/// `"memory": {budget_bytes, rss_bytes, parts: [{component, bytes, limit_bytes, estimated}]}`.
fn memory_json(h: &pb::CheckResponse) -> serde_json::Value {
    json!({
        "budget_bytes": h.memory_budget_bytes,
        "rss_bytes": h.rss_bytes,
        "parts": h.memory.iter().map(|p| json!({
            "component": p.component, "bytes": p.bytes, "limit_bytes": p.limit_bytes,
            "estimated": p.estimated,
        })).collect::<Vec<_>>(),
    })
}

/// Resident memory by component, against the `[daemon] memory_mb` budget.
fn print_memory(h: &pb::CheckResponse) {
    if h.memory.is_empty() {
        return;
    }
    outln!(
        "memory: {} resident of a {} budget ([daemon] memory_mb)",
        human_bytes(h.rss_bytes),
        human_bytes(h.memory_budget_bytes)
    );
    for p in &h.memory {
        let limit = if p.limit_bytes > 0 {
            format!(" (caps within it: {})", human_bytes(p.limit_bytes))
        } else {
            String::new()
        };
        let est = if p.estimated { "~" } else { "" };
        outln!(
            "  {:>10}  {}{}",
            format!("{est}{}", human_bytes(p.bytes)),
            p.component,
            limit
        );
    }
}

fn repo_json(r: &pb::RepoInfo) -> serde_json::Value {
    json!({
        "id": r.id, "name": r.name, "root": r.root, "files": r.files, "chunks": r.chunks,
        "skipped": r.skipped.iter().map(|s| json!({"reason": s.reason, "files": s.files, "examples": s.examples})).collect::<Vec<_>>(),
        "languages": r.languages,
        "last_indexed_unix_ms": r.last_indexed_unix_ms,
        "last_index_ms": r.last_index_ms,
        "indexing": r.indexing,
        "progress": r.progress.as_ref().map(|p| json!({"files_done": p.files_done, "files_total": p.files_total, "chunks": p.chunks,
                                                         "eta_ms": p.eta_known.then_some(p.eta_ms)})),
        "static_eta": r.static_eta.as_ref().map(stage_json),
        "embed_eta": r.embed_eta.as_ref().map(stage_json),
        "last_error": r.last_error,
        "vectors": r.vectors,
        "embed_backlog": r.embed_backlog,
        "static_vectors": r.static_vectors,
        "message_backlog": r.message_backlog,
        "chunk_digest": r.chunk_digest,
        "freshness": r.freshness.as_ref().map(freshness_json),
    })
}

pub(crate) fn print_repos(list: &pb::ListResponse, json: bool) -> Result<()> {
    if json {
        let v: Vec<_> = list.repos.iter().map(repo_json).collect();
        outln!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    if list.repos.is_empty() {
        outln!("no repositories registered; add one with `patina add PATH`");
    }
    for r in &list.repos {
        outln!(
            "{}  {}  {}  {} files, {} chunks",
            r.id,
            r.name,
            r.root,
            r.files,
            r.chunks
        );
    }
    Ok(())
}

pub(crate) fn print_status(
    h: &pb::CheckResponse,
    list: &pb::ListResponse,
    json: bool,
) -> Result<()> {
    if json {
        let v = json!({
            "daemon": {"version": h.version, "protocol": h.protocol, "pid": h.pid, "uptime_ms": h.uptime_ms,
                        "rss_bytes": h.rss_bytes, "socket": h.socket, "data_dir": h.data_dir, "socket_activated": h.socket_activated,
                        "restarts_in_place": h.restarts_in_place,
                        "semantic_on": h.semantic_on, "semantic": h.semantic, "embeddings_computed": h.embeddings_computed,
                        "memory": memory_json(h),
                        "team": {"store": h.team_store, "trouble": h.team_trouble, "embeddings_from_team": h.embeddings_from_team}},
            "repos": list.repos.iter().map(repo_json).collect::<Vec<_>>(),
        });
        outln!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    print_health(h);
    print_memory(h);
    outln!("state in {}", h.data_dir);
    outln!("semantic search {}", h.semantic);
    if !h.team_store.is_empty() {
        match h.team_trouble.as_str() {
            "" => outln!(
                "team store {}: {} vectors taken from it",
                h.team_store,
                h.embeddings_from_team
            ),
            why => outln!(
                "team store {}: failing ({why}); local search is unaffected",
                h.team_store
            ),
        }
    }
    if list.repos.is_empty() {
        outln!("\nno repositories registered; add one with `patina add PATH`");
    }
    for r in &list.repos {
        outln!("\n{} ({})  {}", r.name, r.id, r.root);
        outln!(
            "  {} files, {} chunks; last indexed {} (took {})",
            r.files,
            r.chunks,
            ago(r.last_indexed_unix_ms),
            human_duration_ms(r.last_index_ms)
        );
        if !r.languages.is_empty() {
            let mut langs: Vec<_> = r.languages.iter().collect();
            langs.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            let s: Vec<String> = langs.iter().map(|(l, n)| format!("{l} {n}")).collect();
            outln!("  languages: {}", s.join(", "));
        }
        for s in &r.skipped {
            let ex = if s.examples.is_empty() {
                String::new()
            } else {
                let ex: Vec<_> = s.examples.iter().map(|e| printable_path(e)).collect();
                format!(" (e.g. {})", ex.join(", "))
            };
            outln!("  skipped {}: {}{}", s.reason, s.files, ex);
        }
        if h.semantic_on {
            if r.embed_backlog > 0 && r.static_vectors > 0 {
                outln!(
                    "  embeddings: {} of {} chunks, {} waiting ({} with a static vector meanwhile)",
                    r.vectors,
                    r.chunks,
                    r.embed_backlog,
                    r.static_vectors
                );
            } else if r.embed_backlog > 0 {
                outln!(
                    "  embeddings: {} of {} chunks, {} waiting",
                    r.vectors,
                    r.chunks,
                    r.embed_backlog
                );
            } else {
                outln!("  embeddings: {} chunks", r.vectors);
            }
        }
        for (stage, s) in [
            ("static vectors", &r.static_eta),
            ("model vectors", &r.embed_eta),
        ] {
            if let Some(s) = s {
                outln!("  {stage}: {}", stage_line(s));
            }
        }
        if let Some(p) = &r.progress {
            outln!(
                "  indexing: {}/{} files, {} chunks written{}",
                p.files_done,
                p.files_total,
                p.chunks,
                round_eta(p).map(|e| format!(", {e}")).unwrap_or_default()
            );
        }
        if let Some(f) = &r.freshness {
            outln!("  {}", freshness_line(f));
        }
        if !r.last_error.is_empty() {
            outln!("  last error: {}", r.last_error);
        }
    }
    Ok(())
}

fn stage_json(s: &pb::StageEta) -> serde_json::Value {
    json!({"left": s.left, "per_sec": (s.per_sec > 0.0).then_some(s.per_sec),
           "eta_ms": (s.per_sec > 0.0 && s.waiting.is_empty()).then_some(s.eta_ms),
           "waiting": (!s.waiting.is_empty()).then_some(&s.waiting)})
}

/// One background stage for `patina status` and `add`: "148,766 chunks left, ~31m at 80/s".
pub(crate) fn stage_line(s: &pb::StageEta) -> String {
    let mut line = format!("{} chunks left", s.left);
    if !s.waiting.is_empty() {
        line.push_str(&format!(" ({})", s.waiting));
    } else if s.per_sec > 0.0 {
        line.push_str(&format!(
            ", ~{} at {:.0} chunks/s",
            human_duration_ms(s.eta_ms),
            s.per_sec
        ));
    } else {
        line.push_str(", time left not known yet");
    }
    line
}

/// "~1m20s left" for a running round, once it has a pace.
pub(crate) fn round_eta(p: &pb::IndexProgress) -> Option<String> {
    p.eta_known
        .then(|| format!("~{} left", human_duration_ms(p.eta_ms)))
}
