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
    // The user acts: what to set, what to change.
    assert_eq!(
        i("which environment variables can I set to pass extra configure options"),
        Intent::Usage
    );
    assert_eq!(
        i("what do I need to change when upgrading an app from version 3 to version 4"),
        Intent::Usage
    );
    assert_eq!(
        i("why do I get a timeout when the pool is full"),
        Intent::Implementation
    );
    // What changed between versions: release notes and migration guides answer it. Upgrading
    // without a version, or a file that changed, is something the code does.
    for (question, intent) in [
        ("what changed in the most recent release", Intent::Usage),
        ("what's new in 2.0", Intent::Usage),
        (
            "what changed for serveStatic when upgrading to version 4",
            Intent::Usage,
        ),
        ("where are the release notes for the router", Intent::Usage),
        (
            "how is the connection upgraded to a websocket when upgrading is requested",
            Intent::Implementation,
        ),
        (
            "decide which items must be compiled again after a file changed",
            Intent::Implementation,
        ),
    ] {
        assert_eq!(i(question), intent, "{question}");
    }
    assert_eq!(i("documentation for the glob flag"), Intent::Usage);
    assert_eq!(i("where are the tests for the router"), Intent::Tests);
    // What the tests do, right after "tests", asks for them as "tests for" does.
    assert_eq!(
        i("tests checking that a cancelled download reports a cancellation error"),
        Intent::Tests
    );
    assert_eq!(i("the specs covering session expiry"), Intent::Tests);
    assert_eq!(
        i("Which tests cover histplot's binning options such as bins and binwidth?"),
        Intent::Tests
    );
    assert_eq!(
        i("what tests exercise the retry logic when a request times out"),
        Intent::Tests
    );
    // A test that passes or fails is still spoken of, not asked for.
    assert_eq!(
        i("why do the tests fail when the locale is not English"),
        Intent::Implementation
    );
    // Tests as the time something happens: around, before, between them.
    assert_eq!(
        i("in what order are set-up methods and shared resources started around the tests"),
        Intent::Implementation
    );
    assert_eq!(
        i("clear the recorded calls between tests"),
        Intent::Implementation
    );
    assert_eq!(i("where are the tests for the fixtures"), Intent::Tests);
    assert_eq!(
        i("tests failing when the cache directory is missing"),
        Intent::Implementation
    );
    // "Specs" are test files as a noun of their own, specifications in a compound.
    assert_eq!(
        i("where are the specs for the session hijacking protection"),
        Intent::Tests
    );
    assert_eq!(
        i("reload the plugin specs when I edit my config"),
        Intent::Implementation
    );
    assert_eq!(
        i("combine several spec fragments for one plugin"),
        Intent::Implementation
    );
    // Tests spoken of, not asked for: in a test runner's repository every question says "test".
    assert_eq!(
        i("limit how many test files run at the same time"),
        Intent::Implementation
    );
    assert_eq!(
        i("stop a test that runs longer than the allowed time"),
        Intent::Implementation
    );
    assert_eq!(
        i("how do I send fake requests to my app in unit tests"),
        Intent::Usage
    );
    assert_eq!(i("tests for the junit xml formatter"), Intent::Tests);
    assert_eq!(
        i("keep its exit status in variables the test can check"),
        Intent::Implementation
    );
    // "Under test" is the code a test exercises (a mocking library's injector builds it).
    assert_eq!(
        i("build the class under test from the fields of a test class"),
        Intent::Implementation
    );
    assert_eq!(
        i("where are the tests of the class under test"),
        Intent::Tests
    );
    // A kind of test names tests as the noun does ("unit test" after a verb too), not after "a".
    assert_eq!(
        i("process: fix unit test for trailing LF in `uname -r`"),
        Intent::Tests
    );
    assert_eq!(
        i("where are the integration tests of the router"),
        Intent::Tests
    );
    assert_eq!(
        i("check in a unit test that every constructor parameter has a declaration"),
        Intent::Implementation
    );
    // A usage question speaks of tests as what the user does.
    let p = QueryPlan::analyze("how do I run setup code once before all the tests of a file");
    assert_eq!((p.intent, p.wanted_roles.len()), (Intent::Usage, 0));
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
    let go = frames("goroutine 1 [running]:\nmain.run()\n\t/home/u/cobra/command.go:912 +0x1b4");
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
fn every_common_trace_format_gives_its_frames_innermost_first() {
    let at = |text: &str| -> Vec<(String, Option<u32>)> {
        frames(text).into_iter().map(|f| (f.path, f.line)).collect()
    };
    let one = |p: &str, l: u32| vec![(p.to_string(), Some(l))];
    // Rust: a panic, a backtrace frame, a compiler error.
    assert_eq!(
        at("thread 'main' panicked at crates/core/flags/hiargs.rs:1090:5:\nboom"),
        one("crates/core/flags/hiargs.rs", 1090)
    );
    assert_eq!(
        at("   3: mycrate::run\n             at ./src/run.rs:12:9"),
        one("src/run.rs", 12)
    );
    assert_eq!(
        at("error[E0308]: mismatched types\n  --> src/lib.rs:7:13"),
        one("src/lib.rs", 7)
    );
    // Python: innermost last in the text, first here.
    let py = at(
        "Traceback (most recent call last):\n  File \"app/main.py\", line 3, in <module>\n    run()\n  File \"app/service.py\", line 20, in total\n    x\nValueError",
    );
    assert_eq!(
        py,
        vec![
            ("app/service.py".to_string(), Some(20)),
            ("app/main.py".to_string(), Some(3))
        ]
    );
    // Go.
    assert_eq!(
        at("main.run()\n\t/home/u/proj/cmd/run.go:12 +0x1d"),
        one("/home/u/proj/cmd/run.go", 12)
    );
    // Node.
    assert_eq!(
        at("    at total (/srv/app/web/cart.js:8:11)"),
        one("/srv/app/web/cart.js", 8)
    );
    // Java/Kotlin/Scala.
    let java = frames("\tat org.shop.Cart.total(Cart.java:42)");
    assert_eq!(
        (java[0].path.as_str(), java[0].line),
        ("Cart.java", Some(42))
    );
    assert_eq!(java[0].function.as_deref(), Some("total"));
    // .NET.
    let cs = frames("   at Shop.Billing.Total() in /src/shop/Billing.cs:line 17");
    assert_eq!(
        (cs[0].path.as_str(), cs[0].line),
        ("/src/shop/Billing.cs", Some(17))
    );
    assert_eq!(cs[0].function.as_deref(), Some("Total"));
    // Ruby, Elixir, linters.
    assert_eq!(
        at("\tfrom lib/shop/cart.rb:9:in 'total'"),
        one("lib/shop/cart.rb", 9)
    );
    assert_eq!(
        at("    (shop 0.1.0) lib/shop/cart.ex:14: Shop.Cart.total/1"),
        one("lib/shop/cart.ex", 14)
    );
    assert_eq!(
        at("src/app.ts:4:10: error: Cannot find name 'x'"),
        one("src/app.ts", 4)
    );
    // A bare location.
    assert_eq!(
        at("crates/searcher/src/searcher/mod.rs:503"),
        one("crates/searcher/src/searcher/mod.rs", 503)
    );
    // pytest's node id: a test by name.
    let node = frames("tests/test_cart.py::TestCart::test_total[two-items]");
    assert_eq!(node[0].path, "tests/test_cart.py");
    assert_eq!(node[0].line, None);
    assert_eq!(node[0].function.as_deref(), Some("test_total"));
    // No garbage names from a location in a backtrace.
    assert!(
        frames("   at ./src/run.rs:12:9")
            .iter()
            .all(|f| f.function.is_none())
    );
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
        ("memoize a method in ruby", Language::Ruby, "ruby"),
        ("php read a csv file", Language::Php, "php"),
        ("async file read in csharp", Language::CSharp, "csharp"),
        (
            "kotlin sort a list by two fields",
            Language::Kotlin,
            "kotlin",
        ),
        ("split a string in lua", Language::Lua, "lua"),
        ("loop over files in bash", Language::Bash, "bash"),
        (
            "scala pattern match on a case class",
            Language::Scala,
            "scala",
        ),
        ("start a supervisor in elixir", Language::Elixir, "elixir"),
        ("decode json in swift", Language::Swift, "swift"),
        ("fold a list in haskell", Language::Haskell, "haskell"),
        ("allocate a slice in zig", Language::Zig, "zig"),
        ("parse json in dart", Language::Dart, "dart"),
        (
            "a timestamp field in protobuf",
            Language::Protobuf,
            "protobuf",
        ),
        ("an s3 bucket in terraform", Language::Hcl, "terraform"),
        (
            "send a message to a delegate in objective-c",
            Language::ObjC,
            "objective-c",
        ),
        ("objc block retain cycle", Language::ObjC, "objc"),
        ("read a csv file in r", Language::R, "r"),
        (
            "erlang supervisor restart strategy",
            Language::Erlang,
            "erlang",
        ),
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

#[test]
fn a_question_is_asked_and_a_commit_message_is_not() {
    assert!(QueryPlan::analyze("how does the searcher work").question);
    assert!(QueryPlan::analyze("Where is QueryParser defined").question);
    assert!(QueryPlan::analyze("searcher internals?").question);
    assert!(!QueryPlan::analyze("sync: fix racy UnsafeCell access on a closed oneshot").question);
    assert!(!QueryPlan::analyze("QueryParser").question);
}
