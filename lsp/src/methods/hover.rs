//! `textDocument/hover`: the definition of the identifier under the cursor (the one in the
//! hovered file first) — its signature, doc comment and place, and when its lines last changed.

use lsp_types::{Hover, HoverContents, MarkupContent, MarkupKind};
use patina_proto::v1 as pb;
use serde_json::Value;

use crate::convert::{date, fence_language, name_line, path_to_uri, signature_and_doc};
use crate::jsonrpc::Failure;
use crate::methods::common::{query, rpc};
use crate::methods::navigation::{navigate, roots_by_name, symbol_at};
use crate::state::State;

pub(crate) async fn hover(state: &State, params: &Value) -> Result<Option<Hover>, Failure> {
    let Some(word) = symbol_at(state, params, "textDocument/hover")? else {
        return Ok(None);
    };
    let sites = navigate(state, "defs", &word).await?;
    // Prefer a definition in the hovered file.
    let here = params["textDocument"]["uri"].as_str().unwrap_or_default();
    let roots = if sites.is_empty() {
        Default::default()
    } else {
        roots_by_name(state).await?
    };
    let is_here = |s: &pb::GraphSite| {
        roots
            .get(&s.repo)
            .is_some_and(|r| path_to_uri(&r.join(&s.path)) == here)
    };
    let Some(site) = sites.iter().find(|s| is_here(s)).or(sites.first()) else {
        return Ok(None);
    };
    let start = site.line.saturating_sub(40).max(1);
    let repo_key = roots
        .get(&site.repo)
        .map_or(site.repo.clone(), |r| r.to_string_lossy().into_owned());
    let file = rpc!(
        state,
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
        state,
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
    Ok(Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: md,
        }),
        range: None,
    }))
}
