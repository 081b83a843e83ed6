//! The gRPC surface: thin adapters from `patina.v1` messages to the daemon's components.
//! No logic lives here beyond conversion and error mapping.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

use futures::Stream;
use patina_proto::kinds::HitKind;
use patina_proto::v1 as pb;
use tokio::sync::{Notify, watch};
use tonic::{Request, Response, Status};

use crate::index::{Phase, Progress};
use crate::registry::{Registry, UserError};
use crate::repo::Repo;
use patina_core::FileRole;

use crate::search::{Granularity, HitItem, QueryEngine, SearchHit, SearchRequest};
use crate::sessions::{NoteView, SessionView, Sessions};

/// What every service shares.
pub(crate) struct Daemon {
    pub registry: Arc<Registry>,
    pub engine: QueryEngine,
    pub sessions: Arc<Sessions>,
    pub started: Instant,
    pub socket: String,
    pub data_dir: String,
    pub socket_activated: bool,
    pub shutdown: Arc<Notify>,
}

#[derive(Clone)]
pub(crate) struct Services(pub Arc<Daemon>);

fn status(e: anyhow::Error) -> Status {
    match e.downcast_ref::<UserError>() {
        Some(UserError::NotFound(m)) => Status::not_found(m.clone()),
        Some(UserError::Invalid(m)) => Status::invalid_argument(m.clone()),
        None => {
            tracing::error!("request failed: {e:#}");
            Status::internal(format!("{e:#}"))
        }
    }
}

fn progress_pb(p: &Progress, repo: Option<&Repo>) -> pb::IndexProgress {
    let phase = match p.phase {
        Phase::Queued => pb::IndexPhase::Queued,
        Phase::Walking => pb::IndexPhase::Walking,
        Phase::Indexing => pb::IndexPhase::Indexing,
        Phase::Committing => pb::IndexPhase::Committing,
        Phase::Done => pb::IndexPhase::Done,
        Phase::Failed => pb::IndexPhase::Failed,
    };
    pb::IndexProgress {
        repo: repo.map(|r| Box::new(repo_pb(r, false))),
        phase: phase as i32,
        files_total: p.files_total,
        files_done: p.files_done,
        files_changed: p.files_changed,
        files_removed: p.files_removed,
        chunks: p.chunks,
        message: p.message.clone(),
    }
}

fn freshness_pb(f: &crate::freshness::Freshness) -> pb::Freshness {
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

fn repo_pb(repo: &Repo, with_progress: bool) -> pb::RepoInfo {
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
        vectors: repo.vectors.read().expect("vectors lock").len() as u64,
        embed_backlog: crate::semantic::backlog(repo) as u64,
        freshness: with_progress.then(|| freshness_pb(&crate::freshness::Freshness::of(repo))),
        chunk_digest: repo.chunk_digest(),
    }
}

type ProgressStream = Pin<Box<dyn Stream<Item = Result<pb::IndexProgress, Status>> + Send>>;

/// Forward a job's progress until it finishes (the job itself keeps running if the client leaves).
fn follow(repo: Arc<Repo>, mut rx: watch::Receiver<Progress>) -> ProgressStream {
    let (tx, out) = tokio::sync::mpsc::channel(16);
    tokio::spawn(async move {
        loop {
            let p = rx.borrow_and_update().clone();
            let finished = p.finished();
            if tx.send(Ok(progress_pb(&p, Some(&repo)))).await.is_err() || finished {
                break;
            }
            if rx.changed().await.is_err() {
                let p = rx.borrow().clone();
                let _ = tx.send(Ok(progress_pb(&p, Some(&repo)))).await;
                break;
            }
        }
    });
    Box::pin(tokio_stream::wrappers::ReceiverStream::new(out))
}

#[tonic::async_trait]
impl pb::health_server::Health for Services {
    async fn check(
        &self,
        _req: Request<pb::CheckRequest>,
    ) -> Result<Response<pb::CheckResponse>, Status> {
        let d = &self.0;
        Ok(Response::new(pb::CheckResponse {
            version: env!("CARGO_PKG_VERSION").into(),
            protocol: patina_proto::PROTOCOL_VERSION,
            pid: std::process::id(),
            uptime_ms: d.started.elapsed().as_millis() as u64,
            rss_bytes: crate::rss_bytes(),
            socket: d.socket.clone(),
            data_dir: d.data_dir.clone(),
            socket_activated: d.socket_activated,
            semantic_on: d.registry.semantic.is_on(),
            semantic: d.registry.semantic.describe(),
            embeddings_computed: d.registry.semantic.computed(),
        }))
    }

    async fn shutdown(
        &self,
        _req: Request<pb::ShutdownRequest>,
    ) -> Result<Response<pb::ShutdownResponse>, Status> {
        tracing::info!("shutdown requested by a client");
        self.0.shutdown.notify_one();
        Ok(Response::new(pb::ShutdownResponse {}))
    }
}

#[tonic::async_trait]
impl pb::repos_server::Repos for Services {
    type AddStream = ProgressStream;
    type WatchStream = ProgressStream;

    async fn add(&self, req: Request<pb::AddRequest>) -> Result<Response<ProgressStream>, Status> {
        let (repo, rx) = self
            .0
            .registry
            .add(&req.into_inner().path)
            .map_err(status)?;
        Ok(Response::new(follow(repo, rx)))
    }

    async fn remove(
        &self,
        req: Request<pb::RemoveRequest>,
    ) -> Result<Response<pb::RemoveResponse>, Status> {
        let rec = self
            .0
            .registry
            .remove(&req.into_inner().repo)
            .await
            .map_err(status)?;
        Ok(Response::new(pb::RemoveResponse {
            removed: Some(pb::RepoInfo {
                id: rec.id,
                name: rec.name,
                root: rec.root,
                ..Default::default()
            }),
        }))
    }

    async fn list(
        &self,
        _req: Request<pb::ListRequest>,
    ) -> Result<Response<pb::ListResponse>, Status> {
        let repos = self
            .0
            .registry
            .all()
            .iter()
            .map(|r| repo_pb(r, true))
            .collect();
        Ok(Response::new(pb::ListResponse {
            repos,
            daemon_uptime_ms: self.0.started.elapsed().as_millis() as u64,
            daemon_rss_bytes: crate::rss_bytes(),
            semantic: self.0.registry.semantic.describe(),
        }))
    }

    async fn watch(
        &self,
        req: Request<pb::WatchRequest>,
    ) -> Result<Response<ProgressStream>, Status> {
        let repo = self
            .0
            .registry
            .resolve(&req.into_inner().repo)
            .map_err(status)?;
        let rx = match repo.running_job() {
            Some(rx) => rx,
            None => {
                watch::channel(Progress {
                    phase: Phase::Done,
                    ..Default::default()
                })
                .1
            }
        };
        Ok(Response::new(follow(repo, rx)))
    }

    async fn repair(
        &self,
        req: Request<pb::RepairRequest>,
    ) -> Result<Response<pb::RepairResponse>, Status> {
        let r = req.into_inner();
        let reports = self
            .0
            .registry
            .repair(&r.repo, r.check_only)
            .await
            .map_err(status)?
            .into_iter()
            .map(|(repo, found, remaining)| pb::RepairReport {
                repo: Some(repo_pb(&repo, true)),
                found: Some(audit_pb(found)),
                repaired: remaining.is_some(),
                remaining: remaining.map(audit_pb),
            })
            .collect();
        Ok(Response::new(pb::RepairResponse { reports }))
    }
}

fn audit_pb(a: crate::index::Repaired) -> pb::IndexAudit {
    pb::IndexAudit {
        orphan_chunks: a.orphan_chunks,
        dangling_records: a.dangling_records,
        stray_docs: a.stray_docs,
        missing_docs: a.missing_docs,
        vanished_files: a.vanished_files,
    }
}

#[tonic::async_trait]
impl pb::search_server::Search for Services {
    async fn query(
        &self,
        req: Request<pb::QueryRequest>,
    ) -> Result<Response<pb::QueryResponse>, Status> {
        let r = req.into_inner();
        let granularity = match pb::Granularity::try_from(r.granularity) {
            Ok(pb::Granularity::Chunk) => Granularity::Chunk,
            Ok(pb::Granularity::File) => Granularity::File,
            Ok(pb::Granularity::Module) => Granularity::Module,
            Ok(pb::Granularity::Repo) => Granularity::Repo,
            Ok(pb::Granularity::Doc) => Granularity::Doc,
            Err(_) => {
                return Err(Status::invalid_argument(format!(
                    "unknown granularity {}",
                    r.granularity
                )));
            }
        };
        let res = self
            .0
            .engine
            .search(SearchRequest {
                text: r.query,
                limit: r.limit as usize,
                repos: r.repos,
                globs: r.path_globs,
                granularity,
                oracles: r.oracles,
                snippet_lines: r.snippet_lines as usize,
                fresh_timeout: std::time::Duration::from_millis(r.fresh_timeout_ms as u64),
                roles: roles(&r.roles)?,
                exclude_roles: roles(&r.exclude_roles)?,
                near: r.near,
            })
            .await
            .map_err(status)?;
        let hits = res.hits.into_iter().map(hit_pb).collect();
        Ok(Response::new(pb::QueryResponse {
            hits,
            oracles: res
                .reports
                .into_iter()
                .map(|o| pb::OracleReport {
                    oracle: o.oracle.name().into(),
                    status: o.status.name().into(),
                    hits: o.hits as u32,
                    took_us: o.took.as_micros() as u64,
                    message: o.message,
                })
                .collect(),
            took_us: res.took.as_micros() as u64,
            notices: res.notices,
            freshness: res.freshness.iter().map(freshness_pb).collect(),
            intent: res.intent.name().into(),
        }))
    }

    async fn context(
        &self,
        req: Request<pb::ContextRequest>,
    ) -> Result<Response<pb::ContextResponse>, Status> {
        use crate::context::Format;
        let r = req.into_inner();
        let format = match pb::ContextFormat::try_from(r.format) {
            Ok(pb::ContextFormat::Xml) => Format::Xml,
            Ok(pb::ContextFormat::Markdown) => Format::Markdown,
            Ok(pb::ContextFormat::Json) => Format::Json,
            Err(_) => {
                return Err(Status::invalid_argument(format!(
                    "unknown context format {}",
                    r.format
                )));
            }
        };
        let c = crate::context::assemble(
            &self.0.engine,
            crate::context::ContextRequest {
                text: r.query,
                budget_tokens: r.token_budget as usize,
                repos: r.repos,
                globs: r.path_globs,
                oracles: r.oracles,
                format,
                roles: roles(&r.roles)?,
                exclude_roles: roles(&r.exclude_roles)?,
                near: r.near,
            },
        )
        .await
        .map_err(status)?;
        Ok(Response::new(pb::ContextResponse {
            text: c.text,
            items: c
                .items
                .into_iter()
                .map(|i| pb::ContextItem {
                    r#ref: i.reference,
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
                    oracles: i.oracles.into_iter().map(String::from).collect(),
                    truncated: i.truncated,
                    text: i.text,
                })
                .collect(),
            used_tokens: c.used_tokens as u32,
            budget_tokens: c.budget_tokens as u32,
            omitted: c.omitted as u32,
            notices: c.notices,
        }))
    }
}

/// Wire roles to [`FileRole`]s; an unknown or unspecified value is an error that names it.
fn roles(values: &[i32]) -> Result<Vec<FileRole>, Status> {
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

fn hit_pb(h: SearchHit) -> pb::Hit {
    let provenance = h
        .provenance
        .into_iter()
        .map(|c| pb::OracleRank {
            oracle: c.oracle.name().into(),
            rank: c.rank,
            score: c.score,
        })
        .collect();
    let base = pb::Hit {
        score: h.score,
        provenance,
        snippet: h.snippet,
        role: h.role.map_or(0, |r| patina_proto::roles::to_wire(r) as i32),
        ..Default::default()
    };
    match h.item {
        HitItem::Chunk { repo, meta, .. } => pb::Hit {
            repo_id: repo.id.clone(),
            repo_root: repo.root.to_string_lossy().into_owned(),
            path: meta.path,
            start_line: meta.start_line,
            end_line: meta.end_line,
            symbol: meta.symbol.unwrap_or_default(),
            kind: meta.kind.name().into(),
            parent: meta.parent.unwrap_or_default(),
            language: meta.language.name().into(),
            ..base
        },
        HitItem::Group {
            repo,
            dir,
            best,
            matches,
        } => pb::Hit {
            repo_id: repo.id.clone(),
            repo_root: repo.root.to_string_lossy().into_owned(),
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
    }
}

fn note_pb(n: NoteView) -> pb::Note {
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

fn session_pb(s: SessionView) -> pb::Session {
    pb::Session {
        name: s.rec.name,
        repo_id: s.rec.repo_id.unwrap_or_default(),
        goal: s.rec.goal,
        started_unix_ms: s.rec.started_unix_ms,
        ended_unix_ms: s.rec.ended_unix_ms.unwrap_or(0),
        notes: s.notes,
    }
}

/// Run blocking work (disk reads, fsync) off the async workers.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
) -> Result<T, Status> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Status::internal(format!("task failed: {e}")))?
        .map_err(status)
}

#[tonic::async_trait]
impl pb::sessions_server::Sessions for Services {
    async fn start(
        &self,
        req: Request<pb::StartSessionRequest>,
    ) -> Result<Response<pb::StartSessionResponse>, Status> {
        let r = req.into_inner();
        let repo_id = if r.repo.trim().is_empty() {
            None
        } else {
            Some(
                self.0
                    .registry
                    .resolve(r.repo.trim())
                    .map_err(status)?
                    .id
                    .clone(),
            )
        };
        let sessions = self.0.sessions.clone();
        let (session, resumed) =
            blocking(move || sessions.start(&r.name, repo_id, &r.goal)).await?;
        Ok(Response::new(pb::StartSessionResponse {
            session: Some(session_pb(session)),
            resumed,
        }))
    }

    async fn note(
        &self,
        req: Request<pb::NoteRequest>,
    ) -> Result<Response<pb::NoteResponse>, Status> {
        let r = req.into_inner();
        let sessions = self.0.sessions.clone();
        let note =
            blocking(move || sessions.add_note(&r.session, &r.text, &r.tags, &r.idempotency_key))
                .await?;
        let session = self
            .0
            .sessions
            .list()
            .into_iter()
            .find(|s| s.rec.name == note.session)
            .map(session_pb);
        Ok(Response::new(pb::NoteResponse {
            note: Some(note_pb(note)),
            session,
        }))
    }

    async fn end(
        &self,
        req: Request<pb::EndSessionRequest>,
    ) -> Result<Response<pb::EndSessionResponse>, Status> {
        let r = req.into_inner();
        let sessions = self.0.sessions.clone();
        let (session, summary) =
            blocking(move || sessions.end(&r.session, &r.summary, &r.idempotency_key)).await?;
        Ok(Response::new(pb::EndSessionResponse {
            session: Some(session_pb(session)),
            summary: summary.map(note_pb),
        }))
    }

    async fn list(
        &self,
        req: Request<pb::ListSessionsRequest>,
    ) -> Result<Response<pb::ListSessionsResponse>, Status> {
        let r = req.into_inner();
        let notes = if r.session.is_empty() {
            Vec::new()
        } else {
            self.0.sessions.notes_of(&r.session).map_err(status)?
        };
        Ok(Response::new(pb::ListSessionsResponse {
            sessions: self.0.sessions.list().into_iter().map(session_pb).collect(),
            notes: notes.into_iter().map(note_pb).collect(),
        }))
    }
}

#[tonic::async_trait]
impl pb::files_server::Files for Services {
    async fn get_file(
        &self,
        req: Request<pb::GetFileRequest>,
    ) -> Result<Response<pb::GetFileResponse>, Status> {
        let r = req.into_inner();
        let repo = self.0.registry.resolve(&r.repo).map_err(status)?;
        let slice =
            crate::files::read_slice(&repo, &r.path, r.start_line, r.end_line).map_err(status)?;
        Ok(Response::new(pb::GetFileResponse {
            repo_id: repo.id.clone(),
            path: slice.path,
            language: slice.language.into(),
            total_lines: slice.total_lines,
            start_line: slice.start_line,
            end_line: slice.end_line,
            text: slice.text,
            truncated: slice.truncated,
        }))
    }

    async fn explore_structure(
        &self,
        req: Request<pb::ExploreRequest>,
    ) -> Result<Response<pb::ExploreResponse>, Status> {
        let r = req.into_inner();
        let repo = self.0.registry.resolve(&r.repo).map_err(status)?;
        let (id, name) = (repo.id.clone(), repo.record().name);
        let st = blocking(move || {
            crate::files::explore(
                &repo,
                &crate::files::ExploreOptions {
                    path: r.path,
                    globs: r.path_globs,
                    max_depth: r.max_depth,
                    max_entries: r.max_entries as usize,
                },
            )
        })
        .await?;
        Ok(Response::new(pb::ExploreResponse {
            repo_id: id,
            repo_name: name,
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
        }))
    }
}
