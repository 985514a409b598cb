//! Simulated annealing on contraction trees by local rotations (TreeSA: Kalachev, Panteleev and
//! Yung, "Multi-tensor contraction for XEB verification of quantum circuits", 2021, sec. 3), in
//! the engine's chains (`search::moves`). A move picks an inner node p = (q, C) with an inner
//! child q = (A, B) and swaps C with A or with B: p = ((C, B), A) or ((A, C), B). Only q's
//! result changes (p keeps its leaf set), so the move re-costs two contractions and the energy
//! log10(total cost) changes by log10(1 - (c_q + c_p - c_q' - c_p') / total); Metropolis accepts
//! it at the temperature of a geometric cycle (`cycle_temperature`). Every chain starts from
//! the better of a randomised greedy tree (`greedy::random_rule`, its own per chain) and plain
//! greedy; when a model serves (`policy.rs`), the first chain weighs the policy's greedy rollout
//! too, and every other even chain a rollout sampled from the policy instead of plain greedy.
//!
//! Measured and left out: a memory bound does not change the energy; the best tree
//! is sliced afterwards (`slicing.rs`). TreeSA's size penalty (per bit above the bound, summed
//! over intermediates) gave, on three generated circuits with the bound 6 bits under the free
//! width (3 s, seed 0), sliced costs 12.50-15.55 / 20.49-21.88 / 22.33-23.19 for weights 0.01-0.3
//! (log10 per bit) against 11.38 / 15.79 / 15.57 without it. Subtree reconfiguration (cotengra's:
//! the cheapest order of a subtree's 6 or 8 widest parts by dynamic programming, kept when
//! cheaper, every 200 or 1,000 moves) gave 14.21-17.87 against 14.23-14.27 without it on the two
//! tuning circuits (seeds 0-1, 6 s, one chain). Recursive-bisection starts (`bisection.rs`,
//! `AnnealConfig::bisection_starts`): its trees are 15.9-16.5 best and 17.2-17.7
//! median of 20 on m12 (greedy 17.49), and on two generated circuits (49 qubits x 14 cycles, 42 x
//! 18; seeds 0-1, 1,000 rounds, one chain) the search reached 14.56 / 14.29 / 14.71 / 15.16 with
//! them against 14.32 / 14.54 / 14.81 / 14.71 without, so they stay off.

use super::bisection::bisection_tree;
use super::greedy::{greedy, greedy_with, random_rule};
use super::policy::{policy_tree, rollout, Choice, PairScorer};
use super::tree::{log2_add, ContractionTree, Legs};
use super::Network;
use crate::search::moves::{cycle_temperature, MoveSet};
use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Annealing settings, in log10 units of the total cost.
#[derive(Debug, Clone, Copy)]
pub struct AnnealConfig {
    /// Temperature at the start of a cycle.
    pub hot: f64,
    /// Temperature at its end.
    pub cold: f64,
    /// Moves per cycle, per inner node.
    pub cycle_per_node: u64,
    /// Moves per round, per inner node.
    pub round_per_node: usize,
    /// Whether each chain also draws a recursive-bisection tree (`bisection.rs`) as a start.
    /// Off: measured without gain (module doc).
    pub bisection_starts: bool,
}

impl Default for AnnealConfig {
    /// Tuned on generated circuits (49 qubits x 14 cycles, 42 x 18; seeds 0-1, 6 s, one chain), never
    /// on the Sycamore files: hot 0.3 / cold 3e-4 gave 14.23-14.24 on both, cold 1e-3 14.27-14.72,
    /// cold 1e-2 15.8-18.2, hot 1 14.4-15.1; cycles of 2,000 and 8,000 moves per node alike.
    fn default() -> Self {
        AnnealConfig { hot: 0.3, cold: 3e-4, cycle_per_node: 2_000, round_per_node: 50, bisection_starts: false }
    }
}

/// One chain: the tree as child links over 2n - 1 nodes (leaves 0..n), each node's
/// legs, each inner node's log2 cost, the log2 total, and the best tree seen.
#[derive(Clone)]
pub struct TreeChain {
    children: Vec<[u32; 2]>,
    legs: Vec<Legs>,
    cost: Vec<f64>,
    total: f64,
    moves: u64,
    best: ContractionTree,
    best_energy: f64,
}

pub struct TreeAnneal<'a> {
    network: &'a Network,
    config: AnnealConfig,
    /// Plain greedy's tree and its log2 cost, computed once for every chain's start.
    greedy: (ContractionTree, f64),
    /// The learned policy (`policy.rs`), when a model serves: its scorer and its greedy rollout
    /// with the rollout's log2 cost.
    policy: Option<(&'a PairScorer, ContractionTree, f64)>,
    /// Chains started so far (`minimize_with` starts them one after another, in chain order).
    started: AtomicUsize,
}

impl<'a> TreeAnneal<'a> {
    pub fn new(network: &'a Network) -> Self {
        let tree = greedy(network);
        let cost = tree.cost(network).log2_flops;
        TreeAnneal {
            network,
            config: AnnealConfig::default(),
            greedy: (tree, cost),
            policy: None,
            started: AtomicUsize::new(0),
        }
    }

    /// Starts chains from the policy: the first from its greedy rollout (when cheaper than the
    /// other starts), the other even ones from the cheaper of their randomised greedy and a
    /// rollout sampled from the policy with the chain's generator.
    pub fn with_policy(mut self, scorer: &'a PairScorer) -> Self {
        let tree = policy_tree(self.network, scorer);
        let cost = tree.cost(self.network).log2_flops;
        self.policy = Some((scorer, tree, cost));
        self
    }

    fn leaves(&self) -> usize {
        self.network.num_tensors()
    }

    fn chain(&self, tree: &ContractionTree) -> TreeChain {
        let children = tree.children.clone();
        let (legs, cost) = tree.evaluate(self.network);
        let mut costs = vec![0.0; children.len()];
        for (k, &[a, b]) in children.iter().enumerate() {
            costs[k] = self.network.merge(&legs[a as usize], &legs[b as usize]).0;
        }
        let energy = cost.log10_flops();
        TreeChain {
            children,
            legs,
            cost: costs,
            total: cost.log2_flops,
            moves: 0,
            best: tree.clone(),
            best_energy: energy,
        }
    }

    /// The chain's tree in SSA order (children before parents).
    fn tree_of(&self, chain: &TreeChain) -> ContractionTree {
        let n = self.leaves();
        if n == 1 {
            return ContractionTree { leaves: 1, children: Vec::new() };
        }
        let mut ssa = vec![u32::MAX; 2 * n - 1];
        (0..n).for_each(|t| ssa[t] = t as u32);
        let mut pairs = Vec::with_capacity(n - 1);
        // The root is the start tree's last inner node; rotations keep every node's id.
        let mut stack = vec![((2 * n - 2) as u32, false)];
        while let Some((node, expanded)) = stack.pop() {
            if (node as usize) < n {
                continue;
            }
            let [a, b] = chain.children[node as usize - n];
            if expanded {
                pairs.push([ssa[a as usize], ssa[b as usize]]);
                ssa[node as usize] = (n + pairs.len() - 1) as u32;
            } else {
                stack.push((node, true));
                stack.push((b, false));
                stack.push((a, false));
            }
        }
        ContractionTree::from_ssa(n, pairs)
    }

    /// Recomputes the total from the node costs (removes the drift of incremental updates).
    fn retotal(chain: &mut TreeChain) {
        chain.total = chain.cost.iter().fold(f64::NEG_INFINITY, |t, &c| log2_add(t, c));
    }

    /// One rotation proposal at inner node p; true when accepted.
    fn rotate(&self, chain: &mut TreeChain, rng: &mut Xoshiro256PlusPlus, temperature: f64) -> bool {
        let n = self.leaves();
        let p = n + rng.gen_range(0..n - 1);
        let [x, y] = chain.children[p - n];
        let (q, c) = match ((x as usize) >= n, (y as usize) >= n) {
            (false, false) => return false,
            (true, false) => (x, y),
            (false, true) => (y, x),
            (true, true) => {
                if rng.gen::<bool>() {
                    (x, y)
                } else {
                    (y, x)
                }
            }
        };
        let q_index = q as usize - n;
        let [a, b] = chain.children[q_index];
        // Swap c with `out` (one of q's children); q keeps `stay`.
        let (out, stay) = if rng.gen::<bool>() { (a, b) } else { (b, a) };
        let (new_q_cost, new_q_legs) = self.network.merge(&chain.legs[c as usize], &chain.legs[stay as usize]);
        let (new_p_cost, _) = self.network.merge(&new_q_legs, &chain.legs[out as usize]);
        let (old_q_cost, old_p_cost) = (chain.cost[q_index], chain.cost[p - n]);
        let ratio = 1.0 - (old_q_cost - chain.total).exp2() - (old_p_cost - chain.total).exp2()
            + (new_q_cost - chain.total).exp2()
            + (new_p_cost - chain.total).exp2();
        let ratio = ratio.max(f64::MIN_POSITIVE);
        let delta = ratio.log10();
        if delta > 0.0 && rng.gen::<f64>() >= (-delta / temperature).exp() {
            return false;
        }
        chain.children[q_index] = [c, stay];
        chain.children[p - n] = [q, out];
        chain.legs[q as usize] = new_q_legs;
        chain.cost[q_index] = new_q_cost;
        chain.cost[p - n] = new_p_cost;
        chain.total += ratio.log2();
        true
    }
}

impl MoveSet for TreeAnneal<'_> {
    type Chain = TreeChain;
    type Solution = ContractionTree;

    fn num_variables(&self) -> usize {
        self.leaves().saturating_sub(1).max(1)
    }

    fn moves_per_round(&self) -> usize {
        self.config.round_per_node * self.num_variables()
    }

    fn min_patience_rounds(&self) -> usize {
        // Twenty annealing cycles: a later cycle often finds a better tree after several that
        // did not (each cycle reheats from the chain's current tree).
        (20 * self.config.cycle_per_node as usize).div_ceil(self.config.round_per_node).max(8)
    }

    fn start(&self, _chain: usize, rng: &mut Xoshiro256PlusPlus) -> TreeChain {
        let rule = random_rule(rng);
        let random = greedy_with(self.network, rule, rng);
        let random_cost = random.cost(self.network).log2_flops;
        let started = self.started.fetch_add(1, Ordering::Relaxed);
        // Chain 0 weighs the policy's rollout, every other even chain a rollout sampled from
        // the policy, and the odd chains (all chains without a policy) plain greedy, so that
        // half the chains start outside the policy's basin.
        let mut best = (random, random_cost);
        match &self.policy {
            Some((_, tree, cost)) if started == 0 => {
                for (tree, cost) in [(&self.greedy.0, self.greedy.1), (tree, *cost)] {
                    if cost < best.1 {
                        best = (tree.clone(), cost);
                    }
                }
            }
            Some((scorer, _, _)) if started.is_multiple_of(2) => {
                let sampled = rollout(self.network, scorer, Choice::Sample(rng), false).0;
                let cost = sampled.cost(self.network).log2_flops;
                if cost < best.1 {
                    best = (sampled, cost);
                }
            }
            _ if self.greedy.1 < best.1 => best = (self.greedy.0.clone(), self.greedy.1),
            _ => {}
        }
        let (mut tree, best_cost) = best;
        if self.config.bisection_starts {
            let bisected = bisection_tree(self.network, rng.gen_range(0.0..0.3), 12, rng);
            if bisected.cost(self.network).log2_flops < best_cost {
                tree = bisected;
            }
        }
        self.chain(&tree)
    }

    fn advance(&self, chain: &mut TreeChain, moves: usize, rng: &mut Xoshiro256PlusPlus) {
        if self.leaves() < 3 {
            return;
        }
        let cycle = self.config.cycle_per_node * self.num_variables() as u64;
        for _ in 0..moves {
            let temperature = cycle_temperature(chain.moves, cycle, self.config.hot, self.config.cold);
            chain.moves += 1;
            if self.rotate(chain, rng, temperature) {
                let energy = chain.total * std::f64::consts::LOG10_2;
                if energy < chain.best_energy - 1e-12 {
                    Self::retotal(chain);
                    let energy = chain.total * std::f64::consts::LOG10_2;
                    if energy < chain.best_energy - 1e-12 {
                        chain.best = self.tree_of(chain);
                        chain.best_energy = energy;
                    }
                }
            }
        }
        Self::retotal(chain);
    }

    fn best(&self, chain: &TreeChain) -> (ContractionTree, f64) {
        (chain.best.clone(), chain.best_energy)
    }
}
