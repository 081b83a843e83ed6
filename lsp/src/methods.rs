//! The LSP methods, each forwarded to the daemon: `initialize`/`initialized` (workspace folders
//! become the search scope, registered when they are git repositories; `$/progress` while they
//! index; `window/showMessage` when semantic search is off), `workspace/symbol` (hybrid search),
//! `textDocument/definition`, `references` and `hover` (the code graph), `patina/search` and
//! `workspace/executeCommand` (`patina.search`, `patina.context`, `patina.related`), and
//! `patina/status` (freshness of the workspace's repositories, for status bars).

use std::path::{Path, PathBuf};
use std::time::Duration;

use patina_proto::v1 as pb;
use serde_json::{Value, json};

use crate::convert::{
    date, fence_language, line_range, location, name_line, path_to_uri, signature_and_doc,
    symbol_kind, uri_to_path, word_at,
};
use crate::server::{Failure, INVALID_PARAMS, METHOD_NOT_FOUND, REQUEST_FAILED, Server};

/// The commands of `workspace/executeCommand`.
pub(crate) const COMMANDS: [&str; 3] = ["patina.search", "patina.context", "patina.related"];

/// Hits per `workspace/symbol` answer.
const SYMBOL_LIMIT: u32 = 50;
/// Lines of each hit read to find the line that names its symbol (below its doc comment).
const NAME_LINES: u32 = 12;

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
            .map_err(|e| (REQUEST_FAILED, e))
    }};
}

pub(crate) fn initialize(server: &Server, params: &Value) -> Result<Value, Failure> {
    let mut roots: Vec<PathBuf> = params["workspaceFolders"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["uri"].as_str().and_then(uri_to_path))
        .collect();
    if roots.is_empty() {
        roots.extend(
            params["rootUri"]
                .as_str()
                .and_then(uri_to_path)
                .or_else(|| params["rootPath"].as_str().map(PathBuf::from)),
        );
    }
    *server.roots.lock().expect("roots lock") = roots;
    *server.client.lock().expect("client lock") = json!({
        "capabilities": params["capabilities"],
        "initializationOptions": params["initializationOptions"],
    });
    Ok(json!({
        "capabilities": {
            "positionEncoding": "utf-16",
            "textDocumentSync": {"openClose": true, "change": 1, "save": {"includeText": false}},
            "workspaceSymbolProvider": true,
            "definitionProvider": true,
            "referencesProvider": true,
            "hoverProvider": true,
            "executeCommandProvider": {"commands": COMMANDS},
            "experimental": {"patinaSearch": true},
        },
        "serverInfo": {"name": "patina-lsp", "version": env!("CARGO_PKG_VERSION")},
    }))
}

/// After `initialized`: tell the user when semantic search is off, find (or register) the
/// repositories of the workspace folders and report their indexing as `$/progress`.
pub(crate) async fn initialized(server: &Server) {
    match rpc!(
        server,
        pb::health_client::HealthClient<_>,
        check,
        pb::CheckRequest {
            client_protocol: patina_proto::PROTOCOL_VERSION
        }
    ) {
        Ok(h) if !h.semantic_on => server.notify(
            "window/showMessage",
            json!({"type": 2, "message": format!(
                "Patina: semantic search is off, results come from lexical and symbol search \
                 only. {}", fix_of(&h.semantic))}),
        ),
        Ok(_) => {}
        Err((_, e)) => {
            server.notify(
                "window/showMessage",
                json!({"type": 1, "message": format!("Patina: {e}")}),
            );
            return;
        }
    }
    let register = server.client.lock().expect("client lock")["initializationOptions"]["register"]
        != json!(false);
    let roots = server.roots.lock().expect("roots lock").clone();
    let Ok(list) = rpc!(
        server,
        pb::repos_client::ReposClient<_>,
        list,
        pb::ListRequest {}
    ) else {
        return;
    };
    let mut scope = Vec::new();
    let mut follow = Vec::new();
    for root in &roots {
        let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.clone());
        let known: Vec<&pb::RepoInfo> = list
            .repos
            .iter()
            .filter(|r| {
                let r_root = Path::new(&r.root);
                root.starts_with(r_root) || r_root.starts_with(&root)
            })
            .collect();
        for r in &known {
            scope.push(r.id.clone());
            if r.indexing {
                follow.push((r.root.clone(), r.name.clone(), false));
            }
        }
        if known.is_empty() && register && root.join(".git").exists() {
            follow.push((root.to_string_lossy().into_owned(), String::new(), true));
        }
    }
    *server.scope.lock().expect("scope lock") = scope;
    for (path, name, add) in follow {
        index_with_progress(server, &path, &name, add).await;
    }
}

/// The fix part of the daemon's "off: <why>; turn it on with …" explanation (all of it when it
/// has no such part).
fn fix_of(semantic: &str) -> String {
    let s = semantic.strip_prefix("off: ").unwrap_or(semantic);
    if s.contains("patina model install") {
        s.to_string()
    } else {
        format!("{s} (install the model with `patina model install`)")
    }
}

/// Register (`add`) or follow a repository's indexing, reporting it as `$/progress` when the
/// client accepts it; a registered repository joins the search scope.
async fn index_with_progress(server: &Server, path: &str, name: &str, add: bool) {
    let stream = if add {
        rpc!(
            server,
            pb::repos_client::ReposClient<_>,
            add,
            pb::AddRequest {
                path: path.into(),
                force: false,
            }
        )
    } else {
        rpc!(
            server,
            pb::repos_client::ReposClient<_>,
            watch,
            pb::WatchRequest { repo: path.into() }
        )
    };
    let mut stream = match stream {
        Ok(s) => s,
        Err((_, e)) => {
            crate::log(format!("indexing {path}: {e}"));
            return;
        }
    };
    let token = format!("patina-index-{path}");
    let progress = server.client_supports_progress()
        && server
            .request(
                "window/workDoneProgress/create",
                json!({"token": token}),
                Duration::from_secs(5),
            )
            .await
            .is_some();
    let title = format!(
        "Patina: indexing {}",
        if name.is_empty() { path } else { name }
    );
    if progress {
        server.notify(
            "$/progress",
            json!({"token": token, "value": {"kind": "begin", "title": title, "percentage": 0}}),
        );
    }
    let mut last: Option<pb::IndexProgress> = None;
    loop {
        match stream.message().await {
            Ok(Some(p)) => {
                if let Some(repo) = &p.repo
                    && add
                {
                    let mut scope = server.scope.lock().expect("scope lock");
                    if !scope.contains(&repo.id) {
                        scope.push(repo.id.clone());
                    }
                }
                if progress && p.files_total > 0 {
                    let pct = (p.files_done * 100 / p.files_total).min(100);
                    server.notify(
                        "$/progress",
                        json!({"token": token, "value": {"kind": "report", "percentage": pct,
                            "message": format!("{}/{} files", p.files_done, p.files_total)}}),
                    );
                }
                last = Some(p);
            }
            Ok(None) => break,
            Err(e) => {
                crate::log(format!("indexing {path}: {}", e.message()));
                break;
            }
        }
    }
    if progress {
        let message = match &last {
            Some(p) if p.phase == pb::IndexPhase::Failed as i32 => format!("failed: {}", p.message),
            Some(p) => format!("{} files, {} changed", p.files_total, p.files_changed),
            None => "done".into(),
        };
        server.notify(
            "$/progress",
            json!({"token": token, "value": {"kind": "end", "message": message}}),
        );
    }
}

pub(crate) async fn call(server: &Server, method: &str, params: Value) -> Result<Value, Failure> {
    match method {
        "workspace/symbol" => workspace_symbol(server, &params).await,
        "textDocument/definition" => definition(server, &params).await,
        "textDocument/references" => references(server, &params).await,
        "textDocument/hover" => hover(server, &params).await,
        "patina/search" => search(server, &params).await,
        "patina/status" => status(server).await,
        "workspace/executeCommand" => execute_command(server, &params).await,
        _ => Err((METHOD_NOT_FOUND, format!("method not found: '{method}'"))),
    }
}

fn scope(server: &Server) -> Vec<String> {
    server.scope.lock().expect("scope lock").clone()
}

fn str_param<'a>(params: &'a Value, key: &str, method: &str) -> Result<&'a str, Failure> {
    params[key].as_str().ok_or_else(|| {
        (
            INVALID_PARAMS,
            format!("invalid params for {method}: \"{key}\" (a string) is required"),
        )
    })
}

async fn query(server: &Server, req: pb::QueryRequest) -> Result<pb::QueryResponse, Failure> {
    rpc!(server, pb::search_client::SearchClient<_>, query, req)
}

async fn workspace_symbol(server: &Server, params: &Value) -> Result<Value, Failure> {
    let q = str_param(params, "query", "workspace/symbol")?.trim();
    if q.is_empty() {
        return Ok(json!([]));
    }
    let resp = query(
        server,
        pb::QueryRequest {
            query: q.into(),
            limit: SYMBOL_LIMIT,
            repos: scope(server),
            snippet_lines: NAME_LINES,
            ..Default::default()
        },
    )
    .await?;
    let symbols: Vec<Value> = resp
        .hits
        .iter()
        .filter(|h| h.note.is_none() && !h.repo_root.is_empty())
        .map(|h| {
            json!({
                "name": hit_name(h),
                "kind": symbol_kind(&h.kind),
                "location": location(Path::new(&h.repo_root), &h.path, hit_line(h), h.end_line),
                "containerName": if h.parent.is_empty() { h.path.clone() } else { h.parent.clone() },
            })
        })
        .collect();
    Ok(Value::Array(symbols))
}

/// The line that names a hit's symbol (its first line when it has none, or it is not found).
fn hit_line(h: &pb::Hit) -> u32 {
    let lines: Vec<&str> = h.snippet.lines().collect();
    name_line(&lines, &h.symbol).map_or(h.start_line, |i| h.start_line + i as u32)
}

/// A graph site's line that names its symbol, read from the document (the editor's buffer, else
/// the disk): definitions start at their doc comments.
fn site_line(server: &Server, root: &Path, s: &pb::GraphSite) -> u32 {
    let Some(text) = doc_text(server, &path_to_uri(&root.join(&s.path))) else {
        return s.line;
    };
    let lines: Vec<&str> = text
        .lines()
        .skip(s.line.saturating_sub(1) as usize)
        .take((s.end_line.max(s.line) - s.line + 1) as usize)
        .collect();
    name_line(&lines, &s.symbol).map_or(s.line, |i| s.line + i as u32)
}

/// A hit's display name: its symbol, else `file:line`.
fn hit_name(h: &pb::Hit) -> String {
    if h.symbol.is_empty() {
        let file = h.path.rsplit('/').next().unwrap_or(&h.path);
        format!("{file}:{}", h.start_line)
    } else {
        h.symbol.clone()
    }
}

/// The text of a document: as the editor sent it, else from disk.
fn doc_text(server: &Server, uri: &str) -> Option<String> {
    if let Some(d) = server.docs.lock().expect("docs lock").get(uri) {
        return Some(d.text.clone());
    }
    std::fs::read_to_string(uri_to_path(uri)?).ok()
}

/// The identifier at a `TextDocumentPositionParams`.
fn symbol_at(server: &Server, params: &Value, method: &str) -> Result<Option<String>, Failure> {
    let uri = params["textDocument"]["uri"].as_str().ok_or_else(|| {
        (
            INVALID_PARAMS,
            format!("invalid params for {method}: textDocument.uri is required"),
        )
    })?;
    let (Some(line), Some(ch)) = (
        params["position"]["line"].as_u64(),
        params["position"]["character"].as_u64(),
    ) else {
        return Err((
            INVALID_PARAMS,
            format!("invalid params for {method}: position {{line, character}} is required"),
        ));
    };
    let Some(text) = doc_text(server, uri) else {
        return Err((REQUEST_FAILED, format!("cannot read {uri}")));
    };
    Ok(word_at(&text, line as u32, ch as u32))
}

async fn navigate(
    server: &Server,
    what: &str,
    symbol: &str,
) -> Result<Vec<pb::GraphSite>, Failure> {
    let req = pb::NavigateRequest {
        what: what.into(),
        symbol: symbol.into(),
        repos: scope(server),
    };
    Ok(rpc!(server, pb::graph_client::GraphClient<_>, navigate, req)?.sites)
}

/// Repository roots by name (graph sites name their repository).
async fn roots_by_name(
    server: &Server,
) -> Result<std::collections::HashMap<String, PathBuf>, Failure> {
    let list = rpc!(
        server,
        pb::repos_client::ReposClient<_>,
        list,
        pb::ListRequest {}
    )?;
    Ok(list
        .repos
        .into_iter()
        .map(|r| (r.name, PathBuf::from(r.root)))
        .collect())
}

/// Locations of sites; `definitions`: start at the line naming the symbol.
async fn site_locations(
    server: &Server,
    sites: &[pb::GraphSite],
    definitions: bool,
) -> Result<Vec<Value>, Failure> {
    if sites.is_empty() {
        return Ok(Vec::new());
    }
    let roots = roots_by_name(server).await?;
    let mut seen = std::collections::HashSet::new();
    Ok(sites
        .iter()
        .filter_map(|s| {
            let root = roots.get(&s.repo)?;
            let line = if definitions {
                site_line(server, root, s)
            } else {
                s.line
            };
            seen.insert((s.repo.clone(), s.path.clone(), s.line))
                .then(|| location(root, &s.path, line, s.end_line.max(line)))
        })
        .collect())
}

async fn definition(server: &Server, params: &Value) -> Result<Value, Failure> {
    let Some(word) = symbol_at(server, params, "textDocument/definition")? else {
        return Ok(Value::Null);
    };
    let sites = navigate(server, "defs", &word).await?;
    let mut locations = site_locations(server, &sites, true).await?;
    if locations.is_empty() {
        // Not in the code graph (a language without graph facts): chunks named so.
        let resp = query(
            server,
            pb::QueryRequest {
                query: word.clone(),
                limit: 20,
                repos: scope(server),
                snippet_lines: NAME_LINES,
                ..Default::default()
            },
        )
        .await?;
        locations = resp
            .hits
            .iter()
            .filter(|h| h.symbol == word && !h.repo_root.is_empty())
            .map(|h| location(Path::new(&h.repo_root), &h.path, hit_line(h), h.end_line))
            .collect();
    }
    Ok(Value::Array(locations))
}

async fn references(server: &Server, params: &Value) -> Result<Value, Failure> {
    let Some(word) = symbol_at(server, params, "textDocument/references")? else {
        return Ok(Value::Null);
    };
    let mut locations = Vec::new();
    if params["context"]["includeDeclaration"] == json!(true) {
        let defs = navigate(server, "defs", &word).await?;
        locations.extend(site_locations(server, &defs, true).await?);
    }
    let refs: Vec<pb::GraphSite> = navigate(server, "refs", &word)
        .await?
        .into_iter()
        .map(|s| pb::GraphSite {
            end_line: s.line,
            ..s
        })
        .collect();
    locations.extend(site_locations(server, &refs, false).await?);
    Ok(Value::Array(locations))
}

async fn hover(server: &Server, params: &Value) -> Result<Value, Failure> {
    let Some(word) = symbol_at(server, params, "textDocument/hover")? else {
        return Ok(Value::Null);
    };
    let sites = navigate(server, "defs", &word).await?;
    // Prefer a definition in the hovered file.
    let here = params["textDocument"]["uri"].as_str().unwrap_or_default();
    let roots = if sites.is_empty() {
        Default::default()
    } else {
        roots_by_name(server).await?
    };
    let is_here = |s: &pb::GraphSite| {
        roots
            .get(&s.repo)
            .is_some_and(|r| path_to_uri(&r.join(&s.path)) == here)
    };
    let Some(site) = sites.iter().find(|s| is_here(s)).or(sites.first()) else {
        return Ok(Value::Null);
    };
    let start = site.line.saturating_sub(40).max(1);
    let repo_key = roots
        .get(&site.repo)
        .map_or(site.repo.clone(), |r| r.to_string_lossy().into_owned());
    let file = rpc!(
        server,
        pb::files_client::FilesClient<_>,
        get_file,
        pb::GetFileRequest {
            repo: repo_key.clone(),
            path: site.path.clone(),
            start_line: start,
            end_line: site.end_line.max(site.line).min(site.line + 40),
        }
    )?;
    let lines: Vec<&str> = file.text.lines().collect();
    let first = (site.line - file.start_line) as usize;
    let def = first + name_line(lines.get(first..).unwrap_or_default(), &site.symbol).unwrap_or(0);
    let (signature, doc) = signature_and_doc(&lines, def);
    let mut md = format!("```{}\n{signature}\n```\n", fence_language(&site.path));
    if !doc.is_empty() {
        md.push_str(&format!("\n{doc}\n"));
    }
    let more = if sites.len() > 1 {
        format!(" (1 of {} definitions)", sites.len())
    } else {
        String::new()
    };
    md.push_str(&format!(
        "\n*{}* `{}` — {}:{}{more}",
        site.kind,
        site.symbol,
        site.path,
        site.line + (def - first) as u32
    ));
    // When the definition's lines last changed: blame of the definition's chunk (a query for the
    // name in its own file, asking for blame); best effort.
    let line = site.line + (def - first) as u32;
    let blamed = query(
        server,
        pb::QueryRequest {
            query: site.symbol.clone(),
            limit: 10,
            repos: vec![repo_key.clone()],
            path_globs: vec![format!("/{}", site.path)],
            oracles: vec!["symbol".into(), "lexical".into()],
            blame: true,
            ..Default::default()
        },
    )
    .await;
    if let Ok(resp) = blamed
        && let Some(b) = resp
            .hits
            .iter()
            .filter(|h| h.path == site.path && h.start_line <= line && line <= h.end_line)
            .min_by_key(|h| h.end_line - h.start_line)
            .and_then(|h| h.blame.as_ref())
    {
        md.push_str(&if b.commit.is_empty() {
            "\n\nits lines have changes not committed yet".to_string()
        } else {
            format!(
                "\n\nlast changed {} by {} in {}: {}",
                date(b.time_unix),
                b.author,
                b.short,
                b.subject
            )
        });
    }
    Ok(json!({
        "contents": {"kind": "markdown", "value": md},
    }))
}

/// `patina/status`: how fresh the workspace's repositories are, and whether semantic search is on.
async fn status(server: &Server) -> Result<Value, Failure> {
    let list = rpc!(
        server,
        pb::repos_client::ReposClient<_>,
        list,
        pb::ListRequest {}
    )?;
    let scope = scope(server);
    let repos: Vec<Value> = list
        .repos
        .iter()
        .filter(|r| scope.is_empty() || scope.contains(&r.id))
        .map(|r| {
            let f = r.freshness.clone().unwrap_or_default();
            json!({
                "id": r.id, "name": r.name, "root": r.root, "files": r.files,
                "indexing": r.indexing, "fresh": f.fresh, "pendingFiles": f.pending_files,
                "embedBacklog": f.embed_backlog, "ageMs": f.age_ms,
            })
        })
        .collect();
    Ok(json!({"repos": repos, "semantic": list.semantic}))
}

/// `patina/search` (and `patina.search`): hits with LSP ranges and oracle provenance.
async fn search(server: &Server, params: &Value) -> Result<Value, Failure> {
    let q = str_param(params, "query", "patina/search")?
        .trim()
        .to_string();
    if q.is_empty() {
        return Err((
            INVALID_PARAMS,
            "invalid params for patina/search: the query is empty".into(),
        ));
    }
    let granularity = match params["granularity"].as_str().unwrap_or("chunk") {
        "chunk" => pb::Granularity::Chunk,
        "file" => pb::Granularity::File,
        "doc" => pb::Granularity::Doc,
        other => {
            return Err((
                INVALID_PARAMS,
                format!(
                    "invalid params for patina/search: granularity '{other}' (chunk, file or doc)"
                ),
            ));
        }
    };
    let strings = |key: &str| -> Vec<String> {
        params[key]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect()
    };
    let snippet_lines = params["snippetLines"].as_u64().unwrap_or(3).min(50) as u32;
    let resp = query(
        server,
        pb::QueryRequest {
            query: q,
            limit: params["limit"].as_u64().unwrap_or(20).clamp(1, 200) as u32,
            repos: scope(server),
            path_globs: strings("paths"),
            granularity: granularity as i32,
            oracles: strings("oracles"),
            snippet_lines: snippet_lines.max(NAME_LINES),
            ..Default::default()
        },
    )
    .await?;
    let hits: Vec<Value> = resp
        .hits
        .iter()
        .map(|h| {
            let (uri, range) = if h.repo_root.is_empty() {
                (Value::Null, Value::Null)
            } else {
                (
                    json!(path_to_uri(&Path::new(&h.repo_root).join(&h.path))),
                    line_range(hit_line(h), h.end_line),
                )
            };
            let snippet: Vec<&str> = h.snippet.lines().take(snippet_lines as usize).collect();
            json!({
                "uri": uri,
                "range": range,
                "path": h.path,
                "repoRoot": h.repo_root,
                "startLine": h.start_line,
                "endLine": h.end_line,
                "name": hit_name(h),
                "kind": h.kind,
                "symbolKind": symbol_kind(&h.kind),
                "container": h.parent,
                "score": h.score,
                "provenance": h.provenance.iter().map(|p| json!({
                    "oracle": p.oracle, "rank": p.rank, "score": p.score,
                })).collect::<Vec<_>>(),
                "snippet": snippet.join("\n"),
            })
        })
        .collect();
    let freshness: Vec<Value> = resp
        .freshness
        .iter()
        .map(|f| {
            json!({
                "repo": f.repo_name, "fresh": f.fresh, "indexing": f.indexing,
                "pendingFiles": f.pending_files, "embedBacklog": f.embed_backlog,
                "ageMs": f.age_ms,
            })
        })
        .collect();
    Ok(json!({
        "hits": hits,
        "intent": resp.intent,
        "notices": resp.notices,
        "freshness": freshness,
        "tookUs": resp.took_us,
    }))
}

async fn execute_command(server: &Server, params: &Value) -> Result<Value, Failure> {
    let command = str_param(params, "command", "workspace/executeCommand")?;
    let args = params["arguments"].as_array().cloned().unwrap_or_default();
    let first = args.first().cloned().unwrap_or(Value::Null);
    match command {
        "patina.search" => {
            let p = match first {
                Value::String(q) => json!({"query": q}),
                other => other,
            };
            search(server, &p).await
        }
        "patina.context" => {
            let (q, budget) = match &first {
                Value::String(q) => (q.clone(), args.get(1).and_then(Value::as_u64)),
                v => (
                    v["query"].as_str().unwrap_or_default().to_string(),
                    v["budget"].as_u64(),
                ),
            };
            if q.trim().is_empty() {
                return Err((INVALID_PARAMS, "patina.context needs a query".into()));
            }
            context(server, q, budget.unwrap_or(0) as u32).await
        }
        "patina.related" => {
            let target = match &first {
                Value::String(s) => s.clone(),
                v => v["uri"].as_str().unwrap_or_default().to_string(),
            };
            related(server, &target).await
        }
        other => Err((
            INVALID_PARAMS,
            format!(
                "unknown command '{other}'; commands: {}",
                COMMANDS.join(", ")
            ),
        )),
    }
}

async fn context(server: &Server, q: String, budget: u32) -> Result<Value, Failure> {
    let resp = rpc!(
        server,
        pb::search_client::SearchClient<_>,
        context,
        pb::ContextRequest {
            query: q,
            token_budget: budget,
            repos: scope(server),
            format: pb::ContextFormat::Markdown as i32,
            ..Default::default()
        }
    )?;
    let items: Vec<Value> = resp
        .items
        .iter()
        .map(|i| {
            let uri = (!i.repo_root.is_empty())
                .then(|| path_to_uri(&Path::new(&i.repo_root).join(&i.path)));
            json!({
                "ref": i.r#ref, "uri": uri, "range": line_range(i.start_line, i.end_line),
                "path": i.path, "startLine": i.start_line, "endLine": i.end_line,
                "symbols": i.symbols, "oracles": i.oracles, "truncated": i.truncated,
            })
        })
        .collect();
    Ok(json!({
        "text": resp.text, "items": items, "usedTokens": resp.used_tokens,
        "budgetTokens": resp.budget_tokens, "omitted": resp.omitted, "notices": resp.notices,
    }))
}

async fn related(server: &Server, target: &str) -> Result<Value, Failure> {
    let abs = if target.starts_with("file://") {
        uri_to_path(target)
    } else {
        Some(PathBuf::from(target)).filter(|p| p.is_absolute())
    }
    .ok_or_else(|| {
        (
            INVALID_PARAMS,
            "patina.related needs a file URI or an absolute path".to_string(),
        )
    })?;
    let abs = std::fs::canonicalize(&abs).unwrap_or(abs);
    let list = rpc!(
        server,
        pb::repos_client::ReposClient<_>,
        list,
        pb::ListRequest {}
    )?;
    let Some(repo) = list
        .repos
        .iter()
        .filter(|r| abs.starts_with(&r.root))
        .max_by_key(|r| r.root.len())
    else {
        return Err((
            REQUEST_FAILED,
            format!("{} is not in a registered repository", abs.display()),
        ));
    };
    let rel = abs
        .strip_prefix(&repo.root)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let resp = rpc!(
        server,
        pb::history_client::HistoryClient<_>,
        related,
        pb::RelatedRequest {
            repo: repo.id.clone(),
            path: rel,
            limit: 20,
        }
    )?;
    let root = Path::new(&repo.root);
    Ok(json!({
        "path": resp.path,
        "commits": resp.commits,
        "files": resp.files.iter().map(|f| json!({
            "uri": path_to_uri(&root.join(&f.path)), "path": f.path,
            "support": f.support, "confidence": f.confidence,
        })).collect::<Vec<_>>(),
    }))
}
