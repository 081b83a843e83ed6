//! The exact evidence a question carries: identifiers of every style, file paths, stack-trace
//! frames, quoted messages, and the words of a path.

use patina_core::tokens::for_each_token;

/// A frame of a stack trace: a file, a line, and the function when the trace names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub path: String,
    pub line: Option<u32>,
    pub function: Option<String>,
}

/// An identifier the query names, with how often and whether it came from prose (rather than a
/// code block or a trace, where names are many and each means less).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identifier {
    /// As written, e.g. `Config::from_env`, `app.config`, `parseArgs`.
    pub raw: String,
    /// The last segment: the name a definition would carry (`from_env`).
    pub name: String,
    /// The segment before it, if qualified (`Config`).
    pub parent: Option<String>,
    pub count: u32,
}

/// Does `w` look like code rather than a word: `snake_case`, `camelCase`, `PascalCase` with two
/// humps, `a::b`, `a.b`, `f()`?
pub(crate) fn is_code_word(w: &str) -> bool {
    let core = w.trim_end_matches("()");
    if core.len() < 2
        || !core
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
    {
        return false;
    }
    let inner_upper = core
        .chars()
        .skip(1)
        .zip(core.chars())
        .any(|(c, prev)| c.is_uppercase() && prev.is_lowercase());
    let alnum = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
    };
    core.contains('_')
        && core.chars().any(char::is_alphabetic)
        && core.split('_').any(|p| !p.is_empty())
        || inner_upper
        || core.contains("::") && core.split("::").all(alnum)
        || core.contains('.') && core.split('.').all(alnum) && !core.ends_with('.')
        || w.ends_with("()")
}

pub(crate) fn add_identifier(
    out: &mut Vec<Identifier>,
    raw: &str,
    name: &str,
    parent: Option<&str>,
) {
    if let Some(i) = out.iter_mut().find(|i| i.raw == raw) {
        i.count += 1;
        return;
    }
    out.push(Identifier {
        raw: raw.to_string(),
        name: name.to_string(),
        parent: parent.map(str::to_string),
        count: 1,
    });
}

/// Identifiers in `text`: code words in prose; in code, also plain names that are called or
/// qualified. Backticked words in prose count whatever their shape.
pub(crate) fn collect_identifiers(text: &str, out: &mut Vec<Identifier>, prose: bool) {
    let mut in_tick = false;
    for piece in text.split('`') {
        for w in piece.split(|c: char| {
            c.is_whitespace()
                || matches!(
                    c,
                    ',' | ';'
                        | '"'
                        | '\''
                        | '('
                        | ')'
                        | '['
                        | ']'
                        | '{'
                        | '}'
                        | '<'
                        | '>'
                        | '='
                        | '!'
                        | '?'
                        | '*'
                        | '&'
                        | '|'
                        | '+'
                        | '%'
                        | '^'
                        | '~'
                )
        }) {
            let w = w.trim_matches(|c: char| matches!(c, '.' | ':' | '-' | '#' | '@'));
            if w.is_empty() || w.len() > 120 || as_path(w).is_some() {
                continue;
            }
            let ticked = prose
                && in_tick
                && w.chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | ':' | '$'));
            if !(is_code_word(w) || ticked) || w.chars().all(|c| c.is_ascii_digit() || c == '.') {
                continue;
            }
            let segs: Vec<&str> = w
                .split("::")
                .flat_map(|s| s.split('.'))
                .flat_map(|s| s.split('#'))
                .filter(|s| !s.is_empty())
                .collect();
            let Some(name) = segs.last() else { continue };
            let parent = (segs.len() >= 2).then(|| segs[segs.len() - 2]);
            add_identifier(out, w, name, parent);
        }
        in_tick = !in_tick;
    }
}

pub(crate) const PATH_EXTS: &[&str] = &[
    "rs", "py", "pyi", "js", "mjs", "cjs", "jsx", "ts", "tsx", "go", "java", "kt", "c", "h", "cc",
    "cpp", "hpp", "cs", "rb", "php", "swift", "scala", "md", "rst", "txt", "toml", "yaml", "yml",
    "json", "cfg", "ini", "sh", "lua", "sql", "proto", "html", "css", "vue", "ex", "exs", "erl",
    "hrl", "hs", "kts", "dart", "zig", "fs", "vb", "groovy", "clj", "ml", "jl", "php", "pl",
];

/// A file path or file name in `w` (trailing `:line:col` removed), normalised: no `./`, `/` only.
pub(crate) fn as_path(w: &str) -> Option<String> {
    let w = w.trim_start_matches(['(', '"', '\'', '`']);
    let w = w.trim_start_matches("./");
    let w = w.trim_end_matches(['.', ',', ':', ';', ')', '"', '\'', '`']);
    let w = w.split(':').next()?;
    let (stem, ext) = w.rsplit_once('.')?;
    if stem.is_empty() || !PATH_EXTS.contains(&ext) || stem.ends_with('/') {
        return None;
    }
    let name = stem.rsplit('/').next()?;
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        return None;
    }
    // `os.path` is a module, `self.config` an attribute: a file name needs a known extension
    // (checked above) and, without a slash, no further dots.
    if !w.contains('/') && stem.contains('.') {
        return None;
    }
    Some(w.trim_start_matches("./").replace('\\', "/"))
}

/// Stack-trace frames and pasted locations in any of the common formats, innermost first: Python
/// tracebacks (`File "x.py", line 3, in f`, printed innermost last: reversed), pytest
/// (`x.py:3: in f`, and node ids `x.py::test_f` — a test by name, no line), Rust panics,
/// backtraces and compiler errors (`src/x.rs:12:5`, `--> src/x.rs:12:5`), Go (`x.go:12 +0x1d`),
/// JavaScript (`at f (x.js:1:2)`), Java/Kotlin/Scala (`at a.b.C.m(C.java:12)`), .NET
/// (`in /src/C.cs:line 12`), Ruby (`from x.rb:12:in 'm'`), Elixir (`lib/x.ex:12: M.f/2`) and
/// linters (`path:line:col: error: …`). A bare `path:line` is a one-frame trace.
pub fn frames(text: &str) -> Vec<Frame> {
    let mut out: Vec<Frame> = Vec::new();
    let mut push = |f: Frame| {
        if !out.contains(&f) {
            out.push(f);
        }
    };
    for line in text.lines() {
        let t = line.trim();
        // .NET: `at Shop.Billing.Total() in /src/Billing.cs:line 42`.
        if let Some((head, tail)) = t.rsplit_once(":line ")
            && let Some(path) = head.rsplit(" in ").next().and_then(as_path)
            && let Some(line_no) = tail
                .split(|c: char| !c.is_ascii_digit())
                .next()
                .and_then(|n| n.parse().ok())
        {
            let function = head
                .strip_prefix("at ")
                .and_then(|h| h.split(" in ").next())
                .and_then(|h| h.split('(').next())
                .and_then(|h| h.rsplit('.').next())
                .map(|n| n.trim().to_string())
                .filter(|n| !n.is_empty());
            push(Frame {
                path,
                line: Some(line_no),
                function,
            });
            continue;
        }
        // pytest's node ids: `tests/test_x.py::TestY::test_z[param]` names a test, not a line.
        for w in t.split_whitespace() {
            let Some((p, rest)) = w.split_once("::") else {
                continue;
            };
            let Some(path) = as_path(p) else { continue };
            let name = rest
                .rsplit("::")
                .next()
                .unwrap_or("")
                .split('[')
                .next()
                .unwrap_or("")
                .trim_end_matches(|c: char| !c.is_alphanumeric() && c != '_');
            if !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                push(Frame {
                    path,
                    line: None,
                    function: Some(name.to_string()),
                });
            }
        }
        if let Some(rest) = t.strip_prefix("File \"")
            && let Some((path, after)) = rest.split_once('"')
        {
            let line_no = after
                .split("line ")
                .nth(1)
                .and_then(|s| s.split(|c: char| !c.is_ascii_digit()).next())
                .and_then(|n| n.parse().ok());
            let function = after
                .split(", in ")
                .nth(1)
                .map(|f| f.trim().to_string())
                .filter(|f| !f.is_empty() && !f.starts_with('<'));
            if let Some(p) = as_path(path) {
                push(Frame {
                    path: p,
                    line: line_no,
                    function,
                });
            }
            continue;
        }
        // `path.ext:LINE` anywhere on the line.
        for w in t.split(|c: char| {
            c.is_whitespace() || matches!(c, '(' | ')' | '[' | ']' | ',' | '\'' | '"')
        }) {
            let mut parts = w.split(':');
            let (Some(p), Some(n)) = (parts.next(), parts.next()) else {
                continue;
            };
            let Ok(line_no) = n.parse::<u32>() else {
                continue;
            };
            let Some(path) = as_path(p) else { continue };
            let function = t
                .split(": in ")
                .nth(1)
                .map(|f| f.trim().to_string())
                .or_else(|| {
                    // Java: `at a.b.C.m(C.java:12)`; JavaScript: `at f (x.js:1:2)`.
                    let at = t.strip_prefix("at ")?;
                    let head = at.split('(').next()?.trim();
                    let name = head.rsplit('.').next()?.trim();
                    (!name.is_empty()
                        && name
                            .chars()
                            .all(|c| c.is_alphanumeric() || c == '_' || c == '$'))
                    .then(|| name.to_string())
                });
            push(Frame {
                path,
                line: Some(line_no),
                function,
            });
        }
    }
    // Innermost frame first, as most traces print them; Python prints the innermost last.
    if text.contains("most recent call last") {
        out.reverse();
    }
    out
}

/// Double-quoted or backticked strings of a few words (error messages, log lines).
pub(crate) fn quoted(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for delim in ['"', '`'] {
        let parts: Vec<&str> = text.split(delim).collect();
        for (i, p) in parts.iter().enumerate() {
            if i % 2 == 1
                && i + 1 < parts.len()
                && p.contains(' ')
                && p.len() <= 200
                && !p.contains('\n')
            {
                out.push(p.to_string());
            }
        }
    }
    out
}

/// The lowercase tokens of a path's file stem and directories, split like identifiers.
pub fn path_words(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let without_ext = match path.rsplit_once('.') {
        Some((stem, ext)) if !ext.contains('/') => stem,
        _ => path,
    };
    for_each_token(without_ext, |_, _, t| {
        if t.len() >= 3 && !out.iter().any(|o: &String| o == t) {
            out.push(t.to_string());
        }
    });
    out
}

/// A light stemmer for matching query words against path and symbol words: plural and verb
/// endings removed (`completions` → `completion`, `parsing` → `pars`, `parses` → `pars`).
pub fn stem(word: &str) -> &str {
    for suffix in [
        "ations", "ation", "ings", "ing", "ies", "es", "ed", "er", "s",
    ] {
        if let Some(s) = word.strip_suffix(suffix)
            && s.len() >= 3
        {
            return s;
        }
    }
    word
}
