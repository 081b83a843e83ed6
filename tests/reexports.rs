//! Where users import a name from: a query naming a symbol answers with its definition first and,
//! right beside it, the re-export that makes it public (`pub use`, a package's `__init__.py`,
//! `export { B } from`), ahead of the code that merely uses it; a question about how a folder's
//! concept works ("how does the searcher work") lifts the folder's root file (`searcher/mod.rs`).
//! The model is on, as for a user: the rules must hold with every oracle taking part.

use crate::util::*;

const QUERY_RS: &str = r#"use std::collections::HashMap;

/// Turns the text of a query into terms and the fields they are asked of.
pub struct QueryParser {
    fields: HashMap<String, f32>,
    default_field: String,
}

impl QueryParser {
    pub fn new(default_field: &str) -> QueryParser {
        QueryParser {
            fields: HashMap::new(),
            default_field: default_field.to_string(),
        }
    }

    pub fn parse(&self, text: &str) -> Vec<(String, String)> {
        text.split_whitespace()
            .map(|w| match w.split_once(':') {
                Some((f, t)) if self.fields.contains_key(f) => (f.to_string(), t.to_string()),
                _ => (self.default_field.clone(), w.to_string()),
            })
            .collect()
    }
}
"#;

const LIB_RS: &str = "//! A small search library.\n\npub mod cli;\nmod parser;\npub mod searcher;\n\npub use parser::query::QueryParser;\n";

const MAIN_RS: &str = r#"use demo::QueryParser;

fn main() {
    let parser = QueryParser::new("body");
    for (field, term) in parser.parse("title:rust body:search") {
        println!("{field}: {term}");
    }
}
"#;

const CLI_RS: &str = r#"use crate::QueryParser;

/// Reads the query given on the command line with a parser for the body field.
pub fn query_from_args(args: &[String]) -> Vec<(String, String)> {
    let parser = QueryParser::new("body");
    parser.parse(&args.join(" "))
}
"#;

const ENGINE_PY: &str = r#"class PriceEngine:
    """Prices a cart: list prices, then discounts, then taxes."""

    def __init__(self, discounts, tax_rate):
        self.discounts = discounts
        self.tax_rate = tax_rate

    def total(self, cart):
        subtotal = sum(item.price * item.quantity for item in cart)
        for d in self.discounts:
            subtotal = d.apply(subtotal)
        return subtotal * (1 + self.tax_rate)
"#;

const CHECKOUT_PY: &str = r#"from shop.pricing import PriceEngine


def checkout(cart, discounts):
    engine = PriceEngine(discounts, tax_rate=0.2)
    return engine.total(cart)
"#;

const ROUTER_JS: &str = r#"export class RouteTable {
  constructor() {
    this.routes = new Map();
  }

  add(path, handler) {
    this.routes.set(path, handler);
  }

  match(path) {
    return this.routes.get(path) || null;
  }
}
"#;

const APP_JS: &str = r#"import { RouteTable } from './router';

export function start() {
  const table = new RouteTable();
  table.add('/', () => 'home');
  return table.match('/');
}
"#;

const SEARCHER_MOD_RS: &str = r#"//! Answers a query from the index: splits its text, looks the terms up, orders what matched.

mod cache;
mod filters;
mod highlight;
mod index;
mod scorer;
mod tokens;

pub use index::Index;
pub use scorer::Scorer;

pub fn run(index: &Index, scorer: &Scorer, text: &str) -> Vec<u32> {
    let terms = tokens::split(text);
    scorer.rank(index.lookup(&terms))
}
"#;

const SEARCHER_INDEX_RS: &str = r#"use std::collections::HashMap;

/// The searcher's inverted index: each term to the documents that hold it.
pub struct Index {
    postings: HashMap<String, Vec<u32>>,
}

impl Index {
    pub fn lookup(&self, terms: &[String]) -> Vec<u32> {
        let mut docs = Vec::new();
        for t in terms {
            docs.extend(self.postings.get(t).into_iter().flatten().copied());
        }
        docs
    }
}
"#;

const SEARCHER_SCORER_RS: &str = r#"/// Orders the documents the searcher found: the most matched first.
pub struct Scorer;

impl Scorer {
    pub fn rank(&self, mut docs: Vec<u32>) -> Vec<u32> {
        docs.sort_unstable();
        docs.dedup();
        docs
    }
}
"#;

const SEARCHER_TOKENS_RS: &str = r#"/// Splits the searcher's query text into lowercase terms.
pub fn split(text: &str) -> Vec<String> {
    text.split_whitespace().map(str::to_lowercase).collect()
}
"#;

const SEARCHER_CACHE_RS: &str = r#"use std::collections::HashMap;

/// Keeps the searcher's recent answers: the same query text is answered from memory.
pub struct Cache {
    answers: HashMap<String, Vec<u32>>,
}

impl Cache {
    pub fn get(&self, text: &str) -> Option<&Vec<u32>> {
        self.answers.get(text)
    }
}
"#;

const SEARCHER_FILTERS_RS: &str = r#"/// Drops the documents the searcher must not return: deleted or hidden ones.
pub fn visible(docs: Vec<u32>, hidden: &[u32]) -> Vec<u32> {
    docs.into_iter().filter(|d| !hidden.contains(d)).collect()
}
"#;

const SEARCHER_HIGHLIGHT_RS: &str = r#"/// Marks where the searcher's terms occur in a document's text, for display.
pub fn highlight(text: &str, terms: &[String]) -> String {
    let mut out = text.to_string();
    for t in terms {
        out = out.replace(t.as_str(), &format!("[{t}]"));
    }
    out
}
"#;

/// One repository with a re-export in each form and a folder with its root.
fn library() -> Repo {
    git_repo(&[
        (
            "Cargo.toml",
            b"[package]\nname = \"demo\"\nversion = \"0.1.0\"\n",
        ),
        ("src/lib.rs", LIB_RS.as_bytes()),
        ("src/main.rs", MAIN_RS.as_bytes()),
        ("src/cli.rs", CLI_RS.as_bytes()),
        ("src/parser/mod.rs", b"pub mod query;\n"),
        ("src/parser/query.rs", QUERY_RS.as_bytes()),
        ("src/searcher/mod.rs", SEARCHER_MOD_RS.as_bytes()),
        ("src/searcher/index.rs", SEARCHER_INDEX_RS.as_bytes()),
        ("src/searcher/scorer.rs", SEARCHER_SCORER_RS.as_bytes()),
        ("src/searcher/tokens.rs", SEARCHER_TOKENS_RS.as_bytes()),
        ("src/searcher/cache.rs", SEARCHER_CACHE_RS.as_bytes()),
        ("src/searcher/filters.rs", SEARCHER_FILTERS_RS.as_bytes()),
        (
            "src/searcher/highlight.rs",
            SEARCHER_HIGHLIGHT_RS.as_bytes(),
        ),
        ("shop/__init__.py", b""),
        (
            "shop/pricing/__init__.py",
            b"\"\"\"Pricing of carts.\"\"\"\n\nfrom .engine import PriceEngine\n",
        ),
        ("shop/pricing/engine.py", ENGINE_PY.as_bytes()),
        ("shop/checkout.py", CHECKOUT_PY.as_bytes()),
        (
            "web/router/index.js",
            b"export { RouteTable } from './table';\n",
        ),
        ("web/router/table.js", ROUTER_JS.as_bytes()),
        ("web/app.js", APP_JS.as_bytes()),
    ])
}

/// The indexed library, semantic search on and its backlog embedded before answers.
fn indexed() -> (TestEnv, Repo) {
    let mut env = TestEnv::with_model();
    env.start_daemon();
    let repo = library();
    env.add_repo(repo.path());
    (env, repo)
}

fn ask(env: &TestEnv, repo: &Repo, text: &str) -> QueryResponse {
    let req = QueryRequest {
        repos: vec![repo.key()],
        fresh_timeout_ms: 60_000,
        ..query(text)
    };
    env.query(req)
        .unwrap_or_else(|s| panic!("query {text:?}: {s}"))
}

fn holds(h: &Hit, path: &str, line: u32) -> bool {
    h.path == path && h.start_line <= line && line <= h.end_line
}

/// `text` answers with `name`'s definition in `def_path` first and the chunk holding line
/// `reexport_line` of `reexport_path` second (or in the top three, ahead of every other file).
fn definition_then_reexport(
    env: &TestEnv,
    repo: &Repo,
    text: &str,
    name: &str,
    def_path: &str,
    (reexport_path, reexport_line): (&str, u32),
) {
    let resp = ask(env, repo, text);
    let hits = &resp.hits;
    assert!(
        hits.first()
            .is_some_and(|h| h.path == def_path && h.symbol == name),
        "{text:?}: the definition of {name} first, got {:#?}",
        seen(&resp)
    );
    let at = hits
        .iter()
        .position(|h| holds(h, reexport_path, reexport_line))
        .unwrap_or_else(|| {
            panic!(
                "{text:?}: no hit for the re-export {reexport_path}:{reexport_line}: {:#?}",
                seen(&resp)
            )
        });
    let before_it = &hits[1..at];
    assert!(
        at == 1 || (at <= 2 && before_it.iter().all(|h| h.path == def_path)),
        "{text:?}: the re-export {reexport_path}:{reexport_line} beside the definition, got \
         it at {at}: {:#?}",
        seen(&resp)
    );
}

#[test]
fn a_symbol_query_answers_with_the_definition_and_then_its_reexport() {
    let (env, repo) = indexed();
    let lib_line = repo.line_of("src/lib.rs", "pub use parser::query::QueryParser;");
    let init_line = repo.line_of(
        "shop/pricing/__init__.py",
        "from .engine import PriceEngine",
    );
    let index_line = repo.line_of("web/router/index.js", "export { RouteTable }");
    let cases = [
        (
            "QueryParser",
            "src/parser/query.rs",
            ("src/lib.rs", lib_line),
        ),
        (
            "PriceEngine",
            "shop/pricing/engine.py",
            ("shop/pricing/__init__.py", init_line),
        ),
        (
            "RouteTable",
            "web/router/table.js",
            ("web/router/index.js", index_line),
        ),
    ];
    for (name, def_path, reexport) in cases {
        definition_then_reexport(&env, &repo, name, name, def_path, reexport);
        definition_then_reexport(
            &env,
            &repo,
            &format!("where is {name} defined"),
            name,
            def_path,
            reexport,
        );
    }
    // Through the shell client too.
    let out = env.patina_in(repo.path(), &["q", "QueryParser", "-n", "3"]);
    let text = &out.stdout;
    let def = text.find("src/parser/query.rs").unwrap_or(usize::MAX);
    let lib = text.find("src/lib.rs").unwrap_or(usize::MAX);
    assert!(def < lib && lib < usize::MAX, "{text}");
}

#[test]
fn a_reexport_is_offered_only_when_the_query_names_the_symbol() {
    let (env, repo) = indexed();
    let lib_line = repo.line_of("src/lib.rs", "pub use parser::query::QueryParser;");
    // A question about parsing that names no symbol: the re-export line is no named answer.
    let resp = ask(
        &env,
        &repo,
        "how is the text of a query split into fields and terms",
    );
    for h in resp
        .hits
        .iter()
        .filter(|h| holds(h, "src/lib.rs", lib_line))
    {
        assert!(
            !h.provenance
                .iter()
                .any(|p| oracle_name(p.oracle) == "symbol"),
            "the symbol oracle offered the re-export unasked: {:#?}",
            seen(&resp)
        );
    }
    // A name nobody re-exports has no re-export beside it.
    let resp = ask(&env, &repo, "query_from_args");
    assert_eq!(resp.hits[0].symbol, "query_from_args", "{:#?}", seen(&resp));
    assert!(
        !resp.hits[..3.min(resp.hits.len())]
            .iter()
            .any(|h| holds(h, "src/lib.rs", lib_line)),
        "{:#?}",
        seen(&resp)
    );
}

#[test]
fn a_question_about_a_folder_puts_its_root_file_near_the_top() {
    let (env, repo) = indexed();
    let resp = ask(&env, &repo, "how does the searcher work");
    let at = resp
        .hits
        .iter()
        .position(|h| h.path == "src/searcher/mod.rs");
    assert!(
        at.is_some_and(|i| i < 3),
        "src/searcher/mod.rs in the top 3, got {:#?}",
        seen(&resp)
    );
    // A question about one part of the folder still finds that part first.
    let resp = ask(
        &env,
        &repo,
        "how are the searcher's documents ordered by the scorer",
    );
    assert_eq!(
        resp.hits.first().map(|h| h.path.as_str()),
        Some("src/searcher/scorer.rs"),
        "{:#?}",
        seen(&resp)
    );
}

/// In a repository too large to build its graph inside a query, a symbol query answers at once
/// without re-exports and starts the build in the background; once the graph is in memory the
/// same query answers with the re-export too. (The size is lowered to 0 chunks here.)
#[test]
fn a_large_repository_answers_symbol_queries_while_its_graph_builds_in_the_background() {
    let mut env = TestEnv::new();
    env.next_daemon_env("PATINA_TEST_GRAPH_INLINE_CHUNKS", "0");
    env.start_daemon();
    let repo = library();
    env.add_repo(repo.path());
    let lib_line = repo.line_of("src/lib.rs", "pub use parser::query::QueryParser;");
    let by_name = || {
        let req = QueryRequest {
            repos: vec![repo.key()],
            oracles: vec!["lexical".into(), "symbol".into()],
            ..query("QueryParser")
        };
        env.query(req).expect("a symbol query")
    };
    let first = by_name();
    assert!(
        first
            .hits
            .first()
            .is_some_and(|h| h.path == "src/parser/query.rs"),
        "{:#?}",
        seen(&first)
    );
    eventually("the graph is built in the background", || {
        env.logs()
            .contains("graph built in the background for queries")
    });
    let later = by_name();
    assert!(
        later.hits.iter().any(|h| holds(h, "src/lib.rs", lib_line)),
        "the re-export once the graph is in memory: {:#?}",
        seen(&later)
    );
}
