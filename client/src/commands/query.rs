//! `patina q`: the search — ranked hits, `--vimgrep`, `-A/-B/-C` lines around each hit, or with
//! `--expand` the code itself within a token budget; ripgrep's file types (`-t`, `-T`,
//! `--type-list`); an unregistered current repository is registered on the first query.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Args;
use patina_proto::v1 as pb;

use crate::daemon::{self, Client};
use crate::output::hits::{Around, best_hit_line, print_hits, print_vimgrep, query_words};
use crate::scope::{git_root, repo_key, repo_relative};

#[derive(Args)]
pub(crate) struct QueryArgs {
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
    #[arg(short = 'n', long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
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
    #[arg(long, requires = "expand", value_name = "TOKENS", value_parser = clap::value_parser!(u32).range(1..))]
    budget: Option<u32>,
    /// Complete or error: fail when an oracle times out or fails, instead of answering without
    /// it (by default the answer names the oracle in a notice, and in `--json`).
    #[arg(long)]
    complete: bool,
    /// Also search the team's shared store (`[team] url`, docs/team.md): repositories published
    /// there that are not cloned here, shown as `owner/name@commit:path`.
    #[arg(long, conflicts_with = "expand")]
    org: bool,
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

pub(crate) async fn run(socket: &Path, mut args: QueryArgs) -> Result<ExitCode> {
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
        for n in daemon::notice_lines(&resp.notices, &resp.remedies) {
            eprintln!("patina: {n}");
        }
        // A closed pipe (`| head`) ends the output quietly.
        // Names are escaped on their lines by the daemon; code is shown as text, not as terminal
        // control (an escape sequence or a bidirectional override in it is printed escaped).
        if args.json {
            outln!("{}", resp.text.trim_end());
        } else {
            outln!(
                "{}",
                patina_core::paths::printable_text(resp.text.trim_end())
            );
        }
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
        org: args.org,
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
        print_vimgrep(&resp, &cwd, &args.query.join(" "));
    } else {
        let lines = match around {
            Some((before, after)) => {
                let words = query_words(&args.query.join(" "));
                Some(lines_around(&mut c, &resp, &words, before, after).await)
            }
            None => None,
        };
        print_hits(&resp, &cwd, args.json, args.files, lines.as_deref())?;
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
) -> Vec<Option<Around>> {
    let mut out = Vec::with_capacity(resp.hits.len());
    for h in &resp.hits {
        if h.note.is_some() {
            out.push(None);
            continue;
        }
        let best = best_hit_line(h, words);
        let req = pb::GetFileRequest {
            repo: h.repo_id.clone(),
            path: h.path.clone(),
            start_line: best.saturating_sub(before).max(1),
            end_line: best.saturating_add(after),
        };
        out.push(c.get_file(req).await.ok().map(|f| Around {
            start_line: f.start_line,
            best_line: best,
            text: f.text,
        }));
    }
    out
}
