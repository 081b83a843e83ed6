//! The daemon's lifecycle and its socket: one instance per state root, started on demand by
//! clients, recovering from crashes, private to its user, and robust to bad input.

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use crate::util::*;

#[test]
fn a_second_daemon_for_the_same_home_refuses_to_start() {
    let env = TestEnv::started();
    let first = env.assert_healthy();

    let mut second = env.daemon_command();
    second.env("PATINA_LOG", "warn");
    let started = Instant::now();
    let out = run(second, Duration::from_secs(90));

    assert_ne!(out.code(), 0, "the second daemon must fail: {out:?}");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "it must fail, not wait for the first, took {:?}",
        started.elapsed()
    );
    assert!(
        out.stderr.contains("already running"),
        "stderr must say why: {out:?}"
    );
    let still = env.assert_healthy();
    assert_eq!(still.pid, first.pid, "the first daemon keeps serving");
}

#[test]
fn a_client_starts_a_missing_daemon() {
    let env = TestEnv::new();
    assert!(env.health().is_err(), "no daemon yet");

    let out = env.patina(&["status"]);
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(
        out.stdout.contains("patinad"),
        "status describes the daemon: {out:?}"
    );
    let health = env.assert_healthy();
    assert_eq!(
        health.socket,
        env.socket().to_string_lossy(),
        "it serves the environment's socket"
    );
    let log = std::fs::read_to_string(env.home().join("patinad.log"))
        .expect("a client-started daemon logs to $PATINA_HOME/patinad.log");
    assert!(
        log.contains("listening"),
        "the log says what happened: {log}"
    );
    assert!(
        !log.contains('\u{1b}'),
        "a log file is plain text, without terminal colour codes: {log:?}"
    );

    let out = env.patina(&["daemon", "stop"]);
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(
        env.health().is_err(),
        "the daemon is gone after `patina daemon stop`"
    );
}

/// A daemon that stops at start (here: a setting it refuses) is not waited for: the client that
/// started it says it exited and the reason it gave, instead of a timeout and a log to read.
#[test]
fn a_client_says_why_the_daemon_it_started_stopped() {
    let env = TestEnv::new();
    std::fs::write(
        env.home().join("config.toml"),
        "[daemon]\nmemory_mb = \"plenty\"\n",
    )
    .unwrap();

    let out = env.patina(&["status"]);
    assert_ne!(out.code(), 0, "{out:?}");
    assert!(
        out.stderr.contains("patinad exited") && out.stderr.contains("memory_mb"),
        "the client names the daemon's reason: {out:?}"
    );
    assert!(
        !out.stderr.contains("did not answer"),
        "it did not wait for an answer that could not come: {out:?}"
    );
    assert!(env.health().is_err(), "and no daemon runs");
}

#[test]
fn a_stale_socket_left_by_a_crash_is_replaced() {
    let mut env = TestEnv::started();
    env.kill_daemon();
    assert!(
        env.socket().exists(),
        "SIGKILL leaves the socket file behind"
    );
    assert!(env.health().is_err(), "and nothing answers on it");

    env.start_daemon();
    env.assert_healthy();
}

#[test]
fn a_client_recovers_from_a_crashed_daemon() {
    let mut env = TestEnv::started();
    let crashed = env.daemon_pid().expect("a pid");
    env.kill_daemon();
    assert!(
        env.socket().exists(),
        "SIGKILL leaves the socket file behind"
    );

    let out = env.patina(&["status"]);
    assert_eq!(out.code(), 0, "{out:?}");
    let health = env.assert_healthy();
    assert_ne!(health.pid, crashed, "a new daemon serves");

    let out = env.patina(&["daemon", "stop"]);
    assert_eq!(out.code(), 0, "{out:?}");
}

#[test]
fn the_socket_is_private_to_its_user() {
    let env = TestEnv::started();
    let socket = env.socket();
    let mode =
        |p: &std::path::Path| std::fs::metadata(p).expect("metadata").permissions().mode() & 0o777;
    assert_eq!(mode(&socket), 0o600, "socket {}", socket.display());
    assert_eq!(mode(socket.parent().unwrap()), 0o700, "socket directory");
}

#[test]
fn sigterm_stops_the_daemon_cleanly_and_removes_its_socket() {
    let mut env = TestEnv::started();
    let status = env.stop_daemon();
    assert!(status.success(), "patinad exits 0 on SIGTERM: {status}");
    assert!(!env.socket().exists(), "a clean exit removes the socket");
}

#[test]
fn unknown_repositories_are_not_found_and_do_not_hurt_the_daemon() {
    let env = TestEnv::started();

    let err = env
        .query(QueryRequest {
            repos: vec!["nope".into()],
            ..query("foo")
        })
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{err:?}");
    assert!(
        err.message().contains("nope"),
        "the message names the repository: {err:?}"
    );

    let err = env.remove_repo("nope").unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{err:?}");
    let err = env
        .get_file(GetFileRequest {
            repo: "nope".into(),
            path: "a.rs".into(),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{err:?}");

    env.assert_healthy();
}

/// Writes `bytes` on a raw connection and reads whatever comes back until the daemon closes it
/// (or 5 s pass): the daemon must neither hang the connection forever nor crash.
fn send_raw(env: &TestEnv, bytes: &[u8]) {
    let mut s = UnixStream::connect(env.socket()).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    // The daemon may close the connection before reading everything: a write error is fine.
    let _ = s.write_all(bytes);
    let _ = s.shutdown(std::net::Shutdown::Write);
    let mut sink = Vec::new();
    let _ = s.read_to_end(&mut sink);
}

#[test]
fn garbage_on_the_socket_is_rejected_and_the_daemon_keeps_serving() {
    let env = TestEnv::started();

    send_raw(&env, b"GET / HTTP/1.1\r\nHost: patina\r\n\r\n");
    // Pseudo-random bytes (xorshift, fixed seed: the test is reproducible).
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let noise: Vec<u8> = (0..64 * 1024)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    send_raw(&env, &noise);
    // A valid HTTP/2 preface followed by nonsense frames.
    let mut h2 = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    h2.extend_from_slice(&noise[..4096]);
    send_raw(&env, &h2);
    // A connection that says nothing and goes away.
    drop(UnixStream::connect(env.socket()).expect("connect"));

    env.assert_healthy();
}

#[test]
fn an_invalid_enum_value_is_an_invalid_argument() {
    let env = TestEnv::started();
    let err = env
        .query(QueryRequest {
            granularity: 99,
            ..query("parse_args")
        })
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
    assert!(err.message().contains("granularity"), "{err:?}");
    env.assert_healthy();
}

#[test]
fn a_socket_passed_by_systemd_is_served_and_left_in_place() {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::{DirBuilderExt, FileTypeExt};
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};

    let env = TestEnv::new();
    let socket = env.socket();
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(socket.parent().expect("a run dir"))
        .unwrap();
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();

    // What systemd does: the listening socket as fd 3, LISTEN_PID = the daemon's pid (sh execs
    // patinad, so its pid is the shell's), LISTEN_FDS = 1.
    let daemon = env.daemon_command();
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(r#"LISTEN_PID=$$ LISTEN_FDS=1 exec "$0""#)
        .arg(daemon.get_program());
    for (k, v) in daemon.get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    if let Some(dir) = daemon.get_current_dir() {
        cmd.current_dir(dir);
    }
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(env.daemon_log_path())
        .unwrap();
    cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(log);
    let fd = listener.as_raw_fd();
    // SAFETY: only async-signal-safe calls (dup2, fcntl) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let r = if fd == 3 {
                libc::fcntl(3, libc::F_SETFD, 0)
            } else {
                libc::dup2(fd, 3)
            };
            if r < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("spawning patinad under sh");
    drop(listener);

    let health = poll(START_TIMEOUT, "the activated daemon answers", || {
        env.health().map_err(|e| format!("{e}\n{}", env.logs()))
    });
    assert!(health.socket_activated, "{health:?}");
    assert_eq!(health.pid, child.id(), "{health:?}");

    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    assert!(
        wait_timeout(&mut child, Duration::from_secs(60)).is_some(),
        "the daemon stops on SIGTERM"
    );
    let meta = std::fs::symlink_metadata(&socket).expect("the socket is still there");
    assert!(
        meta.file_type().is_socket(),
        "systemd's socket file is not the daemon's to remove"
    );
}

#[test]
fn without_patina_home_the_log_and_lock_are_state_and_the_indices_data() {
    let env = TestEnv::new();
    let base = env.home();
    let dir = |d: &str| {
        let p = base.join(d);
        std::fs::create_dir_all(&p).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o700)).unwrap();
        p
    };
    let (data, state, config, runtime) = (dir("data"), dir("state"), dir("config"), dir("rt"));
    let patina = |args: &[&str]| {
        let mut cmd = env.patina_command();
        cmd.env_remove("PATINA_HOME")
            .env("HOME", base)
            .env("XDG_DATA_HOME", &data)
            .env("XDG_STATE_HOME", &state)
            .env("XDG_CONFIG_HOME", &config)
            .env("XDG_RUNTIME_DIR", &runtime)
            .args(args);
        run(cmd, START_TIMEOUT)
    };
    let started = patina(&["daemon", "start"]);
    let lock = std::fs::read_to_string(state.join("patina/patinad.lock"));
    let log_exists = state.join("patina/patinad.log").exists();
    let socket_exists = runtime.join("patina/patina.sock").exists();
    let stopped = patina(&["daemon", "stop"]);
    assert_eq!(started.code(), 0, "{started:?}");
    assert_eq!(stopped.code(), 0, "{stopped:?}");

    let pid = lock.expect("the lock is under $XDG_STATE_HOME/patina");
    assert!(
        pid.trim().parse::<u32>().is_ok(),
        "it holds the daemon's pid: {pid:?}"
    );
    assert!(log_exists, "the log is beside it");
    assert!(socket_exists, "the socket is under $XDG_RUNTIME_DIR/patina");
    assert!(
        data.join("patina/state").is_dir(),
        "the indices are data, under $XDG_DATA_HOME/patina"
    );
    for stray in ["patinad.lock", "patinad.log"] {
        assert!(
            !data.join("patina").join(stray).exists(),
            "no {stray} in the data dir"
        );
    }
}

/// A daemon whose executable is replaced on disk (an upgrade, a rebuild) keeps running the old
/// code; every client says so, and how to restart it, instead of being served silently by it.
#[test]
fn clients_warn_when_the_daemons_binary_was_replaced_since_it_started() {
    let env = TestEnv::new();
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("patinad");
    std::fs::copy(bin("patinad"), &exe).unwrap();
    let mut cmd = env.isolated_command(&exe);
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().expect("starting a copy of patinad");
    poll(START_TIMEOUT, "the copied daemon answers", || env.health());

    let before = env.patina(&["status"]);
    assert_eq!(before.code(), 0, "{before:?}");
    assert!(!before.stderr.contains("replaced"), "{before:?}");

    // Installed the way package managers do it: a new file renamed over the old one.
    let new = dir.path().join("patinad.new");
    std::fs::copy(bin("patinad"), &new).unwrap();
    std::fs::rename(&new, &exe).unwrap();
    let after = env.patina(&["status"]);
    assert_eq!(after.code(), 0, "{after:?}");
    assert!(
        after.stderr.contains("replaced on disk") && after.stderr.contains("patina daemon stop"),
        "{after:?}"
    );
    let doctor = env.patina(&["doctor"]);
    assert_ne!(doctor.code(), 0, "{doctor:?}");
    assert!(doctor.stdout.contains("replaced on disk"), "{doctor:?}");
    // Stopping is the cure: it says nothing about it.
    let stop = env.patina(&["daemon", "stop"]);
    assert_eq!(stop.code(), 0, "{stop:?}");
    assert!(!stop.stderr.contains("replaced"), "{stop:?}");

    let _ = child.kill();
    let _ = child.wait();
}
