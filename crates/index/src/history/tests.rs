use super::*;

fn rec(hash: &str, time: i64, msg: &str, files: &[&str]) -> CommitRecord {
    CommitRecord {
        hash: hash.into(),
        author: "a".into(),
        time,
        message: msg.into(),
        files: files
            .iter()
            .map(|f| match f.split_once("=>") {
                Some((from, to)) => Touched {
                    path: to.into(),
                    from: Some(from.into()),
                    status: 'R',
                },
                None => Touched {
                    path: f.to_string(),
                    from: None,
                    status: 'M',
                },
            })
            .collect(),
    }
}

fn view(recs: Vec<CommitRecord>) -> HistoryView {
    // `recs` oldest first; the view wants newest first.
    let order: Vec<String> = recs.iter().rev().map(|r| r.hash.clone()).collect();
    let map = recs
        .into_iter()
        .map(|r| (r.hash.clone(), Arc::new(r)))
        .collect();
    HistoryView::build(order.first().cloned(), &order, &map)
}

#[test]
fn parses_name_status_with_renames() {
    let out = b"\x1eaaa\x1fAnn\x1f100\x1fsecond\n\x1f\0\nR100\0a\0b\0A\0c\0\x1ebbb\x1fBob\x1f50\x1ffirst\n\nbody\n\x1f\0\nA\0a\0\x1eccc\x1fCy\x1f40\x1fmerge\n\x1f";
    let c = parse_log(out);
    assert_eq!(c.len(), 3);
    assert_eq!(c[0].hash, "aaa");
    assert_eq!(c[0].time, 100);
    assert_eq!(
        c[0].files,
        vec![
            Touched {
                path: "b".into(),
                from: Some("a".into()),
                status: 'R'
            },
            Touched {
                path: "c".into(),
                from: None,
                status: 'A'
            }
        ]
    );
    assert_eq!(c[1].message, "first\n\nbody");
    assert_eq!(c[1].subject(), "first");
    assert_eq!(c[1].files.len(), 1);
    assert!(c[2].files.is_empty());
}

#[test]
fn activity_weighs_recent_changes_more_and_skips_big_commits() {
    const DAY: i64 = 86_400;
    let v = view(vec![
        rec("1", 0, "old", &["old.rs", "hot.rs"]),
        rec("2", 90 * DAY, "big", &["hot.rs", "a", "b", "c"]),
        rec("3", 180 * DAY, "new", &["hot.rs"]),
    ]);
    // hot.rs: 1 (today) + 0.25 (two half-lives ago); the big commit does not count.
    assert!((v.activity("hot.rs", 90.0, 3) - 1.25).abs() < 1e-9);
    assert!((v.activity("old.rs", 90.0, 3) - 0.25).abs() < 1e-9);
    assert_eq!(v.activity("never.rs", 90.0, 3), 0.0);
    assert_eq!(v.activity("hot.rs", 0.0, 10), 3.0, "no decay: plain churn");
}

#[test]
fn renames_are_followed_to_current_names() {
    let v = view(vec![
        rec("1", 10, "add parser", &["src/parse.rs"]),
        rec("2", 20, "move parser", &["src/parse.rs=>src/parser/mod.rs"]),
        rec("3", 30, "fix parser bug", &["src/parser/mod.rs"]),
    ]);
    for c in &v.commits {
        assert_eq!(c.files, vec!["src/parser/mod.rs".to_string()]);
    }
    assert_eq!(v.commits_of("src/parser/mod.rs").len(), 3);
}

#[test]
fn search_and_votes_prefer_matching_recent_focused_commits() {
    let mut files: Vec<String> = (0..50).map(|i| format!("f{i}.rs")).collect();
    files.push("big.rs".into());
    let big: Vec<&str> = files.iter().map(String::as_str).collect();
    let v = view(vec![
        rec("1", 0, "timer wheel overflow fix", &["old.rs"]),
        rec(
            "2",
            86_400 * 700,
            "timer wheel overflow",
            &["time/wheel.rs", "time/mod.rs"],
        ),
        rec("3", 86_400 * 710, "reformat timer wheel everything", &big),
        rec("4", 86_400 * 720, "docs for io", &["io.rs"]),
    ]);
    let m = v.search("overflow in the timer wheel", 10, 64);
    assert!(m.len() >= 3);
    assert!(!m.iter().any(|(i, _)| v.commits[*i].record.hash == "4"));
    let votes = votes(&v, &m, &VoteOptions::default());
    let names: Vec<&str> = votes.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(&names[..2], &["time/mod.rs", "time/wheel.rs"]);
    assert!(names.contains(&"old.rs"), "old commits still vote, less");
    assert!(
        !names.contains(&"big.rs"),
        "commits touching many files do not vote"
    );
}

#[test]
fn scopes_of_subjects_and_where_their_commits_change_things() {
    assert_eq!(scope_of("sync: add Notify"), Some("sync".into()));
    assert_eq!(scope_of("rt(alt): tweak constants"), Some("rt".into()));
    assert_eq!(
        scope_of("tokio-util/codec: fix"),
        Some("tokio-util/codec".into())
    );
    assert_eq!(scope_of("Fix the bug: really"), None);
    assert_eq!(scope_of("no scope here"), None);
    let v = view(vec![
        rec("1", 1, "sync: add Notify", &["src/sync/notify.rs"]),
        rec(
            "2",
            2,
            "sync: fix mpsc",
            &["src/sync/mpsc/chan.rs", "src/sync/mod.rs"],
        ),
        rec("3", 3, "net: tcp", &["src/net/tcp.rs"]),
        rec("4", 4, "sync: later", &["src/later/x.rs"]),
    ]);
    let d = v.scope_dirs("sync", Some(4), 10);
    assert_eq!(d["src/sync"], 1.0);
    assert_eq!(d["src/sync/mpsc"], 0.5);
    assert!(!d.contains_key("src/net"));
    assert!(
        !d.contains_key("src/later"),
        "commits at or after the cut are hidden"
    );
    assert!(v.scope_dirs("io", None, 10).is_empty());
}

#[test]
fn co_change_counts_support_and_confidence() {
    let v = view(vec![
        rec("1", 1, "a", &["lexer.rs", "parser.rs"]),
        rec("2", 2, "b", &["lexer.rs", "parser.rs", "README.md"]),
        rec("3", 3, "c", &["lexer.rs"]),
        rec("4", 4, "d", &["parser.rs", "ast.rs"]),
        rec("5", 5, "e", &["lexer.rs", "x1", "x2", "x3", "x4", "x5"]),
    ]);
    let r = co_changes(&v, "lexer.rs", 4, 1);
    assert_eq!(r[0].path, "parser.rs");
    assert_eq!(r[0].support, 2);
    assert!((r[0].confidence - 2.0 / 3.0).abs() < 1e-9);
    assert_eq!(r[1].path, "README.md");
    assert!(!r.iter().any(|c| c.path == "x1"), "big commits ignored");
    assert_eq!(co_changes(&v, "lexer.rs", 4, 2).len(), 1);
}

#[test]
fn store_syncs_to_head_and_hides_later_commits() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.bin");
    let all = [
        rec("1", 1, "one", &["a"]),
        rec("2", 2, "two", &["b"]),
        rec("3", 3, "three", &["c"]),
    ];
    let fetch = |hs: &[String]| {
        Ok(all
            .iter()
            .filter(|r| hs.contains(&r.hash))
            .cloned()
            .collect())
    };
    let s = HistoryStore::open(&file);
    let v = s
        .sync(
            Some("3".into()),
            || Ok(vec!["3".into(), "2".into(), "1".into()]),
            fetch,
        )
        .unwrap();
    assert_eq!(v.len(), 3);
    assert_eq!(s.stored(), 3);
    let v = s
        .sync(
            Some("1".into()),
            || Ok(vec!["1".into()]),
            |_| panic!("nothing to fetch"),
        )
        .unwrap();
    assert_eq!(v.len(), 1);
    assert!(v.search("three", 10, 8).is_empty());
    let v = s
        .sync(
            Some("3".into()),
            || Ok(vec!["3".into(), "2".into(), "1".into()]),
            |_| panic!("nothing to fetch"),
        )
        .unwrap();
    assert_eq!(v.search("two three", 10, 8).len(), 2);
    let before: Vec<&str> = v
        .search_before("one two three", 10, 8, Some(3))
        .iter()
        .map(|(i, _)| v.commits[*i].record.hash.as_str())
        .collect();
    assert_eq!(before.len(), 2, "commits at or after the cut are hidden");
    assert!(!before.contains(&"3"));
    // Reopened: the records come from the file.
    let s = HistoryStore::open(&file);
    assert_eq!(s.stored(), 3);

    // Idle: dropped from memory (the count is still known), read again by the next sync
    // with nothing fetched from git. Syncing alone is not use; a question is.
    s.sync(
        Some("3".into()),
        || Ok(vec!["3".into(), "2".into(), "1".into()]),
        |_| panic!("nothing to fetch"),
    )
    .unwrap();
    s.touch(); // a question asked of it
    assert!(
        !s.release_idle(std::time::Duration::from_secs(60)),
        "just used"
    );
    assert!(s.release_idle(std::time::Duration::ZERO));
    assert!(s.view().is_empty());
    assert_eq!(s.view().head.as_deref(), Some("3"), "the HEAD is kept");
    assert_eq!((s.stored(), s.released_reachable()), (3, Some(3)));
    let v = s
        .sync(
            Some("3".into()),
            || Ok(vec!["3".into(), "2".into(), "1".into()]),
            |_| panic!("the records come from the file"),
        )
        .unwrap();
    assert_eq!(v.search("two three", 10, 8).len(), 2);
}
