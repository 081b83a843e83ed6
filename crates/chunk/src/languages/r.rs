//! R: a function is a value assigned to a name (`total <- function(lines) …`, `=` or `<<-`
//! alike). A class made by `R6Class(…)` or `setRefClass(…)` and assigned to a name holds the
//! functions of its lists (`public = list(add = function(entry) …)`) as its methods. S4's
//! `setClass("Invoice", …)` is a class, `setGeneric("settle", …)` a function and
//! `setMethod("settle", "Invoice", function …)` a method of `Invoice`; testthat's
//! `test_that("…", { … })` is a function named by its description. roxygen's `#'` comments
//! attach as comments. Other assignments are lines of the file.

use tree_sitter::Node;

use super::{Definition, Name::By, Syntax, leaf, member, named, node_text, normalize};
use patina_core::ChunkKind::{Class, Function, Method};

pub(super) static R: Syntax = Syntax {
    grammar: || tree_sitter_r::LANGUAGE.into(),
    rules: &[
        leaf("binary_operator", Function, By(assignment)),
        member("argument", Method, By(list_member)),
        leaf("call", Class, By(s4)),
    ],
    wrappers: &[],
    trivia: &[],
};

/// Classes made by a call assigned to a name, whose lists hold their methods.
const CLASS_MAKERS: &[&str] = &["R6Class", "setRefClass"];

/// `name <- function(…) …` (a function) or `Name <- R6Class(…)` (a class holding its methods).
fn assignment(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let operator = node_text(node.child_by_field_name("operator")?, src);
    if !matches!(operator, "<-" | "<<-" | "=" | ":=") {
        return None;
    }
    let lhs = node.child_by_field_name("lhs")?;
    if !matches!(lhs.kind(), "identifier" | "string") {
        return None;
    }
    let rhs = node.child_by_field_name("rhs")?;
    match rhs.kind() {
        "function_definition" => definition.kind = Function,
        "call" if callee(rhs, src).is_some_and(|f| CLASS_MAKERS.contains(&f)) => {
            definition.kind = Class;
            definition.container = true;
        }
        _ => return None,
    }
    named(
        definition,
        node_text(lhs, src).trim_matches(['"', '\'', '`']),
    )
}

/// `add = function(entry) …` in a class's list: a method.
fn list_member(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let value = node.child_by_field_name("value")?;
    if value.kind() != "function_definition" {
        return None;
    }
    let name = node.child_by_field_name("name")?;
    named(
        definition,
        node_text(name, src).trim_matches(['"', '\'', '`']),
    )
}

/// S4: `setClass("Invoice", …)`, `setRefClass("Ledger", …)` when not assigned (assigned, the
/// assignment is the class), `setGeneric("settle", …)`, `setMethod("settle", "Invoice", …)`.
fn s4(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let f = callee(node, src)?;
    let strings = || {
        let arguments = node.child_by_field_name("arguments")?;
        let mut c = arguments.walk();
        let values: Vec<String> = arguments
            .named_children(&mut c)
            .filter(|a| a.kind() == "argument" && a.child_by_field_name("name").is_none())
            .map_while(|a| {
                let v = a.child_by_field_name("value")?;
                (v.kind() == "string")
                    .then(|| v.child_by_field_name("content"))
                    .flatten()
                    .map(|c| node_text(c, src).to_string())
            })
            .collect();
        Some(values)
    };
    match f {
        "setClass" | "setRefClass" => {
            if node.parent().is_some_and(|p| p.kind() == "binary_operator") {
                return None;
            }
            definition.kind = Class;
            definition.symbol = normalize(strings()?.first()?);
        }
        // testthat's `test_that("humidity is a mean", { … })`: a test, named by what it says.
        "test_that" => {
            definition.kind = Function;
            definition.symbol = normalize(strings()?.first()?);
        }
        "setGeneric" => {
            definition.kind = Function;
            definition.symbol = normalize(strings()?.first()?);
        }
        "setMethod" => {
            let names = strings()?;
            definition.kind = Method;
            definition.symbol = normalize(names.first()?);
            definition.owner = names.get(1).and_then(|o| normalize(o));
        }
        _ => return None,
    }
    definition.symbol.as_ref().map(|_| ())
}

/// The function a call calls: `f(…)` → `f`, `pkg::f(…)` → `f`.
fn callee<'s>(call: Node<'_>, src: &'s str) -> Option<&'s str> {
    let f = call.child_by_field_name("function")?;
    match f.kind() {
        "identifier" => Some(node_text(f, src)),
        "namespace_operator" => f.child_by_field_name("rhs").map(|r| node_text(r, src)),
        _ => None,
    }
}
