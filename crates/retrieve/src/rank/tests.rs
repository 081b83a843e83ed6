use super::*;

fn cand(
    key: u32,
    fused: f64,
    path: &str,
    role: FileRole,
    symbol: Option<&str>,
    lines: (u32, u32),
) -> Candidate<u32> {
    Candidate {
        key,
        fused,
        provenance: vec![Contribution {
            oracle: OracleId::Lexical,
            rank: key,
            score: 1.0,
            score_evidence: 1.0,
        }],
        file: Some((0, path.to_string())),
        role,
        symbol: symbol.map(str::to_string),
        parent: None,
        lines,
        reexport: false,
        module_root: false,
        declaration: false,
    }
}

/// A source chunk `key` of `path` that `oracle` alone found, at `rank`, fused to `fused`.
fn oracle_hit(key: u32, path: &str, oracle: OracleId, rank: u32, fused: f64) -> Candidate<u32> {
    let mut c = cand(
        key,
        fused,
        path,
        FileRole::Source,
        None,
        (key * 10, key * 10 + 5),
    );
    c.provenance = vec![Contribution {
        oracle,
        rank,
        score: 1.0,
        score_evidence: 1.0,
    }];
    c
}

fn keys<K: Copy>(v: &[Scored<K>]) -> Vec<K> {
    v.iter().map(|s| s.candidate.key).collect()
}

/// A guide page, a test and the implementation that all match "shell completions", in the
/// fused order lexical evidence would give them (the prose first).
fn completions() -> Vec<Candidate<u32>> {
    vec![
        cand(
            1,
            0.033,
            "site/content/completions/_index.md",
            FileRole::Docs,
            None,
            (1, 40),
        ),
        cand(
            2,
            0.032,
            "completions_test.go",
            FileRole::Test,
            Some("TestCompletions"),
            (1, 30),
        ),
        cand(
            3,
            0.030,
            "completions.go",
            FileRole::Source,
            Some("genCompletion"),
            (10, 80),
        ),
    ]
}

#[test]
fn an_implementation_question_puts_source_above_docs_and_tests_that_repeat_it() {
    let plan = QueryPlan::analyze("how are shell completions generated");
    let ranked = score(completions(), &plan, &RankOptions::default());
    assert_eq!(keys(&ranked)[0], 3);
    // Lowered, not removed.
    assert_eq!(ranked.len(), 3);
}

/// A test or an example program the model ranks far above the code it shows (`shown`, fused
/// `shown_score`) against that code (fused 0.75), for a question about how the code works.
fn shown_and_source(shown: (&str, FileRole, f64), source: &str) -> Vec<Candidate<u32>> {
    let (path, role, fused) = shown;
    vec![
        cand(1, fused, path, role, None, (1, 40)),
        cand(2, 0.75, source, FileRole::Source, Some("run"), (52, 66)),
    ]
}

#[test]
fn tests_and_examples_that_read_like_the_question_follow_the_code_they_show() {
    for (shown, source, question) in [
        // cowboy: a suite's comment block quoting the RFC reads like the question (semantic
        // first) while the module that formats the date header is found by its words.
        (
            ("test/rfc7231_SUITE.erl", FileRole::Test, 1.23),
            "src/cowboy_clock.erl",
            "the Date header is formatted once a second and read from a shared table",
        ),
        // cowboy: the file server example lists a directory; the static handler refuses `..`.
        (
            (
                "examples/file_server/src/directory_lister.erl",
                FileRole::Example,
                1.4,
            ),
            "src/cowboy_static.erl",
            "serve files from a folder without letting a request climb out of it with dot-dot \
             segments",
        ),
    ] {
        let plan = QueryPlan::analyze(question);
        assert_eq!(plan.intent, crate::query::Intent::Implementation);
        let ranked = score(
            shown_and_source(shown, source),
            &plan,
            &RankOptions::default(),
        );
        assert_eq!(keys(&ranked), [2, 1], "{question}");
    }
    // Asked for the tests, the suite leads.
    let plan = QueryPlan::analyze("tests for the Date header being formatted once a second");
    let candidates = shown_and_source(
        ("test/rfc7231_SUITE.erl", FileRole::Test, 1.23),
        "src/cowboy_clock.erl",
    );
    let ranked = score(candidates, &plan, &RankOptions::default());
    assert_eq!(keys(&ranked), [1, 2]);
}

#[test]
fn a_question_about_using_the_code_puts_the_guide_before_a_declaration_that_names_it() {
    // mainargs-017: the readme's section on short names against `def shortName: Char`, whose
    // one line the model ranks a little higher.
    let candidates = vec![
        cand(
            1,
            1.31,
            "mainargs/src/TokensReader.scala",
            FileRole::Source,
            Some("shortName"),
            (162, 162),
        ),
        cand(
            2,
            1.24,
            "readme.md",
            FileRole::Docs,
            Some("Short Arguments"),
            (316, 405),
        ),
    ];
    let plan = QueryPlan::analyze("how do I give an argument a one-letter short name");
    assert_eq!(plan.intent, crate::query::Intent::Usage);
    let ranked = score(candidates, &plan, &RankOptions::default());
    assert_eq!(keys(&ranked), [2, 1]);
}

#[test]
fn test_data_ranks_below_the_tests_unless_asked_for() {
    // A fixture that uses `skip` reads like the code that implements it and matches as well.
    let candidates = || {
        vec![
            cand(
                1,
                0.033,
                "test/fixtures/bats/skipped.bats",
                FileRole::Test,
                None,
                (1, 9),
            ),
            cand(2, 0.031, "test/skip.bats", FileRole::Test, None, (1, 9)),
        ]
    };
    let plan = QueryPlan::analyze("how does a test skip itself with a reason");
    let ranked = score(candidates(), &plan, &RankOptions::default());
    assert_eq!(keys(&ranked), [2, 1]);
    let plan = QueryPlan::analyze("the fixtures where a test skips itself");
    let ranked = score(candidates(), &plan, &RankOptions::default());
    assert_eq!(keys(&ranked), [1, 2]);
}

#[test]
fn release_notes_rank_below_the_guide_unless_the_question_asks_what_changed() {
    // The changelog's line about the feature matches as well as the guide's section on it.
    let candidates = || {
        vec![
            cand(1, 0.033, "CHANGELOG.md", FileRole::Docs, None, (120, 160)),
            cand(2, 0.030, "docs/routing.md", FileRole::Docs, None, (1, 40)),
        ]
    };
    let plan = QueryPlan::analyze("how do I group routes under a common prefix");
    let ranked = score(candidates(), &plan, &RankOptions::default());
    assert_eq!(keys(&ranked), [2, 1]);
    let plan = QueryPlan::analyze("which release added route groups with a common prefix");
    let ranked = score(candidates(), &plan, &RankOptions::default());
    assert_eq!(keys(&ranked), [1, 2]);
}

#[test]
fn how_something_is_done_is_answered_by_code_before_the_enum_that_names_it() {
    let candidates = || {
        let mut options = cand(
            1,
            0.033,
            "Src/DefaultValueHandling.cs",
            FileRole::Source,
            Some("DefaultValueHandling"),
            (1, 30),
        );
        options.declaration = true;
        vec![
            options,
            cand(
                2,
                0.031,
                "Src/JsonSerializerInternalWriter.cs",
                FileRole::Source,
                Some("ShouldWriteProperty"),
                (290, 320),
            ),
        ]
    };
    let plan = QueryPlan::analyze("leave out properties whose value is the default when writing");
    let ranked = score(candidates(), &plan, &RankOptions::default());
    assert_eq!(keys(&ranked), [2, 1]);
    // Its name asked for, the enum is the answer.
    let plan = QueryPlan::analyze("DefaultValueHandling");
    let ranked = score(candidates(), &plan, &RankOptions::default());
    assert_eq!(keys(&ranked)[0], 1);
}

#[test]
fn a_docs_question_keeps_docs_first() {
    let plan = QueryPlan::analyze("how do I generate shell completions, documentation");
    let ranked = score(completions(), &plan, &RankOptions::default());
    assert_eq!(keys(&ranked)[0], 1);
}

#[test]
fn definitions_of_named_symbols_beat_their_callers() {
    let plan = QueryPlan::analyze("why does parse_args reject an empty flag");
    let ranked = score(
        vec![
            cand(
                1,
                0.033,
                "src/main.rs",
                FileRole::Source,
                Some("main"),
                (1, 20),
            ),
            cand(
                2,
                0.031,
                "src/args.rs",
                FileRole::Source,
                Some("parse_args"),
                (5, 60),
            ),
        ],
        &plan,
        &RankOptions::default(),
    );
    assert_eq!(keys(&ranked), [2, 1]);
    assert_eq!(
        ranked[0].factors.definition,
        RankOptions::default().definition_boost
    );
}

#[test]
fn a_qualified_name_puts_its_own_definition_above_its_namesakes() {
    // `forward` is defined in three modules; the question names `Plug.Router`'s.
    let plan = QueryPlan::analyze("Plug.Router.forward");
    let with_parent = |key, fused, path, parent: &str| {
        let mut c = cand(key, fused, path, FileRole::Source, Some("forward"), (1, 20));
        c.parent = Some(parent.to_string());
        c
    };
    let ranked = score(
        vec![
            with_parent(1, 0.033, "lib/plug/router/utils.ex", "Utils"),
            with_parent(2, 0.031, "lib/plug/router.ex", "Router"),
            with_parent(3, 0.030, "lib/plug.ex", "Plug"),
        ],
        &plan,
        &RankOptions::default(),
    );
    assert_eq!(keys(&ranked), [2, 1, 3]);
    let d = RankOptions::default();
    assert_eq!(
        ranked[0].factors.definition,
        d.definition_boost * d.parent_boost
    );
    assert_eq!(ranked[1].factors.definition, d.definition_boost);
    // Unqualified, the namesakes keep their fused order.
    let plain = QueryPlan::analyze("forward");
    let ranked = score(
        vec![
            with_parent(1, 0.033, "lib/plug/router/utils.ex", "Utils"),
            with_parent(2, 0.031, "lib/plug/router.ex", "Router"),
        ],
        &plain,
        &d,
    );
    assert_eq!(keys(&ranked), [1, 2]);
}

#[test]
fn mentioned_files_and_trace_frames_are_evidence() {
    let plan = QueryPlan::analyze("crash in _pytest/fixtures.py when the scope is wrong");
    let ranked = score(
        vec![
            cand(
                1,
                0.033,
                "src/_pytest/python.py",
                FileRole::Source,
                None,
                (1, 20),
            ),
            cand(
                2,
                0.030,
                "src/_pytest/fixtures.py",
                FileRole::Source,
                None,
                (1, 20),
            ),
        ],
        &plan,
        &RankOptions::default(),
    );
    assert_eq!(keys(&ranked), [2, 1]);
    assert!(same_file(
        "/usr/lib/python3/site-packages/_pytest/fixtures.py",
        "src/_pytest/fixtures.py"
    ));
    assert!(same_file("fixtures.py", "src/_pytest/fixtures.py"));
    assert!(!same_file("other/fixtures.py", "src/_pytest/fixtures.py"));
    assert!(!same_file("src/_pytest/fixtures.py", "fixtures.py"));
}

#[test]
fn a_file_name_several_files_share_names_none_of_them() {
    let plan = QueryPlan::analyze("install it with a single file setup in my init.lua");
    let cands = || {
        vec![
            cand(1, 0.033, "docs/setup.md", FileRole::Source, None, (1, 20)),
            cand(
                2,
                0.030,
                "lua/app/init.lua",
                FileRole::Source,
                None,
                (1, 20),
            ),
        ]
    };
    // One file of that name: the question names it.
    let ranked = score(cands(), &plan, &RankOptions::default());
    assert_eq!(keys(&ranked), [2, 1]);
    // The repository has several (the daemon finds which names are shared): it names none.
    let opts = RankOptions {
        ambiguous_mentions: vec!["init.lua".into()],
        ..RankOptions::default()
    };
    let ranked = score(cands(), &plan, &opts);
    assert_eq!(keys(&ranked), [1, 2]);
    assert!(ranked.iter().all(|s| s.factors.mention == 1.0));
}

#[test]
fn the_relevance_floor_drops_weak_semantic_only_hits() {
    let plan = QueryPlan::analyze("how are retries delayed");
    let lexical = cand(3, 0.016, "b.rs", FileRole::Source, None, (1, 2));
    let mut weak = cand(1, 0.016, "a.rs", FileRole::Source, None, (1, 2));
    weak.provenance = vec![Contribution {
        oracle: SEMANTIC,
        rank: 1,
        score: 0.08,
        score_evidence: 1.0,
    }];
    let mut close = weak.clone();
    close.key = 2;
    close.provenance[0].score = 0.45;
    let ranked = score(
        vec![weak.clone(), close.clone(), lexical],
        &plan,
        &RankOptions::default(),
    );
    assert_eq!(
        keys(&ranked),
        [1, 2, 3]
            .into_iter()
            .filter(|k| *k != 1)
            .collect::<Vec<_>>()
    );

    // A name found by nothing but semantic neighbours occurs nowhere in the code: only a close
    // neighbour is an answer. A question sharing no word with the code keeps the usual floor.
    let question = QueryPlan::analyze("what is the temperature outside in fahrenheit");
    assert_eq!(
        keys(&score(
            vec![weak.clone(), close.clone()],
            &question,
            &RankOptions::default()
        )),
        [2]
    );
    let plan = QueryPlan::analyze("zzqqxnotathing");
    assert!(
        score(
            vec![weak.clone(), close.clone()],
            &plan,
            &RankOptions::default()
        )
        .is_empty()
    );
    let mut closer = close;
    closer.provenance[0].score = 0.7;
    assert_eq!(
        keys(&score(vec![weak, closer], &plan, &RankOptions::default())),
        [2]
    );
}

#[test]
fn chunk_level_removes_overlaps_and_decays_repeats() {
    let plan = QueryPlan::analyze("scheduler");
    let opts = RankOptions {
        role_priors: false,
        ..RankOptions::default()
    };
    let scored = score(
        vec![
            cand(1, 0.040, "a.rs", FileRole::Source, None, (1, 50)),
            cand(2, 0.039, "a.rs", FileRole::Source, None, (40, 60)),
            cand(3, 0.038, "a.rs", FileRole::Source, None, (100, 120)),
            cand(4, 0.037, "a.rs", FileRole::Source, None, (200, 220)),
            cand(5, 0.036, "b.rs", FileRole::Source, None, (1, 10)),
        ],
        &plan,
        &opts,
    );
    let out = chunks(scored, &opts);
    // 2 overlaps 1 and goes; 3 and 4 decay below b.rs.
    assert_eq!(keys(&out), [1, 5, 3, 4]);
}

#[test]
fn mmr_interleaves_other_places_between_chunks_of_one_file_and_keeps_everything() {
    let plan = QueryPlan::analyze("scheduler");
    let opts = RankOptions {
        role_priors: false,
        repeat_decay: 1.0,
        ..RankOptions::default()
    };
    let list = vec![
        cand(1, 0.040, "src/a.rs", FileRole::Source, None, (1, 10)),
        cand(2, 0.039, "src/a.rs", FileRole::Source, None, (20, 30)),
        cand(3, 0.038, "src/a.rs", FileRole::Source, None, (40, 50)),
        cand(4, 0.036, "src/b.rs", FileRole::Source, None, (1, 10)),
        cand(5, 0.035, "lib/c.rs", FileRole::Source, None, (1, 10)),
    ];
    let off = chunks(score(list.clone(), &plan, &opts), &opts);
    assert_eq!(keys(&off), [1, 2, 3, 4, 5]);
    let on = RankOptions {
        mmr_lambda: 0.7,
        ..opts
    };
    let out = chunks(score(list, &plan, &on), &on);
    // After a.rs, another directory (c.rs) is more novel than a.rs's sibling b.rs.
    assert_eq!(keys(&out), [1, 5, 4, 2, 3]);
}

#[test]
fn file_level_aggregates_so_coherent_files_win() {
    let plan = QueryPlan::analyze("scheduler");
    let opts = RankOptions::default();
    let scored = score(
        vec![
            cand(1, 0.040, "lucky.rs", FileRole::Source, None, (1, 5)),
            cand(2, 0.035, "coherent.rs", FileRole::Source, None, (1, 5)),
            cand(3, 0.030, "coherent.rs", FileRole::Source, None, (10, 15)),
        ],
        &plan,
        &opts,
    );
    let f = files(scored, &opts, None);
    assert_eq!(f[0].best.candidate.file.as_ref().unwrap().1, "coherent.rs");
    assert_eq!(f[0].matches, 2);
    assert_eq!(f.len(), 2);
}

#[test]
fn oracles_that_find_different_chunks_of_one_file_agree_on_the_file() {
    let plan = QueryPlan::analyze("scheduler");
    let opts = RankOptions {
        coherence: vec![],
        ..RankOptions::default()
    };
    let with = |key, path, oracle, rank, fused| oracle_hit(key, path, oracle, rank, fused);
    // a.rs: lexical's 1st chunk; b.rs: lexical's 2nd chunk and semantic's 2nd (another chunk).
    let cands = vec![
        with(1, "a.rs", OracleId::Lexical, 1, 1.0 / 61.0),
        with(2, "c.rs", OracleId::Semantic, 1, 1.0 / 61.0),
        with(3, "b.rs", OracleId::Lexical, 2, 1.0 / 62.0),
        with(4, "b.rs", OracleId::Semantic, 2, 1.0 / 62.0),
    ];
    let chunk_level = files(score(cands.clone(), &plan, &opts), &opts, None);
    assert_ne!(
        chunk_level[0].best.candidate.file.as_ref().unwrap().1,
        "b.rs"
    );
    let fusion = FileFusion {
        fusion: crate::fusion::Fusion::rrf(60.0),
        weights: vec![(OracleId::Lexical, 1.0), (OracleId::Semantic, 1.0)],
    };
    let file_level = files(score(cands, &plan, &opts), &opts, Some(&fusion));
    assert_eq!(
        file_level[0].best.candidate.file.as_ref().unwrap().1,
        "b.rs"
    );
}

#[test]
fn each_oracle_ranks_files_as_it_would_alone() {
    // Semantic's best chunk is in a.rs; its next two are both in b.rs. Alone it would rank b.rs
    // first (two good chunks beat one slightly better one): the file-level fusion takes b.rs as
    // semantic's first file, not a.rs. (Lexical finds only c.rs.)
    let plan = QueryPlan::analyze("how are jobs scheduled");
    let opts = RankOptions::default();
    let hit = |oracle, key, path, rank| oracle_hit(key, path, oracle, rank, 0.01);
    let sem = OracleId::Semantic;
    let cands = vec![
        hit(sem, 1, "a.rs", 1),
        hit(sem, 2, "b.rs", 2),
        hit(sem, 3, "b.rs", 3),
        hit(OracleId::Lexical, 4, "c.rs", 1),
    ];
    let fusion = FileFusion {
        fusion: crate::fusion::Fusion::rrf(60.0),
        weights: vec![(sem, 1.0), (OracleId::Lexical, 0.5)],
    };
    let ranked = files(score(cands, &plan, &opts), &opts, Some(&fusion));
    let order: Vec<&str> = ranked
        .iter()
        .map(|f| f.best.candidate.file.as_ref().unwrap().1.as_str())
        .collect();
    assert_eq!(order, ["b.rs", "a.rs", "c.rs"]);
}

#[test]
fn near_lifts_a_folder_without_filtering() {
    let plan = QueryPlan::analyze("how is the buffer flushed");
    let opts = RankOptions {
        near: vec!["src/io".into()],
        ..RankOptions::default()
    };
    let ranked = score(
        vec![
            cand(1, 0.033, "src/net/buf.rs", FileRole::Source, None, (1, 5)),
            cand(2, 0.031, "src/io/buf.rs", FileRole::Source, None, (1, 5)),
        ],
        &plan,
        &opts,
    );
    assert_eq!(keys(&ranked), [2, 1]);
    assert!(in_dir("src/io/buf.rs", "src/io/"));
    assert!(!in_dir("src/iox/buf.rs", "src/io"));
}

#[test]
fn path_words_match_query_words() {
    let plan = QueryPlan::analyze("where are shell completions generated");
    let ranked = score(
        vec![
            cand(1, 0.033, "command.go", FileRole::Source, None, (1, 5)),
            cand(
                2,
                0.031,
                "shell_completions.go",
                FileRole::Source,
                None,
                (1, 5),
            ),
        ],
        &plan,
        &RankOptions::default(),
    );
    assert_eq!(keys(&ranked), [2, 1]);
}

/// The definition of `QueryParser`, the re-export that makes it public, an `impl` block and a
/// caller, in the fused order a symbol query could give them (the re-export has the symbol
/// oracle's second place; the `impl` and the caller only words).
fn parser_hits() -> Vec<Candidate<u32>> {
    let mut reexport = cand(2, 0.034, "src/lib.rs", FileRole::Source, None, (1, 3));
    reexport.reexport = true;
    vec![
        cand(
            1,
            0.040,
            "src/parser/query.rs",
            FileRole::Source,
            Some("QueryParser"),
            (1, 9),
        ),
        reexport,
        cand(
            3,
            0.033,
            "src/main.rs",
            FileRole::Source,
            Some("main"),
            (1, 20),
        ),
        cand(
            4,
            0.029,
            "src/parser/query.rs",
            FileRole::Source,
            Some("QueryParser"),
            (11, 40),
        ),
    ]
}

#[test]
fn a_reexport_follows_the_definition_ahead_of_other_mentions() {
    let opts = RankOptions::default();
    for text in ["QueryParser", "where is QueryParser defined"] {
        let plan = QueryPlan::analyze(text);
        let ranked = score(parser_hits(), &plan, &opts);
        assert_eq!(keys(&ranked), [1, 2, 4, 3], "{text}");
        assert_eq!(ranked[1].factors.definition, opts.reexport_boost);
    }
    // Without the rule the `impl` block, boosted as a definition, passes it.
    let plan = QueryPlan::analyze("QueryParser");
    let mut plain = parser_hits();
    plain[1].reexport = false;
    assert_eq!(keys(&score(plain, &plan, &opts))[..2], [1, 4]);
    // A re-export named like what it re-exports (a Go type alias) is lifted as a re-export, not
    // as a definition: below the definition it points at.
    let mut alias = parser_hits();
    alias[1].symbol = Some("QueryParser".into());
    alias[1].fused = 0.041;
    let ranked = score(alias, &plan, &opts);
    assert_eq!(keys(&ranked)[..2], [1, 2]);
}

#[test]
fn a_question_naming_a_folder_lifts_its_root_file() {
    let root = |key, path: &str| {
        let mut c = cand(key, 0.031, path, FileRole::Source, None, (1, 20));
        c.module_root = true;
        c
    };
    let hits = || {
        vec![
            cand(
                1,
                0.033,
                "src/searcher/scorer.rs",
                FileRole::Source,
                Some("score"),
                (1, 20),
            ),
            cand(
                2,
                0.032,
                "src/searcher/index.rs",
                FileRole::Source,
                Some("Index"),
                (1, 20),
            ),
            root(3, "src/searcher/mod.rs"),
        ]
    };
    let opts = RankOptions::default();
    let plan = QueryPlan::analyze("how does the searcher work");
    let ranked = score(hits(), &plan, &opts);
    assert_eq!(keys(&ranked), [3, 1, 2]);
    // Only the root is lifted: the others keep the path words' factor they had.
    let before = score(
        hits()
            .into_iter()
            .map(|mut c| {
                c.module_root = false;
                c
            })
            .collect(),
        &plan,
        &opts,
    );
    for k in [1, 2] {
        let f = |v: &[Scored<u32>]| v.iter().find(|s| s.candidate.key == k).unwrap().score;
        assert_eq!(f(&ranked), f(&before));
    }
    // A question that names one of the folder's files asks about that part: the root stays.
    let part = QueryPlan::analyze("how does the searcher's scorer order results");
    let ranked = score(hits(), &part, &opts);
    assert_eq!(keys(&ranked)[0], 1);
    assert_eq!(
        ranked
            .iter()
            .find(|s| s.candidate.key == 3)
            .unwrap()
            .factors
            .path,
        1.08
    );
    // A question about something else, or a root of another folder, is left alone.
    let other = QueryPlan::analyze("how does the scorer rank results");
    assert_eq!(keys(&score(hits(), &other, &opts))[0], 1);
    let mut elsewhere = hits();
    elsewhere[2] = root(3, "src/indexer/mod.rs");
    assert_eq!(keys(&score(elsewhere, &plan, &opts))[0], 1);
    // Off at 1.0.
    let off = RankOptions {
        module_root_boost: 1.0,
        ..RankOptions::default()
    };
    assert_eq!(keys(&score(hits(), &plan, &off)), [1, 2, 3]);
}

#[test]
fn the_folder_a_root_stands_for() {
    assert_eq!(module_folder("src/searcher/mod.rs"), Some("searcher"));
    assert_eq!(
        module_folder("crates/searcher/src/lib.rs"),
        Some("searcher")
    );
    assert_eq!(module_folder("pkg/searcher/__init__.py"), Some("searcher"));
    assert_eq!(module_folder("searcher/index.ts"), Some("searcher"));
    assert_eq!(module_folder("src/lib.rs"), None);
    assert_eq!(module_folder("lib.rs"), None);
    let plan = QueryPlan::analyze("how does the query engine plan a search");
    assert!(names_module_folder(&plan, "daemon/src/query_engine/mod.rs"));
    assert!(!names_module_folder(&plan, "daemon/src/query_cache/mod.rs"));
    assert!(!names_module_folder(&plan, "mod.rs"));
}

#[test]
fn a_header_hands_its_place_to_the_definition_it_declares_for_a_how_question_or_its_name() {
    let header = || {
        let mut c = cand(
            1,
            0.9,
            "Tiles/TileCache.h",
            FileRole::Source,
            Some("TileCache"),
            (3, 14),
        );
        c.declaration = true;
        c
    };
    let other = || cand(2, 0.5, "Tiles/Map.m", FileRole::Source, Some("Map"), (1, 9));
    let implementation = |fused| {
        let mut c = cand(
            3,
            fused,
            "Tiles/TileCache.m",
            FileRole::Source,
            Some("TileCache"),
            (3, 6),
        );
        c.provenance.clear();
        c
    };
    let definitions: Definitions<u32> = [(1, implementation(0.0))].into_iter().collect();
    let how = QueryPlan::analyze("how are the least recently used tiles evicted");
    let opts = RankOptions::default();

    // Not among the candidates: it joins them with the header's score and oracle places, and
    // ranks first: the header is a declaration.
    let mut candidates = vec![header(), other()];
    hand_over(&mut candidates, &definitions, &how, &opts);
    let joined = candidates.iter().find(|c| c.key == 3).expect("joined");
    assert_eq!(joined.fused, 0.9);
    assert_eq!(joined.provenance.len(), 1);
    assert_eq!(keys(&score(candidates, &how, &opts))[..2], [3, 1]);

    // Found on its own with a better score: it keeps it.
    let mut candidates = vec![header(), other(), implementation(0.95)];
    hand_over(&mut candidates, &definitions, &how, &opts);
    assert_eq!(candidates.iter().find(|c| c.key == 3).unwrap().fused, 0.95);

    // Not for a usage question, nor with the declaration rule off.
    let usage = QueryPlan::analyze("how do I use the tile cache in my app");
    let mut candidates = vec![header(), other()];
    hand_over(&mut candidates, &definitions, &usage, &opts);
    assert_eq!(candidates.len(), 2);
    let off = RankOptions {
        declaration: 1.0,
        ..RankOptions::default()
    };
    hand_over(&mut candidates, &definitions, &how, &off);
    assert_eq!(candidates.len(), 2);

    // A name is looked up where it is defined: the definition takes the header's place and the
    // header ranks just below it.
    let name = QueryPlan::analyze("TileCache");
    let mut candidates = vec![header(), other(), implementation(0.5)];
    hand_over(&mut candidates, &definitions, &name, &opts);
    assert_eq!(candidates.iter().find(|c| c.key == 3).unwrap().fused, 0.9);
    let declared = candidates.iter().find(|c| c.key == 1).unwrap().fused;
    assert!(
        (declared - 0.9 * opts.repeat_decay).abs() < 1e-12,
        "{declared}"
    );
    assert_eq!(keys(&score(candidates, &name, &opts))[..2], [3, 1]);
}
