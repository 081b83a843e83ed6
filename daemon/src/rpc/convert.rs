//! Wire ↔ domain: `patina.v1` messages from and to the daemon's plain Rust types, and errors to
//! gRPC statuses (`UserError` → `NotFound`/`InvalidArgument`, an answer asked complete that an
//! oracle could not complete → `Aborted`, anything else → `Internal`).

use patina_core::FileRole;
use patina_index::{Phase, Progress, Repaired};
use patina_proto::kinds::HitKind;
use patina_proto::v1 as pb;
use patina_retrieve::features::Feature;
use tonic::Status;

use crate::query::context::{Context, Format};
use crate::query::request::{Granularity, HitItem, SearchHit, SearchResponse};
use crate::services::files::Structure;
use crate::services::freshness::Freshness;
use crate::services::sessions::{NoteView, SessionView};
use crate::state::repo::Repo;
use patina_core::UserError;

pub(super) fn status(e: anyhow::Error) -> Status {
    if let Some(i) = e.downcast_ref::<crate::query::oracles::Incomplete>() {
        return Status::aborted(i.0.clone());
    }
    match e.downcast_ref::<UserError>() {
        Some(UserError::NotFound(m)) => Status::not_found(m.clone()),
        Some(UserError::Invalid(m)) => Status::invalid_argument(m.clone()),
        Some(UserError::Unregistered(m)) => {
            let mut s = Status::not_found(m.clone());
            patina_proto::kinds::set_remedy(&mut s, patina_core::Remedy::ListRepos);
            s
        }
        None => {
            tracing::error!("request failed: {e:#}");
            Status::internal(format!("{e:#}"))
        }
    }
}

pub(super) fn progress_pb(p: &Progress, repo: Option<&Repo>) -> pb::IndexProgress {
    let phase = match p.phase {
        Phase::Queued => pb::IndexPhase::Queued,
        Phase::Walking => pb::IndexPhase::Walking,
        Phase::Indexing => pb::IndexPhase::Indexing,
        Phase::Committing => pb::IndexPhase::Committing,
        Phase::Done => pb::IndexPhase::Done,
        Phase::Failed => pb::IndexPhase::Failed,
    };
    let eta = p.eta();
    pb::IndexProgress {
        repo: repo.map(|r| Box::new(repo_pb(r, false))),
        phase: phase as i32,
        files_total: p.files_total,
        files_done: p.files_done,
        files_changed: p.files_changed,
        files_removed: p.files_removed,
        chunks: p.chunks,
        message: p.message.clone(),
        eta_ms: eta.map_or(0, |d| d.as_millis() as u64),
        eta_known: eta.is_some(),
    }
}

pub(super) fn stage_pb(s: crate::services::embedding::stages::Stage) -> pb::StageEta {
    pb::StageEta {
        left: s.left,
        per_sec: s.per_sec.unwrap_or(0.0),
        eta_ms: s.eta.map_or(0, |d| d.as_millis() as u64),
        waiting: s.waiting.unwrap_or_default(),
    }
}

pub(super) fn freshness_pb(f: &Freshness) -> pb::Freshness {
    pb::Freshness {
        repo_id: f.repo_id.clone(),
        repo_name: f.repo_name.clone(),
        indexed_commit: f.indexed_commit.clone().unwrap_or_default(),
        head_commit: f.head_commit.clone().unwrap_or_default(),
        pending_files: f.pending_files.map_or(-1, |n| n as i64),
        embed_backlog: f.embed_backlog as u64,
        last_indexed_unix_ms: f.last_indexed_unix_ms,
        age_ms: f.age_ms(),
        indexing: f.indexing,
        watch: f.watch.clone(),
        fresh: f.is_fresh(),
    }
}

pub(super) fn repo_pb(repo: &Repo, with_progress: bool) -> pb::RepoInfo {
    let rec = repo.record();
    let running = repo.running_job();
    pb::RepoInfo {
        id: rec.id,
        name: rec.name,
        root: rec.root,
        files: rec.files,
        chunks: rec.chunks,
        skipped: rec
            .skipped
            .iter()
            .map(|(reason, n)| pb::SkipCount {
                reason: reason.clone(),
                files: *n,
                examples: rec
                    .skipped_examples
                    .get(reason)
                    .cloned()
                    .unwrap_or_default(),
            })
            .collect(),
        last_indexed_unix_ms: rec.last_indexed_unix_ms,
        indexing: running.is_some(),
        progress: if with_progress {
            running.map(|rx| Box::new(progress_pb(&rx.borrow(), None)))
        } else {
            None
        },
        languages: rec.languages.into_iter().collect(),
        last_error: rec.last_error.unwrap_or_default(),
        last_index_ms: rec.last_index_ms,
        vectors: repo.vector_count() as u64,
        embed_backlog: repo.backlog() as u64,
        freshness: with_progress.then(|| freshness_pb(&Freshness::of(repo))),
        chunk_digest: repo.chunk_digest(),
        message_backlog: repo.message_backlog() as u64,
        static_vectors: repo.provisional_count() as u64,
        static_eta: None,
        embed_eta: None,
    }
}

pub(super) fn audit_pb(a: Repaired) -> pb::IndexAudit {
    pb::IndexAudit {
        orphan_chunks: a.orphan_chunks,
        dangling_records: a.dangling_records,
        stray_docs: a.stray_docs,
        missing_docs: a.missing_docs,
        vanished_files: a.vanished_files,
    }
}

/// A wire granularity; an unknown value is an error that names it.
pub(super) fn granularity(v: i32) -> Result<Granularity, Status> {
    Ok(match pb::Granularity::try_from(v) {
        Ok(pb::Granularity::Chunk) => Granularity::Chunk,
        Ok(pb::Granularity::File) => Granularity::File,
        Ok(pb::Granularity::Module) => Granularity::Module,
        Ok(pb::Granularity::Repo) => Granularity::Repo,
        Ok(pb::Granularity::Doc) => Granularity::Doc,
        Err(_) => {
            return Err(Status::invalid_argument(format!(
                "unknown granularity {}",
                v
            )));
        }
    })
}

/// A wire context format; an unknown value is an error that names it.
pub(super) fn context_format(v: i32) -> Result<Format, Status> {
    Ok(match pb::ContextFormat::try_from(v) {
        Ok(pb::ContextFormat::Xml) => Format::Xml,
        Ok(pb::ContextFormat::Markdown) => Format::Markdown,
        Ok(pb::ContextFormat::Json) => Format::Json,
        Err(_) => {
            return Err(Status::invalid_argument(format!(
                "unknown context format {}",
                v
            )));
        }
    })
}

pub(super) fn query_response(res: SearchResponse) -> pb::QueryResponse {
    let hits = res.hits.into_iter().map(hit_pb).collect();
    pb::QueryResponse {
        hits,
        oracles: res
            .reports
            .into_iter()
            .map(|o| pb::OracleReport {
                oracle: pb::Oracle::from(o.oracle) as i32,
                status: pb::OracleStatus::from(o.status) as i32,
                hits: o.hits as u32,
                took_us: o.took.as_micros() as u64,
                message: o.message,
                weight: o.weight,
                static_hits: o.static_hits as u32,
            })
            .collect(),
        took_us: res.took.as_micros() as u64,
        notices: res.notices,
        freshness: res.freshness.iter().map(freshness_pb).collect(),
        intent: intent_pb(res.intent) as i32,
        query_id: String::new(),
        cached: false,
        // Set by the service (`rpc/search.rs`), which knows the registry.
        remedies: Vec::new(),
    }
}

pub(super) fn blame_pb(b: crate::services::blame::LineBlame) -> pb::Blame {
    let commit = b.commit.unwrap_or_default();
    pb::Blame {
        short: commit.chars().take(10).collect(),
        commit,
        time_unix: b.time_unix,
        author: b.author,
        subject: b.subject,
        lines: b.lines,
        commits: b.commits,
    }
}

pub(super) fn context_response(c: Context) -> pb::ContextResponse {
    pb::ContextResponse {
        text: c.text,
        items: c
            .items
            .into_iter()
            .map(|i| pb::ContextItem {
                r#ref: i.reference,
                why: match i.reason {
                    patina_retrieve::context::Reason::Matched => pb::ContextReason::Matched,
                    patina_retrieve::context::Reason::Located => pb::ContextReason::Located,
                } as i32,
                repo_id: i.repo_id,
                repo_name: i.repo_name,
                repo_root: i.repo_root,
                path: i.path,
                start_line: i.start_line,
                end_line: i.end_line,
                symbols: i.symbols,
                kind: i.kind,
                language: i.language,
                score: i.score,
                oracles: oracles_pb(i.oracles.iter().map(|o| o.as_ref())),
                truncated: i.truncated,
                text: i.text,
                blame: None,
                licence: licence_expr(i.licence.as_ref()),
                licence_source: licence_source(i.licence.as_ref()),
                related: i
                    .related
                    .into_iter()
                    .map(|r| pb::ContextRelated {
                        kind: r.kind.name().into(),
                        r#ref: r.reference(),
                        path: r.path.to_string(),
                        start_line: r.start_line,
                        end_line: r.end_line,
                        symbol: r.symbol,
                        text: r.text,
                    })
                    .collect(),
            })
            .collect(),
        used_tokens: c.used_tokens as u32,
        budget_tokens: c.budget_tokens as u32,
        omitted: c.omitted as u32,
        notices: c.notices,
        query_id: String::new(),
        cached: false,
        remedies: Vec::new(),
    }
}

/// A directory's structure (`Files.ExploreStructure`) of the repository `repo_id`/`repo_name`.
pub(super) fn structure_pb(
    repo_id: String,
    repo_name: String,
    st: Structure,
) -> pb::ExploreResponse {
    pb::ExploreResponse {
        repo_id,
        repo_name,
        path: st.path,
        dirs: st
            .dirs
            .into_iter()
            .map(|d| pb::DirEntry {
                path: d.path,
                files: d.files,
                lines: d.lines,
            })
            .collect(),
        files: st
            .files
            .into_iter()
            .map(|f| pb::FileEntry {
                path: f.path,
                language: f.language.into(),
                lines: f.lines,
                bytes: f.bytes,
                skipped: f.skipped.into(),
            })
            .collect(),
        key_files: st
            .key_files
            .into_iter()
            .map(|k| pb::KeyFile {
                path: k.path,
                role: k.role.into(),
            })
            .collect(),
        total_files: st.total_files,
        total_lines: st.total_lines,
        languages: st.languages.into_iter().collect(),
        truncated: st.truncated,
    }
}

/// Wire roles to [`FileRole`]s; an unknown or unspecified value is an error that names it.
pub(super) fn roles(values: &[i32]) -> Result<Vec<FileRole>, Status> {
    values
        .iter()
        .map(|&v| {
            patina_proto::roles::from_wire(v).ok_or_else(|| {
                Status::invalid_argument(format!(
                    "unknown file role {v} (expected one of: {})",
                    FileRole::ALL.map(FileRole::name).join(", ")
                ))
            })
        })
        .collect()
}

/// The wire's intent.
fn intent_pb(i: patina_retrieve::Intent) -> pb::Intent {
    match i {
        patina_retrieve::Intent::Identifier => pb::Intent::Identifier,
        patina_retrieve::Intent::Implementation => pb::Intent::Implementation,
        patina_retrieve::Intent::Usage => pb::Intent::Usage,
        patina_retrieve::Intent::Tests => pb::Intent::Tests,
    }
}

/// Oracles named in the domain (context items, tune results) as the wire's; a name no oracle has
/// is left out.
pub(super) fn oracles_pb<'a>(names: impl Iterator<Item = &'a str>) -> Vec<i32> {
    names
        .filter_map(patina_core::OracleId::parse)
        .map(|o| pb::Oracle::from(o) as i32)
        .collect()
}

/// A ranking feature on the wire: `patina.v1.RankFeature` numbers them in `Feature::ALL`'s order
/// from 1.
fn feature_pb(f: Feature) -> pb::RankFeature {
    pb::RankFeature::try_from(f as i32 + 1).unwrap_or(pb::RankFeature::Unspecified)
}

pub(super) fn hit_pb(h: SearchHit) -> pb::Hit {
    let provenance = h
        .provenance
        .into_iter()
        .map(|c| pb::OracleRank {
            oracle: pb::Oracle::from(c.oracle) as i32,
            rank: c.rank,
            score: c.score,
        })
        .collect();
    let features = h.features.map_or_else(Vec::new, |v| {
        Feature::ALL
            .iter()
            .map(|&f| pb::FeatureValue {
                feature: feature_pb(f) as i32,
                value: v[f as usize],
            })
            .collect()
    });
    let base = pb::Hit {
        score: h.score,
        provenance,
        features,
        snippet: h.snippet,
        role: h.role.map_or(0, |r| patina_proto::roles::to_wire(r) as i32),
        ..Default::default()
    };
    match h.item {
        HitItem::Chunk { repo, meta, .. } => pb::Hit {
            repo_id: repo.id().to_string(),
            repo_root: repo.root().to_string_lossy().into_owned(),
            path: meta.path.to_string(),
            start_line: meta.start_line,
            end_line: meta.end_line,
            symbol: meta.symbol.unwrap_or_default(),
            kind: meta.kind.name().into(),
            parent: meta.parent.unwrap_or_default(),
            language: meta.language.name().into(),
            licence: licence_expr(meta.licence.as_deref()),
            licence_source: licence_source(meta.licence.as_deref()),
            ..base
        },
        HitItem::Group {
            repo,
            dir,
            best,
            matches,
        } => pb::Hit {
            repo_id: repo.id().to_string(),
            repo_root: repo.root().to_string_lossy().into_owned(),
            kind: if dir.is_empty() {
                HitKind::Repo
            } else {
                HitKind::Module
            }
            .wire()
            .into(),
            symbol: if dir.is_empty() {
                repo.record().name
            } else {
                String::new()
            },
            path: dir,
            language: best.language.name().into(),
            matches,
            best: format!("{}:{}-{}", best.path, best.start_line, best.end_line),
            ..base
        },
        HitItem::Note(n) => pb::Hit {
            path: n.reference(),
            start_line: 1,
            end_line: n.text.lines().count().max(1) as u32,
            symbol: n.session.clone(),
            kind: HitKind::Note.wire().into(),
            note: Some(note_pb(n)),
            ..base
        },
        HitItem::Org(o) => pb::Hit {
            path: o.path,
            start_line: o.start_line,
            end_line: o.end_line,
            symbol: o.symbol,
            kind: "chunk".into(),
            published: Some(pb::Published {
                remote: o.remote,
                name: o.name,
                commit: o.sha,
            }),
            ..base
        },
    }
}

/// A licence on the wire: its SPDX expression, "" when unknown.
pub(super) fn licence_expr(l: Option<&patina_core::Licence>) -> String {
    l.and_then(|l| l.expr.clone()).unwrap_or_default()
}

/// Where a licence was found on the wire: "header", "manifest", "file"; "" when unknown.
pub(super) fn licence_source(l: Option<&patina_core::Licence>) -> String {
    match l {
        Some(l) if l.expr.is_some() => l.source.name().into(),
        _ => String::new(),
    }
}

pub(super) fn note_pb(n: NoteView) -> pb::Note {
    pb::Note {
        id: n.id,
        r#ref: n.reference(),
        session: n.session,
        seq: n.seq,
        text: n.text,
        tags: n.tags,
        created_unix_ms: n.created_unix_ms,
    }
}

pub(super) fn session_pb(s: SessionView) -> pb::Session {
    pb::Session {
        name: s.rec.name,
        repo_id: s.rec.repo_id.unwrap_or_default(),
        goal: s.rec.goal,
        started_unix_ms: s.rec.started_unix_ms,
        ended_unix_ms: s.rec.ended_unix_ms.unwrap_or(0),
        notes: s.notes,
    }
}

#[cfg(test)]
mod tests {
    use patina_retrieve::features::Feature;

    #[test]
    fn every_ranking_feature_has_its_wire_name() {
        for f in Feature::ALL {
            let wire = super::feature_pb(f).as_str_name();
            assert_eq!(wire, format!("RANK_FEATURE_{}", f.name().to_uppercase()));
        }
        assert_eq!(
            super::pb::RankFeature::LexicalLong as usize,
            Feature::ALL.len(),
            "the last of both"
        );
    }
}
