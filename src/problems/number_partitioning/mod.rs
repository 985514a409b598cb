//! Number partitioning: split a list of non-negative integers (up to 2^63 - 1 each) into two
//! sets whose sums differ as little as possible. Input: JSON, the list itself or `{numbers}`.
//! `solution.sides` gives each number's side (0 or 1) in input order, `solution.difference`
//! the difference exactly (a decimal string: it can pass 2^64), `objective` the same as a float.
//! A difference equal to the total's parity (0 for an even total, 1 for an odd one) is optimal
//! and answered `optimal`.
//!
//! Arithmetic is exact (i128 residues): with b-bit numbers the Ising form H = (sum a_i s_i)^2
//! needs 2b + log2 n bits, past a float's 53 at the hard phase b = n = 40..60 (Mertens 1998).
//!
//! Search (`search`): up to `schroeppel_shamir::MAX_NUMBERS` numbers, the complete
//! Schroeppel-Shamir sweep on every core (`schroeppel_shamir.rs`): O(2^(n/2)) time in
//! O(2^(n/4)) memory, anytime, and a proof of optimality when it finishes. At the hard phase b = n
//! (`rlsolver generate number_partitioning`, seeds 0-2, this 2-core machine) it proves the optimum
//! of n = 40 in 0.06-0.08 s and of n = 50 in 1.1-2.9 s, where CKK has not finished in 60 s
//! (n = 40: differences 6, 1, 4 against the sweep's 4, 1, 4; n = 50: 2951 against 1). Past that
//! size, and as method `anneal` at any size, chains start from the Karmarkar-Karp partition and
//! anneal on log(1 + |residue|) with single moves and pair swaps (`search::moves`), from
//! temperature 8 to 0.05 per cycle (at 1 no uphill move was ever taken: one move changes the
//! residue by 2^40 at b = 40); at the hard phase it improves on KK by three orders of magnitude
//! but stays far from CKK (n = 40, 10 s: 35162 and 159341), so it is not the default where the
//! sweep fits. Baselines: `kk` and `ckk` (`differencing.rs`). Method `ising`: the engine on
//! H = (sum a_i s_i)^2 itself (`ising.rs`; up to `binary::MAX_DENSE_SPINS` numbers).

mod differencing;
pub mod ising;

use super::{penalty_baseline, Baseline};
use crate::problems::Solved;
pub mod schroeppel_shamir;

use super::{HistoryPoint, Instance, Limits, Models, ProblemCode, ProblemError, ProblemInput, SolveReport, SolveRun};
use crate::search::moves::{cycle_temperature, minimize_with, MoveSet};
use crate::search::{SearchParams, StopReason};
use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

pub struct PartitionInstance {
    pub numbers: Vec<i64>,
    total: i128,
}

impl PartitionInstance {
    pub fn new(numbers: Vec<i64>) -> Self {
        let total = numbers.iter().map(|&a| a as i128).sum();
        PartitionInstance { numbers, total }
    }

    /// sum over side 1 minus sum over side 0.
    pub fn residue(&self, sides: &[bool]) -> i128 {
        differencing::residue(&self.numbers, sides)
    }

    fn optimal_difference(&self) -> u128 {
        (self.total % 2) as u128
    }

    pub fn karmarkar_karp(&self) -> Vec<bool> {
        differencing::karmarkar_karp(&self.numbers)
    }

    /// Korf's CKK until `deadline`: the best sides found and whether the search finished.
    pub fn complete_karmarkar_karp(&self, deadline: Instant) -> (Vec<bool>, bool) {
        differencing::complete_karmarkar_karp(&self.numbers, deadline, self.optimal_difference())
    }

    /// `{sides, difference}`, the difference as an exact decimal string.
    fn solution(&self, sides: &[bool]) -> Value {
        let difference = self.residue(sides).unsigned_abs();
        json!({"sides": sides.iter().map(|&s| u8::from(s)).collect::<Vec<_>>(), "difference": difference.to_string()})
    }

    /// The report; a difference at the parity bound is optimal, whatever stopped the run.
    fn report(&self, sides: &[bool], mut run: SolveRun) -> SolveReport {
        let difference = self.residue(sides).unsigned_abs();
        if difference <= self.optimal_difference() {
            run.status = StopReason::Optimal;
        }
        // No split beats the total's parity; a finished complete search proves its own answer.
        let bound = if run.status == StopReason::Optimal { difference } else { self.optimal_difference() };
        SolveReport::new("number_partitioning", difference as f64, difference as f64, self.solution(sides), run)
            .with_bound(bound as f64)
    }
}

/// One chain: the sides, the exact residue and the best seen.
#[derive(Clone)]
pub struct SplitChain {
    sides: Vec<bool>,
    residue: i128,
    best: Vec<bool>,
    best_difference: u128,
    moves: u64,
}

struct Annealing<'a> {
    instance: &'a PartitionInstance,
    /// Moves per annealing cycle on log(1 + |r|), from `hot` down to `cold`.
    cycle: u64,
    hot: f64,
    cold: f64,
}

fn log_size(residue: i128) -> f64 {
    (residue.unsigned_abs() as f64).ln_1p()
}

impl MoveSet for Annealing<'_> {
    type Chain = SplitChain;
    type Solution = Vec<bool>;

    fn num_variables(&self) -> usize {
        self.instance.numbers.len()
    }

    fn moves_per_round(&self) -> usize {
        (self.cycle / 10).max(1) as usize
    }

    fn min_patience_rounds(&self) -> usize {
        40
    }

    fn start(&self, _chain: usize, _rng: &mut Xoshiro256PlusPlus) -> SplitChain {
        let sides = self.instance.karmarkar_karp();
        let residue = self.instance.residue(&sides);
        SplitChain { best: sides.clone(), best_difference: residue.unsigned_abs(), sides, residue, moves: 0 }
    }

    fn advance(&self, chain: &mut SplitChain, moves: usize, rng: &mut Xoshiro256PlusPlus) {
        let numbers = &self.instance.numbers;
        let n = numbers.len();
        let signed = |i: usize, side: bool| if side { numbers[i] as i128 } else { -(numbers[i] as i128) };
        for _ in 0..moves {
            if chain.best_difference <= self.instance.optimal_difference() {
                return;
            }
            let temperature = cycle_temperature(chain.moves, self.cycle, self.hot, self.cold);
            chain.moves += 1;
            let i = rng.gen_range(0..n);
            // A single move, or a swap with a number on the other side.
            let j = if n > 1 && rng.gen::<bool>() {
                Some(rng.gen_range(0..n)).filter(|&j| chain.sides[j] != chain.sides[i])
            } else {
                None
            };
            let mut residue = chain.residue - 2 * signed(i, chain.sides[i]);
            if let Some(j) = j {
                residue -= 2 * signed(j, chain.sides[j]);
            }
            let delta = log_size(residue) - log_size(chain.residue);
            if delta <= 0.0 || rng.gen::<f64>() < (-delta / temperature).exp() {
                chain.sides[i] = !chain.sides[i];
                if let Some(j) = j {
                    chain.sides[j] = !chain.sides[j];
                }
                chain.residue = residue;
                if residue.unsigned_abs() < chain.best_difference {
                    chain.best_difference = residue.unsigned_abs();
                    chain.best.copy_from_slice(&chain.sides);
                }
            }
        }
    }

    fn best(&self, chain: &SplitChain) -> (Vec<bool>, f64) {
        (chain.best.clone(), chain.best_difference as f64)
    }
}

impl PartitionInstance {
    /// The annealing on the engine's chains: `search` past `schroeppel_shamir::MAX_NUMBERS`
    /// numbers, method `anneal` at any size.
    fn anneal(&self, params: &SearchParams) -> SolveReport {
        let n = self.numbers.len();
        let moves = Annealing { instance: self, cycle: (2_000 * n) as u64, hot: 8.0, cold: 0.05 };
        // An optimal difference ends the search (it cannot be beaten).
        let target_energy = Some(params.target_energy.unwrap_or(0.0).max(self.optimal_difference() as f64));
        let outcome = minimize_with(&moves, &SearchParams { target_energy, ..params.clone() });
        self.report(&outcome.solution, SolveRun::of_moves(&outcome, |energy| energy, params.seed))
    }

    /// The complete Schroeppel-Shamir sweep on every core (`search` up to
    /// `schroeppel_shamir::MAX_NUMBERS` numbers): optimal when it finishes, anytime before.
    fn sweep(&self, params: &SearchParams) -> SolveReport {
        let start = Instant::now();
        let target = params.target_energy.filter(|t| *t >= 0.0).map_or(0, |t| t.floor() as u128);
        let stop_at = target.max(self.optimal_difference());
        let history = std::sync::Mutex::new(Vec::new());
        let on_improvement = |difference: u128| {
            let elapsed = start.elapsed();
            history
                .lock()
                .expect("sweep history")
                .push(HistoryPoint { elapsed_ms: elapsed.as_secs_f64() * 1e3, objective: difference as f64 });
            params.hooks.incumbent(elapsed, difference as f64);
        };
        let cancelled = || params.hooks.cancelled();
        let workers =
            params.chains.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |c| c.get())).clamp(1, 64);
        let limits = schroeppel_shamir::SweepLimits {
            deadline: start + Duration::from_secs_f64(params.time_limit_s),
            stop_at,
            cancelled: &cancelled,
            on_improvement: &on_improvement,
        };
        let sweep = schroeppel_shamir::sweep(&self.numbers, workers, &limits);
        let status = match (sweep.complete, sweep.difference <= target) {
            (true, true) => StopReason::TargetReached,
            (true, false) => StopReason::Optimal,
            (false, _) => StopReason::TimeLimit,
        };
        let run = SolveRun {
            history: history.into_inner().expect("sweep history"),
            chains: sweep.workers,
            ..SolveRun::once(status, start.elapsed(), Duration::ZERO, 0.0, params.seed)
        };
        self.report(&sweep.sides, run)
    }
}

impl PartitionInstance {
    const BASELINES: &'static [Baseline<Self>] = &[
        Baseline { name: "anneal", run: |p, params, _| Ok(p.anneal(params)) },
        Baseline {
            name: "kk",
            run: |p, params, _| Ok(p.once(params, |_| (p.karmarkar_karp(), StopReason::Converged))),
        },
        Baseline {
            name: "ckk",
            run: |p, params, _| {
                Ok(p.once(params, |deadline| {
                    let (sides, finished) = p.complete_karmarkar_karp(deadline);
                    (sides, if finished { StopReason::Optimal } else { StopReason::TimeLimit })
                }))
            },
        },
        Baseline {
            name: "ising",
            run: |p, params, models| penalty_baseline(ising::SquaredResidue::new(p), params, models),
        },
    ];

    /// A baseline that runs once (to the time limit's deadline at most): its sides and why it
    /// stopped, timed.
    fn once(&self, params: &SearchParams, run: impl FnOnce(Instant) -> (Vec<bool>, StopReason)) -> SolveReport {
        let start = Instant::now();
        let (sides, status) = run(start + Duration::from_secs_f64(params.time_limit_s));
        let (elapsed, difference) = (start.elapsed(), self.residue(&sides).unsigned_abs() as f64);
        self.report(&sides, SolveRun::once(status, elapsed, elapsed, difference, params.seed))
    }
}

impl Instance for PartitionInstance {
    fn solve(&self, params: &SearchParams, _: Models<'_>) -> SolveReport {
        if self.numbers.len() <= schroeppel_shamir::MAX_NUMBERS {
            self.sweep(params)
        } else {
            self.anneal(params)
        }
    }

    fn solve_baseline(&self, name: &str, params: &SearchParams, models: Models<'_>) -> Solved {
        super::run_baseline(Self::BASELINES, self, name, params, models)
    }

    fn size_summary(&self) -> String {
        format!("n={}", self.numbers.len())
    }
}

/// The list, or `{numbers}`; every entry an integer in 0..=2^63 - 1.
pub fn parse_json(value: &Value, limits: &Limits) -> Result<PartitionInstance, ProblemError> {
    let (list, field) = match value {
        Value::Array(list) => (list, "instance"),
        Value::Object(object) => {
            if let Some(unknown) = object.keys().find(|k| *k != "numbers") {
                return Err(ProblemError::invalid(unknown.as_str(), "unknown field; expected numbers"));
            }
            let list = object
                .get("numbers")
                .and_then(Value::as_array)
                .ok_or_else(|| ProblemError::invalid("numbers", "must be an array of integers"))?;
            (list, "numbers")
        }
        _ => return Err(ProblemError::invalid("instance", "expected a list of integers or {numbers}")),
    };
    if list.is_empty() {
        return Err(ProblemError::invalid(field, "needs at least one number"));
    }
    if list.len() > limits.max_nodes {
        return Err(ProblemError::too_large(
            field,
            format!("{} numbers exceed this server's limit of {}", list.len(), limits.max_nodes),
        ));
    }
    let numbers = list
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let field = format!("{field}[{i}]");
            match v {
                Value::Number(x) if x.is_i64() && x.as_i64() >= Some(0) => Ok(x.as_i64().expect("checked")),
                Value::Number(x) if x.is_u64() => {
                    Err(ProblemError::invalid(&field, format!("{x} overflows a signed 64-bit integer")))
                }
                Value::Number(x) if x.is_f64() => {
                    Err(ProblemError::invalid(&field, format!("{x} is not an integer below 2^63")))
                }
                Value::Number(x) => Err(ProblemError::invalid(&field, format!("{x} is negative"))),
                _ => Err(ProblemError::invalid(&field, "must be an integer")),
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(PartitionInstance::new(numbers))
}

/// The registry row.
pub struct NumberPartitioning;

impl ProblemCode for NumberPartitioning {
    /// JSON: `nodes` numbers of `edges` bits each (bits = numbers is the hard phase).
    fn generate(&self, spec: &super::GenerateSpec) -> Option<Result<String, String>> {
        let numbers = generate(spec.nodes, spec.edges as u32, spec.seed);
        Some(serde_json::to_string(&numbers).map(|text| text + "\n").map_err(|e| e.to_string()))
    }

    fn instance_schema(&self) -> Value {
        json!({
            "description": "a list of non-negative integers below 2^63, or {numbers: [...]}",
            "type": ["array", "object"],
            "items": {"type": "integer", "minimum": 0}
        })
    }

    fn load(&self, input: ProblemInput<'_>, limits: &Limits) -> Result<Box<dyn Instance>, ProblemError> {
        match input {
            ProblemInput::Json(value) => Ok(Box::new(parse_json(value, limits)?)),
            ProblemInput::Text(_) => Err(ProblemError::invalid("body", "number_partitioning takes JSON only")),
        }
    }
}

/// `n` numbers of `bits` bits each, uniform (bits = n is the hard phase), from `seed`.
pub fn generate(n: usize, bits: u32, seed: u64) -> Vec<i64> {
    let mut rng = <Xoshiro256PlusPlus as rand::SeedableRng>::seed_from_u64(seed);
    let bits = bits.clamp(1, 63);
    (0..n).map(|_| (rng.gen::<u64>() >> (64 - bits)) as i64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ckk_proves_the_enumerated_optimum_and_kk_is_never_better() {
        for seed in 0..6 {
            let instance = PartitionInstance::new(generate(16, 16, seed));
            let best = (0..1u32 << 16)
                .map(|m| instance.residue(&(0..16).map(|i| m >> i & 1 == 1).collect::<Vec<_>>()).unsigned_abs())
                .min()
                .unwrap();
            let (sides, finished) = instance.complete_karmarkar_karp(Instant::now() + Duration::from_secs(10));
            assert!(finished);
            assert_eq!(instance.residue(&sides).unsigned_abs(), best, "seed {seed}");
            assert!(instance.residue(&instance.karmarkar_karp()).unsigned_abs() >= best);
        }
        // KK on {8, 7, 6, 5, 4}: 8-7=1, 6-5=1, 4-1=3, 3-1=2: difference 2 (the optimum is 0).
        let kk = PartitionInstance::new(vec![8, 7, 6, 5, 4]);
        assert_eq!(kk.residue(&kk.karmarkar_karp()).unsigned_abs(), 2);
    }
}
