//! The continuous part: the optimal weights of a fixed set of held assets, an exact convex QP
//! (an SOCP for a risk budget) solved by Clarabel (`program`). Every subset the search,
//! the greedy baseline and the branch and bound score goes through `solve_held`.

use super::{Goal, Portfolio};
use crate::program::Program;

/// Weights on held assets and what they earn.
#[derive(Debug, Clone, PartialEq)]
pub struct Allocation {
    /// Held assets, ascending (0-based input order).
    pub assets: Vec<usize>,
    pub weights: Vec<f64>,
    pub expected_return: f64,
    pub variance: f64,
    /// The goal's objective (lower is better).
    pub objective: f64,
}

impl Goal {
    /// lambda * variance - (1 - lambda) * return; the variance for a target return; minus the
    /// return for a risk budget.
    pub fn objective(&self, expected_return: f64, variance: f64) -> f64 {
        match *self {
            Goal::Tradeoff(lambda) => lambda * variance - (1.0 - lambda) * expected_return,
            Goal::TargetReturn(_) => variance,
            Goal::RiskBudget(_) => -expected_return,
        }
    }
}

impl Portfolio {
    pub fn expected_return(&self, assets: &[usize], weights: &[f64]) -> f64 {
        assets.iter().zip(weights).map(|(&i, w)| self.mu[i] * w).sum()
    }

    pub fn variance(&self, assets: &[usize], weights: &[f64]) -> f64 {
        let mut total = 0.0;
        for (a, &i) in assets.iter().enumerate() {
            let row: f64 = assets.iter().zip(weights).map(|(&j, w)| self.cov[[i, j]] * w).sum();
            total += weights[a] * row;
        }
        total
    }

    /// The allocation of `weights` on `assets` (ascending), scored for `goal`.
    pub fn allocation(&self, assets: Vec<usize>, weights: Vec<f64>, goal: &Goal) -> Allocation {
        let expected_return = self.expected_return(&assets, &weights);
        let variance = self.variance(&assets, &weights);
        Allocation { objective: goal.objective(expected_return, variance), assets, weights, expected_return, variance }
    }

    /// The optimal weights on `held` (ascending) for `goal`, each within its bounds (from 0
    /// when `lower_bounds` is false: the unconstrained frontier and greedy's intermediate
    /// solves), within the sector caps; None when no weights meet them.
    pub fn solve_held(&self, held: &[usize], goal: &Goal, lower_bounds: bool) -> Option<Allocation> {
        let k = held.len();
        if k == 0 {
            return None;
        }
        let mut program = Program::new(k);
        add_weights_program(&mut program, self, goal, held, |_| 0.0);
        for (a, &i) in held.iter().enumerate() {
            program.at_most(vec![(a, -1.0)], if lower_bounds { -self.constraints.lower[i] } else { 0.0 });
            if self.constraints.upper[i] < 1.0 {
                program.at_most(vec![(a, 1.0)], self.constraints.upper[i]);
            }
        }
        if let Some(costs) = &self.constraints.costs {
            add_transaction_costs(&mut program, costs, held);
        }
        let x = program.solve()?;
        // Interior-point iterates sit a hair inside their bounds (or outside, by the tolerance):
        // clip and renormalise so that the reported weights meet them exactly.
        let lower = |i: usize| if lower_bounds { self.constraints.lower[i] } else { 0.0 };
        let mut weights: Vec<f64> =
            held.iter().zip(&x).map(|(&i, &w)| w.clamp(lower(i), self.constraints.upper[i])).collect();
        let total: f64 = weights.iter().sum();
        if total <= 0.0 {
            return None;
        }
        weights.iter_mut().for_each(|w| *w /= total);
        Some(self.allocation(held.to_vec(), weights, goal))
    }
}

impl Goal {
    /// The coefficient of w'Sw in the program (1/2 x'Px convention).
    pub(super) fn quadratic_weight(&self) -> f64 {
        match *self {
            Goal::Tradeoff(lambda) => 2.0 * lambda,
            Goal::TargetReturn(_) => 2.0,
            Goal::RiskBudget(_) => 0.0,
        }
    }

    /// The weight of -mu'w in the objective.
    pub(super) fn return_weight(&self) -> f64 {
        match *self {
            Goal::Tradeoff(lambda) => 1.0 - lambda,
            Goal::TargetReturn(_) => 0.0,
            Goal::RiskBudget(_) => 1.0,
        }
    }
}

/// The goal's objective and constraints on the weights of `kept` (program variables
/// 0..kept.len()): the quadratic (less `shift(a)` on kept asset a's diagonal), the return term,
/// sum w = 1, the sector caps, and a target return's row or a risk budget's cone. What the
/// subset QPs and the branch-and-bound relaxations share.
pub(super) fn add_weights_program(
    program: &mut Program,
    portfolio: &Portfolio,
    goal: &Goal,
    kept: &[usize],
    shift: impl Fn(usize) -> f64,
) {
    let quadratic = goal.quadratic_weight();
    for (a, &i) in kept.iter().enumerate() {
        for (b, &j) in kept.iter().enumerate().skip(a) {
            let diagonal = if a == b { shift(a) } else { 0.0 };
            program.add_quadratic(a, b, quadratic * (portfolio.cov[[i, j]] - diagonal));
        }
        program.add_linear(a, -goal.return_weight() * portfolio.mu[i]);
    }
    program.equal((0..kept.len()).map(|a| (a, 1.0)).collect(), 1.0);
    for sector in &portfolio.constraints.sectors {
        let row: Vec<(usize, f64)> =
            kept.iter().enumerate().filter(|(_, i)| sector.assets.contains(i)).map(|(a, _)| (a, 1.0)).collect();
        if !row.is_empty() {
            program.at_most(row, sector.max);
        }
    }
    match *goal {
        Goal::TargetReturn(target) => {
            program.at_most(kept.iter().enumerate().map(|(a, &i)| (a, -portfolio.mu[i])).collect(), -target)
        }
        Goal::RiskBudget(variance) => {
            // ||F_H w|| <= sqrt(v), with S = F'F.
            let mut rows = vec![(Vec::new(), variance.sqrt())];
            for r in 0..portfolio.factor.nrows() {
                rows.push((kept.iter().enumerate().map(|(a, &i)| (a, -portfolio.factor[[r, i]])).collect(), 0.0));
            }
            program.second_order_cone(rows);
        }
        Goal::Tradeoff(_) => {}
    }
}

/// The budget on trading costs over `kept` (program variables 0..kept.len() are their weights):
/// a variable t_a >= |w_a - current| per kept asset, and sum c t <= budget less the cost of
/// selling every asset not kept.
pub(super) fn add_transaction_costs(program: &mut Program, costs: &super::TransactionCosts, kept: &[usize]) {
    let first = program.add_variables(kept.len());
    let mut sold_off: f64 = (0..costs.current.len()).map(|i| costs.rate[i] * costs.current[i]).sum();
    let mut row = Vec::with_capacity(kept.len());
    for (a, &i) in kept.iter().enumerate() {
        let t = first + a;
        program.at_most(vec![(a, 1.0), (t, -1.0)], costs.current[i]);
        program.at_most(vec![(a, -1.0), (t, -1.0)], -costs.current[i]);
        row.push((t, costs.rate[i]));
        sold_off -= costs.rate[i] * costs.current[i];
    }
    program.at_most(row, costs.budget - sold_off);
}
