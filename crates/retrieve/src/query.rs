//! Query understanding, by rules (no model): what the question wants ([`Intent`]), which file roles
//! it names outright, and the exact evidence it carries — identifiers, file paths, stack-trace
//! frames, quoted messages. A long text (an issue body, a commit message with a body) is split into
//! its prose, which a sentence model can embed, and its code blocks and traces, which only exact
//! matching can use.

use patina_core::FileRole;
use patina_core::lang::Language;

mod entities;
mod words;

pub use entities::{Frame, Identifier, frames, path_words, stem};
use entities::{add_identifier, as_path, collect_identifiers, quoted};
pub use words::is_stop_word;

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
                Docs | Other => 0.85,
                Generated | Vendored => 0.8,
            },
            Intent::Implementation => match role {
                Source => 1.0,
                Config => 0.8,
                // An example program, like a test, shows the code in use; the library is the
                // answer. 0.75 until the thirty-seventh session: 0.5 raised express (0.930 →
                // 0.942) and cowboy (0.860 → 0.882), lowered no set, 0.4 changed nothing more.
                Example | Benchmark => 0.5,
                // A test, like a guide, says in the user's words what the code does, and the
                // semantic oracle often ranks it first; the code under test is the answer. 0.7
                // until the thirty-seventh session: over 31 sets 0.6, 0.5 and 0.4 each raised
                // the mean and lowered no set beyond noise (cowboy's Erlang suites, 0.773 →
                // 0.860; bench/RESULTS.md).
                Test => 0.4,
                Other => 0.65,
                // A guide says in the user's words what the code does, so both oracles rank
                // its section high for a question about how the code does it; the code is the
                // answer. 0.6 before the sets of eighteen repositories: 0.5 raised eight of them
                // and lowered none beyond noise (bench/RESULTS.md, twenty-ninth session).
                Docs | Generated | Vendored => 0.5,
            },
            Intent::Usage => match role {
                Docs | Example => 1.0,
                // Asked how to use the code, the guide answers before the code it explains.
                // 0.95 until the thirty-seventh session: 0.8 raised flask (0.923 → 0.941),
                // mainargs (0.795 → 0.815) and sinatra, lowered no set beyond noise; 0.7 traded
                // (lazy, newtonsoft up; hakyll, ecto −0.006).
                Source => 0.8,
                Test | Config => 0.8,
                Benchmark | Other => 0.7,
                Generated | Vendored => 0.6,
            },
            Intent::Tests => match role {
                Test => 1.0,
                Source => 0.85,
                Example | Benchmark => 0.8,
                Config | Other => 0.7,
                Docs => 0.6,
                Generated | Vendored => 0.5,
            },
        }
    }
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
    /// The query is a pasted location or stack trace (a short text with a frame, or a text whose
    /// lines are mostly frames), not a report that happens to contain one: then its frames point
    /// at the answer ([`QueryPlan::locations`]).
    pub trace: bool,
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
    /// Asked as a question: a question word first ("how does the searcher work", "where is …")
    /// or a question mark; a statement (a commit's "sync: fix racy access …") is not.
    pub question: bool,
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

impl QueryPlan {
    /// Understand `text`.
    pub fn analyze(text: &str) -> QueryPlan {
        let text = text.trim();
        let long = text.len() > LONG_BYTES || text.lines().count() > LONG_LINES;
        let (prose, code) = split_code(text);
        let frames = frames(text);
        let trace = !frames.is_empty() && {
            let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
            let framed = lines
                .iter()
                .filter(|l| !entities::frames(l).is_empty())
                .count();
            !long || framed * 3 >= lines.len()
        };
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
        // A usage question speaks of tests as what the user does ("how do I run setup code
        // before all the tests of a file", "… in unit tests"), not as the files to read.
        let usage = is_usage_question(&lower);
        let wanted_roles = if report {
            Vec::new()
        } else {
            let mut roles = wanted_roles(&lower);
            if usage {
                roles.retain(|r| *r != FileRole::Test);
            }
            roles
        };
        let intent = if single_token || few_words && names_code && content_words.len() <= 1 {
            Intent::Identifier
        } else if report {
            Intent::Implementation
        } else if wanted_roles.contains(&FileRole::Test) {
            Intent::Tests
        } else if usage
            || asks_what_changed(&lower)
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
            trace,
            frames,
            quoted: quoted(text),
            semantic_text,
            content_words,
            long,
            report,
            question: !report && is_question(text),
            languages,
            scope_words,
            corrections: Vec::new(),
        }
    }

    /// Whether the question asks about releases or what changed ("what changed in 2.0", "the
    /// changelog", "which version added …"): then release notes answer it like any other doc.
    pub fn asks_about_releases(&self) -> bool {
        self.content_words.iter().any(|w| {
            matches!(
                w.as_str(),
                "changelog"
                    | "changelogs"
                    | "release"
                    | "releases"
                    | "released"
                    | "changed"
                    | "history"
                    | "news"
                    | "version"
                    | "versions"
            )
        })
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

    /// The frames that point at the answer: those of a pasted location or trace, innermost first;
    /// none for a report that merely contains a trace.
    pub fn locations(&self) -> &[Frame] {
        if self.trace { &self.frames } else { &[] }
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
        "ruby" => (Language::Ruby, true),
        "php" => (Language::Php, true),
        "csharp" => (Language::CSharp, true),
        "kotlin" => (Language::Kotlin, true),
        "lua" => (Language::Lua, true),
        "bash" | "zsh" => (Language::Bash, true),
        "scala" => (Language::Scala, true),
        "elixir" => (Language::Elixir, true),
        "swift" => (Language::Swift, true),
        "haskell" | "ghc" => (Language::Haskell, true),
        "zig" => (Language::Zig, true),
        "dart" | "flutter" => (Language::Dart, true),
        "protobuf" | "proto3" | "proto2" => (Language::Protobuf, true),
        "terraform" | "hcl" => (Language::Hcl, true),
        "objective-c" | "objc" | "objectivec" => (Language::ObjC, true),
        "r" => (Language::R, false),
        "rstats" | "cran" => (Language::R, true),
        "erlang" => (Language::Erlang, true),
        "sql" => (Language::Sql, false),
        "julia" | "julialang" => (Language::Julia, true),
        "ocaml" => (Language::OCaml, true),
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
    if has("tested") || has("testcase") || has("testcases") || names_tests(&words) {
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

/// Whether the question asks for test files ("the tests for the router", "where are the specs
/// for X", "parsed in the tests", "fix unit test for X") rather than speaking of tests ("a failing
/// test", "test files", "a unit test that …", "the plugin specs"): "test(s)", "spec(s)" or
/// "testing" as a noun of its own — no other noun before or after it, but a kind of test
/// ("unit tests", "integration test": [`TEST_KINDS`]) — and not "a test" (one of the tests the
/// code runs, in a test runner's own repository) nor a test doing something ("the test can
/// check": [`MODALS`]) nor "under test" (the code a test exercises: "the class under test").
fn names_tests(words: &[&str]) -> bool {
    let content = |w: Option<&&str>| w.is_some_and(|w| !is_stop_word(w));
    words.iter().enumerate().any(|(i, w)| {
        let next = words.get(i + 1);
        if !matches!(*w, "test" | "tests" | "testing" | "spec" | "specs")
            || content(next) && !next.is_some_and(|n| CHECKING.contains(n))
            || next.is_some_and(|n| MODALS.contains(n))
        {
            return false;
        }
        let before = i.checked_sub(1).and_then(|j| words.get(j));
        // "The class under test", "the system under test": the code a test exercises.
        if before == Some(&"under") {
            return false;
        }
        // "Started around the tests", "reset between tests", "before all the tests of a file":
        // when something happens, told by the tests it happens around.
        let around = words[..i]
            .iter()
            .rev()
            .find(|w| !DETERMINERS.contains(w))
            .is_some_and(|w| WHEN.contains(w));
        if around {
            return false;
        }
        match before {
            Some(kind) if TEST_KINDS.contains(kind) => !matches!(
                i.checked_sub(2).and_then(|j| words.get(j)),
                Some(&"a" | &"an")
            ),
            _ => !content(before) && !matches!(before, Some(&"a" | &"an")),
        }
    })
}

/// Words between a preposition and the noun it governs ("around *all the* tests").
const DETERMINERS: &[&str] = &[
    "the", "all", "each", "every", "its", "their", "my", "our", "your",
];

/// Prepositions that place something in time or among the tests ("around", "between").
const WHEN: &[&str] = &[
    "around",
    "before",
    "after",
    "between",
    "during",
    "across",
    "among",
    "throughout",
];

/// "The test can check …": a test doing something is a test spoken of, what the code lets it do.
const MODALS: &[&str] = &[
    "can", "could", "may", "might", "must", "should", "will", "would",
];

/// What tests do to the code, said right after "tests": "tests checking that …", "the specs
/// covering …", "which tests cover …" ask for the tests as "tests for …" does (where "tests
/// pass", "test files" speak of them). Every form of each verb: the forty-third session's nine
/// new sets, written by people who had not read these rules, asked for tests as "which tests
/// cover / check / exercise …" in 16 questions across 9 repositories, and the -ing forms alone
/// read every one of them as a question about the implementation.
const CHECKING: &[&str] = &[
    "checking",
    "covering",
    "verifying",
    "exercising",
    "asserting",
    "ensuring",
    "confirming",
    "check",
    "checks",
    "cover",
    "covers",
    "verify",
    "verifies",
    "exercise",
    "exercises",
    "assert",
    "asserts",
    "ensure",
    "ensures",
    "confirm",
    "confirms",
];

/// Words that make a kind of test of "test(s)": the compound names tests as surely as the noun.
const TEST_KINDS: &[&str] = &[
    "unit",
    "integration",
    "regression",
    "e2e",
    "smoke",
    "functional",
    "acceptance",
    "snapshot",
    "property",
    "fuzz",
];

/// "How do I …", "how to …", "usage of …": the user wants to use something, not to read its inside.
fn is_usage_question(lower: &str) -> bool {
    [
        "how to ",
        "usage",
        "what is the syntax",
        "what options",
        "which option",
        "configure ",
    ]
    .iter()
    .any(|p| lower.starts_with(p) || lower.contains(&format!(" {p}")))
        || user_acts(lower)
}

/// "What changed in the last release", "what's new in 2.0", "… when upgrading to version 4": the
/// answer is prose about versions — release notes, a migration guide — so the question is read as
/// one about using the project, whose documents lead. Upgrading or migrating counts only beside a
/// version ("upgrading the connection to a websocket" is about code).
fn asks_what_changed(lower: &str) -> bool {
    const OPENINGS: &[&str] = &[
        "what changed",
        "what has changed",
        "what's changed",
        "what's new",
        "what is new",
    ];
    let versioned = lower.contains("version") || lower.contains(|c: char| c.is_ascii_digit());
    OPENINGS.iter().any(|p| lower.starts_with(p))
        || ["release notes", "changelog", "migration guide"]
            .iter()
            .any(|w| lower.contains(w))
        || versioned
            && ["upgrading", "upgrade to", "migrating"]
                .iter()
                .any(|w| lower.contains(w))
}

/// "How do I …", "which variables can I set …", "what do I need to change when upgrading …": the
/// user is the one who acts. Not "why do I get …" (a failure to explain) nor "where can I find …"
/// (a place in the code).
fn user_acts(lower: &str) -> bool {
    let first = lower.split_whitespace().next().unwrap_or("");
    !matches!(first, "why" | "where")
        && [
            " can i ",
            " do i ",
            " should i ",
            " could i ",
            " would i ",
            " must i ",
        ]
        .iter()
        .any(|p| lower.contains(p))
}

#[cfg(test)]
mod tests;

/// Is `text` asked: a question mark, or a question word first?
fn is_question(text: &str) -> bool {
    const ASKING: &[&str] = &[
        "how", "what", "where", "which", "why", "when", "who", "whose", "does", "do", "is", "are",
        "can", "should", "explain",
    ];
    text.contains('?')
        || text
            .split_whitespace()
            .next()
            .is_some_and(|w| ASKING.contains(&w.to_lowercase().as_str()))
}
