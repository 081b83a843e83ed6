//! `patina config path|show`.

use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Subcommand;

#[derive(Subcommand)]
pub(crate) enum ConfigCmd {
    /// The path of the config file the daemon reads.
    Path,
    /// The config file's text (or that the defaults apply), checked as the daemon would load it.
    Show,
}

pub(crate) fn run(cmd: ConfigCmd) -> Result<ExitCode> {
    let path = patina_proto::endpoint::config_file();
    match cmd {
        ConfigCmd::Path => outln!("{}", path.display()),
        ConfigCmd::Show => {
            match std::fs::read_to_string(&path) {
                Ok(text) => {
                    outln!("# {}", path.display());
                    outln!("{}", text.trim_end());
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    outln!("# {} does not exist: the defaults apply", path.display());
                    return Ok(ExitCode::SUCCESS);
                }
                Err(e) => bail!("cannot read {}: {e}", path.display()),
            }
            let bin = patina_proto::endpoint::daemon_binary();
            let out = std::process::Command::new(&bin)
                .arg("--check-config")
                .arg(&path)
                .output()
                .with_context(|| format!("cannot run {} to check it", bin.display()))?;
            if !out.status.success() {
                eprintln!("{}", String::from_utf8_lossy(&out.stderr).trim_end());
                return Ok(ExitCode::from(2));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
