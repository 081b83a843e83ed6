//! Navigation on the dependency graph: `patina refs`, `callers`, `callees` and `defs` answer
//! from the live index, and an edit that removes a call updates them once the index caught up;
//! context expansion brings a hit what it needs around it.

use patina_proto::v1 as pb;

use crate::util::{EVENTUALLY, TestEnv, git_repo, poll};

const FILES: &[(&str, &[u8])] = &[
    (
        "app/validate.py",
        b"def check_email(value):\n    return '@' in value\n",
    ),
    (
        "app/signup.py",
        b"from app.validate import check_email\n\n\ndef register(form):\n    if not check_email(form['email']):\n        raise ValueError('bad email')\n    return form\n",
    ),
];

#[test]
fn refs_callers_callees_and_defs_follow_edits() {
    let env = TestEnv::started();
    let repo = git_repo(FILES);
    env.add_repo(repo.path());

    let out = env.patina_in(repo.path(), &["refs", "check_email"]);
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(
        out.stdout
            .contains("app/signup.py\n  5  in register  [import]"),
        "{}",
        out.stdout
    );
    let out = env.patina_in(repo.path(), &["callers", "check_email", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v[0]["symbol"], "register", "{v}");
    assert_eq!(v[0]["line"], 5, "{v}");
    let out = env.patina_in(repo.path(), &["callees", "register"]);
    assert!(
        out.stdout.contains("check_email → app/validate.py:1-2"),
        "{}",
        out.stdout
    );
    let out = env.patina_in(repo.path(), &["defs", "check_email"]);
    assert!(
        out.stdout
            .contains("app/validate.py\n  1-2  function check_email"),
        "{}",
        out.stdout
    );

    // Remove the call: the live index catches up and the reference is gone.
    std::fs::write(
        repo.path().join("app/signup.py"),
        "def register(form):\n    return form\n",
    )
    .unwrap();
    poll(EVENTUALLY, "no reference of check_email is listed", || {
        let out = env.patina_in(repo.path(), &["refs", "check_email"]);
        (out.code() == 1 && out.stdout.is_empty())
            .then_some(())
            .ok_or(format!("{out:?}"))
    });
}

const EXPAND_FILES: &[(&str, &[u8])] = &[
    (
        "pkg/config.py",
        b"import os
import json
from .helpers import (
    load,
    dump,
)
from .unused import nothing


class Config(dict):
    \"\"\"Holds settings.\"\"\"

    def __init__(self, root):
        self.root = root

    def from_env(self, prefix=\"APP\"):
        for key in os.environ:
            self[key] = json.loads(self.parse(key))
        return load(self)

    def parse(self, key):
        return key.lower()

    def save(self):
        dump(self)
",
    ),
    (
        "pkg/helpers.py",
        b"def load(x):\n    return x\n\n\ndef dump(x):\n    pass\n",
    ),
    (
        "docs/guide.md",
        b"# Guide\n\nIntro.\n\n## Install\n\nHow to install.\n\n### From source\n\nBuild it from its sources.\n\n#### With cargo\n\ncargo build\n\n### From packages\n\napt install.\n\n## Usage\n\nRun it.\n",
    ),
];

/// `Search.Context` with `expand`: the best hit's item carries its related pieces.
fn expanded(env: &TestEnv, query: &str, budget: u32) -> pb::ContextResponse {
    env.call("context", async {
        env.search_client()
            .await
            .context(pb::ContextRequest {
                query: query.into(),
                token_budget: budget,
                oracles: vec!["lexical".into(), "symbol".into()],
                expand: true,
                ..Default::default()
            })
            .await
            .expect("context")
            .into_inner()
    })
}

fn related_of(item: &pb::ContextItem) -> Vec<(&str, &str, &str)> {
    item.related
        .iter()
        .map(|r| (r.kind.as_str(), r.r#ref.as_str(), r.text.as_str()))
        .collect()
}

#[test]
fn context_expansion_brings_a_method_its_class_imports_callees_and_a_section_its_headings() {
    let env = TestEnv::started();
    let repo = git_repo(EXPAND_FILES);
    env.add_repo(repo.path());

    let resp = expanded(&env, "from_env", 6000);
    let item = &resp.items[0];
    assert_eq!(item.r#ref, "pkg/config.py:16-19", "{resp:#?}");
    let rel = related_of(item);
    assert_eq!(
        rel[0],
        (
            "container",
            "pkg/config.py:10-11",
            "class Config(dict):\n    \"\"\"Holds settings.\"\"\""
        ),
        "{rel:#?}"
    );
    let imports: Vec<&str> = rel
        .iter()
        .filter(|r| r.0 == "import")
        .map(|r| r.2)
        .collect();
    assert_eq!(
        imports,
        [
            "import os",
            "import json",
            "from .helpers import (\n    load,\n    dump,\n)"
        ],
        "the unused import is left out"
    );
    assert!(
        rel.contains(&("callee", "pkg/helpers.py:1-1", "def load(x):")),
        "{rel:#?}"
    );
    assert!(
        rel.iter().filter(|r| r.0 == "sibling").count() <= 3,
        "{rel:#?}"
    );
    assert!(
        resp.text
            .contains("<related kind=\"container\" ref=\"pkg/config.py:10-11\""),
        "{}",
        resp.text
    );
    assert!(resp.used_tokens <= resp.budget_tokens);

    // The pieces count against the budget: a tight one keeps only what fits.
    let tight = expanded(&env, "from_env", 130);
    assert!(tight.used_tokens <= 130, "{tight:#?}");
    let n = |r: &pb::ContextResponse| r.items.iter().map(|i| i.related.len()).sum::<usize>();
    assert!(n(&tight) < n(&resp), "{tight:#?}");

    // A Markdown section: the headings above it and its subsections' titles.
    let resp = expanded(&env, "From source", 6000);
    let item = resp
        .items
        .iter()
        .find(|i| i.r#ref.starts_with("docs/guide.md:9-"))
        .unwrap_or_else(|| panic!("the section is a hit: {resp:#?}"));
    assert_eq!(
        related_of(item),
        [
            ("parent_section", "docs/guide.md:1-1", "# Guide"),
            ("parent_section", "docs/guide.md:5-5", "## Install"),
            ("child_section", "docs/guide.md:13-13", "#### With cargo"),
        ],
        "{resp:#?}"
    );

    // The same through `patina q --expand`, rendered as Markdown.
    let out = env.patina_in(
        repo.path(),
        &[
            "q",
            "--expand",
            "--budget",
            "2000",
            "--oracle",
            "lexical,symbol",
            "from_env",
        ],
    );
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(
        out.stdout
            .contains("### ↳ container `Config` — pkg/config.py:10-11"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("### ↳ callee `load` — pkg/helpers.py:1-1"),
        "{}",
        out.stdout
    );
}

/// `core/util.py` is called from every other file; `app/leaf.py` from none.
const MAP_FILES: &[(&str, &[u8])] = &[
    (
        "core/util.py",
        b"def normalize(text):\n    return text.strip().lower()\n",
    ),
    (
        "app/users.py",
        b"from core.util import normalize\n\n\ndef user_key(name):\n    return normalize(name)\n",
    ),
    (
        "app/orders.py",
        b"from core.util import normalize\nfrom app.users import user_key\n\n\ndef order_key(user, ref):\n    return user_key(user) + normalize(ref)\n",
    ),
    (
        "app/search.py",
        b"from core.util import normalize\n\n\ndef terms(q):\n    return [normalize(w) for w in q.split()]\n",
    ),
    (
        "app/leaf.py",
        b"def banner():\n    return 'hello'\n",
    ),
];

#[test]
fn graph_draws_calls_and_imports_as_a_tree_json_and_dot() {
    let env = TestEnv::started();
    let repo = git_repo(MAP_FILES);
    env.add_repo(repo.path());

    let out = env.patina_in(repo.path(), &["graph", "order_key", "--depth", "2"]);
    assert_eq!(out.code(), 0, "{out:?}");
    assert_eq!(
        out.stdout,
        "order_key (function)  app/orders.py:5-6\n\
         ├─ calls normalize (function)  core/util.py:1-2  line 6  [import]\n\
         └─ calls user_key (function)  app/users.py:4-5  line 6  [import]\n\
         \x20  └─ calls normalize (function)  core/util.py:1-2  line 5  [import]  …\n"
    );
    let out = env.patina_in(
        repo.path(),
        &[
            "graph",
            "normalize",
            "--direction",
            "in",
            "--depth",
            "1",
            "--json",
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    let callers: Vec<&str> = v["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["from"].as_str().unwrap())
        .collect();
    assert_eq!(
        callers,
        ["app/orders.py:5-6", "app/search.py:4-5", "app/users.py:4-5"],
        "{v}"
    );
    assert!(
        v["edges"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["to"] == "core/util.py:1-2")
    );

    // A file: its imports, as Graphviz.
    let out = env.patina_in(repo.path(), &["graph", "app/orders.py", "--dot"]);
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(out.stdout.starts_with("digraph patina {"), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("n0 [label=\"app/orders.py\", style=bold];"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("[label=\"core/util.py\"]"),
        "{}",
        out.stdout
    );
    assert_eq!(
        out.stdout.matches(" -> ").count(),
        3,
        "orders → util, users; users → util: {}",
        out.stdout
    );

    let out = env.patina_in(repo.path(), &["graph", "no_such_thing"]);
    assert_eq!(out.code(), 2, "{out:?}");
    assert!(
        out.stderr.contains("neither a file nor a symbol"),
        "{out:?}"
    );
}

#[test]
fn the_repo_map_ranks_a_file_many_call_above_a_leaf_within_the_budget() {
    let env = TestEnv::started();
    let repo = git_repo(MAP_FILES);
    env.add_repo(repo.path());

    let out = env.patina_in(repo.path(), &["map", "--json", "--budget", "400"]);
    assert_eq!(out.code(), 0, "{out:?}");
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    let paths: Vec<&str> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths[0], "core/util.py", "{v}");
    let at = |p: &str| paths.iter().position(|x| *x == p).unwrap_or(usize::MAX);
    assert!(at("app/users.py") < at("app/leaf.py"), "{v}");
    assert_eq!(
        v["files"][0]["symbols"][0]["signature"],
        "def normalize(text):"
    );
    assert!(v["used_tokens"].as_u64().unwrap() <= 400, "{v}");

    // A tight budget holds, and keeps the most central file.
    let out = env.patina_in(repo.path(), &["map", "--budget", "50"]);
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(out.stdout.len().div_ceil(4) <= 50, "{}", out.stdout);
    assert!(out.stdout.contains("core/util.py"), "{}", out.stdout);
    assert!(!out.stdout.contains("app/leaf.py"), "{}", out.stdout);

    // Seeded with the leaf, the map starts there.
    let out = env.patina_in(repo.path(), &["map", "--json", "--seed", "app/leaf.py"]);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!(v["files"][0]["path"], "app/leaf.py", "{v}");
}

#[test]
fn the_dependency_oracle_lifts_what_the_best_hit_calls_but_only_for_questions_about_code() {
    let mut env = TestEnv::new();
    env.append_config("\n[retrieval.weights]\ngraph = 0.5\n");
    env.start_daemon();
    let repo = git_repo(FILES);
    env.add_repo(repo.path());
    let graph_paths = |question: &str| -> (String, Vec<String>) {
        let out = env.patina_in(repo.path(), &["q", question, "--json"]);
        let v = out.q_json();
        let paths = paths_with_oracle(&v, "graph");
        (v["intent"].as_str().unwrap_or_default().to_string(), paths)
    };
    // The question names `register`; its callee in another file is the graph's contribution.
    let (intent, lifted) = graph_paths("how does register process the signup form");
    assert_eq!(intent, "implementation");
    assert_eq!(lifted, ["app/validate.py"], "the callee of the best hit");
    // A usage question wants documentation and examples: no walk.
    let (intent, lifted) = graph_paths("how do I use register in my app");
    assert_eq!(intent, "usage");
    assert!(lifted.is_empty(), "{lifted:?}");
}

#[test]
fn the_dependency_oracle_walks_from_what_the_question_matched_not_from_history_votes() {
    // Past commits about the signup form all touched billing.py; the question's words match
    // signup.py. The graph walks from signup.py (to its callee check_email), not from the file
    // history votes for (whose callee compute_tax has nothing to do with the question).
    let mut env = TestEnv::new();
    env.append_config("\n[retrieval.weights]\ngraph = 0.5\nhistory = 1.0\n");
    env.start_daemon();
    let mut files = FILES.to_vec();
    files.push((
        "app/billing.py",
        b"from app.tax import compute_tax\n\n\ndef charge(order):\n    return compute_tax(order)\n",
    ));
    files.push((
        "app/tax.py",
        b"def compute_tax(order):\n    return order * 0.2\n",
    ));
    let repo = git_repo(&files);
    for i in 0..3 {
        let path = repo.path().join("app/billing.py");
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str(&format!("\n# revision {i}\n"));
        std::fs::write(&path, text).unwrap();
        crate::util::git(
            repo.path(),
            &["commit", "-qam", "signup form: process the form again"],
        );
    }
    env.add_repo(repo.path());
    let out = env.patina_in(
        repo.path(),
        &[
            "q",
            "how does register process the signup form",
            "--json",
            "--oracle",
            "lexical,history,graph",
        ],
    );
    let v = out.q_json();
    let with = |oracle: &str| paths_with_oracle(&v, oracle);
    assert!(
        with("history").contains(&"app/billing.py".to_string()),
        "history votes for billing.py: {v}"
    );
    assert_eq!(with("graph"), ["app/validate.py"], "{v}");
}

/// The paths of `patina q --json` hits that `oracle` contributed to, in rank order.
fn paths_with_oracle(v: &serde_json::Value, oracle: &str) -> Vec<String> {
    v["hits"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| {
            h["oracles"]
                .as_array()
                .unwrap()
                .iter()
                .any(|o| o["oracle"] == oracle)
        })
        .map(|h| h["repo_path"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_guide_that_holds_the_questions_words_lifts_the_code_it_names() {
    // The README section says what the program does in the question's words and names the
    // command that does it; the script (`bin/tool-latest`) shares no word with the question.
    let mut env = TestEnv::new();
    env.append_config("\n[retrieval.weights]\ngraph = 0.5\n");
    env.start_daemon();
    let repo = git_repo(&[
        (
            "README.md",
            b"# tool\n\nManage several interpreter installs side by side.\n\n## Choosing the newest release for a prefix\n\nAsking for a prefix such as 3.12 picks the newest installed release in that line,\nskipping previews. Run `tool latest 3.12` to see what a prefix resolves to; every\ncommand reads its settings with `load_settings`.\n\n## Building\n\nRun `tool install 3.12.1` to build from source.\n",
        ),
        (
            "bin/tool-latest",
            b"#!/usr/bin/env bash\n# Print the highest version that begins with the given string.\nset -e\nwant=\"$1\"\nbest=\"\"\nfor v in $(ls \"$TOOL_ROOT/versions\"); do\n  case \"$v\" in \"$want\"*) best=\"$v\" ;; esac\ndone\necho \"$best\"\n",
        ),
        (
            "bin/tool-install",
            b"#!/usr/bin/env bash\n# Compile an interpreter from its source archive.\nset -e\ncurl -fsSL \"$1\" | tar -xz\nmake -j2 && make install\n",
        ),
        // A name three scripts define names none of them.
        ("lib/a.sh", b"load_settings() {\n  source ~/.toolrc\n}\n"),
        ("lib/b.sh", b"load_settings() {\n  source /etc/toolrc\n}\n"),
        ("lib/c.sh", b"load_settings() {\n  source ./toolrc\n}\n"),
    ]);
    env.add_repo(repo.path());
    let question = "how is the newest release chosen for a prefix";
    let v = env
        .patina_in(repo.path(), &["q", question, "--json"])
        .q_json();
    assert_eq!(v["intent"], "implementation", "{v}");
    let lifted = paths_with_oracle(&v, "graph");
    assert_eq!(
        lifted.first().map(String::as_str),
        Some("bin/tool-latest"),
        "{v}"
    );
    assert!(!lifted.iter().any(|p| p.starts_with("lib/")), "{v}");
}
