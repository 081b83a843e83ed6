//! Navigation on the dependency graph: `patina refs`, `callers`, `callees` and `defs` answer
//! from the live index, and an edit that removes a call updates them once the index caught up.

use std::time::{Duration, Instant};

use crate::util::{TestEnv, git_repo};

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
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = env.patina_in(repo.path(), &["refs", "check_email"]);
        if out.code() == 1 && out.stdout.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "refs still listed: {out:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}
