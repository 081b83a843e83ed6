//! A real PostgreSQL server with pgvector for the team-store tests: the pinned `pgserver`
//! wheel's binaries (.ci/run installs it into `target/pydeps`), one server per test in its own
//! directory, reachable only through its Unix socket. No stand-in: without the wheel the test
//! fails and says how to install it.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{pythonpath, workspace};

/// A running server; dropped, it is stopped and its data deleted.
pub struct PgServer {
    _dir: tempfile::TempDir,
    socket_dir: PathBuf,
    port: u16,
    pid: i32,
}

impl PgServer {
    /// Initialise a data directory and start the server (a few seconds).
    pub fn start() -> PgServer {
        let dir = tempfile::Builder::new()
            .prefix("patina-pg-")
            .tempdir_in("/tmp")
            .expect("a directory for the PostgreSQL data");
        let data = dir.path().join("data");
        let out = Command::new("python3")
            .arg(workspace().join("tests/pg_server.py"))
            .arg(&data)
            .env("PYTHONPATH", pythonpath())
            .output()
            .expect("running python3 tests/pg_server.py");
        assert!(
            out.status.success(),
            "could not start PostgreSQL (install the server as .ci/run does: `python3 -m pip \
             install --target target/pydeps pgserver==0.1.4`)\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let info: serde_json::Value = serde_json::from_slice(
            out.stdout
                .split(|b| *b == b'\n')
                .rfind(|l| l.starts_with(b"{"))
                .expect("pg_server.py prints its JSON last"),
        )
        .expect("pg_server.py's JSON");
        PgServer {
            socket_dir: PathBuf::from(info["socket_dir"].as_str().expect("socket_dir")),
            port: info["port"].as_u64().unwrap_or(5432) as u16,
            pid: info["pid"].as_i64().expect("pid") as i32,
            _dir: dir,
        }
    }

    /// A libpq connection string for `user` (no password: the test server trusts its socket).
    pub fn url(&self, user: &str) -> String {
        format!(
            "host={} port={} user={user} dbname=postgres connect_timeout=5",
            self.socket_dir.display(),
            self.port
        )
    }

    /// Run `sql` as the superuser through the wheel's `psql`; its output (unaligned, tuples only).
    pub fn psql(&self, sql: &str) -> String {
        self.psql_as("postgres", sql)
    }

    /// [`PgServer::psql`] as the role `user`.
    pub fn psql_as(&self, user: &str, sql: &str) -> String {
        let psql = bin_dir().join("psql");
        let out = Command::new(&psql)
            .args(["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h"])
            .arg(&self.socket_dir)
            .args([
                "-p",
                &self.port.to_string(),
                "-U",
                user,
                "-d",
                "postgres",
                "-c",
                sql,
            ])
            .output()
            .unwrap_or_else(|e| panic!("running {}: {e}", psql.display()));
        assert!(
            out.status.success(),
            "psql failed on {sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// SIGKILL the postmaster (its backends exit when they notice): the engine dies mid-work.
    pub fn kill(&self) {
        // SAFETY: signalling the server process this test started.
        unsafe { libc::kill(self.pid, libc::SIGKILL) };
        let _ = Command::new("pkill")
            .args(["-KILL", "-f", &self.socket_dir.to_string_lossy()])
            .status();
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        // Immediate shutdown; then anything left of it.
        unsafe { libc::kill(self.pid, libc::SIGQUIT) };
        std::thread::sleep(std::time::Duration::from_millis(200));
        self.kill();
    }
}

fn bin_dir() -> PathBuf {
    let pydeps = std::env::var_os("PATINA_PYDEPS")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target/pydeps"));
    Path::new(&pydeps).join("pgserver/pginstall/bin")
}
