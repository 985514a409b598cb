//! Recursive balanced bisection trees, cotengra's `kahypar` starts (Gray and Kourtis 2021,
//! "Hyper-optimized tensor network contraction", sec. 4.2): split a group of tensors into two
//! halves of nearly equal count whose cut, the summed log2 size of the indices carried on both
//! sides (a hyperedge counts once), is small; recurse into each half; the tree joins the halves.
//! Each split grows a region breadth-first from a random tensor to half the group, then refines
//! it by Fiduccia-Mattheyses passes (move the unlocked tensor of best gain that keeps the balance,
//! lock it, keep the best prefix of the pass). The balance per split, |half| within
//! (1 +- imbalance) |group| / 2, takes `imbalance` from the caller (a random one per chain start).
//! Indices reaching outside the group do not count: they are cut whatever the split.

use super::tree::ContractionTree;
use super::Network;
use rand::seq::SliceRandom;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::VecDeque;

/// FM passes per split (a pass that does not lower the cut ends the refinement).
const PASSES: usize = 4;

/// A recursive-bisection tree of the network with balance `imbalance` (0 = exact halves),
/// groups of at most `cutoff` (>= 1) tensors ordered by greedy.
pub fn bisection_tree(
    network: &Network,
    imbalance: f64,
    cutoff: usize,
    rng: &mut Xoshiro256PlusPlus,
) -> ContractionTree {
    let cutoff = cutoff.max(1);
    let n = network.num_tensors();
    // holders[i]: the tensors carrying summed or open index i.
    let mut holders: Vec<Vec<u32>> = vec![Vec::new(); network.carriers.len()];
    for (t, tensor) in network.tensors.iter().enumerate() {
        tensor.iter().for_each(|&i| holders[i as usize].push(t as u32));
    }
    let mut splitter = Splitter { network, holders, side: vec![u8::MAX; n], imbalance, cutoff };
    let mut pairs = Vec::with_capacity(n.saturating_sub(1));
    let all: Vec<u32> = (0..n as u32).collect();
    splitter.build(all, rng, &mut pairs);
    ContractionTree::from_ssa(n, pairs)
}

struct Splitter<'a> {
    network: &'a Network,
    holders: Vec<Vec<u32>>,
    /// side[t] within the group being split (0 or 1); u8::MAX outside it.
    side: Vec<u8>,
    imbalance: f64,
    /// Groups of at most this many tensors are ordered by greedy instead of split.
    cutoff: usize,
}

impl Splitter<'_> {
    /// Builds the subtree of `group` (post-order, so `pairs` stays in SSA order); its SSA id.
    fn build(&mut self, group: Vec<u32>, rng: &mut Xoshiro256PlusPlus, pairs: &mut Vec<[u32; 2]>) -> u32 {
        if group.len() <= self.cutoff {
            return self.greedy(&group, pairs);
        }
        let (left, right) = self.split(&group, rng);
        let a = self.build(left, rng, pairs);
        let b = self.build(right, rng, pairs);
        pairs.push([a.min(b), a.max(b)]);
        (self.network.num_tensors() + pairs.len() - 1) as u32
    }

    /// A small group's tree by greedy's score (size(result) - size(A) - size(B), among pairs
    /// sharing an index; outer products of the smallest when none do); its root's SSA id.
    fn greedy(&self, group: &[u32], pairs: &mut Vec<[u32; 2]>) -> u32 {
        let network = self.network;
        let mut live: Vec<(u32, super::tree::Legs)> =
            group.iter().map(|&t| (t, network.leaf_legs(t as usize))).collect();
        while live.len() > 1 {
            let mut best: Option<(bool, f64, usize, usize)> = None;
            for x in 0..live.len() {
                for y in x + 1..live.len() {
                    let (a, b) = (&live[x].1, &live[y].1);
                    let (_, merged) = network.merge(a, b);
                    let shares = merged.len() < a.len() + b.len();
                    let score = network.size_of(&merged).exp2() - network.size_of(a).exp2() - network.size_of(b).exp2();
                    let better = match best {
                        None => true,
                        Some((s, c, _, _)) => (shares && !s) || (shares == s && score < c),
                    };
                    if better {
                        best = Some((shares, score, x, y));
                    }
                }
            }
            let (_, _, x, y) = best.expect("two live tensors");
            let (b, lb) = live.swap_remove(y);
            let (a, la) = live.swap_remove(x);
            let (_, merged) = network.merge(&la, &lb);
            pairs.push([a.min(b), a.max(b)]);
            live.push(((network.num_tensors() + pairs.len() - 1) as u32, merged));
        }
        live[0].0
    }

    /// The indices of tensor t shared with another tensor of the current group, with weights.
    fn inner_indices(&self, t: u32) -> impl Iterator<Item = (usize, f64)> + '_ {
        self.network.tensors[t as usize].iter().map(|&i| i as usize).filter_map(move |i| {
            let inside = self.holders[i].iter().filter(|&&h| self.side[h as usize] != u8::MAX).count();
            (inside >= 2).then_some((i, self.network.log2_sizes[i]))
        })
    }

    fn split(&mut self, group: &[u32], rng: &mut Xoshiro256PlusPlus) -> (Vec<u32>, Vec<u32>) {
        let size = group.len();
        let half = size as f64 / 2.0;
        let low = ((half * (1.0 - self.imbalance)).floor() as usize).clamp(1, size - 1);
        let high = ((half * (1.0 + self.imbalance)).ceil() as usize).clamp(low, size - 1);
        group.iter().for_each(|&t| self.side[t as usize] = 1);
        // Region growing: side 0 gets the first half reached breadth-first from a random tensor
        // (a fresh random start whenever the region's component is used up).
        let target = size / 2;
        let mut order: Vec<u32> = group.to_vec();
        order.shuffle(rng);
        let mut starts = order.into_iter();
        let mut queued = std::collections::HashSet::new();
        let mut queue = VecDeque::new();
        let mut taken = 0;
        while taken < target {
            let t = match queue.pop_front() {
                Some(t) => t,
                None => match starts.find(|t| !queued.contains(t)) {
                    Some(t) => {
                        queued.insert(t);
                        t
                    }
                    None => break,
                },
            };
            self.side[t as usize] = 0;
            taken += 1;
            for &i in &self.network.tensors[t as usize] {
                for &h in &self.holders[i as usize] {
                    if self.side[h as usize] == 1 && queued.insert(h) {
                        queue.push_back(h);
                    }
                }
            }
        }
        self.refine(group, (low, high), rng);
        let (mut left, mut right) = (Vec::new(), Vec::new());
        for &t in group {
            if self.side[t as usize] == 0 {
                left.push(t)
            } else {
                right.push(t)
            }
        }
        group.iter().for_each(|&t| self.side[t as usize] = u8::MAX);
        (left, right)
    }

    /// Per index of the group: how many of its carriers lie on each side.
    fn counts(&self, group: &[u32]) -> std::collections::HashMap<usize, [u32; 2]> {
        let mut counts = std::collections::HashMap::new();
        for &t in group {
            for (i, _) in self.inner_indices(t) {
                counts.entry(i).or_insert([0u32; 2])[self.side[t as usize] as usize] += 1;
            }
        }
        counts
    }

    /// The cut change of moving t to the other side.
    fn gain(&self, t: u32, counts: &std::collections::HashMap<usize, [u32; 2]>) -> f64 {
        let from = self.side[t as usize] as usize;
        self.inner_indices(t)
            .map(|(i, w)| {
                let c = counts[&i];
                let before = c[0] > 0 && c[1] > 0;
                let after = c[from] > 1;
                w * (f64::from(u8::from(before)) - f64::from(u8::from(after)))
            })
            .sum()
    }

    fn refine(&mut self, group: &[u32], (low, high): (usize, usize), rng: &mut Xoshiro256PlusPlus) {
        let mut zero = group.iter().filter(|&&t| self.side[t as usize] == 0).count();
        for _ in 0..PASSES {
            let mut counts = self.counts(group);
            let mut locked = std::collections::HashSet::new();
            let (mut running, mut best, mut best_at) = (0.0, 0.0, 0);
            let mut moved: Vec<u32> = Vec::new();
            let mut candidates: Vec<u32> = group.to_vec();
            candidates.shuffle(rng);
            loop {
                let mut choice: Option<(f64, u32)> = None;
                for &t in &candidates {
                    if locked.contains(&t) {
                        continue;
                    }
                    let to_zero = self.side[t as usize] == 1;
                    let after = if to_zero { zero + 1 } else { zero - 1 };
                    if after < low || after > high {
                        continue;
                    }
                    let g = self.gain(t, &counts);
                    if choice.is_none_or(|(best_gain, _)| g > best_gain) {
                        choice = Some((g, t));
                    }
                }
                let Some((g, t)) = choice else { break };
                let from = self.side[t as usize] as usize;
                for (i, _) in self.inner_indices(t).collect::<Vec<_>>() {
                    let c = counts.get_mut(&i).expect("counted");
                    c[from] -= 1;
                    c[1 - from] += 1;
                }
                self.side[t as usize] = 1 - from as u8;
                zero = if from == 1 { zero + 1 } else { zero - 1 };
                locked.insert(t);
                moved.push(t);
                running += g;
                if running > best + 1e-12 {
                    (best, best_at) = (running, moved.len());
                }
                // A long run of losing moves rarely recovers; end the pass.
                if moved.len() > best_at + 50 {
                    break;
                }
            }
            for &t in moved[best_at..].iter().rev() {
                let from = self.side[t as usize];
                self.side[t as usize] = 1 - from;
                zero = if from == 1 { zero + 1 } else { zero - 1 };
            }
            if best_at == 0 {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bisection_trees_are_complete_and_cheaper_than_random_orders_on_circuits() {
        let network = super::super::parse_einsum(
            &super::super::generate::random_circuit(30, 10, 5),
            &crate::problems::Limits::default(),
        )
        .unwrap();
        let mut rng = crate::search::chain_rng(3, 0, 0);
        let tree = bisection_tree(&network, 0.2, 8, &mut rng);
        assert_eq!(tree.children.len() + 1, network.num_tensors());
        let mut seen = vec![false; 2 * network.num_tensors() - 1];
        for (k, &[a, b]) in tree.children.iter().enumerate() {
            assert!(a < b && (b as usize) < network.num_tensors() + k, "children before parents");
            assert!(!seen[a as usize] && !seen[b as usize], "each node used once");
            seen[a as usize] = true;
            seen[b as usize] = true;
        }
        let bisected = tree.cost(&network).log2_flops;
        // A contraction in a random order (a caterpillar) as the uninformed reference.
        let n = network.num_tensors() as u32;
        let mut order: Vec<u32> = (0..n).collect();
        order.shuffle(&mut rng);
        let chain: Vec<[u32; 2]> = (1..n as usize)
            .map(|k| if k == 1 { [order[0], order[1]] } else { [order[k], n + k as u32 - 2] })
            .map(|[a, b]| [a.min(b), a.max(b)])
            .collect();
        let caterpillar = ContractionTree::from_ssa(n as usize, chain).cost(&network).log2_flops;
        assert!(bisected < caterpillar - 3.0, "bisection 2^{bisected} vs caterpillar 2^{caterpillar}");
    }
}
