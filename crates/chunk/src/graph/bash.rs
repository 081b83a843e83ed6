//! Shell scripts' facts: every command is a call of its name (the script's own functions among
//! them); `source FILE` and `. FILE` import the file they name, when it is spelled out (a path
//! built from variables, `"$DIR/x.sh"`, is known only when the script runs).

use tree_sitter::Node;

use super::Extractor;

impl Extractor<'_> {
    pub(super) fn bash(&mut self, node: Node<'_>) {
        if node.kind() != "command" {
            return;
        }
        let Some(name) = node
            .child_by_field_name("name")
            .and_then(|n| n.named_child(0))
            .filter(|n| n.kind() == "word")
        else {
            return;
        };
        if matches!(self.text(name), "source" | ".") {
            let file = node
                .child_by_field_name("argument")
                .filter(|a| matches!(a.kind(), "word" | "string" | "raw_string"))
                .map(|a| self.text(a))
                .filter(|f| !f.contains(['$', '`']));
            if let Some(file) = file {
                self.import(file, None, None, node);
            }
            return;
        }
        self.reference(name, true, None);
    }
}
