//! `textDocument/definition` and `textDocument/references` from the code graph
//! (`Graph.Navigate`), definitions falling back to the chunks named so; the identifier under the
//! cursor, and graph sites as locations.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use lsp_types::{GotoDefinitionResponse, Location};
use patina_proto::v1 as pb;
use serde_json::{Value, json};

use crate::convert::{location, name_line, word_at};
use crate::jsonrpc::{Failure, INVALID_PARAMS, REQUEST_FAILED};
use crate::methods::common::{NAME_LINES, doc_text, doc_text_in, hit_line, query, rpc};
use crate::state::State;

/// The identifier at a `TextDocumentPositionParams`.
pub(crate) fn symbol_at(
    state: &State,
    params: &Value,
    method: &str,
) -> Result<Option<String>, Failure> {
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
    let Some(text) = doc_text(state, uri) else {
        return Err((REQUEST_FAILED, format!("cannot read {uri}")));
    };
    Ok(word_at(&text, line as u32, ch as u32))
}

/// The graph's `what` (`defs`, `refs`) of `symbol` in the search scope.
pub(crate) async fn navigate(
    state: &State,
    what: &str,
    symbol: &str,
) -> Result<Vec<pb::GraphSite>, Failure> {
    let req = pb::NavigateRequest {
        what: what.into(),
        symbol: symbol.into(),
        repos: state.scope().await,
    };
    Ok(rpc!(state, pb::graph_client::GraphClient<_>, navigate, req)?.sites)
}

/// Repository roots by name (graph sites name their repository).
pub(crate) async fn roots_by_name(state: &State) -> Result<HashMap<String, PathBuf>, Failure> {
    let list = rpc!(
        state,
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

/// A graph site's line that names its symbol, read from the document (the editor's buffer, else
/// the disk): definitions start at their doc comments.
fn site_line(state: &State, root: &Path, s: &pb::GraphSite) -> u32 {
    let Some(text) = doc_text_in(state, root, &s.path) else {
        return s.line;
    };
    let lines: Vec<&str> = text
        .lines()
        .skip(s.line.saturating_sub(1) as usize)
        .take((s.end_line.max(s.line) - s.line + 1) as usize)
        .collect();
    name_line(&lines, &s.symbol).map_or(s.line, |i| s.line + i as u32)
}

/// Locations of sites; `definitions`: start at the line naming the symbol.
async fn site_locations(
    state: &State,
    sites: &[pb::GraphSite],
    definitions: bool,
) -> Result<Vec<Location>, Failure> {
    if sites.is_empty() {
        return Ok(Vec::new());
    }
    let roots = roots_by_name(state).await?;
    let mut seen = HashSet::new();
    Ok(sites
        .iter()
        .filter_map(|s| {
            let root = roots.get(&s.repo)?;
            let line = if definitions {
                site_line(state, root, s)
            } else {
                s.line
            };
            seen.insert((s.repo.clone(), s.path.clone(), s.line))
                .then(|| location(root, &s.path, line, s.end_line.max(line)))
        })
        .collect())
}

pub(crate) async fn definition(
    state: &State,
    params: &Value,
) -> Result<Option<GotoDefinitionResponse>, Failure> {
    let Some(word) = symbol_at(state, params, "textDocument/definition")? else {
        return Ok(None);
    };
    let sites = navigate(state, "defs", &word).await?;
    let mut locations = site_locations(state, &sites, true).await?;
    if locations.is_empty() {
        // Not in the code graph (a language without graph facts): chunks named so.
        let resp = query(
            state,
            pb::QueryRequest {
                query: word.clone(),
                limit: 20,
                repos: state.scope().await,
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
    Ok(Some(GotoDefinitionResponse::Array(locations)))
}

pub(crate) async fn references(
    state: &State,
    params: &Value,
) -> Result<Option<Vec<Location>>, Failure> {
    let Some(word) = symbol_at(state, params, "textDocument/references")? else {
        return Ok(None);
    };
    let mut locations = Vec::new();
    if params["context"]["includeDeclaration"] == json!(true) {
        let defs = navigate(state, "defs", &word).await?;
        locations.extend(site_locations(state, &defs, true).await?);
    }
    let refs: Vec<pb::GraphSite> = navigate(state, "refs", &word)
        .await?
        .into_iter()
        .map(|s| pb::GraphSite {
            end_line: s.line,
            ..s
        })
        .collect();
    locations.extend(site_locations(state, &refs, false).await?);
    Ok(Some(locations))
}
