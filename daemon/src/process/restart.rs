//! Restarting in place: an idle daemon whose heap holds far more than it uses becomes a fresh
//! copy of itself, with the same process id, socket and instance lock.
//!
//! Bulk work (a large repository's first index round, its graph builds, embedding batches)
//! leaves long-lived rows — sled's records of the pages the round wrote, the watcher's paths,
//! file facts — scattered one or two to a page between buffers the work freed; no trim can give
//! those pages back, and a daemon that freshly indexed 120k chunks idles at half again what the
//! same state takes after a restart (bench/RESULTS.md, fourteenth and fifteenth sessions). A
//! restart reads everything back from disk in one pass, packed. So, once nothing is running (no
//! index job, no embedding backlog, no graph build due, no request for the idle time that also
//! releases the query session and idle graphs) and the
//! resident heap exceeds what is in use by at least [`FLOOR`] and a fifth of the anonymous
//! memory, the daemon stops as it would for `patina daemon stop` (the store flushed, vectors
//! saved) and `execve`s its own binary, handing over the listening socket (as systemd socket
//! activation does: fd 3, `LISTEN_FDS`/`LISTEN_PID`) and the instance lock (its descriptor in
//! `PATINA_HANDOVER`). Clients that connect meanwhile wait in the socket's backlog; long-lived
//! clients reconnect as they do after any restart. After one restart in place the next waits an hour, so
//! a daemon whose own start leaves it fragmented does not restart over and over.
//! `[daemon] restart_when_fragmented = false` turns it off.
//!
//! The decision ([`worth_it`]) and the handover's encoding are pure and unit-tested; the
//! integration test `tests/memory.rs` follows a real daemon through one.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Duration;

const MIB: u64 = 1024 * 1024;

/// Below this much held-but-unused heap a restart is not worth its pause: the waste an idle
/// daemon is left with at most (a tenth of the default budget).
pub(crate) const FLOOR: u64 = 48 * MIB;
/// The environment variable carrying the handover to the new image.
const HANDOVER_VAR: &str = "PATINA_HANDOVER";

/// Set once a stop was asked for (a signal, `Health.Shutdown`): a restart decided meanwhile
/// becomes a stop.
static STOP_ASKED: AtomicBool = AtomicBool::new(false);

/// Note that a stop was asked for.
pub(crate) fn ask_stop() {
    STOP_ASKED.store(true, Ordering::SeqCst);
}

/// Whether a stop was asked for.
pub(crate) fn stop_asked() -> bool {
    STOP_ASKED.load(Ordering::SeqCst)
}

/// When the last request arrived (Unix ms); 0 before the first.
static LAST_REQUEST_MS: AtomicI64 = AtomicI64::new(0);

/// Note that a request arrived (called for every gRPC request).
pub(crate) fn touch() {
    LAST_REQUEST_MS.store(crate::process::clock::now_unix_ms(), Ordering::Relaxed);
}

/// How long since the last request (since `started` when there was none).
pub(crate) fn quiet_for(started: std::time::Instant) -> Duration {
    let last = LAST_REQUEST_MS.load(Ordering::Relaxed);
    if last == 0 {
        return started.elapsed();
    }
    Duration::from_millis(
        crate::process::clock::now_unix_ms()
            .saturating_sub(last)
            .max(0) as u64,
    )
}

/// What the heap holds against what it uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Heap {
    /// Anonymous resident memory (`RssAnon`): the heaps, the region apart, stacks.
    pub resident: u64,
    /// Bytes in live allocations: glibc's in use and mapped blocks, and the region's runs.
    pub in_use: u64,
}

impl Heap {
    /// Resident memory not backing a live allocation: freed blocks on pages that also hold live
    /// ones, which only moving the live ones would return.
    pub fn held_unused(self) -> u64 {
        self.resident.saturating_sub(self.in_use)
    }

    /// This process's heap now (after a trim, so whole free pages are not counted).
    pub fn now() -> Heap {
        crate::process::memory::release_free_heap();
        let resident = crate::process::memory::Resident::now().anon;
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        let in_use = {
            // SAFETY: mallinfo2 has no preconditions; it reads glibc's arena statistics.
            let m = unsafe { libc::mallinfo2() };
            (m.uordblks + m.hblkhd) as u64
        };
        #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
        let in_use = resident;
        #[cfg(target_os = "linux")]
        let in_use = in_use + crate::process::apart::carved() as u64;
        Heap { resident, in_use }
    }
}

/// Whether a restart would return enough: at least `floor` held unused, and a fifth of the
/// anonymous memory (a restart's pause grows with what it reads back: a large daemon restarts
/// only for a large share).
pub(crate) fn worth_it(heap: Heap, floor: u64) -> bool {
    let unused = heap.held_unused();
    unused >= floor && unused.saturating_mul(5) >= heap.resident
}

/// `PATINA_TEST_RESTART_WHEN_IDLE=1`: restart once idle whatever the heap holds (the tests' way
/// to follow a restart in place of a small daemon; the decision itself is unit-tested).
pub(crate) fn forced() -> bool {
    patina_core::hooks::test_hook("PATINA_TEST_RESTART_WHEN_IDLE").is_some_and(|v| v == "1")
}

/// What one image of the daemon hands the next.
#[derive(Debug, PartialEq, Eq)]
pub struct Handover {
    /// The instance lock's descriptor (its `flock` travels with it).
    pub lock_fd: RawFd,
    /// Whether the socket came from systemd (then its file is systemd's, never removed by us).
    pub activated: bool,
    /// Restarts in place so far, this one included.
    pub restarts: u32,
}

impl Handover {
    fn encode(&self) -> String {
        format!(
            "lock={};activated={};restarts={}",
            self.lock_fd,
            u8::from(self.activated),
            self.restarts
        )
    }

    fn decode(s: &str) -> Option<Handover> {
        let mut lock_fd = None;
        let mut activated = None;
        let mut restarts = None;
        for part in s.split(';') {
            let (k, v) = part.split_once('=')?;
            match k {
                "lock" => lock_fd = v.parse::<RawFd>().ok().filter(|fd| *fd > 2),
                "activated" => activated = Some(v == "1"),
                "restarts" => restarts = v.parse().ok(),
                _ => return None,
            }
        }
        Some(Handover {
            lock_fd: lock_fd?,
            activated: activated?,
            restarts: restarts?,
        })
    }
}

/// The handover a previous image left in the environment, if any, and the variable cleared so
/// children do not inherit it.
///
/// # Safety
///
/// Must be called while the process has a single thread (first thing in `main`), as it modifies
/// the environment.
pub unsafe fn take_handover() -> Option<Handover> {
    let value = std::env::var(HANDOVER_VAR).ok();
    // SAFETY: the caller guarantees this process has a single thread.
    unsafe { std::env::remove_var(HANDOVER_VAR) };
    let h = Handover::decode(&value?)?;
    // The descriptor must be open (and ours): a stale variable in a user's shell is ignored.
    // SAFETY: F_GETFD only reads the descriptor's flags.
    (unsafe { libc::fcntl(h.lock_fd, libc::F_GETFD) } >= 0).then_some(h)
}

/// A request to restart, and what the server hands to the new image.
pub struct Restart {
    pub handover: Handover,
    /// A duplicate of the listening socket (close-on-exec until the exec).
    pub listener: OwnedFd,
}

/// A duplicate of `fd` numbered above 3 (fd 3 is where the socket goes), close-on-exec.
pub(crate) fn keep(fd: RawFd) -> std::io::Result<OwnedFd> {
    // SAFETY: F_DUPFD_CLOEXEC duplicates a descriptor we own; the result is ours.
    let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 4) };
    if dup < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `dup` is a fresh descriptor nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(dup) })
}

/// Replace this process's image with a fresh one of the same binary and arguments, the socket on
/// fd 3 and the lock on `handover.lock_fd`. Returns only on failure. Call after everything
/// durable is flushed, from the main thread, with nothing else left to run.
pub fn exec(restart: Restart) -> std::io::Error {
    let Restart {
        mut handover,
        listener,
    } = restart;
    // The socket goes to fd 3 (dup2 clears close-on-exec there); the lock must stay open across
    // the exec and must not be fd 3.
    let listener_fd = listener.as_raw_fd();
    // SAFETY: plain descriptor operations on descriptors this process owns; the process is about
    // to be replaced, so clobbering fd 3 loses nothing (every other descriptor is close-on-exec).
    unsafe {
        if handover.lock_fd == 3 {
            let moved = libc::fcntl(3, libc::F_DUPFD, 4);
            if moved < 0 {
                return std::io::Error::last_os_error();
            }
            handover.lock_fd = moved;
        }
        if libc::dup2(listener_fd, 3) < 0 {
            return std::io::Error::last_os_error();
        }
        let flags = libc::fcntl(handover.lock_fd, libc::F_GETFD);
        if flags < 0 || libc::fcntl(handover.lock_fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC) < 0
        {
            return std::io::Error::last_os_error();
        }
    }
    drop(listener);
    // The binary this process runs (even if replaced on disk since), under its own name.
    let mut args = std::env::args_os();
    let mut cmd = std::process::Command::new("/proc/self/exe");
    if let Some(name) = args.next() {
        std::os::unix::process::CommandExt::arg0(&mut cmd, name);
    }
    std::os::unix::process::CommandExt::exec(
        cmd.args(args)
            .env("LISTEN_PID", std::process::id().to_string())
            .env("LISTEN_FDS", "1")
            .env(HANDOVER_VAR, handover.encode()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_restart_pays_only_for_much_held_and_a_large_share_of_the_memory() {
        let heap = |resident_mib: u64, in_use_mib: u64| Heap {
            resident: resident_mib * MIB,
            in_use: in_use_mib * MIB,
        };
        // Freshly indexed 120k-chunk daemons as measured (bench/RESULTS.md, fifteenth session):
        // seeded, and with the model.
        assert!(worth_it(heap(336, 208), FLOOR));
        assert!(worth_it(heap(284, 209), FLOOR));
        // The same state restarted: little held.
        assert!(!worth_it(heap(210, 180), FLOOR));
        // Small daemons are left alone, however fragmented.
        assert!(!worth_it(heap(70, 30), FLOOR));
        // Much held, but a small share of a large daemon (1M chunks: a restart reads a lot).
        assert!(!worth_it(heap(1400, 1250), FLOOR));
        assert!(worth_it(heap(1400, 1000), FLOOR));
        // In use above resident (pages never touched count as in use): nothing held.
        assert_eq!(heap(100, 120).held_unused(), 0);
        assert!(worth_it(heap(8, 1), MIB));
    }

    #[test]
    fn a_handover_reads_back_and_nonsense_is_refused() {
        let h = Handover {
            lock_fd: 7,
            activated: true,
            restarts: 2,
        };
        assert_eq!(Handover::decode(&h.encode()), Some(h));
        let h = Handover {
            lock_fd: 12,
            activated: false,
            restarts: 1,
        };
        assert_eq!(Handover::decode(&h.encode()), Some(h));
        for bad in [
            "",
            "lock=7",
            "lock=x;activated=1;restarts=1",
            "lock=2;activated=1;restarts=1", // stdin..stderr are never the lock
            "lock=7;activated=1;restarts=1;extra=1",
            "lock=7;activated=1;restarts=-1",
        ] {
            assert_eq!(Handover::decode(bad), None, "{bad}");
        }
    }
}
