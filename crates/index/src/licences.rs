//! Where a repository's files get their licence when they do not declare one: the nearest
//! directory (the file's own, then up to the root) with a manifest that names a licence
//! (`Cargo.toml` `license`, with workspace inheritance; `package.json` `license`;
//! `pyproject.toml` `project.license` or `tool.poetry.license`; `setup.cfg` `metadata.license`),
//! else with licence files (`LICENSE`, `COPYING`, … recognised by
//! [`patina_core::licence::classify_text`]; several in one directory are alternatives:
//! `LICENSE-MIT` + `LICENSE-APACHE` = `Apache-2.0 OR MIT`). A file's own
//! `SPDX-License-Identifier` beats both (read by the index round).

use std::collections::BTreeMap;
use std::path::Path;

use patina_core::licence::{classify_text, is_licence_file, normalise_expr};
use patina_core::{Licence, LicenceSource};

/// Manifests read for a licence.
const MANIFESTS: [&str; 4] = ["Cargo.toml", "package.json", "pyproject.toml", "setup.cfg"];
/// Licence sources larger than this are not read.
const MAX_SOURCE_BYTES: u64 = 512 * 1024;

/// Is `rel` a file a [`LicenceMap`] is built from (a manifest or a licence file)?
pub fn is_licence_source(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    MANIFESTS.contains(&name) || is_licence_file(name)
}

/// The licence each directory of a repository gives the files below it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LicenceMap {
    /// Directory ('' = the root) → (SPDX expression, where it came from).
    dirs: BTreeMap<String, (String, LicenceSource)>,
}

impl LicenceMap {
    /// Read the licence sources among `paths` (relative, '/'-separated) under `root`.
    pub fn build<'a>(root: &Path, paths: impl IntoIterator<Item = &'a str>) -> LicenceMap {
        let mut manifests: BTreeMap<String, Manifest> = BTreeMap::new();
        let mut files: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for rel in paths.into_iter().filter(|p| is_licence_source(p)) {
            let (dir, name) = match rel.rsplit_once('/') {
                Some((d, n)) => (d.to_string(), n),
                None => (String::new(), rel),
            };
            let Some(text) = read_small(root, rel) else {
                continue;
            };
            if MANIFESTS.contains(&name) {
                let m = parse_manifest(name, &text);
                let slot = manifests.entry(dir).or_default();
                slot.licence = slot.licence.take().or(m.licence);
                slot.workspace_licence = slot.workspace_licence.take().or(m.workspace_licence);
                slot.inherits |= m.inherits;
            } else if let Some(id) = classify_text(&text) {
                files.entry(dir).or_default().push(id);
            }
        }
        let mut dirs = BTreeMap::new();
        for (dir, m) in &manifests {
            let expr = if m.inherits {
                // `license.workspace = true`: the nearest workspace root above names it.
                ancestors(dir).find_map(|d| manifests.get(d)?.workspace_licence.clone())
            } else {
                m.licence.clone().or_else(|| m.workspace_licence.clone())
            };
            if let Some(e) = expr {
                dirs.insert(dir.clone(), (e, LicenceSource::Manifest));
            }
        }
        for (dir, mut ids) in files {
            if dirs.contains_key(&dir) {
                continue;
            }
            ids.sort();
            ids.dedup();
            dirs.insert(dir, (ids.join(" OR "), LicenceSource::File));
        }
        LicenceMap { dirs }
    }

    /// The licence of the file at `rel` that declares none itself.
    pub fn lookup(&self, rel: &str) -> Licence {
        let dir = rel.rsplit_once('/').map_or("", |(d, _)| d);
        for d in ancestors(dir) {
            if let Some((expr, source)) = self.dirs.get(d) {
                return Licence {
                    expr: Some(expr.clone()),
                    source: *source,
                };
            }
        }
        Licence::unknown()
    }

    /// A file's licence: its own header's (`header`) if it has one, else [`LicenceMap::lookup`].
    pub fn licence_of(&self, rel: &str, header: Option<String>) -> Licence {
        match header {
            Some(expr) => Licence {
                expr: Some(expr),
                source: LicenceSource::Header,
            },
            None => self.lookup(rel),
        }
    }
}

/// `dir` and every directory above it, the root ('') last.
fn ancestors(dir: &str) -> impl Iterator<Item = &str> {
    let mut next = Some(dir);
    std::iter::from_fn(move || {
        let d = next?;
        next = if d.is_empty() {
            None
        } else {
            Some(d.rsplit_once('/').map_or("", |(p, _)| p))
        };
        Some(d)
    })
}

/// A small licence source beneath `root` ([`patina_confined`]: no link followed), as text.
fn read_small(root: &Path, rel: &str) -> Option<String> {
    let bytes = patina_confined::read(root, Path::new(rel), MAX_SOURCE_BYTES).ok()?;
    if bytes.len() as u64 > MAX_SOURCE_BYTES {
        return None;
    }
    String::from_utf8(bytes).ok()
}

#[derive(Default, Debug)]
struct Manifest {
    licence: Option<String>,
    /// `[workspace.package] license` of a Cargo workspace root.
    workspace_licence: Option<String>,
    /// `license.workspace = true`.
    inherits: bool,
}

/// What a manifest says of the licence (malformed manifests say nothing).
fn parse_manifest(name: &str, text: &str) -> Manifest {
    let mut m = Manifest::default();
    match name {
        "package.json" => {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(text) else {
                return m;
            };
            m.licence = match &v["license"] {
                serde_json::Value::String(s) => normalise_expr(s),
                obj => obj["type"].as_str().and_then(normalise_expr),
            };
        }
        "setup.cfg" => {
            let mut in_metadata = false;
            for line in text.lines() {
                let l = line.trim();
                if l.starts_with('[') {
                    in_metadata = l == "[metadata]";
                } else if in_metadata
                    && let Some((k, v)) = l.split_once('=')
                    && k.trim() == "license"
                {
                    m.licence = normalise_expr(v.trim());
                }
            }
        }
        _ => {
            let Ok(v) = text.parse::<toml::Table>() else {
                return m;
            };
            let get = |path: &[&str]| -> Option<&toml::Value> {
                let mut cur = v.get(path[0])?;
                for k in &path[1..] {
                    cur = cur.get(k)?;
                }
                Some(cur)
            };
            let text_of = |val: Option<&toml::Value>| -> Option<String> {
                match val? {
                    toml::Value::String(s) => normalise_expr(s),
                    // pyproject.toml `license = { text = "MIT" }`
                    t => t.get("text")?.as_str().and_then(normalise_expr),
                }
            };
            if name == "Cargo.toml" {
                m.inherits = get(&["package", "license", "workspace"])
                    .and_then(toml::Value::as_bool)
                    .unwrap_or(false);
                m.licence = text_of(get(&["package", "license"]));
                m.workspace_licence = text_of(get(&["workspace", "package", "license"]));
            } else {
                m.licence = text_of(get(&["project", "license"]))
                    .or_else(|| text_of(get(&["tool", "poetry", "license"])));
            }
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIT_TEXT: &str = "Permission is hereby granted, free of charge, to any person obtaining a copy of this software";
    const APACHE_TEXT: &str = "Apache License\nVersion 2.0, January 2004";
    const GPL_TEXT: &str = "GNU GENERAL PUBLIC LICENSE\nVersion 3, 29 June 2007";

    fn map(files: &[(&str, &str)]) -> (tempfile::TempDir, LicenceMap) {
        let dir = tempfile::tempdir().unwrap();
        for (rel, text) in files {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let m = LicenceMap::build(dir.path(), files.iter().map(|(p, _)| *p));
        (dir, m)
    }

    fn expr(m: &LicenceMap, rel: &str) -> (Option<String>, LicenceSource) {
        let l = m.lookup(rel);
        (l.expr, l.source)
    }

    #[test]
    fn the_nearest_manifest_beats_licence_files_and_dual_files_are_alternatives() {
        let (_d, m) = map(&[
            ("LICENSE-MIT", MIT_TEXT),
            ("LICENSE-APACHE", APACHE_TEXT),
            ("gpl/COPYING", GPL_TEXT),
            ("gpl/package.json", r#"{"name": "x", "license": "MIT"}"#),
            ("gplonly/COPYING", GPL_TEXT),
            (
                "py/pyproject.toml",
                "[project]\nname = \"p\"\nlicense = { text = \"BSD-3-Clause\" }\n",
            ),
            ("cfg/setup.cfg", "[metadata]\nname = x\nlicense = ISC\n"),
        ]);
        assert_eq!(
            expr(&m, "src/lib.rs"),
            (Some("Apache-2.0 OR MIT".into()), LicenceSource::File)
        );
        assert_eq!(
            expr(&m, "gpl/a/b.js"),
            (Some("MIT".into()), LicenceSource::Manifest)
        );
        assert_eq!(
            expr(&m, "gplonly/x.c"),
            (Some("GPL-3.0-only".into()), LicenceSource::File)
        );
        assert_eq!(expr(&m, "py/m.py").0.as_deref(), Some("BSD-3-Clause"));
        assert_eq!(expr(&m, "cfg/m.py").0.as_deref(), Some("ISC"));
        let header = m.licence_of("gpl/a/b.js", Some("AGPL-3.0-only".into()));
        assert_eq!(header.source, LicenceSource::Header);
    }

    #[test]
    fn cargo_members_inherit_the_workspace_licence() {
        let (_d, m) = map(&[
            (
                "Cargo.toml",
                "[workspace]\nmembers = [\"a\"]\n[workspace.package]\nlicense = \"MIT OR Apache-2.0\"\n",
            ),
            (
                "a/Cargo.toml",
                "[package]\nname = \"a\"\nlicense.workspace = true\n",
            ),
            (
                "b/Cargo.toml",
                "[package]\nname = \"b\"\nlicense = \"GPL-2.0-only\"\n",
            ),
            ("c/Cargo.toml", "this is not toml ["),
        ]);
        assert_eq!(
            expr(&m, "a/src/lib.rs").0.as_deref(),
            Some("MIT OR Apache-2.0")
        );
        assert_eq!(expr(&m, "b/src/lib.rs").0.as_deref(), Some("GPL-2.0-only"));
        assert_eq!(
            expr(&m, "c/src/lib.rs").0.as_deref(),
            Some("MIT OR Apache-2.0")
        );
        let (_d, none) = map(&[("README.md", "# x")]);
        assert_eq!(expr(&none, "src/x.rs"), (None, LicenceSource::None));
    }
}
