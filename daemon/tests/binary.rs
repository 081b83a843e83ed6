//! The `patinad` binary starts and describes itself. (Also makes `cargo test --workspace` build
//! the binary that the end-to-end suite in `tests/` runs.)

use std::process::Command;

#[test]
fn patinad_reports_its_version_and_flags() {
    let out = Command::new(env!("CARGO_BIN_EXE_patinad"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains(env!("CARGO_PKG_VERSION")));
    let help = Command::new(env!("CARGO_BIN_EXE_patinad"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("--socket"));
}
