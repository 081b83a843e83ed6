//! Objective-C: `@interface` is a class, `@protocol` an interface; an `@implementation`, a
//! category (`@interface Ledger (Totals)`) and an extension (`@interface Ledger ()`) are impls of
//! their class, whose methods are the
//! class's. The methods an `@interface` declares are lines of it, those a protocol declares its
//! members. A method is named by its selector's first keyword (`addInvoice` for
//! `addInvoice:paidWith:`), the name a message send (`[ledger addInvoice:i paidWith:m]`) is read
//! by in the graph. C's functions, structs, unions, enums and typedefs are read as in C, and
//! `typedef NS_ENUM(NSInteger, PaymentMethod) { … }` (or `NS_OPTIONS`, …) is the enum
//! `PaymentMethod`. Comments above a definition (`///`, `/** */`) attach to it.

use std::borrow::Cow;

use tree_sitter::Node;

use super::{
    Definition, Name::By, Name::CFunction, Name::WithBody, Syntax, container, declarator_name,
    first_named_child, leaf, named, node_text,
};
use patina_core::ChunkKind::{Class, Enum, Function, Impl, Interface, Method, Struct, Type};

pub(super) static OBJC: Syntax = Syntax {
    grammar: || tree_sitter_objc::LANGUAGE.into(),
    rules: &[
        container("class_interface", Class, By(class)),
        container("class_implementation", Impl, By(class)),
        container("protocol_declaration", Interface, By(first_identifier)),
        leaf("method_declaration", Method, By(protocol_member)),
        leaf("method_definition", Method, By(first_identifier)),
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
/// category), `@interface Ledger ()` (an extension) and `@implementation Ledger` are impls of it,
/// their methods `Ledger`'s.
fn class(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    first_identifier(node, src, false, definition)?;
    // A category, or a class extension (`@interface Ledger ()`, the private part in a `.m`).
    let extends = || {
        let name = first_named_child(node, "identifier")?;
        let after = src.get(name.end_byte()..node.end_byte())?;
        Some(after.trim_start().starts_with('('))
    };
    if node.kind() == "class_interface"
        && (node.child_by_field_name("category").is_some() || extends() == Some(true))
    {
        definition.kind = Impl;
    }
    definition.member_parent = definition.symbol.clone();
    Some(())
}

/// The first identifier among the node's children: a class's or protocol's name, a method's
/// selector's first keyword (`- (void)addInvoice:(Invoice *)i paidWith:(int)m` → `addInvoice`).
fn first_identifier(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let name = first_named_child(node, "identifier")?;
    named(definition, node_text(name, src))
}

/// A method declared in a protocol is one of its members; one a class's `@interface` declares is
/// a line of it (the header's summary of the class), as a C prototype is a line of its header:
/// the method is defined, and found, in the `@implementation`.
fn protocol_member(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    if node.parent()?.kind() != "protocol_declaration" {
        return None;
    }
    first_identifier(node, src, false, definition)
}

/// `typedef NS_ENUM(NSInteger, PaymentMethod) { … }` is the enum `PaymentMethod`; any other
/// typedef is named by its declarator, an enum or a struct when it defines one.
fn typedef(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let ty = node.child_by_field_name("type");
    if let Some(ty) = ty.filter(|t| t.kind() == "macro_type_specifier") {
        let name = ty.child_by_field_name("type")?;
        definition.kind = Enum;
        return named(definition, node_text(name, src));
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

/// `text` with the lines that only open or close a region of declarations blanked in place
/// (`NS_ASSUME_NONNULL_BEGIN`, `NS_HEADER_AUDIT_BEGIN(nullability)`, `CF_EXTERN_C_END`: an
/// upper-case macro name ending in `_BEGIN` or `_END`, perhaps with arguments, alone on its line);
/// borrowed when there are none. Those macros expand to pragmas the grammar cannot know, and one
/// before an `@interface` turned the whole declaration into an error: most headers were cut into
/// line windows. Offsets and lines stay the file's own.
pub(crate) fn without_region_macros(text: &str) -> Cow<'_, str> {
    let is_marker = |line: &str| {
        let line = line.trim();
        let name = line.split('(').next().unwrap_or(line).trim_end();
        let args_closed = name.len() == line.len() || line.ends_with(')');
        args_closed
            && (name.ends_with("_BEGIN") || name.ends_with("_END"))
            && name.starts_with(|c: char| c.is_ascii_uppercase())
            && name
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
    };
    if !text.lines().any(is_marker) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        if is_marker(body) {
            out.extend(std::iter::repeat_n(' ', body.len()));
            out.push_str(&line[body.len()..]);
        } else {
            out.push_str(line);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::without_region_macros;

    #[test]
    fn region_macros_are_blanked_in_place() {
        let text = "NS_ASSUME_NONNULL_BEGIN\r\n@interface A : NSObject\n@end\n  NS_HEADER_AUDIT_BEGIN(nullability)\nNS_ASSUME_NONNULL_END\n";
        let out = without_region_macros(text);
        assert_eq!(out.len(), text.len());
        let lines: Vec<&str> = out.split('\n').collect();
        assert_eq!(lines.len(), text.split('\n').count());
        for (i, line) in lines.iter().enumerate() {
            let blank = line.trim().is_empty();
            assert_eq!(blank, [0, 3, 4, 5].contains(&i), "{i}: {line:?}");
        }
        assert_eq!(lines[1], "@interface A : NSObject");
        // A call, a constant, a lower-case name or a macro with a statement after it stays.
        for kept in [
            "FOO_END;\n",
            "x = RANGE_END\n",
            "ns_assume_begin\n",
            "LOCK_BEGIN(x); f();\n",
        ] {
            assert_eq!(without_region_macros(kept), kept);
        }
    }
}
