//! The `patina` binary starts and describes its commands. (Also makes `cargo test --workspace`
//! build the binary that the end-to-end suite in `tests/` runs.)

use std::process::Command;

#[test]
fn patina_reports_its_version_and_commands() {
    let out = Command::new(env!("CARGO_BIN_EXE_patina"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains(env!("CARGO_PKG_VERSION")));
    let help = Command::new(env!("CARGO_BIN_EXE_patina"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    for cmd in ["add", "q", "status", "daemon", "model", "bench"] {
        assert!(help.contains(cmd), "`patina --help` lists {cmd}: {help}");
    }
}

#[test]
fn a_usage_error_exits_with_2() {
    let out = Command::new(env!("CARGO_BIN_EXE_patina"))
        .arg("--no-such-flag")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
