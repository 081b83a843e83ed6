//! The root that wires the floors together: opens the state, starts the services and workers,
//! builds the query engine and serves the gRPC services on the socket until asked to stop. The
//! only code besides `rpc/` that names tonic.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use patina_proto::v1 as pb;
use tokio::sync::Notify;

use crate::process::exe::ExeStamp;
use crate::process::{restart, socket};
use crate::query::cache::QueryCache;
use crate::query::engine::QueryEngine;
use crate::query::oracles;
use crate::rpc;
use crate::services::embedding::Semantic;
use crate::services::feedback::Feedback;
use crate::services::sessions::Sessions;
use crate::state::config::Config;
use crate::state::generations::Generations;
use crate::state::repos::Repos;
use crate::workers;
use crate::workers::indexer::Indexer;

/// How to run the daemon; every field has an environment/XDG default.
#[derive(Debug, Default)]
pub struct Options {
    pub socket: Option<PathBuf>,
    pub state_root: Option<PathBuf>,
    /// The listening socket systemd passed (socket activation), taken by
    /// [`take_activation_socket`] before any thread existed. Served instead of binding `socket`.
    pub activated_socket: Option<std::os::unix::net::UnixListener>,
    /// What a previous image of this process handed over when it restarted in place
    /// ([`restart::take_handover`]): the instance lock, and whether the socket is systemd's.
    pub handover: Option<restart::Handover>,
}

/// How [`serve`] ended.
pub enum Exit {
    /// Asked to stop: the caller ends the process.
    Stopped,
    /// Idle with a fragmented heap: the caller replaces the image ([`restart::exec`]).
    Restart(restart::Restart),
}

/// How long requests still running when a stop is asked for may take to finish.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_millis(300);
/// The server pings a connection this often; one that has not answered within the timeout is
/// closed (a client gone without closing its socket).
const KEEPALIVE_INTERVAL: std::time::Duration = std::time::Duration::from_secs(30);
const KEEPALIVE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(20);

/// Serve until SIGTERM, SIGINT or a `Shutdown` request, then flush state and return. Work still
/// running (an embedding batch, an index round's uncommitted files) is abandoned, not waited for:
/// it is recomputed from the durable state at the next start. The caller should then end the
/// process without running library destructors (`patinad` calls `_exit`): threads that are still
/// inside ONNX Runtime must not see its globals torn down under them.
/// Load the config file at `path` as a daemon start would: what it found (valid, or absent so
/// defaults apply), or the error that would stop the daemon.
pub fn check_config(path: &std::path::Path) -> Result<&'static str> {
    let exists = path.exists();
    Config::load(path)?;
    Ok(if exists {
        "valid"
    } else {
        "absent; the defaults apply"
    })
}

pub async fn serve(opts: Options) -> Result<Exit> {
    let started = Instant::now();
    let exe = ExeStamp::now();
    let root = opts
        .state_root
        .unwrap_or_else(patina_proto::endpoint::state_root);
    let socket_path = patina_proto::endpoint::socket_path(opts.socket.as_deref());
    crate::process::connections::raise_open_files_limit();
    // Held until the process has fully exited (the OS releases it): sled's own threads and file
    // lock outlive `serve`, and a successor must not start before they are gone. A restart in
    // place hands it to the next image.
    let (lock, restarts, handed_activated) = match &opts.handover {
        Some(h) => (
            socket::adopt_lock(&root, h.lock_fd)?,
            h.restarts,
            Some(h.activated),
        ),
        None => (socket::lock_instance(&root)?, 0, None),
    };
    let lock_fd = lock.raw_fd();
    std::mem::forget(lock);
    let config_path = patina_proto::endpoint::config_file();
    let config = Config::load(&config_path)?;
    let budget = config.daemon.budget();
    let store =
        patina_index::store::Store::open_with_cache(&root.join("state"), budget.sled_cache)?;
    // A restart in place comes only after the idle time that also releases the query session:
    // the new image checks the model and lets the session go again until a query needs it.
    let semantic = Arc::new(Semantic::load(
        patina_embed::ModelPaths::locate(&root),
        &config.semantic,
        store.embeddings(),
        &budget,
        restarts == 0,
    ));
    let team = Arc::new(crate::services::team::Team::from_config(
        &config.team,
        tokio::runtime::Handle::current(),
    )?);
    semantic.share_with(team.clone());
    let generations = Arc::new(Generations::default());
    let sessions = Sessions::open(&store, semantic.clone(), generations.clone())?;
    let feedback = Feedback::open(&store)?;
    let keep_messages_cached = !config.history.by_default;
    let config = Arc::new(config);
    let repos = Arc::new(Repos::open(
        store,
        root.clone(),
        budget,
        generations,
        |repo| {
            if keep_messages_cached {
                // Read back by the first question to the history, not by every start.
                repo.messages().leave_in_cache();
            }
            semantic.attach(repo)
        },
    )?);
    let indexer = Indexer::new(repos.clone(), config.clone(), semantic.clone());
    workers::embedder::spawn(semantic.clone(), Arc::downgrade(&repos));
    workers::graphs::spawn(Arc::downgrade(&repos));
    workers::notes::spawn(&sessions);
    // Catch up with edits made while no daemon ran, then keep every repository watched.
    indexer.catch_up();
    workers::idle::spawn(&indexer, semantic.clone());
    let mut oracle_set: Vec<Arc<dyn oracles::Oracle>> = vec![
        Arc::new(oracles::lexical::LexicalOracle),
        Arc::new(oracles::symbol::SymbolOracle),
        Arc::new(oracles::semantic::SemanticOracle(semantic.clone())),
        Arc::new(oracles::session::SessionOracle(sessions.clone())),
        Arc::new(oracles::history::HistoryOracle(
            config.history.clone(),
            semantic.clone(),
        )),
        Arc::new(oracles::history::CochangeOracle),
        Arc::new(oracles::graph::GraphOracle),
    ];
    if team.is_on() {
        oracle_set.push(Arc::new(oracles::org::OrgOracle {
            team: team.clone(),
            semantic: semantic.clone(),
        }));
    }
    let engine = QueryEngine::new(
        repos.clone(),
        config.clone(),
        semantic.clone(),
        indexer.clone(),
        oracle_set,
    )
    .with_sessions(sessions.clone());
    let bound = socket::bind(&socket_path, opts.activated_socket).await?;
    // A socket handed over by a restart in place is systemd's only if it was before.
    let activated = handed_activated.unwrap_or(bound.activated);
    let shutdown = Arc::new(Notify::new());
    // Set once a restart in place is decided on.
    let restart_decided = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let kept_listener = if config.daemon.restart_when_fragmented {
        use std::os::fd::AsRawFd;
        match restart::keep(bound.listener.as_raw_fd()) {
            Ok(fd) => {
                let (shutdown, decided) = (shutdown.clone(), restart_decided.clone());
                workers::restarter::spawn(
                    Arc::downgrade(&repos),
                    semantic.clone(),
                    started,
                    restarts,
                    move |heap| {
                        tracing::info!(
                            resident_mib = heap.resident >> 20,
                            in_use_mib = heap.in_use >> 20,
                            "idle, with {} MiB of heap held but unused: restarting in place",
                            heap.held_unused() >> 20
                        );
                        decided.store(true, std::sync::atomic::Ordering::SeqCst);
                        shutdown.notify_one();
                    },
                );
                Some(fd)
            }
            Err(e) => {
                tracing::warn!("no restart in place (cannot keep the socket: {e})");
                None
            }
        }
    } else {
        None
    };
    let daemon = Arc::new(rpc::Daemon {
        repos: repos.clone(),
        indexer: indexer.clone(),
        config: config.clone(),
        semantic: semantic.clone(),
        engine,
        sessions,
        started,
        exe,
        socket: bound.path.to_string_lossy().into_owned(),
        data_dir: root.to_string_lossy().into_owned(),
        socket_activated: activated,
        restarts,
        shutdown: shutdown.clone(),
        qcache: QueryCache::new(
            config.cache.entries,
            std::time::Duration::from_secs(config.cache.ttl_secs),
        ),
        ccache: QueryCache::new(
            config.cache.entries,
            std::time::Duration::from_secs(config.cache.ttl_secs),
        ),
        feedback,
        team,
    });
    tracing::info!(
        socket = %bound.path.display(),
        state = %root.display(),
        activated,
        restarts,
        version = env!("CARGO_PKG_VERSION"),
        "patinad listening"
    );
    let services = rpc::Services(daemon);
    // Set once a stop is asked for: requests still running get a short grace period, then the
    // server is dropped with them (a client following a stream must not hold the daemon up).
    let stopping = Arc::new(Notify::new());
    // Signals are listened to for the whole life of the process (a signal arriving while a
    // restart in place stops the server must turn it into a stop, not be swallowed).
    {
        let shutdown = shutdown.clone();
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .context("installing the SIGTERM handler")?;
        let mut int = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
            .context("installing the SIGINT handler")?;
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = term.recv() => tracing::info!("SIGTERM: shutting down"),
                    _ = int.recv() => tracing::info!("SIGINT: shutting down"),
                }
                restart::ask_stop();
                shutdown.notify_one();
            }
        });
    }
    let signal = {
        let shutdown = shutdown.clone();
        let stopping = stopping.clone();
        async move {
            shutdown.notified().await;
            stopping.notify_one();
        }
    };
    let gate = crate::process::connections::Gate::new(crate::process::connections::Limits {
        max_connections: config.daemon.max_connections,
        handshake_timeout: std::time::Duration::from_millis(config.daemon.handshake_timeout_ms),
    });
    let server = tonic::transport::Server::builder()
        // A connection past its handshake that stops answering pings is closed.
        .http2_keepalive_interval(Some(KEEPALIVE_INTERVAL))
        .http2_keepalive_timeout(Some(KEEPALIVE_TIMEOUT))
        // Every request marks the daemon busy (no restart in place while requests come).
        .trace_fn(|_| {
            restart::touch();
            tracing::Span::none()
        })
        .add_service(pb::health_server::HealthServer::new(services.clone()))
        .add_service(pb::repos_server::ReposServer::new(services.clone()))
        .add_service(pb::search_server::SearchServer::new(services.clone()))
        .add_service(pb::files_server::FilesServer::new(services.clone()))
        .add_service(pb::history_server::HistoryServer::new(services.clone()))
        .add_service(pb::graph_server::GraphServer::new(services.clone()))
        .add_service(pb::feedback_server::FeedbackServer::new(services.clone()))
        .add_service(pb::buffers_server::BuffersServer::new(services.clone()))
        .add_service(pb::tune_server::TuneServer::new(services.clone()))
        .add_service(pb::snapshots_server::SnapshotsServer::new(services.clone()))
        .add_service(pb::team_server::TeamServer::new(services.clone()))
        .add_service(pb::sessions_server::SessionsServer::new(services))
        .serve_with_incoming_shutdown(socket::incoming(bound.listener, gate), signal);
    tokio::select! {
        r = server => r.context("serving gRPC")?,
        _ = async {
            stopping.notified().await;
            tokio::time::sleep(SHUTDOWN_GRACE).await;
        } => tracing::info!("requests still running at shutdown were abandoned"),
    }
    indexer.shutdown().await;
    let decided = restart_decided.load(std::sync::atomic::Ordering::SeqCst);
    if let (true, Some(listener), false) = (decided, kept_listener, restart::stop_asked()) {
        tracing::info!("stopped; restarting in place");
        return Ok(Exit::Restart(restart::Restart {
            handover: restart::Handover {
                lock_fd,
                activated,
                restarts: restarts + 1,
            },
            listener,
        }));
    }
    if !activated {
        let _ = std::fs::remove_file(&bound.path);
    }
    tracing::info!("stopped");
    Ok(Exit::Stopped)
}
