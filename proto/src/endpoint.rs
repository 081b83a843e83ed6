//! Where Patina keeps its state and its socket, resolved the same way by the daemon and every
//! client, and (with the `client` feature) a tonic channel over that socket.
//!
//! Resolution order for the socket: an explicit path (`--socket`), `$PATINA_SOCKET`,
//! `$PATINA_HOME/run/patina.sock` when `PATINA_HOME` is set (isolated instances, tests),
//! `$XDG_RUNTIME_DIR/patina/patina.sock`, and finally `<data dir>/run/patina.sock`.

use std::path::{Path, PathBuf};

/// The state root: `$PATINA_HOME`, else the platform data dir (`~/.local/share/patina` on Linux).
pub fn state_root() -> PathBuf {
    if let Some(home) = std::env::var_os("PATINA_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(home);
    }
    match project_dirs() {
        Some(dirs) => dirs.data_dir().to_path_buf(),
        None => std::env::temp_dir().join("patina"),
    }
}

/// The config file: `$PATINA_HOME/config.toml`, else `<XDG config dir>/patina/config.toml`.
pub fn config_file() -> PathBuf {
    if let Some(home) = std::env::var_os("PATINA_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(home).join("config.toml");
    }
    match project_dirs() {
        Some(dirs) => dirs.config_dir().join("config.toml"),
        None => state_root().join("config.toml"),
    }
}

/// The socket path, given an optional explicit override (a `--socket` flag).
pub fn socket_path(explicit: Option<&Path>) -> PathBuf {
    if let Some(p) = explicit {
        return p.to_path_buf();
    }
    if let Some(p) = std::env::var_os("PATINA_SOCKET").filter(|v| !v.is_empty()) {
        return PathBuf::from(p);
    }
    if let Some(home) = std::env::var_os("PATINA_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(home).join("run").join("patina.sock");
    }
    if let Some(rt) = std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        return PathBuf::from(rt).join("patina").join("patina.sock");
    }
    if let Some(rt) = project_dirs().and_then(|d| d.runtime_dir().map(Path::to_path_buf)) {
        return rt.join("patina.sock");
    }
    state_root().join("run").join("patina.sock")
}

/// Where a daemon started by a client writes its log: `$PATINA_HOME/patinad.log` for an isolated
/// instance, else `$XDG_STATE_HOME/patina/patinad.log` (`~/.local/state/patina`; logs are state,
/// not data), else `<state root>/patinad.log`.
pub fn log_path() -> PathBuf {
    if std::env::var_os("PATINA_HOME").is_some_and(|v| !v.is_empty()) {
        return state_root().join("patinad.log");
    }
    match project_dirs().and_then(|d| d.state_dir().map(Path::to_path_buf)) {
        Some(dir) => dir.join("patinad.log"),
        None => state_root().join("patinad.log"),
    }
}

/// The single-instance lock of a daemon serving `root`: next to the log
/// (`$XDG_STATE_HOME/patina/patinad.lock`) for the default state root, else inside `root`
/// (`$PATINA_HOME`, `--state-root`), so two daemons on different roots never contend for one lock
/// and two on the same root always do. It holds the pid of the daemon that owns it.
pub fn lock_path(root: &Path) -> PathBuf {
    let isolated = std::env::var_os("PATINA_HOME").is_some_and(|v| !v.is_empty());
    if !isolated
        && root == state_root()
        && let Some(dir) = project_dirs().and_then(|d| d.state_dir().map(Path::to_path_buf))
    {
        return dir.join("patinad.lock");
    }
    root.join("patinad.lock")
}

/// A log file grown past this is rotated (to `patinad.log.1`) when the next daemon starts.
pub const LOG_ROTATE_BYTES: u64 = 10 * 1024 * 1024;

/// Keep one previous log: `patinad.log` → `patinad.log.1` once it is larger than `max` bytes.
pub fn rotate_log(log: &Path, max: u64) -> std::io::Result<()> {
    match std::fs::metadata(log) {
        Ok(m) if m.len() > max => {
            let mut old = log.as_os_str().to_owned();
            old.push(".1");
            std::fs::rename(log, PathBuf::from(old))
        }
        _ => Ok(()),
    }
}

/// The daemon executable clients start: `$PATINA_DAEMON_BIN`, else `patinad` next to the running
/// executable, else `patinad` on `PATH`.
pub fn daemon_binary() -> PathBuf {
    if let Some(p) = std::env::var_os("PATINA_DAEMON_BIN").filter(|v| !v.is_empty()) {
        return PathBuf::from(p);
    }
    if let Ok(exe) = std::env::current_exe() {
        let sibling = exe.with_file_name("patinad");
        if sibling.is_file() {
            return sibling;
        }
    }
    PathBuf::from("patinad")
}

/// Why `socket` cannot be a daemon's socket, if it cannot: something that is not a socket (a
/// regular file, a directory, a symlink) is already there. A daemon never replaces it, so a client
/// says so at once instead of starting a daemon that refuses to bind.
pub fn socket_conflict(socket: &Path) -> Option<String> {
    use std::os::unix::fs::FileTypeExt;
    let meta = std::fs::symlink_metadata(socket).ok()?;
    (!meta.file_type().is_socket()).then(|| {
        format!(
            "{} exists and is not a socket; refusing to use or replace it (choose another --socket path)",
            socket.display()
        )
    })
}

/// Set to `1` to use a socket whose directory other users may write to, or that another user
/// owns (a shared runtime directory you trust). Who serves the socket is checked all the same.
pub const TRUST_SOCKET_DIR_VAR: &str = "PATINA_TRUST_SOCKET_DIR";

/// The longest socket path a Unix socket address holds (`sun_path`, less its final NUL).
pub const MAX_SOCKET_PATH: usize = if cfg!(any(
    target_os = "macos",
    target_os = "ios",
    target_os = "freebsd",
    target_os = "openbsd",
    target_os = "netbsd"
)) {
    103
} else {
    107
};

/// This process's effective user.
pub fn my_uid() -> u32 {
    // SAFETY: geteuid cannot fail and touches no memory.
    unsafe { libc::geteuid() }
}

/// Why `socket` must not be used, before anything binds or connects to it: a path longer than a
/// socket address holds ([`MAX_SOCKET_PATH`]), or a directory that is not this user's own or that
/// other users may write to — there another user can put their own socket first, and read or
/// forge every query and answer. [`TRUST_SOCKET_DIR_VAR`] waives the directory's part (not the
/// check of who serves it, which every connection makes). A directory that does not exist yet is
/// fine: the daemon creates it, owner-only.
pub fn socket_problem(socket: &Path) -> Option<String> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;
    let len = socket.as_os_str().as_bytes().len();
    if len > MAX_SOCKET_PATH {
        return Some(format!(
            "the socket path {} is {len} bytes long, and a Unix socket path holds at most \
             {MAX_SOCKET_PATH}: choose a shorter --socket, PATINA_SOCKET or PATINA_HOME",
            socket.display()
        ));
    }
    if std::env::var_os(TRUST_SOCKET_DIR_VAR).is_some_and(|v| v == "1") {
        return None;
    }
    let dir = match socket.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let meta = std::fs::metadata(dir).ok()?;
    let me = my_uid();
    let waive =
        format!("(set {TRUST_SOCKET_DIR_VAR}=1 if you trust every user who can write there)");
    if meta.uid() != me {
        return Some(format!(
            "the socket's directory {} belongs to another user (uid {}, not {me}): they could \
             serve a socket of their own there; use a directory of your own {waive}",
            dir.display(),
            meta.uid()
        ));
    }
    let mode = meta.mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Some(format!(
            "the socket's directory {} (mode {mode:o}) is writable by other users: they could \
             replace the socket with their own; make it private (chmod 700 {}) or choose \
             another {waive}",
            dir.display(),
            dir.display()
        ));
    }
    None
}

/// Why the process at the other end of a socket must not be trusted, given its user id (the
/// peer credentials the kernel reports): it is not this user.
pub fn peer_problem(socket: &Path, peer_uid: u32) -> Option<String> {
    let me = my_uid();
    (peer_uid != me).then(|| {
        format!(
            "the socket {} is served by another user (uid {peer_uid}, not {me}); refusing to \
             send it anything",
            socket.display()
        )
    })
}

/// Launch a detached daemon serving `socket`: stdin/stdout closed, stderr appended to
/// [`log_path`] (rotated past [`LOG_ROTATE_BYTES`]), in its own process group (a Ctrl-C aimed at
/// the client must not kill it). The [`Started`] tells whether it stopped, and why.
pub fn spawn_daemon(socket: &Path) -> std::io::Result<Started> {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    let with = |what: String| {
        move |e: std::io::Error| std::io::Error::new(e.kind(), format!("{what}: {e}"))
    };
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let log = log_path();
    if let Some(dir) = log.parent() {
        // The state root holds indexed code and notes: owner only (the daemon tightens an existing
        // one too).
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(with(format!("creating {}", dir.display())))?;
    }
    // A log that could not be rotated is still appended to.
    let _ = rotate_log(&log, LOG_ROTATE_BYTES);
    let log_file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(&log)
        .map_err(with(format!("opening {}", log.display())))?;
    let log_from = log_file.metadata().map(|m| m.len()).unwrap_or(0);
    let bin = daemon_binary();
    let child = Command::new(&bin)
        .arg("--socket")
        .arg(socket)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log_file)
        .process_group(0)
        .spawn()
        .map_err(with(format!("cannot start the daemon ({})", bin.display())))?;
    Ok(Started {
        child,
        log,
        log_from,
    })
}

/// A daemon [`spawn_daemon`] started: whether it is still running, and if not, why it stopped.
pub struct Started {
    child: std::process::Child,
    log: PathBuf,
    /// Where its lines begin in the log.
    log_from: u64,
}

impl Started {
    /// `None` while it runs; once it has exited, its status and the reason it gave (what it wrote
    /// to the log from its last `patinad: …` line on, else its last line), e.g. a setting it
    /// refused.
    pub fn exited(&mut self) -> Option<String> {
        let status = self.child.try_wait().ok()??;
        let mut said = String::new();
        if let Ok(mut f) = std::fs::File::open(&self.log) {
            use std::io::{Read, Seek, SeekFrom};
            // The lines of this start only, and at most their last 64 KiB.
            let len = f.metadata().map(|m| m.len()).unwrap_or(0);
            let from = self.log_from.max(len.saturating_sub(64 * 1024));
            let mut bytes = Vec::new();
            if f.seek(SeekFrom::Start(from)).is_ok() && f.read_to_end(&mut bytes).is_ok() {
                let text = String::from_utf8_lossy(&bytes);
                let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
                // Its last words: from its last `patinad: …` line on (an error may span lines,
                // a TOML error's pointer), else its last line.
                let from = lines
                    .iter()
                    .rposition(|l| l.starts_with("patinad:"))
                    .unwrap_or(lines.len().saturating_sub(1));
                said = lines[from..]
                    .iter()
                    .take(20)
                    .copied()
                    .collect::<Vec<_>>()
                    .join("\n");
            }
        }
        Some(if said.is_empty() {
            format!(
                "patinad exited ({status}) before answering; see {}",
                self.log.display()
            )
        } else {
            format!("patinad exited ({status}) before answering: {said}")
        })
    }
}

fn project_dirs() -> Option<directories::ProjectDirs> {
    directories::ProjectDirs::from("", "", "patina")
}

#[cfg(feature = "client")]
pub use client::{CheckFailed, ConnectError, Unreachable, check, connect, connect_or_start};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_past_the_limit_is_rotated_once_and_a_small_one_is_kept() {
        let dir = std::env::temp_dir().join(format!("patina-rotate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("patinad.log");
        std::fs::write(&log, "small").unwrap();
        rotate_log(&log, 10).unwrap();
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "small");
        std::fs::write(&log, "a line longer than ten bytes").unwrap();
        rotate_log(&log, 10).unwrap();
        assert!(!log.exists());
        assert_eq!(
            std::fs::read_to_string(dir.join("patinad.log.1")).unwrap(),
            "a line longer than ten bytes"
        );
        rotate_log(&log, 10).unwrap(); // nothing to rotate: fine
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Only a daemon of another protocol is for the user to fix; a silent one is worth a retry.
    /// Clients decide by the variant, never by the words, so rewording a message breaks nothing.
    #[cfg(feature = "client")]
    #[test]
    fn a_protocol_mismatch_is_permanent_and_names_the_remedy() {
        let other = CheckFailed::OtherProtocol {
            version: "0.0.1".into(),
            protocol: crate::PROTOCOL_VERSION + 1,
        };
        assert!(other.permanent());
        assert!(other.to_string().contains("patina daemon stop"), "{other}");
        let silent = CheckFailed::NoAnswer("connection reset".into());
        assert!(!silent.permanent());
        assert!(silent.to_string().ends_with("connection reset"), "{silent}");
    }
}

#[cfg(feature = "client")]
mod client {
    use std::path::Path;

    use hyper_util::rt::TokioIo;
    use tonic::transport::{Channel, Endpoint, Uri};

    /// Why [`connect`] opened no channel.
    #[derive(Debug)]
    pub enum ConnectError {
        /// The socket must not be used ([`super::socket_problem`], [`super::peer_problem`]):
        /// retrying or starting a daemon cannot help.
        Refused(String),
        /// Nothing answered (no daemon, a stale socket, a broken handshake).
        Transport(tonic::transport::Error),
    }

    impl std::fmt::Display for ConnectError {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            match self {
                ConnectError::Refused(why) => f.write_str(why),
                ConnectError::Transport(e) => write!(f, "{e}"),
            }
        }
    }

    impl std::error::Error for ConnectError {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            match self {
                ConnectError::Refused(_) => None,
                ConnectError::Transport(e) => Some(e),
            }
        }
    }

    /// The marker of the connector's own refusal, found again in tonic's error chain.
    const PEER_REFUSED: &str = "patina: untrusted peer: ";

    /// Open a gRPC channel to the daemon listening on `socket`. Fails fast (no retry) when nothing
    /// listens there, so callers can decide to start a daemon; refuses a socket whose place or
    /// whose server is not this user's ([`ConnectError::Refused`]), checked on the very
    /// connection the channel uses.
    pub async fn connect(socket: &Path) -> Result<Channel, ConnectError> {
        if let Some(why) = super::socket_problem(socket) {
            return Err(ConnectError::Refused(why));
        }
        let socket = socket.to_path_buf();
        // The URI is required by tonic but never used: the connector below ignores it.
        Endpoint::from_static("http://patina.invalid")
            .connect_with_connector(tower::service_fn(move |_: Uri| {
                let socket = socket.clone();
                async move {
                    let stream = tokio::net::UnixStream::connect(&socket).await?;
                    let uid = stream.peer_cred()?.uid();
                    if let Some(why) = super::peer_problem(&socket, uid) {
                        return Err(std::io::Error::new(
                            std::io::ErrorKind::PermissionDenied,
                            format!("{PEER_REFUSED}{why}"),
                        ));
                    }
                    Ok::<_, std::io::Error>(TokioIo::new(stream))
                }
            }))
            .await
            .map_err(|e| {
                let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&e);
                while let Some(c) = cause {
                    if let Some(why) = c.to_string().strip_prefix(PEER_REFUSED) {
                        return ConnectError::Refused(why.to_string());
                    }
                    cause = c.source();
                }
                ConnectError::Transport(e)
            })
    }

    /// Ask the daemon for its health and check that it speaks [`crate::PROTOCOL_VERSION`]; the
    /// error says how to fix a mismatch.
    pub async fn check(channel: &Channel) -> Result<crate::v1::CheckResponse, CheckFailed> {
        let h = crate::v1::health_client::HealthClient::new(channel.clone())
            .check(crate::v1::CheckRequest {
                client_protocol: crate::PROTOCOL_VERSION,
            })
            .await
            .map_err(|s| CheckFailed::NoAnswer(s.message().to_string()))?
            .into_inner();
        if h.protocol != crate::PROTOCOL_VERSION {
            return Err(CheckFailed::OtherProtocol {
                version: h.version,
                protocol: h.protocol,
            });
        }
        Ok(h)
    }

    /// Why [`check`] refused a channel: the daemon did not answer its health call (worth a retry:
    /// it may be starting or gone), or it answered in another protocol (for the user to fix, by
    /// restarting it).
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum CheckFailed {
        /// The health call failed; the status message.
        NoAnswer(String),
        /// The daemon runs another build: its version and protocol.
        OtherProtocol { version: String, protocol: u32 },
    }

    impl CheckFailed {
        /// Retrying cannot help: the user must restart the daemon.
        pub fn permanent(&self) -> bool {
            matches!(self, CheckFailed::OtherProtocol { .. })
        }
    }

    impl std::fmt::Display for CheckFailed {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            match self {
                CheckFailed::NoAnswer(why) => write!(f, "the daemon does not answer: {why}"),
                CheckFailed::OtherProtocol { version, protocol } => write!(
                    f,
                    "the running daemon (version {version}, protocol {protocol}) does not speak \
                     this client's protocol {}; restart it with `patina daemon stop` (it starts \
                     again on demand)",
                    crate::PROTOCOL_VERSION
                ),
            }
        }
    }

    impl std::error::Error for CheckFailed {}

    /// Why [`connect_or_start`] has no channel.
    #[derive(Debug)]
    pub struct Unreachable {
        pub message: String,
        /// Retrying cannot help (a refused socket, a path taken by something else): the user
        /// must act.
        pub permanent: bool,
    }

    impl std::fmt::Display for Unreachable {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(&self.message)
        }
    }

    impl std::error::Error for Unreachable {}

    /// How long a client still waits for a socket to answer after the daemon it started exited.
    const EXITED_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

    /// [`connect`], starting a detached daemon ([`super::spawn_daemon`]) first when nothing
    /// answers on `socket`, then waiting up to `timeout` for it to accept connections. A refused
    /// socket starts nothing.
    pub async fn connect_or_start(
        socket: &Path,
        timeout: std::time::Duration,
    ) -> Result<Channel, Unreachable> {
        let permanent = |message: String| Unreachable {
            message,
            permanent: true,
        };
        match connect(socket).await {
            Ok(ch) => return Ok(ch),
            Err(ConnectError::Refused(why)) => return Err(permanent(why)),
            Err(ConnectError::Transport(_)) => {}
        }
        if let Some(why) = super::socket_conflict(socket) {
            return Err(permanent(why));
        }
        let mut started = super::spawn_daemon(socket).map_err(|e| Unreachable {
            message: e.to_string(),
            permanent: false,
        })?;
        let mut deadline = std::time::Instant::now() + timeout;
        let mut exited = None;
        let mut delay = std::time::Duration::from_millis(5);
        loop {
            match connect(socket).await {
                Ok(ch) => return Ok(ch),
                Err(ConnectError::Refused(why)) => return Err(permanent(why)),
                Err(ConnectError::Transport(_)) => {}
            }
            if exited.is_none()
                && let Some(why) = started.exited()
            {
                // Another client's daemon may be the one that serves (this one then stops):
                // a little longer for it, not the whole timeout.
                deadline = deadline.min(std::time::Instant::now() + EXITED_GRACE);
                exited = Some(why);
            }
            if std::time::Instant::now() > deadline {
                if let Some(why) = exited {
                    return Err(permanent(why));
                }
                return Err(Unreachable {
                    message: format!(
                        "started patinad but it did not answer on {} within {}s; see {}",
                        socket.display(),
                        timeout.as_secs(),
                        super::log_path().display()
                    ),
                    permanent: false,
                });
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(std::time::Duration::from_millis(100));
        }
    }
}
