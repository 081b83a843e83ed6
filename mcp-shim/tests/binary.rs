//! The `patina-mcp` binary exits cleanly when its input ends. (Also makes `cargo test --workspace`
//! build the binary that the end-to-end suite in `tests/` runs.)

use std::process::{Command, Stdio};

#[test]
fn patina_mcp_exits_cleanly_at_end_of_input() {
    let dir = std::env::temp_dir().join(format!("pmcp-bin-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_patina-mcp"))
        .env("PATINA_HOME", &dir)
        .env("PATINA_DAEMON_BIN", "/nonexistent/patinad")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stdout.is_empty(),
        "nothing is written to stdout without a request"
    );
}
