//! The shell conveniences around the client: `doctor`, `config`, `daemon log`, completions and
//! the man page.

use crate::util::*;

#[test]
fn doctor_passes_a_healthy_setup() {
    let env = TestEnv::with_model();
    let out = env.patina(&["daemon", "start"]);
    assert_eq!(out.code(), 0, "{out:?}");
    let out = env.patina(&["doctor"]);
    assert_eq!(out.code(), 0, "{out:?}");
    for line in [
        "[ok  ] daemon",
        "[ok  ] version",
        "[ok  ] model",
        "[ok  ] config",
        "[ok  ] socket",
    ] {
        assert!(out.stdout.contains(line), "{line}: {out:?}");
    }
    assert!(out.stdout.contains("no problems found"), "{out:?}");
}

#[test]
fn doctor_names_each_problem_of_a_broken_setup_with_its_fix() {
    let env = TestEnv::new(); // no model
    // A socket left by a crashed daemon: bound, then its listener gone.
    let socket = env.socket();
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(socket.parent().unwrap())
        .unwrap();
    drop(std::os::unix::net::UnixListener::bind(&socket).unwrap());
    std::fs::write(
        env.home().join("config.toml"),
        "[retrieval]\nrrf_k = \"sixty\"\n",
    )
    .unwrap();

    let out = env.patina(&["doctor"]);
    assert_eq!(out.code(), 1, "{out:?}");
    assert!(
        out.stdout.contains("[FAIL] daemon") && out.stdout.contains("stale socket"),
        "{out:?}"
    );
    assert!(
        out.stdout.contains("patina daemon start"),
        "the fix: {out:?}"
    );
    assert!(
        out.stdout.contains("[FAIL] model") && out.stdout.contains("patina model install"),
        "{out:?}"
    );
    assert!(
        out.stdout.contains("[FAIL] config") && out.stdout.contains("rrf_k"),
        "{out:?}"
    );
    assert!(out.stdout.contains("3 problem(s) found"), "{out:?}");

    // `config show` says the same about the file; `config path` names it.
    let out = env.patina(&["config", "path"]);
    assert_eq!(
        out.stdout.trim(),
        env.home().join("config.toml").to_str().unwrap()
    );
    let out = env.patina(&["config", "show"]);
    assert_eq!(out.code(), 2, "{out:?}");
    assert!(
        out.stdout.contains("sixty") && out.stderr.contains("rrf_k"),
        "{out:?}"
    );
}

#[test]
fn daemon_log_prints_the_end_of_the_log_of_a_client_started_daemon() {
    let env = TestEnv::new();
    let out = env.patina(&["daemon", "log"]);
    assert_eq!(out.code(), 1, "no log yet: {out:?}");
    assert!(out.stderr.contains("no log"), "{out:?}");
    env.patina(&["daemon", "start"]);
    let out = env.patina(&["daemon", "log", "-n", "3"]);
    assert_eq!(out.code(), 0, "{out:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(!lines.is_empty() && lines.len() <= 3, "{out:?}");
    env.patina(&["daemon", "stop"]);
}

#[test]
fn completions_and_the_man_page_come_from_the_real_flags() {
    let env = TestEnv::new();
    for (shell, marker) in [
        ("bash", "complete"),
        ("zsh", "#compdef patina"),
        ("fish", "complete -c patina"),
    ] {
        let out = env.patina(&["completions", shell]);
        assert_eq!(out.code(), 0, "{shell}: {out:?}");
        assert!(
            out.stdout.contains(marker),
            "{shell}: {}",
            &out.stdout[..200.min(out.stdout.len())]
        );
        assert!(out.stdout.contains("fresh"), "{shell}: knows `q --fresh`");
    }
    let out = env.patina(&["completions", "tcsh"]);
    assert_eq!(out.code(), 2, "an unknown shell is refused: {out:?}");
    let out = env.patina(&["man"]);
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(
        out.stdout.starts_with(".ie") || out.stdout.contains(".TH patina"),
        "{out:?}"
    );
}

#[test]
fn the_installer_puts_completions_and_the_man_page_where_shells_and_man_look() {
    let env = TestEnv::new();
    let home = env.home().join("user");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join("scripts/install_shell");
    let mut cmd = env.isolated_command(&script);
    cmd.arg(bin("patina"))
        .env("HOME", &home)
        .env_remove("XDG_DATA_HOME")
        .env_remove("XDG_CONFIG_HOME");
    let out = run(cmd, CALL_TIMEOUT);
    assert_eq!(out.code(), 0, "{out:?}");
    for (file, marker) in [
        (
            ".local/share/bash-completion/completions/patina",
            "complete",
        ),
        (".local/share/zsh/site-functions/_patina", "#compdef patina"),
        (".config/fish/completions/patina.fish", "complete -c patina"),
        (".local/share/man/man1/patina.1", ".TH patina"),
    ] {
        let text = std::fs::read_to_string(home.join(file))
            .unwrap_or_else(|e| panic!("{file}: {e}\n{out:?}"));
        assert!(text.contains(marker), "{file}");
    }
}
