//! Renderings of a graph neighbourhood (`Graph.Walk`, `patina graph`): an indented text tree,
//! JSON, and Graphviz DOT.

use std::collections::HashSet;
use std::fmt::Write as _;

use patina_core::paths::printable_path;
use patina_proto::v1 as pb;

/// A node on its line of the tree: names escaped (`printable_path`), so none can break the line.
fn node_text(n: &pb::WalkNode) -> String {
    if n.kind == "file" {
        printable_path(&n.path).into_owned()
    } else {
        format!(
            "{} ({})  {}",
            printable_path(&n.label),
            n.kind,
            printable_path(&n.id)
        )
    }
}

/// From each root, the edges leaving it (`calls` / `imports`) and, marked `←`, the edges reaching
/// it (`called by` / `imported by`), depth first: below a callee its callees, below a caller its
/// callers. A node already drawn is not expanded again (`…`).
pub fn tree(w: &pb::WalkResponse) -> String {
    let mut out = String::new();
    let mut seen: HashSet<u32> = HashSet::new();
    for root in 0..w.roots {
        let n = &w.nodes[root as usize];
        let _ = writeln!(out, "{}", node_text(n));
        seen.insert(root);
        branch(w, root, (true, true), "", &mut seen, &mut out);
    }
    if w.cut {
        out.push_str("(cut: too many nodes; lower --depth)\n");
    }
    out
}

/// `follow`: (outgoing edges, incoming edges).
fn branch(
    w: &pb::WalkResponse,
    at: u32,
    follow: (bool, bool),
    indent: &str,
    seen: &mut HashSet<u32>,
    out: &mut String,
) {
    // Outgoing edges, then incoming ones.
    let mut next: Vec<(u32, bool, &pb::WalkEdge)> = Vec::new();
    if follow.0 {
        next.extend(
            w.edges
                .iter()
                .filter(|e| e.from == at)
                .map(|e| (e.to, true, e)),
        );
    }
    if follow.1 {
        next.extend(
            w.edges
                .iter()
                .filter(|e| e.to == at)
                .map(|e| (e.from, false, e)),
        );
    }
    for (i, (other, outgoing, e)) in next.iter().enumerate() {
        let last = i + 1 == next.len();
        let verb = match (e.relation.as_str(), outgoing) {
            ("calls", true) => "calls",
            ("calls", false) => "← called by",
            ("imports", true) => "imports",
            (_, _) => "← imported by",
        };
        let again = !seen.insert(*other);
        let mut line = format!(
            "{indent}{}{verb} {}  line {}",
            if last { "└─ " } else { "├─ " },
            node_text(&w.nodes[*other as usize]),
            e.line
        );
        if !e.resolution.is_empty() {
            let _ = write!(line, "  [{}]", e.resolution);
        }
        if again {
            line.push_str("  …");
        }
        let _ = writeln!(out, "{line}");
        if !again {
            let deeper = format!("{indent}{}", if last { "   " } else { "│  " });
            branch(w, *other, (*outgoing, !outgoing), &deeper, seen, out);
        }
    }
}

pub fn json(w: &pb::WalkResponse) -> serde_json::Value {
    serde_json::json!({
        "repo": w.repo,
        "roots": w.roots,
        "cut": w.cut,
        "nodes": w.nodes.iter().map(|n| serde_json::json!({
            "id": n.id, "kind": n.kind, "label": n.label, "path": n.path,
            "start_line": n.start_line, "end_line": n.end_line, "depth": n.depth,
        })).collect::<Vec<_>>(),
        "edges": w.edges.iter().map(|e| serde_json::json!({
            "from": w.nodes[e.from as usize].id, "to": w.nodes[e.to as usize].id,
            "relation": e.relation, "line": e.line, "resolution": e.resolution,
        })).collect::<Vec<_>>(),
    })
}

/// A DOT string's inside: control and invisible characters escaped (`printable_path`), then
/// backslashes and quotes.
fn escape(s: &str) -> String {
    printable_path(s).replace('\\', "\\\\").replace('"', "\\\"")
}

/// Graphviz: one node per definition or file (roots bold), one edge per call or import; edges
/// resolved by name only are dashed.
pub fn dot(w: &pb::WalkResponse) -> String {
    let mut out = String::from(
        "digraph patina {\n  rankdir=LR;\n  node [shape=box, fontname=\"monospace\"];\n",
    );
    for (i, n) in w.nodes.iter().enumerate() {
        let label = if n.kind == "file" {
            escape(&n.path)
        } else {
            format!(
                "{}\\n{}:{}",
                escape(&n.label),
                escape(&n.path),
                n.start_line
            )
        };
        let _ = writeln!(
            out,
            "  n{i} [label=\"{label}\"{}];",
            if (i as u32) < w.roots {
                ", style=bold"
            } else {
                ""
            }
        );
    }
    for e in &w.edges {
        let _ = writeln!(
            out,
            "  n{} -> n{} [label=\"{}\"{}];",
            e.from,
            e.to,
            e.line,
            if e.resolution == "name_only" {
                ", style=dashed"
            } else {
                ""
            }
        );
    }
    out.push_str("}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk() -> pb::WalkResponse {
        let node = |label: &str, path: &str, depth: u32| pb::WalkNode {
            id: format!("{path}:1-2"),
            kind: "function".into(),
            label: label.into(),
            path: path.into(),
            start_line: 1,
            end_line: 2,
            depth,
        };
        let edge = |from, to, line| pb::WalkEdge {
            from,
            to,
            relation: "calls".into(),
            line,
            resolution: "import".into(),
        };
        pb::WalkResponse {
            repo: "r".into(),
            nodes: vec![
                node("check", "v.py", 0),
                node("clean", "u.py", 1),
                node("register", "s.py", 1),
                node("strip", "u2.py", 2),
            ],
            roots: 1,
            edges: vec![edge(0, 1, 5), edge(2, 0, 9), edge(1, 3, 2)],
            cut: false,
        }
    }

    #[test]
    fn the_tree_shows_both_directions_indented() {
        assert_eq!(
            tree(&walk()),
            "check (function)  v.py:1-2\n\
             ├─ calls clean (function)  u.py:1-2  line 5  [import]\n\
             │  └─ calls strip (function)  u2.py:1-2  line 2  [import]\n\
             └─ ← called by register (function)  s.py:1-2  line 9  [import]\n"
        );
    }

    #[test]
    fn dot_and_json_name_every_node_and_edge() {
        let d = dot(&walk());
        assert!(d.starts_with("digraph patina {"), "{d}");
        assert!(
            d.contains("n0 [label=\"check\\nv.py:1\", style=bold];"),
            "{d}"
        );
        assert!(d.contains("n2 -> n0 [label=\"9\"];"), "{d}");
        assert_eq!(d.matches(" -> ").count(), 3);
        let j = json(&walk());
        assert_eq!(j["edges"][1]["from"], "s.py:1-2");
        assert_eq!(j["nodes"].as_array().unwrap().len(), 4);
    }
}
