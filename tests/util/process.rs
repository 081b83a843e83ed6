//! The binaries under test, and running a process with a deadline.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

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

/// The path of the binary `name` (`patinad` or `patina`); panics with instructions when it is
/// missing, or when the daemon was built without the suite's fault-injection hooks.
pub fn bin(name: &str) -> PathBuf {
    let path = bin_dir().join(name);
    if !path.is_file() {
        panic!(
            "{} not found. The end-to-end tests run the real binaries: run `cargo test \
             --workspace`, which builds them with the test hooks, or build them with `cargo \
             build --workspace --features patinad/test-hooks`, or point PATINA_BIN_DIR at the \
             directory holding `patinad` and `patina`.",
            path.display()
        );
    }
    if name == "patinad" {
        hooks_compiled_in(&path);
    }
    path
}

/// The suite makes faults on purpose through `PATINA_TEST_*` variables, which only a daemon
/// built with the `test-hooks` feature reads (`patinad --version` says "(test hooks)"). A daemon
/// from `PATINA_BIN_DIR` (an older build, to show a test failing before a change) is taken as it
/// is.
fn hooks_compiled_in(path: &std::path::Path) {
    static CHECKED: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    if std::env::var_os("PATINA_BIN_DIR").is_some_and(|d| !d.is_empty()) {
        return;
    }
    CHECKED.get_or_init(|| {
        let out = Command::new(path)
            .arg("--version")
            .output()
            .expect("patinad --version");
        let version = String::from_utf8_lossy(&out.stdout);
        assert!(
            version.contains("(test hooks)"),
            "{} was built without the suite's fault-injection hooks ({}): run `cargo test \
             --workspace`, or build with `cargo build --workspace --features patinad/test-hooks` \
             before `cargo test -p patina-tests`",
            path.display(),
            version.trim()
        );
    });
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

    /// `patina q --json` output (JSON Lines: a `hit` object per line, then one `summary`) read
    /// back as one value: the summary's fields plus `hits`, in order. Panics unless every line is a
    /// JSON object, hits come before exactly one summary, and the summary counts them.
    pub fn q_json(&self) -> serde_json::Value {
        let mut hits = Vec::new();
        let mut summary = None;
        for line in self.stdout.lines() {
            let v: serde_json::Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("a line that is not JSON ({e}): {line}\n{self:?}"));
            assert!(summary.is_none(), "nothing follows the summary: {self:?}");
            match v["type"].as_str() {
                Some("hit") => hits.push(v),
                Some("summary") => summary = Some(v),
                _ => panic!("a line of unknown type: {line}"),
            }
        }
        let mut summary = summary.unwrap_or_else(|| panic!("no summary line: {self:?}"));
        assert_eq!(
            summary["hits"],
            hits.len(),
            "the summary counts the hits: {self:?}"
        );
        summary["hits"] = serde_json::Value::Array(hits);
        summary
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
