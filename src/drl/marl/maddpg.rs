//! MADDPG (Lowe et al. 2017) and MATD3 (Ackermann et al. 2019): decentralized actors mu_i(o_i),
//! centralized critics Q_i(o_1..o_N, a_1..a_N) trained on each agent's own reward,
//! y_i = r_i + gamma (1 - terminated) min_k Q'_i,k(o', mu'_1(o'_1)..mu'_N(o'_N)), actors by
//! grad_{a_i} Q_i,1 with the other agents' actions from the buffer. Discrete actions pass through
//! the Gumbel-softmax (Jang et al. 2017) as in the original code; continuous ones through a sigmoid
//! onto the [0, 1] box. MATD3 adds TD3's twin critics, clipped target-policy noise (continuous)
//! and delayed actor updates (its preset: `matd3`).

use super::run::{Memory, MultiAgentLearner};
use super::{MultiAgentObservation, MultiAgentStep};
use crate::drl::agents::{load_stores, patched, save_stores, AgentState, Metrics};
use crate::drl::buffer::ReplayBuffer;
use crate::drl::common::soft_update;
use crate::drl::env::ActionSpace;
use crate::drl::hyper::{Hyperparameters, Range};
use crate::drl::net::mlp;
use crate::drl::optim::Optimizer;
use crate::drl::random::TensorRng;
use crate::drl::state::StateDict;
use anyhow::Result;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use tch::nn::Module;
use tch::{nn, Device, Kind, Tensor};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MaddpgConfig {
    pub hidden: Vec<i64>,
    pub actor_learning_rate: f64,
    pub critic_learning_rate: f64,
    pub gamma: f64,
    pub tau: f64,
    pub batch_size: usize,
    pub buffer_size: usize,
    /// Transitions stored before the first update.
    pub learning_starts: usize,
    /// Env transitions (summed over the batch of envs) between training rounds.
    pub train_every: usize,
    pub updates_per_train: usize,
    /// 1 = MADDPG, 2 = MATD3's clipped double Q.
    pub critics: usize,
    /// MATD3 target-policy smoothing (continuous actions): noise std and clip on the [0, 1] box.
    pub policy_noise: f64,
    pub noise_clip: f64,
    /// Actor and target updates every this many critic updates.
    pub policy_delay: usize,
    /// Continuous exploration noise std.
    pub exploration_noise: f64,
    /// Weight of the mean squared pre-activation in the actor loss (the original's 1e-3).
    pub action_regularization: f64,
}

impl Hyperparameters for MaddpgConfig {
    fn ranges() -> Vec<(&'static str, Range)> {
        vec![
            ("hidden", Range::Widths),
            ("actor_learning_rate", Range::Positive),
            ("critic_learning_rate", Range::Positive),
            ("gamma", Range::Unit),
            ("tau", Range::Unit),
            ("batch_size", Range::Positive),
            ("buffer_size", Range::Positive),
            ("learning_starts", Range::NonNegative),
            ("train_every", Range::Positive),
            ("updates_per_train", Range::Positive),
            ("critics", Range::Positive),
            ("policy_noise", Range::NonNegative),
            ("noise_clip", Range::NonNegative),
            ("policy_delay", Range::Positive),
            ("exploration_noise", Range::NonNegative),
            ("action_regularization", Range::NonNegative),
        ]
    }
}

const STRUCTURAL: &[&str] = &["hidden", "critics", "buffer_size"];

impl MaddpgConfig {
    /// The paper's MPE settings (gamma 0.95, tau 0.01, batch 1024, 64-64 nets, a training round
    /// every 100 transitions once 1024 x 25 are stored) except the learning rates: 5e-3 for both
    /// in place of the paper's 1e-2 (simple_spread, 2M steps, seeds 0-2: -31.9 mean, 82% of the
    /// random-to-heuristic gap, against -34.1 and 78% with 1e-2).
    pub fn maddpg() -> Self {
        MaddpgConfig {
            hidden: vec![64, 64],
            actor_learning_rate: 5e-3,
            critic_learning_rate: 5e-3,
            gamma: 0.95,
            tau: 0.01,
            batch_size: 1024,
            buffer_size: 1_000_000,
            learning_starts: 1024 * 25,
            train_every: 100,
            updates_per_train: 1,
            critics: 1,
            policy_noise: 0.0,
            noise_clip: 0.0,
            policy_delay: 1,
            exploration_noise: 0.1,
            action_regularization: 1e-3,
        }
    }
}

pub struct Maddpg {
    config: MaddpgConfig,
    actor_store: nn::VarStore,
    actor_target_store: nn::VarStore,
    critic_store: nn::VarStore,
    critic_target_store: nn::VarStore,
    actors: Vec<nn::Sequential>,
    actor_targets: Vec<nn::Sequential>,
    /// critics[i][k]: agent i's k-th critic.
    critics: Vec<Vec<nn::Sequential>>,
    critic_targets: Vec<Vec<nn::Sequential>>,
    actor_optimizer: Optimizer,
    critic_optimizer: Optimizer,
    buffer: ReplayBuffer,
    rng: ChaCha8Rng,
    noise: TensorRng,
    /// (agents, obs_dim, width of one agent's action in the critic: actions or box dims).
    shape: (usize, usize, usize),
    discrete: bool,
    env_steps: usize,
    updates: usize,
    device: Device,
}

/// Gumbel-softmax sample (soft): softmax(logits + Gumbel noise).
fn gumbel_softmax(logits: &Tensor, noise: &mut TensorRng) -> Tensor {
    let u = noise.uniform_like(logits).clamp(1e-10, 1.0 - 1e-10);
    (logits - (-u.log()).log()).softmax(-1, Kind::Float)
}

impl Maddpg {
    /// `shape` = (agents, obs_dim, state_dim); the critics see every agent's observation.
    pub fn new(
        config: MaddpgConfig,
        shape: (usize, usize, usize),
        space: &ActionSpace,
        device: Device,
        seed: u64,
    ) -> Self {
        let (n, o, _) = shape;
        let (discrete, a) = match space {
            ActionSpace::Discrete { n } => (true, *n),
            ActionSpace::Continuous { low, .. } => (false, low.len()),
        };
        let actor_store = nn::VarStore::new(device);
        let mut actor_target_store = nn::VarStore::new(device);
        let critic_store = nn::VarStore::new(device);
        let mut critic_target_store = nn::VarStore::new(device);
        let actors_in = |store: &nn::VarStore| {
            (0..n)
                .map(|i| mlp(&(store.root() / format!("actor{i}")), o as i64, &config.hidden, a as i64))
                .collect::<Vec<_>>()
        };
        let critic_input = (n * (o + a)) as i64;
        let critics_in = |store: &nn::VarStore| {
            (0..n)
                .map(|i| {
                    (0..config.critics)
                        .map(|k| mlp(&(store.root() / format!("critic{i}_{k}")), critic_input, &config.hidden, 1))
                        .collect()
                })
                .collect::<Vec<Vec<_>>>()
        };
        let actors = actors_in(&actor_store);
        let actor_targets = actors_in(&actor_target_store);
        let critics = critics_in(&critic_store);
        let critic_targets = critics_in(&critic_target_store);
        actor_target_store.copy(&actor_store).expect("same layout");
        critic_target_store.copy(&critic_store).expect("same layout");
        let actor_optimizer = Optimizer::adam(&actor_store, config.actor_learning_rate);
        let critic_optimizer = Optimizer::adam(&critic_store, config.critic_learning_rate);
        let buffer = ReplayBuffer::with_reward_width(config.buffer_size, n * o, n * a, n, None);
        Maddpg {
            config,
            actor_store,
            actor_target_store,
            critic_store,
            critic_target_store,
            actors,
            actor_targets,
            critics,
            critic_targets,
            actor_optimizer,
            critic_optimizer,
            buffer,
            rng: ChaCha8Rng::seed_from_u64(seed),
            noise: TensorRng::new(seed ^ 0x6D),
            shape: (n, o, a),
            discrete,
            env_steps: 0,
            updates: 0,
            device,
        }
    }

    /// Agent i's action as the critic sees it, from its actor's output.
    fn critic_action(&mut self, raw: &Tensor, sample: bool) -> Tensor {
        match (self.discrete, sample) {
            (true, true) => gumbel_softmax(raw, &mut self.noise),
            (true, false) => raw.softmax(-1, Kind::Float),
            (false, _) => raw.sigmoid(),
        }
    }

    fn update(&mut self) -> Metrics {
        let (n, o, a) = self.shape;
        let batch = self.buffer.sample(self.config.batch_size, &mut self.rng, self.device);
        let obs_i = |x: &Tensor, i: usize| x.narrow(1, (i * o) as i64, o as i64);
        let next_actions = tch::no_grad(|| {
            let parts: Vec<Tensor> = (0..n)
                .map(|j| {
                    let raw = self.actor_targets[j].forward(&obs_i(&batch.next_obs, j));
                    let mut action = self.critic_action(&raw, true);
                    if !self.discrete && self.config.policy_noise > 0.0 {
                        let noise = (self.noise.normal_like(&action) * self.config.policy_noise)
                            .clamp(-self.config.noise_clip, self.config.noise_clip);
                        action = (action + noise).clamp(0.0, 1.0);
                    }
                    action
                })
                .collect();
            Tensor::cat(&parts, 1)
        });
        let next_input = Tensor::cat(&[batch.next_obs.shallow_clone(), next_actions], 1);
        let input = Tensor::cat(&[batch.obs.shallow_clone(), batch.actions.shallow_clone()], 1);
        let mut critic_loss = Tensor::zeros([], (Kind::Float, self.device));
        for i in 0..n {
            let target = tch::no_grad(|| {
                let qs: Vec<Tensor> =
                    self.critic_targets[i].iter().map(|q| q.forward(&next_input).squeeze_dim(1)).collect();
                let min_q = qs.iter().skip(1).fold(qs[0].shallow_clone(), |m, q| m.minimum(q));
                batch.rewards.select(1, i as i64) + self.config.gamma * (1.0 - &batch.terminated) * min_q
            });
            for q in &self.critics[i] {
                critic_loss += (q.forward(&input).squeeze_dim(1) - &target).square().mean(Kind::Float);
            }
        }
        // Agents' critics are independent: one step on the summed loss is each critic's own step.
        self.critic_optimizer.minimize(&critic_loss, Some(0.5));
        self.updates += 1;
        let mut metrics = vec![("critic_loss", critic_loss.double_value(&[]) / n as f64)];
        if self.updates.is_multiple_of(self.config.policy_delay) {
            let mut actor_loss = Tensor::zeros([], (Kind::Float, self.device));
            for i in 0..n {
                let raw = self.actors[i].forward(&obs_i(&batch.obs, i));
                let own = self.critic_action(&raw, true);
                let mut actions: Vec<Tensor> =
                    (0..n).map(|j| batch.actions.narrow(1, (j * a) as i64, a as i64)).collect();
                actions[i] = own;
                let joint = Tensor::cat(&[batch.obs.shallow_clone(), Tensor::cat(&actions, 1)], 1);
                actor_loss = actor_loss - self.critics[i][0].forward(&joint).mean(Kind::Float)
                    + self.config.action_regularization * raw.square().mean(Kind::Float);
            }
            self.actor_optimizer.minimize(&actor_loss, Some(0.5));
            soft_update(&mut self.actor_target_store, &self.actor_store, self.config.tau);
            soft_update(&mut self.critic_target_store, &self.critic_store, self.config.tau);
            metrics.push(("actor_loss", actor_loss.double_value(&[]) / n as f64));
        }
        metrics
    }
}

impl MultiAgentLearner for Maddpg {
    fn act(&mut self, observation: &MultiAgentObservation, _memory: &mut Memory, explore: bool) -> Vec<f32> {
        let (n, o, _) = self.shape;
        let b = (observation.observations.len() / (n * o)) as i64;
        let obs = Tensor::from_slice(&observation.observations).view([b, n as i64, o as i64]).to(self.device);
        let actions = tch::no_grad(|| {
            let per_agent: Vec<Tensor> = (0..n)
                .map(|i| {
                    let raw = self.actors[i].forward(&obs.select(1, i as i64));
                    match (self.discrete, explore) {
                        // A Gumbel-max sample is a sample of softmax(logits).
                        (true, true) => gumbel_softmax(&raw, &mut self.noise).argmax(-1, true).to_kind(Kind::Float),
                        (true, false) => raw.argmax(-1, true).to_kind(Kind::Float),
                        (false, true) => (raw.sigmoid() + self.noise.normal_like(&raw) * self.config.exploration_noise)
                            .clamp(0.0, 1.0),
                        (false, false) => raw.sigmoid(),
                    }
                })
                .collect();
            Tensor::stack(&per_agent, 1) // [B, N, width]
        });
        actions.flatten(0, -1).to_device(Device::Cpu).try_into().expect("f32")
    }

    fn observe(&mut self, before: &MultiAgentObservation, actions: &[f32], step: &MultiAgentStep) -> Metrics {
        let (n, o, a) = self.shape;
        let b = step.team_rewards.len();
        let width = if self.discrete { 1 } else { a };
        for e in 0..b {
            let joint_actions: Vec<f32> = if self.discrete {
                let mut one_hot = vec![0.0; n * a];
                for i in 0..n {
                    one_hot[i * a + actions[(e * n + i) * width] as usize] = 1.0;
                }
                one_hot
            } else {
                actions[e * n * a..(e + 1) * n * a].to_vec()
            };
            self.buffer.push_rewards(
                &before.observations[e * n * o..(e + 1) * n * o],
                &joint_actions,
                &step.rewards[e * n..(e + 1) * n],
                &step.next.observations[e * n * o..(e + 1) * n * o],
                step.terminated[e],
            );
        }
        let before_steps = self.env_steps;
        self.env_steps += b;
        let mut metrics = Vec::new();
        if self.buffer.len() >= self.config.learning_starts.max(self.config.batch_size)
            && before_steps / self.config.train_every != self.env_steps / self.config.train_every
        {
            for _ in 0..self.config.updates_per_train {
                metrics = self.update();
            }
        }
        metrics
    }
}

impl AgentState for Maddpg {
    fn var_stores(&mut self) -> Vec<(&'static str, &mut nn::VarStore)> {
        vec![
            ("actors", &mut self.actor_store),
            ("actor_targets", &mut self.actor_target_store),
            ("critics", &mut self.critic_store),
            ("critic_targets", &mut self.critic_target_store),
        ]
    }

    fn save_state(&mut self, state: &mut StateDict) -> Result<()> {
        self.actor_optimizer.save("actor_optimizer", state);
        self.critic_optimizer.save("critic_optimizer", state);
        state.put("maddpg", &(&self.rng, &self.noise, self.env_steps, self.updates))?;
        self.buffer.save("replay", state)?;
        save_stores(self.var_stores(), state);
        Ok(())
    }

    fn load_state(&mut self, state: &StateDict) -> Result<()> {
        self.actor_optimizer.load("actor_optimizer", state)?;
        self.critic_optimizer.load("critic_optimizer", state)?;
        (self.rng, self.noise, self.env_steps, self.updates) = state.get("maddpg")?;
        self.buffer.load("replay", state)?;
        load_stores(self.var_stores(), state)
    }

    fn set_hyperparameters(&mut self, patch: &serde_json::Value) -> Result<()> {
        self.config = patched(&self.config, patch, STRUCTURAL)?;
        self.actor_optimizer.set_learning_rate(self.config.actor_learning_rate);
        self.critic_optimizer.set_learning_rate(self.config.critic_learning_rate);
        Ok(())
    }
}
