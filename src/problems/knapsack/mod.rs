//! 0/1 knapsack, one or several capacity dimensions: choose items of maximum total value whose
//! weights fit every capacity.
//!
//! Inputs: Pisinger's text (`n W`, then n lines `v w`; a trailing 0/1 solution line, as in the
//! knapPI files, is ignored), OR-Library mknap text (`n m optimum`, the n values, m rows of n
//! weights, the m capacities; a file holding several problems must be sent one at a time), and
//! JSON `{values, weights, capacity}` (weights a list for one dimension or m lists, capacity a
//! number or m numbers). Items are 0-based in JSON and 1-based in the text formats.
//!
//! Methods: the default (`search`) solves one capacity with integer data exactly (`exact.rs`,
//! Pisinger's expanding-core programme: status `optimal`, or at the time limit the best found
//! with its bound) and runs knapsack moves in the engine's chains (`search::moves`) otherwise;
//! `moves` runs those chains on any instance; `dp` is the dynamic programme over the capacity (one
//! dimension, integer weights, n (W + 1) cells at most `MAX_DP_CELLS`); `greedy` packs by
//! value/weight ratio. Every answer carries a bound: the exact run's, else the least over the
//! capacities of Dantzig's bound for that capacity alone (each is the LP relaxation of a
//! relaxation, so it bounds the optimum from above). `rlsolver generate knapsack` writes
//! Pisinger's classes (`generate.rs`). Why moves and not the Ising
//! encoding: a capacity constraint needs log2(W) slack spins and a penalty whose scale dwarfs the
//! values, and single flips on it mostly cross infeasible states; the moves here keep every state
//! feasible: add an item that fits, drop one (Metropolis on the value lost), or swap one in for
//! one out when it only fits that way. Method `ising`: the engine's spin flips on that encoding
//! (`ising.rs`), every incumbent repacked to fit; measured against the moves in the README.

pub mod exact;
pub mod generate;
pub mod ising;

use super::{penalty_baseline, Baseline};
use super::{Instance, Limits, Models, ProblemCode, ProblemError, ProblemInput, SolveReport, SolveRun};
use crate::problems::Solved;
use crate::search::moves::{cycle_temperature, minimize_with, MoveSet};
use crate::search::{SearchParams, StopReason};
use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// The largest dynamic programme `dp` runs: items times (capacity + 1).
pub const MAX_DP_CELLS: usize = 200_000_000;
/// The most capacity dimensions.
pub const MAX_DIMENSIONS: usize = 100;

#[derive(Debug, Clone)]
pub struct KnapsackInstance {
    pub values: Vec<f64>,
    /// weights[d][i]: item i's weight in dimension d.
    pub weights: Vec<Vec<f64>>,
    pub capacity: Vec<f64>,
    /// 1 for the text formats (ids as in the file), 0 for JSON.
    base: usize,
}

impl KnapsackInstance {
    pub fn num_items(&self) -> usize {
        self.values.len()
    }

    pub fn value(&self, x: &[bool]) -> f64 {
        self.values.iter().zip(x).filter(|(_, &on)| on).map(|(v, _)| v).sum()
    }

    pub fn fits(&self, x: &[bool]) -> bool {
        self.weights
            .iter()
            .zip(&self.capacity)
            .all(|(w, &c)| w.iter().zip(x).filter(|(_, &on)| on).map(|(w, _)| w).sum::<f64>() <= c)
    }

    /// Items by value per unit of (capacity-normalised) weight, best first.
    fn by_ratio(&self) -> Vec<usize> {
        let load = |i: usize| -> f64 {
            self.weights.iter().zip(&self.capacity).map(|(w, &c)| if c > 0.0 { w[i] / c } else { f64::INFINITY }).sum()
        };
        let mut order: Vec<usize> = (0..self.num_items()).collect();
        order.sort_by(|&a, &b| (self.values[b] / load(b)).total_cmp(&(self.values[a] / load(a))).then(a.cmp(&b)));
        order
    }

    /// Greedy by ratio: every item that still fits, best ratio first.
    pub fn greedy(&self) -> Vec<bool> {
        self.packed(vec![false; self.num_items()])
    }

    /// A feasible selection from any: the chosen items of worst ratio leave until the rest fits,
    /// then every item that still fits joins, best ratio first.
    pub fn packed(&self, mut x: Vec<bool>) -> Vec<bool> {
        let order = self.by_ratio();
        let load =
            |x: &[bool], d: usize| -> f64 { self.weights[d].iter().zip(x).filter(|(_, &on)| on).map(|(w, _)| w).sum() };
        let mut used: Vec<f64> = (0..self.capacity.len()).map(|d| load(&x, d)).collect();
        for &i in order.iter().rev() {
            if (0..used.len()).all(|d| used[d] <= self.capacity[d]) {
                break;
            }
            if x[i] {
                x[i] = false;
                (0..used.len()).for_each(|d| used[d] -= self.weights[d][i]);
            }
        }
        for i in order {
            if !x[i] && (0..used.len()).all(|d| used[d] + self.weights[d][i] <= self.capacity[d]) {
                x[i] = true;
                (0..used.len()).for_each(|d| used[d] += self.weights[d][i]);
            }
        }
        x
    }

    /// The instance as integers for `exact`: one capacity, non-negative integral data below 2^53;
    /// None otherwise.
    fn integral(&self) -> Option<(Vec<u64>, Vec<u64>, u64)> {
        if self.capacity.len() != 1 {
            return None;
        }
        let int = |x: f64| (x.fract() == 0.0 && (0.0..9.0e15).contains(&x)).then_some(x as u64);
        let values = self.values.iter().map(|&v| int(v)).collect::<Option<Vec<_>>>()?;
        let weights = self.weights[0].iter().map(|&w| int(w)).collect::<Option<Vec<_>>>()?;
        Some((values, weights, int(self.capacity[0])?))
    }

    /// An upper bound on the optimum: for each capacity alone, Dantzig's bound (its LP
    /// relaxation: items by value/weight, the last one fractional), the least of them.
    pub fn dantzig_bound(&self) -> f64 {
        let single = |weights: &[f64], capacity: f64| -> f64 {
            let mut order: Vec<usize> = (0..self.num_items()).collect();
            let ratio = |i: usize| if weights[i] > 0.0 { self.values[i] / weights[i] } else { f64::INFINITY };
            order.sort_by(|&a, &b| ratio(b).total_cmp(&ratio(a)));
            let (mut room, mut bound) = (capacity, 0.0);
            for i in order {
                if self.values[i] <= 0.0 {
                    break;
                }
                if weights[i] <= room {
                    room -= weights[i];
                    bound += self.values[i];
                } else {
                    bound += self.values[i] * room / weights[i];
                    break;
                }
            }
            bound
        };
        self.weights.iter().zip(&self.capacity).map(|(w, &c)| single(w, c)).fold(f64::INFINITY, f64::min)
    }

    /// The exact run on one integral capacity (None for other instances), stopped by the time
    /// limit or the cancel flag.
    fn exact(&self, params: &SearchParams) -> Option<SolveReport> {
        let (values, weights, capacity) = self.integral()?;
        let start = Instant::now();
        let deadline = start + Duration::from_secs_f64(params.time_limit_s.max(0.0));
        let mut improved = |value: u64| params.hooks.incumbent(start.elapsed(), value as f64);
        let out = exact::solve(&values, &weights, capacity, deadline, &|| params.hooks.cancelled(), &mut improved);
        let elapsed = start.elapsed();
        let status = match (out.optimal, out.capped) {
            (true, _) => StopReason::Optimal,
            (false, true) => StopReason::MemoryLimit,
            (false, false) => StopReason::TimeLimit,
        };
        let run = SolveRun::once(status, elapsed, elapsed, out.value as f64, params.seed);
        Some(self.report(&out.x, run).with_bound(out.bound as f64))
    }

    /// The knapsack moves in the engine's chains, with Dantzig's bound.
    fn search(&self, params: &SearchParams) -> SolveReport {
        let mean_value = self.values.iter().sum::<f64>() / self.num_items() as f64;
        let min_value = self.values.iter().copied().filter(|&v| v > 0.0).fold(f64::INFINITY, f64::min);
        let moves = PackMoves {
            instance: self,
            hot: mean_value,
            cold: (0.05 * min_value).min(mean_value),
            cycle: (2_000 * self.num_items()) as u64,
        };
        let hooks = params.hooks.mapped(|energy| -energy);
        let outcome = minimize_with(&moves, &SearchParams { hooks, ..params.clone() });
        self.report(&outcome.solution, SolveRun::of_moves(&outcome, |energy| -energy, params.seed))
            .with_bound(self.dantzig_bound())
    }

    /// Why `dp` cannot run here, if it cannot.
    fn dp_unavailable(&self) -> Option<String> {
        if self.capacity.len() != 1 {
            return Some("dp needs a single capacity dimension".into());
        }
        let integral = |x: f64| x.fract() == 0.0;
        if !integral(self.capacity[0]) || !self.weights[0].iter().all(|&w| integral(w)) {
            return Some("dp needs integer weights and capacity".into());
        }
        let cells = (self.capacity[0] + 1.0) * self.num_items() as f64;
        (cells > MAX_DP_CELLS as f64)
            .then(|| format!("dp needs n (W + 1) <= {MAX_DP_CELLS} cells, this instance {cells}"))
    }

    /// The exact optimum by dynamic programming over the capacity (Bellman; one bit per cell
    /// remembers whether item i is taken at capacity c, for the reconstruction).
    pub fn dp(&self) -> Result<Vec<bool>, String> {
        if let Some(reason) = self.dp_unavailable() {
            return Err(reason);
        }
        let n = self.num_items();
        let cap = self.capacity[0] as usize;
        let mut best = vec![0.0f64; cap + 1];
        let mut take = vec![0u64; (n * (cap + 1)).div_ceil(64)];
        for i in 0..n {
            let w = self.weights[0][i] as usize;
            for c in (w..=cap).rev() {
                let with = best[c - w] + self.values[i];
                if with > best[c] {
                    best[c] = with;
                    let bit = i * (cap + 1) + c;
                    take[bit / 64] |= 1 << (bit % 64);
                }
            }
        }
        let mut x = vec![false; n];
        let mut c = cap;
        for i in (0..n).rev() {
            let bit = i * (cap + 1) + c;
            if take[bit / 64] >> (bit % 64) & 1 == 1 {
                x[i] = true;
                c -= self.weights[0][i] as usize;
            }
        }
        Ok(x)
    }

    /// `{items, weight}`: item ids in the input's numbering, the load per dimension.
    fn solution(&self, x: &[bool]) -> Value {
        let items: Vec<usize> = x.iter().enumerate().filter(|(_, &on)| on).map(|(i, _)| i + self.base).collect();
        let used: Vec<f64> =
            self.weights.iter().map(|w| w.iter().zip(x).filter(|(_, &on)| on).map(|(w, _)| w).sum()).collect();
        json!({"items": items, "weight": used})
    }

    fn report(&self, x: &[bool], run: SolveRun) -> SolveReport {
        let value = self.value(x);
        SolveReport::new("knapsack", value, -value, self.solution(x), run)
    }
}

/// One chain: a feasible selection, its load per dimension, and the best seen.
#[derive(Clone)]
pub struct PackChain {
    x: Vec<bool>,
    used: Vec<f64>,
    value: f64,
    chosen: Vec<usize>,
    best: Vec<bool>,
    best_value: f64,
    /// Annealing progress within the chain's current cycle, in moves.
    moves: u64,
}

/// Knapsack moves in the engine's chain loop.
struct PackMoves<'a> {
    instance: &'a KnapsackInstance,
    /// Hot and cold temperatures of one annealing cycle (in value units) and its length in moves.
    hot: f64,
    cold: f64,
    cycle: u64,
}

impl PackMoves<'_> {
    fn fits_with(&self, chain: &PackChain, add: usize, drop: Option<usize>) -> bool {
        let k = self.instance;
        (0..k.capacity.len()).all(|d| {
            let freed = drop.map_or(0.0, |j| k.weights[d][j]);
            chain.used[d] - freed + k.weights[d][add] <= k.capacity[d]
        })
    }

    fn set(&self, chain: &mut PackChain, i: usize, on: bool) {
        let k = self.instance;
        chain.x[i] = on;
        let sign = if on { 1.0 } else { -1.0 };
        (0..k.capacity.len()).for_each(|d| chain.used[d] += sign * k.weights[d][i]);
        chain.value += sign * k.values[i];
        if on {
            chain.chosen.push(i);
        } else if let Some(at) = chain.chosen.iter().position(|&j| j == i) {
            chain.chosen.swap_remove(at);
        }
    }
}

impl MoveSet for PackMoves<'_> {
    type Chain = PackChain;
    type Solution = Vec<bool>;

    fn num_variables(&self) -> usize {
        self.instance.num_items()
    }

    /// A tenth of an annealing cycle.
    fn moves_per_round(&self) -> usize {
        (self.cycle / 10).max(1) as usize
    }

    /// Four annealing cycles.
    fn min_patience_rounds(&self) -> usize {
        40
    }

    /// Starts from the ratio greedy packing: every chain then anneals away from it.
    fn start(&self, _chain: usize, _rng: &mut Xoshiro256PlusPlus) -> PackChain {
        let x = self.instance.greedy();
        let used = self
            .instance
            .weights
            .iter()
            .map(|w| w.iter().zip(&x).filter(|(_, &on)| on).map(|(w, _)| w).sum())
            .collect();
        let value = self.instance.value(&x);
        let chosen = (0..x.len()).filter(|&i| x[i]).collect();
        PackChain { best: x.clone(), best_value: value, x, used, value, chosen, moves: 0 }
    }

    fn advance(&self, chain: &mut PackChain, moves: usize, rng: &mut Xoshiro256PlusPlus) {
        let n = self.instance.num_items();
        for _ in 0..moves {
            let temperature = cycle_temperature(chain.moves, self.cycle, self.hot, self.cold);
            chain.moves += 1;
            let i = rng.gen_range(0..n);
            let accept =
                |loss: f64, rng: &mut Xoshiro256PlusPlus| loss <= 0.0 || rng.gen::<f64>() < (-loss / temperature).exp();
            if chain.x[i] {
                if accept(self.instance.values[i], rng) {
                    self.set(chain, i, false);
                }
            } else if self.fits_with(chain, i, None) {
                self.set(chain, i, true);
            } else if !chain.chosen.is_empty() {
                let j = chain.chosen[rng.gen_range(0..chain.chosen.len())];
                if self.fits_with(chain, i, Some(j)) && accept(self.instance.values[j] - self.instance.values[i], rng) {
                    self.set(chain, j, false);
                    self.set(chain, i, true);
                }
            }
            if chain.value > chain.best_value {
                chain.best_value = chain.value;
                chain.best.copy_from_slice(&chain.x);
            }
        }
    }

    fn best(&self, chain: &PackChain) -> (Vec<bool>, f64) {
        (chain.best.clone(), -chain.best_value)
    }
}

impl KnapsackInstance {
    const BASELINES: &'static [Baseline<Self>] = &[
        Baseline {
            name: "dp",
            run: |k, params, _| {
                k.once(params, || Ok((k.dp().map_err(|r| ProblemError::invalid("method", r))?, StopReason::Optimal)))
            },
        },
        Baseline { name: "greedy", run: |k, params, _| k.once(params, || Ok((k.greedy(), StopReason::Converged))) },
        Baseline { name: "moves", run: |k, params, _| Ok(k.search(params)) },
        Baseline {
            name: "ising",
            run: |k, params, models| penalty_baseline(ising::SlackKnapsack::new(k), params, models),
        },
    ];

    /// A baseline that runs once: its selection and why it stopped, timed.
    fn once(
        &self,
        params: &SearchParams,
        run: impl FnOnce() -> Result<(Vec<bool>, StopReason), ProblemError>,
    ) -> Solved {
        let start = Instant::now();
        let (x, status) = run()?;
        let elapsed = start.elapsed();
        let value = self.value(&x);
        let bound = if status == StopReason::Optimal { value } else { self.dantzig_bound() };
        Ok(self.report(&x, SolveRun::once(status, elapsed, elapsed, value, params.seed)).with_bound(bound))
    }
}

impl Instance for KnapsackInstance {
    fn solve(&self, params: &SearchParams, _: Models<'_>) -> SolveReport {
        self.exact(params).unwrap_or_else(|| self.search(params))
    }

    fn solve_baseline(&self, name: &str, params: &SearchParams, models: Models<'_>) -> Solved {
        super::run_baseline(Self::BASELINES, self, name, params, models)
    }

    fn target_energy(&self, objective: f64) -> f64 {
        -objective
    }

    fn size_summary(&self) -> String {
        format!("items={} dimensions={}", self.num_items(), self.capacity.len())
    }
}

fn check(
    values: Vec<f64>,
    weights: Vec<Vec<f64>>,
    capacity: Vec<f64>,
    base: usize,
    fields: [&str; 3],
    limits: &Limits,
) -> Result<KnapsackInstance, ProblemError> {
    let [value_field, weight_field, capacity_field] = fields;
    let n = values.len();
    if n == 0 {
        return Err(ProblemError::invalid(value_field, "the instance needs at least one item"));
    }
    if n > limits.max_nodes {
        return Err(ProblemError::too_large(
            value_field,
            format!("{n} items exceed this server's limit of {}", limits.max_nodes),
        ));
    }
    if capacity.is_empty() || capacity.len() > MAX_DIMENSIONS {
        return Err(ProblemError::invalid(
            capacity_field,
            format!("between 1 and {MAX_DIMENSIONS} capacity dimensions"),
        ));
    }
    if let Some(i) = values.iter().position(|v| !v.is_finite() || *v < 0.0) {
        return Err(ProblemError::invalid(
            value_field,
            format!("value of item {} must be a non-negative finite number", i + base),
        ));
    }
    if weights.len() != capacity.len() {
        return Err(ProblemError::invalid(
            weight_field,
            format!("{} weight rows for {} capacities", weights.len(), capacity.len()),
        ));
    }
    for row in &weights {
        if row.len() != n {
            return Err(ProblemError::invalid(weight_field, format!("{} weights for {n} items", row.len())));
        }
        if let Some(i) = row.iter().position(|w| !w.is_finite() || *w < 0.0) {
            return Err(ProblemError::invalid(
                weight_field,
                format!("weight of item {} must be a non-negative finite number", i + base),
            ));
        }
    }
    if let Some(c) = capacity.iter().find(|c| !c.is_finite() || **c < 0.0) {
        return Err(ProblemError::invalid(
            capacity_field,
            format!("capacity {c} must be a non-negative finite number"),
        ));
    }
    if !values.iter().sum::<f64>().is_finite() || weights.iter().any(|w| !w.iter().sum::<f64>().is_finite()) {
        return Err(ProblemError::invalid(
            value_field,
            "the values or weights sum past a 64-bit float: scale them down",
        ));
    }
    Ok(KnapsackInstance { values, weights, capacity, base })
}

/// Pisinger or mknap text, told apart by the first line's length (see the module doc).
pub fn parse_text(text: &str, limits: &Limits) -> Result<KnapsackInstance, ProblemError> {
    let mut tokens: Vec<(usize, &str)> = Vec::new();
    for (number, line) in text.lines().enumerate() {
        tokens.extend(line.split_whitespace().map(|t| (number + 1, t)));
    }
    let first_line_len = text.lines().find(|l| !l.trim().is_empty()).map_or(0, |l| l.split_whitespace().count());
    let mut next = {
        let mut k = 0;
        move |what: &str| -> Result<f64, ProblemError> {
            let (line, token) =
                *tokens.get(k).ok_or_else(|| ProblemError::invalid("body", format!("the file ends before {what}")))?;
            k += 1;
            token
                .parse::<f64>()
                .map_err(|_| ProblemError::invalid(format!("line {line}"), format!("{what} '{token}' is not a number")))
        }
    };
    let count = |x: f64, what: &str| -> Result<usize, ProblemError> {
        if x.fract() != 0.0 || x < 0.0 {
            return Err(ProblemError::invalid("line 1", format!("{what} {x} is not a non-negative integer")));
        }
        Ok(x as usize)
    };
    match first_line_len {
        2 => {
            let n = count(next("the number of items")?, "the number of items")?;
            if n > limits.max_nodes {
                return Err(ProblemError::too_large(
                    "line 1",
                    format!("{n} items exceed this server's limit of {}", limits.max_nodes),
                ));
            }
            let capacity = next("the capacity")?;
            let (mut values, mut weights) = (Vec::with_capacity(n), Vec::with_capacity(n));
            for i in 1..=n {
                values.push(next(&format!("the value of item {i}"))?);
                weights.push(next(&format!("the weight of item {i}"))?);
            }
            check(values, vec![weights], vec![capacity], 1, ["values", "weights", "capacity"], limits)
        }
        3 => {
            let n = count(next("the number of items")?, "the number of items")?;
            let m = count(next("the number of dimensions")?, "the number of dimensions")?;
            if n > limits.max_nodes || m > MAX_DIMENSIONS {
                return Err(ProblemError::too_large(
                    "line 1",
                    format!("at most {} items and {MAX_DIMENSIONS} dimensions", limits.max_nodes),
                ));
            }
            let _optimum = next("the optimum")?;
            let values = (1..=n).map(|i| next(&format!("the value of item {i}"))).collect::<Result<Vec<_>, _>>()?;
            let mut weights = Vec::with_capacity(m);
            for d in 1..=m {
                weights.push((1..=n).map(|i| next(&format!("weight {d} of item {i}"))).collect::<Result<Vec<_>, _>>()?);
            }
            let capacity = (1..=m).map(|d| next(&format!("capacity {d}"))).collect::<Result<Vec<_>, _>>()?;
            check(values, weights, capacity, 1, ["values", "weights", "capacity"], limits)
        }
        1 => Err(ProblemError::invalid(
            "line 1",
            "an mknap file of several problems: send one problem (`n m optimum` first)",
        )),
        _ => Err(ProblemError::invalid("line 1", "expected `n W` (Pisinger) or `n m optimum` (OR-Library mknap)")),
    }
}

fn numbers(value: &Value, field: &str) -> Result<Vec<f64>, ProblemError> {
    let list = value.as_array().ok_or_else(|| ProblemError::invalid(field, "must be an array of numbers"))?;
    list.iter()
        .enumerate()
        .map(|(i, v)| v.as_f64().ok_or_else(|| ProblemError::invalid(format!("{field}[{i}]"), "must be a number")))
        .collect()
}

pub fn parse_json(value: &Value, limits: &Limits) -> Result<KnapsackInstance, ProblemError> {
    let object = value.as_object().ok_or_else(|| ProblemError::invalid("instance", "expected a JSON object"))?;
    if let Some(unknown) = object.keys().find(|k| !["values", "weights", "capacity"].contains(&k.as_str())) {
        return Err(ProblemError::invalid(unknown.as_str(), "unknown field; expected values, weights, capacity"));
    }
    let get = |field: &str| object.get(field).ok_or_else(|| ProblemError::invalid(field, "missing"));
    let values = numbers(get("values")?, "values")?;
    let weights = match get("weights")? {
        Value::Array(rows) if rows.first().is_some_and(Value::is_array) => rows
            .iter()
            .enumerate()
            .map(|(d, row)| numbers(row, &format!("weights[{d}]")))
            .collect::<Result<Vec<_>, _>>()?,
        other => vec![numbers(other, "weights")?],
    };
    let capacity = match get("capacity")? {
        Value::Array(_) => numbers(get("capacity")?, "capacity")?,
        other => vec![other
            .as_f64()
            .ok_or_else(|| ProblemError::invalid("capacity", "must be a number or an array of numbers"))?],
    };
    check(values, weights, capacity, 0, ["values", "weights", "capacity"], limits)
}

/// The registry row.
pub struct Knapsack;

impl ProblemCode for Knapsack {
    /// Pisinger's text: `nodes` items of class `class` with coefficients up to `range`.
    fn generate(&self, spec: &super::GenerateSpec) -> Option<Result<String, String>> {
        Some(generate::generate(spec.nodes, spec.class, spec.range, spec.seed))
    }

    fn instance_schema(&self) -> Value {
        json!({
            "type": "object",
            "required": ["values", "weights", "capacity"],
            "properties": {
                "values": {"type": "array", "items": {"type": "number", "minimum": 0}},
                "weights": {"description": "one weight per item, or one such list per capacity dimension",
                    "anyOf": [{"type": "array", "items": {"type": "number", "minimum": 0}},
                        {"type": "array", "items": {"type": "array", "items": {"type": "number", "minimum": 0}}}]},
                "capacity": {"description": "a number, or one per dimension",
                    "anyOf": [{"type": "number", "minimum": 0}, {"type": "array", "items": {"type": "number", "minimum": 0}}]}
            }
        })
    }

    fn load(&self, input: ProblemInput<'_>, limits: &Limits) -> Result<Box<dyn Instance>, ProblemError> {
        Ok(Box::new(match input {
            ProblemInput::Json(value) => parse_json(value, limits)?,
            ProblemInput::Text(text) => parse_text(text, limits)?,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dp_matches_enumeration_and_the_search_stays_feasible() {
        let mut rng = <Xoshiro256PlusPlus as rand::SeedableRng>::seed_from_u64(4);
        for _ in 0..5 {
            let n = 14;
            let values: Vec<f64> = (0..n).map(|_| rng.gen_range(1..50) as f64).collect();
            let weights: Vec<f64> = (0..n).map(|_| rng.gen_range(1..40) as f64).collect();
            let capacity = weights.iter().sum::<f64>() / 3.0;
            let k =
                check(values, vec![weights], vec![capacity.floor()], 0, ["v", "w", "c"], &Limits::default()).unwrap();
            let best = (0..1u32 << n)
                .map(|m| (0..n).map(|i| m >> i & 1 == 1).collect::<Vec<bool>>())
                .filter(|x| k.fits(x))
                .map(|x| k.value(&x))
                .fold(0.0, f64::max);
            let dp = k.dp().unwrap();
            assert!(k.fits(&dp));
            assert_eq!(k.value(&dp), best);
            let params = SearchParams { max_rounds: Some(3), time_limit_s: 5.0, ..SearchParams::default() };
            let registry = crate::models::ModelRegistry::empty(crate::problems::policy_loaders);
            let report = k.solve(&params, Models { registry: &registry, requested: None });
            let items: Vec<usize> = serde_json::from_value(report.solution["items"].clone()).unwrap();
            let x: Vec<bool> = (0..n).map(|i| items.contains(&i)).collect();
            assert!(k.fits(&x));
            assert_eq!(report.objective, k.value(&x));
            assert_eq!(report.objective, best);
        }
    }
}
