//! The problem abstraction and its registry. A problem parses and validates instances (JSON and
//! its native text format), defines the Hamiltonian of a batch of candidates as a tensor op (via
//! `ising`), decodes to the user's objective and runs its baselines. The CLI and the HTTP API both
//! read `registry()`, so a new problem is one module plus one entry there. A solve gets what it
//! may use explicitly: the served `ProblemSet`, the `ModelRegistry` (each problem loads its own
//! policy type through `Problem::policy_loader`) and the limits, bundled as `SolveContext`.
//!
//! Design note: what `Instance` has to carry for the coming domains. `Instance::solve` owns its
//! whole search and answers a `SolveReport` whose `objective` and `solution` are the domain's
//! own, so the trait itself does not assume spins:
//! - Ising problems with an objective affine in the energy (Max-Cut) implement `IsingProblem`
//!   and share the engine's solve path; incumbents convert energy to objective on the fly.
//! - Constrained binary problems (independent set, cover, knapsack, partitioning) put penalties
//!   in the Hamiltonian, repair every incumbent to feasibility and score the repaired solution;
//!   that objective is not affine in the energy, so they stream incumbents through
//!   `SearchHooks::decoded`, which hands the hook each incumbent's spins (tests/toy_problem.rs
//!   does this end to end over HTTP).
//! - Permutations (tours), continuous vectors (portfolio weights), trees (contraction orders)
//!   and sequential problems (an OR-Gym episode by a policy rollout) implement `Instance`
//!   directly with their own moves, report through the same `SolveReport`, and stream their
//!   incumbents through `SearchHooks` with the decoded objective (as `mimo` and `cs` do now).
//! - Every report's numbers must be finite: `PreparedSolve::run` turns a non-finite one into an
//!   `instance` error.

pub mod binary;
pub mod coloring;
pub mod cs;
pub mod graph;
pub mod graph_partitioning;
pub mod independent_set;
pub mod knapsack;
pub mod maxcut;
pub mod mimo;
pub mod number_partitioning;
pub mod orgym;
pub mod portfolio;
pub mod qubo;
pub mod random;
pub mod set_cover;
pub mod subgradient;
pub mod tensor_network;
pub mod tsp;

/// The Ising model lives in the engine (`search::ising`); problems build one.
pub use crate::search::ising;

use crate::models::{ModelRegistry, PolicyLoader, RegisteredModel};
use crate::search::chains::Backend;
use crate::search::{Incumbent, SearchOutcome, SearchParams, StopReason};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tch::Device;
use utoipa::{IntoParams, ToSchema};

/// Instance, request and device limits. Every one is a flag and an env var of `serve` and
/// `solve` (declared beside its default, as clap arguments): the shared ones here, the ones that
/// belong to one problem in that problem's module.
#[derive(Debug, Clone, Serialize, clap::Args)]
pub struct Limits {
    /// Largest number of nodes (spins) in an instance.
    #[arg(long, env = "RLSOLVER_MAX_NODES", default_value_t = Limits::default().max_nodes)]
    pub max_nodes: usize,
    /// Largest number of edges (couplings) in an instance.
    #[arg(long, env = "RLSOLVER_MAX_EDGES", default_value_t = Limits::default().max_edges)]
    pub max_edges: usize,
    /// Largest accepted `time_limit_s`.
    #[arg(long, env = "RLSOLVER_MAX_TIME_LIMIT_S", default_value_t = Limits::default().max_time_limit_s)]
    pub max_time_limit_s: f64,
    /// `time_limit_s` when a request gives none.
    #[arg(long, env = "RLSOLVER_DEFAULT_TIME_LIMIT_S", default_value_t = Limits::default().default_time_limit_s)]
    pub default_time_limit_s: f64,
    /// Largest accepted `chains`.
    #[arg(long, env = "RLSOLVER_MAX_CHAINS", default_value_t = Limits::default().max_chains)]
    pub max_chains: usize,
    /// Largest `chains` x spins of a search (its states' memory: one byte per spin natively, four
    /// as tensors).
    #[arg(long, env = "RLSOLVER_MAX_CHAIN_SPINS", default_value_t = Limits::default().max_chain_spins)]
    pub max_chain_spins: usize,
    #[command(flatten)]
    #[serde(flatten)]
    pub tensor_network: tensor_network::NetworkLimits,
    #[command(flatten)]
    #[serde(flatten)]
    pub portfolio: portfolio::PortfolioLimits,
    #[command(flatten)]
    #[serde(flatten)]
    pub tsp: tsp::TspLimits,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_nodes: 100_000,
            max_edges: 2_000_000,
            max_time_limit_s: 300.0,
            default_time_limit_s: 10.0,
            max_chains: 65_536,
            max_chain_spins: 1 << 28,
            tensor_network: Default::default(),
            portfolio: Default::default(),
            tsp: Default::default(),
        }
    }
}

/// A user error in an instance or its options, naming the offending field.
#[derive(Debug, thiserror::Error)]
pub enum ProblemError {
    #[error("{field}: {message}")]
    Invalid { field: String, message: String },
    #[error("{field}: {message}")]
    TooLarge { field: String, message: String },
    /// The message names the closest served problem.
    #[error("{0}")]
    UnknownProblem(String),
}

impl ProblemError {
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        ProblemError::Invalid { field: field.into(), message: message.into() }
    }

    pub fn too_large(field: impl Into<String>, message: impl Into<String>) -> Self {
        ProblemError::TooLarge { field: field.into(), message: message.into() }
    }

    pub fn field(&self) -> Option<&str> {
        match self {
            ProblemError::Invalid { field, .. } | ProblemError::TooLarge { field, .. } => Some(field),
            ProblemError::UnknownProblem(_) => None,
        }
    }

    /// The same error with its field nested under `parent` (`edges` -> `instance.edges`).
    pub fn within(self, parent: &str) -> Self {
        // Loaders that already name their field from the request's top (`instance.edges`) keep it.
        if self.field().is_some_and(|f| f == parent || f.starts_with(&format!("{parent}."))) {
            return self;
        }
        match self {
            ProblemError::Invalid { field, message } => {
                ProblemError::Invalid { field: format!("{parent}.{field}"), message }
            }
            ProblemError::TooLarge { field, message } => {
                ProblemError::TooLarge { field: format!("{parent}.{field}"), message }
            }
            other => other,
        }
    }
}

/// Solve options, common to every problem; in a JSON body under `options`, or as query parameters.
#[derive(Debug, Clone, Default, Deserialize, Serialize, ToSchema, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct SolveOptions {
    /// Wall-clock budget in seconds (default: the server's `default_time_limit_s`, capped by `max_time_limit_s`).
    pub time_limit_s: Option<f64>,
    /// Seed for every random choice (default 0).
    pub seed: Option<u64>,
    /// Parallel chains B (default: chosen from instance size and device).
    pub chains: Option<usize>,
    /// Stop as soon as the objective reaches this value.
    pub target: Option<f64>,
    /// `cpu`, `cuda` or `auto` (default `auto`: the CPU backend, measured faster for Max-Cut).
    pub device: Option<String>,
    /// Iteration budget in search rounds; with it, equal seeds give equal results.
    pub max_rounds: Option<usize>,
    /// The search's chain kernels: `auto` (default: `native` on the CPU, `tensor` on CUDA),
    /// `native`, `tensor` (batched Metropolis and tabu), or the lock-step dynamics that move every
    /// spin of every chain at once: `bifurcation` (simulated bifurcation) and `tempering`
    /// (parallel tempering over colour classes).
    pub backend: Option<String>,
    /// `search` (default) or one of the problem's classical baselines (`GET /v1/problems`),
    /// run for `time_limit_s` on one CPU core, for side-by-side comparisons.
    pub method: Option<String>,
    /// A registered model (`GET /v1/models`) to seed the search with, for problems with learned
    /// policies (default: the registry's model for the instance's problem and size, if any).
    pub model: Option<String>,
}

impl SolveOptions {
    /// Fields of `overrides` win over those of `self`.
    pub fn merged_with(self, overrides: SolveOptions) -> SolveOptions {
        SolveOptions {
            time_limit_s: overrides.time_limit_s.or(self.time_limit_s),
            seed: overrides.seed.or(self.seed),
            chains: overrides.chains.or(self.chains),
            target: overrides.target.or(self.target),
            device: overrides.device.or(self.device),
            max_rounds: overrides.max_rounds.or(self.max_rounds),
            backend: overrides.backend.or(self.backend),
            method: overrides.method.or(self.method),
            model: overrides.model.or(self.model),
        }
    }

    /// Validates against `limits` and turns the options into search parameters.
    pub fn to_search_params(&self, limits: &Limits) -> Result<SearchParams, ProblemError> {
        let time_limit_s = self.time_limit_s.unwrap_or(limits.default_time_limit_s);
        if !time_limit_s.is_finite() || time_limit_s <= 0.0 {
            return Err(ProblemError::invalid("time_limit_s", "must be a positive number of seconds"));
        }
        if time_limit_s > limits.max_time_limit_s {
            return Err(ProblemError::invalid(
                "time_limit_s",
                format!("{time_limit_s} exceeds this server's limit of {} s", limits.max_time_limit_s),
            ));
        }
        if let Some(chains) = self.chains {
            if chains == 0 || chains > limits.max_chains {
                return Err(ProblemError::invalid("chains", format!("must be between 1 and {}", limits.max_chains)));
            }
        }
        if self.target.is_some_and(|t| !t.is_finite()) {
            return Err(ProblemError::invalid("target", "must be a finite number"));
        }
        if self.max_rounds == Some(0) {
            return Err(ProblemError::invalid("max_rounds", "must be at least 1"));
        }
        check_seed(self.seed.unwrap_or(0))?;
        Ok(SearchParams {
            time_limit_s,
            seed: self.seed.unwrap_or(0),
            chains: self.chains,
            device: parse_device(self.device.as_deref())?,
            max_rounds: self.max_rounds,
            backend: parse_backend(self.backend.as_deref())?,
            ..SearchParams::default()
        })
    }
}

/// The largest seed a request may give: seeds are stored as signed 64-bit integers (PostgreSQL
/// `bigint`), and the OpenAPI document declares them `int64`.
pub const MAX_SEED: u64 = i64::MAX as u64;

/// A 422 on `seed` above `MAX_SEED`.
pub fn check_seed(seed: u64) -> Result<(), ProblemError> {
    if seed > MAX_SEED {
        return Err(ProblemError::invalid("seed", format!("expected 0..={MAX_SEED}")));
    }
    Ok(())
}

/// `cpu`, `cuda`, `cuda:N` or `auto`. `auto` is the CPU (native kernels) even where CUDA is
/// present: measured on an H200 (benches/device/gpu_check.sh, 10 s per Gset graph), the tensor
/// backend on CUDA ran 3-5 rounds per 10 s (its tabu flips are one small kernel sequence each,
/// launch-bound) and cut G14 3049, G15 3031, G22 13287, G50 5878, below this 2-core CPU's 3063,
/// 3050, 13358, 5880. `cuda` still selects it explicitly.
pub fn parse_device(name: Option<&str>) -> Result<Device, ProblemError> {
    match name.unwrap_or("auto") {
        "auto" => Ok(Device::Cpu),
        "cpu" => Ok(Device::Cpu),
        other => {
            let index = match other.strip_prefix("cuda") {
                Some("") => 0,
                Some(rest) => rest
                    .strip_prefix(':')
                    .and_then(|i| i.parse::<usize>().ok())
                    .ok_or_else(|| ProblemError::invalid("device", format!("unknown device '{other}'")))?,
                None => {
                    return Err(ProblemError::invalid(
                        "device",
                        format!("unknown device '{other}': use cpu, cuda or auto"),
                    ))
                }
            };
            if index >= tch::Cuda::device_count() as usize {
                return Err(ProblemError::invalid("device", format!("'{other}' is not available on this server")));
            }
            Ok(Device::Cuda(index))
        }
    }
}

/// `auto` (None: chosen by device), `native`, `tensor`, `bifurcation` or `tempering`.
pub fn parse_backend(name: Option<&str>) -> Result<Option<Backend>, ProblemError> {
    Ok(match name.unwrap_or("auto") {
        "auto" => None,
        "native" => Some(Backend::Native),
        "tensor" => Some(Backend::Tensor),
        "bifurcation" => Some(Backend::Bifurcation),
        "tempering" => Some(Backend::Tempering),
        other => {
            return Err(ProblemError::invalid(
                "backend",
                format!("unknown backend '{other}': use auto, native, tensor, bifurcation or tempering"),
            ))
        }
    })
}

pub fn device_name(device: Device) -> String {
    match device {
        Device::Cuda(i) => format!("cuda:{i}"),
        _ => "cpu".to_string(),
    }
}

/// The objective at one moment of the search.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct HistoryPoint {
    pub elapsed_ms: f64,
    pub objective: f64,
}

/// What a solve answers: its report, or the error that names the field at fault.
pub type Solved = Result<SolveReport, ProblemError>;

/// The answer to a solve request.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SolveReport {
    /// Registry name of the problem.
    pub problem: String,
    /// The user's objective of `solution` (for Max-Cut, the cut value).
    pub objective: f64,
    /// The Hamiltonian of `solution` (what the search minimises).
    pub energy: f64,
    /// The decoded solution (for Max-Cut, the side 0 or 1 of every node, 0-indexed).
    #[schema(value_type = Value)]
    pub solution: serde_json::Value,
    /// Why the search stopped (`optimal`: proven, `bound` equals `objective`).
    pub status: StopReason,
    /// A proven bound on the objective where one is cheap (above it when the objective is
    /// maximised, below when minimised); absent where none is computed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bound: Option<f64>,
    /// |bound - objective| / max(|objective|, 1): how far the answer can be from the optimum
    /// (0: proven optimal); absent without a bound.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gap: Option<f64>,
    pub elapsed_ms: f64,
    /// Best-so-far objective each time it improved.
    pub history: Vec<HistoryPoint>,
    pub chains: usize,
    pub rounds: usize,
    pub device: String,
    pub seed: u64,
}

/// How a solve ran, whatever ran it: every field of a `SolveReport` besides the answer.
#[derive(Debug, Clone)]
pub struct SolveRun {
    pub status: StopReason,
    pub elapsed: Duration,
    /// Best-so-far objective each time it improved.
    pub history: Vec<HistoryPoint>,
    pub chains: usize,
    pub rounds: usize,
    pub device: String,
    pub seed: u64,
}

impl SolveRun {
    /// A move-set search's run on the CPU, its incumbents' energies in the objective.
    pub fn of_moves<S>(
        outcome: &crate::search::moves::MovesOutcome<S>,
        objective: impl Fn(f64) -> f64,
        seed: u64,
    ) -> Self {
        SolveRun {
            status: outcome.stop,
            elapsed: outcome.elapsed,
            history: history_points(&outcome.history, objective),
            chains: outcome.chains,
            rounds: outcome.rounds,
            device: "cpu".into(),
            seed,
        }
    }

    /// A baseline's single run on the CPU that stopped for `status` after `elapsed`, its best
    /// `objective` found at `found`.
    pub fn once(status: StopReason, elapsed: Duration, found: Duration, objective: f64, seed: u64) -> Self {
        SolveRun {
            status,
            elapsed,
            history: vec![HistoryPoint { elapsed_ms: found.as_secs_f64() * 1e3, objective }],
            chains: 1,
            rounds: 0,
            device: "cpu".into(),
            seed,
        }
    }
}

impl SolveReport {
    /// The report of `solution`, with its objective and energy, from `run`.
    pub fn new(problem: &str, objective: f64, energy: f64, solution: serde_json::Value, run: SolveRun) -> Self {
        SolveReport {
            problem: problem.into(),
            objective,
            energy,
            solution,
            status: run.status,
            bound: None,
            gap: None,
            elapsed_ms: run.elapsed.as_secs_f64() * 1e3,
            history: run.history,
            chains: run.chains,
            rounds: run.rounds,
            device: run.device,
            seed: run.seed,
        }
    }

    /// This report with a proven `bound` on its objective and the gap to it; a zero gap makes
    /// the status `optimal`.
    pub fn with_bound(mut self, bound: f64) -> Self {
        let gap = (bound - self.objective).abs() / self.objective.abs().max(1.0);
        if gap <= 1e-12 {
            self.status = StopReason::Optimal;
        }
        (self.bound, self.gap) = (Some(bound), Some(gap));
        self
    }
}

/// A baseline of instance type `I`: its `method` name and how it runs.
pub struct Baseline<I> {
    pub name: &'static str,
    pub run: fn(&I, &SearchParams, Models<'_>) -> Solved,
}

/// Runs the baseline `name` of `table` on `instance`; a name the table lacks is a `method`
/// error naming the closest one.
pub fn run_baseline<I>(
    table: &[Baseline<I>],
    instance: &I,
    name: &str,
    params: &SearchParams,
    models: Models<'_>,
) -> Solved {
    match table.iter().find(|b| b.name == name) {
        Some(baseline) => (baseline.run)(instance, params, models),
        None => Err(ProblemError::invalid(
            "method",
            crate::suggest::unknown("baseline", name, table.iter().map(|b| b.name)),
        )),
    }
}

/// The `ising` baseline of a problem with a penalty encoding: the encoding searched as an Ising
/// model and every incumbent repaired (`binary::Repaired`).
pub fn penalty_baseline<P: binary::PenaltyProblem>(
    encoding: Result<P, ProblemError>,
    params: &SearchParams,
    models: Models<'_>,
) -> Solved {
    Ok(binary::Repaired(Arc::new(encoding?)).solve(params, models))
}

/// The history of a search's incumbents in the problem's objective.
pub fn history_points(history: &[Incumbent], objective: impl Fn(f64) -> f64) -> Vec<HistoryPoint> {
    history
        .iter()
        .map(|p| HistoryPoint { elapsed_ms: p.elapsed.as_secs_f64() * 1e3, objective: objective(p.energy) })
        .collect()
}

/// An instance in the user's input format.
pub enum ProblemInput<'a> {
    Json(&'a serde_json::Value),
    Text(&'a str),
}

/// What a registry row says of its problem: the listings, `rlsolver problems` and the OpenAPI
/// document read it.
#[derive(Debug, Clone, Copy)]
pub struct ProblemInfo {
    /// The registry name (the solve path's `{name}`).
    pub name: &'static str,
    /// One line: what is optimised.
    pub summary: &'static str,
    /// Accepted input formats, e.g. `json`, `gset`.
    pub formats: &'static [&'static str],
    /// Names of the classical baselines, usable as `method`.
    pub baselines: &'static [&'static str],
}

/// How a problem reads and makes its instances: the code of a registry row, whose
/// `ProblemInfo` is data (`Row`).
pub trait ProblemCode: Send + Sync {
    /// JSON schema of the JSON instance format.
    fn instance_schema(&self) -> serde_json::Value;
    fn load(&self, input: ProblemInput<'_>, limits: &Limits) -> Result<Box<dyn Instance>, ProblemError>;
    /// Loads this problem's policies from model folders (problems without learned policies: None).
    fn policy_loader(&self) -> Option<PolicyLoader> {
        None
    }
    /// A generated instance in one of this problem's input formats (`rlsolver generate`); None
    /// for problems without a generator. The error names what is wrong with `spec`.
    fn generate(&self, spec: &GenerateSpec) -> Option<Result<String, String>> {
        let _ = spec;
        None
    }
}

/// A served problem: its code and its `ProblemInfo`. A `Row` is one; a problem whose info is
/// computed (the OR-Gym endpoints, one per env id) implements `info` itself.
pub trait Problem: ProblemCode {
    fn info(&self) -> ProblemInfo;
    fn name(&self) -> &'static str {
        self.info().name
    }
    fn summary(&self) -> &'static str {
        self.info().summary
    }
    fn formats(&self) -> &'static [&'static str] {
        self.info().formats
    }
    fn baselines(&self) -> &'static [&'static str] {
        self.info().baselines
    }
}

/// A registry row: what the listings say of a problem, next to the code that serves it.
pub struct Row<C> {
    pub info: ProblemInfo,
    pub code: C,
}

impl<C: ProblemCode> ProblemCode for Row<C> {
    fn instance_schema(&self) -> serde_json::Value {
        self.code.instance_schema()
    }
    fn load(&self, input: ProblemInput<'_>, limits: &Limits) -> Result<Box<dyn Instance>, ProblemError> {
        self.code.load(input, limits)
    }
    fn policy_loader(&self) -> Option<PolicyLoader> {
        self.code.policy_loader()
    }
    fn generate(&self, spec: &GenerateSpec) -> Option<Result<String, String>> {
        self.code.generate(spec)
    }
}

impl<C: ProblemCode> Problem for Row<C> {
    fn info(&self) -> ProblemInfo {
        self.info
    }
}

/// What `rlsolver generate` asks of a problem's generator; each problem reads the fields it
/// documents (`rlsolver generate --help`).
#[derive(Debug, Clone)]
pub struct GenerateSpec {
    pub nodes: usize,
    /// Edges (number_partitioning: bits per number; tensor_network: cycles).
    pub edges: usize,
    /// Integer weights drawn uniformly (maxcut).
    pub weights: Vec<i64>,
    /// Planted colour classes (graph_coloring).
    pub colors: usize,
    /// Edges across the planted halves (graph_partitioning).
    pub cut: usize,
    /// Pisinger's instance class (knapsack: 1-6, 9, 11-16).
    pub class: usize,
    /// The coefficient range R (knapsack).
    pub range: u64,
    pub seed: u64,
}

/// The models a solve may use, passed to it explicitly: the registry its caller serves and the
/// model the request names (None: the problem's default for the instance's size, if any).
#[derive(Clone, Copy)]
pub struct Models<'a> {
    pub registry: &'a ModelRegistry,
    pub requested: Option<&'a str>,
}

impl<'a> Models<'a> {
    /// The requested model (a 422 on `model` when the registry has no model of that name, or
    /// its policy is not `problem`'s type `T`), else `default`'s; Ok(None) when neither.
    pub fn chosen<T: 'static>(
        &self,
        problem: &str,
        default: impl FnOnce() -> Option<&'a RegisteredModel>,
    ) -> Result<Option<(&'a T, &'a RegisteredModel)>, ProblemError> {
        let chosen = match self.requested {
            Some(name) => Some(
                self.registry
                    .get(name)
                    .ok_or_else(|| ProblemError::invalid("model", format!("no model named '{name}'")))?,
            ),
            None => default(),
        };
        let Some(chosen) = chosen else { return Ok(None) };
        let policy = chosen.policy::<T>().ok_or_else(|| {
            ProblemError::invalid(
                "model",
                format!("'{}' is a {} model, not {problem}", chosen.manifest.name, chosen.manifest.problem),
            )
        })?;
        Ok(Some((policy, chosen)))
    }
}

/// A validated instance, ready to solve.
pub trait Instance: Send + Sync {
    fn solve(&self, params: &SearchParams, models: Models<'_>) -> SolveReport;
    /// Runs the named baseline for `params.time_limit_s` with `params.seed`; an unknown name or
    /// a baseline that cannot run on this instance is a `method` (or `model`) error.
    fn solve_baseline(&self, name: &str, params: &SearchParams, models: Models<'_>) -> Solved;
    /// Objective -> the search's target energy (for `target`); the objective itself where the
    /// search minimises it as its energy.
    fn target_energy(&self, objective: f64) -> f64 {
        objective
    }
    fn size_summary(&self) -> String;
    /// Spins of each search chain, when the instance is searched as an Ising model (what
    /// `Limits::max_chain_spins` bounds together with `chains`).
    fn chain_spins(&self) -> Option<usize> {
        None
    }
}

/// Problems whose search space is an Ising model share one solve path.
pub trait IsingProblem: Send + Sync {
    const NAME: &'static str;
    fn ising(&self) -> &ising::IsingModel;
    fn objective(&self, energy: f64) -> f64;
    fn energy_for_objective(&self, objective: f64) -> f64;
    fn decode(&self, spins: &[i8]) -> serde_json::Value;
    /// Runs the named baseline: (spins, time to its best), or None for an unknown name.
    fn run_baseline(&self, name: &str, time_limit: Duration, seed: u64) -> Option<(Vec<i8>, Duration)>;
    /// Seconds one step of `bound` is expected to take; None: the problem has no bound.
    fn bound_step_s(&self) -> Option<f64> {
        None
    }
    /// A proven bound on the objective, computed within `budget` once the search has found
    /// `best`; None when no step fits.
    fn bound(&self, best: f64, budget: Duration) -> Option<f64> {
        let _ = (best, budget);
        None
    }
}

/// The share of a solve's time limit kept back from the search for the bound computed after it.
pub const BOUND_SHARE: f64 = 0.05;

/// The problems whose instances are `IsingProblem`s, which `ising` models serve.
pub const ISING_POLICY_PROBLEMS: &[&str] = &["maxcut"];

/// Answers of the Ising policy sampled for a search's or `method=policy`'s starts.
const POLICY_SAMPLES: usize = 16;

/// The requested Ising policy, else the registry's first; Ok(None) when there is none.
fn ising_policy<'a>(
    models: Models<'a>,
) -> Result<Option<&'a Mutex<crate::search::ising_policy::IsingPolicy>>, ProblemError> {
    let default = || crate::search::ising_policy::find_in(models.registry).map(|(_, model)| model);
    Ok(models.chosen::<Mutex<crate::search::ising_policy::IsingPolicy>>("ising", default)?.map(|(policy, _)| policy))
}

impl<T: IsingProblem> Instance for T {
    fn chain_spins(&self) -> Option<usize> {
        Some(self.ising().num_spins())
    }

    fn solve(&self, params: &SearchParams, models: Models<'_>) -> SolveReport {
        // Ising objectives are affine in the energy (Max-Cut: (sum w - H) / 2), so the streamed
        // incumbents convert without holding on to the instance.
        let (offset, slope) = (self.objective(0.0), self.objective(1.0) - self.objective(0.0));
        let mut params =
            SearchParams { hooks: params.hooks.mapped(move |energy| offset + slope * energy), ..params.clone() };
        let model = self.ising();
        // The policy's starts only when the request names the model: at equal wall time they
        // helped on no graph of `bench ising-policy` (1 s, seeds 0-4; README), and on its
        // 10,000-node graphs the policy's time left the search too little to improve on them.
        let wanted = models.requested.is_some();
        let start = std::time::Instant::now();
        if wanted && params.initial_states.is_empty() && !(params.exact && crate::search::exact::affordable(model)) {
            // No Ising policy (or a named model of another problem, which `method=policy`
            // refuses with a 422 on `model`) means random starts.
            if let Ok(Some(policy)) = ising_policy(models) {
                let policy = policy.lock().expect("policy lock");
                params.initial_states =
                    policy.sample(model, POLICY_SAMPLES, params.seed).into_iter().map(|(s, _)| s).collect();
            }
        }
        // The policy's time is part of the request's budget and of the times reported; a bound
        // that fits its share of the budget has that share reserved after the search.
        let spent = start.elapsed();
        let left = (params.time_limit_s - spent.as_secs_f64()).max(0.0);
        let exact = params.exact && crate::search::exact::affordable(model);
        let reserved = match self.bound_step_s() {
            Some(step) if !exact && step <= BOUND_SHARE * left => BOUND_SHARE * left,
            _ => 0.0,
        };
        params.time_limit_s = left - reserved;
        let mut outcome = crate::search::minimize(model, &params);
        outcome.elapsed += spent;
        outcome.history.iter_mut().for_each(|incumbent| incumbent.elapsed += spent);
        let answer = report(self, &params, outcome);
        let budget = Duration::from_secs_f64(left).saturating_sub(start.elapsed() - spent);
        let budget = budget.min(Duration::from_secs_f64(reserved));
        match (reserved > 0.0).then(|| self.bound(answer.objective, budget)).flatten() {
            Some(bound) => SolveReport { elapsed_ms: start.elapsed().as_secs_f64() * 1e3, ..answer.with_bound(bound) },
            None => answer,
        }
    }

    fn solve_baseline(&self, name: &str, params: &SearchParams, models: Models<'_>) -> Solved {
        let start = std::time::Instant::now();
        let (spins, time_to_best) = if name == "policy" {
            let policy = ising_policy(models)?.ok_or_else(|| {
                ProblemError::invalid("method", "policy needs an Ising model in the registry (GET /v1/models)")
            })?;
            let policy = policy.lock().expect("policy lock");
            let chains = params.chains.unwrap_or(POLICY_SAMPLES).max(1);
            let (spins, _) = policy.sample(self.ising(), chains, params.seed).swap_remove(0);
            (spins, start.elapsed())
        } else {
            self.run_baseline(name, Duration::from_secs_f64(params.time_limit_s), params.seed)
                .ok_or_else(|| ProblemError::invalid("method", format!("unknown baseline '{name}'")))?
        };
        let energy = self.ising().energy(&spins);
        let outcome = SearchOutcome {
            spins,
            energy,
            stop: StopReason::TimeLimit,
            elapsed: start.elapsed(),
            history: vec![Incumbent { elapsed: time_to_best, energy }],
            chains: 1,
            rounds: 0,
            device: Device::Cpu,
            samples: Vec::new(),
        };
        Ok(report(self, params, outcome))
    }

    fn target_energy(&self, objective: f64) -> f64 {
        self.energy_for_objective(objective)
    }

    fn size_summary(&self) -> String {
        format!("n={} couplings={}", self.ising().num_spins(), self.ising().couplings().len())
    }
}

fn report<T: IsingProblem>(problem: &T, params: &SearchParams, outcome: SearchOutcome) -> SolveReport {
    SolveReport {
        problem: T::NAME.to_string(),
        objective: problem.objective(outcome.energy),
        energy: outcome.energy,
        solution: problem.decode(&outcome.spins),
        status: outcome.stop,
        bound: None,
        gap: None,
        elapsed_ms: outcome.elapsed.as_secs_f64() * 1e3,
        history: history_points(&outcome.history, |energy| problem.objective(energy)),
        chains: outcome.chains,
        rounds: outcome.rounds,
        device: device_name(outcome.device),
        seed: params.seed,
    }
}

/// The problems a server or CLI serves: the built-in `registry()` unless the caller adds its own
/// (a test's toy problem, a deployment's extra domain).
#[derive(Clone)]
pub struct ProblemSet(Vec<&'static dyn Problem>);

impl ProblemSet {
    pub fn builtin() -> Self {
        ProblemSet(registry().to_vec())
    }

    /// The built-in problems and `extra`.
    pub fn with(extra: &[&'static dyn Problem]) -> Self {
        ProblemSet(registry().iter().chain(extra).copied().collect())
    }

    pub fn iter(&self) -> impl Iterator<Item = &'static dyn Problem> + '_ {
        self.0.iter().copied()
    }

    pub fn find(&self, name: &str) -> Result<&'static dyn Problem, ProblemError> {
        self.iter().find(|p| p.name() == name).ok_or_else(|| {
            ProblemError::UnknownProblem(crate::suggest::unknown("problem", name, self.iter().map(|p| p.name())))
        })
    }
}

impl Default for ProblemSet {
    fn default() -> Self {
        Self::builtin()
    }
}

impl std::fmt::Debug for ProblemSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter().map(|p| p.name())).finish()
    }
}

/// What a solve runs against, passed explicitly (no process-wide state): the problems served,
/// the models, the limits.
#[derive(Clone)]
pub struct SolveContext {
    pub problems: ProblemSet,
    pub models: Arc<ModelRegistry>,
    pub limits: Limits,
}

/// Every env a training run can make: `drl`'s own, the OR-Gym ports, and Gymnasium's through
/// `bridge`.
pub fn envs(bridge: crate::drl::env::gymnasium::BridgeConfig) -> crate::drl::env::Envs {
    crate::drl::env::Envs::new(bridge).with(&orgym::env::OrGymEnvs)
}

/// Every registered problem.
pub fn registry() -> &'static [&'static dyn Problem] {
    static PROBLEMS: &[&dyn Problem] = &[
        &Row {
            info: ProblemInfo {
                name: "maxcut",
                summary: "Weighted Max-Cut: split the nodes in two sides maximising the total weight of crossing edges",
                formats: &["json", "gset"],
                baselines: maxcut::BASELINES,
            },
            code: maxcut::MaxCut,
        },
        &Row {
            info: ProblemInfo {
                name: "mimo",
                summary: "Downlink MISO beamforming: a beamformer for K users and N antennas maximising the sum rate under a power budget",
                formats: &["json"],
                baselines: mimo::BASELINES,
            },
            code: mimo::Mimo,
        },
        &Row {
            info: ProblemInfo {
                name: "compressive_sensing",
                summary: "Sparse recovery: the sparse x with y = A x (+ noise), from the measurements y and the matrix A",
                formats: &["json"],
                baselines: cs::BASELINES,
            },
            code: cs::CompressiveSensing,
        },
        &Row {
            info: ProblemInfo {
                name: "max_independent_set",
                summary: "Maximum (weight) independent set: the heaviest set of pairwise non-adjacent nodes",
                formats: &["json", "dimacs"],
                baselines: &["greedy"],
            },
            code: independent_set::SetProblem(independent_set::SetKind::IndependentSet),
        },
        &Row {
            info: ProblemInfo {
                name: "min_vertex_cover",
                summary: "Minimum (weight) vertex cover: the lightest set of nodes touching every edge",
                formats: &["json", "dimacs"],
                baselines: &["greedy"],
            },
            code: independent_set::SetProblem(independent_set::SetKind::VertexCover),
        },
        &Row {
            info: ProblemInfo {
                name: "max_clique",
                summary: "Maximum (weight) clique: the heaviest set of pairwise adjacent nodes",
                formats: &["json", "dimacs"],
                baselines: &["greedy"],
            },
            code: independent_set::SetProblem(independent_set::SetKind::Clique),
        },
        &Row {
            info: ProblemInfo {
                name: "qubo",
                summary: "Any QUBO / binary quadratic model (dimod BQM, MQLib text, plain JSON): minimise its energy",
                formats: &["json", "mqlib"],
                baselines: &[],
            },
            code: qubo::QUBO,
        },
        &Row {
            info: ProblemInfo {
                name: "ising",
                summary: "Any Ising model (dimod BQM or plain JSON, SPIN by default): minimise its energy",
                formats: &["json", "mqlib"],
                baselines: &[],
            },
            code: qubo::ISING,
        },
        &Row {
            info: ProblemInfo {
                name: "knapsack",
                summary: "0/1 knapsack, one or several capacities: the most valuable selection of items that fits",
                formats: &["json", "pisinger", "mknap"],
                baselines: &["dp", "greedy", "moves", "ising"],
            },
            code: knapsack::Knapsack,
        },
        &Row {
            info: ProblemInfo {
                name: "set_cover",
                summary: "Weighted set cover: the cheapest sets whose union is the universe",
                formats: &["json", "orlib"],
                baselines: &["greedy", "ising"],
            },
            code: set_cover::SetCover,
        },
        &Row {
            info: ProblemInfo {
                name: "graph_coloring",
                summary: "Graph colouring: a proper colouring with the fewest colours, or the fewest conflicts with k colours",
                formats: &["json", "dimacs"],
                baselines: &["dsatur", "ising"],
            },
            code: coloring::GraphColoring,
        },
        &Row {
            info: ProblemInfo {
                name: "number_partitioning",
                summary: "Number partitioning: two sets of the given integers with sums as equal as possible",
                formats: &["json"],
                baselines: &["anneal", "kk", "ckk", "ising"],
            },
            code: number_partitioning::NumberPartitioning,
        },
        &Row {
            info: ProblemInfo {
                name: "graph_partitioning",
                summary: "Balanced graph partitioning: parts of bounded size with the least weight of edges between them",
                formats: &["json", "metis"],
                baselines: &["bfs", "ising"],
            },
            code: graph_partitioning::GraphPartitioning,
        },
        &Row {
            info: ProblemInfo {
                name: "tensor_network",
                summary: "Tensor-network contraction order: the pairwise contraction tree with the fewest multiplications (log10)",
                formats: &["json", "adjacency"],
                baselines: &["greedy", "random-greedy", "policy"],
            },
            code: tensor_network::TensorNetwork,
        },
        &Row {
            info: ProblemInfo {
                name: "portfolio",
                summary: "Mean-variance portfolios with a cardinality constraint (Chang et al. 2000): one lambda, a target return, a risk budget or the frontier",
                formats: &["json", "port"],
                baselines: &["unconstrained", "greedy", "ga", "branch-and-bound"],
            },
            code: portfolio::PortfolioProblem,
        },
        &Row {
            info: ProblemInfo {
                name: "tsp",
                summary: "Symmetric travelling salesman: the shortest closed tour (TSPLIB EUC_2D, CEIL_2D, ATT, GEO, explicit matrices)",
                formats: &["json", "tsplib"],
                baselines: &["nn-2opt"],
            },
            code: tsp::TravellingSalesman,
        },
        &orgym::KNAPSACK[0],
        &orgym::KNAPSACK[1],
        &orgym::KNAPSACK[2],
        &orgym::KNAPSACK[3],
        &orgym::BIN_PACKING[0],
        &orgym::BIN_PACKING[1],
        &orgym::BIN_PACKING[2],
        &orgym::BIN_PACKING[3],
        &orgym::BIN_PACKING[4],
        &orgym::BIN_PACKING[5],
        &orgym::NEWSVENDOR,
        &orgym::INVENTORY[0],
        &orgym::INVENTORY[1],
        &orgym::PORTFOLIO_OPT,
        &orgym::VM_PACKING[0],
        &orgym::VM_PACKING[1],
        &orgym::VEHICLE_ROUTING,
        &orgym::TSP_ENVS[0],
        &orgym::TSP_ENVS[1],
    ];
    PROBLEMS
}

pub fn find(name: &str) -> Result<&'static dyn Problem, ProblemError> {
    ProblemSet::builtin().find(name)
}

/// The loader of a model manifest's `problem`: a registered problem's own, or the deep-RL
/// policies' (`drl`). What a `ModelRegistry` is opened with.
pub fn policy_loaders(problem: &str) -> Option<PolicyLoader> {
    match problem {
        "drl" => Some(drl_policy),
        "ising" => Some(crate::search::ising_policy::load),
        name => find(name).ok().and_then(|p| p.policy_loader()),
    }
}

/// The loader of promoted deep-RL policies: the folder must rebuild and load.
fn drl_policy(
    _manifest: &crate::models::Manifest,
    dir: &std::path::Path,
) -> anyhow::Result<crate::models::LoadedPolicy> {
    use anyhow::Context;
    let (_, env) = crate::drl::run::load_checkpoint(dir, Device::Cpu, &envs(Default::default()))
        .context("weights do not match the architecture")?;
    Ok(Box::new(crate::drl::run::DrlPolicy { env, dir: dir.to_path_buf() }))
}

/// Loads, applies options (including `target`) and solves: the one path shared by CLI and HTTP.
pub fn solve(
    problem: &dyn Problem,
    input: ProblemInput<'_>,
    options: &SolveOptions,
    limits: &Limits,
    models: &Arc<ModelRegistry>,
) -> Solved {
    prepare(problem, input, options, limits, models, |_| {})?.run()
}

/// A loaded, checked solve: run it (possibly later, on another thread) with `run`.
pub struct PreparedSolve {
    pub instance: Box<dyn Instance>,
    pub params: SearchParams,
    method: String,
    registry: Arc<ModelRegistry>,
    /// The model the request named.
    model: Option<String>,
}

impl PreparedSolve {
    /// Solves; a report whose numbers are not all finite (values so large that the arithmetic
    /// overflowed) is an `instance` error rather than an answer with nulls in it.
    pub fn run(&self) -> Solved {
        let models = Models { registry: &self.registry, requested: self.model.as_deref() };
        let report = match self.method.as_str() {
            "search" => self.instance.solve(&self.params, models),
            baseline => self.instance.solve_baseline(baseline, &self.params, models)?,
        };
        let finite = report.objective.is_finite()
            && report.energy.is_finite()
            && report.history.iter().all(|p| p.objective.is_finite())
            && all_numbers_finite(&report.solution);
        if !finite {
            return Err(ProblemError::invalid(
                "instance",
                "the solution's values overflow a 64-bit float: scale the instance's numbers down",
            ));
        }
        Ok(report)
    }
}

fn all_numbers_finite(value: &serde_json::Value) -> bool {
    match value {
        // serde_json turns NaN and infinities into null; a solution never holds nulls otherwise.
        serde_json::Value::Null => false,
        serde_json::Value::Number(n) => n.as_f64().is_some_and(f64::is_finite),
        serde_json::Value::Array(items) => items.iter().all(all_numbers_finite),
        serde_json::Value::Object(fields) => fields.values().all(all_numbers_finite),
        _ => true,
    }
}

/// The search settings and method of `options` for `problem` (every error names an option).
pub fn prepare_options(
    problem: &dyn Problem,
    options: &SolveOptions,
    limits: &Limits,
    models: &ModelRegistry,
    tune: impl FnOnce(&mut SearchParams),
) -> Result<(SearchParams, String), ProblemError> {
    let mut params = options.to_search_params(limits)?;
    tune(&mut params);
    let method = options.method.as_deref().unwrap_or("search");
    if method != "search" && !problem.baselines().contains(&method) {
        return Err(ProblemError::invalid(
            "method",
            crate::suggest::unknown(
                "method",
                method,
                std::iter::once("search").chain(problem.baselines().iter().copied()),
            ),
        ));
    }
    if let Some(name) = &options.model {
        let model = models
            .get(name)
            .ok_or_else(|| ProblemError::invalid("model", format!("no model named '{name}' (GET /v1/models)")))?;
        let ising_served = model.manifest.problem == "ising" && ISING_POLICY_PROBLEMS.contains(&problem.name());
        if model.manifest.problem != problem.name() && !ising_served {
            return Err(ProblemError::invalid(
                "model",
                format!("'{name}' is a {} model, not {}", model.manifest.problem, problem.name()),
            ));
        }
    }
    Ok((params, method.to_string()))
}

/// Loads the instance (every error names an instance field) and completes the settings.
pub fn prepare_instance(
    problem: &dyn Problem,
    input: ProblemInput<'_>,
    options: &SolveOptions,
    limits: &Limits,
    registry: &Arc<ModelRegistry>,
    (mut params, method): (SearchParams, String),
) -> Result<PreparedSolve, ProblemError> {
    // The time limit covers preprocessing: what loading took (parsing, a TSP's neighbour lists,
    // a tensor network's index tables) comes out of the search's budget, down to 1 ms.
    let loading = std::time::Instant::now();
    let instance = problem.load(input, limits)?;
    params.time_limit_s = (params.time_limit_s - loading.elapsed().as_secs_f64()).max(1e-3);
    if let (Some(spins), Some(chains)) = (instance.chain_spins(), params.chains) {
        if spins.saturating_mul(chains) > limits.max_chain_spins {
            return Err(ProblemError::too_large(
                "chains",
                format!(
                    "{chains} chains of {spins} spins exceed this server's {} chain-spins; use at most {}",
                    limits.max_chain_spins,
                    (limits.max_chain_spins / spins.max(1)).max(1)
                ),
            ));
        }
    }
    params.target_energy = options.target.map(|t| instance.target_energy(t));
    Ok(PreparedSolve { instance, params, method, registry: registry.clone(), model: options.model.clone() })
}

/// Everything `solve` checks, without solving: the instance loaded and the parameters set.
pub fn prepare(
    problem: &dyn Problem,
    input: ProblemInput<'_>,
    options: &SolveOptions,
    limits: &Limits,
    registry: &Arc<ModelRegistry>,
    tune: impl FnOnce(&mut SearchParams),
) -> Result<PreparedSolve, ProblemError> {
    let settings = prepare_options(problem, options, limits, registry, tune)?;
    prepare_instance(problem, input, options, limits, registry, settings)
}
