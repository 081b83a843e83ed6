//! Provenance: every hit and context piece says its file's licence as an SPDX expression, and
//! where that was found — the file's own `SPDX-License-Identifier` beats the nearest manifest
//! (`Cargo.toml`, `package.json`, …), which beats the nearest licence file — and queries can keep
//! only some licences (`--licence`) or no copyleft (`--no-copyleft`), before fusion.

use std::path::Path;

use crate::util::*;

const MIT: &[u8] = b"MIT License\n\nPermission is hereby granted, free of charge, to any person obtaining a copy\nof this software and associated documentation files.\n";
const APACHE: &[u8] = b"                                 Apache License\n                           Version 2.0, January 2004\n";
const GPL: &[u8] = b"                    GNU GENERAL PUBLIC LICENSE\n                       Version 3, 29 June 2007\n";

fn repo() -> Repo {
    git_repo(&[
        (
            "Cargo.toml",
            b"[workspace]\nmembers = [\"core\"]\n[workspace.package]\nlicense = \"MIT OR Apache-2.0\"\n",
        ),
        ("LICENSE-MIT", MIT),
        ("LICENSE-APACHE", APACHE),
        (
            "core/Cargo.toml",
            b"[package]\nname = \"core\"\nlicense.workspace = true\n",
        ),
        ("core/src/lib.rs", b"pub fn widget_dual() {}\n"),
        (
            "core/src/copyleft.rs",
            b"// SPDX-License-Identifier: GPL-2.0-or-later\npub fn widget_header() {}\n",
        ),
        ("third/gpl/COPYING", GPL),
        ("third/gpl/widget.c", b"int widget_gpl(void) { return 1; }\n"),
        ("web/LICENSE", MIT),
        ("web/package.json", b"{\"name\": \"web\", \"license\": \"AGPL-3.0-only\"}\n"),
        ("web/widget.js", b"function widgetAgpl() { return 1; }\n"),
    ])
}

fn ask(env: &TestEnv, root: &Path, licences: &[&str], no_copyleft: bool) -> QueryResponse {
    env.query(QueryRequest {
        repos: vec![root.to_string_lossy().into_owned()],
        limit: 50,
        licences: licences.iter().map(|s| s.to_string()).collect(),
        no_copyleft,
        oracles: vec!["lexical".into(), "symbol".into()],
        ..query("widget")
    })
    .unwrap_or_else(|s| panic!("{s}"))
}

fn licence_of(r: &QueryResponse, path: &str) -> Option<(String, String)> {
    r.hits
        .iter()
        .find(|h| h.path == path)
        .map(|h| (h.licence.clone(), h.licence_source.clone()))
}

fn paths(r: &QueryResponse) -> Vec<String> {
    let mut p: Vec<String> = r.hits.iter().map(|h| h.path.clone()).collect();
    p.sort();
    p.dedup();
    p
}

#[test]
fn hits_carry_the_licence_of_their_file_header_before_manifest_before_licence_file() {
    let env = TestEnv::started();
    let repo = repo();
    env.add_repo(repo.path());
    let r = ask(&env, repo.path(), &[], false);
    let pair = |a: &str, b: &str| Some((a.to_string(), b.to_string()));
    assert_eq!(
        licence_of(&r, "core/src/lib.rs"),
        pair("MIT OR Apache-2.0", "manifest"),
        "inherited from the workspace: {:?}",
        r.hits
    );
    assert_eq!(
        licence_of(&r, "core/src/copyleft.rs"),
        pair("GPL-2.0-or-later", "header")
    );
    assert_eq!(
        licence_of(&r, "third/gpl/widget.c"),
        pair("GPL-3.0-only", "file")
    );
    assert_eq!(
        licence_of(&r, "web/widget.js"),
        pair("AGPL-3.0-only", "manifest"),
        "the manifest beats the LICENSE file beside it"
    );

    // Context pieces carry it too.
    let req = patina_proto::v1::ContextRequest {
        query: "widget_dual".into(),
        repos: vec![repo.key()],
        ..Default::default()
    };
    let c = env
        .call("Search.Context", async {
            env.search_client()
                .await
                .context(req)
                .await
                .map(tonic::Response::into_inner)
        })
        .unwrap();
    let item = c
        .items
        .iter()
        .find(|i| i.path == "core/src/lib.rs")
        .expect("lib.rs in context");
    assert_eq!(item.licence, "MIT OR Apache-2.0");
    assert_eq!(item.licence_source, "manifest");

    // And --json.
    let out = env.patina_in(repo.path(), &["q", "--json", "widget_gpl"]);
    let v = out.q_json();
    assert_eq!(v["hits"][0]["licence"], "GPL-3.0-only", "{v}");
    assert_eq!(v["hits"][0]["licence_source"], "file", "{v}");
}

#[test]
fn licence_filters_keep_only_the_licences_asked_for() {
    let env = TestEnv::started();
    let repo = repo();
    env.add_repo(repo.path());
    let all = paths(&ask(&env, repo.path(), &[], false));
    for p in [
        "core/src/lib.rs",
        "core/src/copyleft.rs",
        "third/gpl/widget.c",
        "web/widget.js",
    ] {
        assert!(all.contains(&p.to_string()), "{p} in {all:?}");
    }
    let mit = paths(&ask(&env, repo.path(), &["MIT", "Apache-2.0"], false));
    assert!(mit.contains(&"core/src/lib.rs".to_string()), "{mit:?}");
    for p in [
        "core/src/copyleft.rs",
        "third/gpl/widget.c",
        "web/widget.js",
    ] {
        assert!(
            !mit.contains(&p.to_string()),
            "{p} is not MIT/Apache: {mit:?}"
        );
    }
    let permissive = paths(&ask(&env, repo.path(), &[], true));
    assert!(
        permissive.contains(&"core/src/lib.rs".to_string()),
        "{permissive:?}"
    );
    for p in [
        "core/src/copyleft.rs",
        "third/gpl/widget.c",
        "web/widget.js",
    ] {
        assert!(
            !permissive.contains(&p.to_string()),
            "{p} is copyleft: {permissive:?}"
        );
    }
    let out = env.patina_in(
        repo.path(),
        &["q", "--json", "--licence", "GPL-3.0-only", "widget"],
    );
    let v = out.q_json();
    let shown: Vec<&str> = v["hits"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|h| h["repo_path"].as_str())
        .collect();
    assert_eq!(shown, ["third/gpl/widget.c"], "{v}");
    let bad = env
        .query(QueryRequest {
            licences: vec!["MIT License".into()],
            ..query("widget")
        })
        .expect_err("not an SPDX id");
    assert_eq!(bad.code(), Code::InvalidArgument);
}

#[test]
fn a_changed_manifest_relicenses_the_files_below_it() {
    let env = TestEnv::started();
    let repo = repo();
    env.add_repo(repo.path());
    std::fs::write(
        repo.path().join("web/package.json"),
        "{\"name\": \"web\", \"license\": \"ISC\"}\n",
    )
    .unwrap();
    poll(EVENTUALLY, "web/widget.js is ISC", || {
        let r = ask(&env, repo.path(), &[], false);
        match licence_of(&r, "web/widget.js") {
            Some((l, _)) if l == "ISC" => Ok(()),
            other => Err(format!("{other:?}")),
        }
    });
}
