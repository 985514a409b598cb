//! Branch and bound on Lagrangian bounds, to prove a cover optimal (J. E. Beasley, "An algorithm
//! for set covering problem", European Journal of Operational Research 31, 1987; E. Balas and
//! M. C. Carrera, "A dynamic subgradient-based branch-and-bound procedure for set covering",
//! Operations Research 44(6), 1996).
//!
//! - **Reduction.** A set costing more than the cheapest other sets of its rows together is in
//!   no optimal cover (swapping it for them saves cost) and is fixed out at the root.
//! - **Bounds.** Each node runs the subgradient ascent of `lagrangian.rs` on its free sets, from
//!   its parent's multipliers, and is cut once L(u) shows it cannot beat the incumbent (by a whole
//!   unit when every cost is an integer).
//! - **Reduced-cost fixing.** A free set of reduced cost r >= 0 with L + r past that line is fixed
//!   out, one with r < 0 and L - r past it fixed in: forcing the other value costs at least |r|.
//! - **Incumbents.** The relaxation's sets, completed by Chvatal's greedy and stripped of
//!   redundant sets, at every node.
//! - **Branching.** On the bare row with the fewest free sets (Beasley's row branching): its free
//!   sets in order of reduced cost j_1, j_2, ..., the k-th child takes j_k in and j_1..j_{k-1}
//!   out, so the children partition the node. A child's first bound is L + max(0, r_k) + sum_{s<k}
//!   max(0, -r_s), valid for the parent's u.
//! - **Order.** Best first (least bound, deeper first on ties), so the open nodes' least bound is
//!   a lower bound on the optimum whenever the search stops.

use super::lagrangian::{self, AscentLimits, Relaxation, FREE, IN, OUT};
use super::{SetCoverInstance, INTEGER_SLACK};
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Each node's ascent from its parent's multipliers: lambda from 2, halving after 10 steps
/// without progress, until 0.05 or 150 steps. Measured on one generated instance of each of
/// classes B-D (seed 1) and scpa1, with the optimum as the incumbent (the proof alone): lambda
/// from 0.25, 0.5 or 1 took 1.3-5x the nodes of 2; floors 0.01 and 0.1 and limits of 100-400
/// steps were no faster.
const NODE: AscentLimits = AscentLimits { lambda: 2.0, stall: 10, min_lambda: 0.05, max_steps: 150 };
/// The open nodes hold at most this many bytes (a node is one byte per set plus its bound); the
/// search stops unproven beyond it, reporting the open nodes' least bound.
pub const MAX_OPEN_BYTES: usize = 256 << 20;

/// What the tree search ended with.
#[derive(Debug, Clone)]
pub struct Proof {
    pub cover: Vec<bool>,
    pub cost: f64,
    /// A lower bound on every cover's cost: the cover's cost once proven, else the open nodes'
    /// least bound (rounded up for integer costs).
    pub bound: f64,
    pub proven: bool,
    pub nodes: u64,
    /// When each better cover than the starting one was found.
    pub improvements: Vec<(Duration, f64)>,
}

struct Node {
    bound: f64,
    depth: u32,
    fixed: Vec<i8>,
    /// The multipliers the node's ascent starts from (its parent's best).
    u: Arc<Vec<f64>>,
}

impl PartialEq for Node {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Node {}
impl PartialOrd for Node {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Node {
    /// The max-heap's top is the least bound, then the deepest node.
    fn cmp(&self, other: &Self) -> Ordering {
        other.bound.total_cmp(&self.bound).then(self.depth.cmp(&other.depth))
    }
}

struct Tree<'a> {
    instance: &'a SetCoverInstance,
    /// Every cost an integer (`SetCoverInstance::integral`).
    integral: bool,
    cover: Vec<bool>,
    cost: f64,
    started: Instant,
    improvements: Vec<(Duration, f64)>,
}

impl Tree<'_> {
    /// The largest bound a node may have and still hold a cover cheaper than the incumbent.
    fn line(&self) -> f64 {
        if self.integral {
            self.cost - 1.0 + INTEGER_SLACK
        } else {
            self.cost - 1e-9 * self.cost.abs().max(1.0)
        }
    }

    fn offer(&mut self, x: Vec<bool>) {
        let cost = self.instance.cost(&x);
        if cost < self.cost - 1e-9 && self.instance.covers(&x) {
            (self.cover, self.cost) = (x, cost);
            self.improvements.push((self.started.elapsed(), cost));
        }
    }

    /// The fixed-in sets plus the relaxation's own, completed to a cover.
    fn lagrangian_cover(&mut self, fixed: &[i8], relaxation: &Relaxation) {
        let x: Vec<bool> =
            (0..fixed.len()).map(|j| fixed[j] == IN || (fixed[j] == FREE && relaxation.reduced[j] < 0.0)).collect();
        let x = if relaxation.exact { x } else { self.instance.completed(x) };
        self.offer(x);
    }

    /// Bounds the node, offers its covers and fixes by reduced cost; the children to push.
    fn expand(&mut self, mut node: Node, deadline: Instant) -> Vec<Node> {
        let line = self.line();
        let Some(relaxation) =
            lagrangian::ascend(self.instance, &node.fixed, (*node.u).clone(), (self.cost, line), &NODE, deadline)
        else {
            return Vec::new();
        };
        self.lagrangian_cover(&node.fixed, &relaxation);
        let line = self.line();
        let bound = relaxation.bound;
        if bound > line || relaxation.exact {
            return Vec::new();
        }
        for (j, state) in node.fixed.iter_mut().enumerate() {
            let r = relaxation.reduced[j];
            if *state == FREE && bound + r.abs() > line {
                *state = if r >= 0.0 { OUT } else { IN };
            }
        }
        let k = self.instance;
        let mut bare = vec![true; k.sets_of.len()];
        for j in (0..node.fixed.len()).filter(|&j| node.fixed[j] == IN) {
            k.rows_of[j].iter().for_each(|&i| bare[i as usize] = false);
        }
        let free_of = |i: usize| k.sets_of[i].iter().filter(|&&j| node.fixed[j as usize] == FREE).count();
        let row = (0..bare.len())
            .filter(|&i| bare[i])
            .min_by(|&a, &b| free_of(a).cmp(&free_of(b)).then(relaxation.u[b].total_cmp(&relaxation.u[a])));
        let Some(row) = row else {
            // The fixed-in sets cover every row: the node's only cover worth having.
            self.offer(node.fixed.iter().map(|&s| s == IN).collect());
            return Vec::new();
        };
        let mut branches: Vec<usize> =
            k.sets_of[row].iter().map(|&j| j as usize).filter(|&j| node.fixed[j] == FREE).collect();
        branches.sort_by(|&a, &b| relaxation.reduced[a].total_cmp(&relaxation.reduced[b]).then(a.cmp(&b)));
        let u = Arc::new(relaxation.u);
        let mut children = Vec::with_capacity(branches.len());
        let mut excluded = 0.0;
        for (t, &j) in branches.iter().enumerate() {
            let r = relaxation.reduced[j];
            let child_bound = bound + r.max(0.0) + excluded;
            // Later children exclude more sets of nonnegative price and take costlier ones.
            if child_bound > line {
                break;
            }
            let mut fixed = node.fixed.clone();
            fixed[j] = IN;
            branches[..t].iter().for_each(|&s| fixed[s] = OUT);
            children.push(Node { bound: child_bound, depth: node.depth + 1, fixed, u: u.clone() });
            excluded += (-r).max(0.0);
        }
        children
    }
}

/// Sets costing more than the cheapest other sets of their rows together.
fn dominated(instance: &SetCoverInstance) -> Vec<bool> {
    // The two cheapest sets of each row, as (cost, set).
    let cheapest: Vec<[(f64, usize); 2]> = instance
        .sets_of
        .iter()
        .map(|sets| {
            let mut two = [(f64::INFINITY, usize::MAX); 2];
            for &j in sets {
                let c = (instance.costs[j as usize], j as usize);
                if c.0 < two[0].0 {
                    two = [c, two[0]];
                } else if c.0 < two[1].0 {
                    two[1] = c;
                }
            }
            two
        })
        .collect();
    (0..instance.costs.len())
        .map(|j| {
            let others: f64 = instance.rows_of[j]
                .iter()
                .map(|&i| {
                    let [first, second] = cheapest[i as usize];
                    if first.1 == j {
                        second.0
                    } else {
                        first.0
                    }
                })
                .sum();
            instance.costs[j] > others
        })
        .collect()
}

/// When the tree search stops short of a proof.
#[derive(Debug, Clone, Copy)]
pub struct TreeLimits {
    pub deadline: Instant,
    /// Nodes expanded at most.
    pub max_nodes: Option<u64>,
    /// A cover costing at most this is good enough.
    pub target: Option<f64>,
}

/// Searches for a cover cheaper than `incumbent` until it is proven optimal or a limit is met
/// (`limits`, or open nodes past `MAX_OPEN_BYTES`), from the root's relaxation `root`.
pub fn branch_and_bound(
    instance: &SetCoverInstance,
    incumbent: Vec<bool>,
    root: &Relaxation,
    limits: TreeLimits,
) -> Proof {
    let TreeLimits { deadline, max_nodes, target } = limits;
    let started = Instant::now();
    let sets = instance.costs.len();
    let integral = instance.integral();
    let cost = instance.cost(&incumbent);
    let mut tree = Tree { instance, integral, cover: incumbent, cost, started, improvements: Vec::new() };
    let fixed: Vec<i8> = dominated(instance).into_iter().map(|d| if d { OUT } else { FREE }).collect();
    let mut open = BinaryHeap::from([Node { bound: root.bound, depth: 0, fixed, u: Arc::new(root.u.clone()) }]);
    let max_open = MAX_OPEN_BYTES / (sets + 64);
    let mut nodes = 0u64;
    while let Some(node) = open.peek() {
        if node.bound > tree.line() {
            // Every open node is cut by the incumbent (the heap's least bound is past the line).
            open.clear();
            break;
        }
        let reached = target.is_some_and(|t| tree.cost <= t);
        if reached || Instant::now() >= deadline || max_nodes.is_some_and(|m| nodes >= m) || open.len() > max_open {
            break;
        }
        let node = open.pop().expect("peeked");
        nodes += 1;
        let children = tree.expand(node, deadline);
        open.extend(children);
    }
    let least = open.peek().map_or(tree.cost, |n| n.bound.min(tree.cost));
    let bound = instance.rounded(least).min(tree.cost);
    let proven = open.is_empty() || bound >= tree.cost - 1e-9;
    Proof {
        bound: if proven { tree.cost } else { bound },
        cover: tree.cover,
        cost: tree.cost,
        proven,
        nodes,
        improvements: tree.improvements,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// The tree from the greedy cover and the root's relaxation, for at most `max_nodes` nodes.
    fn prove(instance: &SetCoverInstance, max_nodes: Option<u64>) -> Proof {
        let far = Instant::now() + Duration::from_secs(60);
        let greedy = instance.greedy();
        let root = lagrangian::lower_bound(instance, instance.cost(&greedy), far);
        branch_and_bound(instance, greedy, &root, TreeLimits { deadline: far, max_nodes, target: None })
    }

    #[test]
    fn the_tree_proves_the_enumerated_optimum_from_the_greedy_cover() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        for trial in 0..60 {
            let instance = SetCoverInstance::random(&mut rng, 12, 16);
            let optimum = instance.enumerated_optimum();
            let proof = prove(&instance, None);
            assert!(proof.proven, "trial {trial}: not proven");
            assert!(instance.covers(&proof.cover), "trial {trial}: not a cover");
            assert_eq!(instance.cost(&proof.cover), optimum, "trial {trial}");
            assert_eq!(proof.bound, optimum, "trial {trial}");
        }
    }

    #[test]
    fn a_stopped_tree_reports_a_valid_bound() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(12);
        for trial in 0..30 {
            let instance = SetCoverInstance::random(&mut rng, 12, 16);
            let optimum = instance.enumerated_optimum();
            let proof = prove(&instance, Some(2));
            assert!(proof.bound <= optimum + 1e-9, "trial {trial}: {} > {optimum}", proof.bound);
            assert!(proof.cost >= optimum - 1e-9 && instance.covers(&proof.cover), "trial {trial}");
        }
    }

    #[test]
    fn a_set_dearer_than_the_cheapest_others_of_its_rows_is_dominated() {
        // Set 2 covers rows 0 and 1 for 5; sets 0 and 1 cover them for 2 + 2.
        let instance = SetCoverInstance::new(vec![2.0, 2.0, 5.0, 4.0], vec![vec![0, 2], vec![1, 2, 3]], 0);
        assert_eq!(dominated(&instance), vec![false, false, true, true]);
    }
}
