//! Objective-C's facts: a message send (`[ledger addInvoice:i paidWith:m]`) is a call of its
//! selector's first keyword (`addInvoice`, the name methods are defined by) reached through its
//! receiver; C's calls and `#import`/`#include` (every declaration of the header) are read by the common
//! rules, and `@import UIKit;` imports a module (a framework: outside the repository). `@interface Ledger :
//! NSObject <Printable>` relates `Ledger` to its superclass and to each protocol it adopts, as
//! does a protocol to the protocols it extends. The names a class, a category, a protocol, a
//! method's selector keywords and a property declare are no references.

use tree_sitter::Node;

use super::Extractor;

impl Extractor<'_> {
    pub(super) fn objc(&mut self, node: Node<'_>) {
        match node.kind() {
            "message_expression" => {
                if let Some(method) = node.child_by_field_name("method") {
                    let receiver = node.child_by_field_name("receiver").map(|r| {
                        let t = self.text(r);
                        super::last_segment(t).to_string()
                    });
                    self.skip.insert(method.id());
                    self.reference(method, true, receiver);
                }
            }
            "module_import" => {
                if let Some(path) = node.child_by_field_name("path") {
                    let module = self.text(path);
                    self.import(module, Some("*"), None, node);
                }
                self.skip_all(node);
            }
            "class_interface" | "class_implementation" | "protocol_declaration" => {
                let mut c = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut c).collect();
                let Some(name) = children.iter().find(|n| n.kind() == "identifier") else {
                    return;
                };
                self.skip.insert(name.id());
                if let Some(category) = node.child_by_field_name("category") {
                    self.skip.insert(category.id());
                }
                let child = self.text(*name);
                let mut parents: Vec<Node<'_>> = Vec::new();
                if node.kind() == "class_interface" {
                    parents.extend(node.child_by_field_name("superclass"));
                }
                for list in children.iter().filter(|n| {
                    matches!(
                        n.kind(),
                        "parameterized_arguments" | "protocol_reference_list"
                    )
                }) {
                    let mut c = list.walk();
                    let mut stack: Vec<Node<'_>> = list.named_children(&mut c).collect();
                    while let Some(n) = stack.pop() {
                        match n.kind() {
                            "identifier" | "type_identifier" => parents.push(n),
                            _ => {
                                let mut c = n.walk();
                                stack.extend(n.named_children(&mut c));
                            }
                        }
                    }
                }
                for p in parents {
                    let parent = self.text(p);
                    self.relation(child, parent, node);
                }
            }
            // A selector's keywords are the method's own name, not uses.
            "method_declaration" | "method_definition" => {
                self.skip_identifier_children(node);
            }
            // `@property NSString *name;`: the property's name is declared here.
            "property_declaration" => {
                let mut stack = vec![node];
                while let Some(n) = stack.pop() {
                    if n.kind() == "struct_declarator" {
                        let mut inner = vec![n];
                        while let Some(d) = inner.pop() {
                            if d.kind() == "identifier" {
                                self.skip.insert(d.id());
                            }
                            let mut c = d.walk();
                            inner.extend(d.named_children(&mut c));
                        }
                        continue;
                    }
                    let mut c = n.walk();
                    stack.extend(n.named_children(&mut c));
                }
            }
            _ => {}
        }
    }
}
