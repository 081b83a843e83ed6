//! What a source file says about the code around it, as the dependency graph needs it: the names
//! it references (calls among them), what it imports, and the type relations it declares. Plain
//! data extracted by `patina-chunk`, stored per file by `patina-index`, resolved to definitions by
//! the graph table there. Short serialized field names: one record per indexed file.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// The graph facts of one file.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct FileFacts {
    #[serde(rename = "r", default)]
    pub refs: Vec<Reference>,
    #[serde(rename = "i", default)]
    pub imports: Vec<Import>,
    #[serde(rename = "t", default)]
    pub relations: Vec<TypeRelation>,
}

/// A use of a name: a call site (`call`) or any other reference (a type, a value, an argument).
/// The names are shared: a file names the same few dozen things over and over, and a graph keeps
/// every file's references (as owned strings, one allocation each, they were most of its heap).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct Reference {
    #[serde(rename = "n")]
    pub name: Arc<str>,
    /// 1-based line.
    #[serde(rename = "l")]
    pub line: u32,
    #[serde(rename = "c", default, skip_serializing_if = "std::ops::Not::not")]
    pub call: bool,
    /// What the name was reached through: `pkg` of Go's `pkg.Func`, `os.path` of Python's
    /// `os.path.join`, `Type` of Rust's `Type::new`, `self`/`this` for members.
    #[serde(rename = "q", default, skip_serializing_if = "Option::is_none")]
    pub qualifier: Option<Arc<str>>,
}

/// An import, use or include. `module` is spelled as the language spells it (`a.b`, `..pkg`,
/// `crate::x::y`, `./util`, `github.com/o/r/pkg`, `stdio.h`); `name` is the item imported from it
/// (`None`: the module itself, or everything); `alias` the local name when renamed.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Import {
    #[serde(rename = "m")]
    pub module: String,
    #[serde(rename = "n", default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(rename = "a", default, skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    #[serde(rename = "l")]
    pub line: u32,
    /// The file makes what it imports public under its own path: Rust's `pub use`, JS/TS
    /// `export … from` (or an imported name exported again), a name of Python's `__all__` or an
    /// import of a package's `__init__.py`, a Go type alias. That path is the one users import
    /// the name by, so it is a definition site for the name they type. Absent in facts extracted
    /// before re-exports were told apart (read as `false`).
    #[serde(rename = "x", default, skip_serializing_if = "std::ops::Not::not")]
    pub reexport: bool,
}

impl Import {
    /// The name this import binds in the file: the alias, else the item, else the module's last
    /// segment (`a.b` → `b`, `github.com/o/r/pkg` → `pkg`, `crate::x` → `x`).
    pub fn local_name(&self) -> &str {
        if let Some(a) = &self.alias {
            return a;
        }
        if let Some(n) = &self.name {
            return n;
        }
        self.module
            .rsplit(['.', '/', ':'])
            .find(|s| !s.is_empty())
            .unwrap_or(&self.module)
    }
}

/// `child` extends, implements or embeds `parent` (Rust `impl Trait for Type`, class inheritance,
/// Go embedding, Java/TS `implements`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct TypeRelation {
    #[serde(rename = "c")]
    pub child: String,
    #[serde(rename = "p")]
    pub parent: String,
    #[serde(rename = "l")]
    pub line: u32,
}

/// How a reference was tied to a definition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Resolution {
    /// The definition is in the same file (or the same class/package scope).
    Exact,
    /// Reached through the file's imports (module, relative import, use path, package, include).
    Import,
    /// Only the name matches; candidates ranked by proximity.
    NameOnly,
}

impl Resolution {
    pub fn name(self) -> &'static str {
        match self {
            Resolution::Exact => "exact",
            Resolution::Import => "import",
            Resolution::NameOnly => "name_only",
        }
    }
}

/// The compact binary form of [`FileFacts`] as stored (`FileFacts::encode`): this byte, then the
/// file's distinct strings once, then references, imports and type relations as varints indexing
/// them. JSON (the form before it, starting with `{`) is still read.
const BINARY_V1: u8 = 0xF1;
/// [`BINARY_V1`] with a third flag bit per import: [`Import::reexport`]. What is written now;
/// V1 records (two flag bits) are still read.
const BINARY_V2: u8 = 0xF2;

impl FileFacts {
    /// The stored form: a tenth of the JSON's size on real code (names are written once per file,
    /// numbers as varints).
    pub fn encode<'a>(&'a self) -> Vec<u8> {
        let mut table = Interner::default();
        let mut intern = |s: &'a str| table.id(s);
        let mut body = Vec::new();
        put(&mut body, self.refs.len() as u64);
        for r in &self.refs {
            put(&mut body, intern(&r.name));
            let flags = u64::from(r.call) | (u64::from(r.qualifier.is_some()) << 1);
            put(&mut body, (u64::from(r.line) << 2) | flags);
            if let Some(q) = &r.qualifier {
                put(&mut body, intern(q));
            }
        }
        put(&mut body, self.imports.len() as u64);
        for i in &self.imports {
            put(&mut body, intern(&i.module));
            let flags = u64::from(i.name.is_some())
                | (u64::from(i.alias.is_some()) << 1)
                | (u64::from(i.reexport) << 2);
            put(&mut body, (u64::from(i.line) << IMPORT_FLAGS_V2) | flags);
            for part in [&i.name, &i.alias].into_iter().flatten() {
                put(&mut body, intern(part));
            }
        }
        put(&mut body, self.relations.len() as u64);
        for t in &self.relations {
            put(&mut body, intern(&t.child));
            put(&mut body, intern(&t.parent));
            put(&mut body, u64::from(t.line));
        }
        let mut out = vec![BINARY_V2];
        put(&mut out, table.strings.len() as u64);
        for s in &table.strings {
            put(&mut out, s.len() as u64);
            out.extend_from_slice(s.as_bytes());
        }
        out.extend_from_slice(&body);
        out
    }

    /// Read what [`FileFacts::encode`] wrote, or the JSON form of earlier indices; a clear error
    /// on anything else (a truncated or corrupt record).
    pub fn decode(bytes: &[u8]) -> Result<FileFacts, String> {
        match bytes.first() {
            Some(&BINARY_V1) => decode_binary(&bytes[1..], IMPORT_FLAGS_V1),
            Some(&BINARY_V2) => decode_binary(&bytes[1..], IMPORT_FLAGS_V2),
            Some(b'{') => serde_json::from_slice(bytes).map_err(|e| format!("graph facts: {e}")),
            _ => Err("graph facts: unknown encoding".into()),
        }
    }
}

/// How many low bits of an import's packed line are flags, per version.
const IMPORT_FLAGS_V1: u32 = 2;
const IMPORT_FLAGS_V2: u32 = 3;

/// A file's distinct strings, numbered in order of first use.
#[derive(Default)]
struct Interner<'a> {
    strings: Vec<&'a str>,
    index: std::collections::HashMap<&'a str, u64>,
}

impl<'a> Interner<'a> {
    fn id(&mut self, s: &'a str) -> u64 {
        let next = self.strings.len() as u64;
        *self.index.entry(s).or_insert_with(|| {
            self.strings.push(s);
            next
        })
    }
}

fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn varint(&mut self) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self.bytes.get(self.at).ok_or("graph facts: truncated")?;
            self.at += 1;
            v |= u64::from(b & 0x7F) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("graph facts: varint too long".into())
    }

    fn count(&mut self) -> Result<usize, String> {
        let n = self.varint()?;
        // Every item takes at least one byte: a count beyond the rest is corrupt.
        if n > (self.bytes.len() - self.at) as u64 {
            return Err("graph facts: count beyond the record".into());
        }
        Ok(n as usize)
    }

    fn line(v: u64) -> Result<u32, String> {
        u32::try_from(v).map_err(|_| "graph facts: line out of range".to_string())
    }
}

fn decode_binary(bytes: &[u8], import_flags: u32) -> Result<FileFacts, String> {
    let mut r = Reader { bytes, at: 0 };
    let n = r.count()?;
    let mut strings = Vec::with_capacity(n);
    for _ in 0..n {
        let len = r.count()?;
        let s = std::str::from_utf8(&bytes[r.at..r.at + len])
            .map_err(|_| "graph facts: a name is not UTF-8")?;
        r.at += len;
        strings.push(Arc::<str>::from(s));
    }
    // A reference's names share the file's one copy; the rest own theirs.
    let shared = |r: &mut Reader| -> Result<Arc<str>, String> {
        let i = r.varint()?;
        strings
            .get(i as usize)
            .cloned()
            .ok_or_else(|| "graph facts: name index out of range".to_string())
    };
    let string = |r: &mut Reader| -> Result<String, String> { Ok(shared(r)?.to_string()) };
    // Each list at its exact length: grown by pushes, a file's references held up to twice the
    // room they need, for as long as a graph keeps the facts.
    let mut facts = FileFacts::default();
    let n = r.count()?;
    facts.refs.reserve_exact(n);
    for _ in 0..n {
        let name = shared(&mut r)?;
        let packed = r.varint()?;
        let qualifier = if packed & 2 != 0 {
            Some(shared(&mut r)?)
        } else {
            None
        };
        facts.refs.push(Reference {
            name,
            line: Reader::line(packed >> 2)?,
            call: packed & 1 != 0,
            qualifier,
        });
    }
    let n = r.count()?;
    facts.imports.reserve_exact(n);
    for _ in 0..n {
        let module = string(&mut r)?;
        let packed = r.varint()?;
        let name = if packed & 1 != 0 {
            Some(string(&mut r)?)
        } else {
            None
        };
        let alias = if packed & 2 != 0 {
            Some(string(&mut r)?)
        } else {
            None
        };
        facts.imports.push(Import {
            module,
            name,
            alias,
            line: Reader::line(packed >> import_flags)?,
            reexport: packed & 4 != 0 && import_flags > 2,
        });
    }
    let n = r.count()?;
    facts.relations.reserve_exact(n);
    for _ in 0..n {
        let child = string(&mut r)?;
        let parent = string(&mut r)?;
        let line = Reader::line(r.varint()?)?;
        facts.relations.push(TypeRelation {
            child,
            parent,
            line,
        });
    }
    if r.at != bytes.len() {
        return Err("graph facts: bytes after the record".into());
    }
    Ok(facts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> FileFacts {
        FileFacts {
            refs: vec![
                Reference {
                    name: "open".into(),
                    line: 3,
                    call: true,
                    qualifier: Some("os".into()),
                },
                Reference {
                    name: "open".into(),
                    line: 70_000,
                    call: false,
                    qualifier: None,
                },
                Reference {
                    name: "größe".into(),
                    line: 1,
                    call: true,
                    qualifier: Some("self".into()),
                },
            ],
            imports: vec![
                Import {
                    module: "os.path".into(),
                    name: Some("join".into()),
                    alias: Some("j".into()),
                    line: 1,
                    reexport: false,
                },
                Import {
                    module: "crate::store".into(),
                    name: None,
                    alias: None,
                    line: 2,
                    reexport: false,
                },
                Import {
                    module: "crate::parse".into(),
                    name: Some("Parser".into()),
                    alias: None,
                    line: 80_000,
                    reexport: true,
                },
            ],
            relations: vec![TypeRelation {
                child: "Store".into(),
                parent: "Open".into(),
                line: 9,
            }],
        }
    }

    #[test]
    fn facts_round_trip_through_the_binary_form_and_json_is_still_read() {
        let f = sample();
        let bytes = f.encode();
        assert_eq!(FileFacts::decode(&bytes), Ok(f.clone()));
        let json = serde_json::to_vec(&f).unwrap();
        assert!(
            bytes.len() * 2 < json.len(),
            "{} vs {} bytes",
            bytes.len(),
            json.len()
        );
        assert_eq!(FileFacts::decode(&json), Ok(f));
        assert_eq!(
            FileFacts::decode(&FileFacts::default().encode()),
            Ok(FileFacts::default())
        );
    }

    #[test]
    fn corrupt_facts_are_an_error_not_a_panic() {
        let bytes = sample().encode();
        for cut in 0..bytes.len() {
            assert!(FileFacts::decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut extra = bytes.clone();
        extra.push(0);
        assert!(FileFacts::decode(&extra).is_err());
        assert!(
            FileFacts::decode(&[
                BINARY_V1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01
            ])
            .is_err()
        );
        assert!(FileFacts::decode(b"\x00").is_err());
    }

    /// A record of the first binary form (two flag bits per import, no re-exports) reads as it
    /// was written: the store of an index before re-exports stays readable until re-extracted.
    #[test]
    fn the_first_binary_form_is_still_read() {
        let mut f = sample();
        for i in &mut f.imports {
            i.reexport = false;
        }
        // The V1 writer, as it was: two flag bits under the line.
        let mut strings: Vec<&str> = Vec::new();
        let mut id = |s: &'static str| -> u64 {
            if let Some(i) = strings.iter().position(|x| *x == s) {
                return i as u64;
            }
            strings.push(s);
            strings.len() as u64 - 1
        };
        let mut body = Vec::new();
        put(&mut body, 0);
        put(&mut body, 1);
        put(&mut body, id("os.path"));
        put(&mut body, (7 << 2) | 1);
        put(&mut body, id("join"));
        put(&mut body, 0);
        let mut v1 = vec![BINARY_V1];
        put(&mut v1, strings.len() as u64);
        for s in &strings {
            put(&mut v1, s.len() as u64);
            v1.extend_from_slice(s.as_bytes());
        }
        v1.extend_from_slice(&body);
        let read = FileFacts::decode(&v1).unwrap();
        assert_eq!(
            read.imports,
            vec![Import {
                module: "os.path".into(),
                name: Some("join".into()),
                alias: None,
                line: 7,
                reexport: false,
            }]
        );
        // The current form keeps the flag, on any line.
        let bytes = sample().encode();
        assert_eq!(bytes[0], BINARY_V2);
        assert!(FileFacts::decode(&bytes).unwrap().imports[2].reexport);
    }

    #[test]
    fn local_names() {
        let i = |m: &str, n: Option<&str>, a: Option<&str>| Import {
            module: m.into(),
            name: n.map(Into::into),
            alias: a.map(Into::into),
            line: 1,
            reexport: false,
        };
        assert_eq!(i("a.b", None, None).local_name(), "b");
        assert_eq!(i("github.com/o/r/pkg", None, None).local_name(), "pkg");
        assert_eq!(i("crate::x", Some("Y"), None).local_name(), "Y");
        assert_eq!(i("crate::x", Some("Y"), Some("Z")).local_name(), "Z");
        let f = FileFacts {
            refs: vec![Reference {
                name: "f".into(),
                line: 3,
                call: true,
                qualifier: None,
            }],
            ..Default::default()
        };
        let json = serde_json::to_string(&f).unwrap();
        assert_eq!(serde_json::from_str::<FileFacts>(&json).unwrap(), f);
    }
}
