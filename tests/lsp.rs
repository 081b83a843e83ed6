//! `patina-lsp`, the language server for editors: the protocol through a real LSP client library
//! (pygls/lsprotocol, tests/lsp_protocol.py), the JSON-RPC error answers on the wire, and a real
//! editor (headless Neovim with the plugin in editors/nvim) — always the real binary over its
//! stdin/stdout, talking to the real daemon.

use std::io::{BufRead, BufReader, Read, Write};

use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::util::*;
use serde_json::{Value, json};

#[test]
fn lsp_protocol_with_a_real_client_library() {
    let env = TestEnv::started();
    // Not registered: the server registers the workspace folder and reports its indexing.
    let repo = fixture_repo();
    let python = std::env::var_os("PATINA_PYTHON").unwrap_or_else(|| "python3".into());
    let mut cmd = env.isolated_command(&python);
    cmd.arg(workspace().join("tests/lsp_protocol.py"))
        .arg("--lsp")
        .arg(bin("patina-lsp"))
        .arg("--repo")
        .arg(repo.path())
        .env("PYTHONPATH", pythonpath())
        .env("PYTHONDONTWRITEBYTECODE", "1");
    let out = run(cmd, Duration::from_secs(300));
    println!("{}", out.stdout);
    assert!(
        out.status.success(),
        "the LSP protocol test failed (if pygls is missing: `python3 -m pip install --target \
         target/pydeps 'pygls==2.1.1' 'lsprotocol==2025.0.0'`, as .ci/run does)\n{out:?}\n{}",
        env.logs()
    );
    assert!(out.stdout.contains("checks passed"), "{out:?}");
}

/// A `patina-lsp` over pipes, framed by hand: what arrives on the wire, byte for byte (also the
/// client of tests/editors.rs's Helix exchange).
pub(crate) struct Lsp {
    child: Child,
    stdin: ChildStdin,
    messages: mpsc::Receiver<Value>,
}

impl Lsp {
    pub(crate) fn spawn(env: &TestEnv) -> Lsp {
        let mut child = env
            .lsp_command()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawning patina-lsp");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, messages) = mpsc::channel();
        std::thread::spawn(move || read_frames(stdout, tx));
        Lsp {
            stdin: child.stdin.take().expect("stdin"),
            child,
            messages,
        }
    }

    fn raw(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).expect("writing to patina-lsp");
        self.stdin.flush().expect("flushing");
    }

    pub(crate) fn send(&mut self, msg: Value) {
        let body = msg.to_string();
        self.raw(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
    }

    /// The next message that is not a notification or a request of the server.
    pub(crate) fn answer(&mut self) -> Value {
        loop {
            let m = self
                .messages
                .recv_timeout(Duration::from_secs(60))
                .expect("an answer from patina-lsp");
            if m.get("method").is_none() {
                return m;
            }
        }
    }
}

fn read_frames(stdout: ChildStdout, tx: mpsc::Sender<Value>) {
    let mut r = BufReader::new(stdout);
    loop {
        let mut len = None;
        loop {
            let mut line = String::new();
            if r.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(v) = line.strip_prefix("Content-Length: ") {
                len = v.parse::<usize>().ok();
            }
        }
        let mut body = vec![0; len.expect("every frame has a Content-Length")];
        r.read_exact(&mut body).expect("a whole body");
        let v: Value = serde_json::from_slice(&body).expect("bodies are JSON");
        if tx.send(v).is_err() {
            return;
        }
    }
}

#[test]
fn bad_input_gets_json_rpc_errors_and_the_server_keeps_serving() {
    let env = TestEnv::started();
    let mut lsp = Lsp::spawn(&env);
    // Before initialize: ServerNotInitialized.
    lsp.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "workspace/symbol", "params": {"query": "x"}}),
    );
    let a = lsp.answer();
    assert_eq!(
        (a["id"].clone(), a["error"]["code"].clone()),
        (json!(1), json!(-32002)),
        "{a}"
    );
    lsp.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"capabilities": {}}}),
    );
    let a = lsp.answer();
    assert_eq!(a["id"], 2, "{a}");
    assert_eq!(a["result"]["serverInfo"]["name"], "patina-lsp", "{a}");
    lsp.send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {"capabilities": {}}}),
    );
    let a = lsp.answer();
    assert_eq!(
        (a["id"].clone(), a["error"]["code"].clone()),
        (json!(3), json!(-32600)),
        "once: {a}"
    );
    // A body that is not JSON, a header without a length, a length that is not a number.
    lsp.raw(b"Content-Length: 9\r\n\r\n{\"id\": 3,");
    let a = lsp.answer();
    assert_eq!(
        (a["id"].clone(), a["error"]["code"].clone()),
        (Value::Null, json!(-32700)),
        "{a}"
    );
    lsp.raw(b"Content-Type: text/plain\r\n\r\n");
    assert_eq!(lsp.answer()["error"]["code"], -32700);
    lsp.raw(b"Content-Length: lots\r\n\r\n");
    assert_eq!(lsp.answer()["error"]["code"], -32700);
    // An unknown method; a request whose params are wrong.
    lsp.send(json!({"jsonrpc": "2.0", "id": 4, "method": "textDocument/semanticTokens/full", "params": {}}));
    let a = lsp.answer();
    assert_eq!(
        (a["id"].clone(), a["error"]["code"].clone()),
        (json!(4), json!(-32601)),
        "{a}"
    );
    lsp.send(
        json!({"jsonrpc": "2.0", "id": 5, "method": "workspace/symbol", "params": {"query": 7}}),
    );
    let a = lsp.answer();
    assert_eq!(
        (a["id"].clone(), a["error"]["code"].clone()),
        (json!(5), json!(-32602)),
        "{a}"
    );
    // Still serving: an empty query answers an empty list at once.
    lsp.send(
        json!({"jsonrpc": "2.0", "id": 6, "method": "workspace/symbol", "params": {"query": ""}}),
    );
    assert_eq!(
        lsp.answer(),
        json!({"jsonrpc": "2.0", "id": 6, "result": []})
    );
    // After shutdown only exit; exit after shutdown is a clean exit.
    lsp.send(json!({"jsonrpc": "2.0", "id": 7, "method": "shutdown"}));
    assert_eq!(
        lsp.answer(),
        json!({"jsonrpc": "2.0", "id": 7, "result": null})
    );
    lsp.send(
        json!({"jsonrpc": "2.0", "id": 8, "method": "workspace/symbol", "params": {"query": "x"}}),
    );
    assert_eq!(lsp.answer()["error"]["code"], -32600);
    lsp.send(json!({"jsonrpc": "2.0", "method": "exit"}));
    let status = wait_timeout(&mut lsp.child, Duration::from_secs(30)).expect("patina-lsp exits");
    assert_eq!(status.code(), Some(0));
}

#[test]
fn exit_without_shutdown_is_an_error_exit() {
    let env = TestEnv::started();
    let mut lsp = Lsp::spawn(&env);
    lsp.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}),
    );
    assert_eq!(lsp.answer()["id"], 1);
    lsp.send(json!({"jsonrpc": "2.0", "method": "exit"}));
    let status = wait_timeout(&mut lsp.child, Duration::from_secs(30)).expect("patina-lsp exits");
    assert_eq!(status.code(), Some(1));
}

/// The defining file of [`nvim_patina_search_fills_the_quickfix_list_with_the_definition_first`]:
/// `parse_config_file` is defined on line 6, below its doc comment.
const CONFIG_RS: &str = r#"//! Reading the configuration.

use std::path::Path;

/// Parse the configuration file at `path` into [`Config`].
pub fn parse_config_file(path: &Path) -> Config {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    Config { lines: text.lines().count() }
}

pub struct Config {
    pub lines: usize,
}
"#;

const CONFIG_MAIN_RS: &str = r#"mod config;

fn main() {
    // parse_config_file reads config.toml; parse_config_file never fails.
    let cfg = config::parse_config_file(std::path::Path::new("config.toml"));
    let again = config::parse_config_file(std::path::Path::new("other.toml"));
    println!("{} {}", cfg.lines, again.lines);
}
"#;

const CONFIG_README: &str = "# Config\n\nCall `parse_config_file` to read the configuration; \
`parse_config_file` accepts any path.\n";

/// A real editor: headless Neovim (Debian's, 0.7+; .ci/run installs it) loads the plugin in
/// editors/nvim, which starts patina-lsp; `:Patina parse_config_file` fills the quickfix list and
/// its first entry is the definition: the defining file, on the line that names the function.
#[test]
fn nvim_patina_search_fills_the_quickfix_list_with_the_definition_first() {
    let env = TestEnv::started();
    let repo = git_repo(&[
        ("src/config.rs", CONFIG_RS.as_bytes()),
        ("src/main.rs", CONFIG_MAIN_RS.as_bytes()),
        ("README.md", CONFIG_README.as_bytes()),
    ]);
    env.add_repo(repo.path());
    let out_file = env.home().join("quickfix.txt");
    let mut cmd = env.isolated_command("nvim");
    cmd.current_dir(repo.path())
        .args(["--headless", "-u", "NONE", "-i", "NONE", "-n"])
        .arg("--cmd")
        .arg(format!(
            "set rtp^={}",
            workspace().join("editors/nvim").display()
        ))
        .arg("-c")
        .arg(format!(
            "lua require('patina').setup({{cmd = {{'{}'}}}})",
            bin("patina-lsp").display()
        ))
        .args(["-c", "edit src/main.rs", "-c", "Patina parse_config_file"])
        .arg("-c")
        .arg(format!(
            "lua local q = vim.fn.getqflist(); local f = q[1] or {{}}; \
             vim.fn.writefile({{#q, f.bufnr and vim.api.nvim_buf_get_name(f.bufnr) or '', \
             tostring(f.lnum), f.text or ''}}, '{}')",
            out_file.display()
        ))
        .args(["-c", "qa!"]);
    let out = run(cmd, Duration::from_secs(120));
    assert!(
        out.status.success(),
        "nvim failed (is Debian's neovim installed? .ci/run installs it)\n{out:?}"
    );
    let written = std::fs::read_to_string(&out_file)
        .unwrap_or_else(|e| panic!("nvim wrote no quickfix report ({e})\n{out:?}"));
    let lines: Vec<&str> = written.lines().collect();
    assert!(lines.len() >= 3, "{written:?}\n{out:?}");
    let entries: usize = lines[0].parse().expect("an entry count");
    assert!(entries >= 2, "the definition and its callers: {written:?}");
    let defining = std::fs::canonicalize(repo.path().join("src/config.rs")).unwrap();
    assert_eq!(
        std::fs::canonicalize(lines[1]).ok().as_deref(),
        Some(defining.as_path()),
        "the first entry is the defining file: {written:?}"
    );
    assert_eq!(lines[2], "6", "on the defining line: {written:?}");
}

/// `initialize` with one workspace folder, answered.
pub(crate) fn initialize_in(lsp: &mut Lsp, root: &std::path::Path) {
    let uri = format!("file://{}", root.display());
    lsp.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "processId": std::process::id(), "rootUri": uri,
        "workspaceFolders": [{"uri": uri, "name": "ws"}], "capabilities": {}}}),
    );
    assert_eq!(lsp.answer()["id"], 1);
}

/// The hostile-input pass's finding 5: the search sent right after `initialized` is scoped to the
/// workspace's repository, as every later one is — another registered repository's hits never
/// come back.
#[test]
fn the_first_search_is_scoped_to_the_workspace() {
    let env = TestEnv::started();
    let ours = git_repo(&[("src/lib.rs", b"pub fn scopedmarkerword_here() {}\n")]);
    let theirs = git_repo(&[("src/lib.rs", b"pub fn scopedmarkerword_there() {}\n")]);
    env.add_repo(ours.path());
    env.add_repo(theirs.path());
    for attempt in 0..3 {
        let mut lsp = Lsp::spawn(&env);
        initialize_in(&mut lsp, ours.path());
        // In one write: no time for the server to resolve the folders before the search.
        let note = json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}).to_string();
        let search = json!({"jsonrpc": "2.0", "id": 2, "method": "patina/search",
            "params": {"query": "scopedmarkerword"}})
        .to_string();
        lsp.raw(
            format!(
                "Content-Length: {}\r\n\r\n{note}Content-Length: {}\r\n\r\n{search}",
                note.len(),
                search.len()
            )
            .as_bytes(),
        );
        let a = lsp.answer();
        let hits = a["result"]["hits"]
            .as_array()
            .unwrap_or_else(|| panic!("{a}"));
        assert!(!hits.is_empty(), "attempt {attempt}: {a}");
        let ours_root = ours.path().to_string_lossy();
        for h in hits {
            assert_eq!(
                h["repoRoot"].as_str(),
                Some(ours_root.as_ref()),
                "attempt {attempt}: a hit from outside the workspace: {h}"
            );
        }
    }
}

/// The hostile-input pass's finding 6: after a frame whose Content-Length is too short, too long
/// or not a number, the server finds the next frame and answers it.
#[test]
fn after_a_wrong_content_length_the_next_request_is_answered() {
    let env = TestEnv::started();
    let mut lsp = Lsp::spawn(&env);
    lsp.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}),
    );
    assert_eq!(lsp.answer()["id"], 1);
    let request = |id: u32| {
        json!({"jsonrpc": "2.0", "id": id, "method": "workspace/symbol", "params": {"query": ""}})
            .to_string()
    };
    let framed = |body: &str| format!("Content-Length: {}\r\n\r\n{body}", body.len());
    for (what, bad_id, next_id, bad) in [
        (
            "too short",
            10,
            11,
            format!("Content-Length: 12\r\n\r\n{}", request(10)),
        ),
        (
            "too long",
            20,
            21,
            format!(
                "Content-Length: {}\r\n\r\n{}",
                request(20).len() + 40,
                request(20)
            ),
        ),
        (
            "not a number",
            30,
            31,
            format!("Content-Length: twelve\r\n\r\n{}", request(30)),
        ),
    ] {
        lsp.raw(format!("{bad}{}", framed(&request(next_id))).as_bytes());
        // The bad frame gets a parse error (or nothing); the next request its answer.
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let m = lsp
                .messages
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("{what}: request {next_id} was never answered"));
            if m["id"] == json!(next_id) {
                assert_eq!(m["result"], json!([]), "{what}: {m}");
                break;
            }
            assert!(
                m["id"].is_null() || m["id"] == json!(bad_id),
                "{what}: unexpected {m}"
            );
        }
    }
}
