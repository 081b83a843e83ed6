//! HCL's facts: a reference is an address in an expression, read as Terraform reads it —
//! `var.region` is `region` of `var`, `module.vpc.id` `vpc` of `module`, `data.aws_ami.ubuntu.id`
//! `ubuntu` of `aws_ami`, `aws_s3_bucket.logs.arn` `logs` of `aws_s3_bucket` (the definitions'
//! owners, `languages/hcl.rs`); a function call (`file(…)`) is a call. Block types, labels and
//! attribute names are no references; `local.x`, `each`, `count`, `path`, `self` name nothing
//! defined as a block.

use tree_sitter::Node;

use super::Extractor;

impl Extractor<'_> {
    pub(super) fn hcl(&mut self, node: Node<'_>) {
        match node.kind() {
            "block" | "attribute" => {
                self.skip_identifier_children(node);
            }
            "function_call" => {
                if let Some(name) = node.named_child(0).filter(|n| n.kind() == "identifier") {
                    self.skip.insert(name.id());
                    self.reference(name, true, None);
                }
            }
            "expression" => self.hcl_address(node),
            _ => {}
        }
    }

    /// `root.a.b…` as the definition it addresses.
    fn hcl_address(&mut self, node: Node<'_>) {
        let mut c = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut c).collect();
        let Some(root) = children.first().filter(|n| n.kind() == "variable_expr") else {
            return;
        };
        let mut parts = vec![*root];
        parts.extend(
            children[1..]
                .iter()
                .take_while(|n| n.kind() == "get_attr")
                .copied(),
        );
        let ids: Vec<Node<'_>> = parts
            .iter()
            .filter_map(|p| {
                let mut c = p.walk();
                p.named_children(&mut c).find(|n| n.kind() == "identifier")
            })
            .collect();
        for p in &parts {
            self.skip_all(*p);
        }
        let text = |i: usize| ids.get(i).map(|n| self.text(*n));
        let (name, qualifier) = match text(0) {
            Some("var" | "module") => (ids.get(1), text(0)),
            Some("data") => (ids.get(2), text(1)),
            Some("local" | "each" | "count" | "path" | "self" | "terraform") | None => return,
            Some(_) if ids.len() >= 2 => (ids.get(1), text(0)),
            Some(_) => (ids.first(), None),
        };
        if let Some(name) = name {
            let q = qualifier.map(str::to_string);
            self.reference(*name, false, q);
        }
    }
}
