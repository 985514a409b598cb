//! The single-agent train-and-evaluate loops: `off_policy` (explore, store, replay updates) and
//! `on_policy` (rollouts, GAE, updates), each calling the shared `Monitor::after_iteration`
//! (evaluate on fresh episodes, log, checkpoint, stop at the target). A checkpoint holds the whole
//! run (agent, optimizer moments, replay, envs, generators), so a resumed run continues exactly
//! as one that never stopped; `load_checkpoint` rebuilds any agent (single- or multi-agent) from
//! a run folder for evaluation and serving.

mod off_policy;
mod on_device;
mod on_policy;
mod state;

use super::agents::{Agent, OnPolicyAgent};
use super::algorithms::{self, EnvSpec, Learner};
use super::env::Envs;
use super::env::{self, VecEnv};
use super::hooks::RunHooks;
use super::marl;
pub use super::monitor::{evaluation_seed, Evaluation};
use super::monitor::{EvaluationPlan, Monitor};
use anyhow::{bail, Context, Result};
pub use on_device::{train_on_device, MAX_DEVICE_ENVS};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::path::{Path, PathBuf};
use tch::{Device, Tensor};

#[derive(Debug, Clone)]
pub struct TrainConfig {
    pub algorithm: String,
    pub env_id: String,
    /// Env steps summed over the batch of envs.
    pub total_steps: usize,
    pub seed: u64,
    pub eval_every: usize,
    /// Deterministic episodes per evaluation; every evaluation draws fresh initial states
    /// (seed `evaluation_seed(seed, k)` for the k-th), as SB3's EvalCallback does, so that no
    /// fixed handful of starts decides the run.
    pub eval_episodes: usize,
    /// Stop when an evaluation mean reaches this and a confirmation over `confirm_episodes`
    /// further fresh episodes also does (a lucky evaluation alone does not count).
    pub target_return: Option<f64>,
    pub confirm_episodes: usize,
    /// Metrics (`metrics.jsonl`), checkpoints and `config.json` go here.
    pub out_dir: Option<PathBuf>,
    pub device: Device,
    /// Prioritized replay for off-policy agents.
    pub prioritized: bool,
    /// Agent hyperparameters overriding the defaults (JSON object, by field name; off-policy
    /// agents' schedule included: `buffer_size`, `learning_starts`, `train_every`, ...).
    pub overrides: serde_json::Value,
    /// The env's parameters changed from the id's (`Envs::make_configured`; null: none).
    pub env_config: serde_json::Value,
    /// H-term weight (see `hterm`); 0 = off.
    pub h_term_lambda: f64,
    /// Continue the run checkpointed in `out_dir` (see `train`).
    pub resume: bool,
    /// Progress and evaluation callbacks, and the cancel flag (the job service's).
    pub hooks: RunHooks,
    /// The envs the run can make by id (default: `drl`'s own; `problems::envs` adds the
    /// OR-Gym ports), `gymnasium:<id>` ones with their Python.
    pub envs: Envs,
}

impl TrainConfig {
    /// When and how the run is evaluated, as the monitor takes it.
    pub(crate) fn evaluation_plan(&self) -> EvaluationPlan {
        EvaluationPlan {
            seed: self.seed,
            eval_every: self.eval_every,
            eval_episodes: self.eval_episodes,
            target_return: self.target_return,
            confirm_episodes: self.confirm_episodes,
            total_steps: self.total_steps,
        }
    }
}

impl TrainConfig {
    /// Defaults: evaluate every 5000 steps over 10 episodes, confirm a reached target over 100,
    /// CPU, uniform replay, the algorithm's hyperparameters, no H-term.
    pub fn new(algorithm: &str, env_id: &str, total_steps: usize, seed: u64) -> Self {
        TrainConfig {
            algorithm: algorithm.into(),
            env_id: env_id.into(),
            total_steps,
            seed,
            eval_every: 5_000,
            eval_episodes: 10,
            target_return: None,
            confirm_episodes: 100,
            out_dir: None,
            device: Device::Cpu,
            prioritized: false,
            overrides: json!({}),
            env_config: serde_json::Value::Null,
            h_term_lambda: 0.0,
            resume: false,
            hooks: RunHooks::default(),
            envs: Envs::default(),
        }
    }
}

/// Where a run stands; part of every checkpoint.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Progress {
    pub step: usize,
    pub episodes: usize,
    pub reached_target_at: Option<usize>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TrainOutcome {
    pub evaluations: Vec<Evaluation>,
    pub reached_target_at: Option<usize>,
    pub steps: usize,
    pub wall_s: f64,
    /// `wall_s` less the time spent evaluating.
    pub train_s: f64,
    /// Stopped by `hooks.cancel` before the budget or target.
    pub cancelled: bool,
}

/// Whether `dir` holds a checkpoint that `resume` can continue.
pub fn has_checkpoint(dir: &Path) -> bool {
    super::state::StateDict::exists(dir)
}

pub(crate) fn env_spec(env_id: &str, env: &dyn VecEnv) -> EnvSpec {
    EnvSpec {
        id: env_id.into(),
        observation_dim: env.observation_dim(),
        action_space: env.action_space(),
        agents: 1,
        state_dim: 0,
        episode_limit: 0,
        layout: env.layout(),
    }
}

/// Trains until the target return or the step budget. With `out_dir`, every evaluation writes
/// a checkpoint of the whole run; `resume` continues from the last one exactly (same weights,
/// moments, replay, envs and random streams as a run that never stopped).
pub fn train(config: &TrainConfig) -> Result<TrainOutcome> {
    let algorithm = algorithms::find(&config.algorithm)?;
    if algorithm.multi_agent {
        bail!("{} is multi-agent; train it with marl::run::train", algorithm.name);
    }
    let hyperparameters = algorithm.configure(&config.overrides)?;
    let mut env = config.envs.make_configured(&config.env_id, algorithm.num_envs, &config.env_config)?;
    algorithm.check_takes(&config.env_id, &env.action_space())?;
    let spec = env_spec(&config.env_id, env.as_ref());
    let Learner::Single(mut agent) = (algorithm.build)(&hyperparameters, &spec, config.device, config.seed)? else {
        bail!("{} built a multi-agent learner", algorithm.name);
    };
    let resumed = match &config.out_dir {
        Some(dir) if config.resume => {
            Some(super::state::StateDict::read(dir).context("resume: no whole-run checkpoint in the run folder")?)
        }
        _ => None,
    };
    let saved: Option<Progress> = resumed.as_ref().map(|s| s.get("progress")).transpose()?;
    let run_config = json!({
        "algorithm": config.algorithm, "env": config.env_id, "seed": config.seed,
        "total_steps": config.total_steps, "prioritized": config.prioritized,
        "overrides": config.overrides, "hyperparameters": hyperparameters, "env_config": config.env_config,
    });
    let plan = config.evaluation_plan();
    let mut monitor = Monitor::new(
        plan,
        config.hooks.clone(),
        config.out_dir.as_deref(),
        &run_config,
        saved.as_ref().map(|p| p.step),
    )?;
    monitor.reached_target_at = saved.as_ref().and_then(|p| p.reached_target_at);
    let mut run = state::RunState::start(config, env.as_mut(), &mut agent, resumed.as_ref())?;
    if resumed.is_some() {
        // The checkpoint restores the optimizers' learning rates as they were saved; the run's
        // hyperparameters win (PBT's explore step resumes a copied checkpoint with perturbed
        // ones: Ray users report them silently overwritten on restore).
        agent.state().set_hyperparameters(&config.overrides).context("resume: applying the hyperparameters")?;
    }
    let steps = match &mut agent {
        Agent::OffPolicy(agent) => {
            off_policy::train(config, env.as_mut(), agent.as_mut(), &mut run, &mut monitor, resumed.as_ref())?
        }
        Agent::OnPolicy(agent) => on_policy::train(config, env.as_mut(), agent.as_mut(), &mut run, &mut monitor)?,
    };
    let (wall_s, train_s) = monitor.clock();
    let reached = monitor.reached_target_at;
    let cancelled = config.hooks.cancelled() && reached.is_none() && steps < config.total_steps;
    Ok(TrainOutcome { evaluations: monitor.evaluations, reached_target_at: reached, steps, wall_s, train_s, cancelled })
}

/// Ok when `algorithm` is a single-agent algorithm of the table.
pub fn check_single_agent(algorithm: &str) -> Result<()> {
    if algorithms::find(algorithm)?.multi_agent {
        bail!("{algorithm} is multi-agent");
    }
    Ok(())
}

/// Whether a run of `algorithm` on `env_id` with `overrides` can take `patch` between
/// iterations (PBT's explore step): builds the learner on the CPU and applies it; an error names
/// a hyperparameter that shapes networks or buffers.
pub fn check_retunable(
    algorithm: &str,
    env_id: &str,
    overrides: &serde_json::Value,
    patch: &serde_json::Value,
    envs: &Envs,
) -> Result<()> {
    let algorithm = algorithms::find(algorithm)?;
    let hyperparameters = algorithm.configure(overrides)?;
    let spec = if algorithm.multi_agent {
        let env = marl::make(env_id, 1).with_context(|| format!("unknown multi-agent env '{env_id}'"))?;
        marl::run::env_spec(env_id, env.as_ref())
    } else {
        let env = envs.make_configured(env_id, 1, &serde_json::Value::Null)?;
        env_spec(env_id, env.as_ref())
    };
    match (algorithm.build)(&hyperparameters, &spec, Device::Cpu, 0)? {
        Learner::Single(mut agent) => agent.state().set_hyperparameters(patch),
        Learner::Multi(mut learner) => learner.set_hyperparameters(patch),
    }
}

/// The env parameters a run in `dir` trained on (`TrainConfig::env_config`; null: the id's).
pub fn checkpoint_env_config(dir: &Path) -> Result<serde_json::Value> {
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).context("config.json")?)?;
    Ok(saved["env_config"].clone())
}

/// Rebuilds the agent or multi-agent learner a `train --out DIR` run (or a promoted model)
/// saved and loads its weights; returns it with the env id. The networks' shapes come from an
/// env made as the run's was (`bridge` runs a `gymnasium:` env's Python).
pub fn load_checkpoint(dir: &Path, device: Device, envs: &Envs) -> Result<(Learner, String)> {
    load_checkpoint_with_spec(dir, device, envs).map(|(learner, spec)| (learner, spec.id))
}

/// `load_checkpoint` with the env's spaces the networks were rebuilt for.
pub fn load_checkpoint_with_spec(dir: &Path, device: Device, envs: &Envs) -> Result<(Learner, EnvSpec)> {
    load_checkpoint_on(dir, device, Shapes::Make(envs))
}

/// Where a rebuilt learner's network shapes come from.
#[derive(Clone, Copy)]
enum Shapes<'a> {
    /// An env made from the saved id and parameters.
    Make(&'a Envs),
    /// This env (another instance of the id, perhaps with other parameters).
    Of(&'a dyn VecEnv),
}

/// A single-agent policy saved in `dir` rebuilt for `env`, an instance of its env id with other
/// parameters (a layout-aware policy, such as the per-item knapsack scorer, takes any number of
/// items with the same weights).
pub fn load_policy_for(dir: &Path, device: Device, env: &dyn VecEnv) -> Result<Agent> {
    match load_checkpoint_on(dir, device, Shapes::Of(env))?.0 {
        Learner::Single(agent) => Ok(agent),
        Learner::Multi(_) => bail!("{} holds a multi-agent learner", dir.display()),
    }
}

fn load_checkpoint_on(dir: &Path, device: Device, on: Shapes<'_>) -> Result<(Learner, EnvSpec)> {
    let ensemble = dir.join(super::ensemble::ENSEMBLE_FILE);
    if !ensemble.exists() {
        return load_prefixed(dir, "", device, on);
    }
    let spec: super::ensemble::EnsembleSpec =
        serde_json::from_str(&std::fs::read_to_string(&ensemble)?).context("ensemble.json")?;
    let mut members = Vec::new();
    let mut env = None;
    for i in 0..spec.weights.len() {
        let prefix = super::ensemble::member_prefix(i);
        match load_prefixed(dir, &prefix, device, on).with_context(|| format!("ensemble member {i}"))? {
            (Learner::Single(agent), member_env) => {
                members.push(agent);
                env = Some(member_env);
            }
            (Learner::Multi(_), _) => bail!("ensemble member {i} is multi-agent; ensembles are single-agent"),
        }
    }
    let env = env.context("ensemble.json lists no members")?;
    let agent = super::ensemble::WeightedEnsemble::new(members, spec)?;
    Ok((Learner::Single(Agent::OffPolicy(Box::new(agent))), env))
}

/// `load_checkpoint_on` for the files named `{prefix}config.json`, `{prefix}<store>.safetensors`
/// and `{prefix}observation_norm.json` (an ensemble member's; "" for a plain checkpoint).
fn load_prefixed(dir: &Path, prefix: &str, device: Device, on: Shapes<'_>) -> Result<(Learner, EnvSpec)> {
    let file = |name: &str| dir.join(format!("{prefix}{name}"));
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file("config.json")).context("config.json")?)?;
    let text = |k: &str| saved[k].as_str().map(str::to_string).with_context(|| format!("config.json lacks {k}"));
    let (name, env_id) = (text("algorithm")?, text("env")?);
    let algorithm = algorithms::find(&name).context("config.json")?;
    let hyperparameters = algorithm.configure(&saved["overrides"])?;
    let spec = if algorithm.multi_agent {
        let env =
            marl::make(&env_id, 1).with_context(|| format!("unknown multi-agent env '{env_id}' in config.json"))?;
        marl::run::env_spec(&env_id, env.as_ref())
    } else {
        match on {
            Shapes::Of(env) => env_spec(&env_id, env),
            Shapes::Make(envs) => {
                let env = envs.make_configured(&env_id, 1, &saved["env_config"]).context("config.json")?;
                env_spec(&env_id, env.as_ref())
            }
        }
    };
    let mut learner = (algorithm.build)(&hyperparameters, &spec, device, saved["seed"].as_u64().unwrap_or(0))?;
    let stores = match &mut learner {
        Learner::Single(agent) => agent.state().var_stores(),
        Learner::Multi(learner) => learner.var_stores(),
    };
    for (name, store) in stores {
        store.load(file(&format!("{name}.safetensors"))).with_context(|| format!("loading {name}.safetensors"))?;
    }
    if let Learner::Single(Agent::OnPolicy(agent)) = &mut learner {
        if let Some(norm) = agent.observation_normalizer() {
            let text =
                std::fs::read_to_string(file(state::OBSERVATION_NORM_FILE)).context(state::OBSERVATION_NORM_FILE)?;
            *norm = serde_json::from_str(&text)?;
        }
    }
    Ok((learner, spec))
}

/// A promoted deep-RL policy as the model registry holds it (its folder rebuilds with
/// `load_checkpoint`).
pub struct DrlPolicy {
    pub env: String,
    /// The model's folder (solves rebuild the agent from it for their own env parameters).
    pub dir: std::path::PathBuf,
}

/// The deterministic actions of the single-agent policy saved in `dir` for a batch of
/// observations, each a row as wide as its env's observations (one number per discrete action, the
/// index). Ok(Err(why)) when the input does not fit the policy: a multi-agent one, or a row of
/// another width (checked before the network runs, which would panic on the shape).
pub fn policy_actions(
    dir: &Path,
    observations: &[Vec<f32>],
    envs: &Envs,
) -> Result<std::result::Result<Vec<Vec<f32>>, String>> {
    let (learner, spec) = load_checkpoint_with_spec(dir, Device::Cpu, envs)?;
    let env_id = &spec.id;
    let Learner::Single(mut agent) = learner else {
        return Ok(Err(format!("the policy for {env_id} is multi-agent: actions take one observation per agent")));
    };
    let (dim, width) = (spec.observation_dim, spec.action_space.width());
    if let Some((i, row)) = observations.iter().enumerate().find(|(_, row)| row.len() != dim) {
        return Ok(Err(format!("row {i} has {} numbers; {env_id} observations have {dim}", row.len())));
    }
    if observations.is_empty() {
        return Ok(Ok(Vec::new()));
    }
    let flat: Vec<f32> = observations.concat();
    let actions = greedy_actions(&mut agent, &flat, dim);
    Ok(Ok(actions.chunks(width).map(<[f32]>::to_vec).collect()))
}

/// Whether a run folder's file belongs to the policy (what promotion copies): the stores'
/// weights, `config.json`, the observation statistics; the whole-run state stays behind.
pub fn is_policy_file(name: &str) -> bool {
    // An ensemble's members: `member<i>.` and a policy file's name.
    let member = name
        .strip_prefix("member")
        .and_then(|rest| rest.split_once('.'))
        .and_then(|(i, rest)| (!i.is_empty() && i.bytes().all(|b| b.is_ascii_digit())).then_some(rest));
    if let Some(rest) = member {
        return is_policy_file(rest) && !rest.starts_with("member");
    }
    let weights = name.ends_with(".safetensors") && name != super::state::TENSORS_FILE;
    weights || name == "config.json" || name == state::OBSERVATION_NORM_FILE || name == super::ensemble::ENSEMBLE_FILE
}

/// Mean and std of the (team) return of `episodes` deterministic episodes of the policy saved in
/// `dir` (a checkpoint or a promoted model, ensembles included), on the CPU.
pub fn score_checkpoint(dir: &Path, episodes: usize, seed: u64, envs: &Envs) -> Result<(f64, f64)> {
    let (mut learner, env_id) = load_checkpoint(dir, Device::Cpu, envs)?;
    evaluate_learner(&mut learner, &env_id, &serde_json::Value::Null, episodes, seed, Device::Cpu, envs)
}

/// Mean and std of the (team) return of `episodes` deterministic episodes of a loaded agent.
pub fn evaluate_learner(
    learner: &mut Learner,
    env_id: &str,
    env_config: &serde_json::Value,
    episodes: usize,
    seed: u64,
    device: Device,
    envs: &Envs,
) -> Result<(f64, f64)> {
    match learner {
        Learner::Single(agent) => evaluate_agent(agent, env_id, env_config, episodes, seed, device, envs),
        Learner::Multi(learner) => marl::run::evaluate_learner(learner.as_mut(), env_id, episodes, seed),
    }
}

/// The deterministic action of an agent for observations [B, obs_dim] (normalized as it was
/// trained when it keeps statistics).
pub fn act_greedy(agent: &mut Agent, obs: &Tensor) -> Tensor {
    match agent {
        Agent::OffPolicy(a) => a.act(obs, false),
        Agent::OnPolicy(a) => {
            let input = a.observation_normalizer().map_or_else(|| obs.shallow_clone(), |n| n.normalize_tensor(obs));
            a.act(&input, false).0
        }
    }
}

/// The agent's deterministic actions for a flat batch of observations `dim` wide, on the CPU.
pub fn greedy_actions(agent: &mut Agent, obs: &[f32], dim: usize) -> Vec<f32> {
    to_vec(&act_greedy(agent, &obs_tensor(obs, dim, Device::Cpu)))
}

/// Deterministic evaluation of a single-agent agent.
pub fn evaluate_agent(
    agent: &mut Agent,
    env_id: &str,
    env_config: &serde_json::Value,
    episodes: usize,
    seed: u64,
    device: Device,
    envs: &Envs,
) -> Result<(f64, f64)> {
    match agent {
        Agent::OffPolicy(a) => evaluate(env_id, env_config, episodes, seed, device, envs, &mut |o| a.act(o, false)),
        Agent::OnPolicy(a) => evaluate_on_policy(a.as_mut(), env_id, env_config, episodes, seed, device, envs),
    }
}

pub fn obs_tensor(obs: &[f32], dim: usize, device: Device) -> Tensor {
    Tensor::from_slice(obs).view([(obs.len() / dim) as i64, dim as i64]).to(device)
}

pub fn to_vec(t: &Tensor) -> Vec<f32> {
    t.to_device(Device::Cpu).to_kind(tch::Kind::Float).flatten(0, -1).try_into().expect("f32 tensor")
}

/// Mean and std of `episodes` deterministic episodes (one per env of a fresh batch).
pub fn evaluate(
    env_id: &str,
    env_config: &serde_json::Value,
    episodes: usize,
    seed: u64,
    device: Device,
    envs: &Envs,
    act: &mut dyn FnMut(&Tensor) -> Tensor,
) -> Result<(f64, f64)> {
    let mut env = envs.make_configured(env_id, episodes, env_config)?;
    let dim = env.observation_dim();
    let returns =
        env::first_episode_returns(env.as_mut(), seed, &mut |_, obs| to_vec(&act(&obs_tensor(obs, dim, device))));
    let mean = returns.iter().sum::<f64>() / episodes as f64;
    let std = (returns.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / episodes as f64).sqrt();
    Ok((mean, std))
}

pub(crate) fn evaluate_on_policy(
    agent: &mut dyn OnPolicyAgent,
    env_id: &str,
    env_config: &serde_json::Value,
    episodes: usize,
    seed: u64,
    device: Device,
    envs: &Envs,
) -> Result<(f64, f64)> {
    let norm = agent.observation_normalizer().cloned();
    evaluate(env_id, env_config, episodes, seed, device, envs, &mut |o| {
        let input = norm.as_ref().map_or_else(|| o.shallow_clone(), |n| n.normalize_tensor(o));
        agent.act(&input, false).0
    })
}
