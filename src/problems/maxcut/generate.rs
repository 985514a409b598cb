//! Random Max-Cut instances in Gset text form, for `rlsolver generate`, tests and examples.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashSet;

/// An Erdos-Renyi-style graph with exactly `m` distinct edges among `n` nodes, weights from
/// `weights` chosen uniformly; reproducible from `seed`. Panics if m exceeds n (n - 1) / 2.
pub fn random_gset(n: usize, m: usize, weights: &[i64], seed: u64) -> String {
    assert!(m <= n * n.saturating_sub(1) / 2, "{m} edges do not fit in {n} nodes");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut seen = HashSet::with_capacity(m);
    let mut lines = Vec::with_capacity(m + 1);
    lines.push(format!("{n} {m}"));
    while seen.len() < m {
        let (u, v) = (rng.gen_range(0..n), rng.gen_range(0..n));
        if u != v && seen.insert((u.min(v), u.max(v))) {
            let w = weights[rng.gen_range(0..weights.len())];
            lines.push(format!("{} {} {w}", u + 1, v + 1));
        }
    }
    lines.join("\n") + "\n"
}

/// The `side` x `side` toroidal grid with +-1 couplings drawn from `seed`, in Gset text form (a
/// 2-D spin glass; 100 x 100 is the 10,000-node torus of the backend benchmarks). `side` >= 3 (below, the
/// wrap-around edges would repeat).
pub fn torus_gset(side: usize, seed: u64) -> String {
    assert!(side >= 3, "a torus needs a side of at least 3");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = side * side;
    let mut lines = vec![format!("{n} {}", 2 * n)];
    for r in 0..side {
        for c in 0..side {
            let i = r * side + c;
            for j in [r * side + (c + 1) % side, ((r + 1) % side) * side + c] {
                let w = if rng.gen_bool(0.5) { 1 } else { -1 };
                lines.push(format!("{} {} {w}", i + 1, j + 1));
            }
        }
    }
    lines.join("\n") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problems::{IsingProblem, Limits};

    #[test]
    fn the_torus_parses_with_four_neighbours_per_node_and_mixed_signs() {
        let graph = super::super::parse_gset(&torus_gset(5, 3), &Limits::default()).unwrap();
        assert_eq!((graph.num_nodes(), graph.edges().len()), (25, 50));
        let mut degree = [0; 25];
        for &(u, v, _) in graph.edges() {
            degree[u as usize] += 1;
            degree[v as usize] += 1;
        }
        assert!(degree.iter().all(|&d| d == 4));
        let positive = graph.edges().iter().filter(|e| e.2 > 0.0).count();
        assert!(positive > 0 && positive < 50);
        assert_eq!(graph.ising().num_spins(), 25);
    }
}
