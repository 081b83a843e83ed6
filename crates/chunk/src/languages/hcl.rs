//! HCL (Terraform, Packer, Nomad): each top-level block is a definition, named by its labels as
//! Terraform addresses it: `resource "aws_s3_bucket" "logs"` is `logs` of `aws_s3_bucket`
//! (`aws_s3_bucket.logs`), `data "aws_ami" "ubuntu"` likewise, `variable "region"` is `region` of
//! `var` (`var.region`), `module "vpc"` a module `vpc` of `module`; a block with one label is
//! named by it, one without by its type (`terraform`, `locals`). Nested blocks (`lifecycle`) are
//! lines of theirs. Comments above attach.

use tree_sitter::Node;

use super::{Definition, Name::By, Syntax, leaf, node_text, normalize};
use patina_core::ChunkKind::{Const, Module, Struct};

pub(super) static HCL: Syntax = Syntax {
    grammar: || tree_sitter_hcl::LANGUAGE.into(),
    rules: &[leaf("block", Struct, By(block))],
    wrappers: &[],
    trivia: &[],
};

fn block(node: Node<'_>, src: &str, _: bool, definition: &mut Definition) -> Option<()> {
    let mut cursor = node.walk();
    let mut ty = None;
    let mut labels = Vec::new();
    for child in node.named_children(&mut cursor) {
        match child.kind() {
            "identifier" if ty.is_none() => ty = Some(node_text(child, src)),
            "identifier" => labels.push(node_text(child, src)),
            "string_lit" => labels.push(node_text(child, src).trim_matches('"')),
            _ => {}
        }
    }
    let ty = ty?;
    let (kind, owner, name) = match (ty, labels.as_slice()) {
        ("variable", [name, ..]) => (Const, Some("var"), *name),
        ("output", [name, ..]) => (Const, None, *name),
        ("module", [name, ..]) => (Module, Some("module"), *name),
        (_, [kind, name, ..]) => (Struct, Some(*kind), *name),
        (_, [name]) => (Struct, None, *name),
        (_, []) => (Struct, None, ty),
    };
    definition.kind = kind;
    definition.owner = owner.and_then(normalize);
    definition.symbol = normalize(name);
    definition.symbol.as_ref().map(|_| ())
}
