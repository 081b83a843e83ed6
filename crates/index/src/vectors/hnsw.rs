//! The HNSW graph of one sealed segment, written here rather than taken from a crate: the graph
//! must be searched where it lies, in a memory-mapped file ([`super::sealed`]), which
//! instant-distance (one heap allocation per point, deserialised whole) could not do. [`Graph`] is
//! what a search walks, in memory or mapped; [`build`] makes one in memory from a bounded set of
//! vectors (a segment is never larger than the merge bound), single-threaded and seeded, so the
//! same vectors give the same graph.
//!
//! The graph is Malkov and Yashunin's: each point gets a random top layer (`P(top ≥ l) = M^-l`), is
//! linked on every layer up to it to neighbours chosen by their heuristic (a candidate is kept
//! only if it is closer to the point than to any neighbour kept before it), at most [`M`] a
//! layer and [`M0`] on layer 0; a search descends greedily from the entry point and widens to
//! `ef` candidates on layer 0. A search scores an exact `f32` query against the stored 8-bit
//! vectors, as everywhere in the index; a build compares stored vectors with each other, in
//! integers. Parameters: `M` 16, `M0` 32, 100 candidates per insertion.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use super::{dot_q, dot_qq};

/// Links a point keeps on each upper layer.
pub(crate) const M: usize = 16;
/// Links a point keeps on layer 0 (twice `M`, as the paper advises).
pub(crate) const M0: usize = 2 * M;
/// Candidates a build weighs per insertion.
const EF_CONSTRUCTION: usize = 100;
/// No point gets a higher layer than this (at `M` = 16 a layer above 4 is one in 65,536 points).
const MAX_LAYER: usize = 12;
/// An empty slot in a fixed-width neighbour list.
pub(crate) const NONE: u32 = u32::MAX;

/// What a search walks: a segment's vectors and links, by node (0..len).
pub(crate) trait Graph {
    fn len(&self) -> usize;
    /// The entry point and its (the graph's top) layer; `None` when empty.
    fn entry(&self) -> Option<(u32, usize)>;
    fn q(&self, node: u32) -> &[i8];
    fn scale(&self, node: u32) -> f32;
    /// `node`'s neighbours on `layer` into `out` (cleared first); none above its own layer.
    fn neighbours(&self, node: u32, layer: usize, out: &mut Vec<u32>);

    /// The cosine of an exact query with `node`'s vector.
    fn score(&self, query: &[f32], node: u32) -> f32 {
        dot_q(query, self.q(node)) * self.scale(node)
    }
}

/// A node and its similarity to what is searched; greater is better, ties go to the smaller node
/// (so equal scores order the same in every run).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Scored {
    pub sim: f32,
    pub node: u32,
}

impl Eq for Scored {}

impl Ord for Scored {
    fn cmp(&self, other: &Self) -> Ordering {
        self.sim
            .total_cmp(&other.sim)
            .then(other.node.cmp(&self.node))
    }
}

impl PartialOrd for Scored {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The nodes a search has seen: a bitset of the graph's size (32 KiB at 256k nodes), cleared by
/// the words it touched so a build reuses it for every insertion.
pub(crate) struct Visited {
    bits: Vec<u64>,
    touched: Vec<u32>,
}

impl Visited {
    pub fn new(n: usize) -> Visited {
        Visited {
            bits: vec![0; n.div_ceil(64)],
            touched: Vec::new(),
        }
    }

    /// Whether `node` is new (and marks it seen).
    fn insert(&mut self, node: u32) -> bool {
        let (w, b) = ((node / 64) as usize, node % 64);
        let word = &mut self.bits[w];
        if *word & (1 << b) != 0 {
            return false;
        }
        if *word == 0 {
            self.touched.push(w as u32);
        }
        *word |= 1 << b;
        true
    }

    fn clear(&mut self) {
        for w in self.touched.drain(..) {
            self.bits[w as usize] = 0;
        }
    }
}

/// The `ef` nodes nearest `query` that a search finds, best first.
pub(crate) fn search<G: Graph + ?Sized>(g: &G, query: &[f32], ef: usize) -> Vec<Scored> {
    let Some((ep, top)) = g.entry() else {
        return Vec::new();
    };
    let sim = |n: u32| g.score(query, n);
    let mut buf = Vec::with_capacity(M0);
    let mut cur = Scored {
        sim: sim(ep),
        node: ep,
    };
    for layer in (1..=top).rev() {
        cur = greedy(g, &sim, cur, layer, &mut buf);
    }
    let mut visited = Visited::new(g.len());
    search_layer(g, &sim, &[cur], ef.max(1), 0, &mut visited, &mut buf)
}

/// Move to the best neighbour on `layer` until none is better (`sim`: a node's similarity to what
/// is searched).
fn greedy<G: Graph + ?Sized>(
    g: &G,
    sim: &impl Fn(u32) -> f32,
    mut cur: Scored,
    layer: usize,
    buf: &mut Vec<u32>,
) -> Scored {
    loop {
        let mut moved = false;
        g.neighbours(cur.node, layer, buf);
        for &n in buf.iter() {
            let s = Scored {
                sim: sim(n),
                node: n,
            };
            if s > cur {
                cur = s;
                moved = true;
            }
        }
        if !moved {
            return cur;
        }
    }
}

/// The best-first search of one layer from `entries`, keeping `ef` results; best first.
fn search_layer<G: Graph + ?Sized>(
    g: &G,
    sim: &impl Fn(u32) -> f32,
    entries: &[Scored],
    ef: usize,
    layer: usize,
    visited: &mut Visited,
    buf: &mut Vec<u32>,
) -> Vec<Scored> {
    visited.clear();
    let mut candidates: BinaryHeap<Scored> = BinaryHeap::new();
    let mut results: BinaryHeap<Reverse<Scored>> = BinaryHeap::new();
    for &e in entries {
        if visited.insert(e.node) {
            candidates.push(e);
            results.push(Reverse(e));
        }
    }
    while results.len() > ef {
        results.pop();
    }
    while let Some(c) = candidates.pop() {
        if let Some(Reverse(worst)) = results.peek()
            && results.len() >= ef
            && c < *worst
        {
            break;
        }
        g.neighbours(c.node, layer, buf);
        for &n in buf.iter() {
            if !visited.insert(n) {
                continue;
            }
            let s = Scored {
                sim: sim(n),
                node: n,
            };
            let admit = results.len() < ef || results.peek().is_some_and(|Reverse(w)| s > *w);
            if admit {
                candidates.push(s);
                results.push(Reverse(s));
                if results.len() > ef {
                    results.pop();
                }
            }
        }
    }
    let mut out: Vec<Scored> = results.into_iter().map(|Reverse(s)| s).collect();
    out.sort_unstable_by(|a, b| b.cmp(a));
    out
}

/// A graph in memory: a build's result, before [`super::sealed::write`] lays it out in a file.
pub(crate) struct Built {
    pub dim: usize,
    pub q: Vec<i8>,
    pub scales: Vec<f32>,
    /// Layer-0 links, `M0` a node, padded with [`NONE`].
    pub layer0: Vec<u32>,
    /// Links on layers 1.. of each node (empty for a node on layer 0 only).
    pub upper: Vec<Vec<Vec<u32>>>,
    pub entry: Option<(u32, usize)>,
}

impl Graph for Built {
    fn len(&self) -> usize {
        self.scales.len()
    }

    fn entry(&self) -> Option<(u32, usize)> {
        self.entry
    }

    fn q(&self, node: u32) -> &[i8] {
        let at = node as usize * self.dim;
        &self.q[at..at + self.dim]
    }

    fn scale(&self, node: u32) -> f32 {
        self.scales[node as usize]
    }

    fn neighbours(&self, node: u32, layer: usize, out: &mut Vec<u32>) {
        out.clear();
        if layer == 0 {
            let at = node as usize * M0;
            out.extend(
                self.layer0[at..at + M0]
                    .iter()
                    .copied()
                    .take_while(|&n| n != NONE),
            );
        } else if let Some(links) = self.upper[node as usize].get(layer - 1) {
            out.extend_from_slice(links);
        }
    }
}

impl Built {
    /// The cosine of two stored vectors.
    fn pair(&self, a: u32, b: u32) -> f32 {
        dot_qq(self.q(a), self.q(b)) as f32 * self.scale(a) * self.scale(b)
    }

    /// The heuristic: of `candidates` (best first by similarity to the base point), keep up to
    /// `m`, each closer to the base than to every one kept before it.
    fn select(&self, candidates: &[Scored], m: usize) -> Vec<u32> {
        let mut kept: Vec<u32> = Vec::with_capacity(m);
        for c in candidates {
            if kept.len() >= m {
                break;
            }
            if kept.iter().all(|&r| self.pair(c.node, r) < c.sim) {
                kept.push(c.node);
            }
        }
        kept
    }

    fn set_links(&mut self, node: u32, layer: usize, links: &[u32]) {
        if layer == 0 {
            let at = node as usize * M0;
            let slot = &mut self.layer0[at..at + M0];
            slot.fill(NONE);
            slot[..links.len()].copy_from_slice(links);
        } else {
            self.upper[node as usize][layer - 1] = links.to_vec();
        }
    }

    /// Link `from` → `to` on `layer`, pruning `from`'s list with the heuristic when it is full.
    fn add_link(&mut self, from: u32, to: u32, layer: usize, buf: &mut Vec<u32>) {
        let cap = if layer == 0 { M0 } else { M };
        self.neighbours(from, layer, buf);
        if buf.len() < cap {
            buf.push(to);
            let links = std::mem::take(buf);
            self.set_links(from, layer, &links);
            *buf = links;
            return;
        }
        let mut candidates: Vec<Scored> = buf
            .iter()
            .chain(std::iter::once(&to))
            .map(|&n| Scored {
                sim: self.pair(from, n),
                node: n,
            })
            .collect();
        candidates.sort_unstable_by(|a, b| b.cmp(a));
        let kept = self.select(&candidates, cap);
        self.set_links(from, layer, &kept);
    }

    fn insert(&mut self, node: u32, level: usize, visited: &mut Visited, buf: &mut Vec<u32>) {
        let Some((ep, top)) = self.entry else {
            self.entry = Some((node, level));
            return;
        };
        // Stored against stored, in integers: faster than an `f32` query against 8-bit vectors,
        // and the same neighbours to within the quantization.
        let sim = |n: u32| self.pair(node, n);
        let mut cur = Scored {
            sim: sim(ep),
            node: ep,
        };
        for layer in (level + 1..=top).rev() {
            cur = greedy(self, &sim, cur, layer, buf);
        }
        let mut entries = vec![cur];
        // Linked once every layer is searched (a layer's search reads only that layer's links).
        let mut chosen = Vec::new();
        for layer in (0..=level.min(top)).rev() {
            let found = search_layer(self, &sim, &entries, EF_CONSTRUCTION, layer, visited, buf);
            let found: Vec<Scored> = found.into_iter().filter(|s| s.node != node).collect();
            chosen.push((layer, self.select(&found, M)));
            if !found.is_empty() {
                entries = found;
            }
        }
        for (layer, links) in chosen {
            self.set_links(node, layer, &links);
            for &n in &links {
                self.add_link(n, node, layer, buf);
            }
        }
        if level > top {
            self.entry = Some((node, level));
        }
    }
}

/// A small seeded generator (xorshift64*): a build is the same in every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in (0, 1].
    fn unit(&mut self) -> f64 {
        ((self.next() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }
}

/// Build the graph of `scales.len()` vectors (`dim` integers each in `q`, node `i` at row `i`).
/// Points are inserted in a seeded shuffled order, so an order in the input (by id) does not
/// shape the graph.
pub(crate) fn build(dim: usize, q: Vec<i8>, scales: Vec<f32>) -> Built {
    let n = scales.len();
    debug_assert_eq!(q.len(), n * dim);
    let mut rng = Rng(0x005e_ed0f_9a7c_11a5);
    let ml = 1.0 / (M as f64).ln();
    let levels: Vec<usize> = (0..n)
        .map(|_| ((-rng.unit().ln() * ml) as usize).min(MAX_LAYER))
        .collect();
    let mut order: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        let j = (rng.next() % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    let mut g = Built {
        dim,
        q,
        scales,
        layer0: vec![NONE; n * M0],
        upper: levels.iter().map(|&l| vec![Vec::new(); l]).collect(),
        entry: None,
    };
    let mut visited = Visited::new(n);
    let mut buf = Vec::with_capacity(M0 + 1);
    for node in order {
        g.insert(node, levels[node as usize], &mut visited, &mut buf);
    }
    g
}
