//! Agents own their nets and optimizers and expose `act` and `update`; `run` alternates them with
//! env steps. Off-policy agents learn from a `ReplayBuffer`, on-policy agents from a `Rollout`.

pub mod dqn;
pub mod ppo;
pub mod sac;
pub mod td3;

use super::buffer::ReplayBuffer;
use super::common::RunningNorm;
use rand_chacha::ChaCha8Rng;
use tch::{nn, Tensor};

/// Named scalar losses/statistics of one update, for the metrics log.
pub type Metrics = Vec<(&'static str, f64)>;

pub trait OffPolicyAgent {
    /// Actions [B, action width] for observations [B, obs_dim]; `explore` adds the agent's
    /// exploration (epsilon, Gaussian noise, or sampling), else the greedy/mean action.
    fn act(&mut self, obs: &Tensor, explore: bool) -> Tensor;
    /// One gradient update on a minibatch from `buffer`.
    fn update(&mut self, buffer: &mut ReplayBuffer, rng: &mut ChaCha8Rng) -> Metrics;
    /// Called once per environment step of the whole batch (schedules such as epsilon).
    fn on_env_steps(&mut self, _total_steps: usize) {}
    /// Every trainable and target variable, for checkpoints.
    fn var_stores(&mut self) -> Vec<(&'static str, &mut nn::VarStore)>;
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

pub trait OnPolicyAgent {
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
    fn var_stores(&mut self) -> Vec<(&'static str, &mut nn::VarStore)>;
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
