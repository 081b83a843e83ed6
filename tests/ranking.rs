//! Ranking as a user meets it: a question about how something works is answered with the code
//! that does it, not with the README or the test that repeat its words; roles can be asked for and
//! excluded; filters that leave nothing are relaxed with a notice; nonsense finds nothing.

use crate::util::*;
use patina_proto::v1 as pb;

const BACKOFF_PY: &str = r#""""Retry policy for outgoing calls."""

import random


def compute_delay(attempt, base=0.1, cap=30.0):
    """Exponential delay before the next attempt, with full jitter."""
    exp = min(cap, base * (2 ** attempt))
    return random.uniform(0, exp)


class RetryPolicy:
    def __init__(self, attempts=5):
        self.attempts = attempts

    def should_retry(self, attempt, error):
        return attempt < self.attempts and getattr(error, "transient", False)
"#;

const CLIENT_PY: &str = r#"from .backoff import compute_delay, RetryPolicy


def call_with_retries(send, request, policy=None):
    policy = policy or RetryPolicy()
    attempt = 0
    while True:
        try:
            return send(request)
        except Exception as error:
            if not policy.should_retry(attempt, error):
                raise
            sleep(compute_delay(attempt))
            attempt += 1
"#;

/// Repeats the question's words more often than the code does.
const README_MD: &str = r#"# retrykit

## How the backoff delay between retries is computed

The backoff delay between retries is computed from the attempt number: the delay between
retries doubles with each retry, and the backoff delay is capped. Retries stop when the retry
policy says so. See the retries guide for how the backoff delay between retries is computed.
"#;

const GUIDE_MD: &str = r#"# Retries guide

Retries and backoff: the delay between retries grows. How the backoff delay between retries is
computed is described in the README. Tune retries with the policy.
"#;

const TEST_PY: &str = r#"from retrykit.backoff import compute_delay


def test_backoff_delay_between_retries_is_computed_and_capped():
    # the backoff delay between retries is computed and capped
    for attempt in range(10):
        delay = compute_delay(attempt, cap=1.0)
        assert 0 <= delay <= 1.0, "backoff delay between retries"
"#;

const LIB_RS: &str = r#"/// Parses a duration like `5s`.
pub fn parse_duration(s: &str) -> Option<u64> {
    s.strip_suffix('s')?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_seconds() {
        assert_eq!(parse_duration("5s"), Some(5));
    }
}
"#;

fn retry_repo() -> Repo {
    git_repo(&[
        ("retrykit/backoff.py", BACKOFF_PY.as_bytes()),
        ("retrykit/client.py", CLIENT_PY.as_bytes()),
        ("README.md", README_MD.as_bytes()),
        ("docs/retries.md", GUIDE_MD.as_bytes()),
        ("tests/test_backoff.py", TEST_PY.as_bytes()),
        ("duration/src/lib.rs", LIB_RS.as_bytes()),
    ])
}

fn json_hits(out: &Output) -> Vec<serde_json::Value> {
    out.q_json()["hits"].as_array().cloned().unwrap_or_default()
}

fn paths(hits: &[serde_json::Value]) -> Vec<String> {
    hits.iter()
        .map(|h| h["repo_path"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn an_implementation_question_puts_the_source_above_the_readme_that_repeats_it() {
    let env = TestEnv::started();
    let repo = retry_repo();
    env.add_repo(repo.path());
    let question = "how is the backoff delay between retries computed";

    // Lexical evidence alone favours the prose that repeats the question.
    let out = env.patina_in(
        repo.path(),
        &["q", question, "--files", "--json", "--oracle", "lexical"],
    );
    assert_eq!(out.code(), 0, "{out:?}");
    let hits = json_hits(&out);
    let files = paths(&hits);
    assert_eq!(
        files.first().map(String::as_str),
        Some("retrykit/backoff.py"),
        "the implementation comes first: {files:?}"
    );
    assert!(
        files.iter().any(|p| p == "README.md"),
        "the README is ranked lower, not removed: {files:?}"
    );
    assert_eq!(hits[0]["role"], "source");
    let readme = hits.iter().find(|h| h["repo_path"] == "README.md").unwrap();
    assert_eq!(readme["role"], "docs");
    let v = out.q_json();
    assert_eq!(v["intent"], "implementation");
}

#[test]
fn a_usage_question_ranks_the_docs_higher_than_an_implementation_question_does() {
    let env = TestEnv::started();
    let repo = retry_repo();
    env.add_repo(repo.path());
    let best_docs_rank = |question: &str| {
        let out = env.patina_in(
            repo.path(),
            &["q", question, "--files", "--json", "--oracle", "lexical"],
        );
        let hits = json_hits(&out);
        (
            hits.iter()
                .position(|h| h["role"] == "docs")
                .unwrap_or(usize::MAX),
            paths(&hits),
        )
    };
    let (usage, usage_files) =
        best_docs_rank("how do I tune the backoff delay between retries, see the documentation");
    let (implementation, impl_files) =
        best_docs_rank("how is the backoff delay between retries tuned in the code");
    assert!(
        usage < implementation,
        "docs rank {usage} for the usage question ({usage_files:?}) vs {implementation} for the implementation one ({impl_files:?})"
    );
    assert!(
        usage <= 1,
        "a docs file is among the first two: {usage_files:?}"
    );
}

#[test]
fn roles_can_be_asked_for_and_excluded() {
    let env = TestEnv::started();
    let repo = retry_repo();
    env.add_repo(repo.path());
    let q = "backoff delay between retries";

    let only_tests = json_hits(&env.patina_in(repo.path(), &["q", q, "--json", "--role", "test"]));
    assert!(!only_tests.is_empty());
    assert!(
        only_tests.iter().all(|h| h["role"] == "test"),
        "--role test: {only_tests:?}"
    );

    let no_docs = json_hits(&env.patina_in(repo.path(), &["q", q, "--json", "--role", "!docs"]));
    assert!(!no_docs.is_empty());
    assert!(
        no_docs.iter().all(|h| h["role"] != "docs"),
        "--role '!docs': {:?}",
        paths(&no_docs)
    );

    let bad = env.patina_in(repo.path(), &["q", q, "--role", "sauce"]);
    assert_eq!(bad.code(), 2, "{bad:?}");
    assert!(bad.stderr.contains("unknown role 'sauce'"), "{bad:?}");

    // A Rust inline test module is test code, although its file is source.
    let tests_mod = json_hits(&env.patina_in(
        repo.path(),
        &["q", "parses_seconds", "--json", "--role", "test"],
    ));
    assert_eq!(
        tests_mod.first().map(|h| h["repo_path"].clone()),
        Some(serde_json::json!("duration/src/lib.rs")),
        "{tests_mod:?}"
    );
    let def = json_hits(&env.patina_in(repo.path(), &["q", "parse_duration", "--json"]));
    assert_eq!(def[0]["role"], "source", "{def:?}");
}

#[test]
fn filters_that_leave_nothing_are_relaxed_with_a_notice() {
    let env = TestEnv::started();
    let repo = retry_repo();
    env.add_repo(repo.path());
    let out = env.patina_in(
        repo.path(),
        &[
            "q",
            "compute_delay",
            "--path",
            "retrykit/nothing_here_*.py",
            "--json",
        ],
    );
    assert_eq!(out.code(), 0, "{out:?}");
    let v = out.q_json();
    let notices = v["notices"].to_string();
    assert!(notices.contains("relaxed"), "the answer says so: {notices}");
    assert_eq!(v["hits"][0]["repo_path"], "retrykit/backoff.py", "{v}");
    assert!(
        v["hits"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["repo_path"].as_str().unwrap().starts_with("retrykit/")),
        "relaxed to the folder first: {v}"
    );
}

#[test]
fn a_query_that_matches_nothing_answers_nothing_even_with_the_model() {
    let mut env = TestEnv::with_model();
    env.start_daemon();
    let repo = retry_repo();
    env.add_repo(repo.path());
    let out = env.patina_in(repo.path(), &["q", "zzqqxnotathing", "--fresh", "--json"]);
    assert_eq!(out.code(), 1, "no hits, exit code 1: {out:?}");
    assert!(json_hits(&out).is_empty(), "{out:?}");
    // A real question still finds its answer through the same floor.
    let out = env.patina_in(repo.path(), &["q", "exponential wait before trying again"]);
    assert_eq!(out.code(), 0, "{out:?}");
}

const SETTINGS_RS: &str = r#"use std::path::Path;

pub struct Config {
    pub retries: u32,
}

pub fn load_config(path: &Path) -> std::io::Result<Config> {
    let text = std::fs::read_to_string(path)?;
    Ok(Config { retries: text.trim().parse().unwrap_or(3) })
}
"#;

const UPLOAD_RS: &str = r#"pub fn sanitize_filename(raw: &str) -> String {
    raw.replace(['/', '\\'], "_")
}
"#;

#[test]
fn a_question_in_words_finds_the_code_that_abbreviates_and_inflects_them() {
    // The code says `load_config`; the question says "configuration" and "loaded". Only the
    // repository's own forms of the question's words bridge the two (no model here).
    // Likewise "file name" is the code's `filename`, one word.
    let mut env = TestEnv::new();
    let repo = git_repo(&[
        ("src/settings.rs", SETTINGS_RS.as_bytes()),
        ("src/main.rs", b"fn main() {\n    println!(\"hello\");\n}\n"),
        ("src/upload.rs", UPLOAD_RS.as_bytes()),
    ]);
    let question = "where is the configuration file loaded";
    let glued = "how is an uploaded file name cleaned";
    let ask = |env: &TestEnv, q: &str| {
        paths(&json_hits(
            &env.patina_in(repo.path(), &["q", q, "--files", "--json"]),
        ))
    };
    let run = |env: &TestEnv| ask(env, question);
    env.start_daemon();
    env.add_repo(repo.path());
    let expanded = run(&env);
    assert_eq!(
        expanded.first().map(String::as_str),
        Some("src/settings.rs"),
        "{expanded:?}"
    );
    let found = ask(&env, glued);
    assert_eq!(
        found.first().map(String::as_str),
        Some("src/upload.rs"),
        "{found:?}"
    );

    env.stop_daemon();
    env.append_config("[retrieval]\nexpand = false\n");
    env.start_daemon();
    let exact = run(&env);
    assert!(
        !exact.iter().any(|p| p == "src/settings.rs"),
        "without expansion the words do not occur in the code: {exact:?}"
    );
    let exact = ask(&env, glued);
    assert!(
        !exact.iter().any(|p| p == "src/upload.rs"),
        "without expansion `filename` is no word of the question: {exact:?}"
    );
}

#[test]
fn a_misspelt_word_is_read_as_the_word_the_code_uses_and_the_answer_says_so() {
    // `polciy` occurs nowhere; `policy` in three files. The model's vocabulary says it is no
    // English word; asked of the lexical oracle alone, only the correction can match it.
    let mut env = TestEnv::with_model();
    env.start_daemon();
    let repo = retry_repo();
    env.add_repo(repo.path());
    let out = env.patina_in(
        repo.path(),
        &[
            "q",
            "where is the polciy",
            "--files",
            "--json",
            "--oracle",
            "lexical",
        ],
    );
    assert_eq!(out.code(), 0, "{out:?}");
    let v = out.q_json();
    let notices = v["notices"].to_string();
    assert!(
        notices.contains("'polciy' as 'policy'"),
        "the answer says how the word was read: {notices}"
    );
    let files = paths(&json_hits(&out));
    assert!(
        files.iter().any(|p| p == "retrykit/backoff.py"),
        "RetryPolicy's file is found: {files:?}"
    );

    // A word alone is looked up as a name, and read as the code's word all the same.
    let out = env.patina_in(repo.path(), &["q", "polciy", "--files", "--json"]);
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(
        out.q_json()["notices"]
            .to_string()
            .contains("'polciy' as 'policy'"),
        "{out:?}"
    );
    assert!(
        paths(&json_hits(&out))
            .iter()
            .any(|p| p == "retrykit/backoff.py")
    );

    // An English word the code never uses (`relay`, one edit from the code's `delay`), a word the
    // code uses in another form, and an identifier are taken as written.
    for q in [
        "is the relay capped",
        "where is the retry policies",
        "RetryPolcy",
    ] {
        let out = env.patina_in(repo.path(), &["q", q, "--json"]);
        let notices = out.q_json()["notices"].to_string();
        assert!(!notices.contains(" as '"), "{q}: {notices}");
    }
}

const FANOUT_PY: &str = r#""""Writes each record to several sinks."""


class Fanout:
    def __init__(self, sinks):
        self.sinks = list(sinks)

    def write(self, record):
        for sink in self.sinks:
            try:
                sink.write(record)
            except Exception as err:
                report(err)
"#;

const FORMAT_PY: &str = r#"def format_event(event, output):
    """Renders one event as a line of output."""
    output.append(f"{event.level}: {event.message}")
"#;

const TEST_FANOUT_PY: &str = r#"from fanlog.fanout import Fanout


def test_one_output_throws_others_still_get_event():
    got = []
    Fanout([Broken(), Collecting(got)]).write("hello")
    assert got == ["hello"]
"#;

/// Two files named `retry.py`, neither defining `retry`: `test_retry.py` names neither more than
/// the other.
const RETRY_PY: &str = r#"def again(fn, n):
    for _ in range(n - 1):
        try:
            return fn()
        except OSError:
            pass
    return fn()
"#;

const COMPAT_RETRY_PY: &str = r#"def again_later(fn, delays):
    for delay in delays:
        pause(delay)
    return fn()
"#;

const TEST_RETRY_PY: &str = r#"def test_a_flaky_call_is_attempted_three_times_before_giving_up():
    calls = []
    flaky(calls)
    assert len(calls) == 3
"#;

const ROTATE_PY: &str = r#"def roll(log):
    """Starts a new log file once the current one passes its size limit."""
    return log.reopen()
"#;

const TEST_ROTATE_PY: &str = r#"def test_roll():
    handle = make(10)
    handle.put(b"x" * 40)
    assert handle.reopened == 2
"#;

const TEST_FORMAT_PY: &str = r#"def test_format():
    assert format_event(E, [])
"#;

#[test]
fn a_test_that_describes_the_behaviour_in_the_questions_words_stands_for_the_code_it_tests() {
    let env = TestEnv::started();
    let repo = git_repo(&[
        ("fanlog/fanout.py", FANOUT_PY.as_bytes()),
        ("fanlog/format.py", FORMAT_PY.as_bytes()),
        ("tests/test_fanout.py", TEST_FANOUT_PY.as_bytes()),
        ("fanlog/retry.py", RETRY_PY.as_bytes()),
        ("fanlog/compat/retry.py", COMPAT_RETRY_PY.as_bytes()),
        ("tests/test_retry.py", TEST_RETRY_PY.as_bytes()),
    ]);
    env.add_repo(repo.path());
    // The files a query answers with (`--files`), and its output.
    let files_for = |repo: &std::path::Path, question: &str, extra: &[&str]| {
        let mut args = vec!["q", question, "--files", "--json"];
        args.extend_from_slice(extra);
        let out = env.patina_in(repo, &args);
        assert_eq!(out.code(), 0, "{out:?}");
        (paths(&json_hits(&out)), out)
    };
    let question = "one output throws but the others still get the event";

    // The question's words are the test's, not the code's: the lexical oracle alone finds the test
    // (ranked below the source that shares a word, as a test is for such a question) and not the
    // code it tests.
    let (files, _) = files_for(repo.path(), question, &["--oracle", "lexical"]);
    assert!(
        files.iter().any(|p| p == "tests/test_fanout.py"),
        "{files:?}"
    );
    assert!(!files.iter().any(|p| p == "fanlog/fanout.py"), "{files:?}");

    // The default oracles answer with the code the test tests, above the source that shares a
    // word or two with the question.
    let (files, out) = files_for(repo.path(), question, &[]);
    let hits = json_hits(&out);
    assert_eq!(
        files.first().map(String::as_str),
        Some("fanlog/fanout.py"),
        "{files:?}"
    );
    assert_eq!(hits[0]["role"], "source");
    assert_eq!(out.q_json()["intent"], "implementation");

    // A test whose name two files share, neither defining it, names no subject: it keeps its
    // place rather than giving it to both.
    let question = "a flaky call is attempted three times before giving up";
    let (files, _) = files_for(repo.path(), question, &[]);
    let at = |path: &str| files.iter().position(|p| p == path);
    let test = at("tests/test_retry.py").unwrap_or_else(|| panic!("{files:?}"));
    for source in ["fanlog/retry.py", "fanlog/compat/retry.py"] {
        assert!(at(source).is_none_or(|i| i > test), "{files:?}");
    }

    // And the other way round: asked for tests, the code the words find brings the tests named
    // for it, which share no word with the question but "tests" (the lexical oracle alone ranks
    // every test file alike by it).
    let repo = git_repo(&[
        ("fanlog/rotate.py", ROTATE_PY.as_bytes()),
        ("fanlog/format.py", FORMAT_PY.as_bytes()),
        ("tests/test_rotate.py", TEST_ROTATE_PY.as_bytes()),
        ("tests/test_format.py", TEST_FORMAT_PY.as_bytes()),
    ]);
    env.add_repo(repo.path());
    let question = "where are the tests for starting a new log file when the current log passes its size limit";
    let (files, _) = files_for(repo.path(), question, &["--oracle", "lexical"]);
    assert!(files.iter().any(|p| p == "fanlog/rotate.py"), "{files:?}");
    assert_ne!(files[0], "tests/test_rotate.py", "{files:?}");
    let (files, out) = files_for(repo.path(), question, &[]);
    assert_eq!(out.q_json()["intent"], "tests");
    assert_eq!(files[0], "tests/test_rotate.py", "{files:?}");
}

#[test]
fn an_interface_that_describes_the_behaviour_ranks_below_the_class_that_does_it() {
    // The interface's doc comment says what happens in the question's words; the class does it.
    let contract = "<?php\nnamespace App;\n\ninterface Pipeline\n{\n    /**\n     * Add a middleware. The middleware added last runs first, before the ones added earlier.\n     */\n    public function add(callable $middleware): void;\n}\n";
    let stack = "<?php\nnamespace App;\n\nclass Stack implements Pipeline\n{\n    private array $layers = [];\n\n    /** In front of the others. */\n    public function add(callable $layer): void\n    {\n        array_unshift($this->layers, $layer);\n    }\n}\n";
    let repo = git_repo(&[
        ("src/Pipeline.php", contract.as_bytes()),
        ("src/Stack.php", stack.as_bytes()),
    ]);
    let question = "why does the middleware added last run before the ones added earlier";
    let ranked = |config: &str| {
        let mut env = TestEnv::new();
        env.append_config(config);
        env.start_daemon();
        env.add_repo(repo.path());
        let out = env.patina_in(repo.path(), &["q", question, "--files", "--json"]);
        assert_eq!(out.code(), 0, "{out:?}");
        paths(&json_hits(&out))
    };
    // Without the rule the interface wins: its words say it all.
    assert_eq!(
        ranked("\n[ranking]\ndeclaration = 1.0\n"),
        ["src/Pipeline.php", "src/Stack.php"]
    );
    assert_eq!(
        ranked(""),
        ["src/Stack.php", "src/Pipeline.php"],
        "the implementation first, the interface after it"
    );
}

#[test]
fn a_header_that_describes_the_behaviour_hands_its_place_to_the_implementation_of_its_name() {
    // Objective-C and OCaml split a module in two files of one stem: the header (`.h`, `.mli`)
    // says what happens in the question's words, the implementation (`.m`, `.ml`) does it.
    let header = "#import <Foundation/Foundation.h>\n\n/**\n `TileCache` keeps decoded map tiles in memory. Once the total cost of the tiles passes the limit, the least recently used tiles are evicted until the cost is under the preferred size again.\n */\n@interface TileCache : NSObject\n\n/** The cost above which the least recently used tiles are evicted. */\n@property (nonatomic, assign) UInt64 capacity;\n\n/** Adds a tile. */\n- (void)put:(id)item forKey:(NSString *)key;\n\n@end\n";
    let implementation = "#import \"TileCache.h\"\n\n@implementation TileCache {\n    NSMutableDictionary *_slots;\n    UInt64 _used;\n}\n\n- (void)put:(id)item forKey:(NSString *)key {\n    _slots[key] = item;\n    _used += [item length];\n    if (_used > self.capacity) {\n        NSArray *byAge = [_slots keysSortedByValueUsingSelector:@selector(compareStamp:)];\n        for (NSString *old in byAge) {\n            _used -= [_slots[old] length];\n            [_slots removeObjectForKey:old];\n            if (_used <= self.capacity / 2) break;\n        }\n    }\n}\n\n@end\n";
    let mli = "(** Decoded map tiles kept in memory. *)\n\ntype t\n\n(** [add t key tile] keeps [tile]. Once the total cost of the tiles passes the limit, the least\n    recently used tiles are evicted until the cost is under the preferred size again. *)\nval add : t -> string -> string -> unit\n";
    let ml = "type t = { slots : (string, string * int) Hashtbl.t; mutable used : int; cap : int; mutable clock : int }\n\nlet add t key tile =\n  t.clock <- t.clock + 1;\n  Hashtbl.replace t.slots key (tile, t.clock);\n  t.used <- t.used + String.length tile;\n  while t.used > t.cap do\n    let oldest = Hashtbl.fold (fun k (_, s) acc -> match acc with Some (_, s') when s' <= s -> acc | _ -> Some (k, s)) t.slots None in\n    match oldest with\n    | Some (k, _) -> t.used <- t.used - String.length (fst (Hashtbl.find t.slots k)); Hashtbl.remove t.slots k\n    | None -> t.used <- 0\n  done\n";
    // An `.mli` whose module documentation (a block of no name) says it all stands for the `.ml`
    // beside it as a whole; the comment below a `val` is that `val`'s.
    let documented = "(** Tile pools: decoded map tiles kept in memory. Once the total cost of the tiles passes\n    the limit, the least recently used tiles are evicted until the cost is under the preferred\n    size again. *)\n\ntype t\n(** A pool. *)\n\nval put : t -> string -> string -> unit\n(** [put t key tile] keeps [tile]. *)\n";
    let repo = git_repo(&[
        ("pool/pool.mli", documented.as_bytes()),
        ("pool/pool.ml", ml.as_bytes()),
        ("Tiles/TileCache.h", header.as_bytes()),
        ("Tiles/TileCache.m", implementation.as_bytes()),
        ("lib/tiles.mli", mli.as_bytes()),
        ("lib/tiles.ml", ml.as_bytes()),
    ]);
    let question =
        "how are the least recently used tiles evicted once their total cost passes the limit";
    let pairs = [
        ("Tiles/*", "Tiles/TileCache.h", "Tiles/TileCache.m"),
        ("lib/*", "lib/tiles.mli", "lib/tiles.ml"),
        ("pool/*", "pool/pool.mli", "pool/pool.ml"),
    ];
    let ranked = |config: &str| {
        let mut env = TestEnv::new();
        env.append_config(config);
        env.start_daemon();
        env.add_repo(repo.path());
        pairs.map(|(only, _, _)| {
            let out = env.patina_in(repo.path(), &["q", question, "--json", "-g", only]);
            assert_eq!(out.code(), 0, "{out:?}");
            // The files in the order of their first chunk.
            let mut files = paths(&json_hits(&out));
            let mut seen = std::collections::HashSet::new();
            files.retain(|f| seen.insert(f.clone()));
            files
        })
    };
    // Without the rule the header wins: its words say it all.
    let off = ranked("\n[ranking]\ndeclaration = 1.0\n");
    let on = ranked("");
    for (((only, header, implementation), off), on) in pairs.iter().zip(off).zip(on) {
        assert_eq!(off, [*header, *implementation], "{only}");
        assert_eq!(
            on,
            [*implementation, *header],
            "{only}: the implementation first, the header after it"
        );
    }
}

#[test]
fn the_explain_log_says_why_each_first_candidate_ranks_where_it_does() {
    let mut env = TestEnv::new();
    env.next_daemon_env("PATINA_LOG", "info,patina::explain=debug");
    env.start_daemon();
    let repo = retry_repo();
    env.add_repo(repo.path());
    let out = env.patina_in(
        repo.path(),
        &[
            "q",
            "how is the backoff delay between retries computed",
            "--oracle",
            "lexical",
        ],
    );
    assert_eq!(out.code(), 0, "{out:?}");
    let logs = env.logs();
    // The per-candidate lines (the per-stage lines name only the first candidates' places).
    let lines: Vec<&str> = logs
        .lines()
        .filter(|l| l.contains("patina::explain") && l.contains("Factors {"))
        .collect();
    assert!(
        logs.lines()
            .any(|l| l.contains("patina::explain") && l.contains("stage=\"fusion\"")),
        "each stage's effect is named: {logs}"
    );
    let source = lines
        .iter()
        .find(|l| l.contains("retrykit/backoff.py:"))
        .unwrap_or_else(|| panic!("the source is explained: {logs}"));
    assert!(source.contains("role: 1.0"), "{source}");
    assert!(
        source.contains("(\"lexical\", "),
        "its oracle place: {source}"
    );
    let readme = lines
        .iter()
        .find(|l| l.contains(" README.md:"))
        .unwrap_or_else(|| panic!("the README is explained: {logs}"));
    assert!(
        readme.contains("role: 0.5"),
        "the docs prior of an implementation question: {readme}"
    );
}

/// A module of a package whose every file touches the same subject: handlers that parse, check,
/// retry and log requests, each with its own mix of those words (a fixed mix per index, so the
/// repository is the same on every run).
fn near_answers_module(i: usize) -> String {
    const VERBS: [&str; 6] = ["parse", "validate", "retry", "log", "cache", "encode"];
    const NOUNS: [&str; 5] = ["request", "header", "timeout", "payload", "session"];
    let verb = |k: usize| VERBS[(i * 7 + k * 3) % VERBS.len()];
    let noun = |k: usize| NOUNS[(i * 5 + k) % NOUNS.len()];
    let mut s = String::new();
    for k in 0..3 {
        let (v, n) = (verb(k), noun(k));
        s.push_str(&format!(
            "def {v}_{n}_{i}_{k}(item, limit={k}):\n    \"\"\"{v} the {n} of an incoming item; \
             handler {i} step {k}.\"\"\"\n    if item is None:\n        return None\n    \
             return [{v}_part(p, limit) for p in item.{n}s][:limit]\n\n\n"
        ));
    }
    s
}

#[test]
fn the_first_hits_are_the_same_however_many_are_asked_for() {
    let mut env = TestEnv::with_model();
    env.start_daemon();
    let files: Vec<(String, String)> = (0..60)
        .map(|i| (format!("handlers/h{i:02}.py"), near_answers_module(i)))
        .collect();
    let borrowed: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_bytes()))
        .collect();
    let repo = git_repo(&borrowed);
    env.add_repo(repo.path());
    let first = |n: usize, extra: &[&str]| -> Vec<(String, u64)> {
        let limit = n.to_string();
        let question = "how is the timeout of a request header retried and logged";
        // Wait for every model vector however busy the machine (`--fresh` alone gives up after
        // 5 s, and a ranking with some static vectors left differs from the next one's).
        let mut args = vec!["q", question, "--fresh=120000", "--json", "-n", &limit];
        args.extend_from_slice(extra);
        let out = env.patina_in(repo.path(), &args);
        assert_eq!(out.code(), 0, "{out:?}");
        json_hits(&out)
            .iter()
            .map(|h| {
                let path = h["repo_path"].as_str().unwrap_or_default().to_string();
                (path, h["start_line"].as_u64().unwrap_or_default())
            })
            .collect()
    };
    // Both oracles rank every module (180 definitions): the fusion reads all their candidates, so
    // a depth that followed the limit would reorder the first hits.
    for extra in [&[][..], &["--files"][..]] {
        let ten = first(10, extra);
        assert_eq!(ten.len(), 10, "{ten:?}");
        for n in [1, 3, 5] {
            assert_eq!(first(n, extra), ten[..n], "-n {n} {extra:?} against -n 10");
        }
    }
    // Up to `pool / overfetch` (30) chunks the depth is the pool's.
    let (ten, thirty) = (first(10, &[]), first(30, &[]));
    assert_eq!(thirty[..10], ten[..], "-n 30 against -n 10");
}

/// The learned stage (`[ranking] learned`): asked for, each file hit of its pool says what the
/// ranking knew of it, by name, and the first `limit` are the plain answer; turned on with the
/// shipped model (today's order), it reorders the first 30 and answers the first `limit`, the
/// same files as with it off.
#[test]
fn the_learned_stage_says_each_hits_features_and_keeps_todays_order() {
    let mut env = TestEnv::started();
    let repo = retry_repo();
    env.add_repo(repo.path());
    let key = repo.key();
    let ask = |env: &TestEnv, features: bool| {
        let mut req = query("how is the backoff delay between retries computed");
        req.repos = vec![key.clone()];
        req.granularity = pb::Granularity::File as i32;
        req.limit = 2;
        req.features = features;
        env.query(req).expect("answered")
    };
    let files = |r: &pb::QueryResponse| r.hits.iter().map(|h| h.path.clone()).collect::<Vec<_>>();

    let plain = ask(&env, false);
    assert!(
        plain.hits.iter().all(|h| h.features.is_empty()),
        "only when asked"
    );
    let logged = ask(&env, true);
    assert_eq!(
        files(&logged)[..2],
        files(&plain)[..],
        "asking changes none of the first limit"
    );
    assert!(
        logged.hits.len() > 2 && logged.hits.len() <= 30,
        "the learned stage's whole pool: {:?}",
        files(&logged)
    );
    for (i, h) in logged.hits.iter().enumerate() {
        assert_eq!(h.features.len(), 29, "every feature: {h:?}");
        let value = |f: pb::RankFeature| {
            h.features
                .iter()
                .find(|v| v.feature == f as i32)
                .map(|v| v.value)
                .unwrap_or_else(|| panic!("{f:?} in {h:?}"))
        };
        assert!((value(pb::RankFeature::Place) - 1.0 / (i + 1) as f64).abs() < 1e-9);
        assert!(value(pb::RankFeature::Score) <= 0.0);
    }
    assert_eq!(
        logged.hits[0].path,
        "retrykit/backoff.py",
        "{:?}",
        files(&logged)
    );

    env.stop_daemon();
    env.append_config("[ranking]\nlearned = true\n");
    env.start_daemon();
    let learned = ask(&env, false);
    assert_eq!(
        files(&learned),
        files(&plain),
        "the shipped model is today's order"
    );
}
