//! Rendering for humans (ripgrep-like: `path:start-end` first, colour only on a terminal) and for
//! machines (`--json`).

use std::io::{IsTerminal, Write};
use std::path::{Component, Path, PathBuf};

use anyhow::Result;
use patina_core::paths::printable_path;
use patina_proto::kinds::OracleStatus;
use patina_proto::v1 as pb;
use serde_json::json;

struct Style {
    on: bool,
    /// Wrap paths in OSC 8 hyperlinks (`file://host/abs/path`) to the file they name.
    links: bool,
}

impl Style {
    /// `text` as a link to the absolute file `abs`, when links are on.
    fn link(&self, abs: &Path, text: &str) -> String {
        if !self.links {
            return text.to_string();
        }
        format!("\x1b]8;;{}\x1b\\{text}\x1b]8;;\x1b\\", file_url(abs))
    }
    fn paint(&self, code: &str, s: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    fn path(&self, s: &str) -> String {
        self.paint("35", s)
    }
    fn lines(&self, s: &str) -> String {
        self.paint("32", s)
    }
    fn symbol(&self, s: &str) -> String {
        self.paint("1", s)
    }
    fn dim(&self, s: &str) -> String {
        self.paint("2", s)
    }
}

/// `--color`: when results are coloured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ColorChoice {
    /// On a terminal, unless `NO_COLOR` is set.
    #[default]
    Auto,
    Always,
    Never,
}

static COLOR: std::sync::OnceLock<(ColorChoice, ColorChoice)> = std::sync::OnceLock::new();

/// Set once, from the command line, before anything is printed: `--color` and `--hyperlink`.
pub(crate) fn set_color(color: ColorChoice, hyperlink: ColorChoice) {
    let _ = COLOR.set((color, hyperlink));
}

fn stdout_style() -> Style {
    let (color, hyperlink) = COLOR.get().copied().unwrap_or_default();
    let tty = std::io::stdout().is_terminal();
    Style {
        on: match color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => tty && std::env::var_os("NO_COLOR").is_none(),
        },
        links: match hyperlink {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => tty && terminal_has_hyperlinks(&|k| std::env::var(k).ok()),
        },
    }
}

/// Whether the terminal described by these environment variables is known to render OSC 8
/// hyperlinks. Unknown terminals (and multiplexers, which pass links through only when configured
/// to) get none: a terminal that does not understand the sequence may print it.
fn terminal_has_hyperlinks(var: &dyn Fn(&str) -> Option<String>) -> bool {
    if var("TMUX").is_some() || var("STY").is_some() {
        return false;
    }
    if matches!(var("TERM").as_deref(), Some("dumb" | "linux")) {
        return false;
    }
    let known_program = matches!(
        var("TERM_PROGRAM").as_deref(),
        Some("iTerm.app" | "WezTerm" | "vscode" | "ghostty" | "Hyper" | "Tabby" | "rio")
    );
    let vte = var("VTE_VERSION")
        .and_then(|v| v.parse::<u32>().ok())
        .is_some_and(|v| v >= 5000);
    let term = var("TERM").unwrap_or_default();
    known_program
        || vte
        || var("KITTY_WINDOW_ID").is_some()
        || var("WT_SESSION").is_some()
        || var("KONSOLE_VERSION").is_some()
        || ["kitty", "alacritty", "foot", "wezterm", "ghostty"]
            .iter()
            .any(|t| term.contains(t))
}

/// A `file://` URL for an absolute path, with the host name (as ripgrep's hyperlinks).
fn file_url(abs: &Path) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default();
    patina_core::paths::file_uri(abs, &host)
}

/// `--vimgrep`: `path:line:column:text` per hit, at the line of its snippet (the chunk) that
/// contains the most distinct words of the query (the first line when none does); the column is
/// that line's first match, 1-based.
pub(crate) fn print_vimgrep(resp: &pb::QueryResponse, cwd: &Path, query: &str) {
    let words = query_words(query);
    for h in &resp.hits {
        if h.note.is_some() {
            continue;
        }
        let (line, col, text) = best_line(&h.snippet, &words);
        outln!(
            "{}:{}:{}:{}",
            shown_path(h, cwd),
            h.start_line + line as u32,
            col,
            text
        );
    }
}

/// The words of a query a hit's lines are matched against (`--vimgrep`, `-A/-B/-C`).
pub(crate) fn query_words(query: &str) -> Vec<String> {
    query
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| w.len() >= 2)
        .map(str::to_lowercase)
        .collect()
}

/// The file line (1-based) of `hit` that best matches `words`: the line of its snippet with the
/// most distinct query words, else its first line.
pub(crate) fn best_hit_line(hit: &pb::Hit, words: &[String]) -> u32 {
    hit.start_line + best_line(&hit.snippet, words).0 as u32
}

/// Lines of a file around a hit's best-matching line (`-A/-B/-C`), as read from the daemon.
pub(crate) struct Around {
    /// File line of the first line of `text`.
    pub start_line: u32,
    /// The best-matching line, within `start_line ..= start_line + lines - 1`.
    pub best_line: u32,
    pub text: String,
}

/// The (0-based index, 1-based column, text) of the line of `snippet` matching most `words`.
fn best_line<'a>(snippet: &'a str, words: &[String]) -> (usize, usize, &'a str) {
    let mut best = (0, 1, snippet.lines().next().unwrap_or(""));
    let mut best_score = 0;
    for (i, line) in snippet.lines().enumerate() {
        let lower = line.to_lowercase();
        let found: Vec<usize> = words
            .iter()
            .filter_map(|w| lower.find(w.as_str()))
            .collect();
        let score = found.len();
        if score > best_score {
            best_score = score;
            let col = found.iter().min().map_or(1, |c| c + 1);
            best = (i, col, line);
        }
    }
    best
}

/// The error chain as one line, without gRPC noise.
pub(crate) fn error_text(e: &anyhow::Error) -> String {
    format!("{e:#}")
}

/// `target` relative to `base` (`../x/y` when needed), or absolute when they share nothing.
fn relative(target: &Path, base: &Path) -> PathBuf {
    let t: Vec<Component> = target.components().collect();
    let b: Vec<Component> = base.components().collect();
    let common = t.iter().zip(&b).take_while(|(x, y)| x == y).count();
    if common <= 1 {
        return target.to_path_buf();
    }
    let mut out = PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    for c in &t[common..] {
        out.push(c.as_os_str());
    }
    out
}

pub(crate) fn display_path(hit: &pb::Hit, cwd: &Path) -> String {
    // A session note is not a file: its path is its reference, `session:<name>#<n>`.
    if hit.note.is_some() {
        return hit.path.clone();
    }
    let abs = Path::new(&hit.repo_root).join(&hit.path);
    relative(&abs, cwd).to_string_lossy().into_owned()
}

/// A hit's path for a human's terminal: [`display_path`] with control characters escaped, so a
/// file name with a newline stays on its line.
pub(crate) fn shown_path(hit: &pb::Hit, cwd: &Path) -> String {
    printable_path(&display_path(hit, cwd)).into_owned()
}

/// `--json`: JSON Lines, as ripgrep's — one `{"type":"hit",…}` object per hit, best first, then
/// one `{"type":"summary",…}` with what the query as a whole reported (oracles, notices,
/// freshness, timing). Each line is a complete JSON document, so a consumer can stream them and a
/// reader cut short by `head` still holds whole hits.
fn print_hits_json(
    resp: &pb::QueryResponse,
    cwd: &Path,
    around: Option<&[Option<Around>]>,
) -> Result<()> {
    for (i, h) in resp.hits.iter().enumerate() {
        let mut v = json!({
            "type": "hit",
            "rank": i + 1,
            "path": display_path(h, cwd),
            "repo_path": h.path,
            "repo_root": h.repo_root,
            "repo_id": h.repo_id,
            "start_line": h.start_line,
            "end_line": h.end_line,
            "symbol": h.symbol,
            "kind": h.kind,
            "parent": h.parent,
            "language": h.language,
            "role": patina_proto::roles::from_wire(h.role).map(|r| r.name()),
            "score": h.score,
            "oracles": h.provenance.iter().map(|p| json!({"oracle": p.oracle, "rank": p.rank, "score": p.score})).collect::<Vec<_>>(),
            "snippet": h.snippet,
            "blame": h.blame.as_ref().map(blame_json),
            "licence": (!h.licence.is_empty()).then_some(&h.licence),
            "licence_source": (!h.licence_source.is_empty()).then_some(&h.licence_source),
        });
        if let Some(a) = around.and_then(|a| a.get(i)).and_then(Option::as_ref) {
            v["context"] =
                json!({"start_line": a.start_line, "best_line": a.best_line, "text": a.text});
        }
        outln!("{v}");
    }
    let oracles: Vec<_> = resp
        .oracles
        .iter()
        .map(|o| json!({"oracle": o.oracle, "status": o.status, "hits": o.hits, "took_us": o.took_us, "message": o.message, "weight": o.weight}))
        .collect();
    let freshness: Vec<_> = resp.freshness.iter().map(freshness_json).collect();
    // The oracles this answer lacks (timed out or failed): best effort, named.
    let degraded: Vec<&str> = resp
        .oracles
        .iter()
        .filter(|o| {
            matches!(
                OracleStatus::parse(&o.status),
                Some(OracleStatus::Timeout | OracleStatus::Error)
            )
        })
        .map(|o| o.oracle.as_str())
        .collect();
    let summary = json!({"type": "summary", "hits": resp.hits.len(), "oracles": oracles, "degraded": degraded, "took_us": resp.took_us, "notices": resp.notices, "freshness": freshness, "intent": resp.intent, "query_id": resp.query_id, "cached": resp.cached});
    outln!("{summary}");
    Ok(())
}

/// Hits for a person: `path:start-end  kind symbol  [oracle#rank …]`, then the snippet — or,
/// with `around` (`-A/-B/-C`), the file's lines around the hit's best-matching line, numbered as
/// ripgrep does (`12:` the matching line, `11-` context).
pub(crate) fn print_hits(
    resp: &pb::QueryResponse,
    cwd: &Path,
    json: bool,
    files: bool,
    around: Option<&[Option<Around>]>,
) -> Result<()> {
    if json {
        return print_hits_json(resp, cwd, around);
    }
    let mut out = std::io::stdout().lock();
    for n in &resp.notices {
        eprintln!("patina: {n}");
    }
    let behind: Vec<&pb::Freshness> = resp
        .freshness
        .iter()
        .filter(|f| !f.fresh && (f.pending_files != 0 || f.indexed_commit != f.head_commit))
        .collect();
    // A few are named one by one; hundreds (an `--all` query while they catch up) are counted.
    const NAMED: usize = 3;
    for f in behind.iter().take(if behind.len() > NAMED {
        NAMED - 1
    } else {
        NAMED
    }) {
        eprintln!("patina: {} is {}", f.repo_name, freshness_line(f));
    }
    if behind.len() > NAMED {
        eprintln!(
            "patina: … and {} more repositories are behind (`patina status` lists them)",
            behind.len() - (NAMED - 1)
        );
    }
    // "unavailable" oracles already explain themselves in a notice.
    for o in resp.oracles.iter().filter(|o| {
        !matches!(
            OracleStatus::parse(&o.status),
            Some(OracleStatus::Ok | OracleStatus::Unavailable)
        )
    }) {
        eprintln!("patina: oracle {} {}: {}", o.oracle, o.status, o.message);
    }
    let st = stdout_style();
    for (i, h) in resp.hits.iter().enumerate() {
        let shown = shown_path(h, cwd);
        let loc = format!(
            "{}:{}",
            if h.note.is_some() {
                st.path(&shown)
            } else {
                st.link(&Path::new(&h.repo_root).join(&h.path), &st.path(&shown))
            },
            st.lines(&format!("{}-{}", h.start_line, h.end_line))
        );
        let what = if h.symbol.is_empty() {
            st.dim(&h.kind)
        } else if h.parent.is_empty() {
            format!("{} {}", st.dim(&h.kind), st.symbol(&h.symbol))
        } else {
            format!(
                "{} {}{}",
                st.dim(&h.kind),
                st.dim(&format!("{}::", h.parent)),
                st.symbol(&h.symbol)
            )
        };
        let prov: Vec<String> = h
            .provenance
            .iter()
            .map(|p| format!("{}#{}", p.oracle, p.rank))
            .collect();
        writeln!(
            out,
            "{loc}  {what}  {}",
            st.dim(&format!("[{}]", prov.join(" ")))
        )?;
        if let Some(b) = &h.blame {
            writeln!(out, "    {}", st.dim(&blame_line(b)))?;
        }
        if let Some(a) = around.and_then(|a| a.get(i)).and_then(Option::as_ref) {
            for (k, line) in a.text.lines().enumerate() {
                let n = a.start_line + k as u32;
                let sep = if n == a.best_line { ':' } else { '-' };
                let line: String = line.chars().take(200).collect();
                writeln!(
                    out,
                    "    {}{sep}{}",
                    st.lines(&n.to_string()),
                    line.trim_end()
                )?;
            }
        } else if !files {
            for line in h.snippet.lines() {
                let line: String = line.chars().take(160).collect();
                writeln!(out, "    {}", line.trim_end())?;
            }
        }
    }
    Ok(())
}

/// A hit's blame (`--blame`) as JSON.
fn blame_json(b: &pb::Blame) -> serde_json::Value {
    json!({
        "commit": b.commit, "short": b.short, "time_unix": b.time_unix,
        "date": if b.commit.is_empty() { String::new() } else { ymd(b.time_unix) },
        "author": b.author, "subject": b.subject, "lines": b.lines, "commits": b.commits,
    })
}

/// One line: "last changed 2026-01-02 abc1234567 Ann: subject (3 of its lines; 2 commits)".
fn blame_line(b: &pb::Blame) -> String {
    if b.commit.is_empty() {
        return format!("last changed: not committed yet ({} lines)", b.lines);
    }
    format!(
        "last changed {} {} {}: {} ({} lines{})",
        ymd(b.time_unix),
        b.short,
        b.author,
        b.subject,
        b.lines,
        if b.commits > 1 {
            format!("; {} commits in range", b.commits)
        } else {
            String::new()
        }
    )
}

fn freshness_json(f: &pb::Freshness) -> serde_json::Value {
    json!({
        "repo_id": f.repo_id, "repo": f.repo_name, "indexed_commit": f.indexed_commit, "head_commit": f.head_commit,
        "pending_files": f.pending_files, "embed_backlog": f.embed_backlog, "last_indexed_unix_ms": f.last_indexed_unix_ms,
        "age_ms": f.age_ms, "indexing": f.indexing, "watch": f.watch, "fresh": f.fresh,
    })
}

/// One line: "fresh", or what is behind.
fn freshness_line(f: &pb::Freshness) -> String {
    let short = |c: &str| {
        if c.is_empty() {
            "-".to_string()
        } else {
            c.chars().take(10).collect()
        }
    };
    let mut parts = vec![format!(
        "indexed at {} (HEAD {})",
        short(&f.indexed_commit),
        short(&f.head_commit)
    )];
    match f.pending_files {
        -1 => parts.push("reconciling".into()),
        0 => {}
        n => parts.push(format!("{n} changed files pending")),
    }
    if f.embed_backlog > 0 {
        parts.push(format!("{} chunks to embed", f.embed_backlog));
    }
    parts.push(format!("updated {} ago", human_duration_ms(f.age_ms)));
    parts.push(f.watch.clone());
    format!(
        "{}: {}",
        if f.fresh { "fresh" } else { "behind" },
        parts.join(", ")
    )
}

fn human_bytes(b: u64) -> String {
    format!("{:.1} MiB", b as f64 / (1024.0 * 1024.0))
}

fn human_duration_ms(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0 => format!("{ms}ms"),
        1..=59 => format!("{:.1}s", ms as f64 / 1000.0),
        60..=3599 => format!("{}m{}s", s / 60, s % 60),
        3600..=86399 => format!("{}h{}m", s / 3600, (s % 3600) / 60),
        _ => format!("{}d{}h", s / 86400, (s % 86400) / 3600),
    }
}

fn ago(unix_ms: i64) -> String {
    if unix_ms <= 0 {
        return "never".into();
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    format!("{} ago", human_duration_ms((now - unix_ms).max(0) as u64))
}

pub(crate) fn print_health(h: &pb::CheckResponse) {
    outln!(
        "patinad {} running: pid {}, up {}{}, {} resident, socket {}{}",
        h.version,
        h.pid,
        human_duration_ms(h.uptime_ms),
        if h.restarts_in_place > 0 {
            " since restarting in place"
        } else {
            ""
        },
        human_bytes(h.rss_bytes),
        h.socket,
        if h.socket_activated {
            " (socket-activated)"
        } else {
            ""
        }
    );
}

/// `"memory": {budget_bytes, rss_bytes, parts: [{component, bytes, limit_bytes, estimated}]}`.
fn memory_json(h: &pb::CheckResponse) -> serde_json::Value {
    json!({
        "budget_bytes": h.memory_budget_bytes,
        "rss_bytes": h.rss_bytes,
        "parts": h.memory.iter().map(|p| json!({
            "component": p.component, "bytes": p.bytes, "limit_bytes": p.limit_bytes,
            "estimated": p.estimated,
        })).collect::<Vec<_>>(),
    })
}

/// Resident memory by component, against the `[daemon] memory_mb` budget.
fn print_memory(h: &pb::CheckResponse) {
    if h.memory.is_empty() {
        return;
    }
    outln!(
        "memory: {} resident of a {} budget ([daemon] memory_mb)",
        human_bytes(h.rss_bytes),
        human_bytes(h.memory_budget_bytes)
    );
    for p in &h.memory {
        let limit = if p.limit_bytes > 0 {
            format!(" (caps within it: {})", human_bytes(p.limit_bytes))
        } else {
            String::new()
        };
        let est = if p.estimated { "~" } else { "" };
        outln!(
            "  {:>10}  {}{}",
            format!("{est}{}", human_bytes(p.bytes)),
            p.component,
            limit
        );
    }
}

fn repo_json(r: &pb::RepoInfo) -> serde_json::Value {
    json!({
        "id": r.id, "name": r.name, "root": r.root, "files": r.files, "chunks": r.chunks,
        "skipped": r.skipped.iter().map(|s| json!({"reason": s.reason, "files": s.files, "examples": s.examples})).collect::<Vec<_>>(),
        "languages": r.languages,
        "last_indexed_unix_ms": r.last_indexed_unix_ms,
        "last_index_ms": r.last_index_ms,
        "indexing": r.indexing,
        "progress": r.progress.as_ref().map(|p| json!({"files_done": p.files_done, "files_total": p.files_total, "chunks": p.chunks})),
        "last_error": r.last_error,
        "vectors": r.vectors,
        "embed_backlog": r.embed_backlog,
        "static_vectors": r.static_vectors,
        "message_backlog": r.message_backlog,
        "chunk_digest": r.chunk_digest,
        "freshness": r.freshness.as_ref().map(freshness_json),
    })
}

pub(crate) fn print_repos(list: &pb::ListResponse, json: bool) -> Result<()> {
    if json {
        let v: Vec<_> = list.repos.iter().map(repo_json).collect();
        outln!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    if list.repos.is_empty() {
        outln!("no repositories registered; add one with `patina add PATH`");
    }
    for r in &list.repos {
        outln!(
            "{}  {}  {}  {} files, {} chunks",
            r.id,
            r.name,
            r.root,
            r.files,
            r.chunks
        );
    }
    Ok(())
}

fn audit_json(a: &pb::IndexAudit) -> serde_json::Value {
    json!({"orphan_chunks": a.orphan_chunks, "dangling_records": a.dangling_records,
           "stray_docs": a.stray_docs, "missing_docs": a.missing_docs, "vanished_files": a.vanished_files})
}

fn audit_clean(a: &pb::IndexAudit) -> bool {
    *a == pb::IndexAudit::default()
}

fn audit_text(a: &pb::IndexAudit) -> String {
    let parts: Vec<String> = [
        (a.orphan_chunks, "orphan chunks"),
        (
            a.dangling_records,
            "file records pointing at missing chunks",
        ),
        (a.stray_docs, "stray lexical documents"),
        (a.missing_docs, "chunks missing from the lexical index"),
        (a.vanished_files, "records of files gone from disk"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    if parts.is_empty() {
        "consistent".into()
    } else {
        parts.join(", ")
    }
}

/// Print `patina repair`'s reports; returns whether every index is (now) consistent.
pub(crate) fn print_repair(resp: &pb::RepairResponse, check: bool, json: bool) -> Result<bool> {
    let mut ok = true;
    let mut out = Vec::new();
    for r in &resp.reports {
        let found = r.found.unwrap_or_default();
        let remaining = r.remaining;
        let clean = match &remaining {
            Some(rem) => audit_clean(rem),
            None => audit_clean(&found),
        };
        ok &= clean;
        let repo = r.repo.clone().unwrap_or_default();
        if json {
            out.push(
                json!({"id": repo.id, "name": repo.name, "root": repo.root, "chunks": repo.chunks,
                            "found": audit_json(&found), "repaired": r.repaired,
                            "remaining": remaining.as_ref().map(audit_json), "consistent": clean}),
            );
            continue;
        }
        let mut line = format!("{}  {}: {}", repo.name, repo.root, audit_text(&found));
        match &remaining {
            Some(rem) if audit_clean(rem) => line.push_str("; repaired"),
            Some(rem) => line.push_str(&format!("; after repair: {}", audit_text(rem))),
            None if !audit_clean(&found) && check => line.push_str("; `patina repair` fixes it"),
            None => {}
        }
        outln!("{line}");
    }
    if json {
        outln!("{}", serde_json::to_string_pretty(&out)?);
    } else if resp.reports.is_empty() {
        outln!("no repositories registered");
    }
    Ok(ok)
}

pub(crate) fn print_status(
    h: &pb::CheckResponse,
    list: &pb::ListResponse,
    json: bool,
) -> Result<()> {
    if json {
        let v = json!({
            "daemon": {"version": h.version, "protocol": h.protocol, "pid": h.pid, "uptime_ms": h.uptime_ms,
                        "rss_bytes": h.rss_bytes, "socket": h.socket, "data_dir": h.data_dir, "socket_activated": h.socket_activated,
                        "restarts_in_place": h.restarts_in_place,
                        "semantic_on": h.semantic_on, "semantic": h.semantic, "embeddings_computed": h.embeddings_computed,
                        "memory": memory_json(h)},
            "repos": list.repos.iter().map(repo_json).collect::<Vec<_>>(),
        });
        outln!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    print_health(h);
    print_memory(h);
    outln!("state in {}", h.data_dir);
    outln!("semantic search {}", h.semantic);
    if list.repos.is_empty() {
        outln!("\nno repositories registered; add one with `patina add PATH`");
    }
    for r in &list.repos {
        outln!("\n{} ({})  {}", r.name, r.id, r.root);
        outln!(
            "  {} files, {} chunks; last indexed {} (took {})",
            r.files,
            r.chunks,
            ago(r.last_indexed_unix_ms),
            human_duration_ms(r.last_index_ms)
        );
        if !r.languages.is_empty() {
            let mut langs: Vec<_> = r.languages.iter().collect();
            langs.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            let s: Vec<String> = langs.iter().map(|(l, n)| format!("{l} {n}")).collect();
            outln!("  languages: {}", s.join(", "));
        }
        for s in &r.skipped {
            let ex = if s.examples.is_empty() {
                String::new()
            } else {
                let ex: Vec<_> = s.examples.iter().map(|e| printable_path(e)).collect();
                format!(" (e.g. {})", ex.join(", "))
            };
            outln!("  skipped {}: {}{}", s.reason, s.files, ex);
        }
        if h.semantic_on {
            if r.embed_backlog > 0 && r.static_vectors > 0 {
                outln!(
                    "  embeddings: {} of {} chunks, {} waiting ({} with a static vector meanwhile)",
                    r.vectors,
                    r.chunks,
                    r.embed_backlog,
                    r.static_vectors
                );
            } else if r.embed_backlog > 0 {
                outln!(
                    "  embeddings: {} of {} chunks, {} waiting",
                    r.vectors,
                    r.chunks,
                    r.embed_backlog
                );
            } else {
                outln!("  embeddings: {} chunks", r.vectors);
            }
        }
        if let Some(p) = &r.progress {
            outln!(
                "  indexing: {}/{} files, {} chunks written",
                p.files_done,
                p.files_total,
                p.chunks
            );
        }
        if let Some(f) = &r.freshness {
            outln!("  {}", freshness_line(f));
        }
        if !r.last_error.is_empty() {
            outln!("  last error: {}", r.last_error);
        }
    }
    Ok(())
}

/// `YYYY-MM-DD` of a Unix time (UTC).
fn ymd(unix: i64) -> String {
    // H. Hinnant's civil_from_days.
    let z = unix.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

pub(crate) fn print_log(resp: &pb::LogResponse, json: bool) -> Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        let v = json!({
            "commits": resp.commits.iter().map(|c| json!({
                "repo_id": c.repo_id, "repo": c.repo_name, "hash": c.hash, "author": c.author,
                "time_unix": c.time_unix, "date": ymd(c.time_unix), "subject": c.subject,
                "body": c.body, "files": c.files, "files_total": c.files_total, "score": c.score,
            })).collect::<Vec<_>>(),
            "searched": resp.searched,
            "notices": resp.notices,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(());
    }
    for n in &resp.notices {
        eprintln!("note: {n}");
    }
    for c in &resp.commits {
        writeln!(
            out,
            "{} {} {}  {}",
            &c.hash[..c.hash.len().min(12)],
            ymd(c.time_unix),
            c.author,
            c.subject
        )?;
        let more = c.files_total as usize - c.files.len().min(c.files_total as usize);
        let mut files = c.files.join(" ");
        if more > 0 {
            files.push_str(&format!(" (+{more} more)"));
        }
        if !files.is_empty() {
            writeln!(out, "    {files}")?;
        }
    }
    Ok(())
}

pub(crate) fn print_related(resp: &pb::RelatedResponse, json: bool) -> Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        let v = json!({
            "repo_id": resp.repo_id, "path": resp.path, "commits": resp.commits,
            "files": resp.files.iter().map(|f| json!({
                "path": f.path, "support": f.support, "confidence": f.confidence,
            })).collect::<Vec<_>>(),
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(());
    }
    if resp.files.is_empty() {
        eprintln!(
            "no file changes together with {} ({} commits touched it)",
            resp.path, resp.commits
        );
    }
    for f in &resp.files {
        writeln!(
            out,
            "{}\t{} of {} commits ({:.0}%)",
            printable_path(&f.path),
            f.support,
            resp.commits,
            f.confidence * 100.0
        )?;
    }
    Ok(())
}

/// `patina feedback stats`.
pub(crate) fn print_feedback_stats(s: &pb::FeedbackStatsResponse, json: bool) -> Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        let v = json!({
            "records": s.records, "explicit": s.explicit, "implicit": s.implicit,
            "queries": s.queries, "used": s.used, "unhelpful": s.unhelpful,
            "ratings": s.ratings, "mean_rating": s.mean_rating,
            "most_used": s.most_used.iter().map(|p| json!({"path": p.path, "count": p.count})).collect::<Vec<_>>(),
            "last_unix_ms": s.last_unix_ms,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(());
    }
    writeln!(
        out,
        "{} feedback records ({} explicit, {} implicit) on {} answers",
        s.records, s.explicit, s.implicit, s.queries
    )?;
    writeln!(
        out,
        "results marked used: {}, unhelpful: {}",
        s.used, s.unhelpful
    )?;
    let rated: u64 = s.ratings.iter().sum();
    if rated > 0 {
        let per: Vec<String> = s
            .ratings
            .iter()
            .enumerate()
            .map(|(i, n)| format!("{}: {n}", i + 1))
            .collect();
        writeln!(
            out,
            "ratings: {rated}, mean {:.2} ({})",
            s.mean_rating,
            per.join(", ")
        )?;
    }
    if !s.most_used.is_empty() {
        writeln!(out, "most used:")?;
        for p in &s.most_used {
            writeln!(out, "  {:>4}  {}", p.count, p.path)?;
        }
    }
    if s.last_unix_ms > 0 {
        writeln!(out, "last: {}", ymd(s.last_unix_ms / 1000))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hyperlinks_on_terminals_known_to_render_them_never_inside_a_multiplexer() {
        let has = |vars: &[(&str, &str)]| {
            let vars: Vec<(String, String)> = vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            terminal_has_hyperlinks(&|k| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()))
        };
        assert!(has(&[("TERM", "xterm-kitty"), ("KITTY_WINDOW_ID", "1")]));
        assert!(has(&[
            ("TERM", "xterm-256color"),
            ("TERM_PROGRAM", "WezTerm")
        ]));
        assert!(has(&[("TERM", "xterm-256color"), ("VTE_VERSION", "7600")]));
        assert!(!has(&[("TERM", "xterm-256color"), ("VTE_VERSION", "3405")]));
        assert!(!has(&[("TERM", "xterm-256color")]), "unknown: no links");
        assert!(!has(&[
            ("TERM", "tmux-256color"),
            ("TMUX", "/tmp/tmux-1/default,1,0"),
            ("TERM_PROGRAM", "WezTerm")
        ]));
        assert!(!has(&[("TERM", "dumb"), ("WT_SESSION", "x")]));
    }

    #[test]
    fn vimgrep_picks_the_line_with_most_query_words() {
        let words = vec!["parse".to_string(), "args".to_string()];
        let snippet = "/// Options.\npub fn parse_args(args: &[String]) {\n    let x = 1;";
        assert_eq!(
            best_line(snippet, &words),
            (1, 8, "pub fn parse_args(args: &[String]) {")
        );
        assert_eq!(best_line("a\nb", &words), (0, 1, "a"));
    }

    #[test]
    fn relative_paths() {
        assert_eq!(
            relative(Path::new("/r/src/a.rs"), Path::new("/r")),
            PathBuf::from("src/a.rs")
        );
        assert_eq!(
            relative(Path::new("/r/src/a.rs"), Path::new("/r/tests")),
            PathBuf::from("../src/a.rs")
        );
        assert_eq!(
            relative(Path::new("/r/a.rs"), Path::new("/other")),
            PathBuf::from("/r/a.rs")
        );
    }
}
