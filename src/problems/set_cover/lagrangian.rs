//! A lower bound on the cheapest cover by Lagrangian relaxation of the covering rows (J. E.
//! Beasley, "A Lagrangian heuristic for set-covering problems", Naval Research Logistics 37(1),
//! 1990): for any multipliers u >= 0, L(u) = sum_i u_i + sum_j min(0, c_j - sum_{i in j} u_i) is at
//! most the optimum, so every iterate is a valid bound; subgradient steps (Held, Wolfe & Crowder
//! 1974: t = lambda (UB - L(u)) / ||g||^2 with g_i = 1 - the chosen sets covering row i) raise it
//! towards the LP relaxation's value, lambda halving after `STALL` steps without progress.

use super::SetCoverInstance;
use crate::problems::subgradient::Ascent;
use std::time::Instant;

/// Steps without a better bound before lambda halves.
const STALL: usize = 30;
/// The run stops once lambda falls below this, or after `MAX_STEPS`.
const MIN_LAMBDA: f64 = 0.005;
const MAX_STEPS: usize = 2_000;

/// The best L(u) found by `deadline` (or its last step), given the cost `upper` of a known cover.
pub fn lower_bound(instance: &SetCoverInstance, upper: f64, deadline: Instant) -> f64 {
    let (rows, sets) = (instance.sets_of.len(), instance.costs.len());
    // Beasley's start: each row priced at its cheapest set's cost per row covered.
    let mut u: Vec<f64> = instance
        .sets_of
        .iter()
        .map(|sets| {
            sets.iter()
                .map(|&j| instance.costs[j as usize] / instance.rows_of[j as usize].len() as f64)
                .fold(f64::INFINITY, f64::min)
        })
        .collect();
    let mut ascent = Ascent::new(STALL, MIN_LAMBDA);
    let mut chosen = vec![false; sets];
    let mut gradient = vec![0.0f64; rows];
    for _ in 0..MAX_STEPS {
        let mut bound: f64 = u.iter().sum();
        for j in 0..sets {
            let reduced = instance.costs[j] - instance.rows_of[j].iter().map(|&i| u[i as usize]).sum::<f64>();
            chosen[j] = reduced < 0.0;
            if chosen[j] {
                bound += reduced;
            }
        }
        if !ascent.record(bound) || ascent.best >= upper - 1e-9 || Instant::now() >= deadline {
            break;
        }
        for (i, g) in gradient.iter_mut().enumerate() {
            *g = 1.0 - instance.sets_of[i].iter().filter(|&&j| chosen[j as usize]).count() as f64;
        }
        let norm: f64 = gradient.iter().map(|g| g * g).sum();
        if norm == 0.0 {
            // Every row covered exactly once by the relaxation's sets: u is optimal for the dual.
            break;
        }
        let step = ascent.step(upper, bound, norm);
        for (ui, g) in u.iter_mut().zip(&gradient) {
            *ui = (*ui + step * g).max(0.0);
        }
    }
    ascent.best
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
            let (rows, sets) = (rng.gen_range(3..10), rng.gen_range(3..14));
            let mut sets_of: Vec<Vec<u32>> = (0..rows).map(|_| vec![rng.gen_range(0..sets as u32)]).collect();
            for covering in &mut sets_of {
                for j in 0..sets as u32 {
                    if rng.gen_bool(0.3) && !covering.contains(&j) {
                        covering.push(j);
                    }
                }
            }
            let costs: Vec<f64> = (0..sets).map(|_| f64::from(rng.gen_range(1..20))).collect();
            let instance = SetCoverInstance::new(costs.clone(), sets_of.clone(), 0);
            let optimum = (0..1u32 << sets)
                .filter(|m| sets_of.iter().all(|row| row.iter().any(|&j| m >> j & 1 == 1)))
                .map(|m| (0..sets).filter(|&j| m >> j & 1 == 1).map(|j| costs[j]).sum::<f64>())
                .fold(f64::INFINITY, f64::min);
            let upper = instance.cost(&instance.greedy());
            let bound = lower_bound(&instance, upper, far);
            assert!(bound <= optimum + 1e-9, "trial {trial}: {bound} > {optimum}");
            assert!(bound > 0.0, "trial {trial}: a cover costs something");
        }
        // Three disjoint sets partition three rows: the bound is their total cost.
        let instance = SetCoverInstance::new(vec![2.0, 3.0, 4.0], vec![vec![0], vec![1], vec![2]], 0);
        assert!((lower_bound(&instance, 9.0, far) - 9.0).abs() < 1e-6);
    }
}
