//! What a source file says about the code around it, as the dependency graph needs it: the names
//! it references (calls among them), what it imports, and the type relations it declares. Plain
//! data extracted by `patina-chunk`, stored per file by `patina-index`, resolved to definitions by
//! the graph table there. Short serialized field names: one record per indexed file.

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
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct Reference {
    #[serde(rename = "n")]
    pub name: String,
    /// 1-based line.
    #[serde(rename = "l")]
    pub line: u32,
    #[serde(rename = "c", default, skip_serializing_if = "std::ops::Not::not")]
    pub call: bool,
    /// What the name was reached through: `pkg` of Go's `pkg.Func`, `os.path` of Python's
    /// `os.path.join`, `Type` of Rust's `Type::new`, `self`/`this` for members.
    #[serde(rename = "q", default, skip_serializing_if = "Option::is_none")]
    pub qualifier: Option<String>,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_names() {
        let i = |m: &str, n: Option<&str>, a: Option<&str>| Import {
            module: m.into(),
            name: n.map(Into::into),
            alias: a.map(Into::into),
            line: 1,
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
