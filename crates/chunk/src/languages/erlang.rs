//! Erlang: a function is the run of its clauses (`total([]) -> …; total([L | Rest]) -> …`, each
//! clause a declaration of its own in the grammar, read as one definition); records, types
//! (`-type`, `-opaque`), macros (`-define`) and a behaviour's `-callback`s are definitions too. A `-spec` or `-doc` above a
//! function attaches to it, as comments do. The module is the file (`-module(invoice).` in
//! `invoice.erl`).

use tree_sitter::Node;

use super::{Definition, Name::By, Name::Field, Syntax, equation, leaf, named, node_text};
use patina_core::ChunkKind::{Const, Function, Struct, Type};

pub(super) static ERLANG: Syntax = Syntax {
    grammar: || tree_sitter_erlang::LANGUAGE.into(),
    rules: &[
        equation("fun_decl", Function, By(clause)),
        // A behaviour's `-callback upgrade(…) -> …`, its variants by arity as one.
        equation("callback", Function, Field("fun")),
        leaf("record_decl", Struct, Field("name")),
        leaf("type_alias", Type, By(type_name)),
        leaf("opaque", Type, By(type_name)),
        leaf("pp_define", Const, By(define)),
    ],
    wrappers: &[],
    trivia: &["spec", "wild_attribute"],
};

/// A function clause's name: `total([]) -> …` → `total`.
fn clause(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let clause = node.child_by_field_name("clause")?;
    let name = clause.child_by_field_name("name")?;
    named(definition, node_text(name, src).trim_matches('\''))
}

/// `-type status() :: open | paid.` → `status`.
fn type_name(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let ty = node.child_by_field_name("name")?;
    let name = ty.child_by_field_name("name")?;
    named(definition, node_text(name, src).trim_matches('\''))
}

/// `-define(SHIPPING, 450).` → `SHIPPING`; `-define(fee(X), X * 2).` → `fee`.
fn define(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let lhs = node.child_by_field_name("lhs")?;
    let name = lhs.child_by_field_name("name")?;
    named(definition, node_text(name, src).trim_matches('\''))
}
