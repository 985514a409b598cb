//! Weighted set cover on its penalty Hamiltonian, for method `ising` (Lucas, "Ising formulations
//! of many NP problems", 2014, sec. 5.1, with the slack of each row in binary instead of one-hot):
//!   E(x, z) = A sum_i (sum_{j covers i} x_j - 1 - sum_k c_k z_ik)^2 + sum_j cost_j x_j,
//! x_j = 1 when set j is chosen, z_i the slack bits of row i with coefficients 1, 2, 4, ... summing
//! to m_i - 1 (m_i the sets covering row i; `binary::slack_coefficients`), so a covered row can
//! always reach residue 0 and an uncovered one pays A at least. Why A = the largest cost: the
//! repair covers a row with one set, which costs at most that, so no state with an uncovered
//! row sits below its repair. The engine runs its spin-flip search on E (the tensor kernels on
//! an accelerator); every incumbent's sets are completed by Chvatal's greedy and stripped of
//! redundant sets (`SetCoverInstance::completed`).

use super::SetCoverInstance;
use crate::problems::binary::{slack_bits, slack_coefficients, Penalty, PenaltyProblem, Qubo, MAX_PENALTY_COUPLINGS};
use crate::problems::ProblemError;
use serde_json::Value;

pub struct SlackCover {
    instance: SetCoverInstance,
    penalty: Penalty,
    /// Slack coefficients per row, in spin order after the sets.
    slacks: Vec<Vec<f64>>,
}

impl SlackCover {
    pub fn new(instance: &SetCoverInstance) -> Result<Self, ProblemError> {
        let slacks: Vec<Vec<f64>> =
            instance.sets_of.iter().map(|sets| slack_coefficients(sets.len().saturating_sub(1) as u64)).collect();
        let couplings: usize = instance
            .sets_of
            .iter()
            .zip(&slacks)
            .map(|(sets, coefficients)| {
                let terms = sets.len() + coefficients.len();
                terms * terms.saturating_sub(1) / 2
            })
            .sum();
        if couplings > MAX_PENALTY_COUPLINGS {
            return Err(ProblemError::too_large(
                "method",
                format!("the Ising encoding needs {couplings} couplings; it takes at most {MAX_PENALTY_COUPLINGS}"),
            ));
        }
        let penalty = instance.costs.iter().copied().fold(0.0, f64::max);
        let mut qubo = Qubo::new(instance.costs.len());
        for (j, &cost) in instance.costs.iter().enumerate() {
            qubo.add_linear(j, cost);
        }
        for (sets, coefficients) in instance.sets_of.iter().zip(&slacks) {
            let first = qubo.add_variables(coefficients.len());
            let mut terms: Vec<(usize, f64)> = sets.iter().map(|&j| (j as usize, 1.0)).collect();
            terms.extend(coefficients.iter().enumerate().map(|(k, &c)| (first + k, -c)));
            qubo.add_squared(&terms, -1.0, penalty);
        }
        Ok(SlackCover { instance: instance.clone(), penalty: Penalty::new("set_cover", qubo.to_ising()), slacks })
    }

    fn sets_of(&self, x: &[bool]) -> Vec<bool> {
        x[..self.instance.costs.len()].to_vec()
    }
}

impl PenaltyProblem for SlackCover {
    fn penalty(&self) -> &Penalty {
        &self.penalty
    }

    /// The completed cover, each row's slack set to its surplus coverage (residue 0).
    fn repair(&self, x: &[bool]) -> Vec<bool> {
        let sets = self.instance.completed(self.sets_of(x));
        let mut bits = sets.clone();
        for (covering, coefficients) in self.instance.sets_of.iter().zip(&self.slacks) {
            let surplus = covering.iter().filter(|&&j| sets[j as usize]).count() as u64 - 1;
            bits.extend(slack_bits(coefficients, surplus));
        }
        bits
    }

    fn objective(&self, x: &[bool]) -> f64 {
        self.instance.cost(&self.sets_of(x))
    }

    fn energy_for_objective(&self, objective: f64) -> f64 {
        objective
    }

    fn decode(&self, x: &[bool]) -> Value {
        self.instance.solution(&self.sets_of(x))
    }

    fn size_summary(&self) -> String {
        format!(
            "rows={} sets={} spins={} (Ising)",
            self.instance.sets_of.len(),
            self.instance.costs.len(),
            self.penalty.model.num_spins()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problems::binary::Repaired;
    use crate::problems::Instance;
    use crate::search::SearchParams;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn random_cover(rows: usize, sets: usize, seed: u64) -> SetCoverInstance {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut sets_of: Vec<Vec<u32>> = (0..rows).map(|_| vec![rng.gen_range(0..sets as u32)]).collect();
        for covering in &mut sets_of {
            for j in 0..sets as u32 {
                if !covering.contains(&j) && rng.gen::<f64>() < 0.3 {
                    covering.push(j);
                }
            }
            covering.sort_unstable();
        }
        let costs = (0..sets).map(|_| f64::from(rng.gen_range(1..6))).collect();
        SetCoverInstance::new(costs, sets_of, 0)
    }

    /// The penalty is A times the squared residue of every row plus the cost, on every state of
    /// a small instance, and every repaired state is a cover whose slack zeroes the penalty.
    #[test]
    fn the_hamiltonian_is_the_row_penalties_plus_the_cost() {
        let instance = random_cover(4, 5, 3);
        let cover = SlackCover::new(&instance).unwrap();
        let n = cover.penalty.model.num_spins();
        let penalty = instance.costs.iter().copied().fold(0.0, f64::max);
        for mask in 0..1u64 << n {
            let x: Vec<bool> = (0..n).map(|i| mask >> i & 1 == 1).collect();
            let mut next_slack = instance.costs.len();
            let mut expected = instance.cost(&x[..instance.costs.len()]);
            for covering in &instance.sets_of {
                let chosen = covering.iter().filter(|&&j| x[j as usize]).count() as f64;
                let coefficients = slack_coefficients(covering.len() as u64 - 1);
                let slack: f64 =
                    coefficients.iter().enumerate().filter(|(k, _)| x[next_slack + k]).map(|(_, c)| c).sum();
                next_slack += coefficients.len();
                expected += penalty * (chosen - 1.0 - slack).powi(2);
            }
            let spins: Vec<i8> = x.iter().map(|&b| if b { 1 } else { -1 }).collect();
            let energy = cover.penalty.energy(&spins);
            assert!((energy - expected).abs() < 1e-9, "{mask}: {energy} vs {expected}");
            if mask % 97 == 0 {
                let repaired = cover.repair(&x);
                assert!(instance.covers(&repaired[..instance.costs.len()]));
                let spins: Vec<i8> = repaired.iter().map(|&b| if b { 1 } else { -1 }).collect();
                let energy = cover.penalty.energy(&spins);
                assert!((energy - cover.objective(&repaired)).abs() < 1e-9);
            }
        }
    }

    /// The engine on E returns a cover whose re-counted cost is the enumerated optimum.
    #[test]
    fn method_ising_finds_the_cheapest_cover() {
        let instance = random_cover(12, 14, 5);
        let sets = instance.costs.len();
        let best = (0..1u32 << sets)
            .map(|m| (0..sets).map(|j| m >> j & 1 == 1).collect::<Vec<bool>>())
            .filter(|x| instance.covers(x))
            .map(|x| instance.cost(&x))
            .fold(f64::INFINITY, f64::min);
        let registry = crate::models::ModelRegistry::empty(crate::problems::policy_loaders);
        let models = crate::problems::Models { registry: &registry, requested: None };
        let params = SearchParams { time_limit_s: 5.0, max_rounds: Some(50), ..SearchParams::default() };
        let report = instance.solve_baseline("ising", &params, models).unwrap();
        let chosen: Vec<usize> = serde_json::from_value(report.solution["sets"].clone()).expect("set ids");
        let x: Vec<bool> = (0..sets).map(|j| chosen.contains(&j)).collect();
        assert!(instance.covers(&x));
        assert_eq!(instance.cost(&x), report.objective);
        assert_eq!(report.objective, best);
        let direct = Repaired(std::sync::Arc::new(SlackCover::new(&instance).unwrap())).solve(&params, models);
        assert_eq!(direct.objective, best);
    }
}
