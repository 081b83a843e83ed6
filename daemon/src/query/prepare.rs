//! What a request becomes before the oracles run: checked (an empty query is an error, a long
//! one cut), its hard filters, what the repositories in scope say about the answer's completeness,
//! and the commit it names, if it names one.

use std::sync::Arc;

use anyhow::Result;
use patina_core::{PathFilter, UserError};

use crate::query::notices::repository_notices;
use crate::query::request::{
    DEFAULT_LIMIT, Granularity, MAX_LIMIT, MAX_QUERY_BYTES, SearchRequest,
};
use crate::state::repo::Repo;

/// Check `req` (an empty query is an error; an over-long one is cut, with a notice); the number
/// of results it asks for.
pub(crate) fn validate(req: &mut SearchRequest, notices: &mut Vec<String>) -> Result<usize> {
    if req.text.trim().is_empty() {
        return Err(UserError::Invalid("empty query".into()).into());
    }
    if req.text.len() > MAX_QUERY_BYTES {
        let mut cut = MAX_QUERY_BYTES;
        while !req.text.is_char_boundary(cut) {
            cut -= 1;
        }
        req.text.truncate(cut);
        notices.push(format!(
            "query truncated to its first {MAX_QUERY_BYTES} bytes"
        ));
    }
    Ok(match req.limit {
        0 => DEFAULT_LIMIT,
        n => n.min(MAX_LIMIT),
    })
}

/// The hard filters of `req` (globs, roles, licences, docs only), `None` when there are none;
/// an invalid glob or licence id is an error.
pub(crate) fn filter_of(req: &SearchRequest) -> Result<Option<Arc<PathFilter>>> {
    if let Some(bad) = req.licences.allowed.iter().find(|id| {
        id.is_empty()
            || !id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '+'))
    }) {
        return Err(UserError::Invalid(format!(
            "'{bad}' is not an SPDX licence id (e.g. MIT, Apache-2.0, BSD-3-Clause)"
        ))
        .into());
    }
    let docs_only = req.granularity == Granularity::Doc;
    Ok(
        if docs_only
            || req.globs.iter().any(|g| !g.trim().is_empty())
            || !req.roles.is_empty()
            || !req.exclude_roles.is_empty()
            || !req.licences.is_empty()
        {
            Some(Arc::new(
                PathFilter::new(&req.globs)?
                    .docs_only(docs_only)
                    .with_roles(&req.roles, &req.exclude_roles)
                    .with_licences(req.licences.clone()),
            ))
        } else {
            None
        },
    )
}

/// What the repositories in scope say about the answer's completeness: still indexing, still
/// embedding (and answering with static vectors meanwhile, when the semantic oracle was asked).
pub(crate) fn scope_notices(repos: &[Arc<Repo>], semantic_asked: bool) -> Vec<String> {
    let mut partial = Vec::new();
    let mut indexing = Vec::new();
    let mut statics = 0;
    for r in repos {
        let backlog = r.backlog();
        if semantic_asked && backlog > 0 {
            statics += r.provisional_count();
            partial.push((
                r.record().name,
                backlog as u64,
                r.index().chunk_count() as u64,
            ));
        }
        if let Some(rx) = r.running_job() {
            let p = rx.borrow().clone();
            indexing.push((r.record().name, p.files_done, p.files_total));
        }
    }
    let mut notices = repository_notices(&partial, &indexing);
    if statics > 0 {
        notices.push(format!(
            "{statics} of the chunks not embedded yet answer with static vectors (a table \
             distilled from the model) until the model embeds them"
        ));
    }
    notices
}

/// When `text` names a commit of a repository in scope (the first that has it): the notices
/// saying what it is, and its changed regions at HEAD as frames. Blocking git calls run on the
/// blocking pool.
pub(crate) async fn commit_locations(
    text: &str,
    repos: &[Arc<Repo>],
) -> Option<(Vec<String>, Vec<patina_retrieve::query::Frame>)> {
    if !crate::services::commits::looks_like_rev(text) {
        return None;
    }
    let rev = text.trim().to_string();
    let roots: Vec<std::path::PathBuf> = repos.iter().map(|r| r.root().to_path_buf()).collect();
    let found = tokio::task::spawn_blocking(move || {
        roots
            .iter()
            .find_map(|root| crate::services::commits::changes(root, &rev))
    })
    .await
    .ok()??;
    let short: String = found.hash.chars().take(10).collect();
    let day = found.date.split('T').next().unwrap_or(&found.date);
    let mut files: Vec<&str> = found.files.iter().take(5).map(String::as_str).collect();
    if found.files.len() > 5 {
        files.push("…");
    }
    let mut notices = vec![format!(
        "commit {short} ({day}, {}): {} — {} file(s): {}",
        found.author,
        found.subject,
        found.files.len(),
        files.join(", ")
    )];
    if found.at_head.is_empty() {
        notices.push(format!(
            "what commit {short} changed is no longer in the code at HEAD: answering the text"
        ));
    }
    let frames = found
        .at_head
        .into_iter()
        .map(|(path, line)| patina_retrieve::query::Frame {
            path,
            line: Some(line),
            function: None,
        })
        .collect();
    Some((notices, frames))
}
