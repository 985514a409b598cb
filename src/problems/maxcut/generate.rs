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
