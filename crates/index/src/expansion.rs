//! Context expansion: what a piece of code needs around it to be read on its own, from the
//! dependency graph ([`GraphTable`]) and the chunk texts. For a definition: the header of its
//! enclosing class/impl, the imports it uses, the signatures of its nearest siblings and the
//! signatures of the repository functions it calls. For a Markdown section: the headings above it
//! and the titles of its subsections. Every piece is a line range of a file, so it can be
//! attributed `path:start-end`.

use std::sync::Arc;

use patina_core::{ChunkKind, ChunkMeta};

use crate::graph::{Def, GraphTable, is_definition};

/// At most this many imports, sibling signatures, callee signatures and subsection titles.
pub const MAX_IMPORTS: usize = 5;
pub const MAX_SIBLINGS: usize = 3;
pub const MAX_CALLEES: usize = 8;
pub const MAX_CHILDREN: usize = 12;
/// A container header longer than this is cut to its first lines.
pub const MAX_HEADER_LINES: usize = 12;
/// A signature is at most this many lines (a long parameter list).
const MAX_SIGNATURE_LINES: usize = 8;

pub use patina_core::related::{Related, RelatedKind};

/// The pieces around the chunk `chunk_id` (`meta`), in the order they are worth reading:
/// container, imports, callees, siblings (code); parent headings, subsections (Markdown).
/// `text_of` reads a chunk's stored text.
pub fn surroundings(
    graph: &GraphTable,
    chunk_id: u64,
    meta: &ChunkMeta,
    text_of: &dyn Fn(u64) -> Option<String>,
) -> Vec<Related> {
    if meta.kind == ChunkKind::Section {
        return section_surroundings(graph, meta, text_of);
    }
    if !is_definition(meta.kind) || meta.symbol.is_none() {
        return Vec::new();
    }
    let def = graph.def_of_chunk(chunk_id, meta).unwrap_or_else(|| Def {
        chunk_id,
        path: meta.path.clone(),
        start_line: meta.start_line,
        end_line: meta.end_line,
        symbol: Arc::from(meta.symbol.as_deref().unwrap_or_default()),
        parent: meta.parent.as_deref().map(Arc::from),
        kind: meta.kind,
    });
    let mut out = Vec::new();
    if let Some(c) = container(graph, &def, text_of) {
        out.push(c);
    }
    out.extend(imports_used(graph, &def, text_of));
    out.extend(callees(graph, &def, text_of));
    out.extend(siblings(graph, &def, text_of));
    out
}

fn is_container(kind: ChunkKind) -> bool {
    matches!(
        kind,
        ChunkKind::Class
            | ChunkKind::Struct
            | ChunkKind::Enum
            | ChunkKind::Trait
            | ChunkKind::Interface
            | ChunkKind::Impl
            | ChunkKind::Module
    )
}

/// Lines `from..=to` of a chunk whose text starts at `start`.
fn lines_of(text: &str, start: u32, from: u32, to: u32) -> String {
    text.lines()
        .skip(from.saturating_sub(start) as usize)
        .take((to + 1).saturating_sub(from) as usize)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The header of the class/impl/trait `def` is a member of: the nearest container chunk above it
/// named as its parent (`Trait for Type` counts for `Type`), cut to [`MAX_HEADER_LINES`].
fn container(
    graph: &GraphTable,
    def: &Def,
    text_of: &dyn Fn(u64) -> Option<String>,
) -> Option<Related> {
    let parent = def.parent.as_deref()?;
    let c = graph
        .chunks_in(&def.path)
        .iter()
        .filter(|c| {
            is_container(c.kind)
                && c.start_line <= def.start_line
                && (*c.symbol == *parent || c.symbol.ends_with(&format!(" for {parent}")))
        })
        .max_by_key(|c| c.start_line)?;
    let text = text_of(c.chunk_id)?;
    let n = text.lines().count().clamp(1, MAX_HEADER_LINES) as u32;
    let end = (c.start_line + n - 1).min(c.end_line);
    Some(Related {
        kind: RelatedKind::Container,
        path: c.path.clone(),
        start_line: c.start_line,
        end_line: end,
        symbol: c.symbol.to_string(),
        text: lines_of(&text, c.start_line, c.start_line, end),
    })
}

/// The statement around line `line` of `path` (an import): from the line where no bracket is open
/// (a name of `from m import (\n a,\n b)` sits on its own line) to the line closing them (at most
/// 8 lines). Returns its first and last lines and its text.
fn statement_at(
    graph: &GraphTable,
    path: &str,
    line: u32,
    text_of: &dyn Fn(u64) -> Option<String>,
) -> Option<(u32, u32, String)> {
    let c = graph
        .chunks_in(path)
        .iter()
        .filter(|c| c.start_line <= line && line <= c.end_line)
        .min_by_key(|c| c.end_line - c.start_line)?;
    let text = text_of(c.chunk_id)?;
    let lines: Vec<&str> = text.lines().collect();
    let delta = |l: &str| {
        l.matches(['(', '{', '[']).count() as i32 - l.matches([')', '}', ']']).count() as i32
    };
    let at = (line - c.start_line) as usize;
    let (mut first, mut depth) = (0, 0i32);
    for (i, l) in lines.iter().enumerate().take(at + 1) {
        if depth <= 0 {
            first = i;
            depth = 0;
        }
        depth += delta(l);
    }
    let mut last = first;
    let mut depth = delta(lines.get(first)?);
    while depth > 0 && last + 1 < lines.len() && last - first < 7 {
        last += 1;
        depth += delta(lines[last]);
    }
    Some((
        c.start_line + first as u32,
        c.start_line + last as u32,
        lines[first..=last].join("\n"),
    ))
}

/// The imports of `def`'s file whose bound name `def` uses (as a name, or as the first segment
/// of a qualifier: `os` of `os.environ.get`), in file order, at most [`MAX_IMPORTS`].
fn imports_used(
    graph: &GraphTable,
    def: &Def,
    text_of: &dyn Fn(u64) -> Option<String>,
) -> Vec<Related> {
    let Some(facts) = graph.facts(&def.path) else {
        return Vec::new();
    };
    let used: Vec<&str> = graph
        .refs_in(&def.path)
        .filter(|r| def.start_line <= r.line && r.line <= def.end_line)
        .flat_map(|r| {
            let name: &str = r.name;
            let q = r.qualifier.and_then(|q| {
                let q: &str = q;
                q.split(['.', ':', '/', '-', '>']).find(|s| !s.is_empty())
            });
            std::iter::once(name).chain(q)
        })
        .collect();
    let mut out: Vec<Related> = Vec::new();
    for imp in &facts.imports {
        if out.len() >= MAX_IMPORTS {
            break;
        }
        let name = imp.local_name();
        if !used.contains(&name) {
            continue;
        }
        if let Some((start, end, text)) = statement_at(graph, &def.path, imp.line, text_of) {
            if let Some(r) = out.iter_mut().find(|r| r.start_line == start) {
                r.symbol = format!("{},{name}", r.symbol);
                continue;
            }
            out.push(Related {
                kind: RelatedKind::Import,
                path: def.path.clone(),
                start_line: start,
                end_line: end,
                symbol: name.to_string(),
                text,
            });
        }
    }
    out
}

/// A definition's signature: from the first line naming `symbol` (below comments, attributes and
/// decorators) to the line that opens its body (`:` / `{` / `;` / `=` at the end), at most
/// [`MAX_SIGNATURE_LINES`]. Returns the first and last line numbers and the text.
pub fn signature(text: &str, start_line: u32, symbol: &str) -> Option<(u32, u32, String)> {
    let name = symbol.rsplit(['.', ':', ' ']).next().unwrap_or(symbol);
    let lines: Vec<&str> = text.lines().collect();
    let first = lines.iter().position(|l| {
        let t = l.trim_start();
        !t.starts_with(['#', '@', '/', '*']) && !t.starts_with("--") && l.contains(name)
    })?;
    let mut last = first;
    while last + 1 < lines.len() && last - first + 1 < MAX_SIGNATURE_LINES {
        let t = lines[last].trim_end();
        if t.ends_with([':', '{', ';', '=']) || t.ends_with("=>") {
            break;
        }
        last += 1;
    }
    Some((
        start_line + first as u32,
        start_line + last as u32,
        lines[first..=last].join("\n"),
    ))
}

fn signature_of(
    d: &Def,
    kind: RelatedKind,
    text_of: &dyn Fn(u64) -> Option<String>,
) -> Option<Related> {
    let text = text_of(d.chunk_id)?;
    let (s, e, sig) = signature(&text, d.start_line, &d.symbol)?;
    Some(Related {
        kind,
        path: d.path.clone(),
        start_line: s,
        end_line: e,
        symbol: match &d.parent {
            Some(p) => format!("{p}.{}", d.symbol),
            None => d.symbol.to_string(),
        },
        text: sig,
    })
}

/// Whether `word` occurs in `text` as a whole identifier.
fn has_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(i, _)| {
        let ident = |c: char| c.is_alphanumeric() || c == '_';
        !text[..i].chars().next_back().is_some_and(ident)
            && !text[i + word.len()..].chars().next().is_some_and(ident)
    })
}

/// Signatures of the repository definitions `def` calls, each once, in call order. A bare call
/// of one of `def`'s parameters is left out (`loads(v)` in `def f(loads=json.loads)` calls the
/// argument, not a function of that name).
fn callees(graph: &GraphTable, def: &Def, text_of: &dyn Fn(u64) -> Option<String>) -> Vec<Related> {
    let own = text_of(def.chunk_id)
        .and_then(|t| signature(&t, def.start_line, &def.symbol))
        .map(|(_, _, s)| s)
        .unwrap_or_default();
    let params = own.split_once('(').map_or("", |(_, p)| p);
    let mut seen: Vec<u64> = Vec::new();
    let mut out = Vec::new();
    for e in graph.calls_in(def) {
        if out.len() >= MAX_CALLEES {
            break;
        }
        if seen.contains(&e.to.chunk_id)
            || (e.site.qualifier.is_none() && has_word(params, &e.name))
        {
            continue;
        }
        seen.push(e.to.chunk_id);
        out.extend(signature_of(&e.to, RelatedKind::Callee, text_of));
    }
    out
}

/// Signatures of the definitions with the same parent in the same file, nearest first.
fn siblings(
    graph: &GraphTable,
    def: &Def,
    text_of: &dyn Fn(u64) -> Option<String>,
) -> Vec<Related> {
    let mut cands: Vec<&Def> = graph
        .chunks_in(&def.path)
        .iter()
        .filter(|c| {
            is_definition(c.kind)
                && !c.symbol.is_empty()
                && c.parent == def.parent
                && c.symbol != def.symbol
                && !(is_container(c.kind) && def.parent.as_deref() == Some(&c.symbol))
        })
        .collect();
    cands.sort_by_key(|c| (c.start_line.abs_diff(def.start_line), c.start_line));
    let mut out: Vec<Related> = Vec::new();
    for c in cands {
        if out.len() >= MAX_SIBLINGS {
            break;
        }
        if out.iter().any(|r| r.symbol.ends_with(&*c.symbol)) {
            continue; // a piece of a split definition already taken
        }
        out.extend(signature_of(c, RelatedKind::Sibling, text_of));
    }
    out
}

/// A Markdown section (its pieces, when it was split, joined).
struct Heading {
    chunk_id: u64,
    start_line: u32,
    end_line: u32,
    symbol: String,
    parent: Option<String>,
}

fn headings(graph: &GraphTable, path: &str) -> Vec<Heading> {
    let mut out: Vec<Heading> = Vec::new();
    for c in graph.chunks_in(path) {
        if c.kind != ChunkKind::Section || c.symbol.is_empty() {
            continue;
        }
        if let Some(h) = out.last_mut()
            && *h.symbol == *c.symbol
            && h.parent.as_deref() == c.parent.as_deref()
            && c.start_line <= h.end_line + 1
        {
            h.end_line = h.end_line.max(c.end_line);
            continue;
        }
        out.push(Heading {
            chunk_id: c.chunk_id,
            start_line: c.start_line,
            end_line: c.end_line,
            symbol: c.symbol.to_string(),
            parent: c.parent.as_deref().map(str::to_string),
        });
    }
    out
}

fn heading_piece(
    h: &Heading,
    kind: RelatedKind,
    path: &Arc<str>,
    text_of: &dyn Fn(u64) -> Option<String>,
) -> Option<Related> {
    let text = text_of(h.chunk_id)?;
    let (i, line) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains(h.symbol.as_str()))?;
    let at = h.start_line + i as u32;
    Some(Related {
        kind,
        path: path.clone(),
        start_line: at,
        end_line: at,
        symbol: h.symbol.clone(),
        text: line.to_string(),
    })
}

/// The headings above a section (outermost first) and the titles of its subsections.
fn section_surroundings(
    graph: &GraphTable,
    meta: &ChunkMeta,
    text_of: &dyn Fn(u64) -> Option<String>,
) -> Vec<Related> {
    let path: Arc<str> = meta.path.clone();
    let heads = headings(graph, &meta.path);
    let Some(at) = heads
        .iter()
        .position(|h| h.start_line <= meta.start_line && meta.start_line <= h.end_line)
    else {
        return Vec::new();
    };
    let mut parents = Vec::new();
    let (mut parent, mut below) = (heads[at].parent.clone(), at);
    while let Some(p) = parent {
        let Some(i) = heads[..below].iter().rposition(|h| h.symbol == p) else {
            break;
        };
        parents.extend(heading_piece(
            &heads[i],
            RelatedKind::ParentSection,
            &path,
            text_of,
        ));
        parent = heads[i].parent.clone();
        below = i;
    }
    parents.reverse();
    // Subsections: the following headings as long as they descend from this one.
    let mut family = vec![heads[at].symbol.as_str()];
    let mut children = Vec::new();
    for h in &heads[at + 1..] {
        let Some(p) = h.parent.as_deref().filter(|p| family.contains(p)) else {
            break;
        };
        family.push(&h.symbol);
        if p == heads[at].symbol && children.len() < MAX_CHILDREN {
            children.extend(heading_piece(h, RelatedKind::ChildSection, &path, text_of));
        }
    }
    parents.extend(children);
    parents
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use patina_core::Language;

    use super::*;

    struct Repo {
        graph: GraphTable,
        metas: HashMap<u64, ChunkMeta>,
        texts: HashMap<u64, String>,
    }

    impl Repo {
        fn new(files: &[(&str, &str)]) -> Repo {
            let (mut metas, mut texts, mut facts) =
                (HashMap::new(), HashMap::new(), HashMap::new());
            let mut id = 0u64;
            for (path, text) in files {
                let lang = Language::from_path(std::path::Path::new(path));
                let opts = patina_chunk::ChunkOptions::default();
                for c in patina_chunk::chunk_file(lang, text, &opts) {
                    id += 1;
                    texts.insert(id, c.text.clone());
                    metas.insert(
                        id,
                        ChunkMeta {
                            path: Arc::from(*path),
                            start_line: c.start_line,
                            end_line: c.end_line,
                            symbol: c.symbol,
                            kind: c.kind,
                            parent: c.parent,
                            language: lang,
                            hash: Default::default(),
                            role: None,
                            licence: None,
                        },
                    );
                }
                facts.insert(
                    Arc::<str>::from(*path),
                    Arc::new(patina_chunk::extract_facts(lang, text)),
                );
            }
            let graph = GraphTable::build(metas.iter(), facts);
            Repo {
                graph,
                metas,
                texts,
            }
        }

        /// The surroundings of the chunk named `symbol`, as `(kind, ref, text)`.
        fn around(&self, symbol: &str) -> Vec<(&'static str, String, String)> {
            let (id, meta) = self
                .metas
                .iter()
                .find(|(_, m)| m.symbol.as_deref() == Some(symbol))
                .expect("a chunk of that name");
            surroundings(&self.graph, *id, meta, &|c| self.texts.get(&c).cloned())
                .into_iter()
                .map(|r| (r.kind.name(), r.reference(), r.text))
                .collect()
        }
    }

    const CONFIG: &str = "\
import os
import json
from .helpers import (
    load,
    dump,
)
from .unused import nothing


class Config(dict):
    \"\"\"Holds settings.\"\"\"

    def __init__(self, root):
        self.root = root

    def from_env(self, prefix=\"APP\"):
        for key in os.environ:
            self[key] = json.loads(self.parse(key))
        return load(self)

    def parse(self, key):
        return key.lower()

    def decode(self, raw, load=None):
        return load(raw)

    def save(self):
        dump(self)


def top():
    return 1
";

    const HELPERS: &str = "def load(x):\n    return x\n\n\ndef dump(x):\n    pass\n";

    #[test]
    fn a_method_gets_its_class_header_imports_callees_and_siblings() {
        let r = Repo::new(&[("pkg/config.py", CONFIG), ("pkg/helpers.py", HELPERS)]);
        let got = r.around("from_env");
        let kinds: Vec<&str> = got.iter().map(|g| g.0).collect();
        assert_eq!(
            got[0],
            (
                "container",
                "pkg/config.py:10-11".into(),
                "class Config(dict):\n    \"\"\"Holds settings.\"\"\"".into()
            ),
            "{got:#?}"
        );
        let imports: Vec<&(&str, String, String)> =
            got.iter().filter(|g| g.0 == "import").collect();
        assert_eq!(
            imports.len(),
            3,
            "os, json and load are used, nothing is not: {got:#?}"
        );
        assert_eq!(imports[1].2, "import json");
        assert_eq!(imports[0].1, "pkg/config.py:1-1");
        assert_eq!(
            imports[2],
            &(
                "import",
                "pkg/config.py:3-6".into(),
                "from .helpers import (\n    load,\n    dump,\n)".into()
            )
        );
        let callees: Vec<&str> = got
            .iter()
            .filter(|g| g.0 == "callee")
            .map(|g| g.2.as_str())
            .collect();
        assert_eq!(
            callees,
            ["    def parse(self, key):", "def load(x):"],
            "{got:#?}"
        );
        let siblings: Vec<&str> = got
            .iter()
            .filter(|g| g.0 == "sibling")
            .map(|g| g.1.as_str())
            .collect();
        assert_eq!(siblings.len(), 3, "{got:#?}");
        assert!(
            !siblings.iter().any(|s| s.contains(":29-")),
            "top() is not a method"
        );
        assert!(
            kinds.iter().position(|k| *k == "container")
                < kinds.iter().position(|k| *k == "sibling")
        );
    }

    #[test]
    fn a_top_level_function_has_no_container() {
        let r = Repo::new(&[("pkg/config.py", CONFIG)]);
        let got = r.around("top");
        let got: Vec<_> = got
            .into_iter()
            .filter(|g| !g.2.contains("decode"))
            .collect();
        assert_eq!(
            got,
            [(
                "sibling",
                "pkg/config.py:10-10".into(),
                "class Config(dict):".into()
            )],
            "no container; its siblings are the file's other top-level definitions"
        );
    }

    #[test]
    fn a_parameter_called_like_a_function_is_not_a_callee() {
        let r = Repo::new(&[("pkg/config.py", CONFIG), ("pkg/helpers.py", HELPERS)]);
        let got = r.around("decode");
        assert!(got.iter().all(|g| g.0 != "callee"), "{got:#?}");
        assert!(has_word("(self, raw, load=None):", "load"));
        assert!(!has_word("(self, loader):", "load"));
    }

    #[test]
    fn signatures_skip_decorators_and_span_parameter_lists() {
        let text =
            "@app.route('/x')\n# note\ndef handler(\n    a,\n    b,\n) -> int:\n    return 1\n";
        assert_eq!(
            signature(text, 10, "handler"),
            Some((12, 15, "def handler(\n    a,\n    b,\n) -> int:".into()))
        );
        let rust = "/// Docs\npub fn open(path: &Path) -> Result<Self> {\n    todo!()\n}";
        assert_eq!(
            signature(rust, 1, "Store::open").map(|s| s.2),
            Some("pub fn open(path: &Path) -> Result<Self> {".into())
        );
    }

    #[test]
    fn a_markdown_section_gets_its_parent_headings_and_subsection_titles() {
        let doc = "\
# Guide

Intro.

## Install

How to install.

### From source

Build it.

#### With cargo

cargo build

### From packages

apt install.

## Usage

Run it.
";
        let r = Repo::new(&[("docs/guide.md", doc)]);
        let got = r.around("From source");
        assert_eq!(
            got,
            [
                (
                    "parent_section",
                    "docs/guide.md:1-1".into(),
                    "# Guide".into()
                ),
                (
                    "parent_section",
                    "docs/guide.md:5-5".into(),
                    "## Install".into()
                ),
                (
                    "child_section",
                    "docs/guide.md:13-13".into(),
                    "#### With cargo".into()
                ),
            ]
        );
        let got = r.around("Install");
        let children: Vec<&str> = got
            .iter()
            .filter(|g| g.0 == "child_section")
            .map(|g| g.2.as_str())
            .collect();
        assert_eq!(
            children,
            ["### From source", "### From packages"],
            "{got:#?}"
        );
    }
}
