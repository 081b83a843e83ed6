//! `Search.Context`: the context an agent reads in one call. Runs a chunk-level search, merges hits
//! whose line ranges overlap or touch in the same file (so no line appears twice), then fills a
//! token budget (≈ characters / 4) in rank order and renders the result as XML (default), Markdown
//! or JSON, every piece attributed as `path:start-end` (or `session:<name>#<n>` for a note).
//! With `expand`, the best hits bring what they need to be read on their own
//! ([`patina_index::expansion`]: a method's class header, the imports it uses, the signatures of
//! what it calls and of its siblings; a section's parent headings and subsection titles), each
//! piece attributed and counted against the same budget.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use anyhow::Result;
use patina_core::tokens::approx_tokens as tokens;
use patina_index::expansion::{Related, surroundings};

use crate::query::engine::QueryEngine;
use crate::query::request::{HitItem, SearchHit, SearchRequest};

pub(crate) const DEFAULT_BUDGET: usize = 6000;
const MIN_BUDGET: usize = 100;
const MAX_BUDGET: usize = 200_000;
/// An item that does not fit is cut to fit (once) when at least this many tokens remain.
const MIN_CUT_TOKENS: usize = 150;
/// With `expand`, the surroundings of this many of the best chunk hits are gathered.
const EXPANDED_HITS: usize = 4;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Format {
    #[default]
    Xml,
    Markdown,
    Json,
}

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

#[derive(Clone, Debug, Default)]
pub(crate) struct ContextItem {
    /// `path:start-end`, or `session:<name>#<n>` for a note.
    pub reference: String,
    pub repo_id: String,
    pub repo_name: String,
    pub repo_root: String,
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub symbols: Vec<String>,
    pub kind: String,
    pub language: String,
    pub score: f64,
    pub oracles: Vec<&'static str>,
    pub text: String,
    /// Only the first lines fitted in the budget.
    pub truncated: bool,
    pub note: bool,
    /// What the item needs around it (with `expand`), each piece within the budget.
    pub related: Vec<Related>,
    /// The file's licence (decided at index time).
    pub licence: Option<patina_core::Licence>,
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

/// A merged result being assembled: its lines by number, so overlapping chunks stitch exactly.
struct Piece {
    item: ContextItem,
    lines: BTreeMap<u32, String>,
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

    let mut items: Vec<ContextItem> = Vec::new();
    let mut omitted = 0;
    let mut cut_once = false;
    let mut used = tokens(&render(&req.text, &[], 0, req.format));
    // The line ranges already in the context: a related piece is not repeated.
    let mut shown: Vec<(String, String, u32, u32)> = Vec::new();
    for mut p in pieces {
        let remaining = budget.saturating_sub(used);
        let related = std::mem::take(&mut p.item.related);
        let cost = tokens(&render_item(&p.item, req.format));
        if cost <= remaining {
            used += cost;
            let it = &mut p.item;
            shown.push((
                it.repo_id.clone(),
                it.path.clone(),
                it.start_line,
                it.end_line,
            ));
            for r in related {
                let overlaps = shown.iter().any(|(repo, path, s, e)| {
                    *repo == it.repo_id
                        && **path == *r.path
                        && r.start_line <= *e
                        && *s <= r.end_line
                });
                let mut cost = tokens(&render_related(it, &r, req.format));
                if it.related.is_empty() && req.format == Format::Json {
                    cost += tokens(",\"related\":[]");
                }
                if overlaps || used + cost > budget {
                    continue;
                }
                used += cost;
                shown.push((
                    it.repo_id.clone(),
                    r.path.to_string(),
                    r.start_line,
                    r.end_line,
                ));
                it.related.push(r);
            }
            items.push(p.item);
        } else if !cut_once && remaining >= MIN_CUT_TOKENS {
            cut_once = true;
            if let Some(cut) = cut_to_fit(&p, remaining, req.format) {
                used += tokens(&render_item(&cut, req.format));
                items.push(cut);
            } else {
                omitted += 1;
            }
        } else {
            omitted += 1;
        }
    }
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
                    related = surroundings(&index.graph(), *chunk_id, meta, &|id| {
                        index.text(id).ok().flatten()
                    });
                }
                Piece {
                    item: ContextItem {
                        repo_id: repo.id().to_string(),
                        repo_name: repo.record().name,
                        repo_root: repo.root().to_string_lossy().into_owned(),
                        path: meta.path.clone(),
                        start_line: meta.start_line,
                        end_line: meta.end_line,
                        symbols: meta.symbol.iter().cloned().collect(),
                        kind: meta.kind.name().into(),
                        language: meta.language.name().into(),
                        score: h.score,
                        oracles,
                        related,
                        licence: meta.licence.clone(),
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
                    kind: patina_proto::kinds::HitKind::Note.wire().into(),
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
    for p in &mut pieces {
        // Surroundings inside the merged range are already there.
        let (start, end) = (p.item.start_line, p.item.end_line);
        p.item
            .related
            .retain(|r| r.end_line < start || end < r.start_line);
        if !p.item.note {
            p.item.reference = format!("{}:{}-{}", p.item.path, p.item.start_line, p.item.end_line);
        }
        p.item.text = p.lines.values().cloned().collect::<Vec<_>>().join("\n");
    }
    Ok(pieces)
}

/// Add `piece`, folding it (and then anything the merged range came to touch) into a piece of the
/// same file whose range overlaps or touches it. A merged piece keeps the best position.
fn absorb(pieces: &mut Vec<Piece>, piece: Piece) {
    let touches = |a: &ContextItem, b: &ContextItem| {
        !a.note
            && !b.note
            && a.repo_id == b.repo_id
            && a.path == b.path
            && a.start_line <= b.end_line + 1
            && b.start_line <= a.end_line + 1
    };
    let Some(mut at) = pieces.iter().position(|p| touches(&p.item, &piece.item)) else {
        pieces.push(piece);
        return;
    };
    fold(&mut pieces[at], piece);
    while let Some(j) =
        (0..pieces.len()).find(|&j| j != at && touches(&pieces[j].item, &pieces[at].item))
    {
        let (keep, gone) = if j < at { (j, at) } else { (at, j) };
        let other = pieces.remove(gone);
        fold(&mut pieces[keep], other);
        at = keep;
    }
}

fn fold(into: &mut Piece, other: Piece) {
    let (a, b) = (&mut into.item, other.item);
    a.start_line = a.start_line.min(b.start_line);
    a.end_line = a.end_line.max(b.end_line);
    for s in b.symbols {
        if !a.symbols.contains(&s) {
            a.symbols.push(s);
        }
    }
    for o in b.oracles {
        if !a.oracles.contains(&o) {
            a.oracles.push(o);
        }
    }
    a.score = a.score.max(b.score);
    for r in b.related {
        if !a.related.contains(&r) {
            a.related.push(r);
        }
    }
    for (n, l) in other.lines {
        into.lines.entry(n).or_insert(l);
    }
}

/// The piece cut to its first lines so that it costs at most `remaining` tokens; `None` if not
/// even one line fits.
fn cut_to_fit(p: &Piece, remaining: usize, format: Format) -> Option<ContextItem> {
    let lines: Vec<(&u32, &String)> = p.lines.iter().collect();
    let build = |k: usize| {
        let mut item = p.item.clone();
        item.truncated = true;
        item.related.clear();
        item.text = lines[..k]
            .iter()
            .map(|(_, l)| l.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        if !item.note {
            item.end_line = *lines[k - 1].0;
            item.reference = format!("{}:{}-{}", item.path, item.start_line, item.end_line);
        }
        item
    };
    let (mut lo, mut hi) = (0usize, lines.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if tokens(&render_item(&build(mid), format)) <= remaining {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    (lo > 0).then(|| build(lo))
}

fn render(query: &str, items: &[ContextItem], omitted: usize, format: Format) -> String {
    let mut out = String::new();
    match format {
        Format::Xml => {
            let _ = writeln!(
                out,
                "<context query=\"{}\" items=\"{}\" omitted=\"{omitted}\">",
                attr(query),
                items.len()
            );
            for it in items {
                out.push_str(&render_item(it, format));
            }
            out.push_str("</context>\n");
        }
        Format::Markdown => {
            let _ = writeln!(
                out,
                "# Context for: {}\n\n{} item(s){}\n",
                query.lines().next().unwrap_or(""),
                items.len(),
                if omitted > 0 {
                    format!(", {omitted} omitted (budget)")
                } else {
                    String::new()
                }
            );
            for it in items {
                out.push_str(&render_item(it, format));
            }
        }
        Format::Json => {
            let items: Vec<serde_json::Value> = items.iter().map(item_json).collect();
            out =
                serde_json::json!({"query": query, "items": items, "omitted": omitted}).to_string();
        }
    }
    out
}

fn render_item(it: &ContextItem, format: Format) -> String {
    let mut out = String::new();
    match format {
        Format::Xml => {
            let tag = if it.note { "note" } else { "source" };
            let _ = write!(out, "<{tag} ref=\"{}\"", attr(&it.reference));
            if it.note {
                let _ = write!(out, " session=\"{}\"", attr(&it.symbols.join(",")));
            } else {
                let _ = write!(out, " repo=\"{}\"", attr(&it.repo_name));
                if !it.symbols.is_empty() {
                    let _ = write!(out, " symbols=\"{}\"", attr(&it.symbols.join(",")));
                }
                let _ = write!(
                    out,
                    " kind=\"{}\" language=\"{}\"",
                    attr(&it.kind),
                    attr(&it.language)
                );
            }
            let _ = write!(
                out,
                " score=\"{:.4}\" oracles=\"{}\"",
                it.score,
                it.oracles.join(",")
            );
            if it.truncated {
                out.push_str(" truncated=\"true\"");
            }
            let _ = writeln!(
                out,
                "><![CDATA[\n{}\n]]></{tag}>",
                it.text.replace("]]>", "]]]]><![CDATA[>")
            );
            for r in &it.related {
                out.push_str(&render_related(it, r, format));
            }
        }
        Format::Markdown => {
            let what = if it.note {
                format!("note of session `{}`", it.symbols.join(","))
            } else if it.symbols.is_empty() {
                format!("{} · {}", it.kind, it.repo_name)
            } else {
                format!(
                    "`{}` ({}) · {}",
                    it.symbols.join("`, `"),
                    it.kind,
                    it.repo_name
                )
            };
            let fence = "`".repeat(longest_backtick_run(&it.text).max(2) + 1);
            let lang = if it.note || it.language == "text" {
                ""
            } else {
                it.language.as_str()
            };
            let _ = writeln!(
                out,
                "## {} — {what} · score {:.4} · {}{}\n\n{fence}{lang}\n{}\n{fence}\n",
                it.reference,
                it.score,
                it.oracles.join(", "),
                if it.truncated { " · truncated" } else { "" },
                it.text
            );
            for r in &it.related {
                out.push_str(&render_related(it, r, format));
            }
        }
        Format::Json => {
            out = item_json(it).to_string();
            out.push(',');
        }
    }
    out
}

/// One piece of an item's surroundings: an XML `<related>` element after its `<source>`, a
/// Markdown sub-heading with a fenced block, or a JSON object of the item's `related` array.
fn render_related(it: &ContextItem, r: &Related, format: Format) -> String {
    match format {
        Format::Xml => format!(
            "<related kind=\"{}\" ref=\"{}\" symbol=\"{}\" of=\"{}\"><![CDATA[\n{}\n]]></related>\n",
            r.kind.name(),
            attr(&r.reference()),
            attr(&r.symbol),
            attr(&it.reference),
            r.text.replace("]]>", "]]]]><![CDATA[>")
        ),
        Format::Markdown => {
            let fence = "`".repeat(longest_backtick_run(&r.text).max(2) + 1);
            let lang = if it.language == "text" {
                ""
            } else {
                it.language.as_str()
            };
            format!(
                "### ↳ {} `{}` — {}\n\n{fence}{lang}\n{}\n{fence}\n\n",
                r.kind.name().replace('_', " "),
                r.symbol,
                r.reference(),
                r.text
            )
        }
        Format::Json => format!("{},", related_json(r)),
    }
}

fn related_json(r: &Related) -> serde_json::Value {
    serde_json::json!({
        "kind": r.kind.name(),
        "ref": r.reference(),
        "path": &*r.path,
        "start_line": r.start_line,
        "end_line": r.end_line,
        "symbol": r.symbol,
        "text": r.text,
    })
}

fn item_json(it: &ContextItem) -> serde_json::Value {
    let mut v = item_json_plain(it);
    if !it.related.is_empty() {
        v["related"] = it.related.iter().map(related_json).collect();
    }
    v
}

fn item_json_plain(it: &ContextItem) -> serde_json::Value {
    serde_json::json!({
        "ref": it.reference,
        "kind": it.kind,
        "repo": it.repo_name,
        "path": it.path,
        "start_line": it.start_line,
        "end_line": it.end_line,
        "symbols": it.symbols,
        "language": it.language,
        "score": it.score,
        "oracles": it.oracles,
        "truncated": it.truncated,
        "text": it.text,
    })
}

fn attr(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

fn longest_backtick_run(s: &str) -> usize {
    let (mut best, mut run) = (0, 0);
    for c in s.chars() {
        if c == '`' {
            run += 1;
            best = best.max(run);
        } else {
            run = 0;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(path: &str, start: u32, end: u32) -> Piece {
        Piece {
            item: ContextItem {
                repo_id: "r".into(),
                path: path.into(),
                start_line: start,
                end_line: end,
                symbols: vec![format!("s{start}")],
                ..Default::default()
            },
            lines: (start..=end).map(|n| (n, format!("line {n}"))).collect(),
        }
    }

    #[test]
    fn overlapping_and_touching_ranges_merge_once() {
        let mut v = Vec::new();
        absorb(&mut v, piece("a.rs", 10, 20));
        absorb(&mut v, piece("b.rs", 1, 5));
        absorb(&mut v, piece("a.rs", 30, 40));
        absorb(&mut v, piece("a.rs", 15, 25));
        assert_eq!(v.len(), 3);
        absorb(&mut v, piece("a.rs", 26, 29)); // touches both a.rs pieces: all three merge
        assert_eq!(v.len(), 2);
        let a = &v[0];
        assert_eq!((a.item.start_line, a.item.end_line), (10, 40));
        assert_eq!(a.lines.len(), 31, "every line once");
        assert_eq!(a.item.symbols, ["s10", "s15", "s26", "s30"]);
        assert_eq!(v[1].item.path, "b.rs");
    }

    #[test]
    fn cutting_fits_the_budget_and_renders_valid_markup() {
        let mut p = piece("a.rs", 1, 100);
        p.item.text = p.lines.values().cloned().collect::<Vec<_>>().join("\n");
        let cut = cut_to_fit(&p, 60, Format::Xml).expect("some lines fit");
        assert!(cut.truncated && cut.end_line < 100 && cut.end_line >= 1);
        assert!(tokens(&render_item(&cut, Format::Xml)) <= 60);
        let mut weird = p.item.clone();
        weird.text = "a ]]> b ``` c".into();
        let xml = render_item(&weird, Format::Xml);
        assert!(!xml.contains("a ]]> b"), "{xml}");
        let md = render_item(&weird, Format::Markdown);
        assert!(md.contains("````"), "{md}");
    }
}
