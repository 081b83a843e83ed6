//! PHP: classes, interfaces, traits and enums contain methods; functions stand alone; a
//! namespace with braces contains what it declares (a `namespace X;` line is only a statement:
//! the file's definitions follow it as siblings). Attributes (`#[Entity]`) are part of the
//! declaration's node, so they stay with it as they are.

use super::{Name::Field, Name::WithBody, Syntax, container, leaf};
use patina_core::ChunkKind::{Class, Enum, Function, Interface, Method, Module, Trait};

pub(super) static PHP: Syntax = Syntax {
    grammar: || tree_sitter_php::LANGUAGE_PHP.into(),
    rules: &[
        container("class_declaration", Class, Field("name")),
        container("interface_declaration", Interface, Field("name")),
        container("trait_declaration", Trait, Field("name")),
        container("enum_declaration", Enum, Field("name")),
        container("namespace_definition", Module, WithBody("name")),
        leaf("function_definition", Function, Field("name")),
        leaf("method_declaration", Method, Field("name")),
    ],
    wrappers: &[],
    trivia: &[],
};
