//! Ruby: modules and classes contain methods (`def`, `def self.x`) and the accessors that
//! `attr_reader`/`attr_writer`/`attr_accessor` define. A `class << self` block is not a
//! definition of its own: the methods in it are the enclosing class's. A constant assigned over
//! several lines (`MIME_TYPES = { … }`, `TEMPLATE = ERB.new(<<~HTML)`) is a definition; on one
//! line it stays with the code around it.

use tree_sitter::Node;

use super::{
    Definition, Name::By, Syntax, container, field_text, leaf, member, multiline, node_text,
};
use patina_core::ChunkKind::{Class, Const, Function, Method, Module};

pub(super) static RUBY: Syntax = Syntax {
    grammar: || tree_sitter_ruby::LANGUAGE.into(),
    rules: &[
        container("class", Class, By(constant)),
        container("module", Module, By(constant)),
        leaf("method", Function, By(method)),
        leaf("singleton_method", Method, By(singleton_method)),
        member("call", Method, By(accessor)),
        leaf("assignment", Const, By(constant_assignment)),
    ],
    wrappers: &[],
    trivia: &[],
};

/// `class Foo` → "Foo"; `class A::Outer::Foo` → "Foo" owned by `Outer`, as if nested (the names
/// users look up: `Outer::Foo`).
fn constant(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let name = node.child_by_field_name("name")?;
    if name.kind() == "scope_resolution" {
        definition.symbol = field_text(name, "name", src);
        definition.owner = field_text(name, "scope", src)
            .map(|scope| scope.rsplit("::").next().unwrap_or(&scope).to_string());
    } else {
        definition.symbol = field_text(node, "name", src);
    }
    definition.symbol.as_ref().map(|_| ())
}

/// `def x`: a method inside a class or module (a module's are its mixin's), else a function.
fn method(
    node: Node<'_>,
    src: &str,
    in_container: bool,
    definition: &mut Definition,
) -> Option<()> {
    definition.symbol = field_text(node, "name", src);
    if in_container {
        definition.kind = Method;
    }
    definition.symbol.as_ref().map(|_| ())
}

/// `def self.x` belongs to the class around it; `def Foo.x` to `Foo`.
fn singleton_method(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    definition.symbol = field_text(node, "name", src);
    definition.owner = field_text(node, "object", src).filter(|object| object != "self");
    definition.symbol.as_ref().map(|_| ())
}

/// `attr_accessor :name, :email` defines accessor methods; the chunk is named by the first (one
/// chunk has one name, and the line is usually one accessor).
fn accessor(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    if node.child_by_field_name("receiver").is_some() {
        return None;
    }
    let method = node_text(node.child_by_field_name("method")?, src);
    if !matches!(
        method,
        "attr_reader" | "attr_writer" | "attr_accessor" | "attr"
    ) {
        return None;
    }
    let arguments = node.child_by_field_name("arguments")?;
    let first = arguments.named_child(0)?;
    let name = node_text(first, src).trim_start_matches(':');
    let name = name.trim_matches(['"', '\'']);
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    definition.symbol = Some(name.to_string());
    Some(())
}

/// `NAME = value` over several lines, outside any method.
fn constant_assignment(
    node: Node<'_>,
    src: &str,
    _: bool,
    definition: &mut Definition,
) -> Option<()> {
    let left = node.child_by_field_name("left")?;
    if left.kind() != "constant" || !multiline(node) {
        return None;
    }
    definition.symbol = Some(node_text(left, src).to_string());
    Some(())
}
