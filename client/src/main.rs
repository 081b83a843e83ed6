//! `patina`: the shell client. Every command is a few RPCs to `patinad` over its Unix socket; a
//! missing daemon is started on the fly. Exit codes follow grep: 0 hits, 1 no hits, 2 error.
//!
//! This file only parses the command line (`cli.rs`) and hands each command to its module:
//! `commands/` (one file per command), `tune.rs`, `snapshot.rs`, `doctor.rs`, `model.rs`,
//! `bench/`, `load.rs`. They print through `output/`, reach the daemon through `daemon.rs` and
//! resolve repositories and paths with `scope.rs`; `console.rs` (`outln!`) is below them all.

#[macro_use]
mod console;

mod bench;
mod cli;
mod commands;
mod daemon;
mod doctor;
mod graph_view;
mod load;
mod model;
mod output;
mod scope;
mod snapshot;
mod team;
mod tune;

use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;

use cli::{BenchCmd, Cli, Cmd, ModelCmd};
use commands::{config, feedback, generate, graph, history, navigate, query, repos};
use daemon::Client;

fn main() -> ExitCode {
    let cli = Cli::parse();
    output::style::set_color(cli.color, cli.hyperlink);
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
        Err(e) if console::closed_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("patina: {}", console::error_text(&e));
            ExitCode::from(2)
        }
    }
}

async fn run(cli: Cli) -> Result<ExitCode> {
    let socket = patina_proto::endpoint::socket_path(cli.socket.as_deref());
    match cli.cmd {
        Cmd::Add {
            path,
            no_wait,
            force,
        } => repos::add(&socket, path, no_wait, force).await,
        Cmd::Rm { repo } => repos::remove(&socket, &repo).await,
        Cmd::Repos { json } => repos::list(&socket, json).await,
        Cmd::Status { json } => repos::status(&socket, json).await,
        Cmd::Repair { repo, check, json } => repos::repair(&socket, repo, check, json).await,
        Cmd::Q(args) => query::run(&socket, args).await,
        Cmd::Log(args) => history::log(&socket, args).await,
        Cmd::Related {
            path,
            limit,
            repo,
            json,
        } => history::related(&socket, &path, limit, repo, json).await,
        Cmd::Refs(a) => navigate::run(&socket, "refs", a).await,
        Cmd::Callers(a) => navigate::run(&socket, "callers", a).await,
        Cmd::Callees(a) => navigate::run(&socket, "callees", a).await,
        Cmd::Defs(a) => navigate::run(&socket, "defs", a).await,
        Cmd::Tune(args) => tune::run(&socket, args).await,
        Cmd::Snapshot { cmd } => snapshot::run(&socket, cmd).await,
        Cmd::Publish {
            repo,
            readers,
            json,
        } => team::publish(&socket, repo, readers, json).await,
        Cmd::Published { json } => team::published(&socket, json).await,
        Cmd::Feedback { cmd } => feedback::run(&socket, cmd).await,
        Cmd::Graph(a) => graph::graph(&socket, a).await,
        Cmd::Map(a) => graph::map(&socket, a).await,
        Cmd::Daemon { cmd } => commands::daemon::run(&socket, cmd).await,
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
            cmd: BenchCmd::Context(args),
        } => {
            let mut c = Client::connect_or_start(&socket).await?;
            bench::context::context(&mut c, args).await
        }
        Cmd::Bench {
            cmd: BenchCmd::Load(args),
        } => load::run(&socket, args).await,
        Cmd::Doctor => doctor::run(&socket).await,
        Cmd::Config { cmd } => config::run(cmd),
        Cmd::Completions { shell } => generate::completions(shell),
        Cmd::Man => generate::man(),
    }
}
