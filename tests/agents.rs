//! The agent CLIs people run, with `patina-mcp` registered the way docs/agents.md says: Claude
//! Code, OpenAI Codex and Gemini CLI, the pinned npm builds `.ci/run` installs into
//! `target/npm-agents`, each in a scratch `HOME`, offline (no model is ever called). Each
//! registers the server with its own command, lists it as connected, and — where the CLI can call
//! a tool without a model (Claude Code's stream-json control requests, Codex's app server) — calls
//! `patina_query` through its own MCP client and gets the fixture's definition back from the
//! harness's daemon. A second registration of the same binary with its stderr in a file
//! (`PATINA_MCP_LOG=debug`) shows the protocol version the client asks for; the tool list at that
//! version stays within its 2,000-token budget.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;

use crate::util::*;
use serde_json::{Value, json};

/// The agents' pinned versions (`.ci/run` installs exactly these).
const CLAUDE_CODE: &str = "2.1.332";
const CODEX: &str = "0.171.0";
const GEMINI_CLI: &str = "0.61.0";

/// The tool list's budget: 2,000 tokens of ≈ 4 characters, as sent (tests/mcp.rs checks the same
/// at every version patina-mcp speaks).
const TOOLS_BUDGET_CHARS: usize = 8000;

/// The protocol versions patina-mcp speaks; any other is answered with the newest.
const SPOKEN: [&str; 3] = ["2025-06-18", "2025-03-26", "2024-11-05"];

/// An agent CLI from `target/npm-agents` (`PATINA_NPM_AGENTS` moves it).
fn agent(name: &str) -> PathBuf {
    let dir = std::env::var_os("PATINA_NPM_AGENTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target/npm-agents"));
    let path = dir.join("node_modules/.bin").join(name);
    assert!(
        path.exists(),
        "{} is missing: install the pinned agent CLIs as .ci/run does (`npm install --prefix \
         target/npm-agents @anthropic-ai/claude-code@{CLAUDE_CODE} @openai/codex@{CODEX} \
         @google/gemini-cli@{GEMINI_CLI}`)",
        path.display()
    );
    path
}

/// A scratch `HOME` for one agent: its configuration starts empty and stays out of the user's.
fn scratch_home() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("pth")
        .tempdir_in("/tmp")
        .expect("a scratch HOME")
}

/// `name` (an agent CLI) in `cwd` with `env`'s variables and `home` as `HOME`; no API key, no
/// update check, nothing the user's own configuration could add.
fn agent_command(env: &TestEnv, home: &Path, cwd: &Path, name: &str) -> Command {
    let mut cmd = env.isolated_command(agent(name));
    cmd.current_dir(cwd).env("HOME", home);
    for var in [
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_STATE_HOME",
        "XDG_CACHE_HOME",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "OPENAI_API_KEY",
        "CODEX_HOME",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GOOGLE_CLOUD_PROJECT",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("NO_UPDATE_NOTIFIER", "1");
    cmd
}

/// Run an agent command that must succeed; its output.
#[track_caller]
fn ok(cmd: Command, what: &str) -> Output {
    let out = run(cmd, CALL_TIMEOUT);
    assert!(out.status.success(), "{what} failed\n{out:?}");
    out
}

/// `patina-mcp` run through `sh` with its stderr appended to `log` and every message logged: the
/// same server, its conversation observable.
fn probe_command(log: &Path) -> (String, Vec<String>) {
    (
        "/bin/sh".into(),
        vec![
            "-c".into(),
            "exec \"$0\" 2>>\"$1\"".into(),
            bin("patina-mcp").display().to_string(),
            log.display().to_string(),
        ],
    )
}

/// The protocol version the client asked for in its `initialize`, read from a probe's log.
fn requested_version(log: &Path) -> String {
    let text = std::fs::read_to_string(log)
        .unwrap_or_else(|e| panic!("the probe server wrote no log at {} ({e})", log.display()));
    for line in text.lines() {
        let Some(msg) = line.strip_prefix("patina-mcp: <- ") else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<Value>(msg) else {
            continue;
        };
        if v["method"] == "initialize" {
            return v["params"]["protocolVersion"]
                .as_str()
                .unwrap_or_else(|| panic!("an initialize without a version: {v}"))
                .to_string();
        }
    }
    panic!("the client never initialized the probe server:\n{text}");
}

/// The tool list patina-mcp sends a client that asks for `version`, as compact JSON: the
/// version negotiated must be one patina-mcp speaks (the one asked for, or the newest), and the
/// list within the budget.
fn assert_tools_within_budget_at(env: &TestEnv, client: &str, version: &str) {
    let mut m = JsonLines::spawn(env.mcp_command());
    m.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": client, "version": "0"}}}));
    let init = m.answer(&json!(1));
    let negotiated = init["result"]["protocolVersion"]
        .as_str()
        .unwrap_or_default();
    let expected = if SPOKEN.contains(&version) {
        version
    } else {
        SPOKEN[0]
    };
    assert_eq!(negotiated, expected, "{client} asked for {version}: {init}");
    m.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    m.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let listed = m.answer(&json!(2));
    let chars = listed["result"].to_string().chars().count();
    println!("{client}: protocol {version} → {negotiated}, tools/list {chars} characters");
    assert!(
        chars <= TOOLS_BUDGET_CHARS,
        "{client} ({negotiated}): tools/list is {chars} characters, over the 2,000-token budget"
    );
}

/// A child speaking JSON Lines on stdin/stdout (an MCP stdio server, Codex's app server, Claude
/// Code's stream-json mode); stdout read on a thread.
struct JsonLines {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl JsonLines {
    fn spawn(mut cmd: Command) -> JsonLines {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        JsonLines {
            stdin: child.stdin.take().expect("stdin"),
            child,
            lines,
            seen: Vec::new(),
        }
    }

    fn send(&mut self, msg: Value) {
        writeln!(self.stdin, "{msg}").expect("writing a line");
        self.stdin.flush().expect("flushing");
    }

    /// The first message `pick` accepts (others are kept for the failure message).
    fn until(&mut self, what: &str, mut pick: impl FnMut(&Value) -> bool) -> Value {
        let deadline = std::time::Instant::now() + CALL_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let line = self.lines.recv_timeout(left).unwrap_or_else(|e| {
                panic!(
                    "no {what} within {CALL_TIMEOUT:?} ({e}); seen:\n{}",
                    self.seen.join("\n")
                )
            });
            if let Ok(v) = serde_json::from_str::<Value>(&line)
                && pick(&v)
            {
                return v;
            }
            let mut short = line;
            short.truncate(600);
            self.seen.push(short);
        }
    }

    /// The JSON-RPC answer to request `id`.
    fn answer(&mut self, id: &Value) -> Value {
        self.until(&format!("answer to {id}"), |v| {
            &v["id"] == id && v.get("method").is_none()
        })
    }
}

impl Drop for JsonLines {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The repository the agents search, registered with the harness's daemon: `parse_args` is
/// defined in `src/args.rs`.
fn indexed_fixture(env: &TestEnv) -> Repo {
    let repo = fixture_repo();
    env.add_repo(repo.path());
    repo
}

/// Claude Code: `claude mcp add patina -- patina-mcp` (docs/agents.md), `claude mcp list` says it
/// is connected, and Claude Code's own MCP client — driven through its stream-json control
/// requests (`mcp_status`, `mcp_call`), no model involved — lists the 15 tools and gets
/// `parse_args`'s definition from the harness's daemon.
#[test]
fn claude_code_registers_lists_and_calls_patina() {
    let env = TestEnv::started();
    let repo = indexed_fixture(&env);
    let home = scratch_home();
    let claude = |args: &[&str]| {
        let mut cmd = agent_command(&env, home.path(), repo.path(), "claude");
        cmd.args(args);
        cmd
    };
    let version = ok(claude(&["--version"]), "claude --version");
    assert!(version.stdout.contains(CLAUDE_CODE), "{version:?}");
    let mcp = bin("patina-mcp").display().to_string();
    ok(
        claude(&["mcp", "add", "patina", "--", &mcp]),
        "claude mcp add",
    );
    let log = home.path().join("probe.log");
    let (command, args) = probe_command(&log);
    let probe = json!({"type": "stdio", "command": command, "args": args,
                       "env": {"PATINA_MCP_LOG": "debug"}});
    ok(
        claude(&["mcp", "add-json", "patina-probe", &probe.to_string()]),
        "claude mcp add-json",
    );

    let listed = ok(claude(&["mcp", "list"]), "claude mcp list");
    println!("{}", listed.stdout);
    let line = listed
        .stdout
        .lines()
        .find(|l| l.starts_with("patina: "))
        .unwrap_or_else(|| panic!("claude mcp list shows no patina\n{listed:?}"));
    assert!(line.contains(&mcp), "{line}");
    assert!(line.ends_with("✔ Connected"), "{line}\n{listed:?}");

    let mut session = JsonLines::spawn({
        let mut cmd = claude(&[
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
        ]);
        cmd.stderr(Stdio::null());
        cmd
    });
    let control = |s: &mut JsonLines, id: &str, request: Value| {
        s.send(json!({"type": "control_request", "request_id": id, "request": request}));
        s.until(&format!("control response {id}"), |v| {
            v["type"] == "control_response" && v["response"]["request_id"] == id
        })
    };
    control(&mut session, "init", json!({"subtype": "initialize"}));
    // Servers connect in the background: "pending" until the handshake is done.
    let mut asked = 0;
    let patina = poll(CALL_TIMEOUT, "Claude Code has patina connected", || {
        asked += 1;
        let status = control(
            &mut session,
            &format!("status{asked}"),
            json!({"subtype": "mcp_status"}),
        );
        let servers = &status["response"]["response"]["mcpServers"];
        let patina = servers
            .as_array()
            .and_then(|a| a.iter().find(|s| s["name"] == "patina"))
            .cloned()
            .unwrap_or_else(|| panic!("mcp_status without patina: {status}"));
        match patina["status"].as_str() {
            Some("connected") => Ok(patina),
            Some("pending") => {
                std::thread::sleep(std::time::Duration::from_millis(250));
                Err(patina.to_string())
            }
            _ => panic!("patina is not connected: {patina}"),
        }
    });
    assert_eq!(patina["serverInfo"]["name"], "patina-mcp", "{patina}");
    let tools = patina["tools"].as_array().expect("tools[]");
    assert_eq!(tools.len(), 15, "{patina}");
    assert!(
        tools.iter().any(|t| t["name"] == "patina_query"),
        "{patina}"
    );

    let called = control(
        &mut session,
        "call",
        json!({"subtype": "mcp_call", "tool": "mcp__patina__patina_query",
               "arguments": {"query": "parse_args"}}),
    );
    assert_eq!(called["response"]["subtype"], "success", "{called}");
    let content = called["response"]["response"]["content"].to_string();
    assert!(
        content.contains("src/args.rs") && content.contains(&repo.key()),
        "Claude Code's call of patina_query found the definition in the daemon's index: \
         {called}\n{}",
        env.logs()
    );
    drop(session);

    assert_tools_within_budget_at(&env, "claude-code", &requested_version(&log));
}

/// Codex: `[mcp_servers.patina]` in `~/.codex/config.toml` as `codex mcp add` writes it, with the
/// `env_vars` docs/agents.md adds (Codex starts servers with a cleared environment); `codex mcp
/// list` shows it enabled, and Codex's app server (`codex app-server`, JSON-RPC on stdio, no model)
/// connects it, reports its tools — within the budget, as Codex received them — and calls
/// `patina_query` through Codex's own MCP client, answered from the harness's daemon.
#[test]
fn codex_registers_lists_and_calls_patina() {
    let env = TestEnv::started();
    let repo = indexed_fixture(&env);
    let home = scratch_home();
    let codex = |args: &[&str]| {
        let mut cmd = agent_command(&env, home.path(), repo.path(), "codex");
        cmd.args(args);
        cmd
    };
    let version = ok(codex(&["--version"]), "codex --version");
    assert!(version.stdout.contains(CODEX), "{version:?}");
    let mcp = bin("patina-mcp").display().to_string();
    ok(
        codex(&["mcp", "add", "patina", "--", &mcp]),
        "codex mcp add",
    );
    let config_path = home.path().join(".codex/config.toml");
    let mut config = std::fs::read_to_string(&config_path).expect("codex wrote config.toml");
    assert!(
        config.contains("[mcp_servers.patina]") && config.contains(&format!("command = {mcp:?}")),
        "{config}"
    );
    // What docs/agents.md adds by hand: the variables that say where the daemon's socket is.
    config = config.replace(
        "[mcp_servers.patina]\n",
        "[mcp_servers.patina]\nenv_vars = [\"PATINA_HOME\", \"PATINA_SOCKET\", \"XDG_RUNTIME_DIR\"]\n",
    );
    let log = home.path().join("probe.log");
    let (command, args) = probe_command(&log);
    config.push_str(&format!(
        "\n[mcp_servers.patina-probe]\ncommand = {command:?}\nargs = {args:?}\nenv_vars = \
         [\"PATINA_HOME\"]\nenv = {{ PATINA_MCP_LOG = \"debug\" }}\n"
    ));
    std::fs::write(&config_path, &config).expect("writing config.toml");

    let listed = ok(codex(&["mcp", "list", "--json"]), "codex mcp list");
    let servers: Value = serde_json::from_str(&listed.stdout)
        .unwrap_or_else(|e| panic!("codex mcp list --json is not JSON ({e})\n{listed:?}"));
    let patina = servers
        .as_array()
        .and_then(|a| a.iter().find(|s| s["name"] == "patina"))
        .unwrap_or_else(|| panic!("codex mcp list without patina: {servers}"));
    assert_eq!(patina["enabled"], true, "{patina}");
    assert_eq!(patina["transport"]["command"], mcp.as_str(), "{patina}");

    let mut app = JsonLines::spawn(codex(&["app-server"]));
    let mut id = 0;
    let mut request = |app: &mut JsonLines, method: &str, params: Value| {
        id += 1;
        app.send(json!({"id": id, "method": method, "params": params}));
        let a = app.answer(&json!(id));
        assert!(a.get("error").is_none(), "{method}: {a}");
        a["result"].clone()
    };
    request(
        &mut app,
        "initialize",
        json!({"clientInfo": {"name": "patina-tests", "version": "0"}}),
    );
    app.send(json!({"method": "initialized"}));
    let status = request(&mut app, "mcpServerStatus/list", json!({}));
    let patina = status["data"]
        .as_array()
        .and_then(|a| a.iter().find(|s| s["name"] == "patina"))
        .unwrap_or_else(|| panic!("Codex reports no patina server: {status}"));
    assert_eq!(patina["serverInfo"]["name"], "patina-mcp", "{patina}");
    let tools = patina["tools"].as_object().expect("tools{}");
    assert_eq!(tools.len(), 15, "{patina}");
    let received: Vec<&Value> = tools.values().collect();
    let chars = json!({ "tools": received }).to_string().chars().count();
    println!("codex received 15 tools, {chars} characters");
    assert!(chars <= TOOLS_BUDGET_CHARS, "{chars} characters: {patina}");

    let thread = request(
        &mut app,
        "thread/start",
        json!({"cwd": repo.path().display().to_string()}),
    );
    let thread_id = thread["thread"]["id"].clone();
    let called = request(
        &mut app,
        "mcpServer/tool/call",
        json!({"server": "patina", "threadId": thread_id, "tool": "patina_query",
               "arguments": {"query": "parse_args"}}),
    );
    let text = called["content"].to_string();
    assert!(
        text.contains("src/args.rs") && called["isError"] != true,
        "Codex's call of patina_query found the definition in the daemon's index: {called}\n{}",
        env.logs()
    );
    drop(app);

    assert_tools_within_budget_at(&env, "codex", &requested_version(&log));
}

/// Gemini CLI: `gemini mcp add -s user patina patina-mcp` writes `mcpServers.patina` into
/// `~/.gemini/settings.json`; in a trusted folder `gemini mcp list` connects it.
#[test]
fn gemini_cli_registers_and_connects_patina() {
    let env = TestEnv::started();
    let repo = indexed_fixture(&env);
    let home = scratch_home();
    let gemini = |args: &[&str]| {
        let mut cmd = agent_command(&env, home.path(), repo.path(), "gemini");
        cmd.args(args);
        cmd
    };
    let version = ok(gemini(&["--version"]), "gemini --version");
    assert!(version.stdout.contains(GEMINI_CLI), "{version:?}");
    let mcp = bin("patina-mcp").display().to_string();
    ok(
        gemini(&["mcp", "add", "-s", "user", "patina", &mcp]),
        "gemini mcp add",
    );
    let settings_path = home.path().join(".gemini/settings.json");
    let mut settings: Value = serde_json::from_str(
        &std::fs::read_to_string(&settings_path).expect("gemini wrote settings.json"),
    )
    .expect("settings.json is JSON");
    assert_eq!(settings["mcpServers"]["patina"]["command"], mcp.as_str());
    let log = home.path().join("probe.log");
    let (command, args) = probe_command(&log);
    settings["mcpServers"]["patina-probe"] =
        json!({"command": command, "args": args, "env": {"PATINA_MCP_LOG": "debug"}});
    std::fs::write(&settings_path, settings.to_string()).expect("writing settings.json");
    // Gemini CLI starts no MCP server in a folder the user has not trusted.
    std::fs::write(
        home.path().join(".gemini/trustedFolders.json"),
        json!({ repo.path().display().to_string(): "TRUST_FOLDER" }).to_string(),
    )
    .expect("writing trustedFolders.json");

    let listed = ok(gemini(&["mcp", "list"]), "gemini mcp list");
    // Gemini CLI prints the list on stderr.
    let text = format!("{}{}", listed.stdout, listed.stderr);
    println!("{text}");
    let line = text
        .lines()
        .find(|l| l.contains(" patina: "))
        .unwrap_or_else(|| panic!("gemini mcp list shows no patina\n{listed:?}"));
    assert!(line.starts_with("✓ patina: "), "{line}");
    assert!(
        line.contains(&mcp) && line.ends_with("- Connected"),
        "{line}"
    );

    assert_tools_within_budget_at(&env, "gemini-cli", &requested_version(&log));
}
