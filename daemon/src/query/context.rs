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
//!
//! The files the search chose most are then located in ([`patina_retrieve::locate`]): every
//! region (chunk) of each is scored against the whole question, and the regions join the
//! matched pieces on one scale, so the budget goes to the likely file's likely functions before
//! the weak hits of unlikely files, and is spent rather than left empty. Each piece says why it
//! is there (`matched`, `located`).

use std::sync::Arc;

use anyhow::Result;
use patina_core::ChunkMeta;
use patina_core::tokens::approx_tokens as tokens;
use patina_index::expansion::surroundings;
pub(crate) use patina_retrieve::context::Format;
use patina_retrieve::context::{self, ContextItem, Piece, Reason, absorb, render};
use patina_retrieve::locate::{self, Needle, Origin, Region};

use crate::query::engine::QueryEngine;
use crate::query::request::{HitItem, SearchHit, SearchRequest};
use crate::state::repo::Repo;

pub(crate) const DEFAULT_BUDGET: usize = 6000;
const MIN_BUDGET: usize = 100;
const MAX_BUDGET: usize = 200_000;
/// With `expand`, the surroundings of this many of the best chunk hits are gathered.
const EXPANDED_HITS: usize = 4;
/// A file of more chunks than this (generated tables, vendored bundles) is not located in.
const MAX_REGIONS: usize = 2000;

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
    let started = std::time::Instant::now();
    let res = engine
        .search(SearchRequest {
            org: false,
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
    let searched = started.elapsed();
    let mut notices = res.notices;
    // Chunk texts come from the store: read them on the blocking pool.
    let hits = res.hits;
    let expand = req.expand;
    let question = req.text.clone();
    let locate_files = engine.config().context.locate_files;
    let how = Locating {
        files: locate_files,
        depth: engine.config().context.file_depth,
        keep_files: engine.config().context.keep_files,
        lead_tokens: engine.config().context.lead_tokens,
        near_best: engine.config().context.near_best,
        code_names: engine.config().context.code_names,
        by_confidence: engine.config().context.by_confidence,
        keep_at_most: engine.config().context.keep_at_most,
        whole: engine.config().context.whole_files.by(),
        budget,
    };
    let (pieces, merged) = tokio::task::spawn_blocking(move || {
        let (pieces, repos) = merge(hits, expand)?;
        let merged = started.elapsed();
        Ok::<_, anyhow::Error>((with_located(pieces, &repos, &question, &how), merged))
    })
    .await
    .map_err(|e| anyhow::anyhow!("reading context texts failed: {e}"))??;
    let located = started.elapsed();

    let filled = context::fill(&req.text, pieces, budget);
    tracing::debug!(
        search_ms = searched.as_secs_f64() * 1e3,
        merge_ms = (merged - searched).as_secs_f64() * 1e3,
        locate_ms = (located - merged).as_secs_f64() * 1e3,
        fill_ms = (started.elapsed() - located).as_secs_f64() * 1e3,
        "context assembled"
    );
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
/// With `expand`, the first [`EXPANDED_HITS`] chunk hits bring their surroundings. Also the
/// repositories the pieces come from, by id.
fn merge(hits: Vec<SearchHit>, expand: bool) -> Result<(Vec<Piece>, Vec<Arc<Repo>>)> {
    let mut pieces: Vec<Piece> = Vec::new();
    let mut repos: Vec<Arc<Repo>> = Vec::new();
    let mut expanded = 0;
    for h in hits {
        let oracles: Vec<&'static str> = h.provenance.iter().map(|c| c.oracle.name()).collect();
        let piece = match &h.item {
            HitItem::Chunk {
                repo,
                chunk_id,
                meta,
            } => {
                if !repos.iter().any(|r| r.id() == repo.id()) {
                    repos.push(repo.clone());
                }
                let text = repo.index().text(*chunk_id)?.unwrap_or_default();
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
                let mut piece = chunk_piece(repo, meta, &text, Reason::Matched, h.score);
                piece.item.oracles = oracles;
                piece.item.related = related;
                piece
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
            HitItem::Group { .. } | HitItem::Org(_) => continue,
        };
        absorb(&mut pieces, piece);
    }
    context::finish(&mut pieces);
    Ok((pieces, repos))
}

/// How [`with_located`] locates (`[context]` of the configuration, and the request's budget).
struct Locating {
    /// The regions of this many of the best files are located in; 0: matched pieces only.
    files: usize,
    depth: f64,
    /// Every file the matched pieces alone would show in the budget keeps its best piece first
    /// ([`locate::keep_files`]).
    keep_files: bool,
    /// Each kept file's best piece, but the best file's, is cut to its first lines within this
    /// many tokens (0: whole; [`context::head`]).
    lead_tokens: usize,
    /// A file's regions that weigh alike are read outward from its best piece
    /// ([`locate::nearest_first`]), not from its first line.
    near_best: bool,
    /// The needle also holds the names the question writes as code
    /// ([`Needle::with_code_names`]).
    code_names: bool,
    /// Each file's prior is its best hit's score against the best file's
    /// ([`locate::confidence_priors`]), not its rank.
    by_confidence: bool,
    /// With `keep_files`, only this many files keep their best piece first (0: every one the
    /// matched pieces would show; [`locate::keep_at_most`]).
    keep_at_most: usize,
    /// With `by_confidence`, files whose whole text fits what their prior earns of the budget
    /// are read whole ([`locate::whole_files`]).
    whole: Option<locate::WholeBy>,
    budget: usize,
}

/// The matched pieces with the located regions of the first `how.files` files among them, in
/// reading order ([`locate::order`], then [`locate::keep_files`]). A region that overlaps a piece
/// already placed is left out (its lines are there). Reading a file's regions fails softly: it
/// is then not located in.
fn with_located(
    matched: Vec<Piece>,
    repos: &[Arc<Repo>],
    question: &str,
    how: &Locating,
) -> Vec<Piece> {
    if how.files == 0 {
        return matched;
    }
    // The files of the hits in rank order; the first `locate_files` are located in.
    let mut files: Vec<(String, String)> = Vec::new();
    let mut file_of: Vec<usize> = Vec::with_capacity(matched.len());
    for p in &matched {
        let key = (p.item.repo_id.clone(), p.item.path.clone());
        let at = files.iter().position(|f| *f == key).unwrap_or_else(|| {
            files.push(key);
            files.len() - 1
        });
        file_of.push(at);
    }
    // The files the matched pieces alone would show: each keeps its best piece.
    let kept: Vec<usize> = if how.keep_files {
        let shown = context::fill(question, matched.clone(), how.budget).items;
        let mut kept: Vec<usize> = shown
            .iter()
            .filter_map(|it| {
                files
                    .iter()
                    .position(|(r, p)| *r == it.repo_id && *p == it.path)
            })
            .collect();
        kept.dedup();
        locate::keep_at_most(&mut kept, how.keep_at_most);
        kept
    } else {
        Vec::new()
    };
    let mut needle = Needle::of(question);
    if how.code_names {
        needle = needle.with_code_names(question);
    }
    // Each file's best matched piece: where its regions are read outward from (`near_best`).
    let mut anchors: Vec<Option<(f64, (u32, u32))>> = vec![None; files.len()];
    for (p, &file) in matched.iter().zip(&file_of) {
        let span = (p.item.start_line, p.item.end_line);
        if anchors[file].is_none_or(|(s, _)| p.item.score > s) {
            anchors[file] = Some((p.item.score, span));
        }
    }
    let mut pieces: Vec<Piece> = Vec::new();
    let mut origins: Vec<Origin> = Vec::new();
    // Each located file's whole text in tokens (0: not located in).
    let mut file_tokens = vec![0usize; files.len()];
    for (p, &file) in matched.into_iter().zip(&file_of) {
        origins.push(Origin::Matched {
            file,
            score: p.item.score,
        });
        pieces.push(p);
    }
    for (f, (repo_id, path)) in files.iter().enumerate().take(how.files) {
        let Some(repo) = repos.iter().find(|r| r.id() == repo_id) else {
            continue;
        };
        let t = std::time::Instant::now();
        let regions = match regions_of(repo, path) {
            Ok(r) => r,
            Err(e) => {
                tracing::debug!(path = %path, "context: not located in: {e:#}");
                continue;
            }
        };
        let texts: Vec<Region> = regions
            .iter()
            .map(|(meta, text)| Region {
                text,
                symbol: meta.symbol.as_deref(),
            })
            .collect();
        let read = t.elapsed();
        let scores = locate::score_regions(&needle, &texts);
        tracing::debug!(
            path = %path,
            regions = texts.len(),
            read_ms = read.as_secs_f64() * 1e3,
            score_ms = (t.elapsed() - read).as_secs_f64() * 1e3,
            "context: located in"
        );
        let mut reading: Vec<usize> = (0..regions.len()).collect();
        if how.near_best {
            let best_located = (0..regions.len())
                .filter(|&i| scores[i] > 0.0)
                .max_by(|&a, &b| scores[a].total_cmp(&scores[b]).then(b.cmp(&a)));
            let anchor = anchors[f]
                .map(|(_, span)| span)
                .or_else(|| best_located.map(|i| (regions[i].0.start_line, regions[i].0.end_line)));
            if let Some(anchor) = anchor {
                let spans: Vec<(u32, u32)> = regions
                    .iter()
                    .map(|(m, _)| (m.start_line, m.end_line))
                    .collect();
                reading = locate::nearest_first(&spans, anchor);
            }
        }
        file_tokens[f] = regions.iter().map(|(_, text)| tokens(text)).sum();
        for i in reading {
            let ((meta, text), score) = (&regions[i], scores[i]);
            origins.push(Origin::Located { file: f, score });
            // A located piece's score is its location score (the scale of `locate`).
            pieces.push(chunk_piece(repo, meta, text, Reason::Located, score));
        }
    }
    let reading = if how.by_confidence {
        let priors = locate::confidence_priors(&origins, how.depth);
        if let Some(by) = how.whole {
            let whole = locate::whole_files(&priors, &file_tokens, how.budget, by);
            locate::read_whole(&mut origins, &whole);
        }
        locate::order_by(&origins, |f| priors.get(f).copied().unwrap_or(0.0))
    } else {
        locate::order(&origins, how.depth)
    };
    let (order, leads) = locate::keep_files(&reading, &origins, &kept);
    let mut slots: Vec<Option<Piece>> = pieces.into_iter().map(Some).collect();
    // The best file is read in depth: its lead stays whole; the other files' leads are heads.
    if how.lead_tokens > 0 {
        for &i in order.iter().take(leads).skip(1) {
            slots[i] = slots[i].take().map(|p| context::head(p, how.lead_tokens));
        }
    }
    let mut out: Vec<Piece> = Vec::with_capacity(slots.len());
    for i in order {
        let Some(mut p) = slots[i].take() else {
            continue;
        };
        // A piece that overlaps a head (a kept file's lead cut to its first lines) brings the
        // lines after the head, at its own place in the order: not the head made whole at the
        // lead's place, and not nothing.
        if let Some(j) = overlapping(&out, &p, None).filter(|&j| out[j].item.truncated) {
            let end = out[j].item.end_line;
            p.lines.retain(|&n, _| n > end);
            let (Some(&first), Some(&last)) = (p.lines.keys().next(), p.lines.keys().last()) else {
                continue;
            };
            p.item.start_line = first;
            p.item.end_line = last;
            p.item.related.clear();
        }
        match (p.item.reason, overlapping(&out, &p, None)) {
            // Its lines are there already.
            (Reason::Located, Some(_)) => {}
            // A hit overlapping a piece placed before it (by locating): one piece, placed where
            // the first was, with the oracles that found it. The merged range may now overlap
            // other pieces: they join it too, so that no line is shown twice.
            (Reason::Matched, Some(j)) => {
                let mut j = j;
                context::fold(&mut out[j], p);
                while let Some(k) = overlapping(&out, &out[j], Some(j)) {
                    let other = out.remove(k);
                    if k < j {
                        j -= 1;
                    }
                    context::fold(&mut out[j], other);
                }
            }
            (_, None) => out.push(p),
        }
    }
    context::finish(&mut out);
    out
}

/// The piece of one chunk of `repo` (`meta`, `text`), its lines numbered from the chunk's start.
fn chunk_piece(repo: &Repo, meta: &ChunkMeta, text: &str, reason: Reason, score: f64) -> Piece {
    Piece {
        item: ContextItem {
            reason,
            reference: format!("{}:{}-{}", meta.path, meta.start_line, meta.end_line),
            repo_id: repo.id().to_string(),
            repo_name: repo.record().name,
            repo_root: repo.root().to_string_lossy().into_owned(),
            path: meta.path.to_string(),
            start_line: meta.start_line,
            end_line: meta.end_line,
            symbols: meta.symbol.iter().cloned().collect(),
            kind: meta.kind.name().into(),
            language: meta.language.name().into(),
            score,
            text: text.to_string(),
            licence: meta.licence.as_deref().cloned(),
            ..Default::default()
        },
        lines: text
            .lines()
            .enumerate()
            .map(|(i, l)| (meta.start_line + i as u32, l.to_string()))
            .collect(),
    }
}

/// The first piece of `pieces` (other than `skip`) whose lines overlap those of `p`.
fn overlapping(pieces: &[Piece], p: &Piece, skip: Option<usize>) -> Option<usize> {
    pieces.iter().enumerate().position(|(i, q)| {
        Some(i) != skip
            && !q.item.note
            && !p.item.note
            && q.item.repo_id == p.item.repo_id
            && q.item.path == p.item.path
            && q.item.start_line <= p.item.end_line
            && p.item.start_line <= q.item.end_line
    })
}

/// Every chunk of `path` in `repo` with its stored text, in line order; empty for a file of more
/// than [`MAX_REGIONS`] chunks.
fn regions_of(repo: &Repo, path: &str) -> Result<Vec<(ChunkMeta, String)>> {
    let index = repo.index();
    let Some(record) = index.file_record(path)? else {
        return Ok(Vec::new());
    };
    if record.chunk_ids.len() > MAX_REGIONS {
        return Ok(Vec::new());
    }
    let mut out = Vec::with_capacity(record.chunk_ids.len());
    for id in record.chunk_ids {
        if let (Some(meta), Some(text)) = (index.chunk(id), index.text(id)?) {
            out.push((meta, text));
        }
    }
    out.sort_by_key(|(m, _)| (m.start_line, m.end_line));
    Ok(out)
}
