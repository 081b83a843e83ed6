//! Elixir's facts. Every construct is a call: `def`/`defmodule`/… define (their heads are no
//! references), `alias`, `import`, `require` and `use` import modules (`alias A.B.{C, D}` two of
//! them, `alias A.B, as: X` under a name), special forms (`if`, `case`, …) are no calls, and the
//! rest are calls of a local function or of `Module.function`. `defimpl P, for: T` relates `T`
//! to the protocol `P`.

use tree_sitter::Node;

use super::{Extractor, last_segment};

/// Special forms and kernel macros that read as calls but name nothing of the repository.
const FORMS: &[&str] = &[
    "if",
    "unless",
    "case",
    "cond",
    "with",
    "for",
    "try",
    "receive",
    "quote",
    "unquote",
    "unquote_splicing",
    "raise",
    "reraise",
    "throw",
    "super",
    "__MODULE__",
    "defstruct",
    "defexception",
    "defoverridable",
    "import",
    "require",
    "alias",
    "use",
];

/// Macros that define; their head names the definition.
const DEFINERS: &[&str] = &[
    "def",
    "defp",
    "defmacro",
    "defmacrop",
    "defguard",
    "defguardp",
    "defdelegate",
    "defmodule",
    "defprotocol",
    "defimpl",
];

impl<'a> Extractor<'a> {
    pub(super) fn elixir(&mut self, node: Node<'_>) {
        if node.kind() != "call" || self.skip.contains(&node.id()) {
            return;
        }
        let Some(target) = node.child_by_field_name("target") else {
            return;
        };
        let arguments = {
            let mut c = node.walk();
            node.named_children(&mut c)
                .find(|n| n.kind() == "arguments")
        };
        match target.kind() {
            "identifier" => {
                self.skip.insert(target.id());
                let name = self.text(target);
                if DEFINERS.contains(&name) {
                    if let Some(head) = arguments.and_then(|a| a.named_child(0)) {
                        self.skip_all(head);
                    }
                    if name == "defimpl" {
                        self.elixir_impl(node, arguments);
                    }
                } else if matches!(name, "alias" | "import" | "require" | "use") {
                    if let Some(arguments) = arguments {
                        self.elixir_import(name, arguments, node);
                    }
                    self.skip_all(node);
                } else if !FORMS.contains(&name) {
                    self.reference(target, true, None);
                }
            }
            "dot" => {
                let (Some(left), Some(right)) = (
                    target.child_by_field_name("left"),
                    target.child_by_field_name("right"),
                ) else {
                    return;
                };
                if right.kind() == "identifier" {
                    let q = last_segment(self.text(left)).to_string();
                    self.skip.insert(right.id());
                    self.reference(right, true, Some(q));
                }
            }
            _ => {}
        }
    }

    /// `alias A.B`, `alias A.B, as: X`, `alias A.{B, C}`, `import A`, `require A`, `use A`.
    fn elixir_import(&mut self, macro_name: &str, arguments: Node<'_>, at: Node<'_>) {
        let Some(first) = arguments.named_child(0) else {
            return;
        };
        match first.kind() {
            "alias" => {
                let full = self.text(first);
                if macro_name == "alias" {
                    let alias = self.elixir_keyword(arguments, "as:");
                    match full.rsplit_once('.') {
                        Some((module, name)) => self.import(module, Some(name), alias, at),
                        None => self.import(full, None, alias, at),
                    }
                } else {
                    let name = (macro_name == "import").then_some("*");
                    self.import(full, name, None, at);
                }
            }
            "dot" => {
                let (Some(left), Some(right)) = (
                    first.child_by_field_name("left"),
                    first.child_by_field_name("right"),
                ) else {
                    return;
                };
                if right.kind() != "tuple" {
                    return;
                }
                let module = self.text(left);
                let mut c = right.walk();
                let names: Vec<&str> = right
                    .named_children(&mut c)
                    .filter(|n| n.kind() == "alias")
                    .map(|n| self.text(n))
                    .collect();
                for name in names {
                    match name.rsplit_once('.') {
                        Some((inner, last)) => {
                            self.import(&format!("{module}.{inner}"), Some(last), None, at)
                        }
                        None => self.import(module, Some(name), None, at),
                    }
                }
            }
            _ => {}
        }
    }

    /// The value of a keyword argument (`as: X`), as written.
    fn elixir_keyword(&self, arguments: Node<'_>, key: &str) -> Option<&'a str> {
        let mut c = arguments.walk();
        let keywords = arguments
            .named_children(&mut c)
            .find(|n| n.kind() == "keywords")?;
        let mut c = keywords.walk();
        let pair = keywords.named_children(&mut c).find(|pair| {
            pair.child_by_field_name("key")
                .is_some_and(|k| self.text(k).trim() == key)
        })?;
        pair.child_by_field_name("value").map(|v| self.text(v))
    }

    /// `defimpl Proto, for: Type`: `Type` implements `Proto`.
    fn elixir_impl(&mut self, node: Node<'_>, arguments: Option<Node<'_>>) {
        let Some(arguments) = arguments else { return };
        let (Some(protocol), Some(ty)) = (
            arguments.named_child(0).map(|p| self.text(p)),
            self.elixir_keyword(arguments, "for:"),
        ) else {
            return;
        };
        self.relation(last_segment(ty), protocol, node);
    }
}
