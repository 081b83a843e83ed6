//! `patina feedback stats`.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;

use crate::daemon::Client;
use crate::output::feedback::print_feedback_stats;

#[derive(Subcommand)]
pub(crate) enum FeedbackCmd {
    /// Counts: records (explicit, implicit), answers, results used and unhelpful, ratings.
    Stats {
        #[arg(long)]
        json: bool,
    },
}

pub(crate) async fn run(socket: &Path, cmd: FeedbackCmd) -> Result<ExitCode> {
    match cmd {
        FeedbackCmd::Stats { json } => {
            let mut c = Client::connect_or_start(socket).await?;
            print_feedback_stats(&c.feedback_stats().await?, json)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
