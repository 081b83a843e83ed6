//! `workspace/executeCommand`: `patina.search` (as `patina/search`), `patina.context` (a token
//! budgeted context for a query, `Search.Context`) and `patina.related` (files that change with a
//! file, `History.Related`). Their results are Patina's own shapes.

use std::path::{Path, PathBuf};

use lsp_types::{Range, Uri};
use patina_proto::v1 as pb;
use serde::Serialize;
use serde_json::{Value, json};

use crate::convert::{file_uri, line_range, uri_to_path};
use crate::jsonrpc::{Failure, INVALID_PARAMS, REQUEST_FAILED, to_json};
use crate::methods::common::{rpc, str_param};
use crate::methods::search::search;
use crate::state::State;

/// The commands of `workspace/executeCommand`.
pub(crate) const COMMANDS: [&str; 3] = ["patina.search", "patina.context", "patina.related"];

/// The result of `patina.context`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Context {
    text: String,
    items: Vec<ContextItem>,
    used_tokens: u32,
    budget_tokens: u32,
    omitted: u32,
    notices: Vec<String>,
}

/// What the context holds, in order; `uri` is null outside a repository (notes).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ContextItem {
    r#ref: String,
    uri: Option<Uri>,
    range: Range,
    path: String,
    start_line: u32,
    end_line: u32,
    symbols: Vec<String>,
    oracles: Vec<String>,
    truncated: bool,
}

/// The result of `patina.related`.
#[derive(Serialize)]
struct Related {
    path: String,
    commits: u32,
    files: Vec<RelatedFile>,
}

#[derive(Serialize)]
struct RelatedFile {
    uri: Uri,
    path: String,
    support: u32,
    confidence: f64,
}

pub(crate) async fn execute_command(state: &State, params: &Value) -> Result<Value, Failure> {
    let command = str_param(params, "command", "workspace/executeCommand")?;
    let args = params["arguments"].as_array().cloned().unwrap_or_default();
    let first = args.first().cloned().unwrap_or(Value::Null);
    match command {
        "patina.search" => {
            // A query string, or the params of `patina/search`.
            let p = match first {
                Value::String(q) => json!({"query": q}),
                other => other,
            };
            to_json(search(state, &p).await?)
        }
        "patina.context" => {
            // A query and a budget, or `{query, budget, expand}`; `expand` is on unless turned
            // off, as for MCP `patina_context` and `patina q --expand`: one answer, every client.
            let (q, budget, expand) = match &first {
                Value::String(q) => (q.clone(), args.get(1).and_then(Value::as_u64), true),
                v => (
                    v["query"].as_str().unwrap_or_default().to_string(),
                    v["budget"].as_u64(),
                    v["expand"].as_bool().unwrap_or(true),
                ),
            };
            if q.trim().is_empty() {
                return Err((INVALID_PARAMS, "patina.context needs a query".into()));
            }
            to_json(context(state, q, budget.unwrap_or(0) as u32, expand).await?)
        }
        "patina.related" => {
            let target = match &first {
                Value::String(s) => s.clone(),
                v => v["uri"].as_str().unwrap_or_default().to_string(),
            };
            to_json(related(state, &target).await?)
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

async fn context(state: &State, q: String, budget: u32, expand: bool) -> Result<Context, Failure> {
    let resp = rpc!(
        state,
        pb::search_client::SearchClient<_>,
        context,
        pb::ContextRequest {
            query: q,
            token_budget: budget,
            repos: state.scope().await,
            format: pb::ContextFormat::Markdown as i32,
            expand,
            ..Default::default()
        }
    )?;
    let items = resp
        .items
        .into_iter()
        .map(|i| ContextItem {
            uri: (!i.repo_root.is_empty())
                .then(|| file_uri(&Path::new(&i.repo_root).join(&i.path))),
            range: line_range(i.start_line, i.end_line),
            r#ref: i.r#ref,
            path: i.path,
            start_line: i.start_line,
            end_line: i.end_line,
            symbols: i.symbols,
            oracles: i
                .oracles
                .iter()
                .map(|o| patina_proto::kinds::oracle_name(*o).to_string())
                .collect(),
            truncated: i.truncated,
        })
        .collect();
    Ok(Context {
        text: resp.text,
        items,
        used_tokens: resp.used_tokens,
        budget_tokens: resp.budget_tokens,
        omitted: resp.omitted,
        notices: crate::methods::search::with_remedies(resp.notices, &resp.remedies),
    })
}

async fn related(state: &State, target: &str) -> Result<Related, Failure> {
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
        state,
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
        state,
        pb::history_client::HistoryClient<_>,
        related,
        pb::RelatedRequest {
            repo: repo.id.clone(),
            path: rel,
            limit: 20,
        }
    )?;
    let root = Path::new(&repo.root);
    Ok(Related {
        path: resp.path,
        commits: resp.commits,
        files: resp
            .files
            .into_iter()
            .map(|f| RelatedFile {
                uri: file_uri(&root.join(&f.path)),
                path: f.path,
                support: f.support,
                confidence: f.confidence,
            })
            .collect(),
    })
}
