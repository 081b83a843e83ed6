//! Query understanding, by rules (no model): what the question wants ([`Intent`]), which file roles
//! it names outright, and the exact evidence it carries — identifiers, file paths, stack-trace
//! frames, quoted messages. A long text (an issue body, a commit message with a body) is split into
//! its prose, which a sentence model can embed, and its code blocks and traces, which only exact
//! matching can use.

use patina_core::FileRole;
use patina_core::lang::Language;
use patina_core::tokens::for_each_token;

/// What a query asks for; sets the priors over file roles ([`Intent::role_prior`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Intent {
    /// A name: `parse_args`, `Config::load`, `HttpClient`, `config.toml`.
    Identifier,
    /// How or where something is implemented; a commit message; a bug report. The default.
    Implementation,
    /// How to use something: "how do I …", documentation, examples.
    Usage,
    /// About tests: "where are the tests for …".
    Tests,
}

impl Intent {
    pub fn name(self) -> &'static str {
        match self {
            Intent::Identifier => "identifier",
            Intent::Implementation => "implementation",
            Intent::Usage => "usage",
            Intent::Tests => "tests",
        }
    }

    /// A multiplicative prior of a file role under this intent: 1 for the roles the intent is
    /// after, below 1 for the others. Never 0: a role the intent does not want is ranked lower,
    /// not removed. Explicit role requests ([`QueryPlan::wanted_roles`]) override these.
    pub fn role_prior(self, role: FileRole) -> f64 {
        use FileRole::*;
        match self {
            // A name is a name wherever it is defined; the implementation is still the usual target.
            Intent::Identifier => match role {
                Source => 1.0,
                Test | Example | Benchmark | Config => 0.9,
                Docs | Generated | Other => 0.85,
                Vendored => 0.8,
            },
            Intent::Implementation => match role {
                Source => 1.0,
                Config => 0.8,
                Example | Benchmark => 0.75,
                Test => 0.7,
                Generated | Other => 0.65,
                Docs => 0.6,
                Vendored => 0.5,
            },
            Intent::Usage => match role {
                Docs | Example => 1.0,
                Source => 0.95,
                Test | Config => 0.8,
                Benchmark | Generated | Other => 0.7,
                Vendored => 0.6,
            },
            Intent::Tests => match role {
                Test => 1.0,
                Source => 0.85,
                Example | Benchmark => 0.8,
                Config | Generated | Other => 0.7,
                Docs => 0.6,
                Vendored => 0.5,
            },
        }
    }
}

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

/// Everything the retrieval pipeline needs to know about a query.
#[derive(Clone, Debug)]
pub struct QueryPlan {
    /// The query as given.
    pub text: String,
    pub intent: Intent,
    /// Roles the query asks for in words ("in the tests", "the docs"): they rank first.
    pub wanted_roles: Vec<FileRole>,
    /// Identifiers, most mentioned first.
    pub identifiers: Vec<Identifier>,
    /// File paths and names the query mentions (`src/config.py`, `config.toml`), normalised.
    pub paths: Vec<String>,
    pub frames: Vec<Frame>,
    /// Quoted strings (error messages and the like).
    pub quoted: Vec<String>,
    /// The text a sentence model should embed: the prose without code blocks and traces, cut to
    /// what the model reads.
    pub semantic_text: String,
    /// Content words of the prose (lowercased, stop words removed), for path matching.
    pub content_words: Vec<String>,
    /// A long text (bug report, commit body): decomposed, and its lexical terms chosen by weight.
    pub long: bool,
    /// Written as a report (a title and a body, several sentences) rather than asked.
    pub report: bool,
    /// The language a question asks its answer in ("python check if a variable is iterable",
    /// "… in golang"): a scope, like a folder, not a word the code contains. Its words
    /// ([`QueryPlan::scope_words`]) are left out of the lexical terms and the content words.
    pub languages: Vec<Language>,
    /// The words that named [`QueryPlan::languages`], lowercase as written (`python3`).
    pub scope_words: Vec<String>,
    /// Misspelt words of the question with the word of the code each was read as
    /// (`arguements` -> `arguments`), set by [`QueryPlan::correct`].
    pub corrections: Vec<(String, String)>,
}

/// Texts longer than this (bytes) or with more lines than [`LONG_LINES`] are treated as documents.
const LONG_BYTES: usize = 600;
const LONG_LINES: usize = 8;
/// The model reads about 256 word pieces; more text only dilutes the embedding of the prose.
const SEMANTIC_CHARS: usize = 1200;

const STOP_WORDS: &[&str] = &[
    "a",
    "an",
    "the",
    "and",
    "or",
    "but",
    "if",
    "then",
    "else",
    "of",
    "to",
    "in",
    "on",
    "at",
    "by",
    "for",
    "with",
    "from",
    "into",
    "onto",
    "as",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "being",
    "it",
    "its",
    "this",
    "that",
    "these",
    "those",
    "there",
    "here",
    "what",
    "which",
    "who",
    "whom",
    "whose",
    "where",
    "when",
    "why",
    "how",
    "do",
    "does",
    "did",
    "done",
    "doing",
    "can",
    "could",
    "should",
    "would",
    "will",
    "shall",
    "may",
    "might",
    "must",
    "i",
    "we",
    "you",
    "he",
    "she",
    "they",
    "me",
    "us",
    "my",
    "our",
    "your",
    "their",
    "them",
    "not",
    "no",
    "yes",
    "so",
    "than",
    "too",
    "very",
    "just",
    "also",
    "only",
    "some",
    "any",
    "all",
    "each",
    "every",
    "more",
    "most",
    "other",
    "such",
    "own",
    "same",
    "about",
    "after",
    "before",
    "over",
    "under",
    "up",
    "down",
    "out",
    "off",
    "again",
    "once",
    "get",
    "gets",
    "got",
    "use",
    "used",
    "uses",
    "using",
    "work",
    "works",
    "working",
    "implemented",
    "implement",
    "implementation",
    "handled",
    "handle",
    "handles",
    "happen",
    "happens",
    "code",
    "file",
    "files",
    "function",
    "functions",
    "way",
    "thing",
    "things",
    "make",
    "makes",
    "s",
    "t",
    "e",
    "g",
    "eg",
    "ie",
    "via",
    "like",
    "want",
    "need",
    "find",
    "show",
    "see",
    "let",
    "lets",
];

/// Is `w` (lowercase) a stop word?
pub fn is_stop_word(w: &str) -> bool {
    STOP_WORDS.contains(&w)
}

impl QueryPlan {
    /// Understand `text`.
    pub fn analyze(text: &str) -> QueryPlan {
        let text = text.trim();
        let long = text.len() > LONG_BYTES || text.lines().count() > LONG_LINES;
        let (prose, code) = split_code(text);
        let frames = frames(text);
        let mut identifiers = Vec::new();
        collect_identifiers(&prose, &mut identifiers, true);
        collect_identifiers(&code, &mut identifiers, false);
        for f in &frames {
            if let Some(func) = &f.function {
                add_identifier(&mut identifiers, func, func, None);
            }
        }
        identifiers.sort_by_key(|i| std::cmp::Reverse(i.count));
        let mut paths: Vec<String> = Vec::new();
        for w in text.split(|c: char| {
            c.is_whitespace()
                || matches!(
                    c,
                    '`' | '"' | '\'' | '(' | ')' | '[' | ']' | '<' | '>' | ',' | ';'
                )
        }) {
            if let Some(p) = as_path(w)
                && !paths.contains(&p)
            {
                paths.push(p);
            }
        }
        for f in &frames {
            if !paths.contains(&f.path) {
                paths.push(f.path.clone());
            }
        }
        let single_token = !text.contains(char::is_whitespace);
        let (languages, scope_words) = if long || single_token {
            (Vec::new(), Vec::new())
        } else {
            language_scope(&prose)
        };
        let content_words: Vec<String> = content_words(&prose)
            .into_iter()
            .filter(|w| !scope_words.contains(w))
            .collect();
        let few_words = text.split_whitespace().count() <= 3;
        let names_code = !identifiers.is_empty() || !paths.is_empty();
        let lower = prose.to_lowercase();
        // A report (an issue, a commit message with a body) describes a change or a defect: its
        // words about tests and docs are part of the story, not a request for those files.
        let report = long || is_report(text);
        let wanted_roles = if report {
            Vec::new()
        } else {
            wanted_roles(&lower)
        };
        let intent = if single_token || few_words && names_code && content_words.len() <= 1 {
            Intent::Identifier
        } else if report {
            Intent::Implementation
        } else if wanted_roles.contains(&FileRole::Test) {
            Intent::Tests
        } else if is_usage_question(&lower)
            || wanted_roles.contains(&FileRole::Docs)
            || wanted_roles.contains(&FileRole::Example)
        {
            Intent::Usage
        } else {
            Intent::Implementation
        };
        let mut semantic_text: String = if long {
            prose.split_whitespace().collect::<Vec<_>>().join(" ")
        } else {
            text.to_string()
        };
        if semantic_text.trim().is_empty() {
            semantic_text = text.to_string();
        }
        if semantic_text.len() > SEMANTIC_CHARS {
            let mut cut = SEMANTIC_CHARS;
            while !semantic_text.is_char_boundary(cut) {
                cut -= 1;
            }
            semantic_text.truncate(cut);
        }
        QueryPlan {
            text: text.to_string(),
            intent,
            wanted_roles,
            identifiers,
            paths,
            frames,
            quoted: quoted(text),
            semantic_text,
            content_words,
            long,
            report,
            languages,
            scope_words,
            corrections: Vec::new(),
        }
    }

    /// The plain words of a short question that a vocabulary could find misspelt: content words
    /// written as words, not identifiers (`sesion` alone is a word, `parse_confg` a name); none
    /// for long texts, whose rare words are names and jargon more often than typos.
    pub fn correctable_words(&self) -> Vec<String> {
        if self.long {
            return Vec::new();
        }
        crate::expand::words(&self.text, &self.content_words)
    }

    /// Read each misspelt word as its correction (`(typed, meant)`, lowercase): in the text the
    /// model embeds and among the content words. The typed word stays in [`QueryPlan::text`].
    pub fn correct(&mut self, fixes: Vec<(String, String)>) {
        for (typed, meant) in &fixes {
            self.semantic_text = replace_word(&self.semantic_text, typed, meant);
            for w in &mut self.content_words {
                if w == typed {
                    *w = meant.clone();
                }
            }
        }
        let mut seen = std::collections::HashSet::new();
        self.content_words.retain(|w| seen.insert(w.clone()));
        self.corrections = fixes;
    }

    /// The prior of `role` for this query: 1 for a role the query asks for by name, else the
    /// intent's prior.
    pub fn role_prior(&self, role: FileRole) -> f64 {
        if self.wanted_roles.contains(&role) {
            1.0
        } else if !self.wanted_roles.is_empty() {
            self.intent.role_prior(role).min(0.8)
        } else {
            self.intent.role_prior(role)
        }
    }

    /// How many names (identifiers, paths) a report mentions: the exact evidence of naming one
    /// is shared among them. 1 for a query that is not a report.
    pub fn names_shared_by(&self) -> usize {
        if self.report {
            (self.identifiers.len() + self.paths.len()).max(1)
        } else {
            1
        }
    }

    /// Does the query name code (an identifier, a path or a frame)?
    pub fn names_code(&self) -> bool {
        !self.identifiers.is_empty() || !self.paths.is_empty()
    }
}

/// `text` with every whole word equal to `typed` (ignoring case) replaced by `meant`.
fn replace_word(text: &str, typed: &str, meant: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut rest = text;
    while let Some(start) = rest.find(|c: char| c.is_alphanumeric()) {
        out.push_str(&rest[..start]);
        let tail = &rest[start..];
        let end = tail
            .find(|c: char| !c.is_alphanumeric())
            .unwrap_or(tail.len());
        let word = &tail[..end];
        out.push_str(if word.eq_ignore_ascii_case(typed) {
            meant
        } else {
            word
        });
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// A text written as a report rather than asked as a question: a title line followed by a body,
/// or several sentences.
fn is_report(text: &str) -> bool {
    let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
    let sentences = text
        .split(['.', '!', '?'])
        .filter(|s| s.split_whitespace().count() >= 3)
        .count();
    lines >= 2 || sentences >= 3 || text.len() > 300
}

/// Separate fenced code blocks, indented blocks and trace lines (code) from the rest (prose).
fn split_code(text: &str) -> (String, String) {
    let mut prose = String::new();
    let mut code = String::new();
    let mut fenced = false;
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        let trace_line = t.starts_with("Traceback (most recent call last)")
            || t.starts_with("File \"")
            || t.starts_with("at ") && t.contains(':') && (t.contains('(') || t.contains('/'))
            || t.starts_with("E  ")
            || t.starts_with(">>>")
            || t.starts_with("$ ")
            || line.starts_with("    ") && !line.trim().is_empty() && looks_like_code_line(t)
            || line.starts_with('\t');
        let target = if fenced || trace_line {
            &mut code
        } else {
            &mut prose
        };
        target.push_str(line);
        target.push('\n');
    }
    (prose, code)
}

fn looks_like_code_line(t: &str) -> bool {
    let symbols = t
        .chars()
        .filter(|c| {
            matches!(
                c,
                '(' | ')' | '{' | '}' | '=' | ';' | '[' | ']' | ':' | '<' | '>'
            )
        })
        .count();
    symbols >= 2 || t.ends_with(':') || t.ends_with('{') || t.ends_with(';')
}

/// The language a word names, when it names one unambiguously. `go`, `c` and `rust` are also
/// ordinary words: they name a language only right after a preposition ("in go").
fn language_named(word: &str) -> Option<(Language, bool)> {
    // (language, names it on its own — not only after a preposition)
    Some(match word {
        "python" | "python2" | "python3" | "py" | "py3" => (Language::Python, true),
        "golang" => (Language::Go, true),
        "go" => (Language::Go, false),
        "rust" => (Language::Rust, false),
        "rustlang" => (Language::Rust, true),
        "javascript" | "js" | "nodejs" | "ecmascript" => (Language::JavaScript, true),
        "typescript" | "ts" => (Language::TypeScript, true),
        "java" => (Language::Java, true),
        "c++" | "cpp" | "cplusplus" => (Language::Cpp, true),
        "c" => (Language::C, false),
        _ => return None,
    })
}

/// Languages `prose` names as the language of its answer: a language's name that opens or closes
/// the question, follows a preposition ("in python", "using js") or precedes a version
/// ("python 3"). Elsewhere it is a word of the question ("how does pytest collect python files").
fn language_scope(prose: &str) -> (Vec<Language>, Vec<String>) {
    let words: Vec<String> = prose
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric() && c != '+')
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect();
    let mut languages = Vec::new();
    let mut scope = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let Some((lang, alone)) = language_named(w) else {
            continue;
        };
        let after_preposition = i > 0
            && matches!(
                words[i - 1].as_str(),
                "in" | "using" | "with" | "for" | "from" | "via" | "into" | "to"
            );
        let edge = i == 0 || i + 1 == words.len();
        let before_version = words
            .get(i + 1)
            .is_some_and(|n| n.chars().next().is_some_and(|c| c.is_ascii_digit()));
        if after_preposition || alone && (edge || before_version) {
            if !languages.contains(&lang) {
                languages.push(lang);
            }
            if !scope.contains(w) {
                scope.push(w.clone());
            }
        }
    }
    (languages, scope)
}

/// The words of `prose` that carry meaning (lowercased, no stop words, no numbers), deduplicated.
fn content_words(prose: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in prose.split(|c: char| !c.is_alphanumeric()) {
        let w = w.to_lowercase();
        if w.len() < 3
            || is_stop_word(&w)
            || w.chars().all(|c| c.is_ascii_digit())
            || out.contains(&w)
        {
            continue;
        }
        out.push(w);
    }
    out
}

/// Roles a short question names in words.
fn wanted_roles(lower: &str) -> Vec<FileRole> {
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .collect();
    let has = |w: &str| words.contains(&w);
    let mut out = Vec::new();
    if has("test")
        || has("tests")
        || has("tested")
        || has("testing")
        || has("testcase")
        || has("testcases")
        || has("spec")
        || has("specs")
    {
        out.push(FileRole::Test);
    }
    if has("docs")
        || has("documentation")
        || has("documented")
        || has("readme")
        || has("tutorial")
        || has("guide")
        || has("changelog")
        || has("manual")
    {
        out.push(FileRole::Docs);
    }
    if has("example") || has("examples") || has("sample") || has("demo") {
        out.push(FileRole::Example);
    }
    if has("benchmark") || has("benchmarks") || has("bench") {
        out.push(FileRole::Benchmark);
    }
    out
}

/// "How do I …", "how to …", "usage of …": the user wants to use something, not to read its inside.
fn is_usage_question(lower: &str) -> bool {
    [
        "how do i ",
        "how can i ",
        "how should i ",
        "how to ",
        "how would i ",
        "usage",
        "what is the syntax",
        "what options",
        "which option",
        "configure ",
    ]
    .iter()
    .any(|p| lower.starts_with(p) || lower.contains(&format!(" {p}")))
}

/// Does `w` look like code rather than a word: `snake_case`, `camelCase`, `PascalCase` with two
/// humps, `a::b`, `a.b`, `f()`?
fn is_code_word(w: &str) -> bool {
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

fn add_identifier(out: &mut Vec<Identifier>, raw: &str, name: &str, parent: Option<&str>) {
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
fn collect_identifiers(text: &str, out: &mut Vec<Identifier>, prose: bool) {
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

const PATH_EXTS: &[&str] = &[
    "rs", "py", "pyi", "js", "mjs", "cjs", "jsx", "ts", "tsx", "go", "java", "kt", "c", "h", "cc",
    "cpp", "hpp", "cs", "rb", "php", "swift", "scala", "md", "rst", "txt", "toml", "yaml", "yml",
    "json", "cfg", "ini", "sh", "lua", "sql", "proto", "html", "css", "vue",
];

/// A file path or file name in `w` (trailing `:line:col` removed), normalised: no `./`, `/` only.
fn as_path(w: &str) -> Option<String> {
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

/// Stack-trace frames in any of the common formats: Python (`File "x.py", line 3, in f`), pytest
/// (`x.py:3: in f`), Rust panics and Go (`src/x.rs:12:5`, `x.go:12`), JavaScript
/// (`at f (x.js:1:2)`) and Java (`at a.b.C.m(C.java:12)`).
pub fn frames(text: &str) -> Vec<Frame> {
    let mut out: Vec<Frame> = Vec::new();
    let mut push = |f: Frame| {
        if !out.contains(&f) {
            out.push(f);
        }
    };
    for line in text.lines() {
        let t = line.trim();
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
                    (!name.is_empty() && !name.contains('/')).then(|| name.to_string())
                });
            push(Frame {
                path,
                line: Some(line_no),
                function,
            });
        }
    }
    out
}

/// Double-quoted or backticked strings of a few words (error messages, log lines).
fn quoted(text: &str) -> Vec<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intents() {
        let i = |q: &str| QueryPlan::analyze(q).intent;
        assert_eq!(i("parse_args"), Intent::Identifier);
        assert_eq!(i("HttpClient"), Intent::Identifier);
        assert_eq!(i("Config::from_env"), Intent::Identifier);
        assert_eq!(i("config.toml"), Intent::Identifier);
        assert_eq!(
            i("where are shell completions generated"),
            Intent::Implementation
        );
        assert_eq!(
            i("how does the scheduler pick the next task"),
            Intent::Implementation
        );
        assert_eq!(
            i("Fix race in the mpsc channel when the receiver is dropped"),
            Intent::Implementation
        );
        assert_eq!(i("how do I register a blueprint"), Intent::Usage);
        assert_eq!(i("documentation for the glob flag"), Intent::Usage);
        assert_eq!(i("where are the tests for the router"), Intent::Tests);
        let issue = format!(
            "{}\n\nTraceback (most recent call last):\n  File \"src/_pytest/main.py\", line 3, in wrap\n",
            "Running the tests with -x crashes. ".repeat(30)
        );
        assert_eq!(
            i(&issue),
            Intent::Implementation,
            "a long report is about the code, whatever words it uses"
        );
    }

    #[test]
    fn explicit_roles_win() {
        let p = QueryPlan::analyze("how is the config parsed in the tests");
        assert_eq!(p.wanted_roles, [FileRole::Test]);
        assert_eq!(p.role_prior(FileRole::Test), 1.0);
        assert!(p.role_prior(FileRole::Source) < 1.0);
        let p = QueryPlan::analyze("how is the config parsed");
        assert!(p.role_prior(FileRole::Source) > p.role_prior(FileRole::Test));
        assert!(p.role_prior(FileRole::Test) > 0.0 && p.role_prior(FileRole::Docs) > 0.0);
    }

    #[test]
    fn identifiers_of_every_style() {
        let p = QueryPlan::analyze(
            "why does parse_args call `load` on HttpClient and Config::from_env or app.config.from_prefixed_env()?",
        );
        let names: Vec<&str> = p.identifiers.iter().map(|i| i.name.as_str()).collect();
        for want in [
            "parse_args",
            "load",
            "HttpClient",
            "from_env",
            "from_prefixed_env",
        ] {
            assert!(names.contains(&want), "{want} in {names:?}");
        }
        let q = p.identifiers.iter().find(|i| i.name == "from_env").unwrap();
        assert_eq!(q.parent.as_deref(), Some("Config"));
        assert!(!names.contains(&"why") && !names.contains(&"does"));
    }

    #[test]
    fn paths_and_file_names() {
        let p = QueryPlan::analyze(
            "the bug is in src/_pytest/python.py:123 and maybe ./lib/router.js, not os.path",
        );
        assert!(
            p.paths.contains(&"src/_pytest/python.py".to_string()),
            "{:?}",
            p.paths
        );
        assert!(p.paths.contains(&"lib/router.js".to_string()));
        assert!(!p.paths.iter().any(|x| x.contains("os.path")));
        assert_eq!(QueryPlan::analyze("config.toml").paths, ["config.toml"]);
    }

    #[test]
    fn stack_frames_in_five_languages() {
        let py = frames(
            "Traceback (most recent call last):\n  File \"/usr/lib/python3/site-packages/_pytest/fixtures.py\", line 1021, in execute\n    result = call_fixture()\nValueError: bad",
        );
        assert_eq!(
            py[0].path,
            "/usr/lib/python3/site-packages/_pytest/fixtures.py"
        );
        assert_eq!(py[0].line, Some(1021));
        assert_eq!(py[0].function.as_deref(), Some("execute"));
        let rs = frames("thread 'main' panicked at src/runtime/task.rs:12:5:\nattempt to subtract");
        assert_eq!(rs[0].path, "src/runtime/task.rs");
        assert_eq!(rs[0].line, Some(12));
        let go =
            frames("goroutine 1 [running]:\nmain.run()\n\t/home/u/cobra/command.go:912 +0x1b4");
        assert_eq!(go[0].path, "/home/u/cobra/command.go");
        let js = frames("    at handle (/app/node_modules/express/lib/router/layer.js:95:5)");
        assert_eq!(js[0].path, "/app/node_modules/express/lib/router/layer.js");
        assert_eq!(js[0].function.as_deref(), Some("handle"));
        let java = frames("\tat org.example.Parser.parse(Parser.java:42)");
        assert_eq!(java[0].path, "Parser.java");
        assert_eq!(java[0].function.as_deref(), Some("parse"));
        let pytest = frames("src/_pytest/python.py:1234: in pytest_pyfunc_call\n    raise X");
        assert_eq!(pytest[0].function.as_deref(), Some("pytest_pyfunc_call"));
        assert!(frames("no frames here: just 12 words").is_empty());
    }

    #[test]
    fn long_texts_are_decomposed() {
        let text = format!(
            "Fixture scope is not shown\n\n{}\n```python\ndef test_x(tmp_path):\n    assert helper_fn(tmp_path)\n```\nMore words about fixtures and scopes.",
            "When I run pytest --fixtures the scope of each fixture is missing from the listing. "
                .repeat(10)
        );
        let p = QueryPlan::analyze(&text);
        assert!(p.long);
        assert!(
            !p.semantic_text.contains("def test_x"),
            "code blocks are not embedded"
        );
        assert!(p.semantic_text.starts_with("Fixture scope"));
        assert!(p.semantic_text.len() <= SEMANTIC_CHARS);
        assert!(p.identifiers.iter().any(|i| i.name == "helper_fn"));
        assert!(p.content_words.contains(&"fixture".to_string()));
    }

    #[test]
    fn quoted_messages_and_stems() {
        let p = QueryPlan::analyze("why do I get \"connection reset by peer\" on shutdown");
        assert_eq!(p.quoted, ["connection reset by peer"]);
        assert_eq!(stem("completions"), "completion");
        assert_eq!(stem("parsing"), stem("parses"));
        assert_eq!(
            path_words("cobra/shell_completions.go"),
            ["cobra", "shell_completions", "shell", "completions"]
        );
    }

    #[test]
    fn hostile_input_does_not_panic() {
        for t in [
            "",
            "```",
            "\u{0}\u{FFFD}::..::",
            &"a.".repeat(5000),
            &"`".repeat(999),
            "File \"",
            "x.py:",
            "at (",
            "日本語.py:12",
        ] {
            let _ = QueryPlan::analyze(t);
        }
    }

    #[test]
    fn a_language_named_as_the_scope_is_not_a_word_of_the_question() {
        for (q, lang, word) in [
            (
                "python check if a variable is iterable",
                Language::Python,
                "python",
            ),
            (
                "how to make functions that returns a function python",
                Language::Python,
                "python",
            ),
            (
                "calculate an average in python using the count",
                Language::Python,
                "python",
            ),
            (
                "python3 remove directory recursively",
                Language::Python,
                "python3",
            ),
            ("read a file line by line in go", Language::Go, "go"),
            ("parse json using golang", Language::Go, "golang"),
            ("deep copy an object js", Language::JavaScript, "js"),
        ] {
            let p = QueryPlan::analyze(q);
            assert_eq!(p.languages, [lang], "{q}");
            assert_eq!(p.scope_words, [word], "{q}");
            assert!(!p.content_words.iter().any(|w| w == word), "{q}");
        }
    }

    #[test]
    fn a_language_name_inside_the_question_stays_a_word() {
        // The subject of the question, not its scope: pytest has a `python.py` module.
        let p = QueryPlan::analyze("how does pytest collect python files");
        assert!(p.languages.is_empty());
        assert!(p.content_words.contains(&"python".to_string()));
        // Ordinary words that are also languages' names count only after a preposition.
        for q in [
            "let the tasks go",
            "rust never sleeps",
            "when does the timer go off",
        ] {
            assert!(QueryPlan::analyze(q).languages.is_empty(), "{q}");
        }
        // An identifier is never a scope, nor is a long report's mention of its Python version.
        assert!(QueryPlan::analyze("python").languages.is_empty());
        let report = format!("{}\n\nPython 3.11 on Linux", "x fails when y ".repeat(60));
        assert!(QueryPlan::analyze(&report).languages.is_empty());
    }

    #[test]
    fn a_corrected_question_is_embedded_with_the_meant_word_and_keeps_what_was_typed() {
        let mut p = QueryPlan::analyze("permutations in python with three Arguements");
        assert_eq!(
            p.correctable_words(),
            ["permutations", "three", "arguements"].map(String::from)
        );
        p.correct(vec![("arguements".into(), "arguments".into())]);
        assert_eq!(
            p.semantic_text,
            "permutations in python with three arguments"
        );
        assert!(p.content_words.contains(&"arguments".to_string()));
        assert!(!p.content_words.contains(&"arguements".to_string()));
        assert_eq!(p.text, "permutations in python with three Arguements");
        // Word boundaries: a longer word that contains the typo is left alone.
        assert_eq!(replace_word("a-b ab, abc ab", "ab", "xy"), "a-b xy, abc xy");
    }

    #[test]
    fn identifiers_and_long_texts_offer_no_word_for_correction() {
        for name in ["parse_confg", "RetryPolcy"] {
            assert!(QueryPlan::analyze(name).correctable_words().is_empty());
        }
        // A single plain word is looked up as a name, but it is a word that may be misspelt.
        assert_eq!(QueryPlan::analyze("sesion").correctable_words(), ["sesion"]);
        let report = format!(
            "{}\n\nseen on Linux",
            "the fixtrue fails when y ".repeat(60)
        );
        assert!(QueryPlan::analyze(&report).correctable_words().is_empty());
    }
}
