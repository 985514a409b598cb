//! Lower bounds on the cheapest cover by Lagrangian relaxation of the covering rows (J. E.
//! Beasley, "A Lagrangian heuristic for set-covering problems", Naval Research Logistics 37(1),
//! 1990): for any multipliers u >= 0, L(u) = sum_i u_i + sum_j min(0, c_j - sum_{i in j} u_i) is at
//! most the optimum, so every iterate is a valid bound; subgradient steps (Held, Wolfe & Crowder
//! 1974: t = lambda (UB - L(u)) / ||g||^2 with g_i = 1 - the chosen sets covering row i) raise it
//! towards the LP relaxation's value, lambda halving after a stall without progress.
//!
//! The same ascent bounds a node of the branch and bound (`branch.rs`): sets fixed in are paid
//! for and their rows leave the relaxation, sets fixed out leave it, and the multipliers start
//! from the parent's.

use super::SetCoverInstance;
use crate::problems::subgradient::Ascent;
use std::time::Instant;

/// A set's state in a node: free, fixed out of the cover, or fixed in.
pub const FREE: i8 = 0;
pub const OUT: i8 = -1;
pub const IN: i8 = 1;

/// How long an ascent runs.
#[derive(Debug, Clone, Copy)]
pub struct AscentLimits {
    /// lambda's first value.
    pub lambda: f64,
    /// Steps without a better bound before lambda halves.
    pub stall: usize,
    /// The ascent stops once lambda falls below this, or after `max_steps`.
    pub min_lambda: f64,
    pub max_steps: usize,
}

/// The root's ascent: lambda from 2, halving after 30 steps without progress, at most 2,000 steps.
const ROOT: AscentLimits = AscentLimits { lambda: 2.0, stall: 30, min_lambda: 0.005, max_steps: 2_000 };

/// The best multipliers an ascent found on one node.
#[derive(Debug, Clone)]
pub struct Relaxation {
    /// L(u) at `u`, the cost of the sets fixed in included.
    pub bound: f64,
    /// One multiplier per row (rows covered by a fixed set keep their entry, unused).
    pub u: Vec<f64>,
    /// c_j - sum_{uncovered i in j} u_i for the free sets (0 for fixed ones).
    pub reduced: Vec<f64>,
    /// True when the relaxation's own sets (reduced cost < 0) cover every row once: L(u) is then
    /// the node's optimum, reached by those sets plus the fixed ones.
    pub exact: bool,
}

/// Beasley's start: each row priced at its cheapest set's cost per row covered.
fn start_multipliers(instance: &SetCoverInstance) -> Vec<f64> {
    instance
        .sets_of
        .iter()
        .map(|sets| {
            sets.iter()
                .map(|&j| instance.costs[j as usize] / instance.rows_of[j as usize].len() as f64)
                .fold(f64::INFINITY, f64::min)
        })
        .collect()
}

/// The subgradient ascent on the node `fixed` (one state per set) from multipliers `u`, towards
/// the cost `upper` of a known cover; it stops early once the bound exceeds `enough`, at
/// `deadline`, or when lambda runs out. None when some row the fixed sets leave bare has no free
/// set (the node holds no cover).
pub fn ascend(
    instance: &SetCoverInstance,
    fixed: &[i8],
    mut u: Vec<f64>,
    (upper, enough): (f64, f64),
    limits: &AscentLimits,
    deadline: Instant,
) -> Option<Relaxation> {
    let (rows, sets) = (instance.sets_of.len(), instance.costs.len());
    let mut bare = vec![true; rows];
    let mut offset = 0.0;
    for j in (0..sets).filter(|&j| fixed[j] == IN) {
        offset += instance.costs[j];
        instance.rows_of[j].iter().for_each(|&i| bare[i as usize] = false);
    }
    let open: Vec<usize> = (0..rows).filter(|&i| bare[i]).collect();
    if open.iter().any(|&i| instance.sets_of[i].iter().all(|&j| fixed[j as usize] != FREE)) {
        return None;
    }
    let free: Vec<usize> = (0..sets).filter(|&j| fixed[j] == FREE).collect();
    let mut ascent = Ascent::starting_at(limits.lambda, limits.stall, limits.min_lambda);
    let mut reduced = vec![0.0f64; sets];
    let mut best = Relaxation { bound: f64::NEG_INFINITY, u: u.clone(), reduced: reduced.clone(), exact: false };
    let mut gradient = vec![0.0f64; rows];
    for _ in 0..limits.max_steps {
        let mut bound = offset + open.iter().map(|&i| u[i]).sum::<f64>();
        for &j in &free {
            reduced[j] = instance.costs[j]
                - instance.rows_of[j].iter().filter(|&&i| bare[i as usize]).map(|&i| u[i as usize]).sum::<f64>();
            bound += reduced[j].min(0.0);
        }
        let before = ascent.best;
        let going = ascent.record(bound);
        if ascent.best > before {
            best.bound = bound;
            best.u.copy_from_slice(&u);
            best.reduced.copy_from_slice(&reduced);
        }
        if !going || ascent.best > enough || Instant::now() >= deadline {
            break;
        }
        for &i in &open {
            let chosen =
                instance.sets_of[i].iter().filter(|&&j| fixed[j as usize] == FREE && reduced[j as usize] < 0.0);
            gradient[i] = 1.0 - chosen.count() as f64;
            // A row priced at zero and over-covered would only be pushed below zero: projected out.
            if u[i] <= 0.0 && gradient[i] < 0.0 {
                gradient[i] = 0.0;
            }
        }
        let norm: f64 = open.iter().map(|&i| gradient[i] * gradient[i]).sum();
        if norm == 0.0 {
            // Every bare row covered exactly once (or over-covered at price zero) by the
            // relaxation's sets: they form a cover costing L(u), the node's optimum.
            best = Relaxation { bound, u, reduced, exact: true };
            break;
        }
        let step = ascent.step(upper, bound, norm);
        for &i in &open {
            u[i] = (u[i] + step * gradient[i]).max(0.0);
        }
    }
    Some(best)
}

/// The best L(u) of the root's ascent by `deadline`, given the cost `upper` of a known cover.
pub fn lower_bound(instance: &SetCoverInstance, upper: f64, deadline: Instant) -> Relaxation {
    let fixed = vec![FREE; instance.costs.len()];
    let u = start_multipliers(instance);
    ascend(instance, &fixed, u, (upper, upper - 1e-9), &ROOT, deadline).expect("every row has a set")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;
    use std::time::Duration;

    #[test]
    fn the_bound_never_exceeds_the_enumerated_optimum_and_is_tight_on_a_partition() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let far = Instant::now() + Duration::from_secs(30);
        for trial in 0..40 {
            let instance = SetCoverInstance::random(&mut rng, 10, 14);
            let optimum = instance.enumerated_optimum();
            let upper = instance.cost(&instance.greedy());
            let bound = lower_bound(&instance, upper, far).bound;
            assert!(bound <= optimum + 1e-9, "trial {trial}: {bound} > {optimum}");
            assert!(bound > 0.0, "trial {trial}: a cover costs something");
        }
        // Three disjoint sets partition three rows: the bound is their total cost.
        let instance = SetCoverInstance::new(vec![2.0, 3.0, 4.0], vec![vec![0], vec![1], vec![2]], 0);
        assert!((lower_bound(&instance, 9.0, far).bound - 9.0).abs() < 1e-6);
    }

    #[test]
    fn a_node_bound_covers_its_fixed_sets_and_never_exceeds_the_nodes_optimum() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        let far = Instant::now() + Duration::from_secs(30);
        for trial in 0..40 {
            let instance = SetCoverInstance::random(&mut rng, 9, 12);
            let sets = instance.costs.len();
            let fixed: Vec<i8> = (0..sets).map(|_| [FREE, FREE, OUT, IN][rng.gen_range(0..4)]).collect();
            let node_optimum = (0..1u32 << sets)
                .filter(|m| (0..sets).all(|j| fixed[j] == FREE || (m >> j & 1 == 1) == (fixed[j] == IN)))
                .map(|m| (0..sets).map(|j| m >> j & 1 == 1).collect::<Vec<bool>>())
                .filter(|x| instance.covers(x))
                .map(|x| instance.cost(&x))
                .fold(f64::INFINITY, f64::min);
            let start = start_multipliers(&instance);
            let upper = instance.costs.iter().sum::<f64>();
            match ascend(&instance, &fixed, start, (upper, upper), &ROOT, far) {
                None => assert!(node_optimum.is_infinite(), "trial {trial}: a cover exists but the node was refused"),
                Some(r) => {
                    assert!(r.bound <= node_optimum + 1e-6, "trial {trial}: {} > {node_optimum}", r.bound);
                    let paid: f64 = (0..sets).filter(|&j| fixed[j] == IN).map(|j| instance.costs[j]).sum();
                    assert!(r.bound >= paid - 1e-9, "trial {trial}: the fixed sets' cost {paid} above {}", r.bound);
                }
            }
        }
    }
}
