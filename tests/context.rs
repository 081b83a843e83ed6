//! What an agent reads (`Search.Context`, MCP `patina_context`, `patina q --expand`): once the
//! search has chosen a file, the function the question points at is in the answer even when it
//! is not the file's best match for the question's words, and each piece says why it is there.

use patina_proto::v1 as pb;

use crate::util::{TestEnv, git_repo};

/// A module of fixture helpers and report columns. `describe_scope` holds most of the
/// question's words; `fit_column`, one of fifteen functions about columns, table and width, is
/// the one that raises the message the question quotes.
fn scopes_py() -> String {
    let mut s = String::from(
        "\"\"\"Fixture scopes: session, module and function.\"\"\"\n\n\n\
         def describe_scope(fixture, request):\n    \
         \"\"\"The fixture scope of a fixture request, for the report: a session scope fixture\n    \
         requested by a function scope fixture reads as session scope, then function scope.\"\"\"\n    \
         scope = fixture.scope\n    \
         requested = request.scope\n    \
         return f\"fixture {fixture.name}: {scope} scope, requested at {requested} scope\"\n\n\n",
    );
    for i in 0..14 {
        s.push_str(&format!(
            "def format_column_{i}(table, width):\n    \
             \"\"\"Fit column {i} of the table to the width.\"\"\"\n    \
             cells = [str(c).ljust(width) for c in table.column({i})]\n    \
             header = table.header({i}).center(width)\n    \
             rule = '-' * width\n    \
             return [header, rule] + cells\n\n\n"
        ));
    }
    s.push_str(
        "def fit_column(table, width):\n    \
         if table.widest() > width:\n        \
         raise ValueError(\"column does not fit the table width\")\n    \
         return width\n",
    );
    s
}

#[test]
fn a_question_quoting_an_error_gets_the_function_that_raises_it_within_the_budget() {
    let env = TestEnv::started();
    let scopes = scopes_py();
    let repo = git_repo(&[
        ("pkg/scopes.py", scopes.as_bytes()),
        (
            "pkg/report.py",
            b"def report_fixture(fixture):\n    \"\"\"One line per fixture of the session.\"\"\"\n    return fixture.name\n",
        ),
    ]);
    env.add_repo(repo.path());
    let raising = scopes
        .lines()
        .position(|l| l.contains("raise ValueError"))
        .expect("in the fixture") as u32
        + 1;

    let question = "Reporting a session scope fixture requested from a function scope fixture \
                    fails with \"column does not fit the table width\"";
    let budget = 700;
    // The search ranks `describe_scope` above `fit_column`: by the question's words, the raising
    // function is not the file's best match.
    let hits = env
        .query(pb::QueryRequest {
            oracles: vec!["lexical".into(), "symbol".into()],
            limit: 30,
            ..crate::util::query(question)
        })
        .expect("query");
    let rank = |sym: &str| {
        hits.hits
            .iter()
            .position(|h| h.symbol == sym)
            .unwrap_or(usize::MAX)
    };
    assert!(rank("describe_scope") < rank("fit_column"), "{hits:#?}");
    let resp = env.call("context", async {
        env.search_client()
            .await
            .context(pb::ContextRequest {
                query: question.into(),
                token_budget: budget,
                oracles: vec!["lexical".into(), "symbol".into()],
                format: pb::ContextFormat::Json as i32,
                expand: true,
                ..Default::default()
            })
            .await
            .expect("context")
            .into_inner()
    });
    assert!(resp.used_tokens <= budget, "{resp:#?}");
    // The words point at `describe_scope` first: it is the file's best match.
    let first = resp
        .items
        .iter()
        .find(|i| i.path == "pkg/scopes.py")
        .unwrap_or_else(|| panic!("the file is chosen: {resp:#?}"));
    assert!(
        first.symbols.contains(&"describe_scope".to_string()),
        "{resp:#?}"
    );
    assert_eq!(first.why(), pb::ContextReason::Matched, "{first:#?}");
    // The function that raises the quoted message is in the answer, whole.
    let holder = resp
        .items
        .iter()
        .find(|i| i.path == "pkg/scopes.py" && i.start_line <= raising && raising <= i.end_line)
        .unwrap_or_else(|| panic!("line {raising} (the raise) is not in the context: {resp:#?}"));
    assert!(
        holder.symbols.contains(&"fit_column".to_string()),
        "{holder:#?}"
    );
    assert!(!holder.truncated, "{holder:#?}");
    assert_eq!(holder.why(), pb::ContextReason::Located, "{holder:#?}");
    // The JSON an agent reads says why each piece is there.
    assert!(resp.text.contains("\"why\":\"located\""), "{}", resp.text);
    assert!(resp.text.contains("\"why\":\"matched\""), "{}", resp.text);
    // The other column functions, which share the message's words, come after it if at all.
    let at = |sym: &str| {
        resp.items
            .iter()
            .position(|i| i.symbols.iter().any(|s| s.starts_with(sym)))
    };
    let check = at("fit_column").expect("checked above");
    if let Some(filler) = at("format_column_") {
        assert!(check < filler, "{resp:#?}");
    }
}

/// Issue 64, item 3: MCP `patina_context` (XML by default), `patina q --expand --json` (the
/// shell) and the editors' `patina.context` (Markdown) hand over the same pieces, in the same
/// order, for the same question and budget: what fits is decided once, whatever the format.
#[test]
fn every_client_gets_the_same_pieces_for_the_same_question_and_budget() {
    use serde_json::{Value, json};

    let env = TestEnv::started();
    let mut files: Vec<(String, String)> = vec![("pkg/scopes.py".into(), scopes_py())];
    for i in 0..6 {
        files.push((
            format!("pkg/table_{i}.py"),
            format!(
                "def render_table_{i}(table, width):\n    \"\"\"Render the table at a width: \
                 \"quoted\" <cells> & rules.\"\"\"\n    return [c.ljust(width) for c in table]\n"
            ),
        ));
    }
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_bytes()))
        .collect();
    let repo = git_repo(&refs);
    env.add_repo(repo.path());
    let question = "the table width of a column: \"column does not fit the table width\"";
    let budget = 500u64;
    let refs_of = |items: &Value| -> Vec<String> {
        items
            .as_array()
            .unwrap_or_else(|| panic!("items: {items}"))
            .iter()
            .map(|i| i["ref"].as_str().expect("a ref").to_string())
            .collect()
    };

    let out = env.patina_in(
        repo.path(),
        &[
            "q",
            question,
            "--expand",
            "--budget",
            &budget.to_string(),
            "--json",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let shell: Value = serde_json::from_str(out.stdout.trim()).expect("JSON");
    let shell_refs = refs_of(&shell["items"]);
    assert!(shell_refs.len() >= 2, "{shell}");

    let mut mcp = crate::mcp::Mcp::ready(&env, repo.path(), "2025-06-18");
    let r = mcp.ok(
        "patina_context",
        json!({"query": question, "budget": budget}),
    );
    let answer = &r["structuredContent"];
    assert_eq!(
        refs_of(&answer["items"]),
        shell_refs,
        "MCP against the shell: {r}"
    );
    assert!(
        answer["used_tokens"].as_u64().expect("used") <= budget,
        "{r}"
    );
    assert!(
        answer["items"]
            .as_array()
            .expect("items")
            .iter()
            .all(|i| matches!(i["why"].as_str(), Some("matched" | "located"))),
        "every piece says why it is there: {r}"
    );

    let mut lsp = crate::lsp::Lsp::spawn(&env);
    crate::lsp::initialize_in(&mut lsp, repo.path());
    lsp.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    lsp.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand",
        "params": {"command": "patina.context", "arguments": [question, budget]}}),
    );
    let a = lsp.answer();
    assert_eq!(
        refs_of(&a["result"]["items"]),
        shell_refs,
        "the editors against the shell: {a}"
    );
    assert!(
        a["result"]["usedTokens"].as_u64().expect("used") <= budget,
        "{a}"
    );
}
