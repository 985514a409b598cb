//! 0/1 knapsack (one or several dimensions) on its penalty Hamiltonian, for method `ising`
//! (Lucas, "Ising formulations of many NP problems", 2014, sec. 5.2, with the slack in binary
//! instead of one-hot, as his log trick suggests):
//!   E(x, z) = A sum_d (sum_i w_di x_i + sum_k c_k z_dk - W_d)^2 - sum_i v_i x_i,
//! x_i = 1 when item i is packed, z_d the slack bits of dimension d with coefficients 1, 2, 4, ...
//! summing to W_d (`binary::slack_coefficients`), so every load that fits can reach residue 0 and
//! an overload of r units pays A r^2 at least. Why A = 2 max_i v_i (Lucas: A > B max v): one unit
//! of overload costs more than any one item is worth. Integer weights and capacities only (the
//! slack counts units); the squared sums couple every pair of items, so items plus slack bits are
//! at most `binary::MAX_DENSE_SPINS`. The engine runs its spin-flip search on E (the tensor
//! kernels on an accelerator); every incumbent is repacked to fit (`KnapsackInstance::packed`).

use super::KnapsackInstance;
use crate::problems::binary::{slack_bits, slack_coefficients, Penalty, PenaltyProblem, Qubo, MAX_DENSE_SPINS};
use crate::problems::ProblemError;
use serde_json::Value;

pub struct SlackKnapsack {
    instance: KnapsackInstance,
    penalty: Penalty,
    /// Slack coefficients per dimension, in spin order after the items.
    slacks: Vec<Vec<f64>>,
}

impl SlackKnapsack {
    pub fn new(instance: &KnapsackInstance) -> Result<Self, ProblemError> {
        let integral = |x: f64| x.fract() == 0.0 && x.abs() < 2f64.powi(53);
        if !instance.capacity.iter().all(|&c| integral(c)) || !instance.weights.iter().flatten().all(|&w| integral(w)) {
            return Err(ProblemError::invalid("method", "the Ising encoding needs integer weights and capacities"));
        }
        let slacks: Vec<Vec<f64>> = instance.capacity.iter().map(|&c| slack_coefficients(c.max(0.0) as u64)).collect();
        let n = instance.num_items();
        let spins = n + slacks.iter().map(Vec::len).sum::<usize>();
        if spins > MAX_DENSE_SPINS {
            return Err(ProblemError::too_large(
                "method",
                format!(
                    "the Ising encoding needs {spins} spins (items plus slack bits); it takes at most {MAX_DENSE_SPINS}"
                ),
            ));
        }
        let penalty = 2.0 * instance.values.iter().copied().fold(0.0, f64::max).max(f64::MIN_POSITIVE);
        let mut qubo = Qubo::new(n);
        for (i, &v) in instance.values.iter().enumerate() {
            qubo.add_linear(i, -v);
        }
        for (d, coefficients) in slacks.iter().enumerate() {
            let first = qubo.add_variables(coefficients.len());
            let mut terms: Vec<(usize, f64)> =
                instance.weights[d].iter().enumerate().filter(|(_, &w)| w != 0.0).map(|(i, &w)| (i, w)).collect();
            terms.extend(coefficients.iter().enumerate().map(|(k, &c)| (first + k, c)));
            qubo.add_squared(&terms, -instance.capacity[d], penalty);
        }
        Ok(SlackKnapsack { instance: instance.clone(), penalty: Penalty::new("knapsack", qubo.to_ising()), slacks })
    }

    fn items_of(&self, x: &[bool]) -> Vec<bool> {
        x[..self.instance.num_items()].to_vec()
    }
}

impl PenaltyProblem for SlackKnapsack {
    fn penalty(&self) -> &Penalty {
        &self.penalty
    }

    /// The repacked items, each dimension's slack set to its free capacity (residue 0).
    fn repair(&self, x: &[bool]) -> Vec<bool> {
        let items = self.instance.packed(self.items_of(x));
        let mut bits = items.clone();
        for (d, coefficients) in self.slacks.iter().enumerate() {
            let load: f64 = self.instance.weights[d].iter().zip(&items).filter(|(_, &on)| on).map(|(w, _)| w).sum();
            bits.extend(slack_bits(coefficients, (self.instance.capacity[d] - load) as u64));
        }
        bits
    }

    fn objective(&self, x: &[bool]) -> f64 {
        self.instance.value(&self.items_of(x))
    }

    fn energy_for_objective(&self, objective: f64) -> f64 {
        -objective
    }

    fn decode(&self, x: &[bool]) -> Value {
        self.instance.solution(&self.items_of(x))
    }

    fn size_summary(&self) -> String {
        format!(
            "items={} dimensions={} spins={} (Ising)",
            self.instance.num_items(),
            self.instance.capacity.len(),
            self.penalty.model.num_spins()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problems::{Instance, Limits};
    use crate::search::SearchParams;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn random_knapsack(n: usize, dimensions: usize, seed: u64) -> KnapsackInstance {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let values: Vec<f64> = (0..n).map(|_| f64::from(rng.gen_range(1..30))).collect();
        let weights: Vec<Vec<f64>> =
            (0..dimensions).map(|_| (0..n).map(|_| f64::from(rng.gen_range(1..12))).collect()).collect();
        let capacity = weights.iter().map(|w| (w.iter().sum::<f64>() / 3.0).floor()).collect();
        super::super::check(values, weights, capacity, 0, ["v", "w", "c"], &Limits::default()).unwrap()
    }

    /// E is A times each dimension's squared residue minus the value, on every state of a small
    /// two-dimensional instance; every repaired state fits and its slack zeroes the penalty.
    #[test]
    fn the_hamiltonian_is_the_capacity_penalties_minus_the_value() {
        let instance = random_knapsack(4, 2, 8);
        let encoding = SlackKnapsack::new(&instance).unwrap();
        let n = encoding.penalty.model.num_spins();
        let penalty = 2.0 * instance.values.iter().copied().fold(0.0, f64::max);
        for mask in 0..1u64 << n {
            let x: Vec<bool> = (0..n).map(|i| mask >> i & 1 == 1).collect();
            let mut next = instance.num_items();
            let mut expected = -instance.value(&x[..instance.num_items()]);
            for (d, coefficients) in encoding.slacks.iter().enumerate() {
                let load: f64 = (0..instance.num_items()).filter(|&i| x[i]).map(|i| instance.weights[d][i]).sum();
                let slack: f64 = coefficients.iter().enumerate().filter(|(k, _)| x[next + k]).map(|(_, c)| c).sum();
                next += coefficients.len();
                expected += penalty * (load + slack - instance.capacity[d]).powi(2);
            }
            let spins: Vec<i8> = x.iter().map(|&b| if b { 1 } else { -1 }).collect();
            let energy = encoding.penalty.energy(&spins);
            assert!((energy - expected).abs() < 1e-6, "{mask}: {energy} vs {expected}");
            if mask % 61 == 0 {
                let repaired = encoding.repair(&x);
                assert!(instance.fits(&repaired[..instance.num_items()]));
                let spins: Vec<i8> = repaired.iter().map(|&b| if b { 1 } else { -1 }).collect();
                let energy = encoding.penalty.energy(&spins);
                assert!((energy + encoding.objective(&repaired)).abs() < 1e-6);
            }
        }
    }

    /// The engine on E returns a packing that fits, whose re-counted value is the dynamic
    /// programme's optimum.
    #[test]
    fn method_ising_finds_the_optimum_of_a_small_knapsack() {
        let instance = random_knapsack(12, 1, 9);
        let best = instance.value(&instance.dp().unwrap());
        let registry = crate::models::ModelRegistry::empty(crate::problems::policy_loaders);
        let models = crate::problems::Models { registry: &registry, requested: None };
        let params = SearchParams { time_limit_s: 5.0, max_rounds: Some(100), ..SearchParams::default() };
        let report = instance.solve_baseline("ising", &params, models).unwrap();
        let items: Vec<usize> = serde_json::from_value(report.solution["items"].clone()).expect("item ids");
        let x: Vec<bool> = (0..instance.num_items()).map(|i| items.contains(&i)).collect();
        assert!(instance.fits(&x));
        assert_eq!(instance.value(&x), report.objective);
        assert_eq!(report.objective, best);
        let fractional = KnapsackInstance { capacity: vec![10.5], ..instance.clone() };
        assert!(SlackKnapsack::new(&fractional).is_err());
    }
}
