//! Elixir: every definition is a macro call — `defmodule` (and `defprotocol`, `defimpl`)
//! holds `def`, `defp`, `defmacro`, `defguard`, `defdelegate`. A module's dotted alias is its
//! last part inside the one before it (`Acme.Billing.Invoice` is "Invoice" in "Billing", as a
//! nested `defmodule Invoice` would be), so lookups by `Billing.Invoice` find it. The
//! attributes above a function (`@doc`, `@spec`, `@impl`) are its own.
//!
//! A behaviour declares `@callback`s (and `@macrocallback`s) for other modules to implement:
//! each is a definition of its own, named by its function head, a member of its module, with the
//! `@doc` above it (before, a run of them was trivia of the next `def`, or of nothing, and
//! `patina defs` never found a callback). Its kind is `Type`: a callback is a typespec, as
//! Elixir classes it with `@type` and `@spec` — it declares a function and runs nothing, so a
//! question about how something is done ranks it as a declaration, below the code that
//! implements it (focused and documented, the callbacks of `Ecto.Repo` otherwise led questions
//! that the repository's modules answer).

use tree_sitter::Node;

use super::{Definition, Name::By, Syntax, node_text, normalize};
use patina_core::ChunkKind::{Function, Impl, Interface, Module, Type};

pub(super) static ELIXIR: Syntax = Syntax {
    grammar: || tree_sitter_elixir::LANGUAGE.into(),
    // Container or not depends on the macro called: `By(call)` decides.
    rules: &[
        super::container("call", Function, By(call)),
        super::member("unary_operator", Type, By(callback)),
    ],
    wrappers: &[],
    trivia: &["unary_operator"],
};

fn call(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let target = node.child_by_field_name("target")?;
    if target.kind() != "identifier" {
        return None;
    }
    let arguments = first_named(node, "arguments")?;
    let head = arguments.named_child(0)?;
    definition.container = false;
    match node_text(target, src) {
        "defmodule" | "defprotocol" => {
            definition.container = true;
            definition.kind = if node_text(target, src) == "defmodule" {
                Module
            } else {
                Interface
            };
            (definition.symbol, definition.owner) = alias(head, src)?;
        }
        "defimpl" => {
            definition.container = true;
            definition.kind = Impl;
            let (protocol, _) = alias(head, src)?;
            let protocol = protocol?;
            let implemented = for_type(arguments, src);
            definition.symbol = Some(match &implemented {
                Some(ty) => format!("{protocol} for {ty}"),
                None => protocol,
            });
            definition.member_parent = implemented;
        }
        "def" | "defp" | "defmacro" | "defmacrop" | "defguard" | "defguardp" | "defdelegate" => {
            definition.symbol = function_name(head, src);
        }
        _ => return None,
    }
    definition.symbol.as_ref().map(|_| ())
}

/// `@callback fetch(key) :: {:ok, term}` (or `@macrocallback`) → "fetch". Any other attribute is
/// no definition: it is trivia of the definition below it (`@doc`, `@spec`, `@impl`).
fn callback(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let head = callback_head(node, src)?;
    definition.container = false;
    definition.symbol = function_name(head, src);
    definition.symbol.as_ref().map(|_| ())
}

/// The function head a `@callback` / `@macrocallback` attribute declares (its spec's left side).
fn callback_head<'t>(node: Node<'t>, src: &str) -> Option<Node<'t>> {
    let call = node.child_by_field_name("operand")?;
    if call.kind() != "call" {
        return None;
    }
    let target = call.child_by_field_name("target")?;
    if !matches!(node_text(target, src), "callback" | "macrocallback") {
        return None;
    }
    first_named(call, "arguments")?.named_child(0)
}

/// `Acme.Billing.Invoice` → ("Invoice", "Billing").
fn alias(node: Node<'_>, src: &str) -> Option<(Option<String>, Option<String>)> {
    if node.kind() != "alias" {
        return None;
    }
    let text = node_text(node, src);
    let mut parts = text.rsplit('.');
    let name = normalize(parts.next()?);
    Some((name, parts.next().and_then(normalize)))
}

/// The `Type` of `defimpl Proto, for: Type`.
fn for_type(arguments: Node<'_>, src: &str) -> Option<String> {
    let keywords = first_named(arguments, "keywords")?;
    let mut cursor = keywords.walk();
    let pair = keywords.named_children(&mut cursor).find(|pair| {
        pair.child_by_field_name("key")
            .is_some_and(|key| node_text(key, src).trim() == "for:")
    })?;
    alias(pair.child_by_field_name("value")?, src)?.0
}

/// The name in a function head: `f(a)`, `f`, `f(a) when guard`, `f \\ default`.
fn function_name(mut head: Node<'_>, src: &str) -> Option<String> {
    for _ in 0..4 {
        match head.kind() {
            "identifier" => return normalize(node_text(head, src)),
            "call" => {
                let target = head.child_by_field_name("target")?;
                return (target.kind() == "identifier")
                    .then(|| normalize(node_text(target, src)))
                    .flatten();
            }
            "binary_operator" => head = head.child_by_field_name("left")?,
            _ => return None,
        }
    }
    None
}

fn first_named<'t>(node: Node<'t>, kind: &str) -> Option<Node<'t>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .find(|child| child.kind() == kind)
}
