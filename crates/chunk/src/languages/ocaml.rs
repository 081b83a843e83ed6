//! OCaml, implementations (`.ml`) and interfaces (`.mli`, their own grammar): each binding of a
//! `let` (`let total inv = …`, and each `and`) is a definition — a function when it takes
//! parameters or is a `fun`/`function`, else a constant; `type` bindings are structs (records),
//! enums (variants) or types; `exception`s are types; `module M = struct … end` (functors too) and
//! `module M : sig … end` hold their definitions, `module type S = sig … end` is an interface of
//! its `val`s; classes hold their methods; `external`s and `val`s are functions. A module alias
//! (`module S = Support.Money`) and `let () = …` are lines of the file. Doc comments `(** … *)`
//! attach as comments, and also from right below a definition ([`documented_below`]).

use tree_sitter::Node;

use super::{Definition, Name::By, Syntax, container, first_named_child, leaf, named, node_text};
use patina_core::ChunkKind::{
    Class, Const, Enum, Function, Interface, Method, Module, Struct, Type,
};

/// Rules shared by both grammars.
macro_rules! ocaml_rules {
    () => {
        &[
            leaf("let_binding", Function, By(let_binding)),
            leaf("type_binding", Type, By(type_binding)),
            leaf("exception_definition", Type, By(exception)),
            container("module_binding", Module, By(module_binding)),
            container("module_type_definition", Interface, By(module_type_name)),
            container("class_binding", Class, By(class_name)),
            leaf("method_definition", Method, By(method_name)),
            leaf("value_specification", Function, By(value_name)),
            leaf("external", Function, By(value_name)),
        ]
    };
}

pub(super) static OCAML: Syntax = Syntax {
    grammar: || tree_sitter_ocaml::LANGUAGE_OCAML.into(),
    rules: ocaml_rules!(),
    // `let … and …` and `type … and …` hold their bindings; comments above belong to the first.
    wrappers: &["value_definition", "type_definition"],
    trivia: &[],
};

pub(super) static OCAML_INTERFACE: Syntax = Syntax {
    grammar: || tree_sitter_ocaml::LANGUAGE_OCAML_INTERFACE.into(),
    rules: ocaml_rules!(),
    // `let … and …` and `type … and …` hold their bindings; comments above belong to the first.
    wrappers: &["value_definition", "type_definition"],
    trivia: &[],
};

/// `module type PRINTABLE = sig … end`.
fn module_type_name(node: Node<'_>, src: &str, _: bool, d: &mut Definition) -> Option<()> {
    by_child(node, src, "module_type_name", d)
}

/// `class printer = object … end`.
fn class_name(node: Node<'_>, src: &str, _: bool, d: &mut Definition) -> Option<()> {
    by_child(node, src, "class_name", d)
}

/// `method print inv = …`.
fn method_name(node: Node<'_>, src: &str, _: bool, d: &mut Definition) -> Option<()> {
    by_child(node, src, "method_name", d)
}

/// `val total : invoice -> int`, `external length : string -> int = "%string_length"`.
fn value_name(node: Node<'_>, src: &str, _: bool, d: &mut Definition) -> Option<()> {
    by_child(node, src, "value_name", d)
}

/// The definition named by its first child of `kind`.
fn by_child(node: Node<'_>, src: &str, kind: &str, definition: &mut Definition) -> Option<()> {
    let name = first_named_child(node, kind)?;
    named(definition, node_text(name, src))
}

/// `let total inv = …` (a function) or `let max_lines = 100` (a constant); not `let () = …`.
fn let_binding(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let pattern = node.child_by_field_name("pattern")?;
    if pattern.kind() != "value_name" {
        return None;
    }
    let takes_parameters = first_named_child(node, "parameter").is_some()
        || node
            .child_by_field_name("body")
            .is_some_and(|b| matches!(b.kind(), "fun_expression" | "function_expression"));
    definition.kind = if takes_parameters { Function } else { Const };
    named(definition, node_text(pattern, src))
}

/// `type invoice = { … }` (a struct), `type status = Open | Paid of int` (an enum), else a type.
fn type_binding(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let name = node.child_by_field_name("name")?;
    definition.kind = match node.child_by_field_name("body").map(|b| b.kind()) {
        Some("record_declaration") => Struct,
        Some("variant_declaration") => Enum,
        _ => Type,
    };
    named(definition, node_text(name, src))
}

/// `exception Unpaid of string`: the type `Unpaid`.
fn exception(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let constructor = first_named_child(node, "constructor_declaration")?;
    by_child(constructor, src, "constructor_name", definition)
}

/// `module Ledger = struct … end`, a functor, or `module Ledger : sig … end`; an alias (`module S
/// = Support.Money`) is no definition.
fn module_binding(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let body = node
        .child_by_field_name("body")
        .or_else(|| node.child_by_field_name("module_type"));
    if body.is_some_and(|b| matches!(b.kind(), "module_path" | "module_type_path")) {
        return None;
    }
    by_child(node, src, "module_name", definition)
}

/// ocamldoc's rule for the comment below an item: `(** … *)` on the line right after a definition
/// documents it (the convention of `.mli` files, `val create : …` then its documentation) unless
/// it also touches the item after it (`next_start`, that item's first row with the comments
/// attached above it), which it then documents instead. The last row of that comment, if `end`
/// (a definition's last row) is followed by one. A comment that shares its last line with code,
/// or does not close within 1,000 lines, documents nothing.
pub(crate) fn documented_below(
    lines: &[&str],
    end: usize,
    next_start: Option<usize>,
) -> Option<usize> {
    let first = end + 1;
    let opening = lines.get(first)?.trim_start();
    if !opening.starts_with("(**") || opening.starts_with("(**)") {
        return None;
    }
    let mut depth = 0usize;
    for (row, line) in lines.iter().enumerate().skip(first).take(1000) {
        let mut rest = *line;
        while let Some(at) = rest.find(['(', '*']) {
            let here = &rest[at..];
            if let Some(after) = here.strip_prefix("(*") {
                depth += 1;
                rest = after;
            } else if let Some(after) = here.strip_prefix("*)") {
                depth = depth.checked_sub(1)?;
                rest = after;
                if depth == 0 {
                    let touches_next = next_start.is_some_and(|next| next <= row + 1);
                    return (rest.trim().is_empty() && !touches_next).then_some(row);
                }
            } else {
                rest = &here[1..];
            }
        }
    }
    None
}
