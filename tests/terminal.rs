//! The client in a real terminal (a `tmux` pane, its bytes recorded with `pipe-pane`): a progress
//! bar while `patina add` indexes, colour in `patina q` — and none of either when the same commands
//! write into a pipe.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::util::*;

/// A repository large enough that indexing it takes several progress updates.
fn many_files_repo(tag: &str) -> Repo {
    generated_repo(400, |i| {
        (
            format!("pkg{}/mod_{tag}_{i}.py", i % 20),
            format!(
                "def handler_{tag}_{i}(request):\n    \"\"\"Handle request {i}.\"\"\"\n    return request.value * {i}\n\n\nclass Model{tag}{i}:\n    def save(self):\n        return {i}\n"
            ),
        )
    })
}

/// Runs `script` in a detached tmux pane of `env` (its own tmux server, 160×40) and returns every
/// byte the pane received. The script starts only once the recording is attached.
fn in_tmux(env: &TestEnv, script: &str) -> Vec<u8> {
    let dir = env.home();
    let raw = dir.join("pane.raw");
    let go = dir.join("pane.go");
    let done = dir.join("pane.done");
    let body = format!(
        "while [ ! -e '{go}' ]; do sleep 0.05; done\n{script}\ntouch '{done}'\nsleep 600\n",
        go = go.display(),
        done = done.display()
    );
    std::fs::write(dir.join("pane.sh"), body).unwrap();
    let server = format!("patina-test-{}", std::process::id());
    let tmux = |args: &[&str]| {
        let mut cmd = env.isolated_command("tmux");
        cmd.env_remove("NO_COLOR")
            .env_remove("TMUX")
            .env("TERM", "xterm-256color")
            .args(["-L", &server, "-f", "/dev/null"])
            .args(args);
        let out = run(cmd, Duration::from_secs(60));
        assert_eq!(out.code(), 0, "tmux {args:?}: {out:?}");
    };
    let pane_script = format!("sh '{}'", dir.join("pane.sh").display());
    tmux(&["new-session", "-d", "-x", "160", "-y", "40", &pane_script]);
    tmux(&["pipe-pane", "-o", &format!("cat >> '{}'", raw.display())]);
    std::fs::write(&go, "").unwrap();
    let deadline = Instant::now() + CALL_TIMEOUT;
    while !done.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    // Let the pipe drain what the pane printed last.
    std::thread::sleep(Duration::from_millis(300));
    tmux(&["kill-server"]);
    assert!(done.exists(), "the script did not finish in time");
    std::fs::read(&raw).unwrap_or_default()
}

fn sh_quote(p: &Path) -> String {
    format!("'{}'", p.display())
}

#[test]
fn a_terminal_gets_a_progress_bar_and_colour_and_a_pipe_gets_neither() {
    let env = TestEnv::started();
    let (first, second) = (many_files_repo("a"), many_files_repo("b"));
    let patina = env
        .patina_command()
        .get_program()
        .to_string_lossy()
        .into_owned();
    let out = |name: &str| env.home().join(name);
    let script = format!(
        "cd {first}\n\
         {patina} add\n\
         {patina} q handler_a_7 -n 3\n\
         cd {second}\n\
         {patina} add 2>&1 | cat > {add_piped}\n\
         {patina} q handler_b_7 -n 3 2>&1 | cat > {q_piped}\n",
        first = sh_quote(first.path()),
        second = sh_quote(second.path()),
        patina = sh_quote(Path::new(&patina)),
        add_piped = sh_quote(&out("add.piped")),
        q_piped = sh_quote(&out("q.piped")),
    );
    let raw = in_tmux(&env, &script);
    let screen = String::from_utf8_lossy(&raw);

    assert!(
        screen.contains("indexing [") && screen.contains("/400 files"),
        "a progress bar while indexing: {screen:?}"
    );
    assert!(
        screen.contains("indexed ") && screen.contains("400 files examined"),
        "then the summary line: {screen:?}"
    );
    assert!(
        screen.contains("\x1b[35mpkg7/mod_a_7.py\x1b[0m:"),
        "paths coloured on a terminal: {screen:?}"
    );
    assert!(
        !screen.contains("\x1b]8;"),
        "no hyperlinks inside tmux (it passes them through only when configured to)"
    );

    let add_piped = std::fs::read_to_string(out("add.piped")).unwrap();
    assert!(add_piped.contains("400 files examined"), "{add_piped:?}");
    let q_piped = std::fs::read_to_string(out("q.piped")).unwrap();
    assert!(
        q_piped.lines().any(|l| l.starts_with("pkg7/mod_b_7.py:1-")),
        "{q_piped:?}"
    );
    for (what, text) in [("add", &add_piped), ("q", &q_piped)] {
        assert!(
            !text.contains('\x1b') && !text.contains('\r'),
            "`patina {what}` into a pipe: no escape codes, no bar: {text:?}"
        );
    }
}
