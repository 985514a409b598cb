//! Agents own their nets, optimizers and random streams and expose `act` and `update`; `run`
//! alternates them with env steps. Off-policy agents learn from a `ReplayBuffer`, on-policy agents
//! from a `Rollout`. One file per algorithm: `dqn` (also Double DQN, D3QN), `ddpg`, `td3`, `sac`,
//! `redq`, `ppo` (also PPO-discrete), `a2c` (continuous and discrete); the variants' files hold
//! their presets over the shared agent.

pub mod a2c;
pub mod ddpg;
pub mod dqn;
pub mod ppo;
pub mod redq;
pub mod sac;
pub mod td3;
#[cfg(test)]
mod test_support;

use super::buffer::ReplayBuffer;
use super::common::RunningNorm;
use super::hyper::{Hyperparameters, Range};
use super::state::StateDict;
use anyhow::{bail, Result};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use tch::{nn, Tensor};

/// Named scalar losses/statistics of one update, for the metrics log.
pub type Metrics = Vec<(&'static str, f64)>;

/// The loop around an off-policy agent, part of the agent's config (so `--hyper` and
/// `hyperparameters` name these like any other field).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OffPolicySchedule {
    /// Replay capacity in transitions.
    pub buffer_size: usize,
    /// Uniformly random actions before this many env steps.
    pub learning_starts: usize,
    /// Updates happen every this many env steps ...
    pub train_every: usize,
    /// ... this many at a time (REDQ's update-to-data ratio G = 20 with train_every 1).
    pub updates_per_train: usize,
}

impl OffPolicySchedule {
    pub const RANGES: &'static [(&'static str, Range)] = &[
        ("buffer_size", Range::Positive),
        ("learning_starts", Range::NonNegative),
        ("train_every", Range::Positive),
        ("updates_per_train", Range::Positive),
    ];

    /// 100k transitions, 1000 random steps first.
    pub fn new(train_every: usize, updates_per_train: usize) -> Self {
        OffPolicySchedule { buffer_size: 100_000, learning_starts: 1000, train_every, updates_per_train }
    }
}

/// What every agent (single- or multi-agent) keeps between updates, saved and restored exactly.
pub trait AgentState {
    /// Weights (trainable and target) by store name; a checkpoint also writes each as
    /// `<name>.safetensors` for serving and `evaluate`.
    fn var_stores(&mut self) -> Vec<(&'static str, &mut nn::VarStore)>;
    /// Everything else a continuation needs: optimizer moments, counters, generator positions,
    /// statistics, buffers.
    fn save_state(&mut self, state: &mut StateDict) -> Result<()>;
    fn load_state(&mut self, state: &StateDict) -> Result<()>;
    /// Applies a patch of hyperparameters between iterations without a rebuild (learning rates,
    /// coefficients, schedules); fields that shape the networks or buffers are refused.
    fn set_hyperparameters(&mut self, patch: &serde_json::Value) -> Result<()>;
}

/// `config` with `patch` applied; an error names a field that is unknown or would need a rebuild.
pub fn patched<T: Hyperparameters>(config: &T, patch: &serde_json::Value, structural: &[&str]) -> Result<T> {
    let mut value = serde_json::to_value(config)?;
    let Some(patch) = patch.as_object() else { bail!("hyperparameters: expected an object") };
    for (key, new) in patch {
        let Some(old) = value.get(key) else { bail!("unknown hyperparameter '{key}'") };
        if structural.contains(&key.as_str()) && old != new {
            bail!("'{key}' shapes the networks or buffers; it needs a new run");
        }
        value[key] = new.clone();
    }
    Ok(serde_json::from_value(value)?)
}

/// Every store under its name.
pub fn save_stores(stores: Vec<(&'static str, &mut nn::VarStore)>, state: &mut StateDict) {
    for (name, store) in stores {
        state.put_store(name, store);
    }
}

pub fn load_stores(stores: Vec<(&'static str, &mut nn::VarStore)>, state: &StateDict) -> Result<()> {
    for (name, store) in stores {
        state.load_store(name, store)?;
    }
    Ok(())
}

pub trait OffPolicyAgent: AgentState {
    /// The loop's schedule (read every iteration, so a patch takes effect at once).
    fn schedule(&self) -> &OffPolicySchedule;
    /// Actions [B, action width] for observations [B, obs_dim]; `explore` adds the agent's
    /// exploration (epsilon, Gaussian noise, or sampling), else the greedy/mean action.
    fn act(&mut self, obs: &Tensor, explore: bool) -> Tensor;
    /// One gradient update on a minibatch from `buffer`.
    fn update(&mut self, buffer: &mut ReplayBuffer, rng: &mut ChaCha8Rng) -> Metrics;
    /// Called once per environment step of the whole batch (schedules such as epsilon).
    fn on_env_steps(&mut self, _total_steps: usize) {}
    /// log pi(actions | obs) [B] under the current actor, differentiable (for the H-term).
    fn actor_log_prob(&self, _obs: &Tensor, _actions: &Tensor) -> Option<Tensor> {
        None
    }
    /// One actor optimizer step on an extra loss (the H-term).
    fn actor_step(&mut self, _loss: &Tensor) {}
}

/// One on-policy batch, flattened over time and envs.
pub struct Rollout {
    pub obs: Tensor,
    pub actions: Tensor,
    pub log_probs: Tensor,
    pub values: Tensor,
    pub advantages: Tensor,
    pub returns: Tensor,
}

pub trait OnPolicyAgent: AgentState {
    /// (actions [B, width], log pi(actions) [B], V(obs) [B]).
    fn act(&mut self, obs: &Tensor, explore: bool) -> (Tensor, Tensor, Tensor);
    fn value(&self, obs: &Tensor) -> Tensor;
    fn update(&mut self, rollout: &Rollout) -> Metrics;
    /// Env steps per env between updates.
    fn rollout_steps(&self) -> usize;
    /// (gamma, GAE lambda).
    fn discount(&self) -> (f32, f32);
    /// Reward multiplier applied before GAE.
    fn reward_scale(&self) -> f32 {
        1.0
    }
    /// log pi(actions | obs) [B] under the current actor, differentiable (for the H-term).
    fn actor_log_prob(&self, _obs: &Tensor, _actions: &Tensor) -> Option<Tensor> {
        None
    }
    /// One actor optimizer step on an extra loss (the H-term).
    fn actor_step(&mut self, _loss: &Tensor) {}
    /// The running observation statistics when the agent sees normalized observations; the run
    /// loop updates them on training batches and applies them everywhere (also in evaluation).
    fn observation_normalizer(&mut self) -> Option<&mut RunningNorm> {
        None
    }
}

pub enum Agent {
    OffPolicy(Box<dyn OffPolicyAgent>),
    OnPolicy(Box<dyn OnPolicyAgent>),
}

impl Agent {
    pub fn state(&mut self) -> &mut dyn AgentState {
        match self {
            Agent::OffPolicy(a) => a.as_mut(),
            Agent::OnPolicy(a) => a.as_mut(),
        }
    }
}
