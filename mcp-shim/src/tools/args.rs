//! Tool arguments: every tool deserializes its `arguments` into one struct, and its `inputSchema`
//! is generated from that same struct (`schemars`), so what the schema promises and what is
//! accepted cannot drift apart.
//!
//! Agents are sloppy in predictable ways, so the value types here are lenient where the old
//! hand-written checks were: `null` and (for string arguments) an empty string mean "not given",
//! integers and booleans may come as strings (`"10"`, `"true"`), a list may be a single string,
//! choices ignore case. Everything else is an error that names the argument and says what it
//! must be, so the agent can correct its call.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value, json};

/// `T`'s JSON schema as a tool's `inputSchema`: inlined, without the `null` that `Option` adds
/// (an argument is optional by being absent, and `null` counts as absent), no title.
pub(crate) fn input_schema<T: JsonSchema>() -> Value {
    let mut settings = schemars::generate::SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    settings.meta_schema = None;
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut v = schema.to_value();
    if let Some(obj) = v.as_object_mut() {
        obj.remove("title");
        obj.remove("description");
        // An empty struct: say so explicitly (the MCP schema wants `properties`).
        obj.entry("properties").or_insert_with(|| json!({}));
    }
    strip_null(&mut v);
    v
}

/// Remove `null` from `type` lists and `enum`s, recursively.
fn strip_null(v: &mut Value) {
    match v {
        Value::Object(m) => {
            if let Some(Value::Array(types)) = m.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let only = types.pop().expect("one type");
                    m.insert("type".into(), only);
                }
            }
            if let Some(Value::Array(values)) = m.get_mut("enum") {
                values.retain(|e| !e.is_null());
            }
            m.values_mut().for_each(strip_null);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_null),
        _ => {}
    }
}

/// `arguments` of `tool` as `T`, checked against `schema` (generated from `T`): unknown names are
/// refused with the list of known ones, `null`s and blank strings of string arguments are
/// dropped, a missing required argument is named with its description, and a value of the wrong
/// type or out of range is named with what it must be.
pub(crate) fn parse<T: DeserializeOwned>(
    tool: &str,
    schema: &Value,
    mut arguments: Map<String, Value>,
) -> Result<T, String> {
    let properties = schema["properties"].as_object();
    let known: Vec<&str> = properties
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default();
    if let Some(k) = arguments.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(format!(
            "unknown argument '{k}' for {tool}; it takes: {}",
            if known.is_empty() {
                "no arguments".to_string()
            } else {
                known.join(", ")
            }
        ));
    }
    arguments.retain(|k, v| {
        let string_arg = properties.and_then(|p| p[k]["type"].as_str()) == Some("string");
        let blank = string_arg && v.as_str().is_some_and(|s| s.trim().is_empty());
        !v.is_null() && !blank
    });
    for r in schema["required"].as_array().into_iter().flatten() {
        let r = r.as_str().unwrap_or_default();
        if !arguments.contains_key(r) {
            let what = properties
                .and_then(|p| p[r]["description"].as_str())
                .unwrap_or("");
            return Err(format!("missing required argument '{r}' of {tool}: {what}"));
        }
    }
    serde_path_to_error::deserialize(Value::Object(arguments)).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        if path == "." || path.is_empty() {
            format!("arguments of {tool}: {inner}")
        } else {
            format!("argument '{path}' of {tool} {inner}")
        }
    })
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A string argument.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Str(pub String);

impl<'de> Deserialize<'de> for Str {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(s) => Ok(Str(s)),
            v => Err(D::Error::custom(format!(
                "must be a string, not {}",
                type_name(&v)
            ))),
        }
    }
}

impl JsonSchema for Str {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "Str".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string"})
    }
}

/// An integer argument in `MIN..=MAX`; numeric strings are accepted.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Int<const MIN: u64, const MAX: u64>(pub u64);

impl<'de, const MIN: u64, const MAX: u64> Deserialize<'de> for Int<MIN, MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        let n = match &v {
            Value::Number(n) => n.as_u64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                    .map(|f| f as u64)
            }),
            Value::String(s) => s.trim().parse::<u64>().ok(),
            _ => None,
        };
        match n {
            Some(n) if (MIN..=MAX).contains(&n) => Ok(Int(n)),
            _ if matches!(v, Value::Number(_) | Value::String(_)) => Err(D::Error::custom(
                format!("must be an integer from {MIN} to {MAX}, not {v}"),
            )),
            _ => Err(D::Error::custom(format!(
                "must be an integer, not {}",
                type_name(&v)
            ))),
        }
    }
}

impl<const MIN: u64, const MAX: u64> Serialize for Int<MIN, MAX> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

impl<const MIN: u64, const MAX: u64> JsonSchema for Int<MIN, MAX> {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        format!("Int_{MIN}_{MAX}").into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "integer", "minimum": MIN, "maximum": MAX})
    }
}

/// A boolean argument; `"true"`/`"false"` are accepted.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Flag(pub bool);

impl<'de> Deserialize<'de> for Flag {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Bool(b) => Ok(Flag(b)),
            Value::String(s) if s == "true" || s == "false" => Ok(Flag(s == "true")),
            v => Err(D::Error::custom(format!(
                "must be a boolean, not {}",
                type_name(&v)
            ))),
        }
    }
}

impl Serialize for Flag {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bool(self.0)
    }
}

impl JsonSchema for Flag {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "Flag".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "boolean"})
    }
}

fn strings<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    match Value::deserialize(d)? {
        Value::String(s) => Ok(vec![s]),
        Value::Array(items) => items
            .into_iter()
            .map(|i| match i {
                Value::String(s) => Ok(s),
                other => Err(D::Error::custom(format!(
                    "must be an array of strings, not {}",
                    type_name(&other)
                ))),
            })
            .collect(),
        v => Err(D::Error::custom(format!(
            "must be an array of strings, not {}",
            type_name(&v)
        ))),
    }
}

/// A list of strings (a single string counts as a list of one).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct List(pub Vec<String>);

impl<'de> Deserialize<'de> for List {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        strings(d).map(List)
    }
}

impl JsonSchema for List {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "List".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "array", "items": {"type": "string"}})
    }
}

/// One string or a list of them, and advertised as such.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct OneOrMany(pub Vec<String>);

impl<'de> Deserialize<'de> for OneOrMany {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        strings(d).map(OneOrMany)
    }
}

impl JsonSchema for OneOrMany {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "OneOrMany".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": ["string", "array"], "items": {"type": "string"}})
    }
}

/// A role filter: role names, `!name` excludes one (`patina_proto::roles::parse_filter`).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Roles {
    /// Wire roles to keep (empty: every role).
    pub include: Vec<i32>,
    /// Wire roles to leave out.
    pub exclude: Vec<i32>,
}

impl<'de> Deserialize<'de> for Roles {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let names = strings(d)?;
        let (include, exclude) = patina_proto::roles::parse_filter(&names)
            .map_err(|e| D::Error::custom(format!("is not a role filter: {e}")))?;
        Ok(Roles { include, exclude })
    }
}

impl JsonSchema for Roles {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "Roles".into()
    }
    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        OneOrMany::json_schema(g)
    }
}

/// A closed set of lowercase names, matched case-insensitively, advertised as a string `enum`.
macro_rules! choice {
    ($(#[$doc:meta])* $name:ident { $($variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(crate) enum $name { $($variant),+ }

        impl $name {
            pub(crate) const ALL: &[$name] = &[$($name::$variant),+];

            pub(crate) fn name(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                use serde::de::Error as _;
                let v = serde_json::Value::deserialize(d)?;
                let found = v.as_str().and_then(|s| {
                    $name::ALL.iter().copied().find(|c| c.name().eq_ignore_ascii_case(s.trim()))
                });
                found.ok_or_else(|| {
                    let names: Vec<&str> = $name::ALL.iter().map(|c| c.name()).collect();
                    let got = match &v {
                        serde_json::Value::String(s) => format!("'{s}'"),
                        other => other.to_string(),
                    };
                    D::Error::custom(format!("must be one of {}, not {got}", names.join(", ")))
                })
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }

        impl schemars::JsonSchema for $name {
            fn inline_schema() -> bool {
                true
            }
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                let names: Vec<&str> = $name::ALL.iter().map(|c| c.name()).collect();
                schemars::json_schema!({"type": "string", "enum": names})
            }
        }
    };
}
pub(crate) use choice;

#[cfg(test)]
mod tests {
    use super::*;

    choice!(Color { Red = "red", Blue = "blue" });

    /// A test tool's arguments.
    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Args {
        /// What to look for.
        query: Str,
        /// How many.
        #[serde(default = "ten")]
        limit: Int<1, 100>,
        /// A color.
        color: Option<Color>,
        /// Show it.
        #[serde(default)]
        flag: Flag,
        /// Tags.
        #[serde(default)]
        tags: List,
    }

    fn ten() -> Int<1, 100> {
        Int(10)
    }

    fn call(args: Value) -> Result<Args, String> {
        let schema = input_schema::<Args>();
        let Value::Object(map) = args else {
            panic!("an object")
        };
        parse("t", &schema, map)
    }

    #[test]
    fn the_schema_is_generated_inline_without_nulls() {
        assert_eq!(
            input_schema::<Args>(),
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What to look for."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10, "description": "How many."},
                    "color": {"type": "string", "enum": ["red", "blue"], "description": "A color."},
                    "flag": {"type": "boolean", "default": false, "description": "Show it."},
                    "tags": {"type": "array", "items": {"type": "string"}, "description": "Tags."}
                },
                "required": ["query"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn lenient_values_and_errors_that_name_the_argument() {
        let a = call(
            json!({"query": "x", "limit": "7", "color": "RED", "flag": "true", "tags": "one"}),
        )
        .unwrap();
        assert_eq!(
            (a.query.0.as_str(), a.limit.0, a.color, a.flag.0, a.tags.0),
            ("x", 7, Some(Color::Red), true, vec!["one".to_string()])
        );
        let a = call(json!({"query": "x", "color": "", "limit": null})).unwrap();
        assert_eq!((a.limit.0, a.color), (10, None));
        for (args, says) in [
            (
                json!({}),
                "missing required argument 'query' of t: What to look for.",
            ),
            (json!({"query": "  "}), "missing required argument 'query'"),
            (
                json!({"query": 5}),
                "argument 'query' of t must be a string, not a number",
            ),
            (
                json!({"query": "x", "limit": 0}),
                "argument 'limit' of t must be an integer from 1 to 100, not 0",
            ),
            (
                json!({"query": "x", "limit": "ten"}),
                "argument 'limit' of t must be an integer from 1 to 100",
            ),
            (
                json!({"query": "x", "limit": true}),
                "argument 'limit' of t must be an integer, not a boolean",
            ),
            (
                json!({"query": "x", "color": "green"}),
                "argument 'color' of t must be one of red, blue, not 'green'",
            ),
            (
                json!({"query": "x", "flag": 3}),
                "argument 'flag' of t must be a boolean",
            ),
            (
                json!({"query": "x", "tags": 5}),
                "argument 'tags' of t must be an array of strings",
            ),
            (
                json!({"query": "x", "limt": 5}),
                "unknown argument 'limt' for t; it takes: color, flag, limit, query, tags",
            ),
        ] {
            let e = call(args.clone()).expect_err(&args.to_string());
            assert!(e.starts_with(says), "{args}: {e}");
        }
    }
}
