//! `patina-confined`: the one way Patina opens a file of a repository. A path relative to a root
//! directory is opened one component at a time from the root's descriptor (`openat(2)`), every
//! component with `O_NOFOLLOW`, so no symbolic link is ever followed — not a link planted in the
//! repository, and not one swapped in for a regular file or a directory between any earlier check
//! and this open. What was opened is then checked on the same descriptor (`fstat(2)`: a regular
//! file, nothing else) and read from it, so the bytes returned are the bytes of a regular file
//! beneath the root, whatever changes on disk meanwhile.
//!
//! Callers that accept symlinks inside a repository (a link to another file of the same
//! repository) resolve them first, check where they lead, and open the resolved relative path
//! here: if the tree changes in between, the open fails ([`Refusal::Symlink`]) instead of leaving
//! the repository.
//!
//! What this crate does not know: repositories, ignore rules, secret files. It is the floor those
//! rules stand on. A hard link is a regular file and is read as one (it cannot be told apart from
//! any other name of the same file).

use std::ffi::CString;
use std::fs::{File, Metadata};
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};

/// Why a file was not opened.
#[derive(Debug)]
pub enum Refusal {
    /// The relative path is empty, absolute, or holds `..` (or a NUL byte).
    NotRelative,
    /// Nothing at that path (or a component on the way is not a directory).
    NotFound,
    /// A component is a symbolic link, or was replaced by one while it was opened.
    Symlink,
    /// The path leads to a directory, a FIFO, a socket or a device, not a regular file.
    NotRegular,
    /// The path is longer than the system allows for one name or one path.
    TooLong,
    /// Any other failure of the system (permissions, I/O).
    Io(std::io::Error),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::NotRelative => f.write_str("not a path inside the directory"),
            Refusal::NotFound => f.write_str("no such file"),
            Refusal::Symlink => f.write_str(
                "a symbolic link is on the way (or replaced the file while it was read), and \
                 symbolic links are never followed",
            ),
            Refusal::NotRegular => f.write_str("not a regular file"),
            Refusal::TooLong => f.write_str("the path is too long for the system to open"),
            Refusal::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Refusal {}

impl From<Refusal> for std::io::Error {
    fn from(r: Refusal) -> std::io::Error {
        let kind = match &r {
            Refusal::NotFound => std::io::ErrorKind::NotFound,
            Refusal::NotRelative | Refusal::NotRegular | Refusal::TooLong => {
                std::io::ErrorKind::InvalidInput
            }
            Refusal::Symlink => std::io::ErrorKind::PermissionDenied,
            Refusal::Io(e) => e.kind(),
        };
        match r {
            Refusal::Io(e) => e,
            other => std::io::Error::new(kind, other.to_string()),
        }
    }
}

fn refusal_of(e: std::io::Error) -> Refusal {
    match e.raw_os_error() {
        // ELOOP: O_NOFOLLOW met a link (Linux, macOS); EMLINK: the same on FreeBSD.
        Some(libc::ELOOP) | Some(libc::EMLINK) => Refusal::Symlink,
        Some(libc::ENOENT) | Some(libc::ENOTDIR) => Refusal::NotFound,
        Some(libc::ENAMETOOLONG) => Refusal::TooLong,
        _ => Refusal::Io(e),
    }
}

/// `openat(dir, name, flags)`, the descriptor owned.
fn open_at(dir: &OwnedFd, name: &std::ffi::OsStr, flags: libc::c_int) -> Result<OwnedFd, Refusal> {
    let name = CString::new(name.as_bytes()).map_err(|_| Refusal::NotRelative)?;
    // SAFETY: `dir` is an open descriptor we own for the duration of the call and `name` is a
    // NUL-terminated string; the returned descriptor, when valid, is new and owned by no one else.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags | libc::O_CLOEXEC) };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        // `O_DIRECTORY` on a link says ENOTDIR before `O_NOFOLLOW` can say ELOOP: look again.
        if e.raw_os_error() == Some(libc::ENOTDIR) && is_symlink_at(dir, &name) {
            return Err(Refusal::Symlink);
        }
        return Err(refusal_of(e));
    }
    // SAFETY: `fd` was just returned by openat and is owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Whether `name` in `dir` is a symbolic link itself (`fstatat` without following it).
fn is_symlink_at(dir: &OwnedFd, name: &CString) -> bool {
    // SAFETY: a zeroed `stat` is a valid out-buffer; `dir` and `name` are valid for the call.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        ) == 0
            && st.st_mode & libc::S_IFMT == libc::S_IFLNK
    }
}

/// Open the directory `root` (its own path may hold links: it is the caller's trusted start).
fn open_root(root: &Path) -> Result<OwnedFd, Refusal> {
    let path = CString::new(root.as_os_str().as_bytes()).map_err(|_| Refusal::NotRelative)?;
    // SAFETY: `path` is NUL-terminated; the descriptor returned is new.
    let fd = unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(refusal_of(std::io::Error::last_os_error()));
    }
    // SAFETY: `fd` was just returned by open and is owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Open the regular file at `rel` beneath the directory `root`, following no symbolic link on
/// the way (see the crate's doc). Returns the open file and its metadata, read from the same
/// descriptor. Opening never blocks (a FIFO is refused, never waited on).
pub fn open(root: &Path, rel: &Path) -> Result<(File, Metadata), Refusal> {
    let mut names = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => names.push(n),
            Component::CurDir => {}
            _ => return Err(Refusal::NotRelative),
        }
    }
    let Some((last, dirs)) = names.split_last() else {
        return Err(Refusal::NotRelative);
    };
    let mut dir = open_root(root)?;
    for name in dirs {
        dir = open_at(
            &dir,
            name,
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW,
        )?;
    }
    let fd = open_at(
        &dir,
        last,
        libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY,
    )?;
    let file = File::from(fd);
    let meta = file.metadata().map_err(Refusal::Io)?;
    if !meta.is_file() {
        return Err(Refusal::NotRegular);
    }
    Ok((file, meta))
}

/// At most `max_bytes + 1` bytes of the regular file at `rel` beneath `root` ([`open`]): enough
/// to tell a file is larger than `max_bytes`, whatever size it reports.
pub fn read(root: &Path, rel: &Path, max_bytes: u64) -> Result<Vec<u8>, Refusal> {
    let (file, meta) = open(root, rel)?;
    let mut bytes = Vec::with_capacity(meta.len().min(max_bytes) as usize + 1);
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(Refusal::Io)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests;
