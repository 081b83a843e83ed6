//! Protocol Buffers' facts: the message and enum types a field, an `rpc` or an `extend` names
//! are references (`acme.Money` is `Money`); `import "a/b.proto"`
//! imports every definition of that file. Definitions' and fields' own names, packages and
//! options are no references; there are no calls.

use tree_sitter::Node;

use super::Extractor;

impl Extractor<'_> {
    pub(super) fn protobuf(&mut self, node: Node<'_>) {
        match node.kind() {
            "import" => {
                if let Some(path) = node.child_by_field_name("path") {
                    let module = self.text(path);
                    self.import(module, Some("*"), None, node);
                }
                self.skip_all(node);
            }
            "message_name" | "enum_name" | "service_name" | "rpc_name" | "package" | "syntax"
            | "option" | "field_options" | "enum_field" | "reserved" => self.skip_all(node),
            // A field's (or oneof's) own name is no reference; its type is.
            "field" | "map_field" | "oneof" | "oneof_field" => {
                self.skip_identifier_children(node);
            }
            // `acme.support.Money` names `Money` of package `acme.support`: the package is
            // where the imports lead, not an object to reach it through, so the name stands
            // alone.
            "message_or_enum_type" => {
                let mut c = node.walk();
                let last = node
                    .named_children(&mut c)
                    .filter(|n| n.kind() == "identifier")
                    .last();
                self.skip_all(node);
                if let Some(name) = last {
                    self.reference(name, false, None);
                }
            }
            _ => {}
        }
    }
}
