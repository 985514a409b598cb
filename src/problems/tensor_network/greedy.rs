//! Greedy contraction orders. `greedy` is opt_einsum's rule ("memory removed"): among the live
//! pairs sharing an index, contract the one minimising size(result) - size(A) - size(B); when no
//! pair shares an index, the two smallest tensors form an outer product. `random-greedy` is
//! opt_einsum's / cotengra's randomised version, repeated until the time limit: per try a cost
//! modifier alpha ~ U(0.1, 4) in size(result) - alpha (size(A) + size(B)) and a temperature
//! log-uniform in [0.001, 1]; each step takes one of the 8 cheapest pairs with Boltzmann weights
//! exp(-(c - c_min) / (T max(1, |c_min|))), as opt_einsum's `thermal_chooser`.

use super::tree::{ContractionTree, Legs};
use super::Network;
pub use crate::problems::random::weighted_pick;
use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy)]
struct Candidate {
    cost: f64,
    a: u32,
    b: u32,
}

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Candidate {}
impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
/// Reversed, so the `BinaryHeap` pops the cheapest first; ties by the higher id, then the
/// lower (a < b), as opt_einsum's key (cost, id2, id1).
impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> Ordering {
        other.cost.total_cmp(&self.cost).then((other.b, other.a).cmp(&(self.b, self.a)))
    }
}

/// How a greedy run scores and picks pairs.
#[derive(Debug, Clone, Copy)]
pub struct GreedyRule {
    /// alpha in size(result) - alpha (size(A) + size(B)).
    pub cost_modifier: f64,
    /// None: always the cheapest; Some(T): Boltzmann choice among the 8 cheapest.
    pub temperature: Option<f64>,
}

impl Default for GreedyRule {
    fn default() -> Self {
        GreedyRule { cost_modifier: 1.0, temperature: None }
    }
}

/// The greedy tree of `rule` (rng only for a temperature).
pub fn greedy_with(network: &Network, rule: GreedyRule, rng: &mut Xoshiro256PlusPlus) -> ContractionTree {
    let n = network.num_tensors();
    let mut state = Contraction::new(network);
    let size = |l: &Legs| network.size_of(l).exp2();
    let score = |legs: &[Option<Legs>], a: u32, b: u32| -> f64 {
        let (la, lb) = (legs[a as usize].as_ref().expect("live"), legs[b as usize].as_ref().expect("live"));
        let (_, merged) = network.merge(la, lb);
        size(&merged) - rule.cost_modifier * (size(la) + size(lb))
    };
    let mut heap = BinaryHeap::new();
    // opt_einsum pushes every candidate only for a custom chooser; plain greedy pushes the
    // cheapest of each group (the pairs of one tensor with its later partners on one index,
    // then the new tensor with all its neighbours).
    let push_all = rule.temperature.is_some();
    let push = |heap: &mut BinaryHeap<Candidate>, legs: &[Option<Legs>], a: u32, partners: &[u32]| {
        let candidates = partners.iter().map(|&b| {
            let (x, y) = (a.min(b), a.max(b));
            Candidate { cost: score(legs, x, y), a: x, b: y }
        });
        if push_all {
            heap.extend(candidates);
        } else if let Some(cheapest) = candidates.max() {
            // `max` in the reversed order: the cheapest.
            heap.push(cheapest);
        }
    };
    for holders_of in &state.holders {
        for (k, &a) in holders_of.iter().enumerate() {
            push(&mut heap, &state.legs, a, &holders_of[k + 1..]);
        }
    }
    let live = |legs: &[Option<Legs>], c: &Candidate| legs[c.a as usize].is_some() && legs[c.b as usize].is_some();
    while state.pairs.len() + 1 < n {
        let chosen = match rule.temperature {
            None => loop {
                match heap.pop() {
                    Some(c) if live(&state.legs, &c) => break Some(c),
                    Some(_) => continue,
                    None => break None,
                }
            },
            Some(temperature) => {
                let mut options = Vec::with_capacity(8);
                while options.len() < 8 {
                    match heap.pop() {
                        Some(c) if live(&state.legs, &c) => options.push(c),
                        Some(_) => continue,
                        None => break,
                    }
                }
                if options.is_empty() {
                    None
                } else {
                    let cheapest = options[0].cost;
                    let scale = temperature * cheapest.abs().max(1.0);
                    let weights: Vec<f64> = options.iter().map(|c| (-(c.cost - cheapest) / scale).exp()).collect();
                    let at = weighted_pick(&weights, rng);
                    let chosen = options.swap_remove(at);
                    heap.extend(options);
                    Some(chosen)
                }
            }
        };
        let (a, b) = match chosen {
            Some(c) => (c.a, c.b),
            None => state.two_smallest(network),
        };
        let (c, partners) = state.contract(network, a, b);
        push(&mut heap, &state.legs, c, &partners);
    }
    ContractionTree::from_ssa(n, state.pairs)
}

/// A pairwise contraction in progress, shared by the greedy rules and the policy's rollout.
pub struct Contraction {
    /// Each node's legs (leaves, then results in order); None once contracted.
    pub legs: Vec<Option<Legs>>,
    /// The live tensors on each summed index (opt_einsum pairs tensors on summed indices only).
    pub holders: Vec<Vec<u32>>,
    /// The contractions so far, in SSA numbering.
    pub pairs: Vec<[u32; 2]>,
}

impl Contraction {
    pub fn new(network: &Network) -> Self {
        let n = network.num_tensors();
        let legs: Vec<Option<Legs>> = (0..n).map(|t| Some(network.leaf_legs(t))).collect();
        let mut holders: Vec<Vec<u32>> = vec![Vec::new(); network.carriers.len()];
        for (t, tensor) in network.tensors.iter().enumerate() {
            tensor.iter().filter(|&&i| !network.output[i as usize]).for_each(|&i| holders[i as usize].push(t as u32));
        }
        Contraction { legs, holders, pairs: Vec::with_capacity(n.saturating_sub(1)) }
    }

    /// When no live pair shares an index: the two smallest live tensors (ties by id), for an
    /// outer product.
    pub fn two_smallest(&self, network: &Network) -> (u32, u32) {
        let mut alive: Vec<(f64, u32)> = self
            .legs
            .iter()
            .enumerate()
            .filter_map(|(k, l)| l.as_ref().map(|l| (network.size_of(l), k as u32)))
            .collect();
        alive.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
        (alive[0].1.min(alive[1].1), alive[0].1.max(alive[1].1))
    }

    /// Contracts a with b: the result's id and its live partners on summed indices (sorted).
    pub fn contract(&mut self, network: &Network, a: u32, b: u32) -> (u32, Vec<u32>) {
        let la = self.legs[a as usize].take().expect("live");
        let lb = self.legs[b as usize].take().expect("live");
        let (_, merged) = network.merge(&la, &lb);
        let c = self.legs.len() as u32;
        for &(i, _) in la.iter().chain(&lb) {
            self.holders[i as usize].retain(|&h| h != a && h != b);
        }
        let mut partners: Vec<u32> =
            merged.iter().flat_map(|&(i, _)| self.holders[i as usize].iter().copied()).collect();
        partners.sort_unstable();
        partners.dedup();
        for &(i, _) in &merged {
            if !network.output[i as usize] {
                self.holders[i as usize].push(c);
            }
        }
        self.legs.push(Some(merged));
        self.pairs.push([a, b]);
        (c, partners)
    }
}

/// opt_einsum's greedy.
pub fn greedy(network: &Network) -> ContractionTree {
    greedy_with(network, GreedyRule::default(), &mut crate::search::chain_rng(0, 0, 0))
}

/// A random rule of the randomised greedy.
pub fn random_rule(rng: &mut Xoshiro256PlusPlus) -> GreedyRule {
    GreedyRule { cost_modifier: rng.gen_range(0.1..4.0), temperature: Some(10f64.powf(rng.gen_range(-3.0..0.0))) }
}

/// Randomised greedy tries until `time_limit` (or `max_tries`; at least one): the best tree and
/// the number of tries.
pub fn random_greedy(
    network: &Network,
    time_limit: Duration,
    seed: u64,
    max_tries: Option<usize>,
) -> (ContractionTree, usize) {
    let start = Instant::now();
    let mut best = greedy(network);
    let mut best_cost = best.cost(network).log2_flops;
    let mut tries = 1;
    while start.elapsed() < time_limit && max_tries.is_none_or(|m| tries < m) {
        let mut rng = crate::search::chain_rng(seed, tries, 0);
        let rule = random_rule(&mut rng);
        let tree = greedy_with(network, rule, &mut rng);
        let cost = tree.cost(network).log2_flops;
        if cost < best_cost {
            (best, best_cost) = (tree, cost);
        }
        tries += 1;
    }
    (best, tries)
}
