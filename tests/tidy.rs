//! The shape of the code, checked (rust-analyzer's "tidy" style): these tests read the sources, not
//! the product.
//!
//! - The daemon is built in floors (`daemon/src/<floor>/`), each importing only the floors below
//!   it: `process` < `state` < `services` < `query` < `workers` < `rpc`, with the crate root
//!   (`lib.rs`, `app.rs`) on top wiring them. A `use crate::…` (or an inline `crate::…` path) that
//!   reaches a higher floor, a module outside every floor, or the root fails.
//! - No crate of the workspace has an import cycle between its modules (`use crate::…`,
//!   `use super::…` and inline paths, test modules excluded).
//! - No non-test source file is longer than [`MAX_LINES`], but for the few in [`LONG_FILES`], each
//!   with its reason.
//! - The floors' own invariants: nothing under `state/` starts a thread or a task; nothing under
//!   `services/` names a ranking type (`patina_retrieve::{fusion, rank, priors}`); nothing below
//!   `rpc/` and the root names the wire (`patina_proto`, but for `endpoint`'s paths).
//! - Every non-test module opens with a `//!` line saying what it is for; every name the lists
//!   below allow still exists.
//! - Every file a repository holds is read through `patina_confined` (opened beneath the root,
//!   no link followed): no product code opens a file by path but the few in [`OWN_FILE_READERS`],
//!   which read Patina's own state, configuration or the system's, each with its reason.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The daemon's floors, lowest first.
const FLOORS: &[&str] = &["process", "state", "services", "query", "workers", "rpc"];

/// Files of the daemon's root: they wire the floors together and nothing imports them.
const ROOT_FILES: &[&str] = &["lib.rs", "main.rs", "app.rs"];

/// Process-wide statics of the daemon outside `process/`: each a test hook or the allocator, with
/// its reason. Any other static is a signal someone imports its owner for: pass it in instead.
const DAEMON_STATICS: &[(&str, &str, &str)] = &[
    (
        "lib.rs",
        "ALLOCATOR",
        "the global allocator must be a static",
    ),
    (
        "state/config.rs",
        "IDLE",
        "test hook: PATINA_TEST_IDLE_RELEASE_SECS, read once",
    ),
    (
        "workers/embedder.rs",
        "GATE",
        "test hook: PATINA_TEST_EMBED_GATE, read once",
    ),
    (
        "query/oracles/mod.rs",
        "DELAYS",
        "test hook: PATINA_TEST_ORACLE_DELAY_MS, read once",
    ),
];

/// The longest a non-test source file may be.
const MAX_LINES: usize = 800;

/// Source files allowed past [`MAX_LINES`], and why. Keep it short.
const LONG_FILES: &[(&str, &str)] = &[];

/// Every crate of the workspace whose modules are checked for cycles (its `src/`).
const CRATES: &[&str] = &[
    "crates/core",
    "crates/confined",
    "crates/retrieve",
    "crates/chunk",
    "crates/embed",
    "crates/index",
    "proto",
    "daemon",
    "client",
    "mcp-shim",
    "lsp",
];

/// Calls that open a file by its path and read it.
const PATH_READS: &[&str] = &[
    "fs::read(",
    "fs::read_to_string(",
    "File::open(",
    "OpenOptions::new()",
];

/// Product source files that read files by path, and why none of them is a repository's file
/// (those go through `patina_confined`). Keep it short.
const OWN_FILE_READERS: &[(&str, &str)] = &[
    (
        "client/src/bench/context.rs",
        "the question set the user names, and the bench's own clone read for its baselines (never served)",
    ),
    (
        "daemon/src/services/git.rs",
        "git's own metadata (HEAD, refs), parsed for a commit id, never served",
    ),
    (
        "daemon/src/services/snapshot.rs",
        "a snapshot file the user names on the command line",
    ),
    (
        "daemon/src/process/socket.rs",
        "the instance lock in the state root",
    ),
    (
        "daemon/src/process/memory.rs",
        "/proc/self's status, maps and statm",
    ),
    (
        "daemon/src/state/tuned.rs",
        "tune's result in the state root",
    ),
    ("daemon/src/state/config.rs", "the config file"),
    (
        "crates/index/src/history.rs",
        "history.bin in the state root",
    ),
    (
        "crates/index/src/chunk_log.rs",
        "the chunk log in the state root",
    ),
    (
        "crates/index/src/vectors.rs",
        "the vector index in the state root",
    ),
    (
        "crates/index/src/vectors/manifest.rs",
        "the vector index's manifest in the state root",
    ),
    (
        "crates/index/src/vectors/sealed.rs",
        "the vector index's sealed segments in the state root",
    ),
    (
        "crates/index/src/embedding_cache.rs",
        "the embedding cache in the state root",
    ),
    (
        "crates/embed/src/static_table.rs",
        "the model's static table",
    ),
    (
        "crates/embed/src/wordpiece.rs",
        "the model's tokenizer.json",
    ),
    (
        "proto/src/endpoint.rs",
        "the daemon's log, opened to append",
    ),
    (
        "client/src/daemon.rs",
        "/proc, to tell whether the daemon's pid lives",
    ),
    (
        "client/src/output/style.rs",
        "/proc's host name, for hyperlinks",
    ),
    ("client/src/doctor.rs", "/proc's inotify limits"),
    (
        "client/src/model.rs",
        "the installed model's MANIFEST.json, for the static table's stage",
    ),
    (
        "client/src/commands/daemon.rs",
        "the daemon's log (`patina daemon log`)",
    ),
    (
        "client/src/commands/config.rs",
        "the config file (`patina config show`)",
    ),
    ("client/src/bench/queries.rs", "a benchmark's question set"),
    ("client/src/bench/corpus.rs", "a benchmark's corpus file"),
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate sits in the workspace")
        .to_path_buf()
}

/// A crate's modules: module path (`a::b`; `""` for the root) → its file.
fn modules(src: &Path) -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("reading a source folder") {
            let path = entry.expect("a folder entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).expect("under src");
            let mut parts: Vec<String> = rel
                .iter()
                .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
                .collect();
            if parts.last().is_some_and(|p| p == "mod") {
                parts.pop();
            }
            let name = if parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main") {
                String::new()
            } else {
                parts.join("::")
            };
            // A binary's root beside a library's is another crate: it imports through the
            // library's name, never `crate::`, so it is left out.
            if name.is_empty() && out.contains_key("") {
                continue;
            }
            if name.is_empty() && rel == Path::new("main.rs") && src.join("lib.rs").exists() {
                continue;
            }
            out.insert(name, path);
        }
    }
    out
}

/// Every non-test module of every crate in [`CRATES`]: (its path from the workspace, its file).
fn product_files() -> Vec<(String, PathBuf)> {
    let root = workspace();
    CRATES
        .iter()
        .flat_map(|krate| modules(&root.join(krate).join("src")))
        .filter(|(name, _)| !is_test_module(name))
        .map(|(_, file)| {
            let rel = file
                .strip_prefix(&root)
                .expect("in the workspace")
                .to_string_lossy()
                .into_owned();
            (rel, file)
        })
        .collect()
}

/// Whether a module is a test module (a `tests.rs` file, or under a `tests/` folder).
fn is_test_module(name: &str) -> bool {
    name.split("::")
        .any(|p| p == "tests" || p.ends_with("_tests"))
}

/// `text` without comments, string literals' contents, and `#[cfg(test)]` items.
fn code_of(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if b[i..].starts_with(b"/*") {
            i += 2;
            while i < b.len() && !b[i..].starts_with(b"*/") {
                i += 1;
            }
            i += 2;
            continue;
        }
        if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
            continue;
        }
        if b[i] == b'\'' && i + 2 < b.len() && (b[i + 2] == b'\'' || b[i + 1] == b'\\') {
            // A char literal ('a', '\n', '\''); lifetimes have no closing quote.
            i += 1;
            while i < b.len() && b[i] != b'\'' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            continue;
        }
        if b[i..].starts_with(b"#[cfg(test)]") {
            // Skip the attribute and what it guards: an item to its `;` or its matching `}`; a
            // variant, field or match arm to its `,` or the end of the list it is in.
            i += "#[cfg(test)]".len();
            let mut depth = 0usize;
            while i < b.len() {
                match b[i] {
                    b'{' | b'(' | b'[' => depth += 1,
                    b'}' | b')' | b']' if depth == 0 => break,
                    b'}' | b')' | b']' => {
                        depth -= 1;
                        if depth == 0 && b[i] == b'}' {
                            i += 1;
                            break;
                        }
                    }
                    b';' | b',' if depth == 0 => {
                        i += 1;
                        break;
                    }
                    _ => {}
                }
                i += 1;
            }
            continue;
        }
        out.push(b[i] as char);
        i += 1;
    }
    out
}

/// Expand a `use` tree (`a::{b, c::{d, e}}`) into its paths.
fn expand_use(tree: &str) -> Vec<Vec<String>> {
    fn split_top(s: &str) -> Vec<&str> {
        let (mut depth, mut start, mut parts) = (0, 0, Vec::new());
        for (i, c) in s.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    parts.push(&s[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        parts.push(&s[start..]);
        parts
    }
    // `x as y` names x; then whitespace means nothing.
    let words: Vec<&str> = tree.split_whitespace().collect();
    let mut kept = String::new();
    let mut i = 0;
    while i < words.len() {
        if words[i] == "as" {
            // Drop the alias, keep what follows it (`,` or `}`).
            let alias = words.get(i + 1).copied().unwrap_or("");
            kept.push_str(alias.trim_start_matches(|c: char| c.is_alphanumeric() || c == '_'));
            i += 2;
            continue;
        }
        kept.push_str(words[i]);
        i += 1;
    }
    let tree = kept;
    let mut out = Vec::new();
    if let Some(open) = tree.find('{') {
        let prefix: Vec<String> = tree[..open]
            .split("::")
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect();
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        for part in split_top(inner) {
            if part.is_empty() {
                continue;
            }
            for rest in expand_use(part) {
                let mut p = prefix.clone();
                p.extend(rest);
                out.push(p);
            }
        }
    } else {
        out.push(
            tree.split("::")
                .filter(|p| !p.is_empty() && *p != "self" && *p != "*")
                .map(str::to_string)
                .collect(),
        );
    }
    out
}

/// The paths `code` (of module `module`) names inside its own crate, made absolute: `use`
/// trees and inline `crate::…` / `super::…` paths.
fn crate_paths(code: &str, module: &str) -> Vec<Vec<String>> {
    let here: Vec<String> = module
        .split("::")
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect();
    let absolute = |p: Vec<String>| -> Option<Vec<String>> {
        match p.first().map(String::as_str) {
            Some("crate") => Some(p[1..].to_vec()),
            Some("super") => {
                let ups = p.iter().take_while(|s| *s == "super").count();
                let base = here.len().checked_sub(ups)?;
                let mut abs = here[..base].to_vec();
                abs.extend(p[ups..].iter().cloned());
                Some(abs)
            }
            _ => None,
        }
    };
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let before = rest[..at].chars().last();
        let stmt_end = rest[at..].find(';').map_or(rest.len(), |e| at + e);
        if before.is_none_or(|c| !c.is_alphanumeric() && c != '_') {
            for p in expand_use(&rest[at + 4..stmt_end]) {
                out.extend(absolute(p));
            }
        }
        rest = &rest[(at + 4).min(stmt_end.max(at + 4))..];
    }
    for start in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(start) {
            let at = from + at;
            from = at + start.len();
            if code[..at]
                .chars()
                .last()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
            {
                continue;
            }
            let path: String = code[at..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let parts: Vec<String> = path
                .split("::")
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect();
            // `crate::{…}` is a `use` tree, read above.
            if parts.len() > 1 {
                out.extend(absolute(parts));
            }
        }
    }
    out
}

/// The module a path names: its longest prefix that is a module (the root when none is).
fn owner(path: &[String], mods: &BTreeMap<String, PathBuf>) -> String {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].join("::"))
        .find(|m| mods.contains_key(m))
        .unwrap_or_default()
}

/// A crate's import graph: module → the modules it imports (not itself, not test modules).
fn import_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mods = modules(src);
    let mut graph = BTreeMap::new();
    for (name, file) in &mods {
        if is_test_module(name) {
            continue;
        }
        let text = std::fs::read_to_string(file).expect("reading a source file");
        let mut deps = BTreeSet::new();
        for path in crate_paths(&code_of(&text), name) {
            let to = owner(&path, &mods);
            // A module's own submodules and ancestors are its own business (`mod x;` lines and
            // `super::` items of a parent that declares it are not imports across modules) —
            // except the root, which is checked on its own.
            if to == *name || is_test_module(&to) {
                continue;
            }
            deps.insert(to);
        }
        graph.insert(name.clone(), deps);
    }
    graph
}

/// The cycles of `graph` (strongly connected components of two modules or more, the root left
/// out: a library's root re-exports what its modules use).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Tarjan's algorithm, iterative enough for a few hundred modules.
    struct T<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        t.index.insert(v, t.next);
        t.low.insert(v, t.next);
        t.next += 1;
        t.stack.push(v);
        t.on.insert(v);
        for w in t.g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if w.is_empty() || !t.g.contains_key(w) {
                continue;
            }
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let lv = t.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut scc = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                scc.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if scc.len() > 1 {
                scc.sort();
                t.out.push(scc);
            }
        }
    }
    let mut t = T {
        g: graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !v.is_empty() && !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

/// The floor of a daemon module (`None`: the root's files), or an error for a module outside
/// every floor.
fn floor_of(module: &str) -> Result<Option<usize>, String> {
    if module.is_empty() || module == "app" {
        return Ok(None);
    }
    let top = module.split("::").next().unwrap_or("");
    FLOORS
        .iter()
        .position(|f| *f == top)
        .map(Some)
        .ok_or_else(|| {
            format!(
                "`{module}` is in no floor (daemon/src/{{{}}}/)",
                FLOORS.join(",")
            )
        })
}

#[test]
fn the_daemon_imports_only_downward_through_its_floors() {
    let src = workspace().join("daemon/src");
    let graph = import_graph(&src);
    let mut wrong = Vec::new();
    for (from, deps) in &graph {
        let from_floor = match floor_of(from) {
            Ok(f) => f,
            Err(e) => {
                wrong.push(e);
                continue;
            }
        };
        let Some(from_floor) = from_floor else {
            continue; // the root wires every floor
        };
        for to in deps {
            match floor_of(to) {
                Ok(None) => wrong.push(format!(
                    "`{from}` imports the crate root (`{}`): the root only wires the floors",
                    if to.is_empty() { "lib.rs" } else { to }
                )),
                Ok(Some(f)) if f > from_floor => wrong.push(format!(
                    "`{from}` ({}) imports `{to}` ({}), a higher floor",
                    FLOORS[from_floor], FLOORS[f]
                )),
                _ => {}
            }
        }
    }
    for f in std::fs::read_dir(&src).expect("daemon/src") {
        let name = f.expect("entry").file_name().to_string_lossy().into_owned();
        if name.ends_with(".rs") && !ROOT_FILES.contains(&name.as_str()) {
            wrong.push(format!(
                "daemon/src/{name} sits beside the root: put it in a floor"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "the daemon's floors (lowest first: {}):\n  {}",
        FLOORS.join(" < "),
        wrong.join("\n  ")
    );
}

#[test]
fn the_daemons_process_wide_statics_live_in_process_but_test_hooks() {
    let src = workspace().join("daemon/src");
    let mut found = Vec::new();
    for (name, file) in modules(&src) {
        if is_test_module(&name) || name.split("::").next() == Some("process") {
            continue;
        }
        let rel = file
            .strip_prefix(&src)
            .expect("under src")
            .to_string_lossy()
            .into_owned();
        let code = code_of(&std::fs::read_to_string(&file).expect("reading a source file"));
        for line in code.lines() {
            let t = line.trim_start();
            let t = t
                .strip_prefix("pub(crate) ")
                .or_else(|| t.strip_prefix("pub "))
                .unwrap_or(t);
            let Some(rest) = t.strip_prefix("static ") else {
                continue;
            };
            let ident: String = rest
                .trim_start_matches("mut ")
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !DAEMON_STATICS
                .iter()
                .any(|(f, s, _)| *f == rel && *s == ident)
            {
                found.push(format!("daemon/src/{rel}: static {ident}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "process-wide statics outside daemon/src/process/ (own them in a struct and pass it in, \
         or list a test hook in DAEMON_STATICS with its reason):\n  {}",
        found.join("\n  ")
    );
}

#[test]
fn no_crate_has_an_import_cycle_between_its_modules() {
    let mut found = Vec::new();
    for krate in CRATES {
        let src = workspace().join(krate).join("src");
        for cycle in cycles(&import_graph(&src)) {
            found.push(format!("{krate}: {}", cycle.join(" ↔ ")));
        }
    }
    assert!(found.is_empty(), "import cycles:\n  {}", found.join("\n  "));
}

#[test]
fn no_source_file_is_longer_than_800_lines_but_the_few_allowed() {
    let mut long = Vec::new();
    let mut allowed_seen = BTreeSet::new();
    for (rel, file) in product_files() {
        let lines = std::fs::read_to_string(&file)
            .expect("reading a source file")
            .lines()
            .count();
        if LONG_FILES.iter().any(|(f, _)| *f == rel) {
            allowed_seen.insert(rel);
            continue;
        }
        if lines > MAX_LINES {
            long.push(format!("{rel}: {lines} lines"));
        }
    }
    assert!(
        long.is_empty(),
        "source files over {MAX_LINES} lines (split them by job, move their tests to a `tests.rs` \
         beside them, or add them to LONG_FILES with the reason):\n  {}",
        long.join("\n  ")
    );
    for (f, _) in LONG_FILES {
        assert!(
            allowed_seen.contains(*f),
            "LONG_FILES names {f}, which is no longer a source file: drop it from the list"
        );
    }
}

#[test]
fn the_source_reader_sees_imports_as_the_compiler_does() {
    let code = code_of(
        "use crate::{a::B as Bee, c::{d, e::F}};\n// use crate::commented;\nfn f() { crate::g::h(); \
         let s = \"crate::in_string\"; }\n#[cfg(test)]\nmod tests { use crate::only_tests; }\n",
    );
    let mut paths: Vec<String> = crate_paths(&code, "x::y")
        .into_iter()
        .map(|p| p.join("::"))
        .collect();
    paths.sort();
    paths.dedup();
    assert_eq!(paths, ["a::B", "c::d", "c::e::F", "g::h"]);
    let mut sup: Vec<String> = crate_paths("use super::super::z::W;", "x::y")
        .into_iter()
        .map(|p| p.join("::"))
        .collect();
    sup.dedup();
    assert_eq!(sup, ["z::W"]);
    let mut g = BTreeMap::new();
    g.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    g.insert("b".to_string(), BTreeSet::from(["a".to_string()]));
    g.insert("c".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(cycles(&g), vec![vec!["a".to_string(), "b".to_string()]]);
}

#[test]
fn repository_files_are_read_only_through_the_confined_reader() {
    let root = workspace();
    let mut found = Vec::new();
    let mut readers = BTreeSet::new();
    for (rel, file) in product_files() {
        let code = code_of(&std::fs::read_to_string(&file).expect("reading a source file"));
        if !PATH_READS.iter().any(|call| code.contains(call)) {
            continue;
        }
        readers.insert(rel.clone());
        if !OWN_FILE_READERS.iter().any(|(f, _)| *f == rel) {
            found.push(rel);
        }
    }
    assert!(
        found.is_empty(),
        "these files open files by path ({PATH_READS:?}): read a repository's files with \
         patina_confined, or list Patina's own files in OWN_FILE_READERS with the reason:\n  {}",
        found.join("\n  ")
    );
    for (f, _) in OWN_FILE_READERS {
        assert!(
            readers.contains(*f),
            "OWN_FILE_READERS names {f}, which no longer opens a file by path: drop it"
        );
    }
    // The readers of repository files use the confined reader.
    for f in [
        "daemon/src/services/files.rs",
        "crates/index/src/round.rs",
        "crates/index/src/licences.rs",
        "lsp/src/methods/common.rs",
    ] {
        let code = code_of(&std::fs::read_to_string(root.join(f)).expect("reading a source file"));
        assert!(
            code.contains("patina_confined::"),
            "{f} reads repository files: through patina_confined"
        );
    }
}

/// The daemon's non-test modules under `floor/`: (path under daemon/src, code without comments).
fn floor_code(floor: &str) -> Vec<(String, String)> {
    let src = workspace().join("daemon/src");
    modules(&src)
        .into_iter()
        .filter(|(name, _)| !is_test_module(name) && name.split("::").next() == Some(floor))
        .map(|(_, file)| {
            let rel = file
                .strip_prefix(&src)
                .expect("under src")
                .to_string_lossy()
                .into_owned();
            let code = code_of(&std::fs::read_to_string(&file).expect("reading a source file"));
            (rel, code)
        })
        .collect()
}

/// Where `code` names one of `needles`: "file: needle" for each.
fn naming(floor: &str, needles: &[&str], allowed: impl Fn(&str, &str) -> bool) -> Vec<String> {
    let mut found = Vec::new();
    for (rel, code) in floor_code(floor) {
        for n in needles {
            let mut at = 0;
            while let Some(i) = code[at..].find(n) {
                let rest = &code[at + i..];
                if !allowed(&rel, rest) {
                    found.push(format!(
                        "daemon/src/{rel}: {}",
                        rest.lines().next().unwrap_or("")
                    ));
                }
                at += i + n.len();
            }
        }
    }
    found
}

#[test]
fn nothing_under_state_starts_a_thread_or_a_task() {
    let found = naming(
        "state",
        &[
            "thread::spawn",
            "thread::Builder",
            "thread::scope",
            "tokio::spawn",
            "spawn_blocking",
        ],
        |_, _| false,
    );
    assert!(
        found.is_empty(),
        "state/ keeps and locks; it starts nothing (a worker under workers/ does, a request asks \
         through state::schedule):\n  {}",
        found.join("\n  ")
    );
}

#[test]
fn no_service_names_a_ranking_type() {
    let mut found = Vec::new();
    for (rel, code) in floor_code("services") {
        for (i, _) in code.match_indices("patina_retrieve::") {
            let rest = &code[i + "patina_retrieve::".len()..];
            let names: Vec<&str> = if let Some(group) = rest.strip_prefix('{') {
                group
                    .split('}')
                    .next()
                    .unwrap_or("")
                    .split(',')
                    .map(str::trim)
                    .collect()
            } else {
                vec![rest]
            };
            if names.iter().any(|n| {
                ["fusion", "rank", "priors"].iter().any(|r| {
                    n.starts_with(r)
                        && n[r.len()..].starts_with(|c: char| !c.is_alphanumeric() && c != '_')
                })
            }) {
                found.push(format!(
                    "daemon/src/{rel}: patina_retrieve::{}",
                    rest.lines().next().unwrap_or("")
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "services/ knows nothing of ranking: fusion, rank and priors are query/'s:\n  {}",
        found.join("\n  ")
    );
}

#[test]
fn nothing_below_the_wire_names_it() {
    let mut found = Vec::new();
    for floor in ["process", "state", "services", "query", "workers"] {
        found.extend(naming(floor, &["patina_proto::"], |_, rest| {
            rest.starts_with("patina_proto::endpoint::")
        }));
    }
    assert!(
        found.is_empty(),
        "only rpc/ and the root speak the wire (patina_proto); below them, plain types \
         (patina_proto::endpoint's paths aside):\n  {}",
        found.join("\n  ")
    );
}

#[test]
fn every_module_opens_with_a_line_on_what_it_is_for() {
    let found: Vec<String> = product_files()
        .into_iter()
        .filter(|(_, file)| {
            let text = std::fs::read_to_string(file).expect("reading a source file");
            !text.trim_start().starts_with("//!")
        })
        .map(|(rel, _)| rel)
        .collect();
    assert!(
        found.is_empty(),
        "modules without a `//!` line:\n  {}",
        found.join("\n  ")
    );
}

#[test]
fn every_static_the_list_allows_still_exists() {
    let src = workspace().join("daemon/src");
    for (file, name, _) in DAEMON_STATICS {
        let code = code_of(
            &std::fs::read_to_string(src.join(file)).unwrap_or_else(|e| {
                panic!(
                    "DAEMON_STATICS names daemon/src/{file}, which cannot be read ({e}): drop it"
                )
            }),
        );
        let defines = code.match_indices(&format!("static {name}")).any(|(i, m)| {
            !code[i + m.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
        });
        assert!(
            defines,
            "DAEMON_STATICS names {name} in daemon/src/{file}, which no longer defines it: drop it"
        );
    }
}

#[test]
fn the_code_map_names_every_module_of_the_daemon() {
    let text =
        std::fs::read_to_string(workspace().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let start = text
        .find("### patinad (`daemon/src`)")
        .expect("ARCHITECTURE.md has the daemon's code map");
    let section = &text[start..];
    let section = &section[..section[4..].find("\n### ").map_or(section.len(), |i| i + 4)];
    let mapped: BTreeSet<String> = section
        .lines()
        .filter_map(|l| l.strip_prefix("- `")?.split('`').next().map(str::to_string))
        .collect();
    let src = workspace().join("daemon/src");
    let files: BTreeSet<String> = modules(&src)
        .into_iter()
        .filter(|(name, _)| !is_test_module(name))
        .map(|(_, file)| {
            file.strip_prefix(&src)
                .expect("under src")
                .to_string_lossy()
                .into_owned()
        })
        .chain(["main.rs".to_string()])
        .collect();
    let missing: Vec<_> = files.difference(&mapped).collect();
    let stale: Vec<_> = mapped.difference(&files).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "ARCHITECTURE.md's code map and daemon/src differ: not in the map {missing:?}; in the map \
         but no such module {stale:?}"
    );
}
