//! `patina graph TARGET` (the calls or imports around a symbol or file) and `patina map` (the
//! most central files and symbols within a token budget).

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use patina_proto::v1 as pb;

use crate::daemon::Client;
use crate::graph_view;
use crate::scope::{git_root, graph_scope, repo_relative};

#[derive(clap::Args)]
pub(crate) struct GraphArgs {
    /// A file (path) or a symbol (`name`, `Parent.name`).
    target: String,
    /// Edges to follow from the target.
    #[arg(long, default_value_t = 2)]
    depth: u32,
    /// `out`: what it calls / imports; `in`: who calls / imports it; `both`.
    #[arg(long, default_value = "out")]
    direction: String,
    /// A repository (id, name or path); default: the current repository.
    #[arg(long)]
    repo: Option<String>,
    #[arg(long, conflicts_with = "dot")]
    json: bool,
    /// Graphviz DOT (`patina graph X --dot | dot -Tsvg > x.svg`).
    #[arg(long)]
    dot: bool,
}

#[derive(clap::Args)]
pub(crate) struct MapArgs {
    /// Token budget of the outline (≈ characters / 4).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
    budget: u32,
    /// A repository (id, name or path); default: the current repository.
    #[arg(long)]
    repo: Option<String>,
    /// Personalise the ranking toward these files or directories (repeatable).
    #[arg(long, value_name = "PATH")]
    seed: Vec<String>,
    /// Personalise the ranking toward the files and symbols these words name.
    #[arg(long)]
    query: Option<String>,
    #[arg(long)]
    json: bool,
}

/// `patina graph TARGET`: the neighbourhood of a symbol (calls) or a file (imports).
pub(crate) async fn graph(socket: &Path, a: GraphArgs) -> Result<ExitCode> {
    let (repos, target) = graph_scope(a.repo.as_deref(), &a.target)?;
    let mut c = Client::connect_or_start(socket).await?;
    let w = c
        .walk(pb::WalkRequest {
            target,
            depth: a.depth,
            direction: a.direction,
            repos,
        })
        .await?;
    let text = if a.json {
        format!("{}\n", graph_view::json(&w))
    } else if a.dot {
        graph_view::dot(&w)
    } else {
        graph_view::tree(&w)
    };
    let _ = write!(std::io::stdout(), "{text}");
    Ok(ExitCode::SUCCESS)
}

/// `patina map`: the most central files and their symbols, within a token budget.
pub(crate) async fn map(socket: &Path, a: MapArgs) -> Result<ExitCode> {
    let (repos, _) = graph_scope(a.repo.as_deref(), "")?;
    let cwd = std::env::current_dir().context("no current directory")?;
    let here = git_root(&cwd);
    let mut c = Client::connect_or_start(socket).await?;
    let m = c
        .map(pb::MapRequest {
            token_budget: a.budget,
            seed_paths: a
                .seed
                .iter()
                .map(|s| repo_relative(s, &cwd, here.as_deref()))
                .collect(),
            query: a.query.unwrap_or_default(),
            repo: repos.into_iter().next().unwrap_or_default(),
        })
        .await?;
    if a.json {
        let files: Vec<serde_json::Value> = m
            .files
            .iter()
            .map(|f| {
                serde_json::json!({"path": f.path, "rank": f.rank, "symbols":
                    f.symbols.iter().map(|s| serde_json::json!({"symbol": s.symbol,
                        "kind": s.kind, "start_line": s.start_line, "end_line": s.end_line,
                        "signature": s.signature, "rank": s.rank})).collect::<Vec<_>>()})
            })
            .collect();
        let v = serde_json::json!({"repo": m.repo, "files": files, "used_tokens": m.used_tokens,
            "budget_tokens": m.budget_tokens, "total_files": m.total_files});
        let _ = writeln!(std::io::stdout(), "{v}");
    } else {
        // The daemon escapes names on their lines; what is left is shown as text, not as
        // terminal control.
        let _ = write!(
            std::io::stdout(),
            "{}",
            patina_core::paths::printable_text(&m.text)
        );
    }
    Ok(if m.files.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
