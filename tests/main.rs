//! Patina's end-to-end specifications, one test binary (one link instead of one per file): every
//! test drives the real `patinad` over its real Unix socket, through gRPC, the `patina` client or
//! `patina-mcp`. One module per topic; the shared harness is `util/`.

mod util;

mod agents;
mod backlog;
mod bench;
mod blame;
mod cache;
mod cli;
mod context;
mod daemon;
mod durability;
mod editors;
mod files;
mod graph;
mod hardening;
mod history;
mod hostile;
mod indexing;
mod languages;
mod live;
mod locations;
mod lsp;
mod mcp;
mod memory;
mod privacy;
mod provenance;
mod ranking;
mod reexports;
mod search;
mod semantic;
mod service;
mod shell;
mod snapshot;
mod team;
mod terminal;
mod tidy;
mod tune;
