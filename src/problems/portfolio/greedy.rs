//! The greedy baseline: hold every asset, solve the QP without floors, drop the asset with the
//! smallest weight (ties: the lower mean, then the higher index) and re-solve, until K remain;
//! then solve those K with their floors. Infeasible sector caps on the way end it with None.

use super::qp::Allocation;
use super::{Goal, Portfolio};

pub fn greedy(portfolio: &Portfolio, goal: &Goal, k: usize) -> Option<Allocation> {
    let mut held: Vec<usize> = (0..portfolio.num_assets()).collect();
    while held.len() > k {
        let allocation = portfolio.solve_held(&held, goal, false)?;
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
