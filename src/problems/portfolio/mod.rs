//! Mean-variance portfolios, with Chang et al.'s cardinality constraint (CCMV): for lambda in
//! [0, 1], minimise lambda w'Sw - (1 - lambda) mu'w subject to sum(w) = 1, 0 <= w <= delta and,
//! with `cardinality` K, exactly K assets held, each with eps_i <= w_i <= delta_i (T.-J. Chang,
//! N. Meade, J.E. Beasley, Y.M. Sharaiha, "Heuristics for cardinality constrained portfolio
//! optimisation", Computers & Operations Research 27 (2000) 1271-1302; K = 10, eps = 0.01,
//! delta = 1 in the literature). Without a cardinality, `min_weight` is a floor on every asset.
//!
//! Goals: one `lambda`; a `target_return` (minimise the variance subject to mu'w >= r); a
//! `risk_budget` (maximise the return subject to w'Sw <= v); or `points` E, the frontier at
//! lambda_e = e / (E - 1), e = 0..E-1, as in Chang et al. (the default, E = 50). Sector caps:
//! `sectors`, each a set of assets whose total weight is at most `max`. Transaction costs:
//! `cost_budget` B with `transaction_cost` c (one rate or one per asset) against
//! `current_weights` w0 (default: all cash) keeps sum_i c_i |w_i - w0_i| <= B.
//!
//! Inputs: JSON (`mu` with `cov`, or `std` with `corr`; or `port`, the text of an OR-Library
//! file) and the OR-Library `port` text itself (N; N lines `mean sd`; lines `i j corr`), which
//! solves its unconstrained 50-point frontier.
//!
//! The continuous part (the weights of a held set) is an exact convex program (`qp.rs`,
//! Clarabel). The combinatorial part (which K assets) is the engine's parallel chains over
//! subsets with swap moves (`search.rs`), each subset scored by its QP optimum (cached), warm
//! started along the frontier, guided by the engine's learned proposal policy; `branch_bound.rs`
//! proves optimality on small N. Baselines: `unconstrained` (the exact frontier without
//! cardinality or floors), `greedy` (drop the smallest weight, re-solve; `greedy.rs`), `ga`
//! (Chang et al.'s genetic algorithm, `ga.rs`) and `branch-and-bound`.
//!
//! Frontier quality is Chang et al.'s mean percentage error against the unconstrained efficient
//! frontier (UEF; `frontier.rs` has the definition and formula), the report's objective in
//! frontier mode (points past `time_limit_s` are left out, from lambda = 0 up); the UEF is the request's `frontier` (points `[return, variance]`) when given,
//! else traced here at 200 returns; when that takes over a quarter of `time_limit_s`, the error
//! is left out and the objective is the points' mean objective.

pub mod branch_bound;
pub mod frontier;
pub mod ga;
pub mod greedy;
pub mod qp;
pub mod search;

use super::{HistoryPoint, Instance, Limits, Models, ProblemCode, ProblemError, ProblemInput, SolveReport};
use crate::problems::Solved;
use crate::search::{SearchParams, StopReason};
use ndarray::Array2;
use qp::Allocation;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// The portfolio limits (flags of `serve` and `solve`).
#[derive(Debug, Clone, serde::Serialize, clap::Args)]
pub struct PortfolioLimits {
    /// Largest portfolio, in assets (`portfolio`; its covariance check is O(N^3)).
    #[arg(long, env = "RLSOLVER_MAX_ASSETS", default_value_t = PortfolioLimits::default().max_assets)]
    pub max_assets: usize,
}

impl Default for PortfolioLimits {
    fn default() -> Self {
        PortfolioLimits { max_assets: 1_000 }
    }
}

/// What one solve optimises.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Goal {
    /// Minimise lambda * variance - (1 - lambda) * return.
    Tradeoff(f64),
    /// Minimise the variance subject to a return of at least this.
    TargetReturn(f64),
    /// Maximise the return subject to a variance of at most this.
    RiskBudget(f64),
}

/// One goal, or the lambda frontier.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mode {
    Single(Goal),
    /// E points at lambda = e / (E - 1).
    Frontier(usize),
}

/// A set of assets whose total weight is capped.
#[derive(Debug, Clone, PartialEq)]
pub struct SectorCap {
    pub assets: Vec<usize>,
    pub max: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Constraints {
    /// Exactly this many assets held (None: any number).
    pub cardinality: Option<usize>,
    /// Each asset's floor: of its weight when held (with a cardinality), of its weight (without).
    pub lower: Vec<f64>,
    /// Each asset's cap.
    pub upper: Vec<f64>,
    pub sectors: Vec<SectorCap>,
    /// A budget on the cost of trading from current weights.
    pub costs: Option<TransactionCosts>,
}

/// Proportional transaction costs against the current weights, with a budget:
/// sum_i rate_i |w_i - current_i| <= budget (an asset not held is sold off: rate_i current_i).
#[derive(Debug, Clone, PartialEq)]
pub struct TransactionCosts {
    pub current: Vec<f64>,
    pub rate: Vec<f64>,
    pub budget: f64,
}

impl TransactionCosts {
    /// The cost of moving from the current weights to `weights` on `assets` (ascending).
    pub fn cost(&self, assets: &[usize], weights: &[f64]) -> f64 {
        let mut total: f64 = (0..self.current.len()).map(|i| self.rate[i] * self.current[i]).sum();
        for (&i, &w) in assets.iter().zip(weights) {
            total += self.rate[i] * ((w - self.current[i]).abs() - self.current[i]);
        }
        total
    }
}

/// A validated instance.
#[derive(Debug, Clone)]
pub struct Portfolio {
    /// Expected return per asset.
    pub mu: Vec<f64>,
    /// Covariance, symmetric positive semidefinite.
    pub cov: Array2<f64>,
    /// F with S = F'F (rows: eigenvectors scaled by the root of their eigenvalue), for risk
    /// budgets.
    pub factor: Array2<f64>,
    pub constraints: Constraints,
    pub mode: Mode,
    /// The unconstrained frontier the error is measured against: (return, variance) points.
    pub reference: Option<Vec<(f64, f64)>>,
    /// Frontier mode: also report the non-dominated portfolios among all the search scored
    /// and their error (Chang et al. measure a heuristic's frontier so).
    pub nondominated: bool,
}

/// Points of the default frontier, as in Chang et al.
pub const DEFAULT_POINTS: usize = 50;
/// Most points a frontier request may ask for.
pub const MAX_POINTS: usize = 1000;
/// Returns at which the UEF is traced when a request gives none.
pub const TRACED_UEF_POINTS: usize = 200;

impl Portfolio {
    pub fn num_assets(&self) -> usize {
        self.mu.len()
    }

    /// The frontier's lambdas (one for a single tradeoff; none for the other goals).
    pub fn lambdas(points: usize) -> Vec<f64> {
        (0..points).map(|e| e as f64 / (points - 1) as f64).collect()
    }

    /// The best allocation for `goal`: exact without a cardinality, the search's with one.
    fn solve_goal(&self, goal: &Goal, params: &SearchParams, seeds: &[Vec<usize>]) -> search::GoalResult {
        match self.constraints.cardinality {
            None => {
                let all: Vec<usize> = (0..self.num_assets()).collect();
                search::GoalResult::exact(self.solve_held(&all, goal, true))
            }
            Some(k) => search::search_goal(self, goal, k, params, seeds),
        }
    }

    fn allocation_json(allocation: &Allocation) -> Value {
        json!({
            "assets": allocation.assets,
            "weights": allocation.weights,
            "return": allocation.expected_return,
            "variance": allocation.variance,
            "objective": allocation.objective,
        })
    }

    /// The frontier's points as JSON and their Chang error against `reference` (the UEF).
    fn frontier_report(&self, points: &[(f64, Allocation)], reference: Option<&[(f64, f64)]>) -> (Value, Option<f64>) {
        let list: Vec<Value> = points
            .iter()
            .map(|(lambda, a)| {
                let mut v = Self::allocation_json(a);
                v["lambda"] = json!(lambda);
                v
            })
            .collect();
        let error = reference.and_then(|uef| {
            let heuristic: Vec<(f64, f64)> = points.iter().map(|(_, a)| (a.expected_return, a.variance)).collect();
            frontier::mean_percentage_error(&heuristic, uef)
        });
        (json!(list), error)
    }

    /// The report of a solve that found `solution` (with its `objective`), ran as `run` says.
    fn report(
        &self,
        (solution, objective): (Value, f64),
        started: Instant,
        params: &SearchParams,
        run: search::GoalResult,
    ) -> SolveReport {
        let elapsed_ms = started.elapsed().as_secs_f64() * 1e3;
        let search::GoalResult { stop: status, chains, rounds, history, .. } = run;
        let history = if history.is_empty() { vec![HistoryPoint { elapsed_ms, objective }] } else { history };
        SolveReport {
            problem: "portfolio".into(),
            objective,
            energy: objective,
            solution,
            status,
            bound: None,
            gap: None,
            elapsed_ms,
            history,
            chains,
            rounds,
            device: "cpu".into(),
            seed: params.seed,
        }
    }

    /// Solves every goal of the mode with `solve_one` (a frontier: lambda by lambda, each warm
    /// started from the previous one's best subsets) and reports.
    fn run(
        &self,
        params: &SearchParams,
        started: Instant,
        mut solve_one: impl FnMut(&Goal, &SearchParams, &[Vec<usize>]) -> search::GoalResult,
    ) -> SolveReport {
        match self.mode {
            Mode::Single(goal) => {
                let result = solve_one(&goal, params, &[]);
                let (solution, objective) = match &result.best {
                    Some(a) => {
                        let mut v = Self::allocation_json(a);
                        v["feasible"] = json!(true);
                        (v, a.objective)
                    }
                    None => (json!({"feasible": false, "message": "no held set meets the constraints"}), 0.0),
                };
                self.report((solution, objective), started, params, result)
            }
            Mode::Frontier(points) => {
                let lambdas = Self::lambdas(points);
                let share = params.time_limit_s / lambdas.len() as f64;
                let mut seeds: Vec<Vec<usize>> = Vec::new();
                let mut found = Vec::new();
                let mut scored = Vec::new();
                let (mut rounds, mut chains, mut stop) = (0, 1, StopReason::Converged);
                // From lambda = 1 (least variance) down: neighbouring optima share most assets.
                for (e, &lambda) in lambdas.iter().enumerate().rev() {
                    let remaining = params.time_limit_s - started.elapsed().as_secs_f64();
                    // The time limit holds: the points not reached are left out (a large market's
                    // exact QPs can take longer than the share of each).
                    if e + 1 < lambdas.len() && (remaining <= 0.0 || params.hooks.cancelled()) {
                        stop = StopReason::TimeLimit;
                        break;
                    }
                    let per_point = SearchParams {
                        time_limit_s: share.max(remaining / (e + 1) as f64).max(1e-3),
                        seed: params.seed.wrapping_add(e as u64),
                        hooks: crate::search::hooks::SearchHooks {
                            cancel: params.hooks.cancel.clone(),
                            ..Default::default()
                        },
                        target_energy: None,
                        ..params.clone()
                    };
                    let result = solve_one(&Goal::Tradeoff(lambda), &per_point, &seeds);
                    rounds += result.rounds;
                    chains = result.chains;
                    if result.stop == StopReason::TimeLimit {
                        stop = StopReason::TimeLimit;
                    }
                    if let Some(best) = result.best {
                        found.push((lambda, best));
                    }
                    if self.nondominated {
                        scored = frontier::nondominated(scored.into_iter().chain(result.scored).collect());
                    }
                    seeds = result.elite;
                }
                found.reverse();
                // Tracing the UEF may take a quarter of the budget again, no more.
                let deadline = Instant::now() + Duration::from_secs_f64(0.25 * params.time_limit_s);
                let reference = self.reference.clone().or_else(|| frontier::trace(self, TRACED_UEF_POINTS, deadline));
                let (list, error) = self.frontier_report(&found, reference.as_deref());
                // Without an error (no UEF in time), the objective is the points' mean objective.
                let mean_objective = found.iter().map(|(_, a)| a.objective).sum::<f64>() / found.len().max(1) as f64;
                let objective = error.unwrap_or(mean_objective);
                let mut solution = json!({"frontier": list, "points": found.len()});
                if let Some(error) = error {
                    solution["mean_percentage_error"] = json!(error);
                }
                let allocations: Vec<Allocation> = found.iter().map(|(_, a)| a.clone()).collect();
                let efficient: Vec<(f64, f64)> =
                    frontier::efficient(&allocations).iter().map(|a| (a.expected_return, a.variance)).collect();
                solution["efficient_points"] = json!(efficient.len());
                if let Some(error) =
                    reference.as_deref().and_then(|uef| frontier::mean_percentage_error(&efficient, uef))
                {
                    solution["mean_percentage_error_efficient"] = json!(error);
                }
                if self.nondominated {
                    let points: Vec<(f64, f64)> = scored.iter().map(|a| (a.expected_return, a.variance)).collect();
                    solution["nondominated"] =
                        json!(scored.iter().map(|a| Self::allocation_json(a)).collect::<Vec<_>>());
                    if let Some(error) = reference.and_then(|uef| frontier::mean_percentage_error(&points, &uef)) {
                        solution["mean_percentage_error_nondominated"] = json!(error);
                    }
                }
                let run = search::GoalResult { stop, chains, rounds, ..search::GoalResult::exact(None) };
                self.report((solution, objective), started, params, run)
            }
        }
    }
}

impl Instance for Portfolio {
    fn solve(&self, params: &SearchParams, _models: Models<'_>) -> SolveReport {
        let started = Instant::now();
        self.run(params, started, |goal, p, seeds| self.solve_goal(goal, p, seeds))
    }

    fn solve_baseline(&self, name: &str, params: &SearchParams, _: Models<'_>) -> Solved {
        let started = Instant::now();
        let k = self.constraints.cardinality;
        let needs_k = |name: &str| ProblemError::invalid("method", format!("'{name}' needs a cardinality"));
        match name {
            "unconstrained" => {
                let relaxed = Portfolio {
                    constraints: Constraints {
                        cardinality: None,
                        lower: vec![0.0; self.num_assets()],
                        ..self.constraints.clone()
                    },
                    ..self.clone()
                };
                Ok(relaxed.run(params, started, |goal, p, seeds| relaxed.solve_goal(goal, p, seeds)))
            }
            "greedy" => {
                let k = k.ok_or_else(|| needs_k(name))?;
                let deadline = started + Duration::from_secs_f64(params.time_limit_s);
                Ok(self.run(params, started, |goal, _, _| {
                    search::GoalResult::exact(greedy::greedy(self, goal, k, Some(deadline)))
                }))
            }
            "ga" => {
                let k = k.ok_or_else(|| needs_k(name))?;
                let (Mode::Frontier(_) | Mode::Single(Goal::Tradeoff(_))) = self.mode else {
                    return Err(ProblemError::invalid("method", "'ga' solves lambda tradeoffs only"));
                };
                Ok(self.run(params, started, |goal, p, _| {
                    let Goal::Tradeoff(lambda) = *goal else { unreachable!("checked above") };
                    search::GoalResult::exact(ga::chang_ga(
                        self,
                        lambda,
                        k,
                        &ga::GaConfig::for_assets(self.num_assets()),
                        p.seed,
                    ))
                }))
            }
            "branch-and-bound" => {
                let k = k.ok_or_else(|| needs_k(name))?;
                let mut gaps = Vec::new();
                let mut report = self.run(params, started, |goal, p, _| {
                    let proof = branch_bound::solve(self, goal, k, None, Duration::from_secs_f64(p.time_limit_s));
                    gaps.push(proof.gap);
                    let stop = if proof.gap <= branch_bound::PROVEN_GAP {
                        StopReason::Converged
                    } else {
                        StopReason::TimeLimit
                    };
                    search::GoalResult { stop, rounds: proof.nodes, ..search::GoalResult::exact(proof.best) }
                });
                report.solution["gap"] = json!(gaps.iter().cloned().fold(0.0, f64::max));
                report.solution["proven"] = json!(gaps.iter().all(|&g| g <= branch_bound::PROVEN_GAP));
                Ok(report)
            }
            _ => Err(ProblemError::invalid("method", format!("unknown baseline '{name}'"))),
        }
    }

    fn size_summary(&self) -> String {
        format!(
            "assets={} cardinality={}",
            self.num_assets(),
            self.constraints.cardinality.map_or("none".to_string(), |k| k.to_string())
        )
    }
}

fn number(value: &Value, field: &str) -> Result<f64, ProblemError> {
    value.as_f64().filter(|v| v.is_finite()).ok_or_else(|| ProblemError::invalid(field, "must be a finite number"))
}

fn numbers(value: Option<&Value>, field: &str) -> Result<Vec<f64>, ProblemError> {
    let list =
        value.and_then(Value::as_array).ok_or_else(|| ProblemError::invalid(field, "expected a list of numbers"))?;
    list.iter().enumerate().map(|(i, v)| number(v, &format!("{field}[{i}]"))).collect()
}

fn matrix(value: Option<&Value>, field: &str, n: usize) -> Result<Array2<f64>, ProblemError> {
    let rows =
        value.and_then(Value::as_array).ok_or_else(|| ProblemError::invalid(field, "expected a list of rows"))?;
    if rows.len() != n {
        return Err(ProblemError::invalid(field, format!("has {} rows, expected {n} (one per asset)", rows.len())));
    }
    let mut m = Array2::zeros((n, n));
    for (i, row) in rows.iter().enumerate() {
        let row = numbers(Some(row), &format!("{field}[{i}]"))?;
        if row.len() != n {
            return Err(ProblemError::invalid(
                format!("{field}[{i}]"),
                format!("has {} entries, expected {n}", row.len()),
            ));
        }
        for (j, v) in row.into_iter().enumerate() {
            m[[i, j]] = v;
        }
    }
    Ok(m)
}

/// A per-asset bound: one number for all, or a list.
fn bound(value: Option<&Value>, field: &str, n: usize, default: f64) -> Result<Vec<f64>, ProblemError> {
    let values = match value {
        None | Some(Value::Null) => vec![default; n],
        Some(Value::Array(_)) => {
            let v = numbers(value, field)?;
            if v.len() != n {
                return Err(ProblemError::invalid(
                    field,
                    format!("has {} entries, expected {n} (one per asset)", v.len()),
                ));
            }
            v
        }
        Some(v) => vec![number(v, field)?; n],
    };
    if let Some(i) = values.iter().position(|&b| !(0.0..=1.0).contains(&b)) {
        return Err(ProblemError::invalid(field, format!("{} (asset {i}) is outside [0, 1]", values[i])));
    }
    Ok(values)
}

/// The OR-Library `port` text: N, N lines `mean sd`, then `i j corr` (1-based, i <= j).
pub fn parse_port(text: &str, limits: &Limits) -> Result<(Vec<f64>, Array2<f64>), ProblemError> {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let mut at = 0usize;
    let mut next = |what: &str| -> Result<f64, ProblemError> {
        let token = tokens.get(at).ok_or_else(|| ProblemError::invalid("instance", format!("ends before {what}")))?;
        at += 1;
        token
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| ProblemError::invalid("instance", format!("'{token}' ({what}) is not a finite number")))
    };
    let n = next("the number of assets")?;
    if n < 1.0 || n.fract() != 0.0 || n > 1e6 {
        return Err(ProblemError::invalid("instance", format!("the number of assets {n} must be a positive integer")));
    }
    let n = n as usize;
    if n > limits.portfolio.max_assets {
        return Err(ProblemError::too_large(
            "instance",
            format!("{n} assets exceed this server's limit of {}", limits.portfolio.max_assets),
        ));
    }
    let (mut mu, mut sd) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for i in 0..n {
        mu.push(next(&format!("asset {}'s mean", i + 1))?);
        let s = next(&format!("asset {}'s standard deviation", i + 1))?;
        if s < 0.0 {
            return Err(ProblemError::invalid(
                "instance",
                format!("asset {}'s standard deviation {s} is negative", i + 1),
            ));
        }
        sd.push(s);
    }
    let mut corr = Array2::<f64>::eye(n);
    let mut given = Array2::<bool>::from_elem((n, n), false);
    let correlations = tokens.len() - 1 - 2 * n;
    if !correlations.is_multiple_of(3) {
        return Err(ProblemError::invalid("instance", "the correlation lines must each be 'i j correlation'"));
    }
    for _ in 0..correlations / 3 {
        let i = next("a correlation line")?;
        let j = next("a correlation's second asset")?;
        let c = next("a correlation's value")?;
        let index = |v: f64| (v >= 1.0 && v.fract() == 0.0 && v <= n as f64).then(|| v as usize - 1);
        let (Some(a), Some(b)) = (index(i), index(j)) else {
            return Err(ProblemError::invalid(
                "instance",
                format!("correlation line '{i} {j} {c}' names an asset outside 1..{n}"),
            ));
        };
        if !(-1.0 - 1e-9..=1.0 + 1e-9).contains(&c) {
            return Err(ProblemError::invalid(
                "instance",
                format!("correlation line '{i} {j} {c}' is outside [-1, 1]"),
            ));
        }
        corr[[a, b]] = c;
        corr[[b, a]] = c;
        given[[a, b]] = true;
        given[[b, a]] = true;
    }
    if let Some((a, b)) = (0..n).flat_map(|a| (a + 1..n).map(move |b| (a, b))).find(|&(a, b)| !given[[a, b]]) {
        return Err(ProblemError::invalid(
            "instance",
            format!("no correlation line for assets {} and {}", a + 1, b + 1),
        ));
    }
    let cov = Array2::from_shape_fn((n, n), |(i, j)| corr[[i, j]] * sd[i] * sd[j]);
    Ok((mu, cov))
}

/// Checks symmetry and positive semidefiniteness (relative tolerance 1e-9 on the largest
/// eigenvalue) and returns the factor F with S = F'F.
fn psd_factor(cov: &Array2<f64>, field: &str) -> Result<Array2<f64>, ProblemError> {
    let n = cov.nrows();
    let scale = cov.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(f64::MIN_POSITIVE);
    for i in 0..n {
        for j in 0..i {
            if (cov[[i, j]] - cov[[j, i]]).abs() > 1e-9 * scale {
                return Err(ProblemError::invalid(field, format!("is not symmetric: [{i}][{j}] != [{j}][{i}]")));
            }
        }
    }
    let m = nalgebra::DMatrix::from_fn(n, n, |i, j| 0.5 * (cov[[i, j]] + cov[[j, i]]));
    let eigen = m.symmetric_eigen();
    let largest = eigen.eigenvalues.iter().fold(0.0f64, |a, &v| a.max(v.abs()));
    let smallest = eigen.eigenvalues.iter().fold(f64::INFINITY, |a, &v| a.min(v));
    if smallest < -1e-9 * largest.max(f64::MIN_POSITIVE) {
        return Err(ProblemError::invalid(
            field,
            format!("is not positive semidefinite: its smallest eigenvalue is {smallest:e} (largest {largest:e})"),
        ));
    }
    Ok(Array2::from_shape_fn((n, n), |(r, i)| eigen.eigenvalues[r].max(0.0).sqrt() * eigen.eigenvectors[(i, r)]))
}

/// A portfolio from JSON (see the module doc).
pub fn parse_json(value: &Value, limits: &Limits) -> Result<Portfolio, ProblemError> {
    let object = value.as_object().ok_or_else(|| ProblemError::invalid("instance", "expected a JSON object"))?;
    let (mu, cov, cov_field) = if let Some(text) = object.get("port") {
        let text = text.as_str().ok_or_else(|| ProblemError::invalid("port", "expected the OR-Library file's text"))?;
        let (mu, cov) = parse_port(text, limits).map_err(|e| e.within("port"))?;
        (mu, cov, "port")
    } else {
        let mu = numbers(object.get("mu"), "mu")?;
        let n = mu.len();
        if n > limits.portfolio.max_assets {
            return Err(ProblemError::too_large(
                "mu",
                format!("{n} assets exceed this server's limit of {}", limits.portfolio.max_assets),
            ));
        }
        if object.contains_key("cov") {
            (mu, matrix(object.get("cov"), "cov", n)?, "cov")
        } else if object.contains_key("std") {
            let sd = numbers(object.get("std"), "std")?;
            if sd.len() != n {
                return Err(ProblemError::invalid("std", format!("has {} entries, expected {n}", sd.len())));
            }
            if let Some(i) = sd.iter().position(|&s| s < 0.0) {
                return Err(ProblemError::invalid(format!("std[{i}]"), "must not be negative"));
            }
            let corr = matrix(object.get("corr"), "corr", n)?;
            (mu, Array2::from_shape_fn((n, n), |(i, j)| corr[[i, j]] * sd[i] * sd[j]), "corr")
        } else {
            return Err(ProblemError::invalid("cov", "give the covariance `cov`, or `std` and `corr`"));
        }
    };
    build(mu, cov, cov_field, object, limits)
}

fn build(
    mu: Vec<f64>,
    cov: Array2<f64>,
    cov_field: &str,
    object: &serde_json::Map<String, Value>,
    limits: &Limits,
) -> Result<Portfolio, ProblemError> {
    let n = mu.len();
    if n == 0 {
        return Err(ProblemError::invalid("mu", "needs at least one asset"));
    }
    if n > limits.portfolio.max_assets {
        return Err(ProblemError::too_large(
            cov_field,
            format!("{n} assets exceed this server's limit of {}", limits.portfolio.max_assets),
        ));
    }
    let factor = psd_factor(&cov, cov_field)?;
    let cardinality = match object.get("cardinality") {
        None | Some(Value::Null) => None,
        Some(v) => {
            let k = v
                .as_u64()
                .filter(|&k| k >= 1)
                .ok_or_else(|| ProblemError::invalid("cardinality", "must be a positive integer"))?;
            if k as usize > n {
                return Err(ProblemError::invalid("cardinality", format!("{k} exceeds the {n} assets")));
            }
            Some(k as usize)
        }
    };
    let lower = bound(object.get("min_weight"), "min_weight", n, 0.0)?;
    let upper = bound(object.get("max_weight"), "max_weight", n, 1.0)?;
    if let Some(i) = (0..n).find(|&i| lower[i] > upper[i]) {
        return Err(ProblemError::invalid(
            "min_weight",
            format!("asset {i}'s floor {} exceeds its cap {}", lower[i], upper[i]),
        ));
    }
    let mut sorted_lower = lower.clone();
    sorted_lower.sort_by(f64::total_cmp);
    let mut sorted_upper = upper.clone();
    sorted_upper.sort_by(|a, b| b.total_cmp(a));
    let held = cardinality.unwrap_or(n);
    let least: f64 = sorted_lower[..held].iter().sum();
    if least > 1.0 + 1e-12 {
        return Err(ProblemError::invalid(
            "min_weight",
            format!("{held} held assets need at least {least} > 1 in total"),
        ));
    }
    let most: f64 = sorted_upper[..held].iter().sum();
    if most < 1.0 - 1e-12 {
        return Err(ProblemError::invalid(
            "max_weight",
            format!("{held} held assets can hold at most {most} < 1 in total"),
        ));
    }
    let mut sectors = Vec::new();
    if let Some(list) = object.get("sectors") {
        let list =
            list.as_array().ok_or_else(|| ProblemError::invalid("sectors", "expected a list of {assets, max}"))?;
        for (s, sector) in list.iter().enumerate() {
            let field = format!("sectors[{s}]");
            let assets = sector
                .get("assets")
                .and_then(Value::as_array)
                .ok_or_else(|| ProblemError::invalid(format!("{field}.assets"), "expected a list of asset indices"))?;
            let assets: Vec<usize> = assets
                .iter()
                .map(|a| a.as_u64().map(|a| a as usize).filter(|&a| a < n))
                .collect::<Option<_>>()
                .ok_or_else(|| {
                    ProblemError::invalid(format!("{field}.assets"), format!("indices must be in 0..{n}"))
                })?;
            let max = number(sector.get("max").unwrap_or(&Value::Null), &format!("{field}.max"))?;
            if max < 0.0 {
                return Err(ProblemError::invalid(format!("{field}.max"), "must not be negative"));
            }
            sectors.push(SectorCap { assets, max });
        }
    }
    let costs = match object.get("cost_budget") {
        None | Some(Value::Null) => {
            if let Some(key) = ["current_weights", "transaction_cost"].into_iter().find(|k| object.contains_key(*k)) {
                return Err(ProblemError::invalid(key, "needs a cost_budget"));
            }
            None
        }
        Some(budget) => {
            let budget = number(budget, "cost_budget")?;
            if budget < 0.0 {
                return Err(ProblemError::invalid("cost_budget", "must not be negative"));
            }
            let current = match object.get("current_weights") {
                None | Some(Value::Null) => vec![0.0; n],
                value => {
                    let current = numbers(value, "current_weights")?;
                    if current.len() != n {
                        return Err(ProblemError::invalid(
                            "current_weights",
                            format!("has {} entries, expected {n}", current.len()),
                        ));
                    }
                    if current.iter().any(|&w| w < 0.0) || current.iter().sum::<f64>() > 1.0 + 1e-9 {
                        return Err(ProblemError::invalid(
                            "current_weights",
                            "must be non-negative and sum to at most 1",
                        ));
                    }
                    current
                }
            };
            let rate = match object.get("transaction_cost") {
                None | Some(Value::Null) => {
                    return Err(ProblemError::invalid(
                        "transaction_cost",
                        "a cost_budget needs the cost per unit traded",
                    ))
                }
                Some(Value::Array(_)) => numbers(object.get("transaction_cost"), "transaction_cost")?,
                Some(v) => vec![number(v, "transaction_cost")?; n],
            };
            if rate.len() != n || rate.iter().any(|&c| c < 0.0) {
                return Err(ProblemError::invalid(
                    "transaction_cost",
                    format!("must be one non-negative number or {n} of them"),
                ));
            }
            Some(TransactionCosts { current, rate, budget })
        }
    };
    let goals: Vec<&str> = ["lambda", "points", "target_return", "risk_budget"]
        .into_iter()
        .filter(|k| object.get(*k).is_some_and(|v| !v.is_null()))
        .collect();
    if goals.len() > 1 {
        return Err(ProblemError::invalid(
            goals[1],
            format!("give one of lambda, points, target_return, risk_budget, not both {} and {}", goals[0], goals[1]),
        ));
    }
    let mode = match goals.first().copied() {
        None => Mode::Frontier(DEFAULT_POINTS),
        Some("lambda") => {
            let l = number(&object["lambda"], "lambda")?;
            if !(0.0..=1.0).contains(&l) {
                return Err(ProblemError::invalid("lambda", "must be in [0, 1]"));
            }
            Mode::Single(Goal::Tradeoff(l))
        }
        Some("points") => {
            let e = object["points"].as_u64().filter(|&e| (2..=MAX_POINTS as u64).contains(&e));
            Mode::Frontier(
                e.ok_or_else(|| ProblemError::invalid("points", format!("must be an integer in 2..={MAX_POINTS}")))?
                    as usize,
            )
        }
        Some("target_return") => {
            let r = number(&object["target_return"], "target_return")?;
            let best = mu.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            if r > best {
                return Err(ProblemError::invalid(
                    "target_return",
                    format!("{r} exceeds the largest expected return {best}"),
                ));
            }
            Mode::Single(Goal::TargetReturn(r))
        }
        Some(_) => {
            let v = number(&object["risk_budget"], "risk_budget")?;
            if v < 0.0 {
                return Err(ProblemError::invalid("risk_budget", "must not be negative"));
            }
            Mode::Single(Goal::RiskBudget(v))
        }
    };
    let reference = match object.get("frontier") {
        None | Some(Value::Null) => None,
        Some(v) => {
            let points = v
                .as_array()
                .ok_or_else(|| ProblemError::invalid("frontier", "expected a list of [return, variance]"))?;
            let parsed: Option<Vec<(f64, f64)>> = points
                .iter()
                .map(|p| {
                    let p = p.as_array().filter(|p| p.len() == 2)?;
                    Some((
                        p[0].as_f64().filter(|v| v.is_finite())?,
                        p[1].as_f64().filter(|v| v.is_finite() && *v >= 0.0)?,
                    ))
                })
                .collect();
            let parsed = parsed
                .ok_or_else(|| ProblemError::invalid("frontier", "each point must be [return, variance >= 0]"))?;
            if parsed.len() < 2 {
                return Err(ProblemError::invalid("frontier", "needs at least two points"));
            }
            Some(parsed)
        }
    };
    let nondominated = match object.get("nondominated") {
        None | Some(Value::Null) => false,
        Some(v) => v.as_bool().ok_or_else(|| ProblemError::invalid("nondominated", "expected true or false"))?,
    };
    if nondominated && !matches!(mode, Mode::Frontier(_)) {
        return Err(ProblemError::invalid("nondominated", "applies to a frontier (points), not to a single goal"));
    }
    let portfolio = Portfolio {
        mu,
        cov,
        factor,
        constraints: Constraints { cardinality, lower, upper, sectors, costs },
        mode,
        reference,
        nondominated,
    };
    if let Mode::Single(Goal::RiskBudget(v)) = mode {
        let least = frontier::minimum_variance(&portfolio).map(|a| a.variance);
        if least.is_none_or(|least| v < least - 1e-12) {
            return Err(ProblemError::invalid(
                "risk_budget",
                format!("{v} is below the least variance any weights reach ({least:?})"),
            ));
        }
    }
    Ok(portfolio)
}

/// A portfolio from either input format (what the registry row's `load` serves).
pub fn load(input: ProblemInput<'_>, limits: &Limits) -> Result<Portfolio, ProblemError> {
    match input {
        ProblemInput::Json(value) => parse_json(value, limits),
        ProblemInput::Text(text) => {
            let (mu, cov) = parse_port(text, limits)?;
            build(mu, cov, "instance", &serde_json::Map::new(), limits)
        }
    }
}

/// The registry row.
pub struct PortfolioProblem;

impl ProblemCode for PortfolioProblem {
    fn instance_schema(&self) -> Value {
        let bound = |what: &str| json!({"oneOf": [{"type": "number", "minimum": 0, "maximum": 1}, {"type": "array", "items": {"type": "number"}}], "description": what});
        json!({
            "type": "object",
            "properties": {
                "mu": {"type": "array", "items": {"type": "number"}, "description": "expected return per asset"},
                "cov": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}, "description": "covariance, symmetric positive semidefinite"},
                "std": {"type": "array", "items": {"type": "number"}, "description": "standard deviations (with corr, instead of cov)"},
                "corr": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}},
                "port": {"type": "string", "description": "an OR-Library port file's text, instead of mu and cov"},
                "cardinality": {"type": "integer", "minimum": 1, "description": "exactly this many assets held (K)"},
                "min_weight": bound("floor eps of each held asset's weight (without cardinality: of every asset's)"),
                "max_weight": bound("cap delta of each asset's weight"),
                "sectors": {"type": "array", "items": {"type": "object", "required": ["assets", "max"], "properties": {"assets": {"type": "array", "items": {"type": "integer"}}, "max": {"type": "number"}}}},
                "lambda": {"type": "number", "minimum": 0, "maximum": 1, "description": "minimise lambda w'Sw - (1 - lambda) mu'w"},
                "points": {"type": "integer", "minimum": 2, "maximum": MAX_POINTS, "description": "the frontier at lambda = e / (points - 1) (default: 50)"},
                "target_return": {"type": "number", "description": "minimise the variance at a return of at least this"},
                "risk_budget": {"type": "number", "minimum": 0, "description": "maximise the return at a variance of at most this"},
                "current_weights": {"type": "array", "items": {"type": "number", "minimum": 0}, "description": "the weights held now (default: all cash), for cost_budget"},
                "transaction_cost": bound("cost per unit of weight traded, for cost_budget"),
                "cost_budget": {"type": "number", "minimum": 0, "description": "sum of transaction_cost_i |w_i - current_i| at most this"},
                "nondominated": {"type": "boolean", "description": "frontier mode: also return the non-dominated portfolios among all the search scored, and their mean percentage error (default: false)"},
                "frontier": {"type": "array", "items": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2}, "description": "the unconstrained frontier as [return, variance] points, for the mean percentage error (default: traced)"}
            }
        })
    }

    fn load(&self, input: ProblemInput<'_>, limits: &Limits) -> Result<Box<dyn Instance>, ProblemError> {
        Ok(Box::new(load(input, limits)?))
    }
}
