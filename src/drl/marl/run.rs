//! The multi-agent run loop: a batch of B envs plays whole episodes, the learner sees every
//! transition (and updates when its schedule says), deterministic evaluations on fresh episodes
//! report the team return (the sum over agents and steps of the agents' rewards).

use super::heuristic::{heuristic_actions, random_actions};
use super::maddpg::{Maddpg, MaddpgConfig};
use super::mappo::{Mappo, MappoConfig};
use super::qmix::{Mixer, Qmix, QmixConfig};
use super::simple_spread::SimpleSpread;
use super::{make, MultiAgentEnv, MultiAgentObservation, MultiAgentStep};
use crate::drl::agents::Metrics;
use crate::drl::env::ActionSpace;
use crate::drl::hooks::RunHooks;
use crate::drl::run::{create_run_dir, merged};
use anyhow::{bail, Context, Result};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;
use tch::{nn, Device, Tensor};

/// A learner's per-episode acting state (recurrent hidden state, last actions), one per batch.
#[derive(Default)]
pub struct Memory {
    pub hidden: Option<Tensor>,
    pub last_actions: Option<Tensor>,
    /// Steps taken so far in the current episodes.
    pub step: usize,
}

pub trait MultiAgentLearner {
    /// Fresh acting state for a batch of `b` envs starting episodes.
    fn begin(&self, _b: usize) -> Memory {
        Memory::default()
    }
    /// Joint actions [B, N, width]; `explore` = the training behaviour, else greedy/mean.
    fn act(&mut self, observation: &MultiAgentObservation, memory: &mut Memory, explore: bool) -> Vec<f32>;
    /// One batch transition (from `before` under `actions`); learns when its schedule says so
    /// and returns that update's metrics (empty otherwise).
    fn observe(&mut self, before: &MultiAgentObservation, actions: &[f32], step: &MultiAgentStep) -> Metrics;
    fn var_stores(&mut self) -> Vec<(&'static str, &mut nn::VarStore)>;
}

/// (name, action spaces, family).
pub const ALGORITHMS: &[(&str, &str, &str)] = &[
    ("vdn", "discrete", "value_decomposition"),
    ("qmix", "discrete", "value_decomposition"),
    ("maddpg", "discrete|continuous", "centralized_critic"),
    ("matd3", "discrete|continuous", "centralized_critic"),
    ("mappo", "discrete|continuous", "on_policy"),
];

pub fn is_multi_agent(algorithm: &str) -> bool {
    ALGORITHMS.iter().any(|a| a.0 == algorithm)
}

/// The algorithm's default hyperparameters and batch size of envs.
pub fn defaults(algorithm: &str) -> Option<(serde_json::Value, usize)> {
    Some(match algorithm {
        "vdn" => (json!(QmixConfig::new(Mixer::Vdn)), 8),
        "qmix" => (json!(QmixConfig::new(Mixer::Qmix)), 8),
        "maddpg" => (json!(MaddpgConfig::maddpg()), 8),
        "matd3" => (json!(MaddpgConfig::matd3()), 8),
        "mappo" => (json!(MappoConfig::default()), 32),
        _ => return None,
    })
}

/// Whether `hyperparameters` (a whole configuration) deserializes as the algorithm's config.
pub fn check_hyperparameters(algorithm: &str, hyperparameters: &serde_json::Value) -> Result<()> {
    let (no_overrides, base) = (json!({}), hyperparameters.clone());
    match algorithm {
        "vdn" | "qmix" => merged::<QmixConfig>(base, &no_overrides).map(drop),
        "maddpg" | "matd3" => merged::<MaddpgConfig>(base, &no_overrides).map(drop),
        "mappo" => merged::<MappoConfig>(base, &no_overrides).map(drop),
        other => bail!("unknown algorithm '{other}'"),
    }
}

#[derive(Debug, Clone)]
pub struct MarlConfig {
    pub algorithm: String,
    pub env_id: String,
    pub total_steps: usize,
    pub seed: u64,
    pub eval_every: usize,
    pub eval_episodes: usize,
    pub overrides: serde_json::Value,
    /// Envs stepped as one batch (None = the algorithm's default from `defaults`).
    pub num_envs: Option<usize>,
    pub out_dir: Option<PathBuf>,
    pub device: Device,
    /// Progress and evaluation callbacks, and the cancel flag (the job service's).
    pub hooks: RunHooks,
}

impl MarlConfig {
    pub fn new(algorithm: &str, env_id: &str, total_steps: usize, seed: u64) -> Self {
        MarlConfig {
            algorithm: algorithm.into(),
            env_id: env_id.into(),
            total_steps,
            seed,
            eval_every: 10_000,
            eval_episodes: 32,
            overrides: json!({}),
            num_envs: None,
            out_dir: None,
            device: Device::Cpu,
            hooks: RunHooks::default(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct MarlEvaluation {
    pub step: usize,
    pub episodes: usize,
    pub return_mean: f64,
    pub return_std: f64,
    pub wall_s: f64,
    pub losses: serde_json::Value,
}

#[derive(Debug, Clone, Serialize)]
pub struct MarlOutcome {
    pub evaluations: Vec<MarlEvaluation>,
    pub steps: usize,
    pub wall_s: f64,
    /// Stopped by `hooks.cancel` before the budget.
    pub cancelled: bool,
}

fn build(config: &MarlConfig, env: &dyn MultiAgentEnv) -> Result<Box<dyn MultiAgentLearner>> {
    let (base, _) = defaults(&config.algorithm).with_context(|| format!("unknown algorithm '{}'", config.algorithm))?;
    let (n, o, s) = (env.num_agents(), env.observation_dim(), env.state_dim());
    let space = env.action_space();
    let o_ = &config.overrides;
    Ok(match (config.algorithm.as_str(), &space) {
        ("vdn" | "qmix", ActionSpace::Discrete { n: a }) => {
            Box::new(Qmix::new(merged(base, o_)?, (n, o, s, *a), env.episode_limit(), config.device, config.seed))
        }
        ("vdn" | "qmix", _) => bail!("{} needs discrete actions; {} is continuous", config.algorithm, config.env_id),
        ("maddpg" | "matd3", _) => {
            Box::new(Maddpg::new(merged(base, o_)?, (n, o, s), &space, config.device, config.seed))
        }
        ("mappo", _) => Box::new(Mappo::new(merged(base, o_)?, (n, o, s), &space, env.episode_limit(), config.device)),
        (other, _) => bail!("unknown algorithm '{other}'"),
    })
}

/// Env seed of the k-th batch of training episodes, and of the k-th evaluation.
fn episode_seed(seed: u64, k: usize) -> u64 {
    seed.wrapping_mul(0x9E37_79B9).wrapping_add(k as u64)
}

pub fn evaluation_seed(seed: u64, k: usize) -> u64 {
    seed.wrapping_add(1_000_003).wrapping_add(k as u64 * 7_919)
}

/// Mean and std of the team return over `episodes` episodes (one per env of a fresh batch)
/// under `policy(observation, env)`.
pub fn evaluate_with(
    env: &mut dyn MultiAgentEnv,
    seed: u64,
    policy: &mut dyn FnMut(&MultiAgentObservation, &dyn MultiAgentEnv) -> Vec<f32>,
) -> (f64, f64) {
    let b = env.num_envs();
    let mut observation = env.reset(seed);
    let mut returns = vec![0.0f64; b];
    let mut ended = vec![false; b];
    while !ended.iter().all(|&e| e) {
        let actions = policy(&observation, &*env);
        let step = env.step(&actions);
        for i in 0..b {
            if !ended[i] {
                returns[i] += f64::from(step.team_rewards[i]);
                ended[i] = step.terminated[i] || step.truncated[i];
            }
        }
        observation = step.next;
    }
    mean_std(&returns)
}

fn mean_std(values: &[f64]) -> (f64, f64) {
    let n = values.len().max(1) as f64;
    let mean = values.iter().sum::<f64>() / n;
    (mean, (values.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / n).sqrt())
}

fn evaluate_learner(
    learner: &mut dyn MultiAgentLearner,
    env_id: &str,
    episodes: usize,
    seed: u64,
) -> Result<(f64, f64)> {
    let mut env = make(env_id, episodes).context("known env")?;
    let mut memory = learner.begin(episodes);
    Ok(evaluate_with(env.as_mut(), seed, &mut |obs, _| learner.act(obs, &mut memory, false)))
}

/// Team return of uniformly random joint actions.
pub fn random_policy_return(env_id: &str, episodes: usize, seed: u64) -> Result<(f64, f64)> {
    let mut env = make(env_id, episodes).context("known env")?;
    let continuous = matches!(env.action_space(), ActionSpace::Continuous { .. });
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let agents = env.num_agents();
    Ok(evaluate_with(env.as_mut(), seed, &mut |_, _| random_actions(episodes * agents, continuous, &mut rng)))
}

/// Team return of the matching heuristic (simple_spread only).
pub fn heuristic_return(env_id: &str, episodes: usize, seed: u64) -> Result<(f64, f64)> {
    let continuous = match env_id {
        "simple_spread" => false,
        "simple_spread_continuous" => true,
        other => bail!("no heuristic for {other}"),
    };
    let mut env = SimpleSpread::new(episodes, continuous);
    env.reset(seed);
    let mut returns = vec![0.0f64; episodes];
    loop {
        let actions: Vec<f32> = env.worlds().iter().flat_map(|w| heuristic_actions(w, continuous)).collect();
        let step = env.step(&actions);
        for (r, t) in returns.iter_mut().zip(&step.team_rewards) {
            *r += f64::from(*t);
        }
        if step.truncated[0] || step.terminated[0] {
            break;
        }
    }
    Ok(mean_std(&returns))
}

/// Trains until the step budget; evaluates every `eval_every` steps and at the end.
pub fn train(config: &MarlConfig) -> Result<MarlOutcome> {
    let (_, default_envs) = defaults(&config.algorithm)
        .with_context(|| crate::suggest::unknown("algorithm", &config.algorithm, crate::drl::algorithm_names()))?;
    let num_envs = config.num_envs.unwrap_or(default_envs);
    anyhow::ensure!(num_envs >= 1, "num_envs must be at least 1");
    tch::manual_seed(config.seed as i64);
    let mut env = make(&config.env_id, num_envs)
        .with_context(|| crate::suggest::unknown("env", &config.env_id, super::ENV_IDS.iter().copied()))?;
    let mut learner = build(config, env.as_ref())?;
    let mut file = match &config.out_dir {
        Some(dir) => Some(create_run_dir(
            dir,
            &json!({
                "algorithm": config.algorithm, "env": config.env_id, "seed": config.seed,
                "total_steps": config.total_steps, "num_envs": num_envs, "overrides": config.overrides,
            }),
        )?),
        None => None,
    };
    let start = Instant::now();
    let b = env.num_envs();
    let (mut step, mut episodes, mut next_eval, mut batches) = (0usize, 0usize, config.eval_every, 0usize);
    let mut observation = env.reset(episode_seed(config.seed, 0));
    let mut memory = learner.begin(b);
    let mut losses: Metrics = Vec::new();
    let mut evaluations = Vec::new();
    while step < config.total_steps && !config.hooks.cancelled() {
        config.hooks.progress(step);
        let actions = learner.act(&observation, &mut memory, true);
        let result = env.step(&actions);
        let metrics = learner.observe(&observation, &actions, &result);
        if !metrics.is_empty() {
            losses = metrics;
        }
        step += b;
        if result.terminated.iter().zip(&result.truncated).all(|(t, u)| *t || *u) {
            episodes += b;
            batches += 1;
            observation = env.reset(episode_seed(config.seed, batches));
            memory = learner.begin(b);
        } else {
            observation = result.next;
        }
        if step >= next_eval || step >= config.total_steps {
            next_eval += config.eval_every;
            let (mean, std) = evaluate_learner(
                learner.as_mut(),
                &config.env_id,
                config.eval_episodes,
                evaluation_seed(config.seed, evaluations.len()),
            )?;
            let evaluation = MarlEvaluation {
                step,
                episodes,
                return_mean: mean,
                return_std: std,
                wall_s: start.elapsed().as_secs_f64(),
                losses: serde_json::Value::Object(losses.iter().map(|(k, v)| (k.to_string(), json!(v))).collect()),
            };
            tracing::info!(step, mean, std, "evaluation");
            if let Some(f) = &mut file {
                writeln!(f, "{}", serde_json::to_string(&evaluation)?)?;
            }
            config.hooks.evaluation(&evaluation);
            evaluations.push(evaluation);
        }
    }
    if let Some(dir) = &config.out_dir {
        for (name, store) in learner.var_stores() {
            store.save(dir.join(format!("{name}.safetensors")))?;
        }
    }
    let cancelled = step < config.total_steps;
    Ok(MarlOutcome { evaluations, steps: step, wall_s: start.elapsed().as_secs_f64(), cancelled })
}
