//! End-to-end specifications for Patina: every test drives the real `patinad` over its real Unix
//! socket, through gRPC or through the real `patina` client, in an isolated `PATINA_HOME`.
//!
//! This library is the harness the test files share:
//!
//! - [`TestEnv`]: a private state root (`PATINA_HOME`) with its daemon; start, stop (SIGTERM), kill
//!   (SIGKILL), run the `patina` client, and call the gRPC services synchronously. Dropping it kills
//!   whatever daemon it owns (or a client started) and, when the test failed, prints the daemon logs.
//! - [`fixture_repo`]: a small multi-language git repository with known definitions, callers and
//!   files the indexer must skip (binary, too large, invalid UTF-8).
//!
//! The binaries are taken from the target directory the tests were built into (`target/<profile>/`),
//! or from `$PATINA_BIN_DIR`. `cargo test --workspace` builds them; `cargo test -p patina-tests`
//! does not, so run `cargo build --workspace` first in that case.

use std::future::Future;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use patina_proto::v1 as pb;
use pb::files_client::FilesClient;
use pb::health_client::HealthClient;
use pb::repos_client::ReposClient;
use pb::search_client::SearchClient;
use tonic::transport::Channel;

pub use pb::{
    GetFileRequest, GetFileResponse, Granularity, Hit, IndexPhase, IndexProgress, ListResponse,
    QueryRequest, QueryResponse, RepoInfo,
};
pub use tonic::{Code, Status};

/// How long a daemon may take to answer after being spawned.
pub const START_TIMEOUT: Duration = Duration::from_secs(20);
/// How long any single client command or RPC may take before the test gives up on it.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(120);
/// The indexing size limit every [`TestEnv`] configures (the fixture's huge file exceeds it).
pub const MAX_FILE_BYTES: u64 = 64 * 1024;

/// Where `patinad` and `patina` are: `$PATINA_BIN_DIR`, else the directory the test executable was
/// built for (`target/<profile>/`, the parent of `target/<profile>/deps/`).
pub fn bin_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("PATINA_BIN_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let exe = std::env::current_exe().expect("the test executable's path");
    let deps = exe.parent().expect("the test executable has a directory");
    if deps.file_name().is_some_and(|n| n == "deps") {
        deps.parent().expect("target/<profile>")
    } else {
        deps
    }
    .to_path_buf()
}

/// The path of the binary `name` (`patinad` or `patina`); panics with instructions when it is missing.
pub fn bin(name: &str) -> PathBuf {
    let path = bin_dir().join(name);
    if !path.is_file() {
        panic!(
            "{} not found. The end-to-end tests run the real binaries: build them with \
             `cargo build --workspace` (or run `cargo test --workspace`, which builds them), \
             or point PATINA_BIN_DIR at the directory holding `patinad` and `patina`.",
            path.display()
        );
    }
    path
}

/// What a finished process said, decoded for assertions.
pub struct Output {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    /// The exit code; panics when the process was killed by a signal.
    pub fn code(&self) -> i32 {
        self.status
            .code()
            .unwrap_or_else(|| panic!("process died from a signal: {self:?}"))
    }
}

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.status, self.stdout, self.stderr
        )
    }
}

/// Run `cmd` to completion (stdin closed, output captured); panics if it takes longer than `timeout`.
pub fn run(mut cmd: Command, timeout: Duration) -> Output {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    // Drain both pipes on threads so a chatty child never blocks on a full pipe.
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut buf);
            }
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let status = match wait_timeout(&mut child, timeout) {
        Some(status) => status,
        None => {
            let _ = child.kill();
            let _ = child.wait();
            let (stdout, stderr) = (
                out.join().unwrap_or_default(),
                err.join().unwrap_or_default(),
            );
            panic!(
                "{cmd:?} did not finish within {timeout:?}\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}"
            );
        }
    };
    Output {
        status,
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
    }
}

/// Wait for `child` to exit, at most `timeout`; `None` if it is still running.
pub fn wait_timeout(child: &mut Child, timeout: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait().expect("waiting for a child process") {
            return Some(status);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

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
            .env_remove("ORT_DYLIB_PATH");
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
    pub async fn try_channel(&self) -> Result<Channel, tonic::transport::Error> {
        patina_proto::endpoint::connect(&self.socket()).await
    }

    /// A gRPC channel over the socket; panics when nothing listens.
    pub async fn channel(&self) -> Channel {
        self.try_channel()
            .await
            .unwrap_or_else(|e| panic!("cannot connect to {}: {e:?}", self.socket().display()))
    }

    pub async fn health_client(&self) -> HealthClient<Channel> {
        HealthClient::new(self.channel().await)
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

/// A git repository created for a test, deleted when dropped.
pub struct Repo {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Repo {
    /// The repository root (canonical, as the daemon reports it).
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// The root as a string, for request fields.
    pub fn key(&self) -> String {
        self.root.to_string_lossy().into_owned()
    }

    /// The text of a file of the repository.
    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel))
            .unwrap_or_else(|e| panic!("reading {rel}: {e}"))
    }

    /// The 1-based number of the first line of `rel` containing `needle`.
    pub fn line_of(&self, rel: &str, needle: &str) -> u32 {
        self.read(rel)
            .lines()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{rel} has no line containing {needle:?}")) as u32
            + 1
    }
}

/// Run git in `root` with a fixed identity and no user or system configuration; panics on failure.
pub fn git(root: &Path, args: &[&str]) {
    git_out(root, args, None);
}

/// [`git`] with both commit dates set to `date` when given; returns its trimmed stdout.
pub fn git_out(root: &Path, args: &[&str], date: Option<&str>) -> String {
    let mut cmd = Command::new("git");
    cmd.current_dir(root)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null");
    if let Some(d) = date {
        cmd.env("GIT_AUTHOR_DATE", d).env("GIT_COMMITTER_DATE", d);
    }
    let out = run(cmd, Duration::from_secs(60));
    assert!(out.status.success(), "git {args:?} failed: {out:?}");
    out.stdout.trim().to_string()
}

/// A git repository with exactly `files` (path, content), committed.
pub fn git_repo(files: &[(&str, &[u8])]) -> Repo {
    let dir = tempfile::Builder::new()
        .prefix("pr")
        .tempdir_in("/tmp")
        .expect("creating a repository dir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical repository root");
    for (rel, content) in files {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("creating directories");
        std::fs::write(&path, content).unwrap_or_else(|e| panic!("writing {rel}: {e}"));
    }
    let git = |args: &[&str]| git(&root, args);
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "fixture"]);
    Repo { _dir: dir, root }
}

/// Words that occur only in files the indexer must skip: a query for any of them finds nothing.
pub const BINARY_ONLY_WORD: &str = "quokkabinaryword";
pub const HUGE_ONLY_WORD: &str = "quokkahugeword";
pub const LATIN1_ONLY_WORD: &str = "quokkalatinword";

/// The paths of the fixture's files that must be skipped, by reason.
pub const BINARY_FILE: &str = "assets/logo.png";
pub const HUGE_FILE: &str = "data/huge.txt";
pub const LATIN1_FILE: &str = "legacy/latin1.txt";

/// A small multi-language repository:
///
/// - `src/args.rs` defines `pub fn parse_args`; `src/main.rs`, `app/cli.py`, `web/app.js`,
///   `server/main.go` and `README.md` call or mention it (callers the definition must outrank).
/// - `src/http.rs` defines `struct HttpClient` and its methods; `web/client.ts` a class `ApiClient`.
/// - Java, C and C++ files, a `README.md` with headings and a `config.toml`.
/// - Three files the indexer must skip: [`BINARY_FILE`] (NUL bytes), [`HUGE_FILE`] (~100 KB, above
///   [`MAX_FILE_BYTES`]) and [`LATIN1_FILE`] (invalid UTF-8).
pub fn fixture_repo() -> Repo {
    let mut binary = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10".to_vec();
    binary.extend_from_slice(BINARY_ONLY_WORD.as_bytes());
    binary.extend_from_slice(&[0, 1, 2, 3, 0, 0, 255, 254]);
    let huge: String = (0..2000)
        .map(|i| format!("line {i:05} {HUGE_ONLY_WORD} padding text here\n"))
        .collect();
    assert!(
        huge.len() as u64 > MAX_FILE_BYTES + 16 * 1024,
        "the huge file must exceed the limit"
    );
    let mut latin1 = b"caf\xe9 cr\xe8me br\xfbl\xe9e ".to_vec();
    latin1.extend_from_slice(LATIN1_ONLY_WORD.as_bytes());
    latin1.push(b'\n');
    git_repo(&[
        ("src/args.rs", ARGS_RS.as_bytes()),
        ("src/main.rs", MAIN_RS.as_bytes()),
        ("src/http.rs", HTTP_RS.as_bytes()),
        ("app/cli.py", CLI_PY.as_bytes()),
        ("app/models.py", MODELS_PY.as_bytes()),
        ("web/app.js", APP_JS.as_bytes()),
        ("web/client.ts", CLIENT_TS.as_bytes()),
        ("server/main.go", MAIN_GO.as_bytes()),
        ("java/Inventory.java", INVENTORY_JAVA.as_bytes()),
        ("native/checksum.c", CHECKSUM_C.as_bytes()),
        ("native/matrix.cpp", MATRIX_CPP.as_bytes()),
        ("README.md", README_MD.as_bytes()),
        ("config.toml", CONFIG_TOML.as_bytes()),
        (BINARY_FILE, &binary),
        (HUGE_FILE, huge.as_bytes()),
        (LATIN1_FILE, &latin1),
    ])
}

const ARGS_RS: &str = r#"//! Command-line options.

use std::collections::HashMap;

/// Options given on the command line.
pub struct Options {
    pub verbose: bool,
    pub values: HashMap<String, String>,
}

/// Turn `--key=value` pairs and `-v` into [`Options`].
pub fn parse_args(args: &[String]) -> Options {
    let mut opts = Options { verbose: false, values: HashMap::new() };
    for arg in args {
        if arg == "-v" {
            opts.verbose = true;
        } else if let Some((key, value)) = arg.trim_start_matches("--").split_once('=') {
            opts.values.insert(key.to_string(), value.to_string());
        }
    }
    opts
}
"#;

const MAIN_RS: &str = r#"mod args;
mod http;

use http::HttpClient;

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    // parse_args never fails: unknown flags are kept as values.
    let opts = args::parse_args(&argv);
    let client = HttpClient::new(opts.values.get("url").cloned().unwrap_or_default());
    println!("{}", client.get("/status"));
}

fn reload(argv: &[String]) -> bool {
    let again = args::parse_args(argv);
    let twice = args::parse_args(argv);
    again.verbose == twice.verbose
}
"#;

const HTTP_RS: &str = r#"//! A tiny HTTP client.

/// Sends requests to one base URL.
pub struct HttpClient {
    base_url: String,
    timeout_ms: u64,
}

impl HttpClient {
    pub fn new(base_url: String) -> HttpClient {
        HttpClient { base_url, timeout_ms: 5_000 }
    }

    pub fn get(&self, path: &str) -> String {
        format!("GET {}{} (timeout {} ms)", self.base_url, path, self.timeout_ms)
    }

    pub fn post(&self, path: &str, body: &str) -> String {
        format!("POST {}{} {}", self.base_url, path, body)
    }
}
"#;

const CLI_PY: &str = r#""""Command-line entry point."""
import sys

from app.models import User


def run(argv):
    # Same flags as the Rust binary: parse_args is the reference implementation.
    options = parse_args_compat(argv)
    return User(options.get("name", "anonymous"))


def parse_args_compat(argv):
    """Mirror of parse_args in src/args.rs; calls parse_args semantics."""
    result = {}
    for arg in argv:
        if "=" in arg:
            key, value = arg.lstrip("-").split("=", 1)
            result[key] = value
    return result


if __name__ == "__main__":
    print(run(sys.argv[1:]))
"#;

const MODELS_PY: &str = r#"class User:
    """A user of the service."""

    def __init__(self, name):
        self.name = name

    def greeting(self):
        return f"hello {self.name}"


def load_users(path):
    with open(path) as f:
        return [User(line.strip()) for line in f]
"#;

const APP_JS: &str = r#"// Browser entry point.
import { ApiClient } from "./client";

function startApp(argv) {
  // The server parses its flags with parse_args; we only forward them.
  const forwarded = argv.map((a) => `--${a}`);
  const api = new ApiClient("/api");
  return api.fetchUsers(forwarded);
}

export { startApp };
"#;

const CLIENT_TS: &str = r#"export interface User {
  id: number;
  name: string;
}

export class ApiClient {
  constructor(private baseUrl: string) {}

  async fetchUsers(flags: string[]): Promise<User[]> {
    const res = await fetch(`${this.baseUrl}/users?${flags.join("&")}`);
    return res.json();
  }
}
"#;

const MAIN_GO: &str = r#"package main

import (
	"fmt"
	"os"
)

// handleRequest answers one request; flags come from parse_args in the Rust tool.
func handleRequest(path string) string {
	return fmt.Sprintf("ok %s", path)
}

func main() {
	fmt.Println(handleRequest(os.Args[0]))
}
"#;

const INVENTORY_JAVA: &str = r#"package fixture;

import java.util.HashMap;
import java.util.Map;

public class Inventory {
    private final Map<String, Integer> stock = new HashMap<>();

    public void restock(String item, int count) {
        stock.merge(item, count, Integer::sum);
    }

    public int available(String item) {
        return stock.getOrDefault(item, 0);
    }
}
"#;

const CHECKSUM_C: &str = r#"#include <stddef.h>
#include <stdint.h>

/* Adler-32 checksum of a buffer. */
uint32_t adler32_checksum(const unsigned char *data, size_t len) {
    uint32_t a = 1, b = 0;
    for (size_t i = 0; i < len; i++) {
        a = (a + data[i]) % 65521;
        b = (b + a) % 65521;
    }
    return (b << 16) | a;
}
"#;

const MATRIX_CPP: &str = r#"#include <vector>

namespace linalg {

class Matrix {
public:
    Matrix(int rows, int cols) : rows_(rows), cols_(cols), data_(rows * cols) {}

    double trace() const {
        double t = 0;
        for (int i = 0; i < rows_ && i < cols_; ++i) t += data_[i * cols_ + i];
        return t;
    }

private:
    int rows_, cols_;
    std::vector<double> data_;
};

}  // namespace linalg
"#;

const README_MD: &str = r#"# Fixture project

A small project used by Patina's end-to-end tests.

## Usage

Run the binary with `--key=value` flags; `parse_args` turns them into options,
and every caller of parse_args gets the same view of the command line.

## Configuration

Settings live in `config.toml` next to this file.
"#;

const CONFIG_TOML: &str = r#"[server]
host = "127.0.0.1"
port = 8080

[client]
retries = 3
"#;
