//! Editors beyond Neovim (tests/lsp.rs) with `patina-lsp` configured as docs/editors.md says:
//! Emacs with eglot (Debian's emacs-nox and elpa-eglot, which `.ci/run` installs), driven in batch
//! mode through Emacs's own xref front end; VS Code (code-server with the packaged `.vsix`,
//! driven by headless Chromium); the Zed extension in editors/zed, checked against what Zed
//! reads.

use std::time::Duration;

use crate::util::*;

/// Emacs (batch) starts eglot on the fixture with `patina-lsp` (tests/eglot.el: the snippet of
/// docs/editors.md), and Emacs's xref answers from Patina: `M-.` on `User` in `app/cli.py` goes to
/// the class in `app/models.py` line 1, and `C-M-.` (workspace symbols) for `load_users` finds its
/// definition on its line.
#[test]
fn emacs_eglot_finds_definitions_and_workspace_symbols() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    env.add_repo(repo.path());
    let call_line = repo.line_of("app/cli.py", "return User(");
    let column = repo
        .read("app/cli.py")
        .lines()
        .nth(call_line as usize - 1)
        .unwrap()
        .find("User")
        .unwrap();
    let out_file = env.home().join("eglot.txt");
    let mut cmd = env.isolated_command("emacs");
    cmd.current_dir(repo.path())
        .args(["--batch", "-Q", "-l"])
        .arg(workspace().join("tests/eglot.el"))
        .arg(bin("patina-lsp"))
        .arg(repo.path())
        .arg("app/cli.py")
        .arg(call_line.to_string())
        .arg(column.to_string())
        .arg("load_users")
        .arg(&out_file);
    let out = run(cmd, Duration::from_secs(180));
    assert!(
        out.status.success(),
        "emacs failed (are Debian's emacs-nox and elpa-eglot installed? .ci/run installs them)\n{out:?}\n{}",
        env.logs()
    );
    let written = std::fs::read_to_string(&out_file)
        .unwrap_or_else(|e| panic!("emacs wrote no report ({e})\n{out:?}"));
    println!("{written}");
    let lines: Vec<&str> = written.lines().collect();
    assert_eq!(lines.last(), Some(&"done"), "{written}");
    let models = repo.path().join("app/models.py");
    let at = |line: u32| format!("{}:{line}", models.display());
    let definitions: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("definition "))
        .collect();
    assert_eq!(
        definitions.first().copied(),
        Some(format!("definition {}", at(1)).as_str()),
        "M-. on User goes to `class User` first: {written}\n{out:?}"
    );
    let def_line = repo.line_of("app/models.py", "def load_users");
    let first_symbol = lines
        .iter()
        .find(|l| l.starts_with("symbol "))
        .unwrap_or_else(|| panic!("no workspace symbol for load_users: {written}\n{out:?}"));
    assert!(
        first_symbol.contains("load_users") && first_symbol.ends_with(&at(def_line)),
        "the first workspace symbol is the definition: {written}"
    );
}

/// VS Code for real: code-server (pinned, from npm: `.ci/run` installs it into
/// `target/npm-vscode` with playwright-core) gets the `.vsix` `.ci/run` packages from
/// editors/vscode (`target/patina-vscode.vsix`) through `--install-extension`, opens the fixture
/// (not registered: the extension's server registers and indexes it), and headless Chromium
/// (Debian's) drives it (tests/vscode_e2e.cjs): the status bar says `Patina: fresh`, **Patina:
/// Search** from the command palette lists `parse_args` at `src/args.rs:12` first, and accepting
/// it opens `args.rs` with the cursor on line 12. A failure leaves a screenshot in
/// `target/vscode-failure.png`.
#[test]
fn vscode_extension_searches_and_opens_the_hit_in_code_server() {
    let env = TestEnv::started();
    let repo = fixture_repo();
    let npm = std::env::var_os("PATINA_NPM_VSCODE")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| workspace().join("target/npm-vscode"));
    let vsix = std::env::var_os("PATINA_VSIX")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| workspace().join("target/patina-vscode.vsix"));
    for needed in [npm.join("node_modules/.bin/code-server"), vsix.clone()] {
        assert!(
            needed.exists(),
            "{} is missing: .ci/run packages the .vsix and installs code-server@4.100.3 and \
             playwright-core@1.49.1 into target/npm-vscode",
            needed.display()
        );
    }
    let line = repo.line_of("src/args.rs", "pub fn parse_args");
    let screenshot = workspace().join("target/vscode-failure.png");
    let _ = std::fs::remove_file(&screenshot);
    let work = tempfile::Builder::new()
        .prefix("ptv")
        .tempdir_in("/tmp")
        .expect("a code-server directory");
    let mut cmd = env.isolated_command("node");
    cmd.arg(workspace().join("tests/vscode_e2e.cjs"))
        .arg("--npm")
        .arg(&npm)
        .arg("--vsix")
        .arg(&vsix)
        .arg("--lsp")
        .arg(bin("patina-lsp"))
        .arg("--repo")
        .arg(repo.path())
        .args(["--query", "parse_args", "--expect-path", "src/args.rs"])
        .arg("--expect-line")
        .arg(line.to_string())
        .arg("--work")
        .arg(work.path())
        .arg("--screenshot")
        .arg(&screenshot)
        .env("HOME", work.path());
    let out = run(cmd, Duration::from_secs(600));
    println!("{}", out.stdout);
    assert!(
        out.status.success() && out.stdout.contains("ok opened args.rs"),
        "VS Code (code-server) with the Patina extension failed; screenshot: {}\n{out:?}\n{}",
        screenshot.display(),
        env.logs()
    );
    assert!(out.stdout.contains("ok status fresh"), "{out:?}");
}

/// The keys of Zed's extension manifest (`extension.toml`, Zed's `ExtensionManifest`, schema
/// version 1). Zed ignores a key it does not know, so a misspelt one silently drops what it
/// meant: the check is that every key is one of these.
const ZED_MANIFEST_KEYS: &[&str] = &[
    "id",
    "name",
    "version",
    "schema_version",
    "description",
    "repository",
    "authors",
    "lib",
    "themes",
    "icon_themes",
    "languages",
    "grammars",
    "language_servers",
    "context_servers",
    "agent_servers",
    "slash_commands",
    "snippets",
    "capabilities",
    "debug_adapters",
    "debug_locators",
];
/// The keys of a `[language_servers.<id>]` entry Zed reads (`LanguageServerManifestEntry`; `name`
/// is what the extension registry shows).
const ZED_SERVER_KEYS: &[&str] = &[
    "name",
    "language",
    "languages",
    "language_ids",
    "code_action_kinds",
];
/// Zed's names of the languages Patina indexes (built in: Rust, Python, Go, JavaScript,
/// TypeScript, TSX, C, C++, Markdown; from Zed's own extensions: Java, Ruby, PHP, Elixir). A
/// language is matched by this exact name.
const ZED_LANGUAGES: &[&str] = &[
    "Rust",
    "Python",
    "Go",
    "JavaScript",
    "TypeScript",
    "TSX",
    "C",
    "C++",
    "Markdown",
    "Java",
    "Ruby",
    "PHP",
    "Elixir",
];

/// A ```lang block of docs/editors.md under the heading `section`.
fn editors_doc_block(section: &str, lang: &str) -> String {
    let doc =
        std::fs::read_to_string(workspace().join("docs/editors.md")).expect("docs/editors.md");
    let start = doc
        .find(&format!("\n## {section}"))
        .unwrap_or_else(|| panic!("docs/editors.md has no section {section}"));
    let rest = &doc[start..];
    let open = format!("```{lang}\n");
    let from = rest
        .find(&open)
        .unwrap_or_else(|| panic!("no {lang} block under {section}"))
        + open.len();
    let len = rest[from..].find("```").expect("a closed block");
    rest[from..from + len].to_string()
}

/// The Zed extension (editors/zed), without Zed (it is not in the registries): its manifest has
/// only keys Zed reads, with their types, schema version 1, a language server `patina` for
/// languages Zed names that way; the Rust glue answers for that server id and starts
/// `patina-lsp` (or the settings' binary); docs/editors.md's settings enable that same id.
/// (`.ci/run` compiles the glue against zed_extension_api.)
#[test]
fn zed_extension_manifest_is_what_zed_reads() {
    let dir = workspace().join("editors/zed");
    let text = std::fs::read_to_string(dir.join("extension.toml")).expect("extension.toml");
    let manifest: toml::Table = toml::from_str(&text).expect("extension.toml is TOML");
    for key in manifest.keys() {
        assert!(
            ZED_MANIFEST_KEYS.contains(&key.as_str()),
            "extension.toml: `{key}` is no key of Zed's manifest"
        );
    }
    let id = manifest["id"].as_str().expect("id is a string");
    assert!(
        !id.is_empty() && id.chars().all(|c| c.is_ascii_lowercase() || c == '-'),
        "id {id:?}: lowercase letters and dashes"
    );
    assert!(manifest["name"].is_str(), "name is a string");
    let version = manifest["version"].as_str().expect("version is a string");
    assert_eq!(
        version
            .split('.')
            .filter(|p| p.parse::<u32>().is_ok())
            .count(),
        3,
        "semver: {version}"
    );
    assert_eq!(
        manifest["schema_version"].as_integer(),
        Some(1),
        "schema version 1"
    );
    for key in ["description", "repository"] {
        assert!(manifest[key].is_str(), "{key} is a string");
    }
    assert!(
        manifest["authors"]
            .as_array()
            .is_some_and(|a| a.iter().all(|v| v.is_str()))
    );
    let servers = manifest["language_servers"]
        .as_table()
        .expect("[language_servers]");
    assert_eq!(
        servers.keys().collect::<Vec<_>>(),
        vec!["patina"],
        "one server, `patina`"
    );
    let server = servers["patina"]
        .as_table()
        .expect("[language_servers.patina]");
    for key in server.keys() {
        assert!(
            ZED_SERVER_KEYS.contains(&key.as_str()),
            "[language_servers.patina]: `{key}` is no key Zed reads"
        );
    }
    let languages: Vec<&str> = server["languages"]
        .as_array()
        .expect("languages = [..]")
        .iter()
        .map(|l| l.as_str().expect("language names are strings"))
        .collect();
    assert!(
        languages.contains(&"Rust") && languages.contains(&"Python"),
        "{languages:?}"
    );
    for l in &languages {
        assert!(
            ZED_LANGUAGES.contains(l),
            "{l:?} is not a language name Zed knows"
        );
    }

    // The glue: a cdylib on zed_extension_api that answers for the manifest's server id.
    let cargo: toml::Table =
        toml::from_str(&std::fs::read_to_string(dir.join("Cargo.toml")).unwrap()).unwrap();
    assert_eq!(
        cargo["lib"]["crate-type"].as_array().unwrap()[0].as_str(),
        Some("cdylib")
    );
    assert!(
        cargo["dependencies"].get("zed_extension_api").is_some(),
        "{cargo}"
    );
    let lib = std::fs::read_to_string(dir.join("src/lib.rs")).unwrap();
    assert!(
        lib.contains("const SERVER_ID: &str = \"patina\";"),
        "src/lib.rs answers for `patina`"
    );
    assert!(
        lib.contains("const BINARY: &str = \"patina-lsp\";"),
        "and starts patina-lsp"
    );
    assert!(
        lib.contains("zed::register_extension!("),
        "and registers itself"
    );
    assert!(
        lib.contains("LspSettings::for_worktree(SERVER_ID"),
        "the settings' binary first"
    );

    // docs/editors.md's settings: the same id, next to the languages' own servers.
    let settings: serde_json::Value =
        serde_json::from_str(&editors_doc_block("Zed", "json")).expect("the Zed settings are JSON");
    assert_eq!(
        settings["lsp"]["patina"]["binary"]["path"], "patina-lsp",
        "{settings}"
    );
    let enabled = settings["languages"].as_object().expect("languages");
    assert!(!enabled.is_empty());
    for (language, cfg) in enabled {
        assert!(
            languages.contains(&language.as_str()),
            "{language} is not in extension.toml"
        );
        assert!(
            cfg["language_servers"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s == "patina"),
            "{language}: {cfg}"
        );
    }
}

/// Helix has no build in Debian's or npm's registries (`apt-cache policy helix`: none), so what
/// is tested is its configuration and the exchange it makes: docs/editors.md's `languages.toml`
/// names the server `patina` with the command `patina-lsp` and adds it to each language after
/// the language's own server; that command, started as Helix starts it (no arguments, the
/// workspace root and folder in `initialize`, the file opened), answers `gd` on `User` with the
/// class in `app/models.py` and `Space S` (workspace symbols) for `load_users` with its
/// definition.
#[test]
fn helix_languages_toml_starts_patina_and_it_answers_gd_and_workspace_symbols() {
    let config: toml::Table =
        toml::from_str(&editors_doc_block("Helix", "toml")).expect("the Helix snippet is TOML");
    let server = config["language-server"]["patina"]
        .as_table()
        .expect("[language-server.patina]");
    assert_eq!(server["command"].as_str(), Some("patina-lsp"), "{server:?}");
    assert!(
        server.get("args").is_none(),
        "patina-lsp takes no arguments"
    );
    let languages = config["language"].as_array().expect("[[language]]");
    assert!(!languages.is_empty());
    for l in languages {
        let servers = l["language-servers"].as_array().expect("language-servers");
        assert_eq!(
            servers.last().and_then(|s| s.as_str()),
            Some("patina"),
            "{l:?}"
        );
        assert!(servers.len() >= 2, "after the language's own server: {l:?}");
    }
    assert!(
        languages
            .iter()
            .any(|l| l["name"].as_str() == Some("python"))
    );

    let env = TestEnv::started();
    let repo = fixture_repo();
    env.add_repo(repo.path());
    let root = format!("file://{}", repo.path().display());
    let cli = format!("{root}/app/cli.py");
    let mut lsp = crate::lsp::Lsp::spawn(&env);
    lsp.send(serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "processId": std::process::id(), "rootPath": repo.path(), "rootUri": root,
        "workspaceFolders": [{"uri": root, "name": "repo"}],
        "clientInfo": {"name": "helix", "version": "25.07.1"},
        "capabilities": {"workspace": {"symbol": {"dynamicRegistration": false}, "workspaceFolders": true},
                         "textDocument": {"definition": {"linkSupport": false}}}}}));
    let init = lsp.answer();
    assert_eq!(
        init["result"]["capabilities"]["definitionProvider"], true,
        "{init}"
    );
    lsp.send(serde_json::json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    lsp.send(serde_json::json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": cli, "languageId": "python", "version": 0, "text": repo.read("app/cli.py")}}}));
    let line = repo.line_of("app/cli.py", "return User(") - 1;
    let character = repo
        .read("app/cli.py")
        .lines()
        .nth(line as usize)
        .unwrap()
        .find("User")
        .unwrap();
    lsp.send(serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "textDocument/definition", "params": {
        "textDocument": {"uri": cli}, "position": {"line": line, "character": character}}}));
    let def = lsp.answer();
    let models = format!("{root}/app/models.py");
    let locations = def["result"]
        .as_array()
        .cloned()
        .unwrap_or_else(|| vec![def["result"].clone()]);
    // First: the class the import names (a same-named TypeScript `User` may follow).
    assert!(!locations.is_empty(), "{def}");
    assert_eq!(
        (
            &locations[0]["uri"],
            &locations[0]["range"]["start"]["line"]
        ),
        (&serde_json::json!(models), &serde_json::json!(0)),
        "{def}"
    );
    lsp.send(serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "workspace/symbol", "params": {"query": "load_users"}}));
    let symbols = lsp.answer();
    let first = &symbols["result"][0];
    assert_eq!(first["name"], "load_users", "{symbols}");
    assert_eq!(first["location"]["uri"], models.as_str(), "{symbols}");
    assert_eq!(
        first["location"]["range"]["start"]["line"],
        repo.line_of("app/models.py", "def load_users") - 1,
        "{symbols}"
    );
}
