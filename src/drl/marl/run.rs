//! The multi-agent run loop: a batch of B envs plays whole episodes, the learner sees every
//! transition (and updates when its schedule says), and at the end of every batch of episodes
//! the shared `Monitor::after_iteration` evaluates when due (deterministic evaluations on fresh
//! episodes report the team return, the sum over agents and steps of the agents' rewards) and
//! checkpoints the whole run (learner, buffers, generators, counters), so that `resume`
//! continues exactly. Evaluations therefore fall on the first episode boundary at or after each
//! multiple of `eval_every`.

use super::heuristic::{heuristic_actions, random_actions};
use super::simple_spread::SimpleSpread;
use super::{make, MultiAgentEnv, MultiAgentObservation, MultiAgentStep};
use crate::drl::agents::{AgentState, Metrics};
use crate::drl::algorithms::{self, EnvSpec, Learner};
use crate::drl::env::ActionSpace;
use crate::drl::hooks::RunHooks;
pub use crate::drl::monitor::{evaluation_seed, Evaluation};
use crate::drl::monitor::{EvaluationPlan, Monitor};
use crate::drl::state::StateDict;
use anyhow::{bail, Context, Result};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use serde_json::json;
use std::path::{Path, PathBuf};
use tch::{Device, Tensor};

/// A learner's per-episode acting state (recurrent hidden state, last actions), one per batch.
#[derive(Default)]
pub struct Memory {
    pub hidden: Option<Tensor>,
    pub last_actions: Option<Tensor>,
    /// Steps taken so far in the current episodes.
    pub step: usize,
}

pub trait MultiAgentLearner: AgentState {
    /// Fresh acting state for a batch of `b` envs starting episodes.
    fn begin(&self, _b: usize) -> Memory {
        Memory::default()
    }
    /// Joint actions [B, N, width]; `explore` = the training behaviour, else greedy/mean.
    fn act(&mut self, observation: &MultiAgentObservation, memory: &mut Memory, explore: bool) -> Vec<f32>;
    /// One batch transition (from `before` under `actions`); learns when its schedule says so
    /// and returns that update's metrics (empty otherwise).
    fn observe(&mut self, before: &MultiAgentObservation, actions: &[f32], step: &MultiAgentStep) -> Metrics;
}

pub fn is_multi_agent(algorithm: &str) -> bool {
    algorithms::find(algorithm).is_ok_and(|a| a.multi_agent)
}

/// What the algorithm table's builders need to know of a multi-agent env.
pub fn env_spec(env_id: &str, env: &dyn MultiAgentEnv) -> EnvSpec {
    EnvSpec {
        id: env_id.into(),
        observation_dim: env.observation_dim(),
        action_space: env.action_space(),
        agents: env.num_agents(),
        state_dim: env.state_dim(),
        episode_limit: env.episode_limit(),
        layout: Default::default(),
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
    /// Continue the run checkpointed in `out_dir`.
    pub resume: bool,
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
            resume: false,
            device: Device::Cpu,
            hooks: RunHooks::default(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct MarlOutcome {
    pub evaluations: Vec<Evaluation>,
    pub steps: usize,
    pub wall_s: f64,
    /// Stopped by `hooks.cancel` before the budget.
    pub cancelled: bool,
}

/// Env seed of the k-th batch of training episodes, and of the k-th evaluation.
fn episode_seed(seed: u64, k: usize) -> u64 {
    seed.wrapping_mul(0x9E37_79B9).wrapping_add(k as u64)
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

pub fn evaluate_learner(
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

/// Where a multi-agent run stands between episode batches; part of every checkpoint.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
struct Position {
    step: usize,
    episodes: usize,
    batches: usize,
}

struct Iteration<'a> {
    config: &'a MarlConfig,
    learner: &'a mut dyn MultiAgentLearner,
    position: Position,
    /// A checkpoint can be taken only between episode batches.
    between_batches: bool,
}

impl crate::drl::monitor::Iteration for Iteration<'_> {
    fn evaluate(&mut self, episodes: usize, seed: u64) -> Result<(f64, f64)> {
        evaluate_learner(&mut *self.learner, &self.config.env_id, episodes, seed)
    }

    fn checkpoint(&mut self, dir: &Path, _reached: Option<usize>) -> Result<()> {
        if self.between_batches {
            let mut state = StateDict::default();
            self.learner.save_state(&mut state)?;
            state.put("position", &self.position)?;
            state.write(dir)?;
        }
        for (name, store) in self.learner.var_stores() {
            store.save(dir.join(format!("{name}.safetensors")))?;
        }
        Ok(())
    }
}

/// Trains until the step budget; evaluates every `eval_every` steps (at episode boundaries) and
/// at the end; with `resume`, continues the run checkpointed in `out_dir` exactly.
pub fn train(config: &MarlConfig) -> Result<MarlOutcome> {
    let algorithm = algorithms::find(&config.algorithm)?;
    if !algorithm.multi_agent {
        bail!("{} is single-agent; train it with drl::run::train", algorithm.name);
    }
    let hyperparameters = algorithm.configure(&config.overrides)?;
    let num_envs = config.num_envs.unwrap_or(algorithm.num_envs);
    anyhow::ensure!(num_envs >= 1, "num_envs must be at least 1");
    let mut env = make(&config.env_id, num_envs)
        .with_context(|| crate::suggest::unknown("env", &config.env_id, super::ENV_IDS.iter().copied()))?;
    algorithm.check_takes(&config.env_id, &env.action_space())?;
    let spec = env_spec(&config.env_id, env.as_ref());
    let Learner::Multi(mut learner) = (algorithm.build)(&hyperparameters, &spec, config.device, config.seed)? else {
        bail!("{} built a single-agent agent", algorithm.name);
    };
    let mut position = Position::default();
    let resumed = match &config.out_dir {
        Some(dir) if config.resume => {
            let state = StateDict::read(dir).context("resume: no whole-run checkpoint in the run folder")?;
            learner.load_state(&state)?;
            // The run's hyperparameters win over the restored ones (see `run::train`).
            learner.set_hyperparameters(&config.overrides).context("resume: applying the hyperparameters")?;
            position = state.get("position")?;
            Some(position.step)
        }
        _ => None,
    };
    let run_config = json!({
        "algorithm": config.algorithm, "env": config.env_id, "seed": config.seed,
        "total_steps": config.total_steps, "num_envs": num_envs, "overrides": config.overrides,
        "hyperparameters": hyperparameters,
    });
    let plan = EvaluationPlan {
        seed: config.seed,
        eval_every: config.eval_every,
        eval_episodes: config.eval_episodes,
        target_return: None,
        confirm_episodes: 0,
        total_steps: config.total_steps,
    };
    let mut monitor = Monitor::new(plan, config.hooks.clone(), config.out_dir.as_deref(), &run_config, resumed)?;
    let b = env.num_envs();
    let mut observation = env.reset(episode_seed(config.seed, position.batches));
    let mut memory = learner.begin(b);
    let mut losses: Metrics = Vec::new();
    while monitor.running(position.step) {
        let actions = learner.act(&observation, &mut memory, true);
        let result = env.step(&actions);
        let metrics = learner.observe(&observation, &actions, &result);
        if !metrics.is_empty() {
            losses = metrics;
        }
        position.step += b;
        let between_batches = result.terminated.iter().zip(&result.truncated).all(|(t, u)| *t || *u);
        if between_batches {
            position.episodes += b;
            position.batches += 1;
            observation = env.reset(episode_seed(config.seed, position.batches));
            memory = learner.begin(b);
        } else {
            observation = result.next;
        }
        if between_batches || position.step >= config.total_steps {
            let (step, episodes) = (position.step, position.episodes);
            let mut iteration =
                Iteration { config, learner: learner.as_mut(), position: position.clone(), between_batches };
            monitor.after_iteration(step, episodes, &losses, &mut iteration)?;
        }
    }
    let cancelled = position.step < config.total_steps;
    let (wall_s, _) = monitor.clock();
    Ok(MarlOutcome { evaluations: monitor.evaluations, steps: position.step, wall_s, cancelled })
}
