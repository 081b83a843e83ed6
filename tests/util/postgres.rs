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

/// A TLS front for a [`PgServer`]: `stunnel` (Debian's, installed by .ci/run) terminating TLS on a
/// local TCP port and passing the protocol on to the server's Unix socket, with a server
/// certificate for `localhost` signed by a throwaway CA. Clients reach it with direct TLS
/// negotiation (`sslnegotiation=direct`), as they would a PostgreSQL 17 server with TLS.
pub struct TlsFront {
    dir: tempfile::TempDir,
    port: u16,
    child: std::process::Child,
}

impl TlsFront {
    pub fn start(pg: &PgServer) -> TlsFront {
        let dir = tempfile::tempdir().expect("a directory for the certificates");
        let d = dir.path();
        let openssl = |args: &[&str]| {
            let out = Command::new("openssl")
                .args(args)
                .current_dir(d)
                .output()
                .expect("running openssl");
            assert!(
                out.status.success(),
                "openssl {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        for (name, cn) in [("ca", "patina test CA"), ("other-ca", "someone else's CA")] {
            openssl(&[
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "2",
                "-subj",
                &format!("/CN={cn}"),
                "-keyout",
                &format!("{name}.key"),
                "-out",
                &format!("{name}.pem"),
            ]);
        }
        std::fs::write(d.join("ext.cnf"), "subjectAltName=DNS:localhost\n").unwrap();
        openssl(&[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=localhost",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
        ]);
        openssl(&[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "ext.cnf",
            "-out",
            "server.pem",
        ]);
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let socket = pg.socket_dir.join(format!(".s.PGSQL.{}", pg.port));
        std::fs::write(
            d.join("stunnel.conf"),
            format!(
                "foreground = yes\npid =\n[pg]\naccept = 127.0.0.1:{port}\nconnect = {}\n\
                 cert = {}\nkey = {}\n",
                socket.display(),
                d.join("server.pem").display(),
                d.join("server.key").display()
            ),
        )
        .unwrap();
        let child = Command::new("stunnel4")
            .arg(d.join("stunnel.conf"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("starting stunnel4 (Debian's stunnel4, as .ci/run installs it)");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "stunnel did not listen on {port}"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        TlsFront { dir, port, child }
    }

    /// A connection string for `user` through the front (TLS only).
    pub fn url(&self, user: &str) -> String {
        format!(
            "host=localhost port={} user={user} dbname=postgres sslnegotiation=direct connect_timeout=5",
            self.port
        )
    }

    /// The CA that signed the front's certificate, and one that did not.
    pub fn ca(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    pub fn other_ca(&self) -> PathBuf {
        self.dir.path().join("other-ca.pem")
    }
}

impl Drop for TlsFront {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
