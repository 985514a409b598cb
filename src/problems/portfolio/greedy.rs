//! The greedy baseline: hold every asset, solve the QP without floors, drop the asset with the
//! smallest weight (ties: the lower mean, then the higher index) and re-solve, until K remain;
//! then solve those K with their floors. Infeasible sector caps on the way end it with None.
//! Past `deadline` (each solve of a large market is a dense QP), the last solve's K largest
//! weights are kept at once.

use super::qp::Allocation;
use super::{Goal, Portfolio};
use std::time::Instant;

pub fn greedy(portfolio: &Portfolio, goal: &Goal, k: usize, deadline: Option<Instant>) -> Option<Allocation> {
    let mut held: Vec<usize> = (0..portfolio.num_assets()).collect();
    while held.len() > k {
        let allocation = portfolio.solve_held(&held, goal, false)?;
        if deadline.is_some_and(|d| Instant::now() >= d) {
            let mut order: Vec<usize> = (0..held.len()).collect();
            order.sort_by(|&a, &b| allocation.weights[b].total_cmp(&allocation.weights[a]).then(a.cmp(&b)));
            let mut kept: Vec<usize> = order[..k].iter().map(|&a| held[a]).collect();
            kept.sort_unstable();
            held = kept;
            break;
        }
        let drop = (0..held.len())
            .min_by(|&a, &b| {
                let (i, j) = (held[a], held[b]);
                allocation.weights[a]
                    .total_cmp(&allocation.weights[b])
                    .then(portfolio.mu[i].total_cmp(&portfolio.mu[j]))
                    .then(j.cmp(&i))
            })
            .expect("more than k held");
        held.remove(drop);
    }
    portfolio.solve_held(&held, goal, true)
}
