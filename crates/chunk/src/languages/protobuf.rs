//! Protocol Buffers: messages (nested ones inside theirs) and services hold their members —
//! a service's `rpc`s are its methods; enums stand alone. Fields are a message's lines, not
//! definitions. Comments above a definition attach to it.

use tree_sitter::Node;

use super::{Definition, Name::By, Syntax, container, leaf, node_text, normalize};
use patina_core::ChunkKind::{Enum, Interface, Method, Struct};

pub(super) static PROTOBUF: Syntax = Syntax {
    grammar: || tree_sitter_proto::LANGUAGE.into(),
    rules: &[
        container("message", Struct, By(named)),
        container("service", Interface, By(named)),
        leaf("enum", Enum, By(named)),
        leaf("rpc", Method, By(named)),
    ],
    wrappers: &[],
    trivia: &[],
};

/// The grammar has no fields: a definition's name is its `message_name`, `service_name`,
/// `enum_name` or `rpc_name` child.
fn named(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let mut cursor = node.walk();
    let name = node
        .named_children(&mut cursor)
        .find(|c| c.kind().ends_with("_name"))?;
    definition.symbol = normalize(node_text(name, src));
    definition.symbol.as_ref().map(|_| ())
}
