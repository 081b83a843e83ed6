//! The part of the dependency graph around a symbol or a file, walked breadth-first to a depth:
//! calls between definitions (a symbol) or imports between files (a file), outgoing (what it
//! calls / imports), incoming (who calls / imports it) or both. What `patina graph` draws.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use patina_core::Resolution;

use crate::graph::{Def, GraphTable, split_qualified};

/// At most this many nodes: a hub's neighbourhood is cut, breadth-first.
pub const MAX_NODES: usize = 300;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// What it calls / imports.
    Out,
    /// Who calls / imports it.
    In,
    Both,
}

impl Direction {
    pub fn parse(s: &str) -> Option<Direction> {
        match s {
            "" | "out" | "callees" | "imports" => Some(Direction::Out),
            "in" | "callers" | "importers" => Some(Direction::In),
            "both" => Some(Direction::Both),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Def { kind: &'static str, symbol: String },
    File,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// `path:start-end` for a definition, the path for a file.
    pub id: String,
    pub kind: NodeKind,
    pub path: Arc<str>,
    pub start_line: u32,
    pub end_line: u32,
    /// Edges from the nearest root.
    pub depth: u32,
}

impl Node {
    /// `Parent.name` of a definition, the path of a file.
    pub fn label(&self) -> String {
        match &self.kind {
            NodeKind::Def { symbol, .. } => symbol.clone(),
            NodeKind::File => self.path.to_string(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relation {
    Calls,
    Imports,
}

impl Relation {
    pub fn name(self) -> &'static str {
        match self {
            Relation::Calls => "calls",
            Relation::Imports => "imports",
        }
    }
}

/// `from` calls or imports `to` (indices into [`Subgraph::nodes`]) at `line` of `from`'s file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    pub from: usize,
    pub to: usize,
    pub relation: Relation,
    pub line: u32,
    pub resolution: Option<Resolution>,
}

#[derive(Clone, Debug, Default)]
pub struct Subgraph {
    /// The roots first.
    pub nodes: Vec<Node>,
    pub links: Vec<Link>,
    pub roots: usize,
    /// [`MAX_NODES`] was reached.
    pub cut: bool,
}

/// Files importing each file: (importer, line of the import).
type Importers = HashMap<Arc<str>, Vec<(Arc<str>, u32)>>;

/// A neighbour found from a node: the node, its definition (calls), whether the edge goes out
/// of the node, the line, the resolution.
type Step = (Node, Option<Def>, bool, u32, Option<Resolution>);

fn def_node(d: &Def, depth: u32) -> Node {
    Node {
        id: format!("{}:{}-{}", d.path, d.start_line, d.end_line),
        kind: NodeKind::Def {
            kind: d.kind.name(),
            symbol: match &d.parent {
                Some(p) => format!("{p}.{}", d.symbol),
                None => d.symbol.to_string(),
            },
        },
        path: d.path.clone(),
        start_line: d.start_line,
        end_line: d.end_line,
        depth,
    }
}

fn file_node(path: &Arc<str>, depth: u32) -> Node {
    Node {
        id: path.to_string(),
        kind: NodeKind::File,
        path: path.clone(),
        start_line: 0,
        end_line: 0,
        depth,
    }
}

/// The neighbourhood of `target` to `depth` edges: a file of the repository (import edges), else
/// the definitions named `target` (`name`, `Parent.name`; call edges). `None` when it names
/// neither.
pub fn neighbourhood(
    graph: &GraphTable,
    target: &str,
    depth: u32,
    direction: Direction,
) -> Option<Subgraph> {
    let mut g = Subgraph::default();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut queue: VecDeque<usize> = VecDeque::new();
    let file = graph.has_file(target);
    let mut defs: HashMap<usize, Def> = HashMap::new();
    if file {
        let path = graph
            .paths()
            .iter()
            .find(|p| ***p == *target)
            .cloned()
            .unwrap_or_else(|| Arc::from(target));
        g.nodes.push(file_node(&path, 0));
    } else {
        for d in graph.defs(target) {
            let n = def_node(&d, 0);
            if index.contains_key(&n.id) {
                continue;
            }
            index.insert(n.id.clone(), g.nodes.len());
            defs.insert(g.nodes.len(), d);
            g.nodes.push(n);
        }
        if g.nodes.is_empty() {
            return None;
        }
    }
    for i in 0..g.nodes.len() {
        index.insert(g.nodes[i].id.clone(), i);
        queue.push_back(i);
    }
    g.roots = g.nodes.len();
    // Who imports each file, computed once when asked for.
    let importers: Option<Importers> = (file && direction != Direction::Out).then(|| {
        let mut m: HashMap<Arc<str>, Vec<(Arc<str>, u32)>> = HashMap::new();
        for p in graph.paths() {
            for (to, line) in graph.imported_files(p) {
                m.entry(to).or_default().push((p.clone(), line));
            }
        }
        m
    });
    while let Some(at) = queue.pop_front() {
        let d = g.nodes[at].depth;
        if d >= depth {
            continue;
        }
        let mut next: Vec<Step> = Vec::new();
        if file {
            let path = g.nodes[at].path.clone();
            if direction != Direction::In {
                for (to, line) in graph.imported_files(&path) {
                    next.push((file_node(&to, d + 1), None, true, line, None));
                }
            }
            if let Some(m) = &importers {
                for (from, line) in m.get(&path).into_iter().flatten() {
                    next.push((file_node(from, d + 1), None, false, *line, None));
                }
            }
        } else {
            let def = defs[&at].clone();
            if direction != Direction::In {
                for e in graph.calls_in(&def) {
                    next.push((
                        def_node(&e.to, d + 1),
                        Some(e.to.clone()),
                        true,
                        e.site.line,
                        Some(e.resolution),
                    ));
                }
            }
            if direction != Direction::Out {
                let (_, name) = split_qualified(&def.symbol);
                for e in graph.references(name, true) {
                    if e.to != def {
                        continue;
                    }
                    if let Some(f) = e.from {
                        next.push((
                            def_node(&f, d + 1),
                            Some(f),
                            false,
                            e.site.line,
                            Some(e.resolution),
                        ));
                    }
                }
            }
        }
        for (node, def, outgoing, line, resolution) in next {
            let j = match index.get(&node.id) {
                Some(&j) => j,
                None => {
                    if g.nodes.len() >= MAX_NODES {
                        g.cut = true;
                        continue;
                    }
                    let j = g.nodes.len();
                    index.insert(node.id.clone(), j);
                    if let Some(def) = def {
                        defs.insert(j, def);
                    }
                    g.nodes.push(node);
                    queue.push_back(j);
                    j
                }
            };
            let (from, to) = if outgoing { (at, j) } else { (j, at) };
            let link = Link {
                from,
                to,
                relation: if file {
                    Relation::Imports
                } else {
                    Relation::Calls
                },
                line,
                resolution,
            };
            if from != to && !g.links.contains(&link) {
                g.links.push(link);
            }
        }
    }
    Some(g)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::tests::table;

    fn files() -> GraphTable {
        table(&[
            ("app/util.py", "def clean(x):\n    return x\n"),
            (
                "app/validate.py",
                "from app.util import clean\n\n\ndef check(v):\n    return clean(v)\n",
            ),
            (
                "app/signup.py",
                "from app.validate import check\n\n\ndef register(f):\n    check(f)\n\n\ndef login(f):\n    check(f)\n",
            ),
        ])
    }

    fn labels(g: &Subgraph) -> Vec<(String, String, u32)> {
        g.links
            .iter()
            .map(|l| (g.nodes[l.from].label(), g.nodes[l.to].label(), l.line))
            .collect()
    }

    #[test]
    fn callees_to_a_depth() {
        let t = files();
        let g = neighbourhood(&t, "register", 1, Direction::Out).unwrap();
        assert_eq!(labels(&g), [("register".into(), "check".into(), 5)]);
        let g = neighbourhood(&t, "register", 2, Direction::Out).unwrap();
        assert_eq!(
            labels(&g),
            [
                ("register".into(), "check".into(), 5),
                ("check".into(), "clean".into(), 5)
            ]
        );
        assert_eq!(g.nodes[2].depth, 2);
    }

    #[test]
    fn callers_and_both_directions() {
        let t = files();
        let g = neighbourhood(&t, "check", 1, Direction::In).unwrap();
        assert_eq!(
            labels(&g),
            [
                ("register".into(), "check".into(), 5),
                ("login".into(), "check".into(), 9)
            ]
        );
        let g = neighbourhood(&t, "check", 1, Direction::Both).unwrap();
        assert_eq!(g.links.len(), 3, "{:?}", labels(&g));
        assert!(neighbourhood(&t, "nothing_here", 1, Direction::Both).is_none());
    }

    #[test]
    fn a_file_walks_imports_both_ways() {
        let t = files();
        let g = neighbourhood(&t, "app/validate.py", 1, Direction::Both).unwrap();
        assert_eq!(
            labels(&g),
            [
                ("app/validate.py".into(), "app/util.py".into(), 1),
                ("app/signup.py".into(), "app/validate.py".into(), 1)
            ]
        );
        let g = neighbourhood(&t, "app/signup.py", 3, Direction::Out).unwrap();
        assert_eq!(g.nodes.len(), 3);
        assert_eq!(g.nodes[2].label(), "app/util.py");
        assert_eq!(g.nodes[2].depth, 2);
    }
}
