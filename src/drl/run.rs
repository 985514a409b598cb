//! The train-and-evaluate loop: explore, store, update, evaluate deterministically every
//! `eval_every` env steps, log metrics as JSON lines, checkpoint, stop at the target return or
//! the step budget. One loop for off-policy agents, one for on-policy agents.

use super::agents::dqn::{Dqn, DqnConfig};
use super::agents::ppo::{Ppo, PpoConfig};
use super::agents::sac::{Sac, SacConfig};
use super::agents::td3::{Td3, Td3Config};
use super::agents::{Agent, Metrics, OffPolicyAgent, OnPolicyAgent, Rollout};
use super::buffer::{PrioritizedConfig, ReplayBuffer};
use super::common::{gae, RunningNorm};
use super::env::{self, ActionSpace, VecEnv};
use super::hooks::RunHooks;
use super::hterm::{h_term_loss, HTermBuffer, HTermConfig};
use anyhow::{bail, Context, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;
use tch::{nn, Device, Tensor};

/// Every algorithm: (name, action space, family).
pub const ALGORITHMS: &[(&str, &str, &str)] = &[
    ("dqn", "discrete", "off_policy"),
    ("double_dqn", "discrete", "off_policy"),
    ("d3qn", "discrete", "off_policy"),
    ("ddpg", "continuous", "off_policy"),
    ("td3", "continuous", "off_policy"),
    ("sac", "continuous", "off_policy"),
    ("redq", "continuous", "off_policy"),
    ("a2c", "continuous", "on_policy"),
    ("ppo", "continuous", "on_policy"),
    ("a2c_discrete", "discrete", "on_policy"),
    ("ppo_discrete", "discrete", "on_policy"),
];

/// Hyperparameters of the loop around an off-policy agent.
#[derive(Debug, Clone, Serialize)]
pub struct OffPolicySchedule {
    pub buffer_size: usize,
    /// Uniformly random actions before this many env steps.
    pub learning_starts: usize,
    /// Updates happen every this many env steps ...
    pub train_every: usize,
    /// ... this many at a time (REDQ's update-to-data ratio G = 20 with train_every 1).
    pub updates_per_train: usize,
}

/// What `defaults` returns for an algorithm.
#[derive(Debug, Clone, Serialize)]
pub struct AlgorithmDefaults {
    /// The agent's config struct as JSON (the base that `--hyper` overrides field by field).
    pub hyperparameters: serde_json::Value,
    /// Off-policy agents' loop; None for on-policy agents.
    pub schedule: Option<OffPolicySchedule>,
    /// Envs stepped together.
    pub num_envs: usize,
}

/// Defaults of an algorithm; the one place that picks each algorithm's preset.
pub fn defaults(algorithm: &str) -> Option<AlgorithmDefaults> {
    let schedule = |learning_starts, train_every, updates_per_train| OffPolicySchedule {
        buffer_size: 100_000,
        learning_starts,
        train_every,
        updates_per_train,
    };
    let (hyperparameters, schedule, num_envs) = match algorithm {
        "dqn" => (json!(DqnConfig::new(false, false)), Some(schedule(1000, 256, 128)), 1),
        "double_dqn" => (json!(DqnConfig::new(true, false)), Some(schedule(1000, 256, 128)), 1),
        "d3qn" => (json!(DqnConfig::new(true, true)), Some(schedule(1000, 256, 128)), 1),
        "ddpg" => (json!(Td3Config::ddpg()), Some(schedule(1000, 1, 1)), 1),
        "td3" => (json!(Td3Config::td3()), Some(schedule(1000, 1, 1)), 1),
        "sac" => (json!(SacConfig::sac()), Some(schedule(1000, 1, 1)), 1),
        "redq" => (json!(SacConfig::redq()), Some(schedule(1000, 1, 20)), 1),
        "a2c" => (json!(PpoConfig::a2c_continuous()), None, 8),
        "a2c_discrete" => (json!(PpoConfig::a2c()), None, 8),
        "ppo" => (json!(PpoConfig::ppo_continuous()), None, 4),
        "ppo_discrete" => (json!(PpoConfig::ppo_discrete()), None, 8),
        _ => return None,
    };
    Some(AlgorithmDefaults { hyperparameters, schedule, num_envs })
}

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
    /// Agent hyperparameters overriding the defaults (JSON object, by field name).
    pub overrides: serde_json::Value,
    /// Off-policy: random-action warm-up steps instead of the algorithm's default.
    pub learning_starts: Option<usize>,
    /// H-term weight (see `hterm`); 0 = off.
    pub h_term_lambda: f64,
    /// Continue the run checkpointed in `out_dir` (see `train`).
    pub resume: bool,
    /// Progress and evaluation callbacks, and the cancel flag (the job service's).
    pub hooks: RunHooks,
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
            overrides: serde_json::json!({}),
            learning_starts: None,
            h_term_lambda: 0.0,
            resume: false,
            hooks: RunHooks::default(),
        }
    }
}

/// Where a run stands; written next to every checkpoint.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Progress {
    pub step: usize,
    pub episodes: usize,
    pub reached_target_at: Option<usize>,
}

pub const PROGRESS_FILE: &str = "progress.json";

/// Env seed of a run's k-th evaluation (disjoint from the training envs' seed).
pub fn evaluation_seed(run_seed: u64, k: usize) -> u64 {
    run_seed.wrapping_add(1_000_003).wrapping_add((k as u64).wrapping_mul(7_919))
}

/// Env seed of the confirmation episodes.
fn confirmation_seed(run_seed: u64, k: usize) -> u64 {
    evaluation_seed(run_seed, k) ^ (1 << 40)
}

/// One evaluation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Evaluation {
    pub step: usize,
    pub episodes: usize,
    /// Env seed of this evaluation's episodes.
    pub eval_seed: u64,
    pub return_mean: f64,
    pub return_std: f64,
    /// Mean and std over `confirm_episodes` more, when the mean reached the target.
    pub confirmation: Option<(f64, f64)>,
    pub wall_s: f64,
    /// Wall time spent training so far, evaluations excluded.
    pub train_s: f64,
    pub steps_per_s: f64,
    pub losses: serde_json::Value,
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

/// The algorithm's default hyperparameters with `overrides` applied, as the config type `T`.
pub(crate) fn merged<T: serde::de::DeserializeOwned>(
    mut value: serde_json::Value,
    overrides: &serde_json::Value,
) -> Result<T> {
    if let (Some(target), Some(patch)) = (value.as_object_mut(), overrides.as_object()) {
        for (k, v) in patch {
            if !target.contains_key(k) {
                bail!("unknown hyperparameter '{k}'");
            }
            target.insert(k.clone(), v.clone());
        }
    }
    Ok(serde_json::from_value(value)?)
}

/// Whether `hyperparameters` (a whole configuration) deserializes as the algorithm's config.
pub fn check_hyperparameters(algorithm: &str, hyperparameters: &serde_json::Value) -> Result<()> {
    let no_overrides = json!({});
    let base = hyperparameters.clone();
    match algorithm {
        "dqn" | "double_dqn" | "d3qn" => merged::<DqnConfig>(base, &no_overrides).map(drop),
        "ddpg" | "td3" => merged::<Td3Config>(base, &no_overrides).map(drop),
        "sac" | "redq" => merged::<SacConfig>(base, &no_overrides).map(drop),
        "ppo" | "a2c" | "ppo_discrete" | "a2c_discrete" => merged::<PpoConfig>(base, &no_overrides).map(drop),
        other => bail!("unknown algorithm '{other}'"),
    }
}

fn build_agent(config: &TrainConfig, env: &dyn VecEnv, rng: &mut ChaCha8Rng) -> Result<Agent> {
    let obs_dim = env.observation_dim();
    let space = env.action_space();
    let (name, device) = (config.algorithm.as_str(), config.device);
    let family = ALGORITHMS.iter().find(|a| a.0 == name).with_context(|| format!("unknown algorithm '{name}'"))?;
    match (&space, family.1) {
        (ActionSpace::Discrete { .. }, "continuous") | (ActionSpace::Continuous { .. }, "discrete") => {
            bail!("{name} needs {} actions; {} has {space:?}", family.1, config.env_id)
        }
        _ => {}
    }
    let agent_rng = ChaCha8Rng::seed_from_u64(rng.gen());
    let base = defaults(name).expect("listed algorithm").hyperparameters;
    let o = &config.overrides;
    Ok(match (name, &space) {
        ("dqn" | "double_dqn" | "d3qn", ActionSpace::Discrete { n }) => {
            Agent::OffPolicy(Box::new(Dqn::new(merged(base, o)?, obs_dim, *n, device, agent_rng)))
        }
        ("ddpg" | "td3", ActionSpace::Continuous { low, high }) => {
            Agent::OffPolicy(Box::new(Td3::new(merged(base, o)?, obs_dim, low, high, device)))
        }
        ("sac" | "redq", ActionSpace::Continuous { low, high }) => {
            Agent::OffPolicy(Box::new(Sac::new(merged(base, o)?, obs_dim, low, high, device)))
        }
        ("ppo" | "a2c", ActionSpace::Continuous { low, .. }) => {
            Agent::OnPolicy(Box::new(Ppo::new(merged(base, o)?, obs_dim, low.len(), None, device)))
        }
        ("ppo_discrete" | "a2c_discrete", ActionSpace::Discrete { n }) => {
            Agent::OnPolicy(Box::new(Ppo::new(merged(base, o)?, obs_dim, 1, Some(*n), device)))
        }
        _ => bail!("{name} does not support {space:?}"),
    })
}

fn obs_tensor(obs: &[f32], dim: usize, device: Device) -> Tensor {
    Tensor::from_slice(obs).view([(obs.len() / dim) as i64, dim as i64]).to(device)
}

/// What an on-policy agent sees of `obs`: normalized when it keeps running statistics, which
/// `learn` updates with this batch first.
fn on_policy_input(agent: &mut dyn OnPolicyAgent, obs: &[f32], dim: usize, device: Device, learn: bool) -> Tensor {
    let raw = obs_tensor(obs, dim, device);
    match agent.observation_normalizer() {
        Some(norm) => {
            if learn {
                norm.update(obs);
            }
            norm.normalize_tensor(&raw)
        }
        None => raw,
    }
}

const OBSERVATION_NORM_FILE: &str = "observation_norm.json";

fn to_vec(t: &Tensor) -> Vec<f32> {
    t.to_device(Device::Cpu).to_kind(tch::Kind::Float).flatten(0, -1).try_into().expect("f32 tensor")
}

/// Mean and std of `episodes` deterministic episodes (one per env of a fresh batch).
pub fn evaluate(
    env_id: &str,
    episodes: usize,
    seed: u64,
    device: Device,
    act: &mut dyn FnMut(&Tensor) -> Tensor,
) -> (f64, f64) {
    let mut env = env::make(env_id, episodes).expect("known env");
    let dim = env.observation_dim();
    let mut obs = env.reset(seed);
    let mut returns = vec![0.0f64; episodes];
    let mut finished = vec![false; episodes];
    while finished.iter().any(|f| !f) {
        let actions = to_vec(&act(&obs_tensor(&obs, dim, device)));
        let step = env.step(&actions);
        for i in 0..episodes {
            if !finished[i] {
                returns[i] += f64::from(step.rewards[i]);
                finished[i] = step.terminated[i] || step.truncated[i];
            }
        }
        obs = step.observations;
    }
    let mean = returns.iter().sum::<f64>() / episodes as f64;
    let std = (returns.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / episodes as f64).sqrt();
    (mean, std)
}

/// Per-env running episodes, handed to the H-term buffer when they finish.
struct EpisodeRecorder {
    obs: Vec<Vec<f32>>,
    actions: Vec<Vec<f32>>,
    rewards: Vec<Vec<f32>>,
}

impl EpisodeRecorder {
    fn new(envs: usize) -> Self {
        EpisodeRecorder {
            obs: vec![Vec::new(); envs],
            actions: vec![Vec::new(); envs],
            rewards: vec![Vec::new(); envs],
        }
    }

    fn record(&mut self, i: usize, obs: &[f32], action: &[f32], reward: f32, done: bool, buffer: &mut HTermBuffer) {
        if !buffer.enabled() {
            return;
        }
        self.obs[i].extend_from_slice(obs);
        self.actions[i].extend_from_slice(action);
        self.rewards[i].push(reward);
        if done {
            let rewards = std::mem::take(&mut self.rewards[i]);
            buffer.push(std::mem::take(&mut self.obs[i]), std::mem::take(&mut self.actions[i]), &rewards);
        }
    }
}

/// One H-term actor step, when enabled and trajectories are stored.
fn h_term_step(
    buffer: &HTermBuffer,
    rng: &mut ChaCha8Rng,
    device: Device,
    log_prob: &dyn Fn(&Tensor, &Tensor) -> Option<Tensor>,
) -> Option<Tensor> {
    if !buffer.enabled() {
        return None;
    }
    let windows = buffer.sample(rng, device)?;
    let log_probs = log_prob(&windows.obs, &windows.actions)?;
    Some(h_term_loss(&windows, &log_probs, buffer.lambda()))
}

fn random_actions(space: &ActionSpace, count: usize, rng: &mut ChaCha8Rng) -> Vec<f32> {
    match space {
        ActionSpace::Discrete { n } => (0..count).map(|_| rng.gen_range(0..*n) as f32).collect(),
        ActionSpace::Continuous { low, high } => (0..count)
            .flat_map(|_| low.iter().zip(high).map(|(l, h)| rng.gen_range(*l..=*h)).collect::<Vec<_>>())
            .collect(),
    }
}

struct Logger {
    file: Option<std::fs::File>,
    start: Instant,
    /// Seconds spent in evaluations.
    evaluating_s: f64,
    evaluations: Vec<Evaluation>,
    /// Checkpoints go here after every evaluation.
    out_dir: Option<PathBuf>,
}

impl Logger {
    /// The evaluation at `step` (on the evaluation clock, recorded); true when the target is
    /// reached, i.e. the mean and then the confirmation's mean are both at least the target.
    /// `evaluate(episodes, seed)` returns (mean, std) of deterministic episodes.
    fn evaluate(
        &mut self,
        config: &TrainConfig,
        step: usize,
        episodes: usize,
        losses: &Metrics,
        evaluate: &mut dyn FnMut(usize, u64) -> (f64, f64),
    ) -> Result<bool> {
        let started = Instant::now();
        let k = self.evaluations.len();
        let eval_seed = evaluation_seed(config.seed, k);
        let result = evaluate(config.eval_episodes, eval_seed);
        let confirmation = match config.target_return {
            Some(target) if result.0 >= target && config.confirm_episodes > 0 => {
                Some(evaluate(config.confirm_episodes, confirmation_seed(config.seed, k)))
            }
            _ => None,
        };
        self.evaluating_s += started.elapsed().as_secs_f64();
        let reached = config.target_return.is_some_and(|t| result.0 >= t && confirmation.is_none_or(|c| c.0 >= t));
        self.record(step, episodes, eval_seed, result, confirmation, losses)?;
        config.hooks.evaluation(self.evaluations.last().expect("just recorded"));
        Ok(reached)
    }

    fn record(
        &mut self,
        step: usize,
        episodes: usize,
        eval_seed: u64,
        (mean, std): (f64, f64),
        confirmation: Option<(f64, f64)>,
        losses: &Metrics,
    ) -> Result<()> {
        let wall_s = self.start.elapsed().as_secs_f64();
        let train_s = wall_s - self.evaluating_s;
        let evaluation = Evaluation {
            step,
            episodes,
            eval_seed,
            return_mean: mean,
            return_std: std,
            confirmation,
            wall_s,
            train_s,
            steps_per_s: step as f64 / train_s.max(1e-9),
            losses: serde_json::Value::Object(losses.iter().map(|(k, v)| (k.to_string(), json!(v))).collect()),
        };
        if let Some(file) = &mut self.file {
            writeln!(file, "{}", serde_json::to_string(&evaluation)?)?;
        }
        tracing::info!(step, mean, std, "evaluation");
        self.evaluations.push(evaluation);
        Ok(())
    }
}

/// Creates a run folder: `config.json` (what `load_checkpoint` rebuilds from) and an empty
/// `metrics.jsonl`, returned for appending.
pub(crate) fn create_run_dir(dir: &std::path::Path, config: &serde_json::Value) -> Result<std::fs::File> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("config.json"), serde_json::to_string_pretty(config)?)?;
    Ok(std::fs::File::create(dir.join("metrics.jsonl"))?)
}

/// Trains until the target return or the step budget. With `out_dir`, every evaluation also
/// writes a checkpoint (weights, observation statistics, `progress.json`); `resume` continues
/// from the last one: weights, statistics, step and evaluation counters and the metrics log
/// carry over, while the replay buffer and the optimizers' moments start empty (an off-policy
/// agent first refills `learning_starts` transitions with its own policy before updating).
pub fn train(config: &TrainConfig) -> Result<TrainOutcome> {
    let AlgorithmDefaults { mut schedule, num_envs, .. } = defaults(&config.algorithm)
        .with_context(|| crate::suggest::unknown("algorithm", &config.algorithm, super::algorithm_names()))?;
    if let (Some(s), Some(warmup)) = (schedule.as_mut(), config.learning_starts) {
        s.learning_starts = warmup;
    }
    tch::manual_seed(config.seed as i64);
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    let mut env = env::make(&config.env_id, num_envs)
        .with_context(|| crate::suggest::unknown("env", &config.env_id, env::ENV_IDS.iter().copied()))?;
    let mut agent = build_agent(config, env.as_ref(), &mut rng)?;
    let (mut start, mut evaluations) = (Progress::default(), Vec::new());
    let file = match &config.out_dir {
        Some(dir) if config.resume => {
            start = serde_json::from_str(
                &std::fs::read_to_string(dir.join(PROGRESS_FILE)).context("resume: progress.json")?,
            )?;
            load_weights(&mut agent, dir)?;
            let metrics = std::fs::read_to_string(dir.join("metrics.jsonl")).unwrap_or_default();
            evaluations = metrics.lines().map(serde_json::from_str).collect::<Result<Vec<Evaluation>, _>>()?;
            // Fresh streams after a resume, still fixed by (seed, step).
            tch::manual_seed((config.seed ^ start.step as u64) as i64);
            rng = ChaCha8Rng::seed_from_u64(config.seed ^ (start.step as u64).rotate_left(32));
            Some(std::fs::OpenOptions::new().append(true).create(true).open(dir.join("metrics.jsonl"))?)
        }
        Some(dir) => Some(create_run_dir(
            dir,
            &json!({
                "algorithm": config.algorithm, "env": config.env_id, "seed": config.seed,
                "total_steps": config.total_steps, "prioritized": config.prioritized,
                "overrides": config.overrides, "schedule": schedule,
            }),
        )?),
        None => None,
    };
    let mut logger =
        Logger { file, start: Instant::now(), evaluating_s: 0.0, evaluations, out_dir: config.out_dir.clone() };
    let mut reached = start.reached_target_at;
    let steps = if reached.is_some() {
        start.step
    } else {
        match (&mut agent, schedule) {
            (Agent::OffPolicy(agent), Some(schedule)) => train_off_policy(
                config,
                env.as_mut(),
                agent.as_mut(),
                &schedule,
                &mut rng,
                &mut logger,
                &start,
                &mut reached,
            )?,
            (Agent::OnPolicy(agent), None) => {
                train_on_policy(config, env.as_mut(), agent.as_mut(), &mut logger, &start, &mut reached)?
            }
            _ => bail!("inconsistent algorithm table"),
        }
    };
    if let Some(dir) = &config.out_dir {
        // The loops checkpointed at their last evaluation; this covers a run resumed after it
        // had already reached its target.
        save_checkpoint(&mut agent, dir)?;
    }
    let wall_s = logger.start.elapsed().as_secs_f64();
    let train_s = wall_s - logger.evaluating_s;
    let cancelled = config.hooks.cancelled() && reached.is_none() && steps < config.total_steps;
    Ok(TrainOutcome { evaluations: logger.evaluations, reached_target_at: reached, steps, wall_s, train_s, cancelled })
}

/// Rebuilds the agent a `train --out DIR` run saved and loads its weights; returns it with
/// the env id.
pub fn load_checkpoint(dir: &std::path::Path, device: Device) -> Result<(Agent, String)> {
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).context("config.json")?)?;
    let text = |k: &str| saved[k].as_str().map(str::to_string).with_context(|| format!("config.json lacks {k}"));
    let config = TrainConfig {
        device,
        overrides: saved["overrides"].clone(),
        ..TrainConfig::new(&text("algorithm")?, &text("env")?, 0, saved["seed"].as_u64().unwrap_or(0))
    };
    let num_envs = defaults(&config.algorithm).context("unknown algorithm in config.json")?.num_envs;
    let env = env::make(&config.env_id, num_envs).context("unknown env in config.json")?;
    let mut agent = build_agent(&config, env.as_ref(), &mut ChaCha8Rng::seed_from_u64(config.seed))?;
    load_weights(&mut agent, dir)?;
    Ok((agent, config.env_id))
}

/// Loads what `save_checkpoint` wrote into an agent built with the same configuration.
fn load_weights(agent: &mut Agent, dir: &std::path::Path) -> Result<()> {
    let stores = match agent {
        Agent::OffPolicy(a) => a.var_stores(),
        Agent::OnPolicy(a) => a.var_stores(),
    };
    for (name, store) in stores {
        store.load(dir.join(format!("{name}.safetensors"))).with_context(|| format!("loading {name}.safetensors"))?;
    }
    if let Agent::OnPolicy(a) = agent {
        if let Some(norm) = a.observation_normalizer() {
            let text = std::fs::read_to_string(dir.join(OBSERVATION_NORM_FILE)).context(OBSERVATION_NORM_FILE)?;
            *norm = serde_json::from_str(&text)?;
        }
    }
    Ok(())
}

/// Deterministic evaluation of a loaded agent.
pub fn evaluate_agent(agent: &mut Agent, env_id: &str, episodes: usize, seed: u64, device: Device) -> (f64, f64) {
    match agent {
        Agent::OffPolicy(a) => evaluate(env_id, episodes, seed, device, &mut |o| a.act(o, false)),
        Agent::OnPolicy(a) => evaluate_on_policy(a.as_mut(), env_id, episodes, seed, device),
    }
}

fn evaluate_on_policy(
    agent: &mut dyn OnPolicyAgent,
    env_id: &str,
    episodes: usize,
    seed: u64,
    device: Device,
) -> (f64, f64) {
    let norm = agent.observation_normalizer().cloned();
    evaluate(env_id, episodes, seed, device, &mut |o| {
        let input = norm.as_ref().map_or_else(|| o.shallow_clone(), |n| n.normalize_tensor(o));
        agent.act(&input, false).0
    })
}

/// Writes every VarStore as `<name>.safetensors` (and the observation statistics as JSON).
pub fn save_checkpoint(agent: &mut Agent, dir: &std::path::Path) -> Result<()> {
    match agent {
        Agent::OffPolicy(a) => save_stores(a.var_stores(), dir),
        Agent::OnPolicy(a) => {
            save_observation_norm(a.observation_normalizer(), dir)?;
            save_stores(a.var_stores(), dir)
        }
    }
}

fn save_stores(stores: Vec<(&'static str, &mut nn::VarStore)>, dir: &std::path::Path) -> Result<()> {
    for (name, store) in stores {
        store.save(dir.join(format!("{name}.safetensors")))?;
    }
    Ok(())
}

fn save_observation_norm(norm: Option<&mut RunningNorm>, dir: &std::path::Path) -> Result<()> {
    if let Some(norm) = norm {
        std::fs::write(dir.join(OBSERVATION_NORM_FILE), serde_json::to_string(norm)?)?;
    }
    Ok(())
}

/// `progress.json`, written to a temporary name and renamed after the weights, so that a crash
/// leaves the previous progress, never a torn one.
fn write_progress(dir: &std::path::Path, progress: &Progress) -> Result<()> {
    let tmp = dir.join(format!("{PROGRESS_FILE}.tmp"));
    std::fs::write(&tmp, serde_json::to_string(progress)?)?;
    std::fs::rename(tmp, dir.join(PROGRESS_FILE))?;
    Ok(())
}

/// (first observations, step, episodes, next evaluation step) of a fresh or resumed run; a
/// resumed run's envs restart from episodes seeded by (seed, step).
fn resume_point(config: &TrainConfig, env: &mut dyn VecEnv, start: &Progress) -> (Vec<f32>, usize, usize, usize) {
    let seed = if start.step == 0 { config.seed } else { config.seed ^ (start.step as u64).rotate_left(17) };
    let next_eval = (start.step / config.eval_every.max(1) + 1) * config.eval_every.max(1);
    (env.reset(seed), start.step, start.episodes, next_eval)
}

#[allow(clippy::too_many_arguments)]
fn train_off_policy(
    config: &TrainConfig,
    env: &mut dyn VecEnv,
    agent: &mut dyn OffPolicyAgent,
    schedule: &OffPolicySchedule,
    rng: &mut ChaCha8Rng,
    logger: &mut Logger,
    start: &Progress,
    reached: &mut Option<usize>,
) -> Result<usize> {
    let (dim, space, b) = (env.observation_dim(), env.action_space(), env.num_envs());
    let width = space.width();
    let prioritized =
        config.prioritized.then(|| PrioritizedConfig { beta_steps: config.total_steps, ..Default::default() });
    let mut buffer = ReplayBuffer::new(schedule.buffer_size, dim, width, prioritized);
    let mut h_buffer = HTermBuffer::new(HTermConfig { lambda: config.h_term_lambda, ..Default::default() }, dim, width);
    let mut recorder = EpisodeRecorder::new(b);
    let (mut obs, mut step, mut episodes, mut next_eval) = resume_point(config, env, start);
    // After a resume the buffer is empty: refill it before updating.
    let updates_from = if start.step > 0 { start.step + schedule.learning_starts } else { schedule.learning_starts };
    let mut losses: Metrics = Vec::new();
    while step < config.total_steps && !config.hooks.cancelled() {
        config.hooks.progress(step);
        let actions = if step < schedule.learning_starts {
            random_actions(&space, b, rng)
        } else {
            to_vec(&agent.act(&obs_tensor(&obs, dim, config.device), true))
        };
        let result = env.step(&actions);
        for i in 0..b {
            let done = result.terminated[i] || result.truncated[i];
            let next = if done {
                &result.final_observations[i * dim..(i + 1) * dim]
            } else {
                &result.observations[i * dim..(i + 1) * dim]
            };
            buffer.push(
                &obs[i * dim..(i + 1) * dim],
                &actions[i * width..(i + 1) * width],
                result.rewards[i],
                next,
                result.terminated[i],
            );
            recorder.record(
                i,
                &obs[i * dim..(i + 1) * dim],
                &actions[i * width..(i + 1) * width],
                result.rewards[i],
                done,
                &mut h_buffer,
            );
            episodes += usize::from(done);
        }
        obs = result.observations;
        let before = step;
        step += b;
        agent.on_env_steps(step);
        if step >= updates_from && !buffer.is_empty() && before / schedule.train_every != step / schedule.train_every {
            for _ in 0..schedule.updates_per_train {
                losses = agent.update(&mut buffer, rng);
            }
            if let Some(loss) = h_term_step(&h_buffer, rng, config.device, &|o, a| agent.actor_log_prob(o, a)) {
                agent.actor_step(&loss);
                losses.push(("h_term_loss", loss.double_value(&[])));
            }
        }
        if step >= next_eval || step >= config.total_steps {
            next_eval += config.eval_every;
            let mut run_episodes =
                |n, seed| evaluate(&config.env_id, n, seed, config.device, &mut |o| agent.act(o, false));
            let done = logger.evaluate(config, step, episodes, &losses, &mut run_episodes)?;
            if done {
                *reached = Some(step);
            }
            if let Some(dir) = &logger.out_dir {
                save_stores(agent.var_stores(), dir)?;
                write_progress(dir, &Progress { step, episodes, reached_target_at: *reached })?;
            }
            if done {
                break;
            }
        }
    }
    Ok(step)
}

fn train_on_policy(
    config: &TrainConfig,
    env: &mut dyn VecEnv,
    agent: &mut dyn OnPolicyAgent,
    logger: &mut Logger,
    start: &Progress,
    reached: &mut Option<usize>,
) -> Result<usize> {
    let (dim, b, device) = (env.observation_dim(), env.num_envs(), config.device);
    let width = env.action_space().width();
    let mut h_buffer = HTermBuffer::new(HTermConfig { lambda: config.h_term_lambda, ..Default::default() }, dim, width);
    let mut recorder = EpisodeRecorder::new(b);
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed ^ 0x4854);
    let (gamma, lambda) = agent.discount();
    let reward_scale = agent.reward_scale();
    let (mut obs, mut step, mut episodes, mut next_eval) = resume_point(config, env, start);
    while step < config.total_steps && !config.hooks.cancelled() {
        config.hooks.progress(step);
        let horizon = agent.rollout_steps();
        let (mut all_obs, mut all_actions, mut all_log_probs, mut all_values) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut rewards, mut next_values, mut terminated, mut done) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..horizon {
            let input = on_policy_input(agent, &obs, dim, device, true);
            let (actions, log_probs, values) = agent.act(&input, true);
            let action_vec = to_vec(&actions);
            let result = env.step(&action_vec);
            // V of the true next state: the final observation where an episode just ended.
            let mut true_next = result.observations.clone();
            for i in 0..b {
                let done = result.terminated[i] || result.truncated[i];
                if done {
                    true_next[i * dim..(i + 1) * dim]
                        .copy_from_slice(&result.final_observations[i * dim..(i + 1) * dim]);
                    episodes += 1;
                }
                recorder.record(
                    i,
                    &obs[i * dim..(i + 1) * dim],
                    &action_vec[i * width..(i + 1) * width],
                    result.rewards[i],
                    done,
                    &mut h_buffer,
                );
            }
            let next_input = on_policy_input(agent, &true_next, dim, device, false);
            next_values.extend(to_vec(&agent.value(&next_input)));
            all_obs.push(input);
            all_actions.push(actions);
            all_log_probs.push(log_probs);
            all_values.extend(to_vec(&values));
            rewards.extend(result.rewards.iter().map(|r| r * reward_scale));
            terminated.extend(&result.terminated);
            done.extend(result.terminated.iter().zip(&result.truncated).map(|(t, u)| *t || *u));
            obs = result.observations;
            step += b;
        }
        let (advantages, returns) = gae(&rewards, &all_values, &next_values, &terminated, &done, b, gamma, lambda);
        let rollout = Rollout {
            obs: Tensor::cat(&all_obs, 0),
            actions: Tensor::cat(&all_actions, 0),
            log_probs: Tensor::cat(&all_log_probs, 0),
            values: Tensor::from_slice(&all_values).to(device),
            advantages: Tensor::from_slice(&advantages).to(device),
            returns: Tensor::from_slice(&returns).to(device),
        };
        let mut losses = agent.update(&rollout);
        if let Some(loss) = h_term_step(&h_buffer, &mut rng, device, &|o, a| agent.actor_log_prob(o, a)) {
            agent.actor_step(&loss);
            losses.push(("h_term_loss", loss.double_value(&[])));
        }
        if step >= next_eval || step >= config.total_steps {
            next_eval += config.eval_every;
            let mut run_episodes = |n, seed| evaluate_on_policy(agent, &config.env_id, n, seed, device);
            let done = logger.evaluate(config, step, episodes, &losses, &mut run_episodes)?;
            if done {
                *reached = Some(step);
            }
            if let Some(dir) = &logger.out_dir {
                save_observation_norm(agent.observation_normalizer(), dir)?;
                save_stores(agent.var_stores(), dir)?;
                write_progress(dir, &Progress { step, episodes, reached_target_at: *reached })?;
            }
            if done {
                break;
            }
        }
    }
    Ok(step)
}
