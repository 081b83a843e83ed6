//! [`TestEnv`]: an isolated state root with its daemon, and synchronous calls to its services.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use patina_proto::v1 as pb;
use pb::files_client::FilesClient;
use pb::health_client::HealthClient;
use pb::repos_client::ReposClient;
use pb::search_client::SearchClient;
use tonic::transport::Channel;

use super::*;

/// A query for `text` with every other field at its default (10 chunk hits, all repositories).
pub fn query(text: &str) -> QueryRequest {
    QueryRequest {
        query: text.into(),
        ..Default::default()
    }
}

/// An isolated Patina installation: a temporary `PATINA_HOME` (short, under /tmp, so the socket
/// path stays well below the 108-byte limit of Unix socket addresses) and the daemon serving it.
pub struct TestEnv {
    home: tempfile::TempDir,
    daemon: Option<Child>,
    rt: tokio::runtime::Runtime,
    /// The embedding model handed to daemons (`PATINA_MODEL_DIR`); `None` = semantic search off.
    model: Option<PathBuf>,
    /// Extra environment for the next daemon [`TestEnv::start_daemon`] spawns (not for clients,
    /// nor for daemons a client starts), e.g. `PATINA_TEST_CRASH_AT`.
    daemon_env: Vec<(String, String)>,
}

/// The provisioned embedding model: `$PATINA_MODEL_DIR`, else where `scripts/setup-model` installs
/// it by default. Panics with the fix when it is missing: semantic tests are never skipped.
pub fn model_dir() -> PathBuf {
    let dir = std::env::var_os("PATINA_MODEL_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let data = std::env::var_os("XDG_DATA_HOME")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .unwrap_or_else(|| {
                    PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".local/share")
                });
            data.join("patina/models/all-MiniLM-L6-v2")
        });
    assert!(
        dir.join("MANIFEST.json").is_file(),
        "the embedding model is not installed at {}; run scripts/setup-model (or set PATINA_MODEL_DIR)",
        dir.display()
    );
    dir
}

impl Default for TestEnv {
    fn default() -> Self {
        TestEnv::new()
    }
}

impl TestEnv {
    /// A fresh state root with `config.toml` setting `max_file_bytes` to [`MAX_FILE_BYTES`]; no daemon yet.
    pub fn new() -> TestEnv {
        let home = tempfile::Builder::new()
            .prefix("pt")
            .tempdir_in("/tmp")
            .expect("creating PATINA_HOME");
        std::fs::write(
            home.path().join("config.toml"),
            format!("[index]\nmax_file_bytes = {MAX_FILE_BYTES}\n"),
        )
        .expect("writing config.toml");
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime");
        TestEnv {
            home,
            daemon: None,
            rt,
            model: None,
            daemon_env: Vec::new(),
        }
    }

    /// [`TestEnv::new`] whose daemons load the real embedding model (semantic search on).
    pub fn with_model() -> TestEnv {
        let mut env = TestEnv::new();
        env.model = Some(model_dir());
        env
    }

    /// [`TestEnv::new`] whose daemons load the model from `dir` (a model directory a test changes).
    pub fn with_model_in(dir: &Path) -> TestEnv {
        let mut env = TestEnv::new();
        env.model = Some(dir.to_path_buf());
        env
    }

    /// [`TestEnv::new`] with its daemon started.
    pub fn started() -> TestEnv {
        let mut env = TestEnv::new();
        env.start_daemon();
        env
    }

    /// `PATINA_HOME`.
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// Append `text` to `$PATINA_HOME/config.toml` (before the daemon starts: it reads it once).
    pub fn append_config(&self, text: &str) {
        let path = self.home().join("config.toml");
        let mut cfg = std::fs::read_to_string(&path).unwrap_or_default();
        cfg.push_str(text);
        std::fs::write(&path, cfg).expect("writing config.toml");
    }

    /// The socket every process of this environment uses: `$PATINA_HOME/run/patina.sock`.
    pub fn socket(&self) -> PathBuf {
        self.home().join("run").join("patina.sock")
    }

    /// Where the test-started daemon's stderr goes (appended across restarts).
    pub fn daemon_log_path(&self) -> PathBuf {
        self.home().join("daemon-test.log")
    }

    /// Everything the daemons of this environment logged: those the harness started, and those a
    /// client started (`$PATINA_HOME/patinad.log`).
    pub fn logs(&self) -> String {
        let mut s = String::new();
        for p in [self.daemon_log_path(), self.home().join("patinad.log")] {
            if let Ok(text) = std::fs::read_to_string(&p) {
                s.push_str(&format!("---- {} ----\n{text}", p.display()));
            }
        }
        s
    }

    fn isolate(&self, cmd: &mut Command) {
        cmd.env("PATINA_HOME", self.home())
            .env("PATINA_LOG", "info")
            .env("NO_COLOR", "1")
            .env_remove("PATINA_SOCKET")
            .env_remove("PATINA_DAEMON_BIN")
            .env_remove("RUST_LOG")
            .env_remove("LISTEN_PID")
            .env_remove("LISTEN_FDS")
            .env_remove("ORT_DYLIB_PATH")
            .env_remove("PATINA_TEAM_URL");
        // Python drivers (MCP conformance, LSP protocol) run as written: no optimisation that
        // strips checks, no start-up script, no other interpreter home, no changed warnings.
        for var in [
            "PYTHONOPTIMIZE",
            "PYTHONINSPECT",
            "PYTHONSTARTUP",
            "PYTHONHOME",
            "PYTHONWARNINGS",
            "PYTHONDEVMODE",
            "PYTHONSAFEPATH",
            "PYTHONNOUSERSITE",
        ] {
            cmd.env_remove(var);
        }
        match &self.model {
            Some(dir) => cmd.env("PATINA_MODEL_DIR", dir),
            None => cmd.env_remove("PATINA_MODEL_DIR"),
        };
    }

    /// A `patinad` command for this environment (cwd: `PATINA_HOME`), not yet spawned.
    pub fn daemon_command(&self) -> Command {
        let mut cmd = Command::new(bin("patinad"));
        self.isolate(&mut cmd);
        cmd.current_dir(self.home());
        cmd
    }

    /// Spawn the daemon (stderr appended to [`TestEnv::daemon_log_path`]) and wait until its socket
    /// answers `Health.Check`. Panics, with the log, if it exits or stays silent for [`START_TIMEOUT`].
    pub fn start_daemon(&mut self) {
        self.spawn_daemon();
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            let child = self.daemon.as_mut().expect("just spawned");
            if let Some(status) = child.try_wait().expect("waiting for patinad") {
                self.daemon = None;
                panic!("patinad exited during start-up ({status})\n{}", self.logs());
            }
            if self.health().is_ok() {
                break;
            }
            if Instant::now() > deadline {
                let mut child = self.daemon.take().expect("just spawned");
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "patinad did not answer on {} within {START_TIMEOUT:?}\n{}",
                    self.socket().display(),
                    self.logs()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Give the next daemon the harness starts `PATINA_TEST_CRASH_AT=point`: it aborts (as in a
    /// crash: no flush, no reply) when it reaches that point.
    pub fn crash_next_daemon_at(&mut self, point: &str) {
        self.daemon_env
            .push(("PATINA_TEST_CRASH_AT".into(), point.into()));
    }

    /// Give the next daemon the harness starts `key=value` in its environment (e.g. a `HOME` or
    /// `XDG_CONFIG_HOME` with the user's git configuration).
    pub fn next_daemon_env(&mut self, key: &str, value: impl AsRef<std::ffi::OsStr>) {
        self.daemon_env
            .push((key.into(), value.as_ref().to_string_lossy().into_owned()));
    }

    /// Hold the next daemon's model back (`PATINA_TEST_EMBED_GATE`): until [`Gate::open`], it
    /// embeds nothing (static vectors still fill), so a backlog is there however fast the machine.
    pub fn embed_gate(&mut self) -> Gate {
        let path = self.home().join("embed-gate");
        std::fs::write(&path, b"closed\n").expect("writing the embed gate");
        self.next_daemon_env("PATINA_TEST_EMBED_GATE", &path);
        Gate { path }
    }

    /// Spawn the daemon without waiting for it to answer (it may crash before it listens).
    pub fn spawn_daemon(&mut self) {
        assert!(
            self.daemon.is_none(),
            "the daemon of this TestEnv is already running"
        );
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.daemon_log_path())
            .expect("opening the daemon log");
        let mut cmd = self.daemon_command();
        cmd.envs(self.daemon_env.drain(..));
        cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(log);
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot spawn {cmd:?}: {e}"));
        self.daemon = Some(child);
    }

    /// Wait (at most `timeout`) for the daemon the harness started to exit on its own, e.g. at a
    /// crash point; panics, with the logs, if it is still running.
    pub fn wait_daemon_exit(&mut self, timeout: Duration) -> ExitStatus {
        let mut child = self.daemon.take().expect("no daemon to wait for");
        match wait_timeout(&mut child, timeout) {
            Some(status) => status,
            None => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("patinad did not exit within {timeout:?}\n{}", self.logs());
            }
        }
    }

    /// The pid of the daemon the harness started, if it is running.
    pub fn daemon_pid(&self) -> Option<u32> {
        self.daemon.as_ref().map(Child::id)
    }

    /// SIGTERM the daemon and wait for it to exit (it flushes its state first).
    pub fn stop_daemon(&mut self) -> ExitStatus {
        let mut child = self.daemon.take().expect("no daemon to stop");
        // SAFETY: signalling a child we spawned and have not reaped yet.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
        match wait_timeout(&mut child, START_TIMEOUT) {
            Some(status) => status,
            None => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "patinad did not exit within {START_TIMEOUT:?} of SIGTERM\n{}",
                    self.logs()
                );
            }
        }
    }

    /// SIGKILL the daemon: no cleanup at all, as in a crash (the socket file stays behind).
    pub fn kill_daemon(&mut self) {
        let mut child = self.daemon.take().expect("no daemon to kill");
        child.kill().expect("SIGKILL patinad");
        child.wait().expect("reaping patinad");
    }

    /// A `patina` command for this environment (cwd: `PATINA_HOME`), not yet spawned.
    pub fn patina_command(&self) -> Command {
        let mut cmd = Command::new(bin("patina"));
        self.isolate(&mut cmd);
        cmd.current_dir(self.home());
        cmd
    }

    /// A `patina-mcp` command for this environment (cwd: `PATINA_HOME`), not yet spawned.
    pub fn mcp_command(&self) -> Command {
        let mut cmd = Command::new(bin("patina-mcp"));
        self.isolate(&mut cmd);
        cmd.current_dir(self.home());
        cmd
    }

    /// A `patina-lsp` command for this environment (cwd: `PATINA_HOME`), not yet spawned.
    pub fn lsp_command(&self) -> Command {
        let mut cmd = Command::new(bin("patina-lsp"));
        self.isolate(&mut cmd);
        cmd.current_dir(self.home());
        cmd
    }

    /// `program` with this environment's variables: a process (an editor, a client library)
    /// that starts Patina's clients itself.
    pub fn isolated_command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        self.isolate(&mut cmd);
        cmd.current_dir(self.home());
        cmd
    }

    /// Run `patina ARGS` with `PATINA_HOME` as the working directory.
    pub fn patina(&self, args: &[&str]) -> Output {
        self.patina_in(self.home(), args)
    }

    /// Run `patina ARGS` in `cwd`.
    pub fn patina_in(&self, cwd: &Path, args: &[&str]) -> Output {
        let mut cmd = self.patina_command();
        cmd.current_dir(cwd).args(args);
        run(cmd, CALL_TIMEOUT)
    }

    /// Run a future on this environment's runtime (for tests that talk gRPC themselves).
    pub fn block_on<F: Future>(&self, f: F) -> F::Output {
        self.rt.block_on(f)
    }

    /// Like [`TestEnv::block_on`], but panics if `f` takes longer than [`CALL_TIMEOUT`].
    pub fn call<F: Future>(&self, what: &str, f: F) -> F::Output {
        self.rt
            .block_on(async { tokio::time::timeout(CALL_TIMEOUT, f).await })
            .unwrap_or_else(|_| panic!("{what} did not answer within {CALL_TIMEOUT:?}"))
    }

    /// A gRPC channel over the socket; fails when nothing listens.
    pub async fn try_channel(&self) -> Result<Channel, patina_proto::endpoint::ConnectError> {
        patina_proto::endpoint::connect(&self.socket()).await
    }

    /// A gRPC channel over the socket; panics when nothing listens.
    pub async fn channel(&self) -> Channel {
        self.try_channel()
            .await
            .unwrap_or_else(|e| panic!("cannot connect to {}: {e:?}", self.socket().display()))
    }

    pub async fn repos_client(&self) -> ReposClient<Channel> {
        ReposClient::new(self.channel().await)
    }

    pub async fn search_client(&self) -> SearchClient<Channel> {
        SearchClient::new(self.channel().await)
    }

    pub async fn files_client(&self) -> FilesClient<Channel> {
        FilesClient::new(self.channel().await)
    }

    /// `Health.Check` over a fresh connection; `Err` describes why nothing answered.
    pub fn health(&self) -> Result<pb::CheckResponse, String> {
        self.rt.block_on(async {
            let probe = async {
                let channel = self
                    .try_channel()
                    .await
                    .map_err(|e| format!("connect: {e:?}"))?;
                HealthClient::new(channel)
                    .check(pb::CheckRequest {
                        client_protocol: patina_proto::PROTOCOL_VERSION,
                    })
                    .await
                    .map(tonic::Response::into_inner)
                    .map_err(|s| format!("Health.Check: {s}"))
            };
            tokio::time::timeout(Duration::from_secs(5), probe)
                .await
                .unwrap_or_else(|_| Err("timed out".into()))
        })
    }

    /// Assert the daemon answers `Health.Check`.
    #[track_caller]
    pub fn assert_healthy(&self) -> pb::CheckResponse {
        match self.health() {
            Ok(h) => h,
            Err(e) => panic!("the daemon does not answer: {e}"),
        }
    }

    /// `Repos.Add` for `path`, following the progress stream to its end; returns the final progress
    /// (phase DONE; its `repo` is the repository's state when the stream started). Panics when
    /// indexing fails or the stream ends early.
    pub fn add_repo(&self, path: &Path) -> IndexProgress {
        self.call("Repos.Add", async {
            let mut stream = self
                .repos_client()
                .await
                .add(pb::AddRequest {
                    path: path.to_string_lossy().into_owned(),
                    // Fixtures are plain temporary directories as often as git repositories;
                    // the refusals have their own tests.
                    force: true,
                })
                .await
                .unwrap_or_else(|s| panic!("Repos.Add {}: {s}", path.display()))
                .into_inner();
            loop {
                let p = stream
                    .message()
                    .await
                    .unwrap_or_else(|s| panic!("Repos.Add {} stream: {s}", path.display()))
                    .unwrap_or_else(|| {
                        panic!("Repos.Add {}: the stream ended before DONE", path.display())
                    });
                match IndexPhase::try_from(p.phase) {
                    Ok(IndexPhase::Done) => return p,
                    Ok(IndexPhase::Failed) => {
                        panic!("indexing {} failed: {}", path.display(), p.message)
                    }
                    _ => {}
                }
            }
        })
    }

    /// `Repos.List`.
    pub fn list(&self) -> ListResponse {
        self.call("Repos.List", async {
            self.repos_client()
                .await
                .list(pb::ListRequest {})
                .await
                .expect("Repos.List")
                .into_inner()
        })
    }

    /// Wait (at most 180 s) until the repository at `root` is indexed and every chunk has the
    /// model's vector; its info then.
    pub fn embedded(&self, root: &Path) -> RepoInfo {
        poll(
            Duration::from_secs(180),
            "the repository is embedded",
            || {
                let i = self.repo_info(root);
                (!i.indexing && i.chunks > 0 && i.vectors == i.chunks && i.embed_backlog == 0)
                    .then_some(i.clone())
                    .ok_or(format!("{i:?}"))
            },
        )
    }

    /// The listed state of the repository rooted at `root`; panics when it is not registered.
    pub fn repo_info(&self, root: &Path) -> RepoInfo {
        let root = root.to_string_lossy();
        let list = self.list();
        list.repos
            .iter()
            .find(|r| r.root == root)
            .cloned()
            .unwrap_or_else(|| panic!("{root} is not registered: {:?}", list.repos))
    }

    /// `Search.Query`.
    pub fn query(&self, req: QueryRequest) -> Result<QueryResponse, Status> {
        self.call("Search.Query", async {
            self.search_client()
                .await
                .query(req)
                .await
                .map(tonic::Response::into_inner)
        })
    }

    /// `Search.Query` for `text` in the given repositories (all when empty); panics on error.
    pub fn search(&self, text: &str, repos: &[&Path]) -> QueryResponse {
        let req = QueryRequest {
            repos: repos
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect(),
            ..query(text)
        };
        self.query(req)
            .unwrap_or_else(|s| panic!("query {text:?}: {s}"))
    }

    /// `Files.GetFile`.
    pub fn get_file(&self, req: GetFileRequest) -> Result<GetFileResponse, Status> {
        self.call("Files.GetFile", async {
            self.files_client()
                .await
                .get_file(req)
                .await
                .map(tonic::Response::into_inner)
        })
    }

    /// `Repos.Remove`.
    pub fn remove_repo(&self, key: &str) -> Result<RepoInfo, Status> {
        self.call("Repos.Remove", async {
            let r = self
                .repos_client()
                .await
                .remove(pb::RemoveRequest { repo: key.into() })
                .await?;
            Ok(r.into_inner().removed.unwrap_or_default())
        })
    }

    /// Kill a daemon a client started for this environment (the harness does not own it): the pid
    /// in `patinad.lock`, if that process is a `patinad` serving this `PATINA_HOME`.
    fn kill_client_started_daemon(&self) {
        let Ok(pid) = std::fs::read_to_string(self.home().join("patinad.lock")) else {
            return;
        };
        let Ok(pid) = pid.trim().parse::<i32>() else {
            return;
        };
        let ours = std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|env| {
            let want = format!("PATINA_HOME={}", self.home().display());
            env.split(|b| *b == 0).any(|kv| kv == want.as_bytes())
        });
        let is_patinad = std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
            c.split(|b| *b == 0)
                .next()
                .is_some_and(|argv0| argv0.ends_with(b"patinad"))
        });
        if ours && is_patinad {
            // SAFETY: sending a signal to a process we identified as this environment's daemon.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

impl Drop for TestEnv {
    fn drop(&mut self) {
        if let Some(mut child) = self.daemon.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        self.kill_client_started_daemon();
        if std::thread::panicking() {
            eprintln!(
                "==== daemon logs of {} ====\n{}",
                self.home().display(),
                self.logs()
            );
        }
    }
}

/// The file that holds a daemon's model back while it exists ([`TestEnv::embed_gate`]).
pub struct Gate {
    path: PathBuf,
}

impl Gate {
    /// Let the model embed.
    pub fn open(&self) {
        let _ = std::fs::remove_file(&self.path);
    }

    /// Hold the model back again (a batch under way ends first).
    pub fn close(&self) {
        std::fs::write(&self.path, b"closed\n").expect("writing the embed gate");
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.open();
    }
}
