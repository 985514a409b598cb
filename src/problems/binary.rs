//! Binary quadratic models and the solve path of constrained binary problems.
//!
//! Most problems are stated over x in {0,1}^n: E(x) = offset + sum_i a_i x_i + sum_{i<j} b_ij x_i x_j.
//! `Qubo` collects those terms (a constrained problem adds its penalties here) and turns them into
//! the engine's `IsingModel` once, by x = (1 + s) / 2:
//!   h_i = a_i / 2 + sum_j b_ij / 4,  J_ij = b_ij / 4,  E(x) = H(s) + offset + sum_i a_i / 2 + sum_{i<j} b_ij / 4.
//!
//! A constrained problem (independent set, cover, ...) implements `PenaltyProblem`: its penalties
//! make every infeasible state cost more than its repair, so the engine's minimum-energy state is
//! feasible, but a state the search stops at may still violate a constraint. Every incumbent is
//! therefore repaired, and the report scores the repaired selection (`Repaired`'s `Instance`).

use super::ising::IsingModel;
use super::{device_name, HistoryPoint, Instance, Models, ProblemError, SolveReport};
use crate::problems::Solved;
use crate::search::{SearchOutcome, SearchParams, StopReason};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// E(x) = offset + sum_i linear_i x_i + sum_{i<j} quadratic_ij x_i x_j over x in {0,1}^n.
#[derive(Debug, Clone, Default)]
pub struct Qubo {
    pub linear: Vec<f64>,
    quadratic: HashMap<(u32, u32), f64>,
    pub offset: f64,
}

impl Qubo {
    pub fn new(num_variables: usize) -> Self {
        Qubo { linear: vec![0.0; num_variables], quadratic: HashMap::new(), offset: 0.0 }
    }

    pub fn num_variables(&self) -> usize {
        self.linear.len()
    }

    pub fn add_linear(&mut self, i: usize, bias: f64) {
        self.linear[i] += bias;
    }

    /// Adds b x_i x_j (i != j; a repeated pair sums).
    pub fn add_quadratic(&mut self, i: usize, j: usize, bias: f64) {
        debug_assert_ne!(i, j);
        let key = (i.min(j) as u32, i.max(j) as u32);
        *self.quadratic.entry(key).or_insert(0.0) += bias;
    }

    /// Appends `count` variables (slack bits) and returns the first one's index.
    pub fn add_variables(&mut self, count: usize) -> usize {
        self.linear.resize(self.linear.len() + count, 0.0);
        self.linear.len() - count
    }

    /// Adds factor (constant + sum_k c_k x_k)^2 for distinct variables x_k, expanded with
    /// x^2 = x: factor (constant^2 + sum_k (c_k^2 + 2 constant c_k) x_k + sum_{k<l} 2 c_k c_l x_k x_l).
    pub fn add_squared(&mut self, terms: &[(usize, f64)], constant: f64, factor: f64) {
        self.offset += factor * constant * constant;
        for (k, &(i, ci)) in terms.iter().enumerate() {
            self.add_linear(i, factor * (ci * ci + 2.0 * constant * ci));
            for &(j, cj) in &terms[k + 1..] {
                self.add_quadratic(i, j, 2.0 * factor * ci * cj);
            }
        }
    }

    /// Number of distinct interacting pairs.
    pub fn num_interactions(&self) -> usize {
        self.quadratic.len()
    }

    /// E(x), summed term by term.
    pub fn energy(&self, x: &[bool]) -> f64 {
        let linear: f64 = self.linear.iter().zip(x).filter(|(_, &on)| on).map(|(a, _)| a).sum();
        let quadratic: f64 =
            self.quadratic.iter().filter(|(&(i, j), _)| x[i as usize] && x[j as usize]).map(|(_, b)| b).sum();
        self.offset + linear + quadratic
    }

    /// The Ising model H and the constant c with E(x) = H(s) + c for x = (1 + s) / 2.
    pub fn to_ising(&self) -> (IsingModel, f64) {
        let mut fields: Vec<f64> = self.linear.iter().map(|a| a / 2.0).collect();
        let mut constant = self.offset + self.linear.iter().sum::<f64>() / 2.0;
        let mut couplings: Vec<(u32, u32, f64)> = Vec::with_capacity(self.quadratic.len());
        for (&(i, j), &b) in &self.quadratic {
            if b == 0.0 {
                continue;
            }
            fields[i as usize] += b / 4.0;
            fields[j as usize] += b / 4.0;
            constant += b / 4.0;
            couplings.push((i, j, b / 4.0));
        }
        // HashMap order is not reproducible; the engine's results must be.
        couplings.sort_unstable_by_key(|&(i, j, _)| (i, j));
        (IsingModel::new(self.num_variables(), couplings, fields), constant)
    }
}

/// The most spins a dense encoding takes (a squared sum couples every pair: n (n - 1) / 2
/// couplings, 8 million at 4,000).
pub const MAX_DENSE_SPINS: usize = 4_000;

/// f (sum_i c_i s_i)^2 = f sum_i c_i^2 + sum_{i<j} 2 f c_i c_j s_i s_j: every pair i < j in
/// row-major order (pair (u, v) at index u n - u (u + 1) / 2 + v - u - 1, zeros kept so callers
/// can add to a pair by index) and the constant f sum_i c_i^2.
pub fn square_of_sum(coefficients: &[f64], factor: f64) -> (Vec<(u32, u32, f64)>, f64) {
    let n = coefficients.len();
    let mut couplings = Vec::with_capacity(n * n.saturating_sub(1) / 2);
    for (i, &ci) in coefficients.iter().enumerate() {
        for (j, &cj) in coefficients.iter().enumerate().skip(i + 1) {
            couplings.push((i as u32, j as u32, 2.0 * factor * ci * cj));
        }
    }
    (couplings, factor * coefficients.iter().map(|c| c * c).sum::<f64>())
}

/// The most couplings a sparse penalty encoding (set cover, colouring) may build, the count of
/// the largest dense one.
pub const MAX_PENALTY_COUPLINGS: usize = MAX_DENSE_SPINS * (MAX_DENSE_SPINS - 1) / 2;

/// The coefficients of a binary slack that takes every integer 0..=max exactly: 1, 2, 4, ...,
/// the last one cut so they sum to max (ceil(log2(max + 1)) bits; none for max = 0).
pub fn slack_coefficients(max: u64) -> Vec<f64> {
    let mut coefficients = Vec::new();
    let (mut total, mut next) = (0u64, 1u64);
    while total < max {
        let c = next.min(max - total);
        coefficients.push(c as f64);
        total += c;
        next = next.saturating_mul(2);
    }
    coefficients
}

/// The slack bits (for `slack_coefficients(max)`, in order) that sum to `value` <= max: largest
/// coefficient first, exact for 1, 2, 4, ... with the last one cut.
pub fn slack_bits(coefficients: &[f64], value: u64) -> Vec<bool> {
    let mut left = value;
    let mut bits = vec![false; coefficients.len()];
    for k in (0..coefficients.len()).rev() {
        let c = coefficients[k] as u64;
        if c <= left {
            bits[k] = true;
            left -= c;
        }
    }
    debug_assert_eq!(left, 0, "value within the slack's range");
    bits
}

/// Spin +1 is x = 1.
pub fn spins_to_bits(spins: &[i8]) -> Vec<bool> {
    spins.iter().map(|&s| s > 0).collect()
}

/// A constrained binary problem solved through its penalty Hamiltonian.
pub trait PenaltyProblem: Send + Sync + 'static {
    /// The encoding's Hamiltonian, under the problem's registry name.
    fn penalty(&self) -> &Penalty;
    /// A feasible selection made from any state (the search's spins as bits).
    fn repair(&self, x: &[bool]) -> Vec<bool>;
    /// The objective of a feasible selection.
    fn objective(&self, x: &[bool]) -> f64;
    /// The QUBO energy of a feasible selection with objective `objective`: the engine stops
    /// once an energy at or below it is found. The penalties make every infeasible state cost
    /// more than its repair, so that energy is only reached by a selection at least as good.
    fn energy_for_objective(&self, objective: f64) -> f64;
    /// The selection in the user's terms (`{"nodes": [...]}`, ...).
    fn decode(&self, x: &[bool]) -> serde_json::Value;
    /// The named baseline's feasible selection and its time to best; None for an unknown name
    /// (the default: the problem's baselines run on its own instance, not on the penalty model).
    fn run_baseline(&self, name: &str, time_limit: Duration, seed: u64) -> Option<(Vec<bool>, Duration)> {
        let _ = (name, time_limit, seed);
        None
    }
    fn size_summary(&self) -> String;
    /// The problem's own move set run by the engine (`search::moves`), when it has one that
    /// beats spin flips on H; its outcome's energy is in H's units. None: `search::minimize` on H.
    fn dedicated_search(&self, _params: &SearchParams) -> Option<SearchOutcome> {
        None
    }
}

/// A penalty encoding: the Hamiltonian H and the constant c with E(x) = H(s) + c, E the QUBO's
/// energy (`Qubo::to_ising` gives both), under the registry name its reports carry.
pub struct Penalty {
    pub problem: &'static str,
    pub model: IsingModel,
    pub constant: f64,
}

impl Penalty {
    pub fn new(problem: &'static str, (model, constant): (IsingModel, f64)) -> Self {
        Penalty { problem, model, constant }
    }

    /// E(x) of the state `spins`.
    pub fn energy(&self, spins: &[i8]) -> f64 {
        self.model.energy(spins) + self.constant
    }
}

/// The `Instance` of a penalty problem: the engine minimises H, every incumbent is repaired and
/// scored, and the report carries the best repaired selection.
pub struct Repaired<P>(pub Arc<P>);

/// Larger is better for `maximize` problems.
fn better(maximize: bool, a: f64, b: f64) -> bool {
    if maximize {
        a > b
    } else {
        a < b
    }
}

impl<P: PenaltyProblem> Repaired<P> {
    /// Whether the objective is maximised: the repaired objective falls as the energy does
    /// (independent set: energy = -weight) exactly when it is.
    fn maximize(&self) -> bool {
        let problem = &self.0;
        problem.energy_for_objective(1.0) < problem.energy_for_objective(0.0)
    }

    fn report(&self, x: Vec<bool>, params: &SearchParams, outcome: ReportParts) -> SolveReport {
        let problem = &self.0;
        let spins: Vec<i8> = x.iter().map(|&on| if on { 1 } else { -1 }).collect();
        SolveReport {
            problem: problem.penalty().problem.to_string(),
            objective: problem.objective(&x),
            energy: problem.penalty().energy(&spins),
            solution: problem.decode(&x),
            status: outcome.status,
            bound: None,
            gap: None,
            elapsed_ms: outcome.elapsed.as_secs_f64() * 1e3,
            history: outcome.history,
            chains: outcome.chains,
            rounds: outcome.rounds,
            device: outcome.device,
            seed: params.seed,
        }
    }
}

struct ReportParts {
    status: StopReason,
    elapsed: Duration,
    history: Vec<HistoryPoint>,
    chains: usize,
    rounds: usize,
    device: String,
}

/// The best repaired selection seen so far and the objective history.
struct Best {
    x: Option<Vec<bool>>,
    objective: f64,
    history: Vec<HistoryPoint>,
}

impl<P: PenaltyProblem> Instance for Repaired<P> {
    fn solve(&self, params: &SearchParams, _: Models<'_>) -> SolveReport {
        let maximize = self.maximize();
        let worst = if maximize { f64::NEG_INFINITY } else { f64::INFINITY };
        let best = Arc::new(Mutex::new(Best { x: None, objective: worst, history: Vec::new() }));
        let (problem, tracked, outer) = (self.0.clone(), best.clone(), params.hooks.clone());
        let hooks = crate::search::hooks::SearchHooks {
            on_incumbent: None,
            on_incumbent_state: Some(Arc::new(move |elapsed: Duration, spins: &[i8], _energy: f64| {
                let x = problem.repair(&spins_to_bits(spins));
                let objective = problem.objective(&x);
                let mut best = tracked.lock().expect("no panics while held");
                if better(maximize, objective, best.objective) {
                    best.history.push(HistoryPoint { elapsed_ms: elapsed.as_secs_f64() * 1e3, objective });
                    best.objective = objective;
                    best.x = Some(x);
                    drop(best);
                    // The stream carries the repaired objective, not the penalty energy.
                    outer.incumbent(elapsed, objective);
                }
            })),
            cancel: params.hooks.cancel.clone(),
        };
        let target_energy = params.target_energy.map(|e| e - self.0.penalty().constant);
        let search = SearchParams { hooks, target_energy, ..params.clone() };
        let outcome = self
            .0
            .dedicated_search(&search)
            .unwrap_or_else(|| crate::search::minimize(&self.0.penalty().model, &search));
        let mut best = std::mem::replace(
            &mut *best.lock().expect("no panics while held"),
            Best { x: None, objective: worst, history: Vec::new() },
        );
        let last = self.0.repair(&spins_to_bits(&outcome.spins));
        let x = match best.x.take() {
            Some(x) if !better(maximize, self.0.objective(&last), best.objective) => x,
            _ => last,
        };
        let parts = ReportParts {
            status: outcome.stop,
            elapsed: outcome.elapsed,
            history: best.history,
            chains: outcome.chains,
            rounds: outcome.rounds,
            device: device_name(outcome.device),
        };
        self.report(x, params, parts)
    }

    fn solve_baseline(&self, name: &str, params: &SearchParams, _: Models<'_>) -> Solved {
        let start = Instant::now();
        let (x, time_to_best) = self
            .0
            .run_baseline(name, Duration::from_secs_f64(params.time_limit_s), params.seed)
            .ok_or_else(|| ProblemError::invalid("method", format!("unknown baseline '{name}'")))?;
        let objective = self.0.objective(&x);
        let parts = ReportParts {
            status: StopReason::TimeLimit,
            elapsed: start.elapsed(),
            history: vec![HistoryPoint { elapsed_ms: time_to_best.as_secs_f64() * 1e3, objective }],
            chains: 1,
            rounds: 0,
            device: "cpu".to_string(),
        };
        Ok(self.report(x, params, parts))
    }

    /// The QUBO energy; `solve` shifts it to the Ising model's.
    fn target_energy(&self, objective: f64) -> f64 {
        self.0.energy_for_objective(objective)
    }

    fn size_summary(&self) -> String {
        self.0.size_summary()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ising_form_has_the_qubo_energy_in_every_state() {
        let mut qubo = Qubo::new(4);
        qubo.offset = 0.75;
        for (i, a) in [1.0, -2.0, 0.5, 3.0].into_iter().enumerate() {
            qubo.add_linear(i, a);
        }
        qubo.add_quadratic(0, 1, -1.5);
        qubo.add_quadratic(2, 1, 2.0);
        qubo.add_quadratic(1, 2, 0.25);
        qubo.add_quadratic(3, 0, -4.0);
        let (model, constant) = qubo.to_ising();
        for mask in 0..16u32 {
            let x: Vec<bool> = (0..4).map(|i| mask >> i & 1 == 1).collect();
            let spins: Vec<i8> = x.iter().map(|&b| if b { 1 } else { -1 }).collect();
            // The QUBO written out by hand for this mask.
            let bit = |i: usize| f64::from(u8::from(x[i]));
            let direct = 0.75 + bit(0) - 2.0 * bit(1) + 0.5 * bit(2) + 3.0 * bit(3) - 1.5 * bit(0) * bit(1)
                + 2.25 * bit(1) * bit(2)
                - 4.0 * bit(0) * bit(3);
            assert!((qubo.energy(&x) - direct).abs() < 1e-12, "mask {mask}");
            assert!((model.energy(&spins) + constant - direct).abs() < 1e-12, "mask {mask}");
        }
    }

    #[test]
    fn a_squared_constraint_and_its_slack_take_every_residue() {
        for max in [0u64, 1, 2, 5, 8, 13] {
            let coefficients = slack_coefficients(max);
            let reachable: std::collections::BTreeSet<u64> = (0..1u32 << coefficients.len())
                .map(|mask| {
                    (0..coefficients.len()).filter(|&k| mask >> k & 1 == 1).map(|k| coefficients[k] as u64).sum()
                })
                .collect();
            assert_eq!(reachable, (0..=max).collect(), "max {max}");
            for value in 0..=max {
                let bits = slack_bits(&coefficients, value);
                let sum: f64 = coefficients.iter().zip(&bits).filter(|(_, &on)| on).map(|(c, _)| c).sum();
                assert_eq!(sum as u64, value, "max {max}");
            }
        }
        // 2 (x0 + 3 x1 - 2 x2 - 1)^2 against the square written out per state.
        let mut qubo = Qubo::new(1);
        let first = qubo.add_variables(2);
        assert_eq!((first, qubo.num_variables()), (1, 3));
        qubo.add_squared(&[(0, 1.0), (1, 3.0), (2, -2.0)], -1.0, 2.0);
        for mask in 0..8u32 {
            let x: Vec<bool> = (0..3).map(|i| mask >> i & 1 == 1).collect();
            let bit = |i: usize| f64::from(u8::from(x[i]));
            let residue = bit(0) + 3.0 * bit(1) - 2.0 * bit(2) - 1.0;
            assert!((qubo.energy(&x) - 2.0 * residue * residue).abs() < 1e-12, "mask {mask}");
        }
    }
}
