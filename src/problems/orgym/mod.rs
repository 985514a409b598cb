//! The OR-Gym envs as solve endpoints (`POST /v1/problems/Knapsack-v1/solve`,
//! `/v1/problems/BinPacking-v1/solve`, `/v1/problems/Newsvendor-v0/solve`,
//! `/v1/problems/InvManagement-v0/solve`, `/v1/problems/PortfolioOpt-v0/solve`,
//! `/v1/problems/VMPacking-v0/solve`, `/v1/problems/VehicleRouting-v0/solve`, `/v1/problems/TSP-v0/solve`): the env's parameters as JSON, one episode rolled out by
//! the env's shipped policy (model `orgym-<env>`, or the one the request names), answered with
//! the episode's decisions, its return and the env's reference. Each env family is one folder
//! (`env.rs` the vectorized env, `reference.rs` its references, `mod.rs` the endpoint);
//! `env.rs` here batches any of them and hands them to `drl` as one `EnvFamily`; this module
//! holds what the endpoints share: reading the parameters and choosing the policy.

pub mod binpacking;
pub mod env;
pub mod inventory;
pub mod knapsack;
pub mod newsvendor;
pub mod portfolio;
pub mod tsp;
pub mod validation;
pub mod vehicle_routing;
pub mod vmpacking;

pub(crate) use binpacking::BIN_PACKING;
pub(crate) use inventory::INVENTORY;
pub(crate) use knapsack::KNAPSACK;
pub(crate) use newsvendor::NEWSVENDOR;
pub(crate) use portfolio::PORTFOLIO_OPT;
pub(crate) use tsp::TSP_ENVS;
pub(crate) use vehicle_routing::VEHICLE_ROUTING;
pub(crate) use vmpacking::VM_PACKING;

use crate::drl::agents::Agent;
use crate::drl::env::ConfigError;
use crate::drl::env::VecEnv;
use crate::drl::run::{load_policy_for, DrlPolicy};
use crate::problems::Solved;
use crate::problems::{Models, ProblemError, ProblemInput, SolveReport, SolveRun};
use crate::search::StopReason;
use serde_json::{Map, Value};
use std::time::Instant;

/// The answer of one rolled-out episode: its return as the objective, `rounds` its steps.
fn episode_report(problem: &str, total: f64, solution: Value, rounds: usize, start: Instant, seed: u64) -> SolveReport {
    let elapsed = start.elapsed();
    let run = SolveRun { rounds, ..SolveRun::once(StopReason::Converged, elapsed, elapsed, total, seed) };
    SolveReport::new(problem, total, -total, solution, run)
}

/// The request's env parameters as a JSON object (a 422 on `instance` otherwise).
fn env_parameters(input: ProblemInput<'_>) -> Result<Map<String, Value>, ProblemError> {
    match input {
        ProblemInput::Json(Value::Object(object)) => Ok(object.clone()),
        _ => Err(ProblemError::invalid("instance", "expected a JSON object of the env's parameters")),
    }
}

/// An env's config: `defaults` with the request's parameters laid over them, validated.
fn config_from<C: serde::Serialize + serde::de::DeserializeOwned>(
    defaults: C,
    input: ProblemInput<'_>,
    validate: impl FnOnce(&C) -> Result<(), ConfigError>,
) -> Result<C, ProblemError> {
    let overrides = Value::Object(env_parameters(input)?);
    env::configured(defaults, &overrides, validate).map_err(|e| match e.field {
        // The parameters did not parse: the request's `instance` is the field at fault.
        "env_config" => ProblemError::invalid("instance", e.message),
        _ => config_error(e),
    })
}

/// One OR-Gym env's episode as a solve: what the envs differ in. `Endpoint` makes the env family
/// a registry row and `Episode` makes an episode an `Instance`: the shipped (or requested) policy
/// plays the episode, or the fallback baseline when no policy takes these parameters (said so in
/// `solution.method`); a baseline plays it when the request names one.
pub(crate) trait EpisodeSolve: Send + Sync + Sized + 'static {
    /// One rolled-out episode, as `report` reads it.
    type Run;
    /// The baseline that plays when no policy does.
    const FALLBACK: &'static str;
    /// The endpoint's one-line summary.
    const SUMMARY: &'static str;
    /// The methods the endpoint lists: `policy` and the baselines.
    const BASELINES: &'static [&'static str];
    /// The JSON schema of the env's parameters.
    fn schema() -> Value;
    /// The episode of env `id` with the request's parameters laid over the id's.
    fn load(id: &'static str, input: ProblemInput<'_>) -> Result<Self, ProblemError>;

    /// The summary and methods of env `id` (an env family whose ids differ overrides it).
    fn describe(_id: &str) -> (&'static str, &'static [&'static str]) {
        (Self::SUMMARY, Self::BASELINES)
    }
    /// The methods this episode lists.
    fn baselines(&self) -> &'static [&'static str] {
        Self::BASELINES
    }
    /// The policy's episode from `seed` and the policy's name; Err says why no policy plays.
    fn policy_run(&self, models: &Models<'_>, seed: u64) -> Result<(Self::Run, String), String>;
    /// A baseline's episode from `seed`; None for a name this episode has no baseline of, an
    /// error (on `method`) for one that cannot run on these parameters.
    fn baseline(&self, name: &str, seed: u64) -> Option<Result<Self::Run, ProblemError>>;
    /// The answer: the episode's decisions, its return and the env's reference.
    fn report(&self, method: &str, run: Self::Run, start: Instant, seed: u64) -> SolveReport;
    fn size_summary(&self) -> String;

    /// A named baseline's answer.
    fn baseline_report(&self, name: &str, seed: u64, start: Instant) -> Solved {
        match self.baseline(name, seed) {
            Some(run) => Ok(self.report(name, run?, start, seed)),
            None => Err(ProblemError::invalid(
                "method",
                crate::suggest::unknown("baseline", name, self.baselines().iter().copied()),
            )),
        }
    }

    /// The answer when no policy plays (`why`).
    fn fallback_report(&self, why: &str, seed: u64, start: Instant) -> SolveReport {
        let run =
            self.baseline(Self::FALLBACK, seed).and_then(Result::ok).expect("the fallback runs on any parameters");
        self.report(&format!("{} ({why})", Self::FALLBACK), run, start, seed)
    }
}

/// An OR-Gym env's solve endpoint: one registry row per env id.
pub struct Endpoint<E> {
    id: &'static str,
    episode: std::marker::PhantomData<fn() -> E>,
}

impl<E> Endpoint<E> {
    const fn new(id: &'static str) -> Self {
        Endpoint { id, episode: std::marker::PhantomData }
    }
}

impl<E: EpisodeSolve> crate::problems::Problem for Endpoint<E> {
    fn info(&self) -> crate::problems::ProblemInfo {
        let (summary, baselines) = E::describe(self.id);
        crate::problems::ProblemInfo { name: self.id, summary, formats: &["json"], baselines }
    }
}

impl<E: EpisodeSolve> crate::problems::ProblemCode for Endpoint<E> {
    fn instance_schema(&self) -> Value {
        E::schema()
    }

    fn load(
        &self,
        input: ProblemInput<'_>,
        _: &crate::problems::Limits,
    ) -> Result<Box<dyn crate::problems::Instance>, ProblemError> {
        Ok(Box::new(Episode(E::load(self.id, input)?)))
    }
}

/// An `EpisodeSolve` as an `Instance`.
struct Episode<E>(E);

impl<E: EpisodeSolve> crate::problems::Instance for Episode<E> {
    fn solve(&self, params: &crate::search::SearchParams, models: Models<'_>) -> SolveReport {
        let start = Instant::now();
        match self.0.policy_run(&models, params.seed) {
            Ok((run, name)) => self.0.report(&format!("policy {name}"), run, start, params.seed),
            Err(why) => self.0.fallback_report(&why, params.seed, start),
        }
    }

    fn solve_baseline(&self, name: &str, params: &crate::search::SearchParams, models: Models<'_>) -> Solved {
        match name {
            "policy" => Ok(self.solve(params, models)),
            _ => self.0.baseline_report(name, params.seed, Instant::now()),
        }
    }

    /// The search would maximise the return.
    fn target_energy(&self, objective: f64) -> f64 {
        -objective
    }

    fn size_summary(&self) -> String {
        self.0.size_summary()
    }
}

/// The shipped (or requested) policy's greedy actions on `probe`'s observations, handed to
/// `play` (which rolls the episode out with them); Err says why there is no policy.
fn with_policy<R>(
    models: &Models<'_>,
    env_id: &str,
    probe: &dyn VecEnv,
    play: impl FnOnce(&mut dyn FnMut(&[f32]) -> Vec<f32>) -> R,
) -> Result<(R, String), String> {
    let (mut agent, name) = shipped_policy(models, env_id, probe)?;
    let dim = probe.observation_dim();
    Ok((play(&mut |row| crate::drl::run::greedy_actions(&mut agent, row, dim)), name))
}

/// An env parameter out of range as the HTTP error it is (413 for a size limit, else 422).
fn config_error(e: ConfigError) -> ProblemError {
    if e.too_large {
        ProblemError::too_large(e.field, e.message)
    } else {
        ProblemError::invalid(e.field, e.message)
    }
}

/// The requested (or the env's shipped `orgym-<env>`) policy, built for `probe`'s parameters
/// with its name; Err says why there is none (not registered, another env's, or its network
/// does not take these parameters' observations), for the fallback's `method`.
fn shipped_policy(models: &Models<'_>, env_id: &str, probe: &dyn VecEnv) -> Result<(Agent, String), String> {
    let default_name = format!("orgym-{}", env_id.to_lowercase());
    let chosen =
        models.chosen::<DrlPolicy>(env_id, || models.registry.get(&default_name)).map_err(|e| e.to_string())?;
    let Some((policy, model)) = chosen else { return Err("no policy model registered".into()) };
    if policy.env != env_id {
        return Err(format!("model {} was trained on {}", model.manifest.name, policy.env));
    }
    match load_policy_for(&policy.dir, tch::Device::Cpu, probe) {
        Ok(agent) => Ok((agent, model.manifest.name.clone())),
        Err(error) => {
            tracing::warn!(model = %model.manifest.name, "policy does not load for these parameters: {error:#}");
            Err(format!("policy {} does not take these parameters", model.manifest.name))
        }
    }
}
