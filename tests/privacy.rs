//! Personal data, opt-in per repository (`[pii]`): e-mail and IP addresses and configured
//! patterns are masked character for character in what Patina stores and returns — snippets,
//! contexts, `get_file`, commit messages — so the data cannot be searched for, and every line
//! keeps its number and length.

use crate::util::*;

const CONTACTS: &str = "// Who to call\npub const OWNER: &str = \"jane.doe@example.com\";\n\npub const GATEWAY: &str = \"192.168.10.42\";\npub const BADGE: &str = \"EMP-123456\";\n\npub fn after_the_contacts() -> u32 {\n    7\n}\n";

fn repos_and_env() -> (TestEnv, Repo, Repo) {
    let masked = git_repo(&[("src/contacts.rs", CONTACTS.as_bytes())]);
    std::fs::write(
        masked.path().join("src/gateway.rs"),
        "pub fn gateway_helper() {}\n",
    )
    .unwrap();
    git(masked.path(), &["add", "-A"]);
    git(
        masked.path(),
        &[
            "commit",
            "-q",
            "-m",
            "Ask ops@example.org about the gateway",
        ],
    );
    let plain = git_repo(&[("src/contacts.rs", CONTACTS.as_bytes())]);
    let mut env = TestEnv::new();
    env.append_config(&format!(
        "\n[pii]\nrepos = [\"{}\"]\npatterns = [\"EMP-[0-9]{{6}}\"]\n",
        masked.path().display()
    ));
    env.start_daemon();
    env.add_repo(masked.path());
    env.add_repo(plain.path());
    (env, masked, plain)
}

fn ask(env: &TestEnv, text: &str, root: &std::path::Path) -> QueryResponse {
    env.query(QueryRequest {
        repos: vec![root.to_string_lossy().into_owned()],
        snippet_lines: 20,
        ..query(text)
    })
    .unwrap()
}

#[test]
fn personal_data_is_masked_in_an_opted_in_repository_and_lines_stay_true() {
    let (env, masked, plain) = repos_and_env();

    // Not searchable, not shown.
    for secret in ["jane.doe@example.com", "192.168.10.42", "EMP-123456"] {
        let r = ask(&env, secret, masked.path());
        assert!(
            r.hits.iter().all(|h| !h.snippet.contains(secret)),
            "{secret}: {:?}",
            r.hits
        );
    }
    // The repository that did not opt in is untouched.
    let r = ask(&env, "jane.doe", plain.path());
    assert!(
        r.hits
            .iter()
            .any(|h| h.snippet.contains("jane.doe@example.com")),
        "{:?}",
        r.hits
    );

    // The code around it keeps its lines.
    let r = ask(&env, "after_the_contacts", masked.path());
    let hit = r
        .hits
        .iter()
        .find(|h| h.symbol == "after_the_contacts")
        .expect("the function is found");
    assert_eq!((hit.start_line, hit.end_line), (7, 9), "{hit:?}");
    let r = ask(&env, "OWNER GATEWAY", masked.path());
    let snippet = r
        .hits
        .iter()
        .map(|h| h.snippet.clone())
        .find(|s| s.contains("OWNER"))
        .expect("the constants are found");
    assert!(
        snippet.contains(&format!("\"{}\"", "*".repeat(20))),
        "{snippet}"
    );

    // get_file: masked, line for line.
    let file = env
        .get_file(GetFileRequest {
            repo: masked.key(),
            path: "src/contacts.rs".into(),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(file.total_lines as usize, CONTACTS.lines().count());
    for (served, disk) in file.text.lines().zip(CONTACTS.lines()) {
        assert_eq!(
            served.chars().count(),
            disk.chars().count(),
            "{served} / {disk}"
        );
    }
    for secret in ["jane.doe", "192.168", "EMP-1"] {
        assert!(!file.text.contains(secret), "{}", file.text);
    }

    // Context and commit messages.
    let ctx = env.patina_in(masked.path(), &["q", "--expand", "OWNER GATEWAY BADGE"]);
    assert!(ctx.stdout.contains("OWNER"), "{ctx:?}");
    assert!(
        !ctx.stdout.contains("jane.doe") && !ctx.stdout.contains("EMP-1"),
        "{}",
        ctx.stdout
    );
    let log = env.patina_in(masked.path(), &["log", "--json", "gateway"]);
    let subject = format!(
        "Ask {} about the gateway",
        "*".repeat("ops@example.org".len())
    );
    assert!(log.stdout.contains(&subject), "{}", log.stdout);
    let blame = env.patina_in(masked.path(), &["q", "--json", "--blame", "gateway_helper"]);
    assert!(blame.stdout.contains(&subject), "{}", blame.stdout);
    assert!(
        !blame.stdout.contains("ops@example.org"),
        "{}",
        blame.stdout
    );
}
