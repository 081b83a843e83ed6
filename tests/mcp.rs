//! `patina-mcp`, the MCP stdio server for agents: protocol conformance through the official MCP
//! Python SDK (tests/mcp_conformance.py), version negotiation, bad input of every kind, tool
//! errors, and path confinement — always the real binary over its stdin/stdout.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::util::*;
use serde_json::{Value, json};

/// How long one answer may take.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(60);

/// A running `patina-mcp` with its stdout read line by line on a thread.
pub(crate) struct Mcp {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    next_id: u64,
    /// Answers read while waiting for another id.
    stash: Vec<Value>,
}

impl Mcp {
    /// Spawn the shim for `env` with `cwd` as its working directory (stderr to a log file).
    fn spawn(env: &TestEnv, cwd: &Path) -> Mcp {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(env.home().join("mcp-stderr.log"))
            .expect("opening the shim's log");
        let mut child = env
            .mcp_command()
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("spawning patina-mcp");
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
        Mcp {
            stdin: child.stdin.take(),
            child,
            lines,
            next_id: 1,
            stash: Vec::new(),
        }
    }

    /// Spawn and complete the handshake at `version`.
    pub(crate) fn ready(env: &TestEnv, cwd: &Path, version: &str) -> Mcp {
        let mut m = Mcp::spawn(env, cwd);
        let r = m.initialize(version);
        assert_eq!(r["result"]["protocolVersion"], version, "{r}");
        m.notify("notifications/initialized", json!({}));
        m
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("writing to the shim");
        stdin.flush().expect("flushing");
    }

    fn send(&mut self, msg: &Value) {
        let mut line = msg.to_string().into_bytes();
        line.push(b'\n');
        self.send_raw(&line);
    }

    /// The next message the shim writes; panics after [`ANSWER_TIMEOUT`].
    fn recv(&mut self) -> Value {
        if !self.stash.is_empty() {
            return self.stash.remove(0);
        }
        let line = self
            .lines
            .recv_timeout(ANSWER_TIMEOUT)
            .unwrap_or_else(|e| panic!("no answer from patina-mcp within {ANSWER_TIMEOUT:?}: {e}"));
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {line}"))
    }

    /// Nothing is written within `d`.
    fn silent_for(&mut self, d: Duration) -> bool {
        self.stash.is_empty() && self.lines.recv_timeout(d).is_err()
    }

    /// Send a request; return the whole response (result or error) with its id.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.answer_to(&json!(id))
    }

    fn answer_to(&mut self, id: &Value) -> Value {
        if let Some(i) = self.stash.iter().position(|m| &m["id"] == id) {
            return self.stash.remove(i);
        }
        loop {
            let line = self.lines.recv_timeout(ANSWER_TIMEOUT).unwrap_or_else(|e| {
                panic!("no answer to request {id} within {ANSWER_TIMEOUT:?}: {e}")
            });
            let m: Value = serde_json::from_str(&line).expect("JSON on stdout");
            if &m["id"] == id {
                assert_eq!(m["jsonrpc"], "2.0", "{m}");
                return m;
            }
            self.stash.push(m);
        }
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn initialize(&mut self, version: &str) -> Value {
        self.request(
            "initialize",
            json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "tests", "version": "0"}}),
        )
    }

    /// `tools/call`; returns the result (panics on a protocol error).
    fn call(&mut self, tool: &str, args: Value) -> Value {
        let r = self.request("tools/call", json!({"name": tool, "arguments": args}));
        assert!(r.get("error").is_none(), "tools/call {tool} {args}: {r}");
        r["result"].clone()
    }

    /// `tools/call` that must succeed; returns the result.
    pub(crate) fn ok(&mut self, tool: &str, args: Value) -> Value {
        let r = self.call(tool, args.clone());
        assert_eq!(r["isError"], false, "{tool} {args}: {r}");
        r
    }

    /// The server still answers.
    #[track_caller]
    fn assert_alive(&mut self) {
        let r = self.request("ping", json!({}));
        assert_eq!(r["result"], json!({}), "ping after bad input: {r}");
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|c| {
            c.iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

#[track_caller]
fn assert_error(m: &Value, code: i64) {
    assert_eq!(m["error"]["code"], code, "{m}");
    assert!(
        m["error"]["message"]
            .as_str()
            .is_some_and(|s| !s.is_empty()),
        "an error says why: {m}"
    );
    assert!(m.get("result").is_none(), "{m}");
}

#[test]
fn mcp_conformance_with_the_official_python_sdk() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    env.add_repo(repo.path());
    let script = workspace().join("tests/mcp_conformance.py");
    // .ci/run installs the SDK into target/pydeps (PATINA_PYDEPS moves it).
    let python = std::env::var_os("PATINA_PYTHON").unwrap_or_else(|| "python3".into());
    let mut cmd = Command::new(&python);
    cmd.arg(&script)
        .arg("--shim")
        .arg(bin("patina-mcp"))
        .arg("--home")
        .arg(env.home())
        .arg("--repo")
        .arg(repo.path())
        .env("PYTHONPATH", pythonpath())
        .env("PYTHONDONTWRITEBYTECODE", "1");
    let out = run(cmd, Duration::from_secs(360));
    println!("{}", out.stdout);
    assert!(
        out.status.success(),
        "the MCP conformance test failed (if the SDK is missing: `python3 -m pip install --target \
         target/pydeps 'mcp==2.3.0'`, as .ci/run does)\n{out:?}\n---- shim stderr ----\n{}",
        std::fs::read_to_string(env.home().join("mcp-shim-stderr.log")).unwrap_or_default()
    );
    assert!(out.stdout.contains("checks passed"), "{out:?}");
}

#[test]
fn handshake_negotiates_the_version_and_tools_follow_it() {
    let env = TestEnv::started();
    for version in ["2024-11-05", "2025-03-26", "2025-06-18"] {
        let mut m = Mcp::spawn(&env, env.home());
        let r = m.initialize(version);
        let res = &r["result"];
        assert_eq!(res["protocolVersion"], version, "{r}");
        assert_eq!(res["serverInfo"]["name"], "patina-mcp", "{r}");
        assert_eq!(res["capabilities"]["tools"]["listChanged"], false, "{r}");
        assert!(
            res["instructions"]
                .as_str()
                .is_some_and(|s| s.contains("patina_query"))
        );
        m.notify("notifications/initialized", json!({}));
        assert!(
            m.silent_for(Duration::from_millis(200)),
            "notifications get no answer"
        );
        let listed = m.request("tools/list", json!({}));
        // The whole list, as sent, within 2,000 tokens of ≈ 4 characters.
        let chars = serde_json::to_string(&listed["result"])
            .unwrap()
            .chars()
            .count();
        assert!(chars <= 8000, "{version}: tools/list is {chars} characters");
        let tools = listed["result"]["tools"].clone();
        let tools = tools.as_array().expect("tools[]");
        assert_eq!(tools.len(), 15, "{tools:?}");
        for t in tools {
            let name = t["name"].as_str().unwrap();
            assert_eq!(t["inputSchema"]["type"], "object", "{t}");
            assert!(t["description"].as_str().unwrap().contains("Use it"), "{t}");
            let modern = version == "2025-06-18";
            assert_eq!(t.get("outputSchema").is_some(), modern, "{version} {name}");
            assert_eq!(
                t.get("annotations").is_some(),
                version != "2024-11-05",
                "{version} {name}"
            );
        }
        let r = m.ok("list_repos", json!({}));
        assert_eq!(
            r.get("structuredContent").is_some(),
            version == "2025-06-18",
            "{version}: {r}"
        );
    }
    // An unknown version is answered with the newest supported one.
    let mut m = Mcp::spawn(&env, env.home());
    let r = m.initialize("2099-01-01");
    assert_eq!(r["result"]["protocolVersion"], "2025-06-18", "{r}");
    // initialize without a version is invalid params.
    let r = m.request("initialize", json!({"capabilities": {}}));
    assert_error(&r, -32602);
    m.assert_alive();
}

#[test]
fn malformed_messages_get_json_rpc_errors_and_the_server_keeps_serving() {
    let env = TestEnv::started();
    let mut m = Mcp::ready(&env, env.home(), "2025-06-18");

    // Not JSON: parse error, id null.
    for bad in [
        &b"garbage\n"[..],
        b"{\n",
        b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"\n",
        b"[1, 2,]\n",
        b"\xff\xfe\xfd not utf-8\n",
    ] {
        m.send_raw(bad);
        let r = m.recv();
        assert_error(&r, -32700);
        assert_eq!(r["id"], Value::Null, "{r}");
        m.assert_alive();
    }
    // Blank lines are ignored.
    m.send_raw(b"\n   \n");
    assert!(m.silent_for(Duration::from_millis(200)));

    // JSON, but not a valid request: invalid request (with the id when it is usable).
    for (bad, id) in [
        (json!(42), Value::Null),
        (json!("ping"), Value::Null),
        (json!([]), Value::Null),
        (json!({"jsonrpc": "2.0", "id": 10}), json!(10)),
        (
            json!({"jsonrpc": "1.0", "id": 11, "method": "ping"}),
            json!(11),
        ),
        (json!({"id": 12, "method": "ping"}), json!(12)),
        (
            json!({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}),
            Value::Null,
        ),
        (
            json!({"jsonrpc": "2.0", "id": [1], "method": "ping"}),
            Value::Null,
        ),
        (json!({"jsonrpc": "2.0", "id": 13, "method": 7}), json!(13)),
    ] {
        m.send(&bad);
        let r = m.recv();
        assert_error(&r, -32600);
        assert_eq!(r["id"], id, "{bad}: {r}");
        m.assert_alive();
    }

    // Unknown methods.
    for method in ["resources/list", "prompts/get", "tools/run", ""] {
        let r = m.request(method, json!({}));
        assert_error(&r, -32601);
    }
    // Wrong parameter types: invalid params.
    for (method, params) in [
        ("tools/call", json!([1, 2])),
        ("tools/call", json!("patina_query")),
        ("tools/call", json!({"name": 5})),
        ("tools/call", json!({})),
        (
            "tools/call",
            json!({"name": "patina_query", "arguments": "parse_args"}),
        ),
        (
            "tools/call",
            json!({"name": "patina_query", "arguments": [1]}),
        ),
        ("initialize", json!({"protocolVersion": 20250618})),
    ] {
        let r = m.request(method, params.clone());
        assert_error(&r, -32602);
        m.assert_alive();
    }
    // A broken notification is dropped silently.
    m.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized", "params": 3}));
    m.send(&json!({"jsonrpc": "2.0", "method": "notifications/whatever"}));
    assert!(m.silent_for(Duration::from_millis(200)));
    // A response from the client (we never ask anything) is ignored.
    m.send(&json!({"jsonrpc": "2.0", "id": 99, "result": {}}));
    assert!(m.silent_for(Duration::from_millis(200)));

    // A batch: one answer per request, none for notifications, errors in place.
    m.send(&json!([
        {"jsonrpc": "2.0", "id": "a", "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "b", "method": "nope"},
        17
    ]));
    let batch = m.recv();
    let answers = batch
        .as_array()
        .unwrap_or_else(|| panic!("a batch answer: {batch}"));
    assert_eq!(answers.len(), 3, "{batch}");
    assert_eq!(answers[0]["id"], "a");
    assert_eq!(answers[0]["result"], json!({}));
    assert_error(&answers[1], -32601);
    assert_error(&answers[2], -32600);

    // A 10 MB line is refused without being parsed, and the next message is served normally.
    let mut huge = br#"{"jsonrpc":"2.0","id":"huge","method":"tools/call","params":{"name":"patina_query","arguments":{"query":""#.to_vec();
    huge.resize(10 * 1024 * 1024, b'a');
    huge.extend_from_slice(b"\"}}}\n");
    m.send_raw(&huge);
    let r = m.recv();
    assert_error(&r, -32600);
    assert!(
        r["error"]["message"].as_str().unwrap().contains("exceeds"),
        "{r}"
    );
    m.assert_alive();
    let r = m.ok("list_repos", json!({}));
    assert!(r["structuredContent"]["repos"].is_array(), "{r}");

    // End of input: the shim exits cleanly.
    drop(m.stdin.take());
    let status =
        wait_timeout(&mut m.child, Duration::from_secs(60)).expect("the shim exits at EOF");
    assert!(status.success(), "{status}");
}

#[test]
fn tool_failures_are_results_an_agent_can_act_on() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    env.add_repo(repo.path());
    let mut m = Mcp::ready(&env, repo.path(), "2025-06-18");

    // An unknown tool is a protocol error naming the tools there are.
    let r = m.request(
        "tools/call",
        json!({"name": "patina_search", "arguments": {}}),
    );
    assert_error(&r, -32602);
    let msg = r["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("patina_search") && msg.contains("patina_query"),
        "{msg}"
    );

    // Bad arguments: isError results whose message names the argument.
    for (tool, args, mentions) in [
        ("patina_query", json!({}), "query"),
        ("patina_query", json!({"query": ""}), "query"),
        ("patina_query", json!({"query": 5}), "query"),
        (
            "patina_query",
            json!({"query": "x", "limit": "ten"}),
            "limit",
        ),
        ("patina_query", json!({"query": "x", "limit": 0}), "limit"),
        (
            "patina_query",
            json!({"query": "x", "limit": 1000}),
            "limit",
        ),
        (
            "patina_query",
            json!({"query": "x", "level": "galaxy"}),
            "level",
        ),
        (
            "patina_query",
            json!({"query": "x", "preview": 3}),
            "preview",
        ),
        ("patina_query", json!({"query": "x", "limt": 3}), "limt"),
        (
            "patina_query",
            json!({"query": "x", "path": "src/[broken"}),
            "glob",
        ),
        (
            "patina_query",
            json!({"query": "x", "repo": "no-such-repo"}),
            "no-such-repo",
        ),
        ("patina_context", json!({}), "query"),
        (
            "patina_context",
            json!({"query": "x", "format": "yaml"}),
            "format",
        ),
        (
            "patina_context",
            json!({"query": "x", "budget": 5}),
            "budget",
        ),
        ("get_file", json!({}), "path"),
        (
            "get_file",
            json!({"path": "src/args.rs", "start_line": 9, "end_line": 3}),
            "end_line",
        ),
        (
            "get_file",
            json!({"path": "src/args.rs", "start_line": -1}),
            "start_line",
        ),
        (
            "get_file",
            json!({"path": "src/nothing.rs"}),
            "src/nothing.rs",
        ),
        ("get_file", json!({"path": "assets/logo.png"}), "binary"),
        ("get_file", json!({"path": "src"}), "src"),
        (
            "explore_structure",
            json!({"path": "src/args.rs"}),
            "get_file",
        ),
        ("explore_structure", json!({"depth": "deep"}), "depth"),
        ("list_repos", json!({"verbose": true}), "verbose"),
        ("patina_session_note", json!({"text": "x"}), "session"),
        (
            "patina_session_note",
            json!({"session": "nope", "text": "x"}),
            "nope",
        ),
        ("patina_session_note", json!({"session": "nope"}), "text"),
        ("patina_session_start", json!({"name": "bad name!"}), "name"),
        ("patina_session_start", json!({"name": 3}), "name"),
        (
            "patina_session_note",
            json!({"session": "s", "text": "x", "tags": 5}),
            "tags",
        ),
        ("patina_session_end", json!({}), "session"),
    ] {
        let r = m.call(tool, args.clone());
        assert_eq!(r["isError"], true, "{tool} {args}: {r}");
        let t = text(&r);
        assert!(
            t.contains(mentions),
            "{tool} {args}: the message should mention {mentions:?}: {t}"
        );
        assert!(r.get("structuredContent").is_none(), "{r}");
    }
    m.assert_alive();
    // A valid call still works.
    let r = m.ok("patina_query", json!({"query": "parse_args", "limit": 1}));
    assert!(text(&r).contains("src/args.rs:"), "{r}");
}

/// A repository with secrets, ignored files and symlinks leading out, next to a directory outside
/// every repository that holds a "secret".
fn escape_fixture() -> (Repo, tempfile::TempDir) {
    let outside = tempfile::Builder::new()
        .prefix("po")
        .tempdir_in("/tmp")
        .expect("a dir outside");
    std::fs::write(outside.path().join("loot.txt"), "OUTSIDE-SECRET\n").unwrap();
    let repo = git_repo(&[
        ("src/lib.rs", b"pub fn ok() {}\n"),
        ("README.md", b"# Escape fixture\n"),
        (".gitignore", b"build/\n*.log\nprivate/\n"),
        (".patinaignore", b"vendor/\n"),
        ("config/settings.toml", b"[app]\nname = \"x\"\n"),
    ]);
    let root = repo.path();
    let write = |rel: &str, text: &str| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write(".env", "API_TOKEN=REPO-SECRET\n");
    write("config/.env.production", "DB_PASSWORD=REPO-SECRET\n");
    write(
        "certs/server.pem",
        "-----BEGIN PRIVATE KEY----- REPO-SECRET\n",
    );
    write("deploy/id_rsa", "REPO-SECRET\n");
    write("deploy/signing.key", "REPO-SECRET\n");
    write("build/output.txt", "REPO-SECRET build output\n");
    write("debug.log", "REPO-SECRET log\n");
    write("private/notes.txt", "REPO-SECRET\n");
    write("vendor/lib.rs", "REPO-SECRET\n");
    let link =
        |target: &Path, name: &str| std::os::unix::fs::symlink(target, root.join(name)).unwrap();
    link(Path::new("/etc"), "etc_link");
    link(outside.path(), "outside_dir");
    link(&outside.path().join("loot.txt"), "loot_link.txt");
    link(Path::new(".env"), "innocent.txt");
    link(Path::new("build/output.txt"), "src/built.rs");
    link(Path::new("/"), "src/root");
    (repo, outside)
}

#[test]
fn path_escapes_are_refused_by_get_file_and_explore_structure() {
    let env = TestEnv::started();
    let (repo, outside) = escape_fixture();
    env.add_repo(repo.path());
    let mut m = Mcp::ready(&env, repo.path(), "2025-06-18");
    let key = repo.key();
    let outside_path = outside.path().to_string_lossy().into_owned();
    let root_str = key.clone();

    let file_attempts: Vec<String> = [
        "../../../../etc/passwd",
        "/etc/passwd",
        "src/../../../etc/passwd",
        "..",
        "../",
        "./../",
        "src/../..",
        "src/lib.rs/../../../etc/passwd",
        "//etc/passwd",
        "etc_link/passwd",
        "etc_link/hostname",
        "outside_dir/loot.txt",
        "loot_link.txt",
        "src/root/etc/passwd",
        ".git/config",
        "./.git/HEAD",
        "src/../.git/config",
        ".env",
        "./.env",
        "config/.env.production",
        "certs/server.pem",
        "deploy/id_rsa",
        "deploy/signing.key",
        "innocent.txt",
        "build/output.txt",
        "debug.log",
        "private/notes.txt",
        "vendor/lib.rs",
        "src/built.rs",
        "~/.ssh/id_rsa",
        "src/%2e%2e/%2e%2e/etc/passwd",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        format!("{outside_path}/loot.txt"),
        format!("{root_str}/.env"),
        format!("{root_str}/src/lib.rs"),
    ])
    .collect();
    assert!(file_attempts.len() >= 20);
    for path in &file_attempts {
        let r = m.call("get_file", json!({"repo": key, "path": path}));
        let t = text(&r);
        assert_eq!(r["isError"], true, "get_file {path:?} must be refused: {t}");
        for leak in ["root:", "REPO-SECRET", "OUTSIDE-SECRET", "localhost"] {
            assert!(!t.contains(leak), "get_file {path:?} leaked {leak:?}: {t}");
        }
    }

    let dir_attempts: Vec<String> = [
        "..",
        "../",
        "../..",
        "/",
        "/etc",
        "/tmp",
        "src/../..",
        "src/../../..",
        "./..",
        "etc_link",
        "etc_link/",
        "outside_dir",
        "src/root",
        "src/root/etc",
        ".git",
        ".git/refs",
        "./.git",
        "build",
        "private",
        "vendor",
        "config/.env.production",
        "certs/server.pem",
        "~",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([outside_path.clone(), root_str.clone()])
    .collect();
    assert!(dir_attempts.len() >= 20);
    for path in &dir_attempts {
        let r = m.call("explore_structure", json!({"repo": key, "path": path}));
        let t = text(&r);
        assert_eq!(
            r["isError"], true,
            "explore_structure {path:?} must be refused: {t}"
        );
        assert!(
            !t.contains("loot.txt") && !t.contains("passwd"),
            "{path:?}: {t}"
        );
    }

    // What is inside and allowed is served; secrets and ignored files never appear in a listing.
    let r = m.ok("get_file", json!({"repo": key, "path": "src/lib.rs"}));
    assert_eq!(r["structuredContent"]["code"], "pub fn ok() {}", "{r}");
    let r = m.ok("get_file", json!({"path": "config/settings.toml"}));
    assert_eq!(r["structuredContent"]["language"], "text", "{r}");
    let r = m.ok("explore_structure", json!({"depth": 5}));
    let listing = r["structuredContent"].to_string();
    for hidden in [
        ".env",
        "server.pem",
        "id_rsa",
        "signing.key",
        "build/",
        "debug.log",
        "private",
        "vendor",
    ] {
        assert!(
            !listing.contains(hidden),
            "the listing shows {hidden}: {listing}"
        );
    }
    assert!(
        listing.contains("src/lib.rs") && listing.contains("config/settings.toml"),
        "{listing}"
    );
    // Queries never surface secret files either.
    let r = m.ok(
        "patina_query",
        json!({"query": "API_TOKEN REPO-SECRET", "limit": 20, "preview": true}),
    );
    let results = r["structuredContent"]["results"].to_string();
    assert!(!results.contains("REPO-SECRET"), "{r}");
    m.assert_alive();
}

#[test]
fn the_shim_starts_a_daemon_when_none_runs() {
    let env = TestEnv::new();
    let repo = fixture_repo();
    let mut m = Mcp::ready(&env, repo.path(), "2025-06-18");
    // No daemon was running: the first tool call is served by the one the shim started.
    let r = m.ok("list_repos", json!({}));
    assert_eq!(r["structuredContent"]["repos"], json!([]), "{r}");
    assert!(text(&r).contains("patina add"), "{r}");
    let r = m.call("get_file", json!({"path": "src/args.rs"}));
    assert_eq!(r["isError"], true, "{r}");
    assert!(text(&r).contains("patina add"), "{r}");
    env.assert_healthy();
}

/// The refs of a patina_query result.
fn refs(result: &Value) -> Vec<String> {
    result["structuredContent"]["results"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|h| h["ref"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn session_notes_follow_their_repository_and_stay_out_of_file_scoped_queries() {
    let env = TestEnv::started();
    let a = git_repo(&[("lib.rs", b"pub fn alpha() {}\n")]);
    let b = git_repo(&[("lib.rs", b"pub fn beta() {}\n")]);
    env.add_repo(a.path());
    env.add_repo(b.path());
    let mut m = Mcp::ready(&env, env.home(), "2025-06-18");
    m.ok(
        "patina_session_start",
        json!({"name": "tied", "repo": a.key()}),
    );
    m.ok(
        "patina_session_note",
        json!({"text": "The zanzibar cache is rebuilt nightly."}),
    );
    m.ok("patina_session_start", json!({"name": "free"}));
    m.ok(
        "patina_session_note",
        json!({"text": "Zanzibar was renamed from kilimanjaro."}),
    );

    let q = |m: &mut Mcp, args: Value| refs(&m.ok("patina_query", args));
    let everywhere = q(&mut m, json!({"query": "zanzibar", "repo": "*"}));
    assert!(
        everywhere.contains(&"session:tied#1".into())
            && everywhere.contains(&"session:free#1".into()),
        "{everywhere:?}"
    );
    let in_a = q(&mut m, json!({"query": "zanzibar", "repo": a.key()}));
    assert!(
        in_a.contains(&"session:tied#1".into()) && in_a.contains(&"session:free#1".into()),
        "{in_a:?}"
    );
    let in_b = q(&mut m, json!({"query": "zanzibar", "repo": b.key()}));
    assert_eq!(
        in_b,
        ["session:free#1"],
        "a note tied to another repository stays out"
    );
    // Notes are not files: path globs and module/repo levels leave them out.
    assert!(
        q(
            &mut m,
            json!({"query": "zanzibar", "repo": "*", "path": "*.rs"})
        )
        .is_empty()
    );
    assert!(
        q(
            &mut m,
            json!({"query": "zanzibar", "repo": "*", "level": "module"})
        )
        .is_empty()
    );
    // Stop words alone match nothing.
    assert!(q(&mut m, json!({"query": "the was from", "repo": "*"})).is_empty());
}

#[test]
fn session_notes_are_found_by_meaning_when_the_model_is_on() {
    let mut env = TestEnv::with_model();
    env.start_daemon();
    let repo = fixture_repo();
    env.add_repo(repo.path());
    let mut m = Mcp::ready(&env, repo.path(), "2025-06-18");
    m.ok("patina_session_start", json!({"name": "ops"}));
    for note in [
        "We chose sled as the metadata storage engine because it is embedded and crash-safe.",
        "The CI runners have only two cores, so builds must stay incremental.",
        "Flaky test in the watcher: inotify events arrive late on overlayfs.",
    ] {
        m.ok("patina_session_note", json!({"text": note}));
    }
    let notes = |m: &mut Mcp, query: &str| -> Vec<String> {
        refs(&m.ok("patina_query", json!({"query": query, "level": "doc"})))
            .into_iter()
            .filter(|r| r.starts_with("session:"))
            .collect()
    };
    // No word in common with the note it finds.
    assert_eq!(
        notes(&mut m, "how many CPUs does continuous integration have"),
        ["session:ops#2"]
    );
    assert_eq!(
        notes(&mut m, "which database keeps the metadata"),
        ["session:ops#1"]
    );
    assert!(
        notes(&mut m, "parse command line flags").is_empty(),
        "unrelated queries find no note"
    );
}

/// The daemon's pid from its lock file.
fn daemon_pid_of(env: &TestEnv) -> i32 {
    std::fs::read_to_string(env.home().join("patinad.lock"))
        .expect("patinad.lock")
        .trim()
        .parse()
        .expect("a pid in patinad.lock")
}

/// The notes of a session, straight from the daemon.
fn notes_of(env: &TestEnv, session: &str) -> Vec<patina_proto::v1::Note> {
    env.call("Sessions.List", async {
        patina_proto::v1::sessions_client::SessionsClient::new(env.channel().await)
            .list(patina_proto::v1::ListSessionsRequest {
                session: session.into(),
            })
            .await
            .expect("Sessions.List")
            .into_inner()
            .notes
    })
}

/// Issue 8, defect 4: the daemon dies after storing a note but before answering. The agent's call
/// still succeeds (the shim reconnects to a new daemon and retries), and the retry does not store
/// the note a second time (the call's idempotency key finds the first copy).
#[test]
fn a_note_interrupted_by_a_crash_is_stored_once_and_the_call_succeeds() {
    let mut env = TestEnv::new();
    env.crash_next_daemon_at("note-stored");
    env.start_daemon();
    let cwd = env.home().to_path_buf();
    let mut m = Mcp::ready(&env, &cwd, "2025-06-18");
    m.ok("patina_session_start", json!({"name": "crashy"}));
    let r = m.ok(
        "patina_session_note",
        json!({"session": "crashy", "text": "the parser keeps its state in a thread local"}),
    );
    assert!(text(&r).contains("session:crashy#1"), "{r}");
    let status = env.wait_daemon_exit(Duration::from_secs(30));
    assert!(!status.success(), "the first daemon crashed: {status}");
    let notes = notes_of(&env, "crashy");
    assert_eq!(notes.len(), 1, "stored exactly once: {notes:?}");
    // The next note is the second one.
    let r = m.ok(
        "patina_session_note",
        json!({"session": "crashy", "text": "the lexer is stateless"}),
    );
    assert!(text(&r).contains("session:crashy#2"), "{r}");
    assert_eq!(notes_of(&env, "crashy").len(), 2);
}

/// Issue 8, defect 4: right after a `kill -9` (not waiting for the process to be gone: its socket
/// may still accept for a moment) the agent's next call succeeds, every time.
#[test]
fn the_first_call_after_a_kill_succeeds() {
    let mut env = TestEnv::started();
    let cwd = env.home().to_path_buf();
    let mut m = Mcp::ready(&env, &cwd, "2025-06-18");
    m.ok("list_repos", json!({}));
    env.kill_daemon();
    m.ok("list_repos", json!({}));
    for round in 0..8 {
        let pid = daemon_pid_of(&env);
        // SAFETY: SIGKILL to this environment's daemon (started by the shim).
        assert_eq!(
            unsafe { libc::kill(pid, libc::SIGKILL) },
            0,
            "round {round}"
        );
        let r = m.call("list_repos", json!({}));
        assert_eq!(r["isError"], false, "round {round}: {r}");
    }
}

#[test]
fn history_tools_answer_from_the_commit_history() {
    let env = TestEnv::started();
    let repo = git_repo(&[
        ("src/lexer.rs", b"pub fn lex() {}\n"),
        ("src/parser.rs", b"pub fn parse() {}\n"),
    ]);
    let root = repo.path();
    for (i, msg) in ["Spans for tokens", "Zebra striping of tokens"]
        .iter()
        .enumerate()
    {
        std::fs::write(
            root.join("src/lexer.rs"),
            format!("pub fn lex() {{ {i} }}\n"),
        )
        .unwrap();
        std::fs::write(
            root.join("src/parser.rs"),
            format!("pub fn parse() {{ {i} }}\n"),
        )
        .unwrap();
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "-m", msg]);
    }
    env.add_repo(root);
    let mut m = Mcp::ready(&env, root, "2025-06-18");
    let r = m.ok("patina_history", json!({"query": "zebra striping"}));
    let commits = r["structuredContent"]["commits"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(commits.len(), 1, "{r}");
    assert_eq!(commits[0]["subject"], "Zebra striping of tokens");
    assert_eq!(
        commits[0]["files"],
        json!(["src/lexer.rs", "src/parser.rs"])
    );
    assert!(text(&r).contains("Zebra striping"), "{r}");
    let r = m.ok(
        "patina_history",
        json!({"file": "src/parser.rs", "limit": 5}),
    );
    assert_eq!(
        r["structuredContent"]["commits"].as_array().unwrap().len(),
        3,
        "{r}"
    );
    let r = m.ok("related_files", json!({"path": "src/lexer.rs"}));
    assert_eq!(
        r["structuredContent"]["files"][0]["path"], "src/parser.rs",
        "{r}"
    );
    assert_eq!(r["structuredContent"]["files"][0]["support"], 3, "{r}");
    let r = m.call("patina_history", json!({}));
    assert_eq!(r["isError"], true, "{r}");
    let r = m.call("related_files", json!({}));
    assert_eq!(r["isError"], true, "{r}");
}

/// The graph tools: references with their lines, callees with their definitions, definitions.
#[test]
fn graph_tools_answer_references_callees_and_definitions() {
    let env = TestEnv::started();
    let repo = git_repo(&[
        (
            "app/validate.py",
            b"def check_email(value):\n    return '@' in value\n",
        ),
        (
            "app/signup.py",
            b"from app.validate import check_email\n\n\ndef register(form):\n    if not check_email(form['email']):\n        raise ValueError('bad email')\n    return form\n",
        ),
    ]);
    env.add_repo(repo.path());
    let mut m = Mcp::ready(&env, repo.path(), "2025-06-18");
    let r = m.ok("find_references", json!({"symbol": "check_email"}));
    assert!(
        text(&r).contains("app/signup.py\n  5  in register [import]"),
        "{r}"
    );
    assert_eq!(r["structuredContent"]["sites"][0]["line"], 5, "{r}");
    let r = m.ok(
        "call_graph",
        json!({"symbol": "register", "direction": "callees"}),
    );
    assert!(
        text(&r).contains("check_email → app/validate.py:1-2"),
        "{r}"
    );
    let r = m.ok("call_graph", json!({"symbol": "check_email"}));
    assert!(text(&r).contains("in register"), "{r}");
    let r = m.ok("definition", json!({"name": "check_email"}));
    assert!(text(&r).contains("1-2  function check_email"), "{r}");
    let r = m.call("call_graph", json!({"symbol": "x", "direction": "up"}));
    assert_eq!(r["isError"], true, "{r}");

    // The repository map: the called file first, within the budget.
    let r = m.ok("repo_map", json!({"budget": 200}));
    let map = &r["structuredContent"];
    assert_eq!(map["files"][0]["path"], "app/validate.py", "{r}");
    assert!(map["used_tokens"].as_u64().unwrap() <= 200, "{r}");
    assert!(text(&r).contains("def check_email(value):"), "{r}");
    // patina_context expands by default: register comes with what it calls.
    let r = m.ok(
        "patina_context",
        json!({"query": "register", "format": "markdown"}),
    );
    assert!(
        text(&r).contains("### ↳ callee `check_email` — app/validate.py:1-1"),
        "{r}"
    );
    assert_eq!(
        r["structuredContent"]["items"][0]["related"][0]["kind"], "import",
        "{r}"
    );
}

/// Issue 11, item 7: every answer carries a query id; `patina_feedback` records what helped,
/// reading a result with `get_file` soon after counts as using it, the records survive a daemon
/// restart and `patina feedback stats` counts them.
#[test]
fn feedback_on_answers_is_recorded_durably_and_counted() {
    let mut env = TestEnv::new();
    env.start_daemon();
    let repo = git_repo(&[
        (
            "src/retry.rs",
            b"pub fn retry_with_backoff(n: u32) -> u32 {\n    n * 2\n}\n",
        ),
        ("src/other.rs", b"pub fn unrelated() {}\n"),
    ]);
    let root = repo.path();
    env.add_repo(root);
    let stats = |env: &TestEnv| -> Value {
        let out = env.patina(&["feedback", "stats", "--json"]);
        assert!(out.status.success(), "{out:?}");
        serde_json::from_str(&out.stdout).unwrap()
    };
    {
        let mut m = Mcp::ready(&env, root, "2025-06-18");
        let r = m.ok("patina_query", json!({"query": "retry_with_backoff"}));
        let query_id = r["structuredContent"]["query_id"]
            .as_str()
            .expect("a query id")
            .to_string();
        assert!(!query_id.is_empty());
        assert_eq!(
            r["structuredContent"]["results"][0]["path"], "src/retry.rs",
            "{r}"
        );
        // Implicit: the agent reads the hit (twice: it counts once).
        m.ok("get_file", json!({"path": "src/retry.rs"}));
        m.ok("get_file", json!({"path": "src/retry.rs"}));
        // A file no answer listed is no feedback.
        m.ok("get_file", json!({"path": "src/other.rs"}));
        // Explicit.
        let r = m.ok(
            "patina_feedback",
            json!({"query_id": query_id, "used": ["src/retry.rs:1-3"], "unhelpful": ["src/other.rs"], "rating": 4}),
        );
        assert_eq!(r["structuredContent"]["known_query"], true, "{r}");
        // Saying nothing, or a rating out of range, is an error the agent can act on.
        let r = m.call("patina_feedback", json!({"query_id": query_id}));
        assert_eq!(r["isError"], true, "{r}");
        assert!(text(&r).contains("rating"), "{r}");
        let r = m.call(
            "patina_feedback",
            json!({"query_id": query_id, "rating": 9}),
        );
        assert_eq!(r["isError"], true, "{r}");
    }
    let expect = |v: &Value| {
        assert_eq!(v["records"], 2, "{v}");
        assert_eq!(v["explicit"], 1, "{v}");
        assert_eq!(v["implicit"], 1, "{v}");
        assert_eq!(v["queries"], 1, "{v}");
        assert_eq!(v["used"], 2, "{v}");
        assert_eq!(v["unhelpful"], 1, "{v}");
        assert_eq!(v["ratings"], json!([0, 0, 0, 1, 0]), "{v}");
        assert_eq!(
            v["most_used"][0],
            json!({"path": "src/retry.rs", "count": 2}),
            "{v}"
        );
    };
    expect(&stats(&env));
    // Durable: a new daemon reads the same records.
    env.stop_daemon();
    env.start_daemon();
    expect(&stats(&env));
    let out = env.patina(&["feedback", "stats"]);
    assert!(
        out.stdout
            .contains("2 feedback records (1 explicit, 1 implicit) on 1 answers"),
        "{out:?}"
    );
}

#[test]
fn answers_say_each_thing_once_and_name_tools_not_shell_commands() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    env.add_repo(repo.path());
    let mut m = Mcp::ready(&env, repo.path(), "2025-06-18");

    let r = m.ok(
        "patina_query",
        json!({"query": "parse_args HttpClient", "limit": 5}),
    );
    let s = &r["structuredContent"];
    let results = s["results"].as_array().expect("results[]");
    assert!(results.len() >= 2, "{s}");
    for h in results {
        assert!(
            h.get("repo_id").is_none() && h.get("repo_root").is_none(),
            "a result names its repository, no more: {h}"
        );
        assert!(h["repo"].is_string(), "{h}");
    }
    let repos = s["repos"].as_array().expect("repos[]");
    assert_eq!(repos.len(), 1, "each repository once: {s}");
    assert_eq!(repos[0]["root"].as_str(), repo.path().to_str(), "{s}");

    // Notices reach the text the model reads (this daemon has no model: semantic search is off).
    let t = text(&m.ok("patina_query", json!({"query": "how are flags parsed"})));
    assert!(t.contains("-- notice: semantic search is off"), "{t}");

    // An error names the tool that helps, not a shell command.
    let r = m.call(
        "get_file",
        json!({"path": "src/args.rs", "repo": "no-such-repo"}),
    );
    assert_eq!(r["isError"], true, "{r}");
    let t = text(&r);
    assert!(
        t.contains("list_repos") && !t.contains("patina repos"),
        "{t}"
    );
}

/// An oracle that times out is named in `patina_query`'s notices and structured `oracles`;
/// with `complete` the call is an error naming it instead (test hook `PATINA_TEST_SLOW_ORACLE`).
#[test]
fn a_timed_out_oracle_is_named_and_complete_makes_it_an_error() {
    let mut env = TestEnv::new();
    env.append_config("\n[retrieval]\noracle_timeout_ms = 300\n");
    env.next_daemon_env("PATINA_TEST_SLOW_ORACLE", "lexical=3000");
    env.start_daemon();
    let repo = git_repo(&[("src/lib.rs", b"pub fn parse_config() {}\n")]);
    env.add_repo(repo.path());
    let mut m = Mcp::ready(&env, repo.path(), "2025-06-18");

    let r = m.ok("patina_query", json!({"query": "parse_config"}));
    let s = &r["structuredContent"];
    let notices = s["notices"].to_string();
    assert!(notices.contains("lexical oracle timed out"), "{s}");
    assert!(
        text(&r).contains("-- notice: the lexical oracle timed out"),
        "{r}"
    );
    let lexical = s["oracles"]
        .as_array()
        .and_then(|o| o.iter().find(|o| o["oracle"] == "lexical"))
        .cloned();
    assert_eq!(
        lexical.map(|o| o["status"].clone()),
        Some(json!("timeout")),
        "{s}"
    );

    let r = m.call(
        "patina_query",
        json!({"query": "parse_config", "complete": true}),
    );
    assert_eq!(r["isError"], true, "{r}");
    assert!(text(&r).contains("lexical oracle timed out"), "{r}");
    let r = m.call(
        "patina_context",
        json!({"query": "parse_config", "complete": true}),
    );
    assert_eq!(r["isError"], true, "{r}");
}

/// `patina_query` results carry their file's licence in the structured output, and `licence` /
/// `no_copyleft` keep only what is asked for.
#[test]
fn query_results_carry_their_licence_and_licence_filters_apply() {
    let env = TestEnv::started();
    let repo = git_repo(&[
        (
            "package.json",
            b"{\"name\": \"app\", \"license\": \"MIT\"}\n",
        ),
        ("src/gadget.js", b"function gadgetMit() { return 1; }\n"),
        (
            "src/copyleft.js",
            b"// SPDX-License-Identifier: AGPL-3.0-only\nfunction gadgetAgpl() { return 2; }\n",
        ),
    ]);
    env.add_repo(repo.path());
    let mut m = Mcp::ready(&env, repo.path(), "2025-06-18");
    let results = |m: &mut Mcp, args: Value| -> Vec<(String, String)> {
        let r = m.ok("patina_query", args);
        r["structuredContent"]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| {
                (
                    h["path"].as_str().unwrap_or("").to_string(),
                    h["licence"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    };
    let all = results(&mut m, json!({"query": "gadget"}));
    assert!(
        all.contains(&("src/gadget.js".into(), "MIT".into())),
        "{all:?}"
    );
    assert!(
        all.contains(&("src/copyleft.js".into(), "AGPL-3.0-only".into())),
        "{all:?}"
    );
    let permissive = results(&mut m, json!({"query": "gadget", "no_copyleft": true}));
    assert!(
        permissive.iter().all(|(p, _)| p != "src/copyleft.js"),
        "{permissive:?}"
    );
    let agpl = results(
        &mut m,
        json!({"query": "gadget", "licence": "AGPL-3.0-only"}),
    );
    assert!(
        agpl.iter().all(|(p, _)| p == "src/copyleft.js") && !agpl.is_empty(),
        "{agpl:?}"
    );
}

/// The hostile-input pass's finding 4, through MCP: a file of one line longer than a tool output
/// holds answers with the line's first bytes and says it is the last line — never an empty answer
/// pointing at a line that does not exist.
#[test]
fn get_file_of_a_one_line_file_larger_than_the_output_shows_its_start() {
    let env = TestEnv::started();
    let repo = git_repo(&[("src/lib.rs", b"pub fn ok() {}\n")]);
    env.add_repo(repo.path());
    let line = "y".repeat(1024 * 1024);
    std::fs::write(repo.path().join("bundle.min.js"), &line).unwrap();
    let mut m = Mcp::ready(&env, repo.path(), "2025-06-18");
    let r = m.ok("get_file", json!({"path": "bundle.min.js"}));
    let s = &r["structuredContent"];
    let code = s["code"].as_str().expect("code");
    assert!(!code.is_empty() && line.starts_with(code), "{s}");
    assert_eq!(
        (s["total_lines"].clone(), s["end_line"].clone()),
        (json!(1), json!(1)),
        "{s}"
    );
    assert_eq!(
        (s["line_cut"].clone(), s["next_line"].clone()),
        (json!(true), json!(0)),
        "{s}"
    );
    let t = text(&r);
    assert!(
        !t.contains("start_line=2"),
        "no line 2 to continue at: {}",
        &t[t.len() - 300..]
    );
    assert!(t.contains("last line"), "{}", &t[t.len() - 300..]);
}

/// What an agent can do about an error or a notice comes as a code beside the daemon's words and
/// is said in an agent's terms — its own tool, or asking the user — never the shell's commands.
#[test]
fn remedies_name_the_agents_tools_not_the_shells_commands() {
    let env = TestEnv::started();
    let home = tempfile::tempdir().unwrap();
    let mut m = Mcp::ready(&env, home.path(), "2025-06-18");
    // Nothing registered: the notice, then what to do.
    let r = m.ok(
        "patina_query",
        json!({"query": "parse the arguments", "repo": "all"}),
    );
    let t = text(&r);
    assert!(
        t.contains("-- notice: no repositories are registered"),
        "{t}"
    );
    assert!(t.contains("-- to do: ask the user to register one"), "{t}");
    assert!(!t.contains("add one with"), "{t}");
    assert_eq!(
        r["structuredContent"]["remedies"],
        json!(["add-repo"]),
        "{r}"
    );
    // A repository no one registered: its tool, not `patina repos`.
    let r = m.call(
        "patina_query",
        json!({"query": "x", "repo": "no-such-repo"}),
    );
    let t = text(&r);
    assert_eq!(r["isError"], true, "{r}");
    assert!(
        t.contains("no-such-repo") && t.contains("(list_repos lists them)"),
        "{t}"
    );
    assert!(!t.contains("patina repos"), "{t}");
}
