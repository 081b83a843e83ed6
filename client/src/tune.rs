//! `patina tune [REPO]`: start tuning a repository's weights from its own history in the
//! background (`--wait` follows it), `--status` shows each repository's state and stored result,
//! `--reset` goes back to the configured settings. The result also shows in `patina status`.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Result, bail};
use clap::Args;
use patina_proto::v1 as pb;
use serde_json::json;

use crate::daemon::{Client, status_error};

#[derive(Args)]
pub(crate) struct TuneArgs {
    /// A repository (id, name or path); default: the current repository.
    repo: Option<String>,
    /// Show the state and stored result instead of starting (every repository without REPO).
    #[arg(long)]
    status: bool,
    /// Follow the run until it ends, then print the result.
    #[arg(long)]
    wait: bool,
    /// Drop the stored settings: queries use the configuration again.
    #[arg(long, conflicts_with_all = ["status", "wait"])]
    reset: bool,
    #[arg(long)]
    json: bool,
}

async fn status_of(c: &Client, repo: &str) -> Result<pb::TuneStatusResponse> {
    Ok(pb::tune_client::TuneClient::new(c.channel())
        .status(pb::TuneStatusRequest {
            repo: repo.to_string(),
        })
        .await
        .map_err(status_error)?
        .into_inner())
}

pub(crate) async fn run(socket: &Path, args: TuneArgs) -> Result<ExitCode> {
    let key = match &args.repo {
        Some(r) => crate::scope::repo_key(r),
        None if args.status => String::new(),
        None => {
            let cwd = std::env::current_dir()?;
            match crate::scope::git_root(&cwd) {
                Some(root) => root.to_string_lossy().into_owned(),
                None => bail!("not inside a repository: name one (`patina tune REPO`)"),
            }
        }
    };
    let mut c = Client::connect_or_start(socket).await?;
    if args.status {
        let resp = status_of(&c, &key).await?;
        print(&resp, args.json)?;
        return Ok(ExitCode::SUCCESS);
    }
    let resp = pb::tune_client::TuneClient::new(c.channel())
        .start(pb::TuneRequest {
            repo: key.clone(),
            reset: args.reset,
        })
        .await
        .map_err(status_error)?
        .into_inner();
    if args.reset {
        if !args.json {
            outln!("tuned settings dropped: queries use the configuration");
        } else {
            print(&resp, true)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let id = resp.repos.first().map(|r| r.repo_id.clone()).unwrap_or(key);
    if !args.wait {
        if args.json {
            print(&resp, true)?;
        } else {
            outln!("tuning in the background at low priority; `patina tune --status` shows it");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let mut last = String::new();
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let resp = status_of(&c, &id).await?;
        let Some(s) = resp.repos.first() else {
            bail!("the repository went away");
        };
        if !s.running {
            print(&resp, args.json)?;
            // A run that failed is an error (exit 2), as every other command's.
            return Ok(if s.error.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(2)
            });
        }
        let line = progress(s);
        if line != last && !args.json {
            eprintln!("{line}");
            last = line;
        }
        // Keep the channel in use (the daemon may restart: reconnect).
        if c.health().await.is_err() {
            c = Client::connect_or_start(socket).await?;
        }
    }
}

fn progress(s: &pb::TuneState) -> String {
    let phase = patina_proto::kinds::tune_phase_name(s.phase);
    if s.total > 0 {
        format!("{}: {phase} {}/{}", s.repo_name, s.done, s.total)
    } else if s.done > 0 {
        format!("{}: {phase} ({} settings tried)", s.repo_name, s.done)
    } else {
        format!("{}: {phase}", s.repo_name)
    }
}

fn result_json(r: &pb::TuneResult) -> serde_json::Value {
    json!({
        "applied": r.applied, "overrides": r.overrides, "defaults": r.defaults,
        "train_queries": r.train_queries, "heldout_queries": r.heldout_queries,
        "feedback_queries": r.feedback_queries,
        "train_mrr10_before": r.train_before, "train_mrr10_after": r.train_after,
        "heldout_mrr10_before": r.heldout_before, "heldout_mrr10_after": r.heldout_after,
        "heldout_r5_before": r.heldout_r5_before, "heldout_r5_after": r.heldout_r5_after,
        "took_ms": r.took_ms, "head": r.head, "finished_unix_ms": r.finished_unix_ms,
        "oracles": r.oracles.iter().map(|o| patina_proto::kinds::oracle_name(*o)).collect::<Vec<_>>(),
    })
}

/// The lines `patina status` and `patina tune --status` print for one repository.
pub(crate) fn lines(s: &pb::TuneState) -> Vec<String> {
    let mut out = Vec::new();
    if s.running {
        out.push(format!("tuning: {}", progress(s)));
    }
    if !s.error.is_empty() {
        out.push(format!("last tuning failed: {}", s.error));
    }
    if let Some(r) = &s.result {
        let gain = r.heldout_after - r.heldout_before;
        if r.applied {
            let sorted: std::collections::BTreeMap<&String, &f64> = r.overrides.iter().collect();
            let changes: Vec<String> = sorted
                .into_iter()
                .map(|(k, v)| {
                    let was = r.defaults.get(k).copied().unwrap_or_default();
                    format!("{k} {was} → {v}")
                })
                .collect();
            out.push(format!(
                "tuned: held-out MRR@10 {:.3} → {:.3} ({gain:+.3}), R@5 {:.3} → {:.3} on {} commits; {}",
                r.heldout_before,
                r.heldout_after,
                r.heldout_r5_before,
                r.heldout_r5_after,
                r.heldout_queries,
                changes.join(", ")
            ));
        } else {
            out.push(format!(
                "tuned: defaults kept (held-out MRR@10 {:.3} with them, {:.3} tuned, on {} commits)",
                r.heldout_before, r.heldout_after, r.heldout_queries
            ));
        }
        out.push(format!(
            "  training slice {} questions ({} from feedback): MRR@10 {:.3} → {:.3}; took {:.1} s",
            r.train_queries,
            r.feedback_queries,
            r.train_before,
            r.train_after,
            r.took_ms as f64 / 1000.0
        ));
    }
    out
}

fn print(resp: &pb::TuneStatusResponse, json: bool) -> Result<()> {
    if json {
        let v: Vec<serde_json::Value> = resp
            .repos
            .iter()
            .map(|s| {
                json!({
                    "repo_id": s.repo_id, "repo": s.repo_name, "running": s.running,
                    "phase": patina_proto::kinds::tune_phase_name(s.phase), "done": s.done, "total": s.total, "error": s.error,
                    "result": s.result.as_ref().map(result_json),
                })
            })
            .collect();
        outln!("{}", serde_json::to_string_pretty(&json!({"repos": v}))?);
        return Ok(());
    }
    for s in &resp.repos {
        let l = lines(s);
        if l.is_empty() {
            outln!("{}: not tuned (`patina tune {}`)", s.repo_name, s.repo_name);
        } else {
            outln!("{}", s.repo_name);
            for line in l {
                outln!("  {line}");
            }
        }
    }
    Ok(())
}

/// The tuning lines of `patina status`, after each repository's block.
pub(crate) async fn status_lines(c: &Client) -> Vec<String> {
    let Ok(resp) = status_of(c, "").await else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for s in &resp.repos {
        let l = lines(s);
        if !l.is_empty() {
            out.push(format!("\n{} tuning", s.repo_name));
            out.extend(l.into_iter().map(|x| format!("  {x}")));
        }
    }
    out
}
