//! The daemon's Unix socket: single-instance lock, stale-socket recovery, owner-only permissions,
//! systemd socket activation, and a connection stream that admits only the daemon's own user.

use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use futures::Stream;
use tokio::net::{UnixListener, UnixStream};

use super::connections::{Gate, Guarded};

/// Make the state root private: from now on everything this process creates is owner-only (umask
/// 077: directories 0700, files 0600), and an existing installation made before that rule is
/// tightened — the root, the lock and the log, and everything under `state/` (sled) and `repos/`
/// (tantivy, vectors). Other files a user put there (`config.toml`, models) are left as they are;
/// the 0700 root already keeps other users out of them.
pub(crate) fn private_state(state_root: &Path) -> Result<()> {
    // SAFETY: umask only changes this process's file-creation mask.
    unsafe { libc::umask(0o077) };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(state_root)
        .with_context(|| format!("creating {}", state_root.display()))?;
    tighten(state_root, false)?;
    for name in ["patinad.lock", "patinad.log"] {
        tighten(&state_root.join(name), false)?;
    }
    for name in ["state", "repos", "run"] {
        tighten(&state_root.join(name), true)?;
    }
    Ok(())
}

/// Strip group and other permissions from `path` (and, with `recursive`, everything under it).
/// Symlinks are not followed; a missing path is fine.
fn tighten(path: &Path, recursive: bool) -> Result<()> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    if meta.file_type().is_symlink() {
        return Ok(());
    }
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o077 != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode & !0o077))
            .with_context(|| format!("making {} private", path.display()))?;
    }
    if recursive && meta.is_dir() {
        for entry in std::fs::read_dir(path)? {
            tighten(&entry?.path(), true)?;
        }
    }
    Ok(())
}

/// An exclusive advisory lock on [`patina_proto::endpoint::lock_path`], held for the daemon's
/// lifetime.
pub(crate) struct InstanceLock {
    file: File,
}

impl InstanceLock {
    /// The lock's descriptor (handed to the next image by a restart in place).
    pub(crate) fn raw_fd(&self) -> std::os::fd::RawFd {
        self.file.as_raw_fd()
    }
}

/// Take over the instance lock a previous image of this process held on descriptor `fd` (a
/// restart in place, `crate::process::restart`): the lock travels with the open file, so checking it is
/// ours is re-taking it, which cannot block. Close-on-exec is set again for the children.
pub(crate) fn adopt_lock(state_root: &Path, fd: std::os::fd::RawFd) -> Result<InstanceLock> {
    private_state(state_root)?;
    // SAFETY: `crate::process::restart::take_handover` checked `fd` is open; nothing else in this process
    // took ownership of it.
    let file = unsafe { File::from_raw_fd(fd) };
    // SAFETY: flock and fcntl on a descriptor we own.
    unsafe {
        if libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) != 0 {
            bail!(
                "the instance lock handed over on descriptor {fd} is not ours: {}",
                std::io::Error::last_os_error()
            );
        }
        libc::fcntl(file.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC);
    }
    Ok(InstanceLock { file })
}

pub(crate) fn lock_instance(state_root: &Path) -> Result<InstanceLock> {
    private_state(state_root)?;
    let path = patina_proto::endpoint::lock_path(state_root);
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .with_context(|| format!("creating {}", dir.display()))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&path)
        .with_context(|| format!("opening {}", path.display()))?;
    // A predecessor that was just asked to stop may still be exiting: give it a moment.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    let locked = loop {
        // SAFETY: flock on a file descriptor we own.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            break true;
        }
        if std::time::Instant::now() >= deadline {
            break false;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    if !locked {
        let holder = std::fs::read_to_string(&path).unwrap_or_default();
        bail!(
            "another patinad is already running for {} (pid {}); stop it with `patina daemon stop`",
            state_root.display(),
            holder.trim()
        );
    }
    file.set_len(0)?;
    writeln!(file, "{}", std::process::id())?;
    file.flush()?;
    Ok(InstanceLock { file })
}

pub(crate) struct Bound {
    pub listener: UnixListener,
    pub path: PathBuf,
    /// Handed over by systemd: the socket file belongs to systemd, not to us.
    pub activated: bool,
}

/// Take the listening socket systemd passed (`LISTEN_PID`/`LISTEN_FDS`, fd 3), if any and meant
/// for this process, and clear those variables so children do not inherit them.
///
/// # Safety
///
/// Must be called while the process has a single thread (first thing in `main`, before any
/// runtime, logger or library thread exists): it modifies the environment, which is only sound
/// when no other thread can be reading it.
pub unsafe fn take_inherited() -> Result<Option<std::os::unix::net::UnixListener>> {
    let pid_ok = std::env::var("LISTEN_PID")
        .ok()
        .and_then(|p| p.parse::<u32>().ok())
        == Some(std::process::id());
    let fds = std::env::var("LISTEN_FDS")
        .ok()
        .and_then(|n| n.parse::<i32>().ok())
        .unwrap_or(0);
    // SAFETY: the caller guarantees this process has a single thread (see above).
    unsafe {
        std::env::remove_var("LISTEN_PID");
        std::env::remove_var("LISTEN_FDS");
        std::env::remove_var("LISTEN_FDNAMES");
    }
    if !pid_ok || fds < 1 {
        return Ok(None);
    }
    // SAFETY: systemd guarantees fd 3 (SD_LISTEN_FDS_START) is an open socket handed to us, and
    // nothing else in this process has taken ownership of it yet.
    let listener = unsafe { std::os::unix::net::UnixListener::from_raw_fd(3) };
    listener
        .set_nonblocking(true)
        .context("socket passed by systemd is unusable")?;
    Ok(Some(listener))
}

/// Serve on `inherited` (the socket systemd passed, see [`take_inherited`]) when given; else bind
/// `path` with mode 0600 inside a 0700 directory, replacing a stale socket left by a crashed
/// daemon; a directory that is not the user's own or that others may write to is refused
/// (`patina_proto::endpoint::socket_problem`). Must be called with the instance lock held.
pub(crate) async fn bind(
    path: &Path,
    inherited: Option<std::os::unix::net::UnixListener>,
) -> Result<Bound> {
    if let Some(inherited) = inherited {
        let path = inherited
            .local_addr()
            .ok()
            .and_then(|a| a.as_pathname().map(Path::to_path_buf))
            .unwrap_or_else(|| path.to_path_buf());
        return Ok(Bound {
            listener: UnixListener::from_std(inherited)?,
            path,
            activated: true,
        });
    }
    // A directory others may write to (or that is not ours) lets another user serve there first.
    if let Some(why) = patina_proto::endpoint::socket_problem(path) {
        bail!("{why}");
    }
    let dir = path
        .parent()
        .context("socket path has no parent directory")?;
    if !dir.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .with_context(|| format!("creating {}", dir.display()))?;
    }
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        // Only a socket is ever replaced: a regular file, a directory or a symlink given as the
        // socket path is the user's, not a leftover of ours.
        if !std::os::unix::fs::FileTypeExt::is_socket(&meta.file_type()) {
            bail!(
                "{} exists and is not a socket; refusing to replace it (choose another --socket path)",
                path.display()
            );
        }
        // Someone else (a daemon with another state root) may be serving it: never steal it.
        if UnixStream::connect(path).await.is_ok() {
            bail!("{} is in use by another process", path.display());
        }
        tracing::warn!(socket = %path.display(), "removing stale socket");
        std::fs::remove_file(path)
            .with_context(|| format!("removing stale socket {}", path.display()))?;
    }
    let listener =
        UnixListener::bind(path).with_context(|| format!("binding {}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(Bound {
        listener,
        path: path.to_path_buf(),
        activated: false,
    })
}

/// Accepted connections from processes of our own user (others are logged and dropped), each
/// within the [`Gate`]'s limits (a connection past its cap is closed at once).
pub(crate) fn incoming(
    listener: UnixListener,
    gate: Gate,
) -> impl Stream<Item = std::io::Result<Guarded>> {
    // SAFETY: getuid cannot fail.
    let me = unsafe { libc::getuid() };
    futures::stream::unfold((listener, gate), move |(listener, mut gate)| async move {
        loop {
            match listener.accept().await {
                Ok((stream, _)) => match stream.peer_cred() {
                    Ok(cred) if cred.uid() == me => {
                        if let Some(admitted) = gate.admit(stream) {
                            return Some((Ok(admitted), (listener, gate)));
                        }
                    }
                    Ok(cred) => {
                        tracing::warn!(uid = cred.uid(), "refused a connection from another user")
                    }
                    Err(e) => tracing::warn!("refused a connection without peer credentials: {e}"),
                },
                Err(e) => {
                    // EMFILE and friends: back off briefly instead of spinning.
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
            }
        }
    })
}
