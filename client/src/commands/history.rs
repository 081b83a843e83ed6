//! `patina log` (commits whose messages match, or that shaped a file) and `patina related`
//! (files that change together with a file).

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Args;
use patina_proto::v1 as pb;

use crate::daemon::Client;
use crate::output::history::{print_log, print_related};
use crate::scope::history_scope;

#[derive(Args)]
pub(crate) struct LogArgs {
    /// Words of the commit messages to look for (optional with --file).
    #[arg(num_args = 0..)]
    query: Vec<String>,
    /// Only commits that touched this file; without a query, most relevant first.
    #[arg(long)]
    file: Option<String>,
    /// Only commits touching a file matching these globs.
    #[arg(long = "path")]
    path: Vec<String>,
    /// Only commits since this date (YYYY-MM-DD, or N days: 30d).
    #[arg(long)]
    since: Option<String>,
    /// Number of commits.
    #[arg(short = 'n', long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    limit: u32,
    /// A repository (id, name or path); default: the current repository.
    #[arg(long)]
    repo: Option<String>,
    #[arg(long)]
    json: bool,
}

pub(crate) async fn log(socket: &Path, args: LogArgs) -> Result<ExitCode> {
    let text = args.query.join(" ");
    if text.trim().is_empty() && args.file.is_none() {
        bail!("give a query, --file PATH, or both");
    }
    let (repo, file) = history_scope(args.repo.as_deref(), args.file.as_deref())?;
    let mut c = Client::connect_or_start(socket).await?;
    let resp = c
        .log(pb::LogRequest {
            repo,
            query: text,
            file: file.unwrap_or_default(),
            path_globs: args.path,
            since: args.since.unwrap_or_default(),
            limit: args.limit,
            max_files: 0,
        })
        .await?;
    print_log(&resp, args.json)?;
    Ok(if resp.commits.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

pub(crate) async fn related(
    socket: &Path,
    path: &str,
    limit: u32,
    repo: Option<String>,
    json: bool,
) -> Result<ExitCode> {
    let (key, file) = history_scope(repo.as_deref(), Some(path))?;
    let mut c = Client::connect_or_start(socket).await?;
    let resp = c
        .related(pb::RelatedRequest {
            repo: key,
            path: file.unwrap_or_default(),
            limit,
        })
        .await?;
    print_related(&resp, json)?;
    Ok(if resp.files.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
