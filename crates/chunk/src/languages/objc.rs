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

/// `text` with the availability and naming macros that end a declaration blanked in place
/// (`@property NSURLSessionTaskMetrics *metrics API_AVAILABLE(ios(10));`, `- (void)load
/// NS_SWIFT_NAME(load());`: an upper-case macro call just before the `;` of a property or
/// method declaration); borrowed when there are none. The grammar reads some of them as the start
/// of something else and loses the rest of the file. Offsets and lines stay the file's own.
pub(crate) fn without_attribute_macros(text: &str) -> Cow<'_, str> {
    let mut out: Option<String> = None;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        // Most lines have no such macro: only those that do are copied and blanked.
        if let Some((from, to)) = trailing_attribute_macro(line) {
            let mut body = line.to_string();
            body.replace_range(from..to, &" ".repeat(to - from));
            while let Some((from, to)) = trailing_attribute_macro(&body) {
                body.replace_range(from..to, &" ".repeat(to - from));
            }
            out.get_or_insert_with(|| text[..at].to_string())
                .push_str(&body);
        } else if let Some(out) = out.as_mut() {
            out.push_str(line);
        }
        at += line.len();
    }
    out.map_or(Cow::Borrowed(text), Cow::Owned)
}

/// The byte range of an upper-case macro call (`API_AVAILABLE(ios(10))`) that ends a property or
/// method declaration on this line, just before its `;`.
fn trailing_attribute_macro(line: &str) -> Option<(usize, usize)> {
    let trimmed = line.trim_start();
    let declaration = trimmed.starts_with("@property")
        || trimmed.starts_with('-')
        || trimmed.starts_with('+')
        // A later line of a method declaration: `completion:(void (^)(void))done NS_SWIFT_NAME(…);`
        || trimmed.contains(":(") && !trimmed.contains('[') && !trimmed.contains('=');
    if !declaration {
        return None;
    }
    let end = line.trim_end().strip_suffix(';')?.trim_end();
    if !end.ends_with(')') {
        return None;
    }
    let close = end.len() - 1;
    let mut depth = 0usize;
    let mut open = None;
    for (i, c) in end.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth -= 1;
                if depth == 0 {
                    open = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let open = open?;
    let before = &end[..open];
    let name_len = before
        .bytes()
        .rev()
        .take_while(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_')
        .count();
    let name_start = open - name_len;
    let name = &end[name_start..open];
    let spaced = end[..name_start].ends_with([' ', '\t']);
    let declarator = end[..name_start]
        .trim_end()
        .ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ')');
    (name.len() >= 2
        && name.starts_with(|c: char| c.is_ascii_uppercase())
        && name.contains('_')
        && spaced
        && declarator)
        .then_some((name_start, close + 1))
}

#[cfg(test)]
mod tests {
    use super::{without_attribute_macros, without_region_macros};

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

    #[test]
    fn macros_that_end_a_declaration_are_blanked_in_place() {
        let text = "@interface A : NSObject\n@property (nonatomic, strong) NSObject *sessionTaskMetrics AF_API_AVAILABLE(ios(10), macosx(10.12));\n- (void)load NS_SWIFT_NAME(load()) API_UNAVAILABLE(macos);\n- (void)send:(id)x\n  completion:(void (^)(void))done NS_SWIFT_NAME(send(_:completion:));\n@end\n";
        let out = without_attribute_macros(text);
        assert_eq!(out.len(), text.len());
        assert_eq!(out.lines().count(), text.lines().count());
        assert!(
            !out.contains("AVAILABLE") && !out.contains("NS_SWIFT_NAME"),
            "{out}"
        );
        assert!(out.contains("*sessionTaskMetrics "));
        assert!(out.contains("- (void)load "));
        assert!(out.contains("completion:(void (^)(void))done "));
        // Calls in code, values and declarations without such a macro stay.
        for kept in [
            "    return FOO_BAR(1);\n",
            "    x = MAKE_RANGE(a, b);\n",
            "@property (nonatomic) CGFloat f;\n",
            "- (void)f:(int)x;\n",
            "    [self send:(id)x MY_ARG(y)];\n",
        ] {
            assert_eq!(without_attribute_macros(kept), kept);
        }
    }
}
