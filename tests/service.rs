//! The service definitions `scripts/setup --install` writes: systemd user units that systemd
//! accepts, and a launchd agent that parses, both with the user's real paths (no hand edits).

use std::process::Command;

use crate::util::{bin, workspace};

fn service_files(args: &[&str]) {
    let out = Command::new("python3")
        .arg(workspace().join("scripts/service_files.py"))
        .args(args)
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "service_files.py {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn systemd_units_name_the_installed_daemon_and_pass_systemd_analyze_verify() {
    let dir = tempfile::tempdir().unwrap();
    let patinad = bin("patinad");
    let patinad = patinad.to_str().unwrap();
    service_files(&[
        "systemd",
        "--bin",
        patinad,
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    let service = std::fs::read_to_string(dir.path().join("patina.service")).unwrap();
    assert!(
        service.lines().any(|l| l == format!("ExecStart={patinad}")),
        "{service}"
    );
    let runtime = tempfile::tempdir().unwrap();
    let out = Command::new("systemd-analyze")
        .args(["--user", "verify"])
        .arg(dir.path().join("patina.service"))
        .arg(dir.path().join("patina.socket"))
        .env("XDG_RUNTIME_DIR", runtime.path())
        .output()
        .expect("systemd-analyze (installed by .ci/run)");
    assert!(
        out.status.success(),
        "systemd-analyze --user verify: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_launchd_agent_is_a_valid_plist_with_absolute_paths() {
    let dir = tempfile::tempdir().unwrap();
    let plist = dir.path().join("dev.patina.patinad.plist");
    service_files(&[
        "plist",
        "--bin",
        "/Users/ada/.local/bin/patinad",
        "--log",
        "/Users/ada/Library/Logs/patinad.log",
        "--out",
        plist.to_str().unwrap(),
    ]);
    let check = "import plistlib, sys; d = plistlib.load(open(sys.argv[1], 'rb')); \
                 assert d['ProgramArguments'] == ['/Users/ada/.local/bin/patinad'], d; \
                 assert d['StandardErrorPath'] == '/Users/ada/Library/Logs/patinad.log', d; \
                 assert d['Label'] == 'dev.patina.patinad', d";
    let out = Command::new("python3")
        .args(["-c", check])
        .arg(&plist)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The template in the repository parses too (an XML comment may not contain a double dash).
    let out = Command::new("python3")
        .args([
            "-c",
            "import plistlib, sys; plistlib.load(open(sys.argv[1], 'rb'))",
        ])
        .arg(workspace().join("launchd/dev.patina.patinad.plist"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
