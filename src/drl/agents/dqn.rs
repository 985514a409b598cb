//! DQN (Mnih et al. 2015), Double DQN (van Hasselt et al. 2016) and D3QN (dueling, Wang et al.
//! 2016, + double). One file: the variants differ only in the target (eq. below) and the net.

use super::{load_stores, patched, save_stores, AgentState, Metrics, OffPolicyAgent, OffPolicySchedule};
use crate::drl::buffer::ReplayBuffer;
use crate::drl::common::soft_update;
use crate::drl::hyper::{Hyperparameters, Range};
use crate::drl::net::QNet;
use crate::drl::optim::Optimizer;
use crate::drl::state::StateDict;
use anyhow::Result;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use tch::{nn, Device, Kind, Tensor};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DqnConfig {
    #[serde(flatten)]
    pub schedule: OffPolicySchedule,
    /// Hidden layer widths.
    pub hidden: Vec<i64>,
    pub learning_rate: f64,
    pub gamma: f64,
    pub batch_size: usize,
    /// Select the next action with the online net, evaluate it with the target net.
    pub double: bool,
    /// Dueling head Q = V + A - mean A.
    pub dueling: bool,
    /// Hard target copy every this many env steps (as SB3 counts it: between training bursts
    /// the target catches up, during a burst it stays fixed).
    pub target_update_every: usize,
    /// Epsilon decays linearly from `epsilon_start` to `epsilon_end` over this many env steps.
    pub epsilon_decay_steps: usize,
    pub epsilon_start: f64,
    pub epsilon_end: f64,
    /// Gradient-norm clip.
    pub max_grad_norm: f64,
}

impl Hyperparameters for DqnConfig {
    fn ranges() -> Vec<(&'static str, Range)> {
        let own = [
            ("hidden", Range::Widths),
            ("learning_rate", Range::Positive),
            ("gamma", Range::Unit),
            ("batch_size", Range::Positive),
            ("double", Range::Flag),
            ("dueling", Range::Flag),
            ("target_update_every", Range::Positive),
            ("epsilon_decay_steps", Range::Positive),
            ("epsilon_start", Range::Unit),
            ("epsilon_end", Range::Unit),
            ("max_grad_norm", Range::Positive),
        ];
        [OffPolicySchedule::RANGES, &own].concat()
    }
}

/// Fields that shape the networks or the buffer (a patch may not change them).
const STRUCTURAL: &[&str] = &["hidden", "dueling", "buffer_size"];

impl DqnConfig {
    /// The Stable-Baselines3 zoo's CartPole-v1 settings, shared by the three variants.
    pub fn new(double: bool, dueling: bool) -> Self {
        DqnConfig {
            // Updates every 256 steps, 128 at a time: the zoo's train_freq 256 / gradient_steps 128.
            schedule: OffPolicySchedule::new(256, 128),
            hidden: vec![256, 256],
            learning_rate: 2.3e-3,
            gamma: 0.99,
            batch_size: 64,
            double,
            dueling,
            target_update_every: 10,
            epsilon_decay_steps: 16_000,
            epsilon_start: 1.0,
            epsilon_end: 0.04,
            max_grad_norm: 10.0,
        }
    }
}

pub struct Dqn {
    config: DqnConfig,
    online_store: nn::VarStore,
    target_store: nn::VarStore,
    online: QNet,
    target: QNet,
    optimizer: Optimizer,
    actions: i64,
    epsilon: f64,
    env_steps: usize,
    rng: ChaCha8Rng,
}

impl Dqn {
    /// Initial weights from libtorch's initializers under `seed` (see `random::seeded`), the
    /// exploration stream from `seed` too.
    pub fn new(config: DqnConfig, obs_dim: usize, actions: usize, device: Device, seed: u64) -> Self {
        let online_store = nn::VarStore::new(device);
        let mut target_store = nn::VarStore::new(device);
        let online =
            QNet::new(&(online_store.root() / "q"), obs_dim as i64, &config.hidden, actions as i64, config.dueling);
        let target =
            QNet::new(&(target_store.root() / "q"), obs_dim as i64, &config.hidden, actions as i64, config.dueling);
        soft_update(&mut target_store, &online_store, 1.0);
        let optimizer = Optimizer::adam(&online_store, config.learning_rate);
        let epsilon = config.epsilon_start;
        Dqn {
            config,
            online_store,
            target_store,
            online,
            target,
            optimizer,
            actions: actions as i64,
            epsilon,
            env_steps: 0,
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0xD0),
        }
    }
}

impl OffPolicyAgent for Dqn {
    fn schedule(&self) -> &OffPolicySchedule {
        &self.config.schedule
    }

    fn act(&mut self, obs: &Tensor, explore: bool) -> Tensor {
        let greedy = tch::no_grad(|| self.online.forward(obs).argmax(-1, false));
        let greedy: Vec<i64> = greedy.to_device(Device::Cpu).try_into().expect("actions");
        let actions: Vec<f32> = greedy
            .iter()
            .map(|&a| {
                if explore && self.rng.gen::<f64>() < self.epsilon {
                    self.rng.gen_range(0..self.actions) as f32
                } else {
                    a as f32
                }
            })
            .collect();
        Tensor::from_slice(&actions).view([-1, 1])
    }

    fn on_env_steps(&mut self, total_steps: usize) {
        let interval = self.config.target_update_every.max(1);
        if total_steps / interval != self.env_steps / interval {
            soft_update(&mut self.target_store, &self.online_store, 1.0);
        }
        self.env_steps = total_steps;
        let progress = (total_steps as f64 / self.config.epsilon_decay_steps.max(1) as f64).min(1.0);
        self.epsilon = self.config.epsilon_start + (self.config.epsilon_end - self.config.epsilon_start) * progress;
    }

    fn update(&mut self, buffer: &mut ReplayBuffer, rng: &mut ChaCha8Rng) -> Metrics {
        let batch = buffer.sample(self.config.batch_size, rng, self.online_store.device());
        let actions = batch.actions.to_kind(Kind::Int64);
        let target = tch::no_grad(|| {
            let next_target = self.target.forward(&batch.next_obs);
            let next_q = if self.config.double {
                // Double DQN: y = r + gamma Q'(s', argmax_a Q(s', a))
                let best = self.online.forward(&batch.next_obs).argmax(-1, true);
                next_target.gather(1, &best, false).squeeze_dim(1)
            } else {
                // DQN: y = r + gamma max_a Q'(s', a)
                next_target.amax(-1, false)
            };
            &batch.rewards + (1.0 - &batch.terminated) * self.config.gamma * next_q
        });
        let q = self.online.forward(&batch.obs).gather(1, &actions, false).squeeze_dim(1);
        let td = &q - &target;
        // Huber loss, importance-weighted for prioritized replay.
        let loss = (q.huber_loss(&target, tch::Reduction::None, 1.0) * &batch.weights).mean(Kind::Float);
        self.optimizer.minimize(&loss, Some(self.config.max_grad_norm));
        let td: Vec<f32> = td.detach().to_device(Device::Cpu).try_into().expect("td");
        buffer.update_priorities(&batch.indices, &td);
        vec![("q_loss", loss.double_value(&[])), ("epsilon", self.epsilon)]
    }
}

impl AgentState for Dqn {
    fn var_stores(&mut self) -> Vec<(&'static str, &mut nn::VarStore)> {
        vec![("online", &mut self.online_store), ("target", &mut self.target_store)]
    }

    fn save_state(&mut self, state: &mut StateDict) -> Result<()> {
        self.optimizer.save("optimizer", state);
        state.put("dqn", &(self.epsilon, self.env_steps, &self.rng))?;
        save_stores(self.var_stores(), state);
        Ok(())
    }

    fn load_state(&mut self, state: &StateDict) -> Result<()> {
        self.optimizer.load("optimizer", state)?;
        (self.epsilon, self.env_steps, self.rng) = state.get("dqn")?;
        load_stores(self.var_stores(), state)
    }

    fn set_hyperparameters(&mut self, patch: &serde_json::Value) -> Result<()> {
        self.config = patched(&self.config, patch, STRUCTURAL)?;
        self.optimizer.set_learning_rate(self.config.learning_rate);
        Ok(())
    }
}
