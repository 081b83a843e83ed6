//! Julia: `module` holds its definitions; `function f(…) … end`, the short form `f(x) = …` (with
//! or without `where`), and `macro m(…) … end` are functions — a method added to another
//! module's function (`Base.show(io, x) = …`) is named by the function; `struct` and `mutable
//! struct` are structs, `abstract type` and `primitive type` types, named without their
//! parameters and supertype (`Invoice{T} <: AbstractDocument` → `Invoice`); a test set
//! (`@testset "totals" begin … end`) is a function named by its description. A docstring above a
//! definition attaches to it, as comments do.

use tree_sitter::Node;

use super::{
    Definition, Name::By, Name::Field, Syntax, container, first_named_child, leaf, named,
    node_text, normalize,
};
use patina_core::ChunkKind::{Function, Module, Struct, Type};

pub(super) static JULIA: Syntax = Syntax {
    grammar: || tree_sitter_julia::LANGUAGE.into(),
    rules: &[
        container("module_definition", Module, Field("name")),
        leaf("function_definition", Function, By(signature)),
        leaf("macro_definition", Function, By(signature)),
        leaf("assignment", Function, By(short_function)),
        leaf("struct_definition", Struct, By(type_head)),
        leaf("abstract_definition", Type, By(type_head)),
        leaf("primitive_definition", Type, By(type_head)),
        leaf("macrocall_expression", Function, By(testset)),
    ],
    wrappers: &[],
    trivia: &["string_literal"],
};

/// `function total(inv::Invoice)` / `macro cents(x)`: the name its signature calls.
fn signature(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let signature = first_named_child(node, "signature")?;
    let mut c = signature.walk();
    let head = signature.named_children(&mut c).next()?;
    definition.symbol = match head.kind() {
        // `function finish end`: a function without methods yet.
        "identifier" => normalize(node_text(head, src)),
        _ => called_name(head, src),
    };
    definition.symbol.as_ref().map(|_| ())
}

/// `shipping(inv::Invoice) = …`, `Base.show(io::IO, x) = …`, `f(x::T) where {T} = …`.
fn short_function(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let lhs = node.named_child(0)?;
    if !matches!(lhs.kind(), "call_expression" | "where_expression") {
        return None;
    }
    definition.symbol = called_name(lhs, src);
    definition.symbol.as_ref().map(|_| ())
}

/// The function a call-shaped head names: `f(…)` → `f`, `Base.show(…)` → `show`, `f(…) where T`
/// → `f`, `(f::Foo)(x)` (a functor) → none.
fn called_name(head: Node<'_>, src: &str) -> Option<String> {
    let mut at = head;
    loop {
        match at.kind() {
            "where_expression" | "typed_expression" => at = at.named_child(0)?,
            "call_expression" => at = at.named_child(0)?,
            "field_expression" => {
                let mut c = at.walk();
                at = at
                    .named_children(&mut c)
                    .filter(|n| n.kind() == "identifier")
                    .last()?;
            }
            "curly_expression" => at = at.named_child(0)?,
            "identifier" | "operator" => return normalize(node_text(at, src)),
            _ => return None,
        }
    }
}

/// `struct Invoice{T} <: AbstractDocument`: `Invoice`.
fn type_head(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let head = first_named_child(node, "type_head")?;
    let mut at = head.named_child(0)?;
    loop {
        match at.kind() {
            "binary_expression" | "curly_expression" | "parametrized_type_expression" => {
                at = at.named_child(0)?
            }
            "identifier" => break,
            _ => return None,
        }
    }
    named(definition, node_text(at, src))
}

/// `@testset "totals" begin … end`: a test named by its description.
fn testset(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let mut c = node.walk();
    let mut children = node.named_children(&mut c);
    let name = children.next()?;
    if name.kind() != "macro_identifier" || node_text(name, src) != "@testset" {
        return None;
    }
    let mut stack: Vec<Node<'_>> = children.collect();
    stack.reverse();
    while let Some(n) = stack.pop() {
        match n.kind() {
            "string_literal" => {
                let text = node_text(n, src).trim_matches('"');
                return named(definition, text);
            }
            "macro_argument_list" => {
                let mut c = n.walk();
                let mut inner: Vec<Node<'_>> = n.named_children(&mut c).collect();
                inner.reverse();
                stack.extend(inner);
            }
            _ => return None,
        }
    }
    None
}
