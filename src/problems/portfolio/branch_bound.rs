//! Exact branch and bound for the K-asset problem, on the continuous relaxation of its mixed-
//! integer form: z_i in [0, 1] for "asset i held", sum z = K, eps_i z_i <= w_i <= delta_i z_i,
//! sum w = 1 and the goal's objective and constraints on w (the sector caps, a target return, a
//! risk budget, the trading-cost budget). A node fixes some z to 1 or 0 (fixed-out assets leave the program); its
//! relaxation's optimum bounds every completion; its variance term is strengthened by the
//! perspective of the covariance's smallest eigenvalue (see `relax`). Best-first; the branch is the free asset whose
//! z is most fractional (ties: the larger weight); a relaxation whose free z are all 0 or 1 is
//! itself a K-asset allocation, an incumbent. The proof is complete when no open node's bound
//! is below the incumbent; at the time limit the report says the remaining gap.

use super::qp::{add_weights_program, Allocation};
use super::{Goal, Portfolio};
use crate::program::Program;
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

/// A gap at most this (relative to the objective's scale) counts as a proof.
pub const PROVEN_GAP: f64 = 1e-7;

/// What the branch and bound found and proved.
#[derive(Debug, Clone)]
pub struct Proof {
    pub best: Option<Allocation>,
    /// The least bound over the open nodes (the incumbent's objective when closed).
    pub lower_bound: f64,
    /// (incumbent - lower bound) / the objective's scale; 0 when proven.
    pub gap: f64,
    pub nodes: usize,
}

#[derive(Clone, PartialEq)]
struct Node {
    bound: f64,
    /// Per asset: Some(true) held, Some(false) out, None free.
    fixed: Vec<Option<bool>>,
}

impl Eq for Node {}

impl PartialOrd for Node {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Node {
    /// The heap pops the least bound first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.bound.total_cmp(&self.bound)
    }
}

/// The relaxation at `fixed`: its optimum and the (w, z) of every asset (0 for fixed-out ones).
fn relax(
    portfolio: &Portfolio,
    goal: &Goal,
    k: usize,
    fixed: &[Option<bool>],
    shift: f64,
) -> Option<(f64, Vec<f64>, Vec<f64>)> {
    let n = portfolio.num_assets();
    let kept: Vec<usize> = (0..n).filter(|&i| fixed[i] != Some(false)).collect();
    let free: Vec<usize> = kept.iter().copied().filter(|&i| fixed[i].is_none()).collect();
    let held = kept.len() - free.len();
    if held > k || kept.len() < k {
        return None;
    }
    let m = kept.len();
    // Variables: w of each kept asset (0..m), then z of each free asset (m..m + free).
    let z_of = |i: usize| free.iter().position(|&f| f == i).map(|p| m + p);
    let mut program = Program::new(m + free.len());
    let (c, lower, upper) = (&portfolio.cov, &portfolio.constraints.lower, &portfolio.constraints.upper);
    let quadratic = goal.quadratic_weight();
    // The perspective reformulation (Frangioni & Gentile 2006): S = (S - shift I) + shift I, and
    // a free asset's shift w_i^2 becomes shift s_i with s_i z_i >= w_i^2 (a rotated cone), which
    // is w_i^2 at z_i = 1 and 0 at w_i = z_i = 0, and tighter than w_i^2 for fractional z_i.
    let shift = if quadratic > 0.0 { shift } else { 0.0 };
    add_weights_program(&mut program, portfolio, goal, &kept, |a| if z_of(kept[a]).is_some() { shift } else { 0.0 });
    if !free.is_empty() {
        program.equal((m..m + free.len()).map(|v| (v, 1.0)).collect(), (k - held) as f64);
    }
    for (a, &i) in kept.iter().enumerate() {
        match z_of(i) {
            Some(z) => {
                program.at_most(vec![(z, lower[i]), (a, -1.0)], 0.0);
                program.at_most(vec![(a, 1.0), (z, -upper[i])], 0.0);
                program.at_most(vec![(z, 1.0)], 1.0);
                program.at_most(vec![(z, -1.0)], 0.0);
            }
            None => {
                program.at_most(vec![(a, -1.0)], -lower[i]);
                program.at_most(vec![(a, 1.0)], upper[i]);
            }
        }
    }
    let perspective = (shift > 0.0 && !free.is_empty()).then(|| program.add_variables(free.len()));
    if let Some(first) = perspective {
        for (p, &i) in free.iter().enumerate() {
            let (a, z, t) = (kept.iter().position(|&j| j == i).expect("kept"), m + p, first + p);
            program.add_linear(t, quadratic / 2.0 * shift);
            // ||(2 w, t - z)|| <= t + z  <=>  t z >= w^2, t, z >= 0.
            program.second_order_cone(vec![
                (vec![(t, -1.0), (z, -1.0)], 0.0),
                (vec![(a, -2.0)], 0.0),
                (vec![(t, -1.0), (z, 1.0)], 0.0),
            ]);
        }
    }
    if let Some(costs) = &portfolio.constraints.costs {
        super::qp::add_transaction_costs(&mut program, costs, &kept);
    }
    let x = program.solve()?;
    let (mut w, mut z) = (vec![0.0; n], vec![0.0; n]);
    for (a, &i) in kept.iter().enumerate() {
        w[i] = x[a];
        z[i] = z_of(i).map_or(1.0, |v| x[v]);
    }
    let expected_return: f64 = (0..n).map(|i| portfolio.mu[i] * w[i]).sum();
    let variance: f64 = kept.iter().map(|&i| w[i] * kept.iter().map(|&j| c[[i, j]] * w[j]).sum::<f64>()).sum();
    // The program's own optimum: the objective at w with each free asset's shift w_i^2 traded
    // for its perspective term shift t_i.
    let strengthening: f64 = perspective.map_or(0.0, |first| {
        free.iter().enumerate().map(|(p, &i)| shift * (x[first + p] - w[i] * w[i])).sum::<f64>() * quadratic / 2.0
    });
    Some((goal.objective(expected_return, variance) + strengthening.max(0.0), w, z))
}

/// Proves the K-asset optimum of `goal`, starting from `incumbent` when given, within `limit`.
pub fn solve(portfolio: &Portfolio, goal: &Goal, k: usize, incumbent: Option<Allocation>, limit: Duration) -> Proof {
    let started = Instant::now();
    let n = portfolio.num_assets();
    let scale = super::search::objective_scale(portfolio, goal);
    let mut best = incumbent.or_else(|| super::greedy::greedy(portfolio, goal, k, Some(started + limit / 4)));
    let best_value = |b: &Option<Allocation>| b.as_ref().map_or(f64::INFINITY, |a| a.objective);
    let mut open = BinaryHeap::new();
    let root = vec![None; n];
    let mut nodes = 0usize;
    // The covariance's smallest eigenvalue (F's rows: eigenvectors scaled by their roots), a
    // hair inside, so that S - shift I stays positive semidefinite.
    let smallest = (0..portfolio.factor.nrows())
        .map(|r| portfolio.factor.row(r).iter().map(|v| v * v).sum::<f64>())
        .fold(f64::INFINITY, f64::min);
    let shift = if smallest.is_finite() { 0.99 * smallest.max(0.0) } else { 0.0 };
    if let Some((bound, _, _)) = relax(portfolio, goal, k, &root, shift) {
        open.push(Node { bound, fixed: root });
    }
    while let Some(node) = open.pop() {
        if node.bound >= best_value(&best) - PROVEN_GAP * scale {
            continue;
        }
        if started.elapsed() >= limit {
            open.push(node);
            break;
        }
        nodes += 1;
        let Some((bound, w, z)) = relax(portfolio, goal, k, &node.fixed, shift) else { continue };
        if bound >= best_value(&best) - PROVEN_GAP * scale {
            continue;
        }
        let free: Vec<usize> = (0..n).filter(|&i| node.fixed[i].is_none()).collect();
        let branch = free
            .iter()
            .copied()
            .filter(|&i| z[i] > 1e-6 && z[i] < 1.0 - 1e-6)
            .min_by(|&a, &b| (z[a] - 0.5).abs().total_cmp(&(z[b] - 0.5).abs()).then(w[b].total_cmp(&w[a])));
        let Some(branch) = branch else {
            // Every free z is 0 or 1: the relaxation is a K-asset allocation; re-solve its set
            // exactly for the reported weights.
            let held: Vec<usize> =
                (0..n).filter(|&i| node.fixed[i] == Some(true) || (node.fixed[i].is_none() && z[i] > 0.5)).collect();
            if let Some(a) = portfolio.solve_held(&held, goal, true) {
                if a.objective < best_value(&best) {
                    best = Some(a);
                }
            }
            continue;
        };
        for value in [true, false] {
            let mut fixed = node.fixed.clone();
            fixed[branch] = Some(value);
            open.push(Node { bound, fixed });
        }
    }
    let incumbent = best_value(&best);
    let lower_bound = open.iter().map(|n| n.bound).fold(incumbent, f64::min);
    let gap = if incumbent.is_finite() { ((incumbent - lower_bound) / scale).max(0.0) } else { f64::INFINITY };
    Proof { best, lower_bound, gap, nodes }
}
