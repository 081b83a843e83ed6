//! `patina/search` (and the `patina.search` command): Patina's own method — hits with LSP ranges
//! and oracle provenance, the query's intent, notices and the freshness of each repository.

use std::path::Path;

use lsp_types::{Range, SymbolKind, Uri};
use patina_proto::v1 as pb;
use serde::Serialize;
use serde_json::Value;

use crate::convert::{file_uri, line_range, symbol_kind};
use crate::jsonrpc::{Failure, INVALID_PARAMS};
use crate::methods::common::{NAME_LINES, hit_line, hit_name, query, str_param};
use crate::state::State;

/// The result of `patina/search`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SearchResult {
    hits: Vec<SearchHit>,
    intent: String,
    notices: Vec<String>,
    freshness: Vec<RepoFreshness>,
    took_us: u64,
}

/// One hit; `uri` and `range` are null for hits outside a repository (notes).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SearchHit {
    uri: Option<Uri>,
    range: Option<Range>,
    path: String,
    repo_root: String,
    start_line: u32,
    end_line: u32,
    name: String,
    kind: String,
    symbol_kind: SymbolKind,
    container: String,
    score: f64,
    provenance: Vec<Provenance>,
    snippet: String,
    /// With `org`: a repository of the team's store not cloned here (`uri` and `range` null).
    #[serde(skip_serializing_if = "Option::is_none")]
    published: Option<Published>,
}

/// Where a hit of the team's store comes from.
#[derive(Serialize)]
struct Published {
    remote: String,
    name: String,
    commit: String,
}

/// An oracle that found the hit: its rank and its own score.
#[derive(Serialize)]
struct Provenance {
    oracle: String,
    rank: u32,
    score: f32,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RepoFreshness {
    repo: String,
    fresh: bool,
    indexing: bool,
    pending_files: i64,
    embed_backlog: u64,
    age_ms: u64,
}

pub(crate) async fn search(state: &State, params: &Value) -> Result<SearchResult, Failure> {
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
        state,
        pb::QueryRequest {
            query: q,
            limit: params["limit"].as_u64().unwrap_or(20).clamp(1, 200) as u32,
            repos: state.scope().await,
            path_globs: strings("paths"),
            granularity: granularity as i32,
            oracles: strings("oracles"),
            snippet_lines: snippet_lines.max(NAME_LINES),
            org: params["org"].as_bool().unwrap_or(false),
            ..Default::default()
        },
    )
    .await?;
    let hits = resp
        .hits
        .iter()
        .map(|h| {
            let in_repo = !h.repo_root.is_empty();
            let snippet: Vec<&str> = h.snippet.lines().take(snippet_lines as usize).collect();
            SearchHit {
                uri: in_repo.then(|| file_uri(&Path::new(&h.repo_root).join(&h.path))),
                range: in_repo.then(|| line_range(hit_line(h), h.end_line)),
                path: h.path.clone(),
                repo_root: h.repo_root.clone(),
                start_line: h.start_line,
                end_line: h.end_line,
                name: hit_name(h),
                kind: h.kind.clone(),
                symbol_kind: symbol_kind(&h.kind),
                container: h.parent.clone(),
                score: h.score,
                provenance: h
                    .provenance
                    .iter()
                    .map(|p| Provenance {
                        oracle: patina_proto::kinds::oracle_name(p.oracle).to_string(),
                        rank: p.rank,
                        score: p.score,
                    })
                    .collect(),
                snippet: snippet.join("\n"),
                published: h.published.as_ref().map(|p| Published {
                    remote: p.remote.clone(),
                    name: p.name.clone(),
                    commit: p.commit.clone(),
                }),
            }
        })
        .collect();
    let freshness = resp
        .freshness
        .iter()
        .map(|f| RepoFreshness {
            repo: f.repo_name.clone(),
            fresh: f.fresh,
            indexing: f.indexing,
            pending_files: f.pending_files,
            embed_backlog: f.embed_backlog,
            age_ms: f.age_ms,
        })
        .collect();
    Ok(SearchResult {
        hits,
        intent: patina_proto::kinds::intent_name(resp.intent).to_string(),
        notices: with_remedies(resp.notices, &resp.remedies),
        freshness,
        took_us: resp.took_us,
    })
}

/// An answer's notices, then what to do about them (its remedies, `patina_core::Remedy`, in a
/// shell's words: the editor's user runs them).
pub(crate) fn with_remedies(notices: Vec<String>, remedies: &[i32]) -> Vec<String> {
    patina_proto::kinds::notices_with_remedies(&notices, remedies, patina_core::Remedy::for_shell)
}
