//! The repository map (`Graph.Map`), an agent's first look at an unfamiliar repository. Files are
//! ranked by PageRank ([`patina_retrieve::pagerank`]) on the file-level reference graph (every
//! resolved reference is an edge from the referring file to the defining one; a call resolved by
//! name only among k candidates weighs 0.3/k, other name-only uses nothing), personalised by seed files and the words of a query
//! when given. Each file's symbols are ranked by the rank their referrers pass to them. The
//! outline (path, then the signatures of its best symbols) is filled in rank order into a token
//! budget (≈ characters / 4).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use anyhow::Result;
use patina_core::Resolution;
use patina_core::tokens::approx_tokens as tokens;

use crate::expansion::signature;
use crate::graph::{Def, is_definition};
use crate::repo::RepoIndex;

pub const DEFAULT_BUDGET: usize = 1000;
const MIN_BUDGET: usize = 50;
const MAX_BUDGET: usize = 100_000;
/// The weight of a call resolved by name only (among k candidates: this / k); exact and
/// import-resolved references weigh 1.
const NAME_ONLY_WEIGHT: f64 = 0.3;
/// Personalised, the surfer jumps back to the seeds half the time: the map stays about them.
const PERSONALISED_DAMPING: f64 = 0.5;
/// At most this many symbols under a file.
const SYMBOLS_PER_FILE: usize = 6;

#[derive(Clone, Debug, Default)]
pub struct MapRequest {
    /// 0 = [`DEFAULT_BUDGET`].
    pub budget_tokens: usize,
    pub seed_paths: Vec<String>,
    pub query: String,
}

#[derive(Clone, Debug)]
pub struct MapSymbol {
    pub symbol: String,
    pub kind: &'static str,
    pub start_line: u32,
    pub end_line: u32,
    pub signature: String,
    pub rank: f64,
}

#[derive(Clone, Debug)]
pub struct MapFile {
    pub path: String,
    pub rank: f64,
    pub symbols: Vec<MapSymbol>,
}

pub struct RepoMap {
    pub text: String,
    pub files: Vec<MapFile>,
    pub used_tokens: usize,
    pub budget_tokens: usize,
    pub total_files: usize,
}

fn label(d: &Def) -> String {
    match &d.parent {
        Some(p) => format!("{p}.{}", d.symbol),
        None => d.symbol.to_string(),
    }
}

/// Lowercase words of at least three letters.
fn words(q: &str) -> Vec<String> {
    q.split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| w.len() >= 3)
        .map(str::to_lowercase)
        .collect()
}

pub fn repo_map(index: &RepoIndex, name: &str, req: &MapRequest) -> Result<RepoMap> {
    let budget = match req.budget_tokens {
        0 => DEFAULT_BUDGET,
        n => n.clamp(MIN_BUDGET, MAX_BUDGET),
    };
    let graph = index.graph();
    // The nodes: files that define something.
    let files: Vec<Arc<str>> = graph
        .paths()
        .iter()
        .filter(|p| {
            graph
                .chunks_in(p)
                .iter()
                .any(|c| is_definition(c.kind) && !c.symbol.is_empty())
        })
        .cloned()
        .collect();
    let at: HashMap<&str, usize> = files.iter().enumerate().map(|(i, p)| (&**p, i)).collect();
    let mut weights: HashMap<(usize, usize), f64> = HashMap::new();
    // Who refers to each definition: (chunk id of the definition) → [(referring file, weight)].
    let mut referrers: HashMap<u64, Vec<(usize, f64)>> = HashMap::new();
    for e in graph.all_edges() {
        let (Some(&f), Some(&t)) = (at.get(&*e.site.path), at.get(&*e.to.path)) else {
            continue;
        };
        if f == t {
            continue;
        }
        let w = match e.resolution {
            // A guess by name: a call weighs little, any other use (a parameter named like a
            // fixture, a local named like a class) nothing.
            Resolution::NameOnly if !e.site.call => continue,
            Resolution::NameOnly => NAME_ONLY_WEIGHT / e.candidates.max(1) as f64,
            _ => 1.0,
        };
        *weights.entry((f, t)).or_default() += w;
        referrers.entry(e.to.chunk_id).or_default().push((f, w));
    }
    let edges: Vec<(usize, usize, f64)> = weights.iter().map(|(&(f, t), &w)| (f, t, w)).collect();
    // Personalisation: seed files (or directories), files and definitions the query names.
    let mut seed = vec![0.0; files.len()];
    for s in &req.seed_paths {
        let s = s.trim_matches('/');
        for (i, p) in files.iter().enumerate() {
            if **p == *s || p.starts_with(&format!("{s}/")) {
                seed[i] += 1.0;
            }
        }
    }
    let qwords = words(&req.query);
    if !qwords.is_empty() {
        for (i, p) in files.iter().enumerate() {
            let lp = p.to_lowercase();
            if qwords.iter().any(|w| lp.contains(w.as_str())) {
                seed[i] += 1.0;
            }
            if graph
                .chunks_in(p)
                .iter()
                .any(|c| is_definition(c.kind) && qwords.contains(&c.symbol.to_lowercase()))
            {
                seed[i] += 1.0;
            }
        }
    }
    let personalised = seed.iter().any(|w| *w > 0.0);
    let rank = patina_retrieve::pagerank::pagerank(
        files.len(),
        &edges,
        personalised.then_some(seed.as_slice()),
        if personalised {
            PERSONALISED_DAMPING
        } else {
            patina_retrieve::pagerank::DAMPING
        },
    );
    let mut out_weight = vec![0.0; files.len()];
    for &(f, _, w) in &edges {
        out_weight[f] += w;
    }
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by(|&a, &b| rank[b].total_cmp(&rank[a]).then(files[a].cmp(&files[b])));

    let mut text = String::new();
    let _ = writeln!(
        text,
        "# {}: the most central files of {} (PageRank on references{})",
        name,
        files.len(),
        if personalised { ", personalised" } else { "" }
    );
    let mut used = tokens(&text);
    let mut listed = Vec::new();
    for i in order {
        if budget.saturating_sub(used) < 8 {
            break;
        }
        let path = &files[i];
        // Its definitions (split pieces once), by the rank their referrers pass on.
        let mut defs: Vec<(f64, &Def)> = Vec::new();
        for c in graph.chunks_in(path) {
            if !is_definition(c.kind) || c.symbol.is_empty() {
                continue;
            }
            if defs.iter().any(|(_, d)| {
                d.symbol == c.symbol && d.parent == c.parent && c.start_line <= d.end_line + 1
            }) {
                continue;
            }
            let score: f64 = referrers
                .get(&c.chunk_id)
                .into_iter()
                .flatten()
                .map(|&(f, w)| rank[f] * w / out_weight[f].max(f64::MIN_POSITIVE))
                .sum();
            defs.push((score, c));
        }
        // Referenced ones first; a file nobody references shows its first definitions.
        defs.sort_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then(a.1.start_line.cmp(&b.1.start_line))
        });
        defs.truncate(SYMBOLS_PER_FILE);
        defs.sort_by_key(|(_, d)| d.start_line);
        let mut symbols: Vec<MapSymbol> = Vec::new();
        for (score, d) in defs {
            let text = index.text(d.chunk_id)?.unwrap_or_default();
            let sig = signature(&text, d.start_line, &d.symbol)
                .map(|(_, _, s)| {
                    s.lines()
                        .next()
                        .unwrap_or("")
                        .trim()
                        .trim_end_matches('{')
                        .trim_end()
                        .to_string()
                })
                .unwrap_or_else(|| label(d));
            symbols.push(MapSymbol {
                symbol: label(d),
                kind: d.kind.name(),
                start_line: d.start_line,
                end_line: d.end_line,
                signature: sig,
                rank: score,
            });
        }
        // As many of its symbols as fit (none: just the path).
        let mut block = String::new();
        for keep in (0..=symbols.len()).rev() {
            block = render_file(path, rank[i], &symbols[..keep]);
            if used + tokens(&block) <= budget {
                symbols.truncate(keep);
                break;
            }
            block.clear();
        }
        if block.is_empty() {
            break;
        }
        used += tokens(&block);
        text.push_str(&block);
        listed.push(MapFile {
            path: path.to_string(),
            rank: rank[i],
            symbols,
        });
    }
    Ok(RepoMap {
        used_tokens: tokens(&text),
        text,
        files: listed,
        budget_tokens: budget,
        total_files: files.len(),
    })
}

/// A file's block of the map: its path and its symbols' signatures, each on its one line (names
/// escaped: `patina_core::paths::printable_path`).
fn render_file(path: &str, rank: f64, symbols: &[MapSymbol]) -> String {
    use patina_core::paths::printable_path;
    let mut s = format!("{}  ({rank:.3})\n", printable_path(path));
    for sym in symbols {
        let _ = writeln!(
            s,
            "  {:>5}  {}",
            sym.start_line,
            printable_path(&sym.signature)
        );
    }
    s
}
