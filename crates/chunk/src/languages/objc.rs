//! Objective-C: `@interface` is a class, `@protocol` an interface; an `@implementation` and a
//! category (`@interface Ledger (Totals)`) are impls of their class, whose methods are the
//! class's. The methods an `@interface` declares are lines of it, those a protocol declares its
//! members. A method is named by its selector's first keyword (`addInvoice` for
//! `addInvoice:paidWith:`), the name a message send (`[ledger addInvoice:i paidWith:m]`) is read
//! by in the graph. C's functions, structs, unions, enums and typedefs are read as in C, and
//! `typedef NS_ENUM(NSInteger, PaymentMethod) { … }` (or `NS_OPTIONS`, …) is the enum
//! `PaymentMethod`. Comments above a definition (`///`, `/** */`) attach to it.

use tree_sitter::Node;

use super::{
    Definition, Name::By, Name::CFunction, Name::WithBody, Syntax, container, declarator_name,
    first_named_child, leaf, node_text, normalize,
};
use patina_core::ChunkKind::{Class, Enum, Function, Impl, Interface, Method, Struct, Type};

pub(super) static OBJC: Syntax = Syntax {
    grammar: || tree_sitter_objc::LANGUAGE.into(),
    rules: &[
        container("class_interface", Class, By(class)),
        container("class_implementation", Impl, By(class)),
        container("protocol_declaration", Interface, By(first_identifier)),
        leaf("method_declaration", Method, By(protocol_member)),
        leaf("method_definition", Method, By(selector)),
        leaf("function_definition", Function, CFunction),
        leaf("struct_specifier", Struct, WithBody("name")),
        leaf("union_specifier", Struct, WithBody("name")),
        leaf("enum_specifier", Enum, WithBody("name")),
        leaf("type_definition", Type, By(typedef)),
    ],
    // Each method of an `@implementation` sits in an `implementation_definition` of its own.
    wrappers: &["declaration", "implementation_definition"],
    trivia: &[],
};

/// `@interface Ledger : NSObject` is the class `Ledger`; `@interface Ledger (Totals)` (a
/// category) and `@implementation Ledger` are impls of it, their methods `Ledger`'s.
fn class(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    first_identifier(node, src, false, definition)?;
    if node.kind() == "class_interface" && node.child_by_field_name("category").is_some() {
        definition.kind = Impl;
    }
    definition.member_parent = definition.symbol.clone();
    Some(())
}

/// The first identifier among the node's children: a class's or protocol's name.
fn first_identifier(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let name = first_named_child(node, "identifier")?;
    definition.symbol = normalize(node_text(name, src));
    definition.symbol.as_ref().map(|_| ())
}

/// A method declared in a protocol is one of its members; one a class's `@interface` declares is
/// a line of it (the header's summary of the class), as a C prototype is a line of its header:
/// the method is defined, and found, in the `@implementation`.
fn protocol_member(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    if node.parent()?.kind() != "protocol_declaration" {
        return None;
    }
    selector(node, src, false, definition)
}

/// `- (void)addInvoice:(Invoice *)invoice paidWith:(PaymentMethod)method` → `addInvoice`.
fn selector(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    first_identifier(node, src, false, definition)
}

/// `typedef NS_ENUM(NSInteger, PaymentMethod) { … }` is the enum `PaymentMethod`; any other
/// typedef is named by its declarator, an enum or a struct when it defines one.
fn typedef(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let ty = node.child_by_field_name("type");
    if let Some(ty) = ty.filter(|t| t.kind() == "macro_type_specifier") {
        let name = ty.child_by_field_name("type")?;
        definition.kind = Enum;
        definition.symbol = normalize(node_text(name, src));
        return definition.symbol.as_ref().map(|_| ());
    }
    definition.symbol = node
        .child_by_field_name("declarator")
        .and_then(|declarator| declarator_name(declarator, src).0);
    if let Some(ty) = ty.filter(|t| t.child_by_field_name("body").is_some()) {
        definition.kind = match ty.kind() {
            "enum_specifier" => Enum,
            "struct_specifier" | "union_specifier" => Struct,
            _ => Type,
        };
    }
    definition.symbol.as_ref().map(|_| ())
}
