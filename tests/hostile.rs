//! What a hostile-input pass over the release binaries found, one specification each: a file
//! swapped for a symlink while it is read, a socket in someone else's directory, file names that
//! drive the terminal, files larger than a message, connections that never speak, and the
//! smaller ones (zero limits, socket paths too long, a daemon dying under `add`, directories
//! nested past what the system opens). The LSP's two (its first search's scope, bad framing)
//! are in `lsp.rs`; `get_file` of a one-line file through MCP is in `mcp.rs`.

use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::util::*;

const SECRET: &str = "zebraquasarsecret: the outside file's words";

/// A file outside every repository, with words no fixture has.
fn outside_secret() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a directory outside the repository");
    std::fs::write(dir.path().join("secret.txt"), format!("{SECRET}\n")).unwrap();
    dir
}

/// Replace `root/name`, by rename, with a regular file and then with a symlink to `target`, as
/// fast as it can until `stop`. Returns the swaps made.
fn swap_until(
    root: &Path,
    name: &str,
    target: &Path,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<u64> {
    let (root, name, target) = (root.to_path_buf(), name.to_string(), target.to_path_buf());
    std::thread::spawn(move || {
        let mut swaps = 0;
        while !stop.load(Ordering::Relaxed) {
            std::fs::write(root.join(".swap-file"), "pub fn regular_race() {}\n").unwrap();
            std::fs::rename(root.join(".swap-file"), root.join(&name)).unwrap();
            let _ = std::fs::remove_file(root.join(".swap-link"));
            std::os::unix::fs::symlink(&target, root.join(".swap-link")).unwrap();
            std::fs::rename(root.join(".swap-link"), root.join(&name)).unwrap();
            swaps += 1;
        }
        swaps
    })
}

/// The race of finding 1: `get_file` (what MCP's `get_file`, the LSP's hovers and `-C` call) on a
/// file that a loop keeps swapping with a symlink to a file outside. Not one answer may hold the
/// outside file's bytes, and the index never takes them in either.
#[test]
fn a_file_swapped_with_a_symlink_while_it_is_read_never_serves_outside_bytes() {
    let env = TestEnv::started();
    let repo = git_repo(&[
        ("race.rs", b"pub fn regular_race() {}\n"),
        ("src/lib.rs", b"pub fn ordinary() {}\n"),
    ]);
    env.add_repo(repo.path());
    let outside = outside_secret();
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = swap_until(
        repo.path(),
        "race.rs",
        &outside.path().join("secret.txt"),
        stop.clone(),
    );
    let (mut served, mut refused, mut leaked) = (0u32, 0u32, 0u32);
    let deadline = Instant::now() + Duration::from_secs(6);
    env.block_on(async {
        let mut files = env.files_client().await;
        while Instant::now() < deadline {
            match files
                .get_file(GetFileRequest {
                    repo: repo.key(),
                    path: "race.rs".into(),
                    start_line: 0,
                    end_line: 0,
                })
                .await
            {
                Ok(r) if r.get_ref().text.contains("zebraquasarsecret") => leaked += 1,
                Ok(_) => served += 1,
                Err(_) => refused += 1,
            }
        }
    });
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    assert_eq!(
        leaked, 0,
        "get_file served the outside file {leaked} times ({served} served, {refused} refused, \
         {swaps} swaps)"
    );
    assert!(served > 0 && swaps > 0, "{served} served, {swaps} swaps");
    // The indexer read the file through the same swaps (the watcher saw every rename).
    let found = env.search("zebraquasarsecret", &[repo.path()]);
    assert!(
        found
            .hits
            .iter()
            .all(|h| !h.snippet.contains("zebraquasarsecret")),
        "the index took in the outside file: {:?}",
        found.hits
    );
    env.assert_healthy();
}

/// A directory others may write to, as `/tmp` is.
fn shared_dir() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("pshared")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    dir
}

/// Finding 2, the directory: a socket where another user could have put theirs first is used by
/// neither the client nor the daemon, and `doctor` says why.
#[test]
fn a_socket_in_a_directory_others_can_write_is_refused_by_client_daemon_and_doctor() {
    let env = TestEnv::new();
    let shared = shared_dir();
    let socket = shared.path().join("patina.sock");
    let mut cmd = env.patina_command();
    cmd.env("PATINA_SOCKET", &socket).args(["repos"]);
    let out = run(cmd, CALL_TIMEOUT);
    assert_ne!(out.code(), 0, "{out:?}");
    assert!(
        out.stderr.contains("writable by other users"),
        "the client says why: {out:?}"
    );
    assert!(!socket.exists(), "no daemon was started there: {out:?}");

    let mut daemon = env.daemon_command();
    daemon.arg("--socket").arg(&socket);
    let out = run(daemon, CALL_TIMEOUT);
    assert_ne!(out.code(), 0, "the daemon refuses to bind there: {out:?}");
    assert!(out.stderr.contains("writable by other users"), "{out:?}");

    let mut doctor = env.patina_command();
    doctor.env("PATINA_SOCKET", &socket).arg("doctor");
    let out = run(doctor, CALL_TIMEOUT);
    assert!(
        out.stdout.contains("writable by other users")
            && !out.stdout.contains("private to this user"),
        "{out:?}"
    );
}

/// Finding 2, the peer: even where the directory is trusted on purpose, a socket served by
/// another user gets nothing from the client — not one byte of a query.
#[test]
fn a_socket_served_by_another_user_gets_nothing_from_the_client() {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: serving a socket as another user needs root (CI runs as root)");
        return;
    }
    let env = TestEnv::new();
    let shared = shared_dir();
    let socket = shared.path().join("patina.sock");
    // `nobody` listens, and reports how many bytes reach it within three seconds.
    let listener = r#"
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(8)
print("listening", flush=True)
s.settimeout(3.0)
got = 0
try:
    while True:
        c, _ = s.accept()
        c.settimeout(1.0)
        try:
            while True:
                b = c.recv(65536)
                if not b:
                    break
                got += len(b)
        except socket.timeout:
            pass
except socket.timeout:
    pass
print("received", got, flush=True)
"#;
    let mut fake = std::process::Command::new("python3");
    fake.args(["-c", listener])
        .arg(&socket)
        .stdout(std::process::Stdio::piped());
    std::os::unix::process::CommandExt::uid(&mut fake, 65534);
    std::os::unix::process::CommandExt::gid(&mut fake, 65534);
    let mut fake = fake.spawn().expect("python3 as nobody");
    let mut out = fake.stdout.take().unwrap();
    let mut first = [0u8; 10];
    out.read_exact(&mut first).expect("the listener is up");

    let mut cmd = env.patina_command();
    cmd.env("PATINA_SOCKET", &socket)
        .env("PATINA_TRUST_SOCKET_DIR", "1")
        .args(["q", "anything at all", "--all"]);
    let client = run(cmd, CALL_TIMEOUT);
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    let _ = fake.wait();
    assert_ne!(client.code(), 0, "{client:?}");
    assert!(
        client.stderr.contains("served by another user (uid 65534"),
        "the client says who serves it: {client:?}"
    );
    assert_eq!(
        rest.trim(),
        "received 0",
        "the other user's socket read the client's bytes"
    );
}

/// A repository whose file name holds an escape sequence, a newline and a right-to-left override.
const HOSTILE_NAME: &str = "evil\u{1b}[31m\nforged.rs\u{202e}cod.rs";

/// Finding 3: every command that prints names for a person escapes them; none reaches the
/// terminal raw.
#[test]
fn file_names_that_drive_the_terminal_are_printed_escaped_by_every_command() {
    let env = TestEnv::started();
    let repo = git_repo(&[
        (
            HOSTILE_NAME,
            b"pub fn hostile_named_marker() -> u32 { helper_of_marker() }\npub fn helper_of_marker() -> u32 { 7 }\n",
        ),
        ("src/lib.rs", b"pub fn calls_marker() -> u32 { crate::hostile_named_marker() }\n"),
    ]);
    env.add_repo(repo.path());
    let cmds: &[&[&str]] = &[
        &["q", "hostile_named_marker"],
        &["q", "hostile_named_marker", "--files"],
        &["q", "hostile_named_marker", "--vimgrep"],
        &["q", "hostile_named_marker", "-C", "1"],
        &["q", "hostile_named_marker", "--expand"],
        &["defs", "hostile_named_marker"],
        &["refs", "helper_of_marker"],
        &["callers", "helper_of_marker"],
        &["graph", "hostile_named_marker"],
        &["map"],
    ];
    for args in cmds {
        let out = env.patina_in(repo.path(), args);
        assert_eq!(out.code(), 0, "{args:?}: {out:?}");
        for bad in ['\u{1b}', '\u{202e}'] {
            assert!(
                !out.stdout.contains(bad),
                "{args:?} printed {:?} raw:\n{}",
                bad,
                out.stdout
            );
        }
        assert!(
            !out.stdout.lines().any(|l| l.starts_with("forged.rs")),
            "{args:?}: a newline in a name forged a line:\n{}",
            out.stdout
        );
        assert!(
            out.stdout
                .contains("\\u{1b}[31m\\nforged.rs\\u{202e}cod.rs"),
            "{args:?} names the file, escaped:\n{}",
            out.stdout
        );
    }
}

/// Finding 4: files larger than one message are served in pages with exact totals, and a line
/// longer than a page comes in part, saying so; nothing fails on the transport's limit.
#[test]
fn large_files_are_paged_with_exact_totals() {
    let env = TestEnv::started();
    let repo = git_repo(&[("src/lib.rs", b"pub fn ordinary() {}\n")]);
    env.add_repo(repo.path());
    // 100,000 lines of 50 bytes: 5 MB.
    let big: String = (1..=100_000).map(|i| format!("{i:>48}\n")).collect();
    std::fs::write(repo.path().join("big.txt"), &big).unwrap();
    let one_line = "x".repeat(6 * 1024 * 1024);
    std::fs::write(repo.path().join("one-line.min.js"), &one_line).unwrap();
    let get = |path: &str, start_line, end_line| {
        env.get_file(GetFileRequest {
            repo: repo.key(),
            path: path.into(),
            start_line,
            end_line,
        })
    };

    let first = get("big.txt", 0, 0).expect("a whole 5 MB file answers");
    assert_eq!(first.total_lines, 100_000, "every line is counted");
    assert_eq!(first.total_bytes, big.len() as u64);
    assert!(
        first.truncated && first.end_line < 100_000,
        "{}",
        first.end_line
    );
    assert_eq!(first.next_line, first.end_line + 1);
    let lines: Vec<&str> = big.lines().collect();
    assert_eq!(first.text, lines[..first.end_line as usize].join("\n"));
    let mut at = first.next_line;
    let mut pages = 1;
    while at != 0 {
        let page = get("big.txt", at, 0).expect("the next page");
        assert_eq!(page.start_line, at);
        assert_eq!(
            page.text,
            lines[at as usize - 1..page.end_line as usize].join("\n")
        );
        at = page.next_line;
        pages += 1;
        assert!(pages < 20, "pages end");
    }
    assert!(pages >= 5, "a 5 MB file takes several pages: {pages}");

    let long = get("one-line.min.js", 1, 1).expect("line 1 of a 6 MB one-line file answers");
    assert_eq!((long.total_lines, long.end_line, long.next_line), (1, 1, 0));
    assert!(long.line_cut && long.truncated);
    assert!(!long.text.is_empty() && long.text.len() <= 1024 * 1024);
    assert!(one_line.starts_with(&long.text));
}

/// Silent connections to `env`'s socket, non-blocking.
fn silent_connections(env: &TestEnv, n: usize) -> Vec<std::os::unix::net::UnixStream> {
    (0..n)
        .map(|_| {
            let s = std::os::unix::net::UnixStream::connect(env.socket()).expect("connect");
            s.set_nonblocking(true).unwrap();
            s
        })
        .collect()
}

/// How many of `conns` the daemon has not closed (the server's own preface may arrive first:
/// the end of the stream is what counts), looking for at most `within`.
fn still_open(conns: &mut [std::os::unix::net::UnixStream], within: Duration) -> usize {
    let deadline = Instant::now() + within;
    let mut closed = vec![false; conns.len()];
    loop {
        for (s, done) in conns.iter_mut().zip(closed.iter_mut()) {
            let mut buf = [0u8; 4096];
            while !*done {
                match s.read(&mut buf) {
                    Ok(0) => *done = true,
                    Ok(_) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(_) => *done = true,
                }
            }
        }
        let open = closed.iter().filter(|c| !**c).count();
        if open == 0 || Instant::now() >= deadline {
            return open;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Finding 7: connections that never send a byte are closed once the handshake time is up (ten
/// seconds by default), and the daemon answers all along.
#[test]
fn connections_that_never_speak_are_closed() {
    let env = TestEnv::started();
    let mut silent = silent_connections(&env, 30);
    env.assert_healthy();
    let open = still_open(&mut silent, Duration::from_secs(30));
    assert_eq!(
        open, 0,
        "connections that never spoke are still open after 30 s"
    );
    env.assert_healthy();
}

/// Finding 7: past the cap of open connections, a new one is closed at once, with a line in the
/// daemon's log.
#[test]
fn past_the_connection_cap_a_new_connection_is_closed_at_once_and_logged() {
    let mut env = TestEnv::new();
    env.append_config("[daemon]\nmax_connections = 4\nhandshake_timeout_ms = 60000\n");
    env.start_daemon();
    let mut silent = silent_connections(&env, 10);
    // Well before their handshake time, those past the cap are closed: at most four stay (fewer
    // when the harness's own start-up probes still held a place as these arrived).
    let open = still_open(&mut silent, Duration::from_secs(5));
    assert!(
        (1..=4).contains(&open),
        "the cap admits at most four: {open} open"
    );
    eventually("the cap is logged", || {
        env.logs().contains("connection cap reached")
    });
    drop(silent);
    // Their places are free again once they close.
    eventually("the daemon answers again", || env.health().is_ok());
}

/// Finding 8: a zero limit or budget is refused, not read as the default.
#[test]
fn zero_limits_and_budgets_are_refused() {
    let env = TestEnv::new();
    for args in [
        &["q", "x", "-n", "0"][..],
        &["q", "x", "--expand", "--budget", "0"],
        &["log", "x", "-n", "0"],
        &["map", "--budget", "0"],
    ] {
        let out = env.patina(args);
        assert_eq!(out.code(), 2, "{args:?}: {out:?}");
        assert!(
            out.stderr.contains("'0'"),
            "{args:?} names the value: {out:?}"
        );
    }
}

/// Finding 8: a socket path too long for a socket address is said at once, by the client.
#[test]
fn a_socket_path_too_long_is_refused_at_once_with_the_limit() {
    let env = TestEnv::new();
    let long = format!("/tmp/{}/patina.sock", "d".repeat(120));
    let mut cmd = env.patina_command();
    cmd.env("PATINA_SOCKET", &long).arg("repos");
    let out = run(cmd, CALL_TIMEOUT);
    assert_ne!(out.code(), 0, "{out:?}");
    assert!(
        out.stderr.contains("holds at most 107"),
        "the client names the limit: {out:?}"
    );
}

/// Finding 8: `patina add` whose daemon dies under it says what happened and what to do.
#[test]
fn add_whose_daemon_dies_says_what_happened() {
    let mut env = TestEnv::new();
    env.crash_next_daemon_at("lexical-committed");
    env.start_daemon();
    let repo = git_repo(&[("src/lib.rs", b"pub fn ordinary() {}\n")]);
    let out = env.patina_in(repo.path(), &["add", "."]);
    assert_ne!(out.code(), 0, "{out:?}");
    assert!(
        out.stderr.contains("stopped answering") && !out.stderr.contains("h2 protocol error"),
        "{out:?}"
    );
}

/// Finding 8: a directory nested deeper than the system opens is counted as `path_too_long`, not
/// as a directory without permission.
#[test]
fn a_directory_nested_past_the_path_limit_is_reported_as_such() {
    let env = TestEnv::started();
    let repo = git_repo(&[("src/lib.rs", b"pub fn ordinary() {}\n")]);
    // 20 levels of 250-byte names: 5,000 bytes, past PATH_MAX (4,096). Made relative to each
    // level's descriptor, since no path can name the deepest ones.
    let name = std::ffi::CString::new("d".repeat(250)).unwrap();
    let root = std::ffi::CString::new(repo.path().as_os_str().as_bytes()).unwrap();
    // SAFETY: NUL-terminated names; descriptors opened here are closed here.
    unsafe {
        let mut dir = libc::open(root.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY);
        assert!(dir >= 0);
        for _ in 0..20 {
            assert_eq!(libc::mkdirat(dir, name.as_ptr(), 0o755), 0);
            let next = libc::openat(dir, name.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY);
            assert!(next >= 0);
            libc::close(dir);
            dir = next;
        }
        libc::close(dir);
    }
    env.add_repo(repo.path());
    let out = env.patina_in(repo.path(), &["status", "--json"]);
    assert!(out.status.success(), "{out:?}");
    assert!(
        out.stdout.contains("\"path_too_long\"") && !out.stdout.contains("\"unreadable_dir\""),
        "{}",
        out.stdout
    );
}

/// The shell's client says an error's remedy in its own words, from the code beside the
/// daemon's message.
#[test]
fn the_shell_says_a_remedy_in_its_own_words() {
    let env = TestEnv::started();
    let repo = git_repo(&[("src/lib.rs", b"pub fn ordinary() {}\n")]);
    env.add_repo(repo.path());
    let out = env.patina_in(repo.path(), &["q", "ordinary", "--repo", "no-such-repo"]);
    assert_eq!(out.code(), 2, "{out:?}");
    assert!(
        out.stderr
            .contains("no registered repository matches 'no-such-repo' (see `patina repos`)"),
        "{out:?}"
    );
}
