//! Path rules decided from a path alone: secret files Patina never reads or serves, documentation
//! files, and the gitignore-style globs of queries and `explore` ([`PathFilter`]). The ignore
//! rules of a repository (its `.gitignore` files) need the disk and live in `patina-index`.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::{ChunkMeta, FileRole, UserError};

/// Why a path is a secret Patina never serves (matched on every component, case-insensitively):
/// `None` when it is not one.
pub fn secret_reason(rel: &str) -> Option<&'static str> {
    for comp in rel.split(['/', '\\']) {
        let c = comp.to_ascii_lowercase();
        let reason = match c.as_str() {
            ".git" => "Git internals (.git/)",
            ".ssh" | ".gnupg" | ".aws" => "a credentials directory",
            ".env" => "an environment file (.env)",
            ".netrc" | "_netrc" | ".pgpass" | ".npmrc" | ".pypirc" => "a credentials file",
            _ if c.starts_with(".env.") => "an environment file (.env.*)",
            _ if ["id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"]
                .iter()
                .any(|k| c.starts_with(k)) =>
            {
                "an SSH key"
            }
            _ if [".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".kdbx"]
                .iter()
                .any(|e| c.ends_with(e)) =>
            {
                "a key or certificate file"
            }
            _ => continue,
        };
        return Some(reason);
    }
    None
}

/// A path as a person reads it on one line: control characters (newlines, tabs, escape
/// sequences) are escaped as in Rust strings (`\\n`, `\\u{1b}`), and so are the invisible
/// characters that reorder or hide text ([`is_deceptive`]: U+202E RIGHT-TO-LEFT OVERRIDE and its
/// kin), so a file name cannot break or forge lines of output, colour a terminal, nor show its
/// characters in another order. Plain paths come back unchanged. Every name a command prints for
/// a person goes through this (or [`printable_text`]).
pub fn printable_path(path: &str) -> std::borrow::Cow<'_, str> {
    escape_unless(path, |_| false)
}

/// Text of several lines as a person reads it on a terminal: as [`printable_path`], but line
/// breaks and tabs stay what they are.
pub fn printable_text(text: &str) -> std::borrow::Cow<'_, str> {
    escape_unless(text, |c| c == '\n' || c == '\t')
}

/// A character that changes how the text around it is shown without being seen: the Unicode
/// bidirectional controls (embeddings, overrides, isolates, marks), zero-width characters and
/// the byte-order mark.
pub fn is_deceptive(c: char) -> bool {
    matches!(
        c,
        '\u{061C}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}'
            | '\u{FEFF}'
    )
}

fn escape_unless(text: &str, keep: impl Fn(char) -> bool) -> std::borrow::Cow<'_, str> {
    let escaped = |c: char| (c.is_control() || is_deceptive(c)) && !keep(c);
    if !text.chars().any(escaped) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if escaped(c) {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A file name's bytes as text: valid UTF-8 kept, any other byte as `\\xNN`.
pub fn escape_bytes(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// Longest path glob accepted, in bytes.
pub const MAX_GLOB_LEN: usize = 1024;
/// Deepest nesting of `{…}` alternatives accepted in a path glob.
pub const MAX_GLOB_NESTING: usize = 8;

/// Refuse globs whose size or nesting only a hostile caller writes, before they reach the glob
/// compiler (whose error for them names neither the glob nor the problem).
fn check_glob_shape(g: &str) -> Result<(), UserError> {
    let short = |g: &str| -> String { g.chars().take(40).collect() };
    if g.len() > MAX_GLOB_LEN {
        return Err(UserError::Invalid(format!(
            "path glob '{}…' is {} bytes long; at most {MAX_GLOB_LEN} are accepted",
            short(g),
            g.len()
        )));
    }
    let (mut depth, mut deepest, mut escaped) = (0usize, 0usize, false);
    for c in g.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    if deepest > MAX_GLOB_NESTING {
        return Err(UserError::Invalid(format!(
            "path glob '{}…' nests {{…}} alternatives {deepest} deep; at most {MAX_GLOB_NESTING} \
             levels are accepted",
            short(g)
        )));
    }
    Ok(())
}

/// Whether a path glob excludes (`!*_test.go`, as ripgrep's `-g '!…'`) rather than includes.
pub fn is_exclusion(glob: &str) -> bool {
    glob.trim_start().starts_with('!')
}

/// Path globs, gitignore-style: `*.rs` matches at any depth, `src/*.rs` is anchored at the root,
/// and a directory pattern (`src/index`) matches everything below it. A glob starting with `!`
/// excludes what it matches, as in ripgrep (`*.go` and `!*_test.go`: Go files but not tests;
/// `!vendor` alone: everything but `vendor/`). No including glob matches everything;
/// [`PathFilter::docs_only`] further restricts to documentation.
pub struct PathFilter {
    set: GlobSet,
    exclude: GlobSet,
    docs: bool,
    roles: Vec<FileRole>,
    exclude_roles: Vec<FileRole>,
    licences: crate::LicenceFilter,
}

impl PathFilter {
    pub fn new(globs: &[String]) -> Result<PathFilter, UserError> {
        let mut b = GlobSetBuilder::new();
        let mut x = GlobSetBuilder::new();
        for g in globs {
            let g = g.trim();
            let (b, g) = match g.strip_prefix('!') {
                Some(rest) => (&mut x, rest.trim_start().trim_start_matches("./")),
                None => (&mut b, g.trim_start_matches("./")),
            };
            if g.is_empty() {
                continue;
            }
            check_glob_shape(g)?;
            let anchored = g.trim_start_matches('/');
            let pattern = if g.contains('/') {
                anchored.trim_end_matches('/').to_string()
            } else {
                format!("**/{g}")
            };
            for p in [pattern.clone(), format!("{pattern}/**")] {
                let glob = GlobBuilder::new(&p)
                    .literal_separator(true)
                    .build()
                    .map_err(|e| UserError::Invalid(format!("invalid path glob '{g}': {e}")))?;
                b.add(glob);
            }
        }
        Ok(PathFilter {
            set: b
                .build()
                .map_err(|e| UserError::Invalid(format!("invalid path globs: {e}")))?,
            exclude: x
                .build()
                .map_err(|e| UserError::Invalid(format!("invalid path globs: {e}")))?,
            docs: false,
            roles: Vec::new(),
            exclude_roles: Vec::new(),
            licences: Default::default(),
        })
    }

    /// Only chunks of `roles` (all when empty), never chunks of `exclude`.
    pub fn with_roles(mut self, roles: &[FileRole], exclude: &[FileRole]) -> PathFilter {
        self.roles = roles.to_vec();
        self.exclude_roles = exclude.to_vec();
        self
    }

    /// Only chunks whose file's licence passes `licences` (`--licence`, `--no-copyleft`).
    pub fn with_licences(mut self, licences: crate::LicenceFilter) -> PathFilter {
        self.licences = licences;
        self
    }

    /// Does the chunk pass (its path, its role and its licence)?
    pub fn allows(&self, meta: &ChunkMeta) -> bool {
        if !self.licences.allows(meta.licence.as_deref()) {
            return false;
        }
        if self.roles.is_empty() && self.exclude_roles.is_empty() {
            return self.matches(&meta.path);
        }
        let role = meta.role();
        (self.roles.is_empty() || self.roles.contains(&role))
            && !self.exclude_roles.contains(&role)
            && self.matches(&meta.path)
    }

    /// Only documentation files ([`is_doc_path`]) pass, in addition to the globs.
    pub fn docs_only(mut self, docs: bool) -> PathFilter {
        self.docs = docs;
        self
    }

    /// Does the filter restrict licences?
    pub fn has_licences(&self) -> bool {
        !self.licences.is_empty()
    }

    /// Does the filter restrict paths by glob (not only to documentation)?
    pub fn has_globs(&self) -> bool {
        !self.set.is_empty() || !self.exclude.is_empty()
    }

    pub fn matches(&self, path: &str) -> bool {
        (self.set.is_empty() || self.set.is_match(path))
            && !self.exclude.is_match(path)
            && (!self.docs || is_doc_path(path))
    }

    /// A predicate over the chunk ids of a chunk table that pass the filter, computed once per
    /// query.
    pub fn allowed_chunks(
        &self,
        chunks: &crate::ChunkTable,
    ) -> Arc<dyn Fn(u64) -> bool + Send + Sync> {
        let mut by_path: HashMap<&str, bool> = HashMap::new();
        let mut allowed = HashSet::new();
        let by_role =
            !self.roles.is_empty() || !self.exclude_roles.is_empty() || !self.licences.is_empty();
        for (id, m) in chunks.iter() {
            let pass = if by_role {
                self.allows(m)
            } else {
                *by_path
                    .entry(&*m.path)
                    .or_insert_with(|| self.matches(&m.path))
            };
            if pass {
                allowed.insert(*id);
            }
        }
        Arc::new(move |id| allowed.contains(&id))
    }
}

/// Documentation: Markdown, reStructuredText, AsciiDoc, Org and text files (not build files such as
/// `CMakeLists.txt` or `requirements.txt`), and README/CHANGELOG/… files without an extension.
pub fn is_doc_path(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    match name.rsplit_once('.') {
        Some((_, "md" | "markdown" | "mdx" | "rst" | "adoc" | "asciidoc" | "org" | "rdoc")) => true,
        Some((stem, "txt")) => {
            stem != "cmakelists"
                && !stem.starts_with("requirements")
                && !stem.starts_with("constraints")
        }
        _ => [
            "readme",
            "changelog",
            "changes",
            "contributing",
            "license",
            "copying",
            "authors",
            "notice",
            "history",
        ]
        .contains(&name.as_str()),
    }
}

/// A `file://` URI for the absolute `path` on `host` (`""`: this machine, as LSP wants it), with
/// every byte outside RFC 3986's unreserved set and `/` percent-encoded — names that are not
/// UTF-8 included.
pub fn file_uri(path: &std::path::Path, host: &str) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut uri = format!("file://{host}");
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_percent_encode_what_is_not_unreserved() {
        use std::os::unix::ffi::OsStrExt;
        let uri = file_uri(std::path::Path::new("/src/a b/ü%.rs"), "box");
        assert_eq!(uri, "file://box/src/a%20b/%C3%BC%25.rs");
        let raw = std::ffi::OsStr::from_bytes(b"/x/\xff.rs");
        assert_eq!(file_uri(std::path::Path::new(raw), ""), "file:///x/%FF.rs");
    }

    #[test]
    fn secrets_are_recognised() {
        for p in [
            ".env",
            "app/.env.local",
            "certs/server.pem",
            "deploy/tls.KEY",
            "home/.ssh/config",
            "id_rsa.pub",
            "x/id_ed25519",
            ".git/config",
            "sub/.git/HEAD",
        ] {
            assert!(secret_reason(p).is_some(), "{p}");
        }
        for p in [
            "src/env.rs",
            "environment.md",
            "keys.rs",
            "docs/keyboard.md",
            "gitignore",
        ] {
            assert!(secret_reason(p).is_none(), "{p}");
        }
    }

    fn filter(globs: &[&str]) -> PathFilter {
        PathFilter::new(&globs.iter().map(|g| g.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn globs_include_at_any_depth_and_bang_globs_exclude() {
        let go_not_tests = filter(&["*.go", "!*_test.go"]);
        assert!(go_not_tests.matches("cmd/root.go"));
        assert!(!go_not_tests.matches("cmd/root_test.go"));
        assert!(!go_not_tests.matches("README.md"));
        // An exclusion alone keeps everything else.
        let no_tests = filter(&["!*_test.go"]);
        assert!(no_tests.matches("README.md") && no_tests.matches("root.go"));
        assert!(!no_tests.matches("a/b/root_test.go"));
        // A directory excluded with everything below it.
        let no_vendor = filter(&["!vendor"]);
        assert!(!no_vendor.matches("vendor/x/y.go"));
        assert!(no_vendor.matches("src/vendor.go"));
        assert!(no_vendor.has_globs());
        assert!(is_exclusion(" !x") && !is_exclusion("x!"));
        assert!(PathFilter::new(&["![".to_string()]).is_err());
    }

    #[test]
    fn paths_print_on_one_line() {
        assert_eq!(printable_path("src/lib.rs"), "src/lib.rs");
        assert_eq!(printable_path("a\nb\t\u{1b}[31m"), "a\\nb\\t\\u{1b}[31m");
        assert_eq!(printable_path("gnp.\u{202e}txt.rs"), "gnp.\\u{202e}txt.rs");
        assert_eq!(printable_path("a\u{200b}b\u{2066}"), "a\\u{200b}b\\u{2066}");
        assert_eq!(
            printable_text("x\n\ty\u{1b}[0m\u{202e}"),
            "x\n\ty\\u{1b}[0m\\u{202e}"
        );
        assert_eq!(printable_text("plain\ntext"), "plain\ntext");
        assert_eq!(escape_bytes(b"bad\xffname\n"), "bad\\xffname\n");
    }

    #[test]
    fn hostile_globs_are_refused_with_a_reason() {
        let nested = format!("{}a{}", "{".repeat(500), "}".repeat(500));
        let err = PathFilter::new(&[nested]).err().unwrap().to_string();
        assert!(err.contains("500 deep"), "{err}");
        let err = PathFilter::new(&["x".repeat(5000)])
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("5000 bytes"), "{err}");
        assert!(PathFilter::new(&["{a,{b,c}}/*.rs".to_string()]).is_ok());
        assert!(PathFilter::new(&["\\{\\{\\{\\{\\{\\{\\{\\{\\{\\{x".to_string()]).is_ok());
    }
}
