//! One module per command, each with its own `Args` struct or subcommand enum (which `cli.rs`
//! names in the clap tree) and its handler; `tune.rs`, `snapshot.rs`, `doctor.rs`, `model.rs`,
//! `bench/` and `load.rs` are commands too, at the top level. Commands reach the daemon through
//! `daemon.rs` and print through `output/`; a command imports no other command (only
//! `repos::status` asks `tune.rs` for the tuning lines it prints).

pub(crate) mod config;
pub(crate) mod daemon;
pub(crate) mod feedback;
pub(crate) mod generate;
pub(crate) mod graph;
pub(crate) mod history;
pub(crate) mod navigate;
pub(crate) mod query;
pub(crate) mod repos;
