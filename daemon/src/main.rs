//! `patinad` entry point: flags, logging, runtime.

use std::path::PathBuf;

use clap::Parser;

/// The version, and whether the suite's fault-injection hooks are compiled in
/// (`patina_core::hooks`): the e2e harness refuses a daemon without them.
const VERSION: &str = if patina_core::hooks::HOOKS {
    concat!(env!("CARGO_PKG_VERSION"), " (test hooks)")
} else {
    env!("CARGO_PKG_VERSION")
};

/// The Patina daemon. Usually started for you by `patina` or by systemd/launchd.
#[derive(Parser)]
#[command(version = VERSION, about)]
struct Args {
    /// Socket to listen on (default: $PATINA_SOCKET, else $XDG_RUNTIME_DIR/patina/patina.sock).
    #[arg(long)]
    socket: Option<PathBuf>,
    /// Check a config file (default: the one the daemon would read) and exit: 0 valid, 2 not.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "")]
    check_config: Option<PathBuf>,
}

fn main() {
    // systemd socket activation: take the inherited socket and clear LISTEN_* now, while this is
    // the only thread (the runtime, sled, the embedding and notes workers all start later).
    // SAFETY: nothing has started a thread yet; this is the first statement of `main`.
    let activated = unsafe { patinad::take_activation_socket() };
    // SAFETY: as above, still the only thread.
    let handover = unsafe { patinad::process::restart::take_handover() };
    patinad::tune_allocator();
    let args = Args::parse();
    if let Some(path) = args.check_config {
        let path = if path.as_os_str().is_empty() {
            patina_proto::endpoint::config_file()
        } else {
            path
        };
        match patinad::check_config(&path) {
            Ok(what) => {
                println!("{}: {what}", path.display());
                std::process::exit(0);
            }
            Err(e) => {
                eprintln!("patinad: {e:#}");
                std::process::exit(2);
            }
        }
    }
    let filter = std::env::var("PATINA_LOG")
        .or_else(|_| std::env::var("RUST_LOG"))
        .unwrap_or_else(|_| "info".into());
    // notify's inotify backend warns "Unable to remove the path from the watches: WatchNotFound"
    // for every watched directory a checkout deletes (the kernel already dropped the watch): noise
    // by the hundred, never actionable. Its real errors still show.
    let filter = if filter.contains("notify") {
        filter
    } else {
        format!("{filter},notify::inotify=error")
    };
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(std::io::stderr)
        // Colour for a person at a terminal; a log file gets plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let activated_socket = match activated {
        Ok(s) => s,
        Err(e) => {
            tracing::error!("{e:#}");
            eprintln!("patinad: {e:#}");
            std::process::exit(2);
        }
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("patinad: cannot start the runtime: {e}");
            std::process::exit(2);
        }
    };
    let code = match rt.block_on(patinad::serve(patinad::Options {
        socket: args.socket,
        state_root: None,
        activated_socket,
        handover,
    })) {
        Ok(patinad::Exit::Stopped) => 0,
        Ok(patinad::Exit::Restart(restart)) => {
            // Everything durable is flushed; the new image reads it back (see `restart`).
            let e = patinad::process::restart::exec(restart);
            tracing::error!("restarting in place failed: {e}");
            eprintln!("patinad: restarting in place failed: {e}");
            2
        }
        Err(e) => {
            tracing::error!("{e:#}");
            eprintln!("patinad: {e:#}");
            2
        }
    };
    // Everything durable is flushed by now. End here, at once: dropping the runtime would wait for
    // blocking tasks still running, and exit()'s destructors would tear ONNX Runtime down under
    // the embedding thread (an ERROR in the log, or a hang).
    // SAFETY: _exit ends the process; nothing after it runs.
    unsafe { libc::_exit(code) }
}
