//! Number partitioning on its Ising Hamiltonian (Lucas, "Ising formulations of many NP problems",
//! 2014, sec. 2.1), for method `ising`: H(s) = (sum_i a_i s_i)^2 / M^2, M the largest number (the
//! scale keeps the couplings 2 a_i a_j / M^2 within [0, 2]), on the engine's own spin-flip search
//! (the tensor kernels on an accelerator). No penalty and no repair: every state is a partition.
//! The energies are floats, so past 2^53 they round (see the module doc); the reported
//! difference is recomputed exactly from the returned sides. Every pair couples, hence `binary::MAX_DENSE_SPINS`.

use super::PartitionInstance;
use crate::problems::binary::{square_of_sum, Penalty, PenaltyProblem, MAX_DENSE_SPINS};
use crate::problems::ProblemError;
use crate::search::ising::IsingModel;
use serde_json::Value;

pub struct SquaredResidue {
    instance: PartitionInstance,
    penalty: Penalty,
    scale: f64,
}

impl SquaredResidue {
    pub fn new(instance: &PartitionInstance) -> Result<Self, ProblemError> {
        let n = instance.numbers.len();
        if n > MAX_DENSE_SPINS {
            return Err(ProblemError::too_large(
                "method",
                format!("the Ising encoding couples every pair of numbers; it takes at most {MAX_DENSE_SPINS}"),
            ));
        }
        let scale = instance.numbers.iter().copied().max().unwrap_or(0).max(1) as f64;
        let a: Vec<f64> = instance.numbers.iter().map(|&x| x as f64 / scale).collect();
        let (mut couplings, constant) = square_of_sum(&a, 1.0);
        couplings.retain(|c| c.2 != 0.0);
        let instance = PartitionInstance::new(instance.numbers.clone());
        Ok(SquaredResidue {
            instance,
            penalty: Penalty::new("number_partitioning", (IsingModel::new(n, couplings, vec![]), constant)),
            scale,
        })
    }
}

impl PenaltyProblem for SquaredResidue {
    fn penalty(&self) -> &Penalty {
        &self.penalty
    }

    fn repair(&self, x: &[bool]) -> Vec<bool> {
        x.to_vec()
    }

    fn objective(&self, x: &[bool]) -> f64 {
        self.instance.residue(x).unsigned_abs() as f64
    }

    fn energy_for_objective(&self, objective: f64) -> f64 {
        (objective / self.scale).powi(2)
    }

    fn decode(&self, x: &[bool]) -> Value {
        self.instance.solution(x)
    }

    fn size_summary(&self) -> String {
        format!("n={} (Ising)", self.instance.numbers.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problems::Instance;
    use crate::search::SearchParams;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// H(s) + constant = (residue / M)^2 on every state; the engine (exact at this size, then
    /// its chains at 30 numbers) returns sides whose exact difference is the enumerated optimum,
    /// and a local minimum of H beyond enumeration.
    #[test]
    fn the_hamiltonian_is_the_squared_residue_and_method_ising_finds_the_optimum() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        let numbers: Vec<i64> = (0..12).map(|_| rng.gen_range(1..1_000)).collect();
        let instance = PartitionInstance::new(numbers.clone());
        let encoding = SquaredResidue::new(&instance).unwrap();
        let scale = *numbers.iter().max().unwrap() as f64;
        let mut best = u128::MAX;
        for mask in 0..1u32 << numbers.len() {
            let sides: Vec<bool> = (0..numbers.len()).map(|i| mask >> i & 1 == 1).collect();
            let spins: Vec<i8> = sides.iter().map(|&on| if on { 1 } else { -1 }).collect();
            let residue: i64 = numbers.iter().zip(&sides).map(|(&a, &on)| if on { a } else { -a }).sum();
            let energy = encoding.penalty.energy(&spins);
            assert!((energy - (residue as f64 / scale).powi(2)).abs() < 1e-9);
            best = best.min(residue.unsigned_abs() as u128);
        }
        let registry = crate::models::ModelRegistry::empty(crate::problems::policy_loaders);
        let models = crate::problems::Models { registry: &registry, requested: None };
        let params = SearchParams { time_limit_s: 5.0, max_rounds: Some(50), ..SearchParams::default() };
        let difference = |instance: &PartitionInstance| {
            let report = instance.solve_baseline("ising", &params, models).unwrap();
            let sides: Vec<u8> = serde_json::from_value(report.solution["sides"].clone()).expect("sides");
            let sides: Vec<bool> = sides.iter().map(|&s| s == 1).collect();
            let exact = instance.residue(&sides).unsigned_abs();
            assert_eq!(report.solution["difference"], exact.to_string());
            exact
        };
        assert_eq!(difference(&instance), best);
        // A single-flip minimum of r^2 has |r| <= a_i for every a_i on r's side (flipping it moves
        // r by 2 a_i), so the polished chains end at most the largest number away.
        let larger = PartitionInstance::new((0..30).map(|_| rng.gen_range(1..1_000_000)).collect());
        let largest = *larger.numbers.iter().max().unwrap() as u128;
        assert!(difference(&larger) <= largest);
    }
}
