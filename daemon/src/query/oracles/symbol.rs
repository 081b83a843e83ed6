//! The symbol oracle: exact, style-insensitive and prefix matches of symbol names, and matches of
//! file names and paths. A query that *is* an identifier (`parse_args`, `HTTPClient`,
//! `Config::load`) or a file name (`config.toml`, `src/main.rs`) puts that definition or file first.

use std::collections::HashMap;
use std::sync::Arc;

use anyhow::Result;

use patina_core::OracleId;

use super::{Oracle, OracleHit, OracleQuery, merge_by_score};
use patina_chunk::ChunkKind;
use patina_core::ChunkTable;
use patina_index::symbols::{File, SymbolTable};
use patina_retrieve::QueryPlan;
use patina_retrieve::query::Frame;

use crate::state::repo::Repo;

pub(crate) struct SymbolOracle;

const EXACT: f32 = 1.0;
const EXACT_QUALIFIED: f32 = 1.1;
const NORMALIZED: f32 = 0.9;
const FILE_PATH: f32 = 1.0;
const FILE_NAME: f32 = 0.95;
const FILE_STEM: f32 = 0.7;
const PREFIX: f32 = 0.5;
/// A definition of a `::`-qualified name's last segment under another parent: a namesake, not
/// what the query names (`mpsc::Sender::capacity` is not `StreamMap::capacity`).
const NAMESAKE: f32 = 0.6;
/// The qualifier's own definition when the qualified name is not defined (yet): the type or
/// module the query places it in (`Sender` in a `mpsc` path) is where it lives or will live.
const QUALIFIER: f32 = 0.95;
/// The qualified name under the right parent but where the grandparent does not point
/// (`oneshot::Sender::closed` for `mpsc::Sender::closed`): below the qualifier in the right place.
const QUALIFIED_ELSEWHERE: f32 = 0.9;
/// The qualifier defined somewhere its own qualifier does not point to.
const QUALIFIER_ELSEWHERE: f32 = 0.85;
/// The chunk that re-exports a name the query names (`pub use parser::B`, `export { B } from`,
/// `from .parser import B` in a package's `__init__.py`): the path users import it by, so it
/// stands beside the definition — below it (the definition is the answer), above the names
/// matched in another style and every other mention, and a named hit ([`NAMED`]) kept with it.
const REEXPORT: f32 = 0.95;
/// An `impl` block named like the query holds the type's methods; the type's own definition is
/// the better answer, so the block ranks below names matched in any style.
const IMPL: f32 = 0.8;
/// When some hit is at least this good, the query names that symbol or file outright and only
/// such hits are returned. Rank fusion only sees ranks: a near-miss (prefix, file stem, `impl`)
/// ranked second here would nearly tie with the definition, and the lexical oracle, which
/// favours chunks that merely mention the name (callers), would decide between them.
const NAMED: f32 = NORMALIZED;
/// The chunk a pasted location or stack frame points at (the innermost chunk holding its line, or
/// the test a pytest node id names): above every name, since nothing in a question is more exact.
/// Later frames of a trace score a little less each, so the trace's order survives
/// ([`LOCATION_STEP`]).
const LOCATION: f32 = 1.3;
const LOCATION_STEP: f32 = 0.01;
/// At most this many frames of a trace are located.
const MAX_FRAMES: usize = 20;
/// Prefix matches are only tried for candidates at least this long.
const MIN_PREFIX: usize = 3;

/// A name the query mentions, possibly qualified (`Config::load` → parent `config`, name `load`).
struct Candidate {
    raw: String,
    name: String,
    parent: Option<String>,
    /// Only match symbols whose parent is `parent` (an ambiguous `a.b` that may be a file name).
    require_parent: bool,
    /// A `::` path (`mpsc::Sender::capacity`): its qualifiers are types or modules, so they
    /// decide between namesakes, and `grandparent` (`mpsc`) between definitions of the parent.
    path: bool,
    grandparent: Option<String>,
}

impl Oracle for SymbolOracle {
    fn id(&self) -> OracleId {
        OracleId::Symbol
    }

    fn search(&self, q: &OracleQuery) -> Result<Vec<OracleHit>> {
        let cands = if q.plan.long {
            plan_candidates(&q.plan)
        } else {
            candidates(&q.text)
        };
        let locations = q.plan.locations();
        let frames = &locations[..locations.len().min(MAX_FRAMES)];
        if cands.is_empty() && frames.is_empty() {
            return Ok(Vec::new());
        }
        let mut hits = Vec::new();
        // Re-exports are graph facts: only a name (not a file, not a trace) looks them up.
        let names_something = cands.iter().any(|c| is_identifier(&c.name));
        // In a sentence, the project's own name (`MockK` in "tests that use MockK") names the
        // project, not its namesake definition (the `MockK` object of its DSL); asked alone, it
        // is that definition.
        let sentence = q.text.split_whitespace().nth(1).is_some();
        for (i, repo) in q.repos.iter().enumerate() {
            let project = if sentence {
                patina_retrieve::rank::normalize(&repo.name())
            } else {
                String::new()
            };
            let names_project = |c: &Candidate| {
                sentence
                    && c.parent.is_none()
                    && patina_retrieve::rank::normalize(&c.name) == project
            };
            let table = repo.symbols();
            // Built (or found resident) before the chunk table is locked: the graph's build
            // locks it too, after its own lock.
            let graph = names_something
                .then(|| crate::state::repo::graph_for_query(repo))
                .flatten();
            repo.with_chunks(|chunks| {
                let allowed = |id: u64| match (&q.filter, chunks.get(&id)) {
                    (_, None) => false,
                    (None, Some(_)) => true,
                    (Some(f), Some(m)) => f.allows(m),
                };
                let is_impl = |id: u64| chunks.get(&id).is_some_and(|m| m.kind == ChunkKind::Impl);
                // A heading is named in prose: in a sentence, a word that looks like code
                // (`OpenSSL`, `MacPorts`) matching one is the topic of the question, not a name
                // the user typed to find it; alone, the word still finds its section.
                let heading = |id: u64| {
                    sentence
                        && chunks
                            .get(&id)
                            .is_some_and(|m| m.kind == ChunkKind::Section)
                };
                let mut best: HashMap<u64, f32> = HashMap::new();
                let mut offer = |id: u64, score: f32| {
                    let e = best.entry(id).or_insert(0.0);
                    *e = e.max(score);
                };
                for c in cands.iter().filter(|c| !names_project(c)) {
                    let key = c.name.to_lowercase();
                    // A `::` path is resolved on its own, then merged.
                    if c.path {
                        for (id, score) in resolve_path(c, &table, chunks) {
                            offer(id, if is_impl(id) { score.min(IMPL) } else { score });
                        }
                        continue;
                    }
                    // Exact and qualified.
                    for s in table.named(&key).filter(|s| !heading(s.chunk_id)) {
                        let mut score = if s.name == c.name {
                            EXACT
                        } else {
                            EXACT * 0.98
                        };
                        if let Some(parent) = &c.parent {
                            let meta_parent = chunks
                                .get(&s.chunk_id)
                                .and_then(|m| m.parent.as_deref())
                                .map(str::to_lowercase);
                            if meta_parent.as_deref() == Some(parent.as_str()) {
                                score = EXACT_QUALIFIED;
                            } else if c.require_parent {
                                continue;
                            }
                        }
                        offer(
                            s.chunk_id,
                            if is_impl(s.chunk_id) {
                                score.min(IMPL)
                            } else {
                                score
                            },
                        );
                    }
                    if c.require_parent {
                        continue;
                    }
                    // Same words, other style.
                    for s in table.same_words(&c.name).filter(|s| !heading(s.chunk_id)) {
                        let id = s.chunk_id;
                        offer(id, if is_impl(id) { IMPL } else { NORMALIZED });
                    }
                    // Prefix, preferring names close in length to the candidate.
                    if key.len() >= MIN_PREFIX {
                        for s in table
                            .with_prefix(&key)
                            .filter(|s| s.key != key && !heading(s.chunk_id))
                            .take(200)
                        {
                            offer(s.chunk_id, PREFIX * key.len() as f32 / s.key.len() as f32);
                        }
                    }
                    // Files.
                    let raw = c.raw.to_lowercase().trim_start_matches("./").to_string();
                    for f in table.files() {
                        let score = if f.path == raw
                            || (raw.contains('/') && f.path.ends_with(&format!("/{raw}")))
                            || (raw.contains('/') && patina_retrieve::rank::same_file(&raw, f.path))
                        {
                            FILE_PATH
                        } else if f.file_name == raw {
                            FILE_NAME
                        } else if f.file_name.split('.').next() == Some(raw.as_str()) {
                            FILE_STEM
                        } else {
                            continue;
                        };
                        offer(f.chunk_id, score);
                    }
                }
                for (k, frame) in frames.iter().enumerate() {
                    let score = LOCATION - LOCATION_STEP * k as f32;
                    for id in locate(frame, &table, chunks) {
                        offer(id, score);
                    }
                }
                // A re-export is where a name someone types, or asks about, is made public; a
                // statement (an issue, a commit message) mentions names on its way elsewhere,
                // and their re-exports (a crate's `lib.rs`, a `prelude`) are not where it leads.
                let mut reexports = Vec::new();
                let named = q.plan.intent == patina_retrieve::Intent::Identifier
                    || q.plan.question && !q.plan.identifiers.is_empty();
                if let Some(graph) = graph.as_ref().filter(|_| named) {
                    for c in cands
                        .iter()
                        .filter(|c| is_identifier(&c.name) && !names_project(c))
                    {
                        reexports.extend(reexports_of(c, graph, &table, chunks));
                    }
                }
                for &(id, own_name) in &reexports {
                    // A re-export named like what it re-exports (a Go type alias) matched as a
                    // definition above: it is the re-export, below the definition.
                    let e = best.entry(id).or_insert(0.0);
                    *e = if own_name { REEXPORT } else { e.max(REEXPORT) };
                }
                hits.extend(best.into_iter().filter(|(id, _)| allowed(*id)).map(
                    |(chunk_id, score)| {
                        let hit = OracleHit::chunk(i, chunk_id, score);
                        // Marked for ranking only where re-exporting is the best it does.
                        if score <= REEXPORT && reexports.iter().any(|r| r.0 == chunk_id) {
                            hit.reexport()
                        } else {
                            hit
                        }
                    },
                ));
            });
        }
        if hits.iter().any(|h| h.score >= NAMED) {
            hits.retain(|h| h.score >= NAMED);
        }
        Ok(merge_by_score(hits, q.limit))
    }
}

/// A name as code spells it (`QueryParser`, `parse_args`): not a file name or a path.
fn is_identifier(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}

/// The chunks that re-export the candidate's name, each with whether the chunk is itself named
/// so. Only names defined in the repository count (under the name re-exported, for an alias):
/// a re-export of something from outside (`from typing import List` in an `__init__.py`) is no
/// definition site here, and a qualified candidate (`parser::QueryParser`) wants the
/// re-exports of the name it qualifies.
fn reexports_of(
    c: &Candidate,
    graph: &patina_index::graph::GraphTable,
    table: &SymbolTable,
    chunks: &ChunkTable,
) -> Vec<(u64, bool)> {
    let mut out = Vec::new();
    for (r, chunk) in graph.reexports_of(&c.name) {
        let Some(chunk) = chunk else { continue };
        let real = r
            .import
            .name
            .as_deref()
            .filter(|n| *n != "*")
            .unwrap_or(&c.name)
            .to_lowercase();
        let defined_elsewhere = [real.as_str(), &c.name.to_lowercase()]
            .iter()
            .any(|key| table.named(key).any(|s| s.chunk_id != chunk.chunk_id));
        if !defined_elsewhere {
            continue;
        }
        let own_name = chunks
            .get(&chunk.chunk_id)
            .and_then(|m| m.symbol.as_deref())
            .is_some_and(|s| s.eq_ignore_ascii_case(&c.name));
        out.push((chunk.chunk_id, own_name));
    }
    out
}

/// The identifiers and file names a query mentions. A single-word query is itself a candidate;
/// in longer queries only words that look like code (`snake_case`, `camelCase`, `a.b`, `a::b`,
/// `a/b`, backticked) count, so prose words do not match symbols by accident.
fn candidates(text: &str) -> Vec<Candidate> {
    let words: Vec<&str> = text.split_whitespace().take(64).collect();
    let single = words.len() == 1;
    let mut out = Vec::new();
    for w in words {
        let w = w.trim_matches(|c: char| {
            matches!(c, '`' | '\'' | '"' | ',' | ';' | '(' | ')' | '?' | '!')
        });
        let w = w.trim_end_matches("()");
        if w.is_empty() || w.len() > 200 {
            continue;
        }
        let looks_like_code = w.contains('_')
            || w.contains("::")
            || w.contains('.')
            || w.contains('/')
            // camelCase / PascalCase with a hump (`parseArgs`, `HttpClient`); an acronym in prose
            // (`URL`, `JSON`) is a word, not a name.
            || w.chars().zip(w.chars().skip(1)).any(|(a, b)| a.is_lowercase() && b.is_uppercase());
        if !single && !looks_like_code {
            continue;
        }
        // Qualified names: the last segment is the symbol, the one before it the parent.
        let segs: Vec<&str> = w
            .split("::")
            .flat_map(|s| s.split('#'))
            .filter(|s| !s.is_empty())
            .collect();
        if segs.len() >= 2 {
            let (name, parent) = (segs[segs.len() - 1], segs[segs.len() - 2]);
            out.push(Candidate {
                raw: w.into(),
                name: name.into(),
                parent: Some(parent.to_lowercase()),
                require_parent: false,
                path: w.contains("::") && !parent.is_empty(),
                grandparent: (segs.len() >= 3).then(|| segs[segs.len() - 3].to_lowercase()),
            });
        } else if !w.contains('/') && w.contains('.') {
            // `a.b`, or a dotted path (`Plug.Router.forward`, `org.koin.core.Koin`,
            // `pkg.module.func`): the last segment is the name, the one before it the parent.
            let (qualifier, b) = w.rsplit_once('.').expect("a dot");
            let mut up = qualifier.rsplit('.');
            let a = up.next().unwrap_or("");
            let grandparent = up.next().filter(|g| !g.is_empty()).map(str::to_lowercase);
            let file = looks_like_file(w);
            if !a.is_empty() && !b.is_empty() {
                out.push(Candidate {
                    raw: w.into(),
                    name: b.into(),
                    parent: Some(a.to_lowercase()),
                    require_parent: file,
                    path: false,
                    grandparent,
                });
            }
            // A file name, or (as before dotted paths were split) the whole dotted word.
            if file || qualifier.contains('.') {
                out.push(Candidate {
                    raw: w.into(),
                    name: w.into(),
                    parent: None,
                    require_parent: false,
                    path: false,
                    grandparent: None,
                });
            }
        } else {
            out.push(Candidate {
                raw: w.into(),
                name: w.into(),
                parent: None,
                require_parent: false,
                path: false,
                grandparent: None,
            });
        }
    }
    out
}

/// The definitions a `::` path names: its last segment under the named parent; when there is
/// none, the parent's own definitions (in a path that mentions the grandparent first); namesakes
/// elsewhere only as weak evidence.
fn resolve_path(
    c: &Candidate,
    table: &patina_index::symbols::SymbolTable,
    chunks: &patina_core::ChunkTable,
) -> Vec<(u64, f32)> {
    let key = c.name.to_lowercase();
    let parent_of = |id: u64| {
        chunks
            .get(&id)
            .and_then(|m| m.parent.as_deref())
            .map(str::to_lowercase)
    };
    // Does the chunk lie where the path's grandparent (`mpsc` of `mpsc::Sender::x`) points: a
    // directory or file of that name, or a parent of that name?
    let in_grandparent = |id: u64| {
        let Some(g) = &c.grandparent else { return true };
        chunks.get(&id).is_some_and(|m| {
            m.parent.as_deref().map(str::to_lowercase).as_deref() == Some(g.as_str())
                || m.path
                    .to_lowercase()
                    .split(['/', '.'])
                    .any(|seg| seg == g.as_str())
        })
    };
    let mut out = Vec::new();
    let mut qualified = false;
    for s in table.named(&key) {
        if parent_of(s.chunk_id).as_deref() == c.parent.as_deref() {
            // `oneshot::Sender::closed` is a namesake of `mpsc::Sender::closed` too, a closer one.
            if in_grandparent(s.chunk_id) {
                qualified = true;
                out.push((s.chunk_id, EXACT_QUALIFIED));
            } else {
                out.push((s.chunk_id, QUALIFIED_ELSEWHERE));
            }
        } else {
            out.push((s.chunk_id, NAMESAKE));
        }
    }
    // A module path names a file as Rust lays modules out: `sync::watch` is `sync/watch.rs` (or
    // `sync/watch/mod.rs`), whose first chunk no definition names.
    if let Some(parent) = &c.parent {
        let file = format!("/{parent}/{key}.");
        let folder = format!("/{parent}/{key}/mod.rs");
        for f in table.files() {
            let at = f
                .path
                .rfind(&file)
                .map(|i| i + file.len())
                .or_else(|| f.path.starts_with(&file[1..]).then_some(file.len() - 1));
            let module =
                at.is_some_and(|i| !f.path[i..].contains(['/', '.'])) || f.path.ends_with(&folder);
            if module {
                qualified = true;
                out.push((f.chunk_id, EXACT_QUALIFIED));
            }
        }
    }
    if let (false, Some(parent)) = (qualified, &c.parent) {
        for s in table.named(parent) {
            let score = if in_grandparent(s.chunk_id) {
                QUALIFIER
            } else {
                QUALIFIER_ELSEWHERE
            };
            out.push((s.chunk_id, score));
        }
    }
    out
}

/// How many of a long text's identifiers are looked up (most mentioned first).
const MAX_PLAN_IDENTIFIERS: usize = 16;

/// The names and files a long text (bug report, commit body) mentions, from its [`QueryPlan`]:
/// identifiers most mentioned first, then the paths of its text and stack traces.
fn plan_candidates(plan: &patina_retrieve::QueryPlan) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = plan
        .identifiers
        .iter()
        .take(MAX_PLAN_IDENTIFIERS)
        .map(|i| Candidate {
            raw: i.raw.clone(),
            name: i.name.clone(),
            parent: i.parent.as_deref().map(str::to_lowercase),
            require_parent: false,
            path: i.parent.is_some() && i.raw.contains("::"),
            grandparent: {
                let segs: Vec<&str> = i.raw.split("::").filter(|s| !s.is_empty()).collect();
                (segs.len() >= 3).then(|| segs[segs.len() - 3].to_lowercase())
            },
        })
        .collect();
    for p in &plan.paths {
        out.push(Candidate {
            raw: p.clone(),
            name: p.clone(),
            parent: None,
            require_parent: false,
            path: false,
            grandparent: None,
        });
    }
    out
}

/// The indexed files a frame's path names, best match only: the path itself or a path ending in it
/// (an absolute path in a trace), else a file of that name in a folder of that name (or of that
/// name alone, for a frame that gives no folder: Java's `Cart.java`). Original case.
pub(crate) fn files_of(frame_path: &str, table: &SymbolTable, chunks: &ChunkTable) -> Vec<String> {
    let want = frame_path.trim_start_matches("./").to_lowercase();
    let path_of = |f: File<'_>| chunks.get(&f.chunk_id).map(|m| m.path.to_string());
    let exact: Vec<String> = table
        .files()
        .filter(|f| f.path == want || want.ends_with(&format!("/{}", f.path)))
        .filter_map(path_of)
        .collect();
    if !exact.is_empty() {
        return exact;
    }
    table
        .files()
        .filter(|f| patina_retrieve::rank::same_file(&want, f.path))
        .filter_map(path_of)
        .collect()
}

/// What a query's locations point at that the repositories in scope do not hold, as notices:
/// frames outside every repository (an absolute path elsewhere — the standard library, installed
/// packages — set aside), paths no repository has, lines past a file's end. Nothing is replaced
/// silently: the answer says what it could not find.
pub(crate) fn location_notices(plan: &QueryPlan, repos: &[Arc<Repo>]) -> Vec<String> {
    let mut outside: Vec<String> = Vec::new();
    let mut notices = Vec::new();
    for frame in plan.locations().iter().take(MAX_FRAMES) {
        // (file, its last chunked line) in every repository that has it.
        let mut found: Vec<(String, u32)> = Vec::new();
        for repo in repos {
            let table = repo.symbols();
            repo.with_chunks(|chunks| {
                for path in files_of(&frame.path, &table, chunks) {
                    let last = chunks
                        .values()
                        .filter(|m| *m.path == *path)
                        .map(|m| m.end_line)
                        .max()
                        .unwrap_or(0);
                    found.push((path, last));
                }
            });
        }
        if found.is_empty() {
            let name = frame.path.rsplit('/').next().unwrap_or(&frame.path);
            if frame.path.starts_with('/') {
                if !outside.iter().any(|o| o == name) {
                    outside.push(name.to_string());
                }
            } else {
                notices.push(format!(
                    "no file {} in the repositories searched: nothing stands in for it",
                    frame.path
                ));
            }
            continue;
        }
        if let Some(line) = frame.line
            && found.iter().all(|(_, last)| line > *last)
        {
            let (path, last) = &found[0];
            notices.push(format!(
                "{path} has {last} lines: line {line} is past its end"
            ));
        }
    }
    if !outside.is_empty() {
        let n = outside.len();
        let named: Vec<&str> = outside.iter().take(3).map(String::as_str).collect();
        notices.push(format!(
            "{n} frame(s) outside the repository set aside ({}{})",
            named.join(", "),
            if n > 3 { ", …" } else { "" }
        ));
    }
    notices
}

/// The chunks `frame` points at: in each file it names, the innermost chunk holding its line, or
/// (a test named without a line) the definitions of that name.
fn locate(frame: &Frame, table: &SymbolTable, chunks: &ChunkTable) -> Vec<u64> {
    let mut out = Vec::new();
    for path in files_of(&frame.path, table, chunks) {
        let in_file = chunks.iter().filter(|(_, m)| *m.path == *path);
        match (frame.line, &frame.function) {
            (Some(line), _) => {
                if let Some((id, _)) = in_file
                    .filter(|(_, m)| m.start_line <= line && line <= m.end_line)
                    .min_by_key(|(id, m)| (m.end_line - m.start_line, **id))
                {
                    out.push(*id);
                }
            }
            (None, Some(name)) => out.extend(
                in_file
                    .filter(|(_, m)| m.symbol.as_deref() == Some(name.as_str()))
                    .map(|(id, _)| *id),
            ),
            (None, None) => {}
        }
    }
    out
}

/// `config.toml`, `main.rs`: a dot followed by a short lowercase extension.
fn looks_like_file(w: &str) -> bool {
    w.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=5).contains(&ext.len())
            && ext
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(text: &str) -> Vec<(String, Option<String>, Option<String>, bool)> {
        candidates(text)
            .into_iter()
            .map(|c| (c.name, c.parent, c.grandparent, c.require_parent))
            .collect()
    }

    #[test]
    fn a_dotted_path_names_its_last_segment_under_the_one_before() {
        // `Plug.Router.forward`: `forward` defined in `Plug.Router` (Elixir, Python, Kotlin, C#
        // write their qualified names with dots), beside the whole word as before.
        let c = named("Plug.Router.forward");
        assert!(c.contains(&(
            "forward".into(),
            Some("router".into()),
            Some("plug".into()),
            false
        )));
        assert!(c.contains(&("Plug.Router.forward".into(), None, None, false)));
        // One dot: as before, parent and name only.
        assert_eq!(
            named("app.config"),
            [("config".into(), Some("app".into()), None, false)]
        );
        // A file name with dots stays a file name; its parent is required.
        let f = named("router_test.exs");
        assert!(f.contains(&("router_test.exs".into(), None, None, false)));
        assert!(f.contains(&("exs".into(), Some("router_test".into()), None, true)));
    }
}
