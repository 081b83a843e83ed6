//! `Search.Context`: the context an agent reads in one call. Runs a chunk-level search, merges hits
//! whose line ranges overlap or touch in the same file (so no line appears twice), then fills a
//! token budget (≈ characters / 4) in rank order and renders the result as XML (default), Markdown
//! or JSON, every piece attributed as `path:start-end` (or `session:<name>#<n>` for a note). The
//! merging, the budget and the rendering are `patina_retrieve::context` (pure); this module reads
//! the texts and the surroundings.
//! With `expand`, the best hits bring what they need to be read on their own
//! ([`patina_index::expansion`]: a method's class header, the imports it uses, the signatures of
//! what it calls and of its siblings; a section's parent headings and subsection titles), each
//! piece attributed and counted against the same budget.

use std::collections::BTreeMap;

use anyhow::Result;
use patina_core::tokens::approx_tokens as tokens;
use patina_index::expansion::surroundings;
pub(crate) use patina_retrieve::context::Format;
use patina_retrieve::context::{self, ContextItem, Piece, absorb, render};

use crate::query::engine::QueryEngine;
use crate::query::request::{HitItem, SearchHit, SearchRequest};

pub(crate) const DEFAULT_BUDGET: usize = 6000;
const MIN_BUDGET: usize = 100;
const MAX_BUDGET: usize = 200_000;
/// With `expand`, the surroundings of this many of the best chunk hits are gathered.
const EXPANDED_HITS: usize = 4;

#[derive(Clone, Debug, Default)]
pub(crate) struct ContextRequest {
    pub text: String,
    /// 0 = [`DEFAULT_BUDGET`].
    pub budget_tokens: usize,
    pub repos: Vec<String>,
    pub globs: Vec<String>,
    pub oracles: Vec<String>,
    pub format: Format,
    pub roles: Vec<patina_core::FileRole>,
    pub exclude_roles: Vec<patina_core::FileRole>,
    pub near: Vec<String>,
    /// Add the surroundings of the best hits ([`patina_index::expansion`]).
    pub expand: bool,
    /// Complete or error (`SearchRequest::complete`).
    pub complete: bool,
    /// Only files under these licences (`SearchRequest::licences`).
    pub licences: patina_core::LicenceFilter,
}

pub(crate) struct Context {
    /// The rendered context.
    pub text: String,
    pub items: Vec<ContextItem>,
    pub used_tokens: usize,
    pub budget_tokens: usize,
    /// Merged results that did not fit.
    pub omitted: usize,
    pub notices: Vec<String>,
}

pub(crate) async fn assemble(engine: &QueryEngine, req: ContextRequest) -> Result<Context> {
    let budget = match req.budget_tokens {
        0 => DEFAULT_BUDGET,
        n => n.clamp(MIN_BUDGET, MAX_BUDGET),
    };
    let res = engine
        .search(SearchRequest {
            text: req.text.clone(),
            limit: (budget / 120).clamp(10, 200),
            repos: req.repos.clone(),
            globs: req.globs.clone(),
            oracles: req.oracles.clone(),
            roles: req.roles.clone(),
            exclude_roles: req.exclude_roles.clone(),
            near: req.near.clone(),
            complete: req.complete,
            licences: req.licences.clone(),
            ..Default::default()
        })
        .await?;
    let mut notices = res.notices;
    // Chunk texts come from the store: read them on the blocking pool.
    let hits = res.hits;
    let expand = req.expand;
    let pieces = tokio::task::spawn_blocking(move || merge(hits, expand))
        .await
        .map_err(|e| anyhow::anyhow!("reading context texts failed: {e}"))??;

    let filled = context::fill(&req.text, pieces, budget, req.format);
    let (items, omitted) = (filled.items, filled.omitted);
    if omitted > 0 {
        notices.push(format!(
            "{omitted} more result(s) did not fit the budget of {budget} tokens; raise the budget or narrow the query"
        ));
    }
    let text = render(&req.text, &items, omitted, req.format);
    Ok(Context {
        used_tokens: tokens(&text),
        text,
        items,
        budget_tokens: budget,
        omitted,
        notices,
    })
}

/// Turn hits into pieces, merging ranges of the same file that overlap or touch.
/// With `expand`, the first [`EXPANDED_HITS`] chunk hits bring their surroundings.
fn merge(hits: Vec<SearchHit>, expand: bool) -> Result<Vec<Piece>> {
    let mut pieces: Vec<Piece> = Vec::new();
    let mut expanded = 0;
    for h in hits {
        let oracles: Vec<&'static str> = h.provenance.iter().map(|c| c.oracle.name()).collect();
        let piece = match &h.item {
            HitItem::Chunk {
                repo,
                chunk_id,
                meta,
            } => {
                let text = repo.index().text(*chunk_id)?.unwrap_or_default();
                let lines: BTreeMap<u32, String> = text
                    .lines()
                    .enumerate()
                    .map(|(i, l)| (meta.start_line + i as u32, l.to_string()))
                    .collect();
                let mut related = Vec::new();
                if expand && expanded < EXPANDED_HITS {
                    expanded += 1;
                    let index = repo.index();
                    if let Some(graph) = crate::state::repo::graph_for_query(repo) {
                        related = surroundings(&graph, *chunk_id, meta, &|id| {
                            index.text(id).ok().flatten()
                        });
                    }
                }
                Piece {
                    item: ContextItem {
                        repo_id: repo.id().to_string(),
                        repo_name: repo.record().name,
                        repo_root: repo.root().to_string_lossy().into_owned(),
                        path: meta.path.to_string(),
                        start_line: meta.start_line,
                        end_line: meta.end_line,
                        symbols: meta.symbol.iter().cloned().collect(),
                        kind: meta.kind.name().into(),
                        language: meta.language.name().into(),
                        score: h.score,
                        oracles,
                        related,
                        licence: meta.licence.as_deref().cloned(),
                        ..Default::default()
                    },
                    lines,
                }
            }
            HitItem::Note(n) => Piece {
                item: ContextItem {
                    reference: n.reference(),
                    path: n.reference(),
                    start_line: 1,
                    end_line: n.text.lines().count() as u32,
                    symbols: vec![n.session.clone()],
                    kind: patina_core::NOTE_KIND.into(),
                    score: h.score,
                    oracles,
                    note: true,
                    ..Default::default()
                },
                lines: n
                    .text
                    .lines()
                    .enumerate()
                    .map(|(i, l)| (i as u32 + 1, l.to_string()))
                    .collect(),
            },
            HitItem::Group { .. } => continue,
        };
        absorb(&mut pieces, piece);
    }
    context::finish(&mut pieces);
    Ok(pieces)
}
