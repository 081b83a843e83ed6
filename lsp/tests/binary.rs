//! The `patina-lsp` binary answers `initialize` without a daemon (it connects in the background)
//! and, at the end of its input without `shutdown`, exits with 1 as the protocol prescribes. (Also
//! makes `cargo test --workspace` build the binary that the end-to-end suite in `tests/` runs.)

use std::io::{Read, Write};
use std::process::{Command, Stdio};

#[test]
fn patina_lsp_initializes_and_exits_at_end_of_input() {
    let dir = std::env::temp_dir().join(format!("plsp-bin-{}", std::process::id()));
    let mut child = Command::new(env!("CARGO_BIN_EXE_patina-lsp"))
        .env("PATINA_HOME", &dir)
        .env("PATINA_DAEMON_BIN", "/nonexistent/patinad")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}"#;
    let mut stdin = child.stdin.take().unwrap();
    write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
    drop(stdin);
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let status = child.wait().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.starts_with("Content-Length: "), "{out}");
    assert!(out.contains(r#""name":"patina-lsp""#), "{out}");
    assert_eq!(status.code(), Some(1), "end of input without shutdown");
}
