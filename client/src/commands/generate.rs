//! `patina completions SHELL` and `patina man`: generated from the clap tree the parser uses.

use std::process::ExitCode;

use anyhow::Result;
use clap::CommandFactory;

use crate::cli::Cli;
use crate::console::write_stdout;

/// A completion script for `shell`.
pub(crate) fn completions(shell: clap_complete::Shell) -> Result<ExitCode> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "patina", &mut out);
    write_stdout(&out)
}

/// The man page (roff).
pub(crate) fn man() -> Result<ExitCode> {
    let mut out = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut out)?;
    write_stdout(&out)
}
