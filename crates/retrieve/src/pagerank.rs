//! PageRank on a weighted directed graph, optionally personalised: the random surfer follows an
//! edge with probability `damping` (in proportion to its weight) and otherwise jumps to a node
//! drawn from the personalisation vector (uniform when none is given). A node without outgoing
//! edges hands its rank to the personalisation vector too, so the ranks always sum to 1. Used by
//! the repository map: a file that many others reference ranks high.

/// The usual probability of following an edge rather than jumping.
pub const DAMPING: f64 = 0.85;
const MAX_ITERATIONS: usize = 100;
/// Stop when no rank moved by more than this (L1 over all nodes).
const TOLERANCE: f64 = 1e-9;

/// The rank of each of `n` nodes. `edges` are `(from, to, weight)`; weights ≤ 0, self loops and
/// out-of-range nodes are ignored. `personalisation` (any non-negative weights, normalised here;
/// all zero or `None` = uniform) biases both the jumps and the ranks toward its nodes.
pub fn pagerank(
    n: usize,
    edges: &[(usize, usize, f64)],
    personalisation: Option<&[f64]>,
    damping: f64,
) -> Vec<f64> {
    if n == 0 {
        return Vec::new();
    }
    let mut jump = vec![1.0 / n as f64; n];
    if let Some(p) = personalisation {
        let total: f64 = p.iter().take(n).filter(|w| **w > 0.0).sum();
        if total > 0.0 {
            for (i, j) in jump.iter_mut().enumerate() {
                *j = p.get(i).copied().filter(|w| *w > 0.0).unwrap_or(0.0) / total;
            }
        }
    }
    let mut out_weight = vec![0.0; n];
    let edges: Vec<(usize, usize, f64)> = edges
        .iter()
        .copied()
        .filter(|&(f, t, w)| f < n && t < n && f != t && w > 0.0)
        .collect();
    for &(f, _, w) in &edges {
        out_weight[f] += w;
    }
    let mut rank = jump.clone();
    for _ in 0..MAX_ITERATIONS {
        let dangling: f64 = (0..n)
            .filter(|&i| out_weight[i] == 0.0)
            .map(|i| rank[i])
            .sum();
        let mut next: Vec<f64> = jump
            .iter()
            .map(|j| (1.0 - damping) * j + damping * dangling * j)
            .collect();
        for &(f, t, w) in &edges {
            next[t] += damping * rank[f] * w / out_weight[f];
        }
        let delta: f64 = next.iter().zip(&rank).map(|(a, b)| (a - b).abs()).sum();
        rank = next;
        if delta < TOLERANCE {
            break;
        }
    }
    rank
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sum(v: &[f64]) -> f64 {
        v.iter().sum()
    }

    #[test]
    fn a_node_everyone_points_to_ranks_first() {
        // 0 is called by 1..=4; 4 also calls 3; 5 is isolated.
        let edges = [
            (1, 0, 1.0),
            (2, 0, 1.0),
            (3, 0, 1.0),
            (4, 0, 1.0),
            (4, 3, 1.0),
        ];
        let r = pagerank(6, &edges, None, DAMPING);
        assert!((sum(&r) - 1.0).abs() < 1e-9, "{r:?}");
        assert!(r[1..].iter().all(|x| *x < r[0]), "{r:?}");
        assert!(
            r[3] > r[1],
            "a node with one caller beats one without: {r:?}"
        );
        assert!(
            (r[1] - r[5]).abs() < 1e-12,
            "leaves without callers tie: {r:?}"
        );
    }

    #[test]
    fn personalisation_lifts_the_seed_and_what_it_reaches() {
        // Two separate chains: 0 → 1, 2 → 3.
        let edges = [(0, 1, 1.0), (2, 3, 1.0)];
        let flat = pagerank(4, &edges, None, DAMPING);
        assert!((flat[1] - flat[3]).abs() < 1e-12);
        let seeded = pagerank(4, &edges, Some(&[0.0, 0.0, 1.0, 0.0]), DAMPING);
        assert!(seeded[3] > seeded[1] && seeded[2] > seeded[0], "{seeded:?}");
        assert!((sum(&seeded) - 1.0).abs() < 1e-9);
        // All-zero personalisation is uniform.
        assert_eq!(pagerank(4, &edges, Some(&[0.0; 4]), DAMPING), flat);
    }

    #[test]
    fn weights_split_a_nodes_rank_and_bad_edges_are_ignored() {
        let r = pagerank(
            3,
            &[
                (0, 1, 3.0),
                (0, 2, 1.0),
                (1, 1, 5.0),
                (0, 9, 1.0),
                (2, 0, -1.0),
            ],
            None,
            DAMPING,
        );
        assert!(r[1] > r[2], "{r:?}");
        assert!((sum(&r) - 1.0).abs() < 1e-9);
        assert!(pagerank(0, &[], None, DAMPING).is_empty());
    }
}
