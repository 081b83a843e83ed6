//! Context assembly, pure: ranked results merged per file (ranges that overlap or touch become
//! one, [`absorb`]), filled into a token budget in rank order with their surroundings
//! ([`fill`]; one item cut to its first lines when it does not fit whole, [`cut_to_fit`]), and
//! rendered as XML, Markdown or JSON ([`render`]). The daemon reads the texts and finds the
//! surroundings; every decision about what fits and how it reads is here.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use patina_core::paths::printable_path;
use patina_core::related::Related;
use patina_core::tokens::approx_tokens as tokens;

/// An item that does not fit is cut to fit (once) when at least this many tokens remain.
const MIN_CUT_TOKENS: usize = 150;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    #[default]
    Xml,
    Markdown,
    Json,
}

/// Why a piece is in the context.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reason {
    /// A hit of the search.
    #[default]
    Matched,
    /// A region of a chosen file that the whole question points at ([`crate::locate`]).
    Located,
}

impl Reason {
    /// Stable lowercase name, as it appears in the rendered context.
    pub fn name(self) -> &'static str {
        match self {
            Reason::Matched => "matched",
            Reason::Located => "located",
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct ContextItem {
    /// Why it is here.
    pub reason: Reason,
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

/// A merged result being assembled: its lines by number, so overlapping chunks stitch exactly.
#[derive(Clone)]
pub struct Piece {
    pub item: ContextItem,
    pub lines: BTreeMap<u32, String>,
}

/// What filling a budget kept.
#[derive(Clone, Debug, Default)]
pub struct Filled {
    pub items: Vec<ContextItem>,
    /// Merged results (matched pieces) that did not fit; located regions that did not fit are
    /// not counted: they were only ever filler for the budget.
    pub omitted: usize,
}

/// Finish merged pieces: surroundings inside a merged range are dropped (they are there already),
/// each item gets its `path:start-end` reference and its text.
pub fn finish(pieces: &mut [Piece]) {
    for p in pieces.iter_mut() {
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
}

const FORMATS: [Format; 3] = [Format::Xml, Format::Markdown, Format::Json];

/// What `render` costs in the format that makes it longest: what fits is decided once for every
/// format, so every client (MCP in XML, the shell in Markdown or JSON, the editors) gets the same
/// pieces for the same question and budget.
fn costliest(render: impl Fn(Format) -> usize) -> usize {
    FORMATS.into_iter().map(render).max().unwrap_or(0)
}

/// Fill `budget` tokens with `pieces` in order, for `query`: each whole item that fits with the
/// surroundings that fit after it (never a range already shown), and at most one item cut to its
/// first lines. An item costs what it costs in its longest rendering ([`costliest`]), so the
/// choice does not depend on the format and any rendering of it fits the budget.
pub fn fill(query: &str, pieces: Vec<Piece>, budget: usize) -> Filled {
    let mut items: Vec<ContextItem> = Vec::new();
    let mut omitted = 0;
    let mut cut_once = false;
    let mut used = costliest(|f| tokens(&render(query, &[], 0, f)));
    // The line ranges already in the context: a related piece is not repeated.
    let mut shown: Vec<(String, String, u32, u32)> = Vec::new();
    for mut p in pieces {
        let remaining = budget.saturating_sub(used);
        let related = std::mem::take(&mut p.item.related);
        // Every rendering holds the text: a text longer than what remains cannot fit, and is
        // not rendered to learn it (once the budget is spent, most pieces end here).
        let cost = if tokens(&p.item.text) > remaining {
            usize::MAX
        } else {
            costliest(|f| tokens(&render_item(&p.item, f)))
        };
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
                let cost = costliest(|f| {
                    let mut cost = tokens(&render_related(it, &r, f));
                    if it.related.is_empty() && f == Format::Json {
                        cost += tokens(",\"related\":[]");
                    }
                    cost
                });
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
            if let Some(cut) = cut_to_fit(&p, remaining) {
                used += costliest(|f| tokens(&render_item(&cut, f)));
                items.push(cut);
            } else if p.item.reason == Reason::Matched {
                omitted += 1;
            }
        } else if p.item.reason == Reason::Matched {
            omitted += 1;
        }
    }
    Filled { items, omitted }
}

/// Add `piece`, folding it (and then anything the merged range came to touch) into a piece of the
/// same file whose range overlaps or touches it. A merged piece keeps the best position.
pub fn absorb(pieces: &mut Vec<Piece>, piece: Piece) {
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

/// Fold `other` into `into`: one range, the symbols, oracles and surroundings of both, the best
/// score; `into` keeps its reason.
pub fn fold(into: &mut Piece, other: Piece) {
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
pub fn cut_to_fit(p: &Piece, remaining: usize) -> Option<ContextItem> {
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
        let item = build(mid);
        if costliest(|f| tokens(&render_item(&item, f))) <= remaining {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    (lo > 0).then(|| build(lo))
}

/// `p` cut to its first lines so that it fits `max_tokens` in its costliest rendering without its
/// surroundings (at least its first line); `p` itself, whole and with all its surroundings, when
/// it fits. A cut head keeps of its surroundings only the headings above a section, which tell
/// where its lines come from, not what reading on would bring (a class header, imports, callees,
/// siblings, subsections): a head names a file and begins it, and the budget goes on to the best
/// file. [`fill`] gives what it keeps room only when it fits after the head, so a head's own
/// lines are the same either way. (Context line recall at 4000 tokens over
/// bench/context_run.py's eight sets: cut by its text alone and keeping every surrounding 0.432,
/// the class header and the headings 0.450, the headings only 0.454, none 0.462 but a section
/// without its headings.)
pub fn head(mut p: Piece, max_tokens: usize) -> Piece {
    let mut related = std::mem::take(&mut p.item.related);
    if costliest(|f| tokens(&render_item(&p.item, f))) > max_tokens {
        let end = cut_to_fit(&p, max_tokens)
            .map(|c| c.end_line)
            .unwrap_or(p.item.start_line);
        p.lines.retain(|&n, _| n <= end);
        p.item.end_line = end;
        p.item.truncated = true;
        p.item.text = p.lines.values().cloned().collect::<Vec<_>>().join("\n");
        if !p.item.note {
            p.item.reference = format!("{}:{}-{}", p.item.path, p.item.start_line, end);
        }
        related.retain(|r| r.kind == patina_core::related::RelatedKind::ParentSection);
    }
    p.item.related = related;
    p
}

pub fn render(query: &str, items: &[ContextItem], omitted: usize, format: Format) -> String {
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
                " why=\"{}\" score=\"{:.4}\" oracles=\"{}\"",
                it.reason.name(),
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
            // Names on a heading's line are escaped: a newline in one cannot forge a heading.
            let what = if it.note {
                format!(
                    "note of session `{}`",
                    printable_path(&it.symbols.join(","))
                )
            } else if it.symbols.is_empty() {
                format!("{} · {}", it.kind, printable_path(&it.repo_name))
            } else {
                format!(
                    "`{}` ({}) · {}",
                    printable_path(&it.symbols.join("`, `")),
                    it.kind,
                    printable_path(&it.repo_name)
                )
            };
            let fence = "`".repeat(longest_backtick_run(&it.text).max(2) + 1);
            let lang = if it.note || it.language == "text" {
                ""
            } else {
                it.language.as_str()
            };
            let found = match it.reason {
                Reason::Matched => it.oracles.join(", "),
                Reason::Located => "located in the file".to_string(),
            };
            let _ = writeln!(
                out,
                "## {} — {what} · score {:.4} · {}{}\n\n{fence}{lang}\n{}\n{fence}\n",
                printable_path(&it.reference),
                it.score,
                found,
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
                printable_path(&r.symbol),
                printable_path(&r.reference()),
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
        "why": it.reason.name(),
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
    fn a_head_keeps_its_first_lines_within_the_tokens_and_the_headings_above_it() {
        let mut p = piece("a.rs", 1, 100);
        p.item.text = p.lines.values().cloned().collect::<Vec<_>>().join("\n");
        p.item.related.push(Related {
            kind: patina_core::related::RelatedKind::ParentSection,
            path: "a.rs".into(),
            start_line: 200,
            end_line: 201,
            symbol: "Outer".into(),
            text: "# Outer".into(),
        });
        let container = p.item.related.clone();
        p.item.related.push(Related {
            kind: patina_core::related::RelatedKind::Container,
            path: "a.rs".into(),
            start_line: 190,
            end_line: 190,
            symbol: "Outer".into(),
            text: "struct Outer {".into(),
        });
        p.item.related.push(Related {
            kind: patina_core::related::RelatedKind::Callee,
            path: "b.rs".into(),
            start_line: 3,
            end_line: 3,
            symbol: "helper".into(),
            text: "fn helper(x: u32) -> u32".into(),
        });
        let h = head(p.clone(), 90);
        assert!(
            h.item.truncated && tokens(&h.item.text) <= 90,
            "{}",
            h.item.text
        );
        assert!(h.item.end_line > 1 && h.item.end_line < 100);
        assert_eq!(
            h.lines.len() as u32,
            h.item.end_line,
            "lines from the first, none after"
        );
        assert_eq!(h.item.reference, format!("a.rs:1-{}", h.item.end_line));
        assert_eq!(
            h.item.related, container,
            "where the lines come from, not what reading on brings"
        );
        let mut bare = p.clone();
        bare.item.related.clear();
        assert_eq!(
            head(bare, 90).item.end_line,
            h.item.end_line,
            "the surroundings take none of the head's lines"
        );
        // Whole when it fits; its first line when not even that does.
        let whole = head(p.clone(), 10_000);
        assert!(!whole.item.truncated);
        assert_eq!(
            whole.item.related, p.item.related,
            "whole, with all it brings"
        );
        assert_eq!(head(p, 0).item.end_line, 1);
    }

    #[test]
    fn cutting_fits_the_budget_and_renders_valid_markup() {
        let mut p = piece("a.rs", 1, 100);
        p.item.text = p.lines.values().cloned().collect::<Vec<_>>().join("\n");
        let cut = cut_to_fit(&p, 60).expect("some lines fit");
        assert!(cut.truncated && cut.end_line < 100 && cut.end_line >= 1);
        for f in FORMATS {
            assert!(tokens(&render_item(&cut, f)) <= 60, "{f:?}");
        }
        let mut weird = p.item.clone();
        weird.text = "a ]]> b ``` c".into();
        let xml = render_item(&weird, Format::Xml);
        assert!(!xml.contains("a ]]> b"), "{xml}");
        let md = render_item(&weird, Format::Markdown);
        assert!(md.contains("````"), "{md}");
    }

    #[test]
    fn what_fits_is_the_same_in_every_format_and_every_rendering_fits() {
        let pieces = || {
            let mut v: Vec<Piece> = (0..12)
                .map(|i| {
                    let mut p = piece(&format!("f{i}.rs"), 1, 3 + i * 7);
                    // Quotes and markup cost more in JSON and XML than in Markdown.
                    for l in p.lines.values_mut() {
                        l.push_str(" \"q\" <a> & ``` \\ ");
                    }
                    p
                })
                .collect();
            finish(&mut v);
            v
        };
        let query = "why \"q\" <a>";
        let budget = 900;
        let filled = fill(query, pieces(), budget);
        assert!(filled.omitted > 0, "the budget is the limit");
        for f in FORMATS {
            let text = render(query, &filled.items, filled.omitted, f);
            assert!(tokens(&text) <= budget, "{f:?}: {} tokens", tokens(&text));
        }
    }
}
