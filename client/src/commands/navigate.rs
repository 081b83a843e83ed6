//! `patina refs|callers|callees|defs SYMBOL`: one line per site, grouped under each file.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use patina_core::paths::printable_path;

use crate::daemon::Client;

#[derive(clap::Args)]
pub(crate) struct NavArgs {
    symbol: String,
    /// A repository (id, name or path); repeatable; default: all.
    #[arg(long)]
    repo: Vec<String>,
    #[arg(long)]
    json: bool,
}

/// `patina refs|callers|callees|defs`: one line per site, grouped under each file.
pub(crate) async fn run(socket: &Path, what: &str, a: NavArgs) -> Result<ExitCode> {
    let mut c = Client::connect_or_start(socket).await?;
    let sites = c.navigate(what, &a.symbol, &a.repo).await?.sites;
    if a.json {
        let v: Vec<serde_json::Value> = sites
            .iter()
            .map(|s| {
                serde_json::json!({"repo": s.repo, "path": s.path, "line": s.line,
                    "end_line": s.end_line, "symbol": s.symbol, "kind": s.kind,
                    "resolution": s.resolution, "target": s.target, "call": s.call})
            })
            .collect();
        outln!("{}", serde_json::Value::Array(v));
    } else {
        let mut last = String::new();
        for s in &sites {
            let file = format!("{}:{}", s.repo, s.path);
            if file != last {
                outln!("{}", printable_path(&s.path));
                last = file;
            }
            let (symbol, target) = (printable_path(&s.symbol), printable_path(&s.target));
            let mut line = match what {
                "defs" => format!("  {}-{}  {} {symbol}", s.line, s.end_line, s.kind),
                "callees" => format!("  {}  {symbol} → {target}", s.line),
                _ => format!(
                    "  {}  in {}",
                    s.line,
                    if s.symbol.is_empty() {
                        "(file)"
                    } else {
                        &symbol
                    }
                ),
            };
            if !s.resolution.is_empty() {
                line.push_str(&format!("  [{}]", s.resolution));
            }
            outln!("{line}");
        }
    }
    Ok(if sites.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
