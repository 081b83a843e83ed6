//! The tools: their descriptions and JSON schemas (input, and output where the negotiated protocol
//! has structured content), argument checking with messages an agent can act on, the daemon
//! calls, and two renderings of every answer: compact text for the model, and structured JSON that
//! passes the daemon's fields through (so fields the daemon adds later appear without a change
//! here).

use std::fmt::Write as _;

use patina_proto::kinds::HitKind;
use patina_proto::v1 as pb;
use serde_json::{Map, Value, json};

use crate::protocol::{Server, at_least};

/// A tool's answer: text blocks for the model and the structured form.
pub(crate) struct Outcome {
    texts: Vec<String>,
    structured: Value,
}

type ToolResult = Result<Outcome, String>;

pub(crate) struct Tool {
    pub name: &'static str,
    title: &'static str,
    description: &'static str,
    input: fn() -> Value,
    output: fn() -> Value,
    read_only: bool,
    idempotent: bool,
}

/// Lines of preview per hit, and characters per preview line.
const PREVIEW_LINES: u32 = 6;
const PREVIEW_LINE_CHARS: usize = 160;
/// get_file text beyond this is cut at a line boundary (agents' tool outputs are limited, e.g.
/// Claude Code's 25k tokens); the answer says where to continue.
const MAX_FILE_TEXT_BYTES: usize = 80_000;

const LEVELS: &[&str] = &["symbol", "file", "module", "repo", "doc"];
const FORMATS: &[&str] = &["xml", "markdown", "json"];

static TOOLS: &[Tool] = &[
    Tool {
        name: "patina_query",
        title: "Search code",
        description: "Search the registered local repositories: hybrid retrieval (BM25 over \
code-aware tokens, symbol and file-name lookup, semantic embeddings, and notes from earlier \
working sessions) fused by reciprocal rank. Returns ranked locations `path:start-end` with the \
symbol, kind, score, the oracles that found each hit (oracle#rank) and each repository's index \
freshness. Use it first to find where something is defined, used or discussed; then read exact \
lines with get_file, or use patina_context to get the code itself in one call. An identifier \
(`parse_args`, `HttpClient`, `Config::load`) or a file name (`config.toml`) ranks its \
definition first; natural language works too. Results of kind `note` are session notes \
(`session:<name>#<n>`), with their text.",
        input: query_input,
        output: query_output,
        read_only: true,
        idempotent: true,
    },
    Tool {
        name: "patina_context",
        title: "Assemble context",
        description: "Get the code relevant to a question or topic in one call: the best \
results of a search, overlapping ranges of a file merged (no line twice), filled into a token \
budget (≈ characters / 4) in rank order and attributed as `path:start-end` (notes as \
`session:<name>#<n>`). Format `xml` (default), `markdown` or `json`. Prefer it over several \
get_file calls when you need to read the code about a topic; use patina_query when you only \
need locations.",
        input: context_input,
        output: context_output,
        read_only: true,
        idempotent: true,
    },
    Tool {
        name: "get_file",
        title: "Read a file",
        description: "Read a file of a registered repository, whole or by 1-based inclusive line \
range (start_line/end_line). Returns the code (with line numbers in the text), the language, \
the total number of lines and whether the output was truncated (then call again from the line \
given). Paths are relative to the repository root; absolute paths, '..', symlinks leading out \
of the repository, files the repository ignores (.gitignore/.patinaignore) and secret files \
(.env, keys, certificates, .git/) are refused.",
        input: get_file_input,
        output: get_file_output,
        read_only: true,
        idempotent: true,
    },
    Tool {
        name: "explore_structure",
        title: "Explore a directory",
        description: "Show the layout of a repository directory as indexed: subdirectories with \
file and line counts, files with language and line count (to `depth` levels, default 2), and \
the key files of the subtree — READMEs, manifests (Cargo.toml, package.json, pyproject.toml, \
go.mod, …) and entry points (main.rs, main.py, index.ts, …). Optional `glob` keeps only \
matching files (e.g. `*.py`). Use it to orient yourself in an unfamiliar repository.",
        input: explore_input,
        output: explore_output,
        read_only: true,
        idempotent: true,
    },
    Tool {
        name: "list_repos",
        title: "List repositories",
        description: "List the repositories Patina has registered, with their root, file and \
chunk counts, languages, the commit their index reflects and its freshness (pending changes, \
indexing in progress). Repositories are registered from a shell with `patina add PATH`.",
        input: no_input,
        output: list_repos_output,
        read_only: true,
        idempotent: true,
    },
    Tool {
        name: "patina_session_start",
        title: "Start a working session",
        description: "Start (or resume, by name) a working session: a durable scratchpad for \
decisions, findings and dead ends while you work. Its notes are stored by the daemon (on disk \
before the call returns) and surface in later patina_query / patina_context results — in this \
and future conversations — as `session:<name>#<n>`. Give a short `name` (letters, digits, \
'.', '_', '-'; generated when omitted), an optional `goal`, and optionally the `repo` it is \
about (its notes then only surface in queries that include that repository). Resuming returns \
the notes so far.",
        input: session_start_input,
        output: session_output,
        read_only: false,
        idempotent: true,
    },
    Tool {
        name: "patina_session_note",
        title: "Add a session note",
        description: "Record a note in a working session: a decision and its reason (\"we \
chose sled for storage because …\"), a finding, a dead end. Write it so it stands alone when \
found later by a search. `session` defaults to the session started last through this \
connection. Returns the note's reference `session:<name>#<n>`.",
        input: session_note_input,
        output: session_output,
        read_only: false,
        idempotent: false,
    },
    Tool {
        name: "patina_session_end",
        title: "End a working session",
        description: "End a working session, optionally with a `summary` (stored as its last \
note, tagged summary). Its notes stay searchable. `session` defaults to the session started \
last through this connection.",
        input: session_end_input,
        output: session_output,
        read_only: false,
        idempotent: true,
    },
];

pub(crate) fn find(name: &str) -> Option<&'static Tool> {
    TOOLS.iter().find(|t| t.name == name)
}

pub(crate) fn names() -> Vec<&'static str> {
    TOOLS.iter().map(|t| t.name).collect()
}

/// The `tools/list` entries for the negotiated protocol version: annotations from 2025-03-26,
/// titles and output schemas from 2025-06-18.
pub(crate) fn list(version: &str) -> Vec<Value> {
    TOOLS
        .iter()
        .map(|t| {
            let mut v = json!({
                "name": t.name,
                "description": t.description,
                "inputSchema": (t.input)(),
            });
            if at_least(version, "2025-03-26") {
                v["annotations"] = json!({
                    "title": t.title,
                    "readOnlyHint": t.read_only,
                    "destructiveHint": false,
                    "idempotentHint": t.idempotent,
                    "openWorldHint": false,
                });
            }
            if at_least(version, "2025-06-18") {
                v["title"] = json!(t.title);
                v["outputSchema"] = (t.output)();
            }
            v
        })
        .collect()
}

/// The `tools/call` result: text content, plus `structuredContent` from 2025-06-18; a failure is a
/// result with `isError: true` and the reason.
pub(crate) fn result(outcome: ToolResult, version: &str) -> Value {
    match outcome {
        Ok(o) => {
            let content: Vec<Value> = o
                .texts
                .into_iter()
                .map(|t| json!({"type": "text", "text": t}))
                .collect();
            let mut v = json!({"content": content, "isError": false});
            if at_least(version, "2025-06-18") {
                v["structuredContent"] = o.structured;
            }
            v
        }
        Err(message) => json!({
            "content": [{"type": "text", "text": message}],
            "isError": true,
        }),
    }
}

pub(crate) async fn call(
    server: &Server,
    tool: &Tool,
    arguments: Map<String, Value>,
) -> ToolResult {
    let args = Args {
        tool: tool.name,
        map: arguments,
    };
    match tool.name {
        "patina_query" => query(server, args).await,
        "patina_context" => context(server, args).await,
        "get_file" => get_file(server, args).await,
        "explore_structure" => explore(server, args).await,
        "list_repos" => list_repos(server, args).await,
        "patina_session_start" => session_start(server, args).await,
        "patina_session_note" => session_note(server, args).await,
        "patina_session_end" => session_end(server, args).await,
        other => Err(format!("tool '{other}' is not implemented")),
    }
}

/// One unary RPC on the shim's daemon channel (re-opened, and the call retried with backoff, when
/// the daemon went away); the daemon's error text comes back as the `Err`.
macro_rules! rpc {
    ($server:expr, $client:ty, $method:ident, $req:expr) => {{
        let req = $req;
        $server
            .daemon
            .call(|ch| {
                let req = req.clone();
                async move {
                    <$client>::new(ch)
                        .$method(req)
                        .await
                        .map(tonic::Response::into_inner)
                }
            })
            .await
    }};
}

// ---------------------------------------------------------------------------------------------
// Arguments

/// A tool's arguments, checked one by one; `finish` refuses names the tool does not take.
struct Args {
    tool: &'static str,
    map: Map<String, Value>,
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl Args {
    fn take(&mut self, key: &str) -> Option<Value> {
        self.map.remove(key).filter(|v| !v.is_null())
    }

    fn wrong(&self, key: &str, want: &str, got: &Value) -> String {
        format!(
            "argument '{key}' of {} must be {want}, not {}",
            self.tool,
            type_name(got)
        )
    }

    /// An optional string; an empty one counts as absent.
    fn string(&mut self, key: &str) -> Result<Option<String>, String> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(self.wrong(key, "a string", &v)),
        }
    }

    fn required(&mut self, key: &str, what: &str) -> Result<String, String> {
        self.string(key)?
            .ok_or_else(|| format!("missing required argument '{key}' of {}: {what}", self.tool))
    }

    /// An optional integer in `min..=max` (numeric strings are accepted).
    fn integer(&mut self, key: &str, min: u64, max: u64) -> Result<Option<u64>, String> {
        let v = match self.take(key) {
            None => return Ok(None),
            Some(v) => v,
        };
        let n = match &v {
            Value::Number(n) => n.as_u64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                    .map(|f| f as u64)
            }),
            Value::String(s) => s.trim().parse::<u64>().ok(),
            _ => None,
        };
        match n {
            Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
            Some(_) | None if matches!(v, Value::Number(_) | Value::String(_)) => Err(format!(
                "argument '{key}' of {} must be an integer from {min} to {max}, not {v}",
                self.tool
            )),
            _ => Err(self.wrong(key, "an integer", &v)),
        }
    }

    fn boolean(&mut self, key: &str) -> Result<Option<bool>, String> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(b)),
            Some(Value::String(s)) if s == "true" || s == "false" => Ok(Some(s == "true")),
            Some(v) => Err(self.wrong(key, "a boolean", &v)),
        }
    }

    fn choice(
        &mut self,
        key: &str,
        allowed: &[&'static str],
    ) -> Result<Option<&'static str>, String> {
        match self.string(key)? {
            None => Ok(None),
            Some(s) => allowed
                .iter()
                .copied()
                .find(|a| a.eq_ignore_ascii_case(s.trim()))
                .map(Some)
                .ok_or_else(|| {
                    format!(
                        "argument '{key}' of {} must be one of {}, not '{s}'",
                        self.tool,
                        allowed.join(", ")
                    )
                }),
        }
    }

    /// A list of strings; a single string counts as a list of one.
    /// `role`: one name or a list; `!name` excludes. As wire roles: (included, excluded).
    fn roles(&mut self) -> Result<(Vec<i32>, Vec<i32>), String> {
        let values = self.strings("role")?;
        patina_proto::roles::parse_filter(&values)
            .map_err(|e| format!("argument 'role' of {}: {e}", self.tool))
    }

    fn strings(&mut self, key: &str) -> Result<Vec<String>, String> {
        match self.take(key) {
            None => Ok(Vec::new()),
            Some(Value::String(s)) => Ok(vec![s]),
            Some(Value::Array(items)) => items
                .into_iter()
                .map(|i| match i {
                    Value::String(s) => Ok(s),
                    other => Err(self.wrong(key, "an array of strings", &other)),
                })
                .collect(),
            Some(v) => Err(self.wrong(key, "an array of strings", &v)),
        }
    }

    fn finish(self) -> Result<(), String> {
        match self.map.keys().next() {
            None => Ok(()),
            Some(k) => {
                let schema = find(self.tool).map(|t| (t.input)()).unwrap_or(Value::Null);
                let known: Vec<&str> = schema["properties"]
                    .as_object()
                    .map(|p| p.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                Err(format!(
                    "unknown argument '{k}' for {}; it takes: {}",
                    self.tool,
                    if known.is_empty() {
                        "no arguments".to_string()
                    } else {
                        known.join(", ")
                    }
                ))
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers

/// A prost message as JSON, with `null`s (unset optional messages) removed.
fn to_json<T: serde::Serialize>(msg: &T) -> Value {
    let mut v = serde_json::to_value(msg).unwrap_or(Value::Null);
    prune(&mut v);
    v
}

fn prune(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|_, x| !x.is_null());
            m.values_mut().for_each(prune);
        }
        Value::Array(a) => a.iter_mut().for_each(prune),
        _ => {}
    }
}

/// The repository containing the working directory, when it is registered (agents run their MCP
/// servers in the project they work on): the default `repo`.
async fn cwd_repo(server: &Server) -> Result<Option<pb::RepoInfo>, String> {
    let repos = repo_list(server).await?.repos;
    let Ok(cwd) = std::env::current_dir().and_then(std::fs::canonicalize) else {
        return Ok(None);
    };
    Ok(repos
        .into_iter()
        .filter(|r| cwd.starts_with(&r.root))
        .max_by_key(|r| r.root.len()))
}

async fn repo_list(server: &Server) -> Result<pb::ListResponse, String> {
    rpc!(
        server,
        pb::repos_client::ReposClient<_>,
        list,
        pb::ListRequest {}
    )
}

/// The repositories a search covers: `repo` (`*` or `all` = every one), else the working
/// directory's repository when registered, else every one.
async fn search_scope(server: &Server, repo: Option<String>) -> Result<Vec<String>, String> {
    match repo.as_deref().map(str::trim) {
        Some("*" | "all") => Ok(Vec::new()),
        Some(r) => Ok(vec![r.to_string()]),
        None => Ok(cwd_repo(server).await?.map(|r| r.id).into_iter().collect()),
    }
}

/// The one repository a file tool works in: `repo`, else the working directory's repository,
/// else the only registered one.
async fn target_repo(server: &Server, repo: Option<String>) -> Result<String, String> {
    if let Some(r) = repo {
        return Ok(r);
    }
    if let Some(r) = cwd_repo(server).await? {
        return Ok(r.id);
    }
    let repos = repo_list(server).await?.repos;
    match repos.as_slice() {
        [] => Err(
            "no repository is registered with Patina; register one from a shell with \
                   `patina add PATH`"
                .into(),
        ),
        [only] => Ok(only.id.clone()),
        many => Err(format!(
            "{} repositories are registered; pass 'repo' with one of: {}",
            many.len(),
            many.iter()
                .map(|r| r.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

fn short_commit(c: &str) -> &str {
    &c[..c.len().min(10)]
}

fn human_age(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0 => format!("{ms} ms"),
        1..=119 => format!("{s} s"),
        120..=7199 => format!("{} min", s / 60),
        7200..=172_799 => format!("{} h", s / 3600),
        _ => format!("{} d", s / 86_400),
    }
}

/// One line on how current a repository's index is, from a `Freshness` (as JSON, so fields the
/// daemon adds do not break it).
fn freshness_line(f: &Value) -> String {
    let name = f["repo_name"].as_str().unwrap_or("?");
    let mut parts: Vec<String> = Vec::new();
    parts.push(if f["fresh"].as_bool() == Some(true) {
        "fresh".into()
    } else {
        "not fully fresh".into()
    });
    if let Some(c) = f["indexed_commit"].as_str().filter(|c| !c.is_empty()) {
        parts.push(format!("indexed commit {}", short_commit(c)));
    }
    if let Some(age) = f["age_ms"]
        .as_u64()
        .filter(|_| f["last_indexed_unix_ms"].as_i64() > Some(0))
    {
        parts.push(format!("updated {} ago", human_age(age)));
    }
    match f["pending_files"].as_i64() {
        Some(n) if n > 0 => parts.push(format!("{n} changed file(s) pending")),
        Some(n) if n < 0 => parts.push("a full rescan is pending".into()),
        _ => {}
    }
    if f["indexing"].as_bool() == Some(true) {
        parts.push("indexing now".into());
    }
    if let Some(n) = f["embed_backlog"].as_u64().filter(|n| *n > 0) {
        parts.push(format!("{n} chunk(s) not embedded yet"));
    }
    format!("{name}: {}", parts.join(", "))
}

fn one_line(s: &str, max: usize) -> String {
    let line = s.lines().next().unwrap_or("").trim();
    if line.chars().count() > max {
        let cut: String = line.chars().take(max).collect();
        format!("{cut}…")
    } else {
        line.to_string()
    }
}

fn preview(s: &str) -> String {
    s.lines()
        .take(PREVIEW_LINES as usize)
        .map(|l| {
            if l.chars().count() > PREVIEW_LINE_CHARS {
                let cut: String = l.chars().take(PREVIEW_LINE_CHARS).collect();
                format!("{cut}…")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

// ---------------------------------------------------------------------------------------------
// patina_query

fn query_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for: words, a question, an identifier (`parse_args`, `HttpClient::get`) or a file name (`config.toml`)."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10, "description": "Number of results."},
            "repo": {"type": "string", "description": "Repository name, id or path; `*` for every registered repository. Default: the repository of the working directory if registered, else all."},
            "path": {"type": "string", "description": "Gitignore-style glob relative to the repository root restricting results to matching files, e.g. `src/**/*.rs`, `*.py`, `docs/` (a directory matches everything below it)."},
            "role": {"type": ["string", "array"], "items": {"type": "string"}, "description": "Only files of these roles: `source`, `test`, `docs`, `example`, `benchmark`, `generated`, `vendored`, `config`, `other`; `!test` excludes one. Default: every role, ranked by what the query asks for."},
            "near": {"type": "string", "description": "A directory (relative to the repository root) whose files rank higher, without excluding others."},
            "level": {"type": "string", "enum": LEVELS, "default": "symbol", "description": "Result granularity: `symbol` = one result per definition/chunk; `file` = one per file; `module` = chunks aggregated per directory; `repo` = per repository; `doc` = documentation only (Markdown, reST, text) and session notes."},
            "preview": {"type": "boolean", "default": false, "description": "Include the first lines of each result (truncated)."}
        },
        "required": ["query"],
        "additionalProperties": false
    })
}

fn query_output() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "level": {"type": "string"},
            "results": {"type": "array", "items": {
                "type": "object",
                "properties": {
                    "ref": {"type": "string", "description": "`path:start-end`; `session:<name>#<n>` for a note; the directory for module level; the repository name for repo level"},
                    "repo": {"type": "string"},
                    "repo_id": {"type": "string"},
                    "repo_root": {"type": "string"},
                    "path": {"type": "string"},
                    "start_line": {"type": "integer"},
                    "end_line": {"type": "integer"},
                    "symbol": {"type": "string"},
                    "parent": {"type": "string"},
                    "kind": {"type": "string"},
                    "language": {"type": "string"},
                    "score": {"type": "number"},
                    "oracles": {"type": "array", "items": {"type": "object", "properties": {
                        "oracle": {"type": "string"}, "rank": {"type": "integer"}, "score": {"type": "number"}}}},
                    "preview": {"type": "string"},
                    "note": {"type": "object"},
                    "matches": {"type": "integer"},
                    "best": {"type": "string"},
                    "role": {"type": "string", "description": "what the file is for: source, test, docs, example, benchmark, generated, vendored, config, other"}
                },
                "required": ["ref", "path", "kind", "score", "oracles"]
            }},
            "notices": {"type": "array", "items": {"type": "string"}},
            "freshness": {"type": "array", "items": {"type": "object"}, "description": "Per repository in scope: indexed commit, pending changes, whether the index is fresh"},
            "oracles": {"type": "array", "items": {"type": "object"}},
            "took_us": {"type": "integer"}
        },
        "required": ["query", "level", "results", "notices"]
    })
}

async fn query(server: &Server, mut a: Args) -> ToolResult {
    let text = a.required("query", "what to search for (a string)")?;
    let limit = a.integer("limit", 1, 100)?.unwrap_or(10) as u32;
    let repo = a.string("repo")?;
    let path = a.string("path")?;
    let level = a.choice("level", LEVELS)?.unwrap_or("symbol");
    let show_preview = a.boolean("preview")?.unwrap_or(false);
    let (roles, exclude_roles) = a.roles()?;
    let near = a.string("near")?;
    a.finish()?;
    let granularity = match level {
        "file" => pb::Granularity::File,
        "module" => pb::Granularity::Module,
        "repo" => pb::Granularity::Repo,
        "doc" => pb::Granularity::Doc,
        _ => pb::Granularity::Chunk,
    };
    let req = pb::QueryRequest {
        query: text.clone(),
        limit,
        repos: search_scope(server, repo).await?,
        path_globs: path.into_iter().collect(),
        granularity: granularity as i32,
        // Notes carry their text anyway; code previews only when asked.
        snippet_lines: if show_preview { PREVIEW_LINES } else { 0 },
        roles,
        exclude_roles,
        near: near.into_iter().collect(),
        ..Default::default()
    };
    let resp = rpc!(server, pb::search_client::SearchClient<_>, query, req)?;
    let mut structured = to_json(&resp);
    let names: std::collections::HashMap<String, String> = structured["freshness"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|f| {
                    Some((
                        f["repo_id"].as_str()?.to_string(),
                        f["repo_name"].as_str()?.to_string(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    let mut results = Vec::new();
    let mut text_out = String::new();
    for (i, h) in resp.hits.iter().enumerate() {
        let mut v = to_json(h);
        let obj = v.as_object_mut().expect("a hit is an object");
        let kind = HitKind::of(h);
        let is_note = kind == HitKind::Note;
        let reference = match kind {
            HitKind::Note => h.path.clone(),
            HitKind::Module => format!("{}/", h.path),
            HitKind::Repo => h.symbol.clone(),
            HitKind::Chunk(_) => format!("{}:{}-{}", h.path, h.start_line, h.end_line),
        };
        let repo_name = names.get(&h.repo_id).cloned().unwrap_or_else(|| {
            std::path::Path::new(&h.repo_root)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
        obj.insert("ref".into(), json!(reference));
        if !repo_name.is_empty() {
            obj.insert("repo".into(), json!(repo_name));
        }
        obj.insert(
            "oracles".into(),
            json!(
                h.provenance
                    .iter()
                    .map(|p| json!({"oracle": p.oracle, "rank": p.rank, "score": p.score}))
                    .collect::<Vec<_>>()
            ),
        );
        obj.remove("provenance");
        obj.remove("snippet");
        match patina_proto::roles::from_wire(h.role) {
            Some(r) => obj.insert("role".into(), json!(r.name())),
            None => obj.remove("role"),
        };
        if show_preview && !h.snippet.is_empty() && !is_note {
            obj.insert("preview".into(), json!(preview(&h.snippet)));
        }
        // Empty optional fields say nothing: leave them out.
        obj.retain(|k, v| {
            let empty_text = matches!(
                k.as_str(),
                "parent" | "best" | "symbol" | "language" | "repo_id" | "repo_root"
            ) && v.as_str() == Some("");
            let no_matches = k == "matches" && v.as_u64() == Some(0);
            !empty_text && !no_matches
        });
        results.push(v);

        let what = match (&h.note, h.symbol.is_empty(), h.parent.is_empty()) {
            (Some(_), _, _) => "note".to_string(),
            (None, true, _) => h.kind.clone(),
            (None, false, true) => format!("{} {}", h.kind, h.symbol),
            (None, false, false) => format!("{} {}::{}", h.kind, h.parent, h.symbol),
        };
        let oracles: Vec<String> = h
            .provenance
            .iter()
            .map(|p| format!("{}#{}", p.oracle, p.rank))
            .collect();
        let _ = write!(text_out, "{}. {reference}  {what}", i + 1);
        if !repo_name.is_empty() && kind != HitKind::Repo {
            let _ = write!(text_out, "  ({repo_name})");
        }
        let _ = write!(text_out, "  score {:.4}  [{}]", h.score, oracles.join(" "));
        if h.matches > 0 {
            let _ = write!(
                text_out,
                "  {} matching chunk(s), best {}",
                h.matches, h.best
            );
        }
        text_out.push('\n');
        if let Some(n) = &h.note {
            for l in preview(&n.text).lines() {
                let _ = writeln!(text_out, "     {l}");
            }
        } else if show_preview {
            for l in preview(&h.snippet).lines() {
                let _ = writeln!(text_out, "     {l}");
            }
        }
    }
    if resp.hits.is_empty() {
        let _ = writeln!(text_out, "No results for {text:?}.");
    }
    let obj = structured.as_object_mut().expect("a response is an object");
    obj.remove("hits");
    obj.insert("query".into(), json!(text));
    obj.insert("level".into(), json!(level));
    obj.insert("results".into(), Value::Array(results));
    if let Some(fresh) = obj
        .get("freshness")
        .and_then(Value::as_array)
        .filter(|f| !f.is_empty())
    {
        text_out.push_str("-- index: ");
        text_out.push_str(
            &fresh
                .iter()
                .map(freshness_line)
                .collect::<Vec<_>>()
                .join("; "),
        );
        text_out.push('\n');
    }
    for n in &resp.notices {
        let _ = writeln!(text_out, "-- notice: {n}");
    }
    Ok(Outcome {
        texts: vec![text_out.trim_end().to_string()],
        structured,
    })
}

// ---------------------------------------------------------------------------------------------
// patina_context

fn context_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "The question or topic to gather code for."},
            "topic": {"type": "string", "description": "Same as `query` (give one of them)."},
            "budget": {"type": "integer", "minimum": 100, "maximum": 200000, "default": 6000, "description": "Token budget for the assembled context (≈ characters / 4)."},
            "format": {"type": "string", "enum": FORMATS, "default": "xml", "description": "`xml`: <source ref=\"path:start-end\" …> elements; `markdown`: a heading and a fenced block per item; `json`."},
            "repo": {"type": "string", "description": "Repository name, id or path; `*` for every one. Default: the working directory's repository if registered, else all."},
            "path": {"type": "string", "description": "Gitignore-style glob restricting the sources, e.g. `src/**`."},
            "role": {"type": ["string", "array"], "items": {"type": "string"}, "description": "Only files of these roles: `source`, `test`, `docs`, `example`, `benchmark`, `generated`, `vendored`, `config`, `other`; `!test` excludes one. Default: every role, ranked by what the query asks for."},
            "near": {"type": "string", "description": "A directory (relative to the repository root) whose files rank higher, without excluding others."}
        },
        "additionalProperties": false
    })
}

fn context_output() -> Value {
    json!({
        "type": "object",
        "properties": {
            "format": {"type": "string"},
            "budget_tokens": {"type": "integer"},
            "used_tokens": {"type": "integer"},
            "omitted": {"type": "integer"},
            "items": {"type": "array", "description": "What the context (in the text content) holds, in order, without the text", "items": {
                "type": "object",
                "properties": {
                    "ref": {"type": "string"},
                    "repo_name": {"type": "string"},
                    "path": {"type": "string"},
                    "start_line": {"type": "integer"},
                    "end_line": {"type": "integer"},
                    "symbols": {"type": "array", "items": {"type": "string"}},
                    "kind": {"type": "string"},
                    "language": {"type": "string"},
                    "score": {"type": "number"},
                    "oracles": {"type": "array", "items": {"type": "string"}},
                    "truncated": {"type": "boolean"}
                },
                "required": ["ref", "path", "start_line", "end_line"]
            }},
            "notices": {"type": "array", "items": {"type": "string"}}
        },
        "required": ["format", "budget_tokens", "used_tokens", "items", "notices"]
    })
}

async fn context(server: &Server, mut a: Args) -> ToolResult {
    let text = match (a.string("query")?, a.string("topic")?) {
        (Some(q), _) | (None, Some(q)) => q,
        (None, None) => {
            return Err("missing required argument 'query' (or 'topic') of patina_context: the question or topic to gather code for".into());
        }
    };
    let budget = a.integer("budget", 100, 200_000)?.unwrap_or(6000) as u32;
    let format = a.choice("format", FORMATS)?.unwrap_or("xml");
    let repo = a.string("repo")?;
    let path = a.string("path")?;
    let (roles, exclude_roles) = a.roles()?;
    let near = a.string("near")?;
    a.finish()?;
    let req = pb::ContextRequest {
        query: text,
        token_budget: budget,
        repos: search_scope(server, repo).await?,
        path_globs: path.into_iter().collect(),
        format: match format {
            "markdown" => pb::ContextFormat::Markdown,
            "json" => pb::ContextFormat::Json,
            _ => pb::ContextFormat::Xml,
        } as i32,
        roles,
        exclude_roles,
        near: near.into_iter().collect(),
        ..Default::default()
    };
    let resp = rpc!(server, pb::search_client::SearchClient<_>, context, req)?;
    let mut structured = to_json(&resp);
    let obj = structured.as_object_mut().expect("a response is an object");
    obj.remove("text");
    if let Some(items) = obj.get_mut("items").and_then(Value::as_array_mut) {
        for it in items.iter_mut().filter_map(Value::as_object_mut) {
            it.remove("text");
        }
    }
    obj.insert("format".into(), json!(format));
    let mut texts = vec![resp.text];
    if !resp.notices.is_empty() {
        texts.push(format!("notices:\n- {}", resp.notices.join("\n- ")));
    }
    Ok(Outcome { texts, structured })
}

// ---------------------------------------------------------------------------------------------
// get_file

fn get_file_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "repo": {"type": "string", "description": "Repository name, id or path. Default: the working directory's repository if registered, else the only registered one."},
            "path": {"type": "string", "description": "File path relative to the repository root, e.g. `src/main.rs`."},
            "start_line": {"type": "integer", "minimum": 1, "description": "First line (1-based). Default: 1."},
            "end_line": {"type": "integer", "minimum": 1, "description": "Last line, inclusive. Default: the end of the file."}
        },
        "required": ["path"],
        "additionalProperties": false
    })
}

fn get_file_output() -> Value {
    json!({
        "type": "object",
        "properties": {
            "repo_id": {"type": "string"},
            "path": {"type": "string"},
            "language": {"type": "string"},
            "total_lines": {"type": "integer"},
            "start_line": {"type": "integer"},
            "end_line": {"type": "integer"},
            "truncated": {"type": "boolean"},
            "code": {"type": "string"}
        },
        "required": ["path", "language", "total_lines", "start_line", "end_line", "truncated", "code"]
    })
}

async fn get_file(server: &Server, mut a: Args) -> ToolResult {
    let path = a.required("path", "the file's path relative to the repository root")?;
    let repo = a.string("repo")?;
    let start = a.integer("start_line", 1, u32::MAX as u64)?.unwrap_or(0) as u32;
    let end = a.integer("end_line", 1, u32::MAX as u64)?.unwrap_or(0) as u32;
    a.finish()?;
    if end > 0 && end < start {
        return Err(format!("end_line ({end}) is before start_line ({start})"));
    }
    let req = pb::GetFileRequest {
        repo: target_repo(server, repo).await?,
        path,
        start_line: start,
        end_line: end,
    };
    let mut f = rpc!(server, pb::files_client::FilesClient<_>, get_file, req)?;
    let mut cut_note = String::new();
    if f.text.len() > MAX_FILE_TEXT_BYTES {
        let mut keep = 0usize;
        let mut lines = 0u32;
        for l in f.text.split_inclusive('\n') {
            if keep + l.len() > MAX_FILE_TEXT_BYTES {
                break;
            }
            keep += l.len();
            lines += 1;
        }
        f.text.truncate(keep);
        if f.text.ends_with('\n') {
            f.text.pop();
        }
        f.end_line = f.start_line + lines.max(1) - 1;
        f.truncated = true;
        cut_note = format!(
            "\n[output cut at line {} to stay within the tool output limit; call get_file again with start_line={}]",
            f.end_line,
            f.end_line + 1
        );
    }
    let mut text = format!(
        "{}:{}-{} ({}, {} lines in total{})\n",
        f.path,
        f.start_line,
        f.end_line,
        if f.language.is_empty() {
            "text"
        } else {
            &f.language
        },
        f.total_lines,
        if f.truncated { ", truncated" } else { "" }
    );
    for (i, l) in f.text.lines().enumerate() {
        let _ = writeln!(text, "{:>6}\t{l}", f.start_line as usize + i);
    }
    text.push_str(&cut_note);
    let structured = json!({
        "repo_id": f.repo_id,
        "path": f.path,
        "language": f.language,
        "total_lines": f.total_lines,
        "start_line": f.start_line,
        "end_line": f.end_line,
        "truncated": f.truncated,
        "code": f.text,
    });
    Ok(Outcome {
        texts: vec![text.trim_end().to_string()],
        structured,
    })
}

// ---------------------------------------------------------------------------------------------
// explore_structure

fn explore_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "repo": {"type": "string", "description": "Repository name, id or path. Default: the working directory's repository if registered, else the only registered one."},
            "path": {"type": "string", "description": "Directory relative to the repository root. Default: the root."},
            "glob": {"type": "string", "description": "Only files matching this gitignore-style glob, e.g. `*.py` or `src/**/*.rs`."},
            "depth": {"type": "integer", "minimum": 1, "maximum": 20, "default": 2, "description": "Levels below `path` to list."},
            "max_entries": {"type": "integer", "minimum": 1, "maximum": 5000, "default": 500, "description": "Directories + files listed at most."}
        },
        "additionalProperties": false
    })
}

fn explore_output() -> Value {
    json!({
        "type": "object",
        "properties": {
            "repo_id": {"type": "string"},
            "repo_name": {"type": "string"},
            "path": {"type": "string"},
            "dirs": {"type": "array", "items": {"type": "object", "properties": {
                "path": {"type": "string"}, "files": {"type": "integer"}, "lines": {"type": "integer"}}}},
            "files": {"type": "array", "items": {"type": "object", "properties": {
                "path": {"type": "string"}, "language": {"type": "string"}, "lines": {"type": "integer"},
                "bytes": {"type": "integer"}, "skipped": {"type": "string"}}}},
            "key_files": {"type": "array", "items": {"type": "object", "properties": {
                "path": {"type": "string"}, "role": {"type": "string"}}}},
            "total_files": {"type": "integer"},
            "total_lines": {"type": "integer"},
            "languages": {"type": "object"},
            "truncated": {"type": "boolean"}
        },
        "required": ["path", "dirs", "files", "key_files", "total_files"]
    })
}

async fn explore(server: &Server, mut a: Args) -> ToolResult {
    let repo = a.string("repo")?;
    let path = a.string("path")?.unwrap_or_default();
    let glob = a.string("glob")?;
    let depth = a.integer("depth", 1, 20)?.unwrap_or(2) as u32;
    let max_entries = a.integer("max_entries", 1, 5000)?.unwrap_or(0) as u32;
    a.finish()?;
    let req = pb::ExploreRequest {
        repo: target_repo(server, repo).await?,
        path,
        path_globs: glob.into_iter().collect(),
        max_depth: depth,
        max_entries,
    };
    let st = rpc!(
        server,
        pb::files_client::FilesClient<_>,
        explore_structure,
        req
    )?;
    let mut langs: Vec<(&String, &u64)> = st.languages.iter().collect();
    langs.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let base = if st.path.is_empty() {
        "."
    } else {
        st.path.as_str()
    };
    let mut text = format!(
        "{}: {base}/ — {} files, {} lines{}\n",
        st.repo_name,
        st.total_files,
        st.total_lines,
        if langs.is_empty() {
            String::new()
        } else {
            format!(
                " ({})",
                langs
                    .iter()
                    .map(|(l, n)| format!("{l} {n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    );
    if !st.key_files.is_empty() {
        let _ = writeln!(
            text,
            "key files: {}",
            st.key_files
                .iter()
                .map(|k| format!("{} ({})", k.path, k.role))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    // Directories and files interleaved by path, indented by depth below `path`.
    let mut rows: Vec<(String, String)> = st
        .dirs
        .iter()
        .map(|d| {
            (
                format!("{}/", d.path),
                format!("{} files, {} lines", d.files, d.lines),
            )
        })
        .chain(st.files.iter().map(|f| {
            let what = if f.skipped.is_empty() {
                format!(
                    "{} lines{}",
                    f.lines,
                    if f.language.is_empty() {
                        String::new()
                    } else {
                        format!(", {}", f.language)
                    }
                )
            } else {
                format!("not indexed: {}", f.skipped)
            };
            (f.path.clone(), what)
        }))
        .collect();
    rows.sort();
    let prefix_depth = if st.path.is_empty() {
        0
    } else {
        st.path.split('/').count()
    };
    for (p, what) in rows {
        let depth = p
            .trim_end_matches('/')
            .split('/')
            .count()
            .saturating_sub(prefix_depth + 1);
        let name = p.trim_end_matches('/').rsplit('/').next().unwrap_or(&p);
        let slash = if p.ends_with('/') { "/" } else { "" };
        let _ = writeln!(text, "{}{name}{slash}  {what}", "  ".repeat(depth));
    }
    if st.truncated {
        text.push_str("[more entries below: raise depth/max_entries or explore a subdirectory]\n");
    }
    let mut structured = to_json(&st);
    if let Some(obj) = structured.as_object_mut() {
        obj.entry("languages").or_insert_with(|| json!({}));
    }
    Ok(Outcome {
        texts: vec![text.trim_end().to_string()],
        structured,
    })
}

// ---------------------------------------------------------------------------------------------
// list_repos

fn no_input() -> Value {
    json!({"type": "object", "properties": {}, "additionalProperties": false})
}

fn list_repos_output() -> Value {
    json!({
        "type": "object",
        "properties": {
            "repos": {"type": "array", "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "name": {"type": "string"},
                    "root": {"type": "string"},
                    "files": {"type": "integer"},
                    "chunks": {"type": "integer"},
                    "languages": {"type": "object"},
                    "indexing": {"type": "boolean"},
                    "last_indexed_unix_ms": {"type": "integer"},
                    "freshness": {"type": "object"}
                },
                "required": ["id", "name", "root", "files", "chunks"]
            }},
            "daemon_uptime_ms": {"type": "integer"},
            "semantic": {"type": "string"}
        },
        "required": ["repos"]
    })
}

async fn list_repos(server: &Server, a: Args) -> ToolResult {
    a.finish()?;
    let resp = repo_list(server).await?;
    let mut text = String::new();
    if resp.repos.is_empty() {
        text.push_str(
            "No repository is registered; register one from a shell with `patina add PATH`.\n",
        );
    }
    for r in &resp.repos {
        let mut langs: Vec<(&String, &u64)> = r.languages.iter().collect();
        langs.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let _ = writeln!(
            text,
            "{}  {}  {} files, {} chunks  [{}]",
            r.name,
            r.root,
            r.files,
            r.chunks,
            langs
                .iter()
                .take(6)
                .map(|(l, n)| format!("{l} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        if let Some(f) = &r.freshness {
            let _ = writeln!(text, "    {}", freshness_line(&to_json(f)));
        } else if r.indexing {
            text.push_str("    indexing now\n");
        }
    }
    let _ = writeln!(text, "semantic search: {}", resp.semantic);
    let mut structured = to_json(&resp);
    if let Some(obj) = structured.as_object_mut() {
        obj.entry("repos").or_insert_with(|| json!([]));
    }
    Ok(Outcome {
        texts: vec![text.trim_end().to_string()],
        structured,
    })
}

// ---------------------------------------------------------------------------------------------
// Sessions

fn session_start_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "Session name: 1-64 letters, digits, '.', '_' or '-'. An existing name resumes that session. Default: generated from the time."},
            "goal": {"type": "string", "description": "What the session is for."},
            "repo": {"type": "string", "description": "Repository the session is about (name, id or path); its notes then surface only in queries that include it. Default: none (notes surface everywhere)."}
        },
        "additionalProperties": false
    })
}

fn session_note_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "The note: a decision with its reason, a finding, a dead end. At most 32 KiB."},
            "session": {"type": "string", "description": "Session name. Default: the session started last through this connection."},
            "tags": {"type": "array", "items": {"type": "string"}, "description": "Optional tags (searchable)."}
        },
        "required": ["text"],
        "additionalProperties": false
    })
}

fn session_end_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "session": {"type": "string", "description": "Session name. Default: the session started last through this connection."},
            "summary": {"type": "string", "description": "Optional summary, stored as the last note."}
        },
        "additionalProperties": false
    })
}

fn session_output() -> Value {
    let note = json!({"type": "object", "properties": {
        "id": {"type": "integer"}, "session": {"type": "string"}, "seq": {"type": "integer"},
        "ref": {"type": "string"}, "text": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}}, "created_unix_ms": {"type": "integer"}}});
    json!({
        "type": "object",
        "properties": {
            "session": {"type": "object", "properties": {
                "name": {"type": "string"}, "repo_id": {"type": "string"}, "goal": {"type": "string"},
                "started_unix_ms": {"type": "integer"}, "ended_unix_ms": {"type": "integer"},
                "notes": {"type": "integer"}}, "required": ["name"]},
            "resumed": {"type": "boolean"},
            "note": note.clone(),
            "summary": note.clone(),
            "notes": {"type": "array", "items": note}
        },
        "required": ["session"]
    })
}

fn remember(server: &Server, name: &str) {
    *server.session.lock().expect("session lock") = Some(name.to_string());
}

fn session_name(server: &Server, given: Option<String>) -> Result<String, String> {
    given
        .or_else(|| server.session.lock().expect("session lock").clone())
        .ok_or_else(|| {
            "no session given and none was started through this connection; pass 'session' or \
             call patina_session_start first"
                .into()
        })
}

async fn session_start(server: &Server, mut a: Args) -> ToolResult {
    let name = a.string("name")?.unwrap_or_default();
    let goal = a.string("goal")?.unwrap_or_default();
    let repo = a.string("repo")?.unwrap_or_default();
    a.finish()?;
    let req = pb::StartSessionRequest { name, repo, goal };
    let resp = rpc!(server, pb::sessions_client::SessionsClient<_>, start, req)?;
    let session = resp.session.clone().unwrap_or_default();
    remember(server, &session.name);
    let mut structured = to_json(&resp);
    let mut text = format!(
        "Session '{}' {} ({} note(s) so far). Record decisions and findings with \
         patina_session_note; they surface in later searches as session:{}#<n>.",
        session.name,
        if resp.resumed { "resumed" } else { "started" },
        session.notes,
        session.name
    );
    if resp.resumed && session.notes > 0 {
        let req = pb::ListSessionsRequest {
            session: session.name.clone(),
        };
        let notes = rpc!(server, pb::sessions_client::SessionsClient<_>, list, req)?.notes;
        text.push_str("\nNotes so far:");
        for n in &notes {
            let _ = write!(text, "\n- {}: {}", n.r#ref, one_line(&n.text, 200));
        }
        structured["notes"] = Value::Array(notes.iter().map(to_json).collect());
    }
    Ok(Outcome {
        texts: vec![text],
        structured,
    })
}

async fn session_note(server: &Server, mut a: Args) -> ToolResult {
    let text = a.required("text", "the note to record (a string)")?;
    let session = a.string("session")?;
    let tags = a.strings("tags")?;
    a.finish()?;
    let req = pb::NoteRequest {
        session: session_name(server, session)?,
        text,
        tags,
        idempotency_key: crate::daemon::idempotency_key(),
    };
    let resp = rpc!(server, pb::sessions_client::SessionsClient<_>, note, req)?;
    let note = resp.note.clone().unwrap_or_default();
    remember(server, &note.session);
    Ok(Outcome {
        texts: vec![format!("Noted as {} (stored durably).", note.r#ref)],
        structured: to_json(&resp),
    })
}

async fn session_end(server: &Server, mut a: Args) -> ToolResult {
    let session = a.string("session")?;
    let summary = a.string("summary")?.unwrap_or_default();
    a.finish()?;
    let req = pb::EndSessionRequest {
        session: session_name(server, session)?,
        summary,
        idempotency_key: crate::daemon::idempotency_key(),
    };
    let resp = rpc!(server, pb::sessions_client::SessionsClient<_>, end, req)?;
    let session = resp.session.clone().unwrap_or_default();
    let mut text = format!(
        "Session '{}' ended with {} note(s); they stay searchable.",
        session.name, session.notes
    );
    if let Some(s) = &resp.summary {
        let _ = write!(text, " Summary stored as {}.", s.r#ref);
    }
    Ok(Outcome {
        texts: vec![text],
        structured: to_json(&resp),
    })
}
