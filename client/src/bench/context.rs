//! `patina bench context`: what an agent reads. Every question goes through `Search.Context` with
//! `expand` (the call behind MCP `patina_context` and `patina q --expand --json`) at each budget,
//! and the answer is scored against the lines the fix changed (`gold_lines`): line recall (the
//! share of gold lines some returned piece spans), file recall (a gold file appears at all) and
//! the characters returned. Two baselines stand beside it, scored the same way:
//! - `paste`: the same oracles' ranked files, each pasted from its first line until the budget's
//!   characters (≈ tokens × 4) are spent;
//! - `ideal`: the gold files alone, pasted the same way.
//!
//! Sets: `../shared/eval/swebench-context` and `bench/questions/context/` (made by
//! `bench/context_sets.py`), one repository per run with `--repo-dir`.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result, bail};
use clap::Args;
use patina_proto::v1 as pb;
use serde::Deserialize;
use serde_json::json;

use crate::bench::queries::{Query, Relevant, read_jsonl, subsets};
use crate::bench::repo::{RepoOpts, run_repo};
use crate::daemon::Client;

#[derive(Args)]
pub(crate) struct ContextArgs {
    /// Questions, JSON Lines: {"id", "query", "commit", "repo"?, "gold_lines": {path: [line, …]}}.
    #[arg(long)]
    pub(crate) queries: PathBuf,
    /// A git clone of the repository (each question's `commit` is checked out in turn; the
    /// original HEAD is restored at the end).
    #[arg(long, value_name = "CLONE")]
    pub(crate) repo_dir: PathBuf,
    /// Go ahead when the clone has uncommitted changes (they are lost).
    #[arg(long)]
    pub(crate) force: bool,
    /// Token budgets, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [1000u32, 2000, 4000, 8000])]
    pub(crate) budget: Vec<u32>,
    /// An oracle subset (comma-separated; `all`: every oracle); repeat for one row per subset.
    /// Default: all, then lexical.
    #[arg(long)]
    pub(crate) oracle: Vec<String>,
    /// Per checkout, how long to wait for the index (and embeddings) to catch up.
    #[arg(long, default_value_t = 600_000, value_name = "MS")]
    pub(crate) fresh_ms: u32,
    /// Use only the first N questions.
    #[arg(long)]
    pub(crate) max_queries: Option<usize>,
    /// One line per question and budget: recall and the first pieces.
    #[arg(long, short)]
    pub(crate) verbose: bool,
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Deserialize)]
struct Question {
    #[serde(default)]
    id: String,
    query: String,
    commit: String,
    #[serde(default)]
    repo: Option<String>,
    gold_lines: BTreeMap<String, Vec<u32>>,
}

/// A line range of one file that an answer holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    pub(crate) path: String,
    pub(crate) start: u32,
    pub(crate) end: u32,
}

/// How one answer did against the gold lines.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Score {
    pub(crate) line_recall: f64,
    pub(crate) file_hit: bool,
    pub(crate) chars: usize,
}

/// Score `spans` (and `chars` returned) against `gold`: the share of gold lines inside a span,
/// and whether a gold file appears at all.
pub(crate) fn score(spans: &[Span], gold: &BTreeMap<String, Vec<u32>>, chars: usize) -> Score {
    let total: usize = gold.values().map(Vec::len).sum();
    let covered: usize = gold
        .iter()
        .map(|(path, lines)| {
            lines
                .iter()
                .filter(|&&l| {
                    spans
                        .iter()
                        .any(|s| s.path == *path && s.start <= l && l <= s.end)
                })
                .count()
        })
        .sum();
    Score {
        line_recall: if total == 0 {
            0.0
        } else {
            covered as f64 / total as f64
        },
        file_hit: spans.iter().any(|s| gold.contains_key(&s.path)),
        chars,
    }
}

/// The spans of files pasted whole in order, each from its first line, while `budget_chars`
/// last (a file's header line counts); the file that does not fit whole is cut at a line.
pub(crate) fn paste(files: &[(String, String)], budget_chars: usize) -> (Vec<Span>, usize) {
    let mut used = 0;
    let mut spans = Vec::new();
    for (path, text) in files {
        let header = path.len() + 8;
        if used + header >= budget_chars {
            break;
        }
        used += header;
        let mut end = 0u32;
        for line in text.lines() {
            let cost = line.len() + 1;
            if used + cost > budget_chars {
                break;
            }
            used += cost;
            end += 1;
        }
        if end > 0 {
            spans.push(Span {
                path: path.clone(),
                start: 1,
                end,
            });
        }
        if used >= budget_chars {
            break;
        }
    }
    (spans, used)
}

/// The spans an answer of `Search.Context` holds: its items and their related pieces.
fn answer_spans(resp: &pb::ContextResponse) -> Vec<Span> {
    let mut out = Vec::new();
    for it in &resp.items {
        out.push(Span {
            path: it.path.clone(),
            start: it.start_line,
            end: it.end_line,
        });
        for r in &it.related {
            out.push(Span {
                path: r.path.clone(),
                start: r.start_line,
                end: r.end_line,
            });
        }
    }
    out
}

/// The rows of the report: a method (an oracle subset's context, its paste baseline, the ideal)
/// at a budget, with a score per question.
struct Row {
    method: String,
    budget: u32,
    scores: Vec<(usize, Score)>,
}

fn read_questions(path: &Path, max: Option<usize>) -> Result<Vec<Question>> {
    let questions: Vec<Question> = read_jsonl(path, max, "a context question")?;
    if let Some(q) = questions
        .iter()
        .find(|q| q.gold_lines.values().all(Vec::is_empty))
    {
        bail!("{}: question {} has no gold lines", path.display(), q.id);
    }
    Ok(questions)
}

/// The text of `path` in the checkout, or empty when it is not there (a gold file the commit
/// adds, or one that is not UTF-8).
fn read_checkout(root: &Path, path: &str) -> String {
    std::fs::read(root.join(path))
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}

pub(crate) async fn context(c: &mut Client, args: ContextArgs) -> Result<ExitCode> {
    let questions = read_questions(&args.queries, args.max_queries)?;
    let subsets = if args.oracle.is_empty() {
        subsets(&["all".into(), "lexical".into()])
    } else {
        subsets(&args.oracle)
    };
    if args.budget.iter().any(|&b| b < 100) {
        bail!("--budget: each budget must be at least 100 tokens");
    }
    let as_queries: Vec<Query> = questions
        .iter()
        .map(|q| Query {
            id: q.id.clone(),
            query: q.query.clone(),
            relevant: q
                .gold_lines
                .keys()
                .map(|p| Relevant { path: p.clone() })
                .collect(),
            kind: String::new(),
            repo: q.repo.clone(),
            commit: Some(q.commit.clone()),
        })
        .collect();
    let root = std::fs::canonicalize(&args.repo_dir)
        .with_context(|| format!("cannot use --repo-dir '{}'", args.repo_dir.display()))?;
    let opts = RepoOpts {
        force: args.force,
        fresh_ms: args.fresh_ms,
        semantic: subsets.iter().any(|s| s.uses_semantic()),
        history: subsets.iter().any(|s| s.uses_history()),
    };
    let mut rows: Vec<Row> = Vec::new();
    let mut row = |method: String, budget: u32, qi: usize, s: Score| match rows
        .iter_mut()
        .find(|r| r.method == method && r.budget == budget)
    {
        Some(r) => r.scores.push((qi, s)),
        None => rows.push(Row {
            method,
            budget,
            scores: vec![(qi, s)],
        }),
    };
    let verbose = args.verbose;
    let (info, _run) = run_repo(c, &opts, &root, &as_queries, async |c, id, members| {
        for &qi in members {
            let q = &questions[qi];
            let ideal: Vec<(String, String)> = q
                .gold_lines
                .keys()
                .map(|p| (p.clone(), read_checkout(&root, p)))
                .collect();
            for subset in &subsets {
                let files = c
                    .query(pb::QueryRequest {
                        query: q.query.clone(),
                        limit: 20,
                        repos: vec![id.to_string()],
                        granularity: pb::Granularity::File as i32,
                        oracles: subset.oracles.clone(),
                        ..Default::default()
                    })
                    .await
                    .map_err(crate::daemon::status_error)
                    .with_context(|| format!("question {}", q.id))?;
                let ranked: Vec<(String, String)> = files
                    .hits
                    .iter()
                    .map(|h| (h.path.clone(), read_checkout(&root, &h.path)))
                    .collect();
                for &budget in &args.budget {
                    let resp = c
                        .context(pb::ContextRequest {
                            query: q.query.clone(),
                            token_budget: budget,
                            repos: vec![id.to_string()],
                            oracles: subset.oracles.clone(),
                            format: pb::ContextFormat::Json as i32,
                            expand: true,
                            ..Default::default()
                        })
                        .await
                        .map_err(crate::daemon::status_error)
                        .with_context(|| format!("question {}", q.id))?;
                    let spans = answer_spans(&resp);
                    let s = score(&spans, &q.gold_lines, resp.text.chars().count());
                    if verbose {
                        eprintln!("{}", miss_line(q, &subset.name, budget, &s, &spans));
                    }
                    row(subset.name.clone(), budget, qi, s);
                    let (spans, used) = paste(&ranked, budget as usize * 4);
                    row(
                        format!("paste:{}", subset.name),
                        budget,
                        qi,
                        score(&spans, &q.gold_lines, used),
                    );
                }
            }
            for &budget in &args.budget {
                let (spans, used) = paste(&ideal, budget as usize * 4);
                row(
                    "ideal".into(),
                    budget,
                    qi,
                    score(&spans, &q.gold_lines, used),
                );
            }
        }
        Ok(())
    })
    .await?;
    report(&args, &info, &questions, &rows)?;
    Ok(ExitCode::SUCCESS)
}

/// One question's verbose line: its recall, then per gold file the gold lines and the ranges of
/// that file the answer held.
fn miss_line(q: &Question, subset: &str, budget: u32, s: &Score, spans: &[Span]) -> String {
    let mut out = format!(
        "{} {subset} @{budget}: lines {:.2} file {} chars {}",
        q.id, s.line_recall, s.file_hit, s.chars
    );
    for (path, lines) in &q.gold_lines {
        let held: Vec<String> = spans
            .iter()
            .filter(|x| x.path == *path)
            .map(|x| format!("{}-{}", x.start, x.end))
            .collect();
        let shown: Vec<String> = lines.iter().take(6).map(u32::to_string).collect();
        out.push_str(&format!(
            "\n    {path}: gold {}{} | held {}",
            shown.join(","),
            if lines.len() > 6 { ",…" } else { "" },
            if held.is_empty() {
                "nothing".to_string()
            } else {
                held.join(" ")
            }
        ));
    }
    out
}

fn mean(xs: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = xs.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 { 0.0 } else { sum / n as f64 }
}

fn report(args: &ContextArgs, info: &pb::RepoInfo, qs: &[Question], rows: &[Row]) -> Result<()> {
    let summary = |r: &Row| {
        (
            mean(r.scores.iter().map(|(_, s)| s.line_recall)),
            mean(
                r.scores
                    .iter()
                    .map(|(_, s)| f64::from(u8::from(s.file_hit))),
            ),
            mean(r.scores.iter().map(|(_, s)| s.chars as f64)),
        )
    };
    if args.json {
        let rows_json: Vec<_> = rows
            .iter()
            .map(|r| {
                let (lines, files, chars) = summary(r);
                let per: Vec<_> = r
                    .scores
                    .iter()
                    .map(|(qi, s)| json!({"id": qs[*qi].id, "line_recall": s.line_recall,
                                          "file_hit": s.file_hit, "chars": s.chars}))
                    .collect();
                json!({"method": r.method, "budget": r.budget, "questions": r.scores.len(),
                       "line_recall": lines, "file_recall": files, "chars": chars, "per_question": per})
            })
            .collect();
        let out = json!({"repo": info.root, "files": info.files, "chunks": info.chunks,
                         "questions": qs.len(), "rows": rows_json});
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    println!(
        "{} questions on {} ({} files, {} chunks)",
        qs.len(),
        info.root,
        info.files,
        info.chunks
    );
    println!(
        "{:<16} {:>7} {:>12} {:>12} {:>9}",
        "method", "budget", "line recall", "file recall", "chars"
    );
    let mut budgets: Vec<u32> = rows.iter().map(|r| r.budget).collect();
    budgets.sort_unstable();
    budgets.dedup();
    let methods: Vec<&str> = {
        let mut seen = HashSet::new();
        rows.iter()
            .map(|r| r.method.as_str())
            .filter(|m| seen.insert(*m))
            .collect()
    };
    for b in budgets {
        for m in &methods {
            if let Some(r) = rows.iter().find(|r| r.budget == b && r.method == *m) {
                let (lines, files, chars) = summary(r);
                println!("{m:<16} {b:>7} {lines:>12.3} {files:>12.3} {chars:>9.0}");
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gold(entries: &[(&str, &[u32])]) -> BTreeMap<String, Vec<u32>> {
        entries
            .iter()
            .map(|(p, l)| (p.to_string(), l.to_vec()))
            .collect()
    }

    fn span(path: &str, start: u32, end: u32) -> Span {
        Span {
            path: path.into(),
            start,
            end,
        }
    }

    #[test]
    fn line_recall_counts_gold_lines_inside_any_span_of_their_file() {
        let g = gold(&[("a.py", &[10, 20, 30]), ("b.py", &[5])]);
        let s = score(
            &[
                span("a.py", 1, 15),
                span("b.py", 20, 40),
                span("c.py", 1, 99),
            ],
            &g,
            7,
        );
        assert_eq!(s.line_recall, 0.25);
        assert!(s.file_hit);
        assert_eq!(s.chars, 7);
        let none = score(&[span("c.py", 1, 99)], &g, 0);
        assert_eq!(none.line_recall, 0.0);
        assert!(!none.file_hit);
    }

    #[test]
    fn pasting_stops_at_the_budget_on_a_line_boundary() {
        let files = vec![
            ("a".to_string(), "12345\n12345\n12345\n".to_string()),
            ("b".to_string(), "x\n".to_string()),
        ];
        // Header of `a` costs 9; each line 6: two lines fit in 21 characters.
        let (spans, used) = paste(&files, 21);
        assert_eq!(spans, vec![span("a", 1, 2)]);
        assert_eq!(used, 21);
        let (spans, _) = paste(&files, 1000);
        assert_eq!(spans, vec![span("a", 1, 3), span("b", 1, 1)]);
    }
}
