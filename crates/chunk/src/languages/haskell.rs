//! Haskell: data types (an enum when they have several constructors), newtypes, type synonyms,
//! type classes and functions. A function is its equations together (`f 0 = …` then `f n = …`)
//! with the type signature and Haddock comment above it; an instance holds its methods, which
//! are the instance type's.

use tree_sitter::Node;

use super::{Definition, Name::By, Name::Field, Syntax, container, equation, leaf, node_text};
use patina_core::ChunkKind::{Enum, Function, Impl, Struct, Trait, Type};

pub(super) static HASKELL: Syntax = Syntax {
    grammar: || tree_sitter_haskell::LANGUAGE.into(),
    rules: &[
        leaf("data_type", Struct, By(data)),
        leaf("newtype", Type, Field("name")),
        leaf("type_synonym", Type, Field("name")),
        leaf("type_family", Type, Field("name")),
        leaf("class", Trait, Field("name")),
        container("instance", Impl, By(instance)),
        equation("function", Function, Field("name")),
        equation("bind", Function, Field("name")),
    ],
    wrappers: &[],
    // The type signature above a function is part of it, as its Haddock comment is.
    trivia: &["haddock", "signature"],
};

/// `data T = A | B` is an enum, `data T = T { … }` a struct.
fn data(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    definition.symbol = super::field_text(node, "name", src);
    if let Some(constructors) = node.child_by_field_name("constructors") {
        let mut cursor = constructors.walk();
        let count = constructors
            .children_by_field_name("constructor", &mut cursor)
            .count();
        if count > 1 || constructors.kind() == "gadt_constructors" {
            definition.kind = Enum;
        }
    }
    definition.symbol.as_ref().map(|_| ())
}

/// `instance Show a => Billable (Tree a)` → "Billable Tree", whose methods are `Tree`'s.
fn instance(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let class = node_text(node.child_by_field_name("name")?, src);
    let class = class.rsplit('.').next().unwrap_or(class);
    let ty = node
        .child_by_field_name("patterns")
        .and_then(|patterns| first_type_name(patterns, src));
    definition.symbol = Some(match &ty {
        Some(ty) => format!("{class} {ty}"),
        None => class.to_string(),
    });
    definition.member_parent = ty;
    Some(())
}

/// The first type constructor's name inside `node` (`(Tree a)` → "Tree", `[a]` → none).
fn first_type_name(node: Node<'_>, src: &str) -> Option<String> {
    let mut stack = vec![node];
    // Bounded: a type pattern is small, and a cap keeps hostile input cheap.
    for _ in 0..64 {
        let n = stack.pop()?;
        if n.kind() == "name" {
            let text = node_text(n, src);
            return Some(text.rsplit('.').next().unwrap_or(text).to_string());
        }
        let mut cursor = n.walk();
        let children: Vec<Node<'_>> = n.named_children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    None
}
