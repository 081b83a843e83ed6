//! `patina doctor`: checks the installation end to end and prints the fix for each failure.
//! Each check is independent; a failure never stops the others. Exit 0 when nothing failed
//! (warnings allowed), 1 otherwise.

use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use patina_proto::v1 as pb;

use crate::daemon::Client;

/// Below this, inotify watches run out on a large repository (Linux's default is 8,192 on older
/// kernels; the watcher needs one per directory).
const MIN_INOTIFY_WATCHES: u64 = 65_536;
/// Below this much free space on the state directory's file system, indexing may fail.
const MIN_FREE_BYTES: u64 = 1 << 30;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Ok,
    Info,
    Warn,
    Fail,
}

struct Check {
    name: &'static str,
    verdict: Verdict,
    detail: String,
    fix: Option<String>,
}

fn check(name: &'static str, verdict: Verdict, detail: impl Into<String>) -> Check {
    Check {
        name,
        verdict,
        detail: detail.into(),
        fix: None,
    }
}

impl Check {
    fn fix(mut self, fix: impl Into<String>) -> Check {
        self.fix = Some(fix.into());
        self
    }
}

pub(crate) async fn run(socket: &Path) -> Result<ExitCode> {
    let mut checks = Vec::new();
    let health = daemon_checks(socket, &mut checks).await;
    checks.push(model_check(health.as_ref()));
    if let Some(c) = team_check(socket, health.as_ref()).await {
        checks.push(c);
    }
    checks.push(config_check());
    checks.push(inotify_check());
    checks.push(disk_check());
    if let Some(c) = service_check() {
        checks.push(c);
    }
    let mut failed = 0;
    for c in &checks {
        let mark = match c.verdict {
            Verdict::Ok => "ok  ",
            Verdict::Info => "info",
            Verdict::Warn => "warn",
            Verdict::Fail => {
                failed += 1;
                "FAIL"
            }
        };
        outln!("[{mark}] {:<9} {}", c.name, c.detail);
        if let Some(fix) = &c.fix {
            outln!("           fix: {fix}");
        }
    }
    if failed > 0 {
        outln!("{failed} problem(s) found");
        Ok(ExitCode::from(1))
    } else {
        outln!("no problems found");
        Ok(ExitCode::SUCCESS)
    }
}

/// The daemon, its version and its socket. Returns its health when one answers.
async fn daemon_checks(socket: &Path, out: &mut Vec<Check>) -> Option<pb::CheckResponse> {
    let stop = "patina daemon stop (the next command starts the installed patinad)";
    let health = match Client::connect_quiet(socket).await {
        Ok(mut c) => c.health().await.ok(),
        Err(e) => {
            let mismatch = e
                .downcast_ref::<patina_proto::endpoint::CheckFailed>()
                .filter(|failed| failed.permanent());
            if let Some(mismatch) = mismatch {
                out.push(check("version", Verdict::Fail, mismatch.to_string()).fix(stop));
            }
            None
        }
    };
    let meta = std::fs::symlink_metadata(socket);
    match (&health, &meta) {
        (Some(h), _) => {
            out.push(check(
                "daemon",
                Verdict::Ok,
                format!(
                    "patinad {} running, pid {}, socket {}",
                    h.version,
                    h.pid,
                    socket.display()
                ),
            ));
            let client = env!("CARGO_PKG_VERSION");
            if h.binary_replaced {
                out.push(
                    check(
                        "version",
                        Verdict::Fail,
                        format!(
                            "the daemon (pid {}) runs a patinad that has since been replaced on disk",
                            h.pid
                        ),
                    )
                    .fix(stop),
                );
            } else if h.version == client {
                out.push(check(
                    "version",
                    Verdict::Ok,
                    format!("client and daemon {client}"),
                ));
            } else {
                out.push(
                    check(
                        "version",
                        Verdict::Fail,
                        format!("client {client}, daemon {}", h.version),
                    )
                    .fix(stop),
                );
            }
        }
        (None, Ok(m)) if m.file_type().is_socket() => out.push(
            check(
                "daemon",
                Verdict::Fail,
                format!("stale socket {}: no daemon answers on it", socket.display()),
            )
            .fix("patina daemon start (a new daemon replaces a stale socket)"),
        ),
        (None, Ok(_)) => out.push(
            check(
                "daemon",
                Verdict::Fail,
                format!("{} exists and is not a socket", socket.display()),
            )
            .fix(format!(
                "remove {} or choose another --socket",
                socket.display()
            )),
        ),
        (None, Err(_)) => out.push(check(
            "daemon",
            Verdict::Info,
            "not running (any patina command starts it on demand)",
        )),
    }
    // Who else could reach the socket, or stand in for the daemon: the checks every client makes
    // before it sends anything (the socket's directory, then the server's user).
    if let Some(why) = patina_proto::endpoint::socket_problem(socket) {
        let dir = socket.parent().unwrap_or(Path::new("."));
        out.push(check("socket", Verdict::Fail, why).fix(format!(
            "chmod 700 {} (if it is yours), or choose a socket in a directory of your own",
            dir.display()
        )));
    } else if meta.as_ref().is_ok_and(|m| m.file_type().is_socket()) {
        let peer = match tokio::net::UnixStream::connect(socket).await {
            Ok(stream) => stream.peer_cred().ok().map(|c| c.uid()),
            Err(_) => None,
        };
        match peer.and_then(|uid| patina_proto::endpoint::peer_problem(socket, uid)) {
            Some(why) => out.push(
                check("socket", Verdict::Fail, why)
                    .fix("stop using that socket: point --socket or PATINA_SOCKET at your own"),
            ),
            None => out.push(check(
                "socket",
                Verdict::Ok,
                if peer.is_some() {
                    "in a directory only this user can write to, served by this user"
                } else {
                    "in a directory only this user can write to"
                },
            )),
        }
    }
    health
}

/// A team's store, when the daemon has one (docs/team.md): asked for what it publishes. A store
/// that does not answer is a warning, not a failure: everything local works without it.
async fn team_check(socket: &Path, health: Option<&pb::CheckResponse>) -> Option<Check> {
    let h = health.filter(|h| !h.team_store.is_empty())?;
    let asked = async {
        let c = Client::connect_quiet(socket).await?;
        let mut svc = pb::team_client::TeamClient::new(c.channel());
        anyhow::Ok(svc.published(pb::PublishedRequest {}).await?.into_inner())
    };
    Some(match asked.await {
        Ok(p) => check(
            "team",
            Verdict::Ok,
            format!(
                "{}: {} repositories this role may read",
                p.store,
                p.repos.len()
            ),
        ),
        Err(e) => check("team", Verdict::Warn, format!("{}: {e:#}", h.team_store))
            .fix("check [team] url (and ca_file) in config.toml; local search is unaffected"),
    })
}

fn model_check(health: Option<&pb::CheckResponse>) -> Check {
    let install = "patina model install (then patina daemon stop; it restarts on demand)";
    if let Some(h) = health {
        return if h.semantic_on {
            check(
                "model",
                Verdict::Ok,
                format!("semantic search {}", h.semantic),
            )
        } else {
            check(
                "model",
                Verdict::Fail,
                format!("semantic search {}", h.semantic),
            )
            .fix(install)
        };
    }
    let dir = std::env::var_os("PATINA_MODEL_DIR")
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| patina_proto::endpoint::state_root().join("models/all-MiniLM-L6-v2"));
    let has_onnx = std::fs::read_dir(&dir).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.path().extension().is_some_and(|x| x == "onnx"))
    });
    if has_onnx {
        check(
            "model",
            Verdict::Ok,
            format!("installed at {}", dir.display()),
        )
    } else {
        check(
            "model",
            Verdict::Fail,
            format!(
                "not installed at {} (semantic search would be off)",
                dir.display()
            ),
        )
        .fix(install)
    }
}

fn config_check() -> Check {
    let path = patina_proto::endpoint::config_file();
    let bin = patina_proto::endpoint::daemon_binary();
    match std::process::Command::new(&bin)
        .arg("--check-config")
        .arg(&path)
        .output()
    {
        Ok(out) if out.status.success() => check(
            "config",
            Verdict::Ok,
            String::from_utf8_lossy(&out.stdout).trim().to_string(),
        ),
        Ok(out) => check(
            "config",
            Verdict::Fail,
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        )
        .fix(format!(
            "edit {} (docs/configuration.md lists the keys)",
            path.display()
        )),
        Err(e) => check(
            "config",
            Verdict::Fail,
            format!("cannot run {}: {e}", bin.display()),
        )
        .fix("scripts/setup --install, or set PATINA_DAEMON_BIN"),
    }
}

fn inotify_check() -> Check {
    let read = |name: &str| -> Option<u64> {
        std::fs::read_to_string(format!("/proc/sys/fs/inotify/{name}"))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    match read("max_user_watches") {
        None => check(
            "inotify",
            Verdict::Info,
            "no inotify limits here (not Linux)",
        ),
        Some(w) if w >= MIN_INOTIFY_WATCHES => {
            check("inotify", Verdict::Ok, format!("max_user_watches {w}"))
        }
        Some(w) => check(
            "inotify",
            Verdict::Warn,
            format!("max_user_watches {w}: large repositories may not be watched completely"),
        )
        .fix("sudo sysctl fs.inotify.max_user_watches=524288 (and in /etc/sysctl.d/ to keep it)"),
    }
}

fn disk_check() -> Check {
    let root = patina_proto::endpoint::state_root();
    // The state root may not exist yet: ask about the nearest existing ancestor.
    let probe = root
        .ancestors()
        .find(|p| p.exists())
        .unwrap_or(Path::new("/"));
    let Ok(c) = std::ffi::CString::new(probe.as_os_str().as_encoded_bytes()) else {
        return check("disk", Verdict::Info, "cannot query free space");
    };
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a valid NUL-terminated path and a zeroed out-parameter.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return check("disk", Verdict::Info, "cannot query free space");
    }
    let free = st.f_bavail as u64 * st.f_frsize as u64;
    let gib = free as f64 / (1u64 << 30) as f64;
    if free >= MIN_FREE_BYTES {
        check(
            "disk",
            Verdict::Ok,
            format!("{gib:.1} GiB free for {}", root.display()),
        )
    } else {
        check(
            "disk",
            Verdict::Warn,
            format!("only {gib:.2} GiB free for {}", root.display()),
        )
        .fix("free space there, or set PATINA_HOME to a larger file system")
    }
}

/// The systemd user units' state, where systemd runs (information, never a failure: the clients
/// start the daemon on demand without them).
fn service_check() -> Option<Check> {
    let out = std::process::Command::new("systemctl")
        .args(["--user", "is-enabled", "patina.socket"])
        .output()
        .ok()?;
    let state = String::from_utf8_lossy(&out.stdout).trim().to_string();
    Some(if state == "enabled" {
        check(
            "service",
            Verdict::Ok,
            "patina.socket enabled (systemd user unit)",
        )
    } else {
        let state = if state.is_empty() {
            "not installed".into()
        } else {
            state
        };
        check("service", Verdict::Info, format!("patina.socket {state}"))
            .fix("optional: scripts/setup --install && systemctl --user enable --now patina.socket")
    })
}
