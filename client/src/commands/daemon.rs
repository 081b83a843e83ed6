//! `patina daemon start|stop|status|log`.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Subcommand;

use crate::console::stdout_failed;
use crate::daemon::Client;
use crate::output::status::print_health;

#[derive(Subcommand)]
pub(crate) enum DaemonCmd {
    /// Start the daemon if it is not running.
    Start,
    /// Stop the daemon (it flushes its state first).
    Stop,
    /// Is it running? Version, pid, uptime, memory.
    Status,
    /// The log of a daemon started by a client (`-f` follows it).
    Log {
        /// Keep printing what is appended.
        #[arg(short = 'f', long)]
        follow: bool,
        /// Lines from the end.
        #[arg(short = 'n', long, default_value_t = 50)]
        lines: usize,
    },
}

pub(crate) async fn run(socket: &Path, cmd: DaemonCmd) -> Result<ExitCode> {
    match cmd {
        DaemonCmd::Start => {
            let mut c = Client::connect_or_start(socket).await?;
            print_health(&c.health().await?);
            Ok(ExitCode::SUCCESS)
        }
        DaemonCmd::Stop => {
            crate::daemon::stop(socket).await?;
            Ok(ExitCode::SUCCESS)
        }
        DaemonCmd::Status => match Client::connect(socket).await {
            Ok(mut c) => {
                print_health(&c.health().await?);
                Ok(ExitCode::SUCCESS)
            }
            Err(_) => {
                outln!("patinad is not running (socket {})", socket.display());
                Ok(ExitCode::from(1))
            }
        },
        DaemonCmd::Log { follow, lines } => log(follow, lines).await,
    }
}

/// `patina daemon log [-f] [-n N]`.
async fn log(follow: bool, lines: usize) -> Result<ExitCode> {
    use std::io::{Read, Seek, SeekFrom};
    let path = patina_proto::endpoint::log_path();
    let mut file = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!(
                "patina: no log at {} (a daemon started by systemd or by hand logs to its stderr: \
                 journalctl --user -u patina)",
                path.display()
            );
            return Ok(ExitCode::from(1));
        }
        Err(e) => bail!("cannot read {}: {e}", path.display()),
    };
    let mut text = String::new();
    file.read_to_string(&mut text)
        .with_context(|| format!("reading {}", path.display()))?;
    let all: Vec<&str> = text.lines().collect();
    for l in &all[all.len().saturating_sub(lines)..] {
        outln!("{l}");
    }
    if !follow {
        return Ok(ExitCode::SUCCESS);
    }
    let mut pos = file.stream_position()?;
    loop {
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        let len = std::fs::metadata(&path).map_or(0, |m| m.len());
        if len < pos {
            // Rotated or truncated: start again from the top of the new file.
            file = std::fs::File::open(&path)?;
            pos = 0;
        }
        file.seek(SeekFrom::Start(pos))?;
        let mut more = String::new();
        file.read_to_string(&mut more)?;
        pos += more.len() as u64;
        if !more.is_empty() {
            print!("{more}");
            if let Err(e) = std::io::Write::flush(&mut std::io::stdout()) {
                stdout_failed(e);
            }
        }
    }
}
