//! MAPPO (Yu et al. 2022): PPO with one actor shared by all agents (input: own observation and
//! agent id), a centralized value function V(s, id) on the global state, value normalization
//! (critic targets standardized by running return statistics), GAE, the clipped surrogate
//! L = E[min(r A, clip(r, 1 - eps, 1 + eps) A)] with an entropy bonus, separate Adam optimizers.
//! Every agent learns from the team reward. One rollout = one episode of every env in the batch.

use super::run::{Memory, MultiAgentLearner};
use super::{elapsed_column, MultiAgentObservation, MultiAgentStep};
use crate::drl::agents::{load_stores, patched, save_stores, AgentState, Metrics};
use crate::drl::common::{gae, RunningNorm};
use crate::drl::env::ActionSpace;
use crate::drl::hyper::{Hyperparameters, Range};
use crate::drl::net::{mlp_with, Activation, CategoricalActor, GaussianActor, GaussianActorOptions, LayerInit};
use crate::drl::optim::{Optimizer, Rule};
use crate::drl::random::TensorRng;
use crate::drl::state::StateDict;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use tch::nn::Module;
use tch::{nn, Device, Kind, Tensor};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MappoConfig {
    pub hidden: Vec<i64>,
    pub actor_learning_rate: f64,
    pub critic_learning_rate: f64,
    pub gamma: f64,
    pub gae_lambda: f64,
    pub clip_range: f64,
    pub epochs: usize,
    pub minibatches: usize,
    pub entropy_coef: f64,
    pub max_grad_norm: f64,
    /// Standardize value targets by running return statistics (MAPPO's ValueNorm).
    pub value_normalization: bool,
    /// Initial log sigma of the Gaussian policy (continuous actions).
    pub log_std_init: f64,
    /// The episode limit is the task's horizon (Pardo et al. 2018): the critic sees the elapsed
    /// fraction t/T and the limit ends the return (no bootstrap from the last state).
    pub finite_horizon: bool,
    /// Both learning rates fall linearly to zero over this many environment steps (MAPPO's
    /// `use_linear_lr_decay`, set to the run's length); 0 keeps them constant.
    pub lr_decay_steps: usize,
}

impl Hyperparameters for MappoConfig {
    fn ranges() -> Vec<(&'static str, Range)> {
        vec![
            ("hidden", Range::Widths),
            ("actor_learning_rate", Range::Positive),
            ("critic_learning_rate", Range::Positive),
            ("gamma", Range::Unit),
            ("gae_lambda", Range::Unit),
            ("clip_range", Range::Positive),
            ("epochs", Range::Positive),
            ("minibatches", Range::Positive),
            ("entropy_coef", Range::NonNegative),
            ("max_grad_norm", Range::Positive),
            ("value_normalization", Range::Flag),
            ("log_std_init", Range::Finite),
            ("finite_horizon", Range::Flag),
            ("lr_decay_steps", Range::NonNegative),
        ]
    }
}

const STRUCTURAL: &[&str] = &["hidden", "log_std_init", "finite_horizon"];

impl Default for MappoConfig {
    /// The MAPPO paper's MPE settings (lr 7e-4, 10 epochs, 1 minibatch, gamma 0.99, GAE 0.95,
    /// clip 0.2, entropy 0.01, gradient norm 10, 64-64 ReLU nets with orthogonal init).
    fn default() -> Self {
        MappoConfig {
            hidden: vec![64, 64],
            actor_learning_rate: 7e-4,
            critic_learning_rate: 7e-4,
            gamma: 0.99,
            gae_lambda: 0.95,
            clip_range: 0.2,
            epochs: 10,
            minibatches: 1,
            entropy_coef: 0.01,
            max_grad_norm: 10.0,
            value_normalization: true,
            log_std_init: -0.5,
            finite_horizon: false,
            lr_decay_steps: 0,
        }
    }
}

enum Policy {
    Categorical(CategoricalActor),
    Gaussian(GaussianActor),
}

/// One collected step (flattened over envs and agents: rows = B * N).
struct Collected {
    actor_input: Tensor,
    critic_input: Tensor,
    actions: Tensor,
    log_probs: Tensor,
    values: Vec<f32>,
}

pub struct Mappo {
    config: MappoConfig,
    actor_store: nn::VarStore,
    critic_store: nn::VarStore,
    policy: Policy,
    critic: nn::Sequential,
    actor_optimizer: Optimizer,
    critic_optimizer: Optimizer,
    rng: TensorRng,
    value_norm: RunningNorm,
    shape: (usize, usize, usize),
    steps: Vec<Collected>,
    rewards: Vec<f32>,
    terminated: Vec<bool>,
    done: Vec<bool>,
    next_values: Vec<f32>,
    episode_limit: usize,
    /// Episode step of the latest training action (the next state is one later).
    last_step: usize,
    /// Environment steps (one per env and time step) collected so far, for the decay.
    env_steps: usize,
    device: Device,
}

impl Mappo {
    /// `shape` = (agents, obs_dim, state_dim).
    pub fn new(
        config: MappoConfig,
        shape: (usize, usize, usize),
        space: &ActionSpace,
        episode_limit: usize,
        device: Device,
        seed: u64,
    ) -> Self {
        let (n, o, s) = shape;
        let actor_store = nn::VarStore::new(device);
        let critic_store = nn::VarStore::new(device);
        let init = LayerInit::Orthogonal { output_gain: 0.01 };
        let actor_path = actor_store.root() / "actor";
        let policy = match space {
            ActionSpace::Discrete { n: a } => Policy::Categorical(CategoricalActor::new(
                &actor_path,
                (o + n) as i64,
                *a as i64,
                &config.hidden,
                init,
                Activation::Relu,
            )),
            ActionSpace::Continuous { low, .. } => {
                let options = GaussianActorOptions {
                    init,
                    activation: Activation::Relu,
                    log_std_init: config.log_std_init,
                    sde: false,
                };
                Policy::Gaussian(GaussianActor::new(
                    &actor_path,
                    (o + n) as i64,
                    low.len() as i64,
                    &config.hidden,
                    options,
                ))
            }
        };
        let critic_width = (s + n + usize::from(config.finite_horizon)) as i64;
        let critic = mlp_with(
            &(critic_store.root() / "critic"),
            critic_width,
            &config.hidden,
            1,
            LayerInit::Orthogonal { output_gain: 1.0 },
            Activation::Relu,
        );
        let adam = Rule::Adam { beta1: 0.9, beta2: 0.999, eps: 1e-5 };
        let actor_optimizer = Optimizer::new(&actor_store, adam, config.actor_learning_rate);
        let critic_optimizer = Optimizer::new(&critic_store, adam, config.critic_learning_rate);
        Mappo {
            config,
            actor_store,
            critic_store,
            policy,
            critic,
            actor_optimizer,
            critic_optimizer,
            rng: TensorRng::new(seed ^ 0x3A9),
            value_norm: RunningNorm::new(1),
            shape,
            steps: Vec::new(),
            rewards: Vec::new(),
            terminated: Vec::new(),
            done: Vec::new(),
            next_values: Vec::new(),
            episode_limit: episode_limit.max(1),
            last_step: 0,
            env_steps: 0,
            device,
        }
    }

    fn ids(&self, b: i64) -> Tensor {
        let n = self.shape.0 as i64;
        Tensor::eye(n, (Kind::Float, self.device)).unsqueeze(0).expand([b, n, n], false)
    }

    /// Actor rows [B*N, O+N] and critic rows [B*N, S+N(+1)] at episode step `step`.
    fn inputs(&self, observation: &MultiAgentObservation, step: usize) -> (Tensor, Tensor) {
        let (n, o, s) = self.shape;
        let b = (observation.observations.len() / (n * o)) as i64;
        let obs = Tensor::from_slice(&observation.observations).view([b, n as i64, o as i64]).to(self.device);
        let state = Tensor::from_slice(&observation.states)
            .view([b, 1, s as i64])
            .to(self.device)
            .expand([b, n as i64, s as i64], false);
        let ids = self.ids(b);
        let mut critic = vec![state, ids.shallow_clone()];
        if self.config.finite_horizon {
            critic.push(elapsed_column(b * n as i64, step, self.episode_limit, self.device).view([b, n as i64, 1]));
        }
        (Tensor::cat(&[obs, ids], 2).view([b * n as i64, -1]), Tensor::cat(&critic, 2).view([b * n as i64, -1]))
    }

    /// Critic values in return units.
    fn values(&self, critic_input: &Tensor) -> Vec<f32> {
        let v: Vec<f32> = tch::no_grad(|| self.critic.forward(critic_input))
            .flatten(0, -1)
            .to_device(Device::Cpu)
            .try_into()
            .expect("f32");
        if !self.config.value_normalization {
            return v;
        }
        let (mean, std) = (self.value_norm.mean[0], (self.value_norm.var[0] + 1e-8).sqrt());
        v.iter().map(|&x| (f64::from(x) * std + mean) as f32).collect()
    }

    fn log_prob_entropy(&self, actor_input: &Tensor, actions: &Tensor) -> (Tensor, Tensor) {
        match &self.policy {
            Policy::Categorical(actor) => actor.log_prob_entropy(actor_input, &actions.squeeze_dim(1)),
            Policy::Gaussian(actor) => actor.log_prob_entropy(actor_input, actions),
        }
    }

    /// The learning rates for the update after the rollout that began at `rollout_start` steps.
    fn set_learning_rates(&mut self, rollout_start: usize) {
        let c = &self.config;
        let left =
            if c.lr_decay_steps == 0 { 1.0 } else { (1.0 - rollout_start as f64 / c.lr_decay_steps as f64).max(0.0) };
        self.actor_optimizer.set_learning_rate(c.actor_learning_rate * left);
        self.critic_optimizer.set_learning_rate(c.critic_learning_rate * left);
    }

    fn update(&mut self) -> Metrics {
        let rows = self.steps[0].values.len();
        self.set_learning_rates(self.env_steps.saturating_sub(self.steps.len() * rows / self.shape.0.max(1)));
        let values: Vec<f32> = self.steps.iter().flat_map(|c| c.values.iter().copied()).collect();
        let (advantages, returns) = gae(
            &self.rewards,
            &values,
            &self.next_values,
            &self.terminated,
            &self.done,
            rows,
            self.config.gamma as f32,
            self.config.gae_lambda as f32,
        );
        if self.config.value_normalization {
            self.value_norm.update(&returns);
        }
        let (mean, std) = (self.value_norm.mean[0] as f32, (self.value_norm.var[0] + 1e-8).sqrt() as f32);
        let targets: Vec<f32> =
            if self.config.value_normalization { returns.iter().map(|r| (r - mean) / std).collect() } else { returns };
        let actor_input = Tensor::cat(&self.steps.iter().map(|c| c.actor_input.shallow_clone()).collect::<Vec<_>>(), 0);
        let critic_input =
            Tensor::cat(&self.steps.iter().map(|c| c.critic_input.shallow_clone()).collect::<Vec<_>>(), 0);
        let actions = Tensor::cat(&self.steps.iter().map(|c| c.actions.shallow_clone()).collect::<Vec<_>>(), 0);
        let old_log_probs = Tensor::cat(&self.steps.iter().map(|c| c.log_probs.shallow_clone()).collect::<Vec<_>>(), 0);
        let advantages = Tensor::from_slice(&advantages).to(self.device);
        let advantages = (&advantages - advantages.mean(Kind::Float)) / (advantages.std(true) + 1e-8);
        let targets = Tensor::from_slice(&targets).to(self.device);
        let total = actor_input.size()[0];
        let minibatch = (total / self.config.minibatches.max(1) as i64).max(1);
        let (mut policy_loss_sum, mut value_loss_sum, mut entropy_sum, mut count) = (0.0, 0.0, 0.0, 0.0);
        for _ in 0..self.config.epochs {
            let order = self.rng.permutation(total, self.device);
            let mut start = 0;
            while start < total {
                let index = order.narrow(0, start, minibatch.min(total - start));
                let (log_probs, entropy) =
                    self.log_prob_entropy(&actor_input.index_select(0, &index), &actions.index_select(0, &index));
                let ratio = (log_probs - old_log_probs.index_select(0, &index)).exp();
                let adv = advantages.index_select(0, &index);
                let surrogate = (&ratio * &adv)
                    .minimum(&(ratio.clamp(1.0 - self.config.clip_range, 1.0 + self.config.clip_range) * &adv));
                let entropy = entropy.mean(Kind::Float);
                let policy_loss = -surrogate.mean(Kind::Float) - self.config.entropy_coef * &entropy;
                self.actor_optimizer.minimize(&policy_loss, Some(self.config.max_grad_norm));
                let v = self.critic.forward(&critic_input.index_select(0, &index)).squeeze_dim(1);
                let value_loss = (v - targets.index_select(0, &index)).square().mean(Kind::Float);
                self.critic_optimizer.minimize(&value_loss, Some(self.config.max_grad_norm));
                policy_loss_sum += policy_loss.double_value(&[]);
                value_loss_sum += value_loss.double_value(&[]);
                entropy_sum += entropy.double_value(&[]);
                count += 1.0;
                start += minibatch;
            }
        }
        self.steps.clear();
        self.rewards.clear();
        self.terminated.clear();
        self.done.clear();
        self.next_values.clear();
        vec![
            ("policy_loss", policy_loss_sum / count),
            ("value_loss", value_loss_sum / count),
            ("entropy", entropy_sum / count),
        ]
    }
}

impl MultiAgentLearner for Mappo {
    fn act(&mut self, observation: &MultiAgentObservation, memory: &mut Memory, explore: bool) -> Vec<f32> {
        let (actor_input, critic_input) = self.inputs(observation, memory.step);
        if explore {
            self.last_step = memory.step;
        }
        memory.step += 1;
        let actions = tch::no_grad(|| match (&mut self.policy, explore) {
            (Policy::Categorical(actor), true) => {
                actor.sample(&actor_input, &mut self.rng).to_kind(Kind::Float).view([-1, 1])
            }
            (Policy::Categorical(actor), false) => {
                actor.logits(&actor_input).argmax(-1, false).to_kind(Kind::Float).view([-1, 1])
            }
            (Policy::Gaussian(actor), true) => actor.sample(&actor_input, true, &mut self.rng),
            (Policy::Gaussian(actor), false) => actor.mean(&actor_input),
        });
        if explore {
            let log_probs = tch::no_grad(|| self.log_prob_entropy(&actor_input, &actions).0);
            let values = self.values(&critic_input);
            self.steps.push(Collected {
                actor_input,
                critic_input,
                actions: actions.shallow_clone(),
                log_probs,
                values,
            });
        }
        actions.flatten(0, -1).to_device(Device::Cpu).try_into().expect("f32")
    }

    fn observe(&mut self, _before: &MultiAgentObservation, _actions: &[f32], step: &MultiAgentStep) -> Metrics {
        let n = self.shape.0;
        for (b, r) in step.team_rewards.iter().enumerate() {
            for _ in 0..n {
                self.rewards.push(*r);
                self.terminated.push(step.terminated[b] || (self.config.finite_horizon && step.truncated[b]));
                self.done.push(step.terminated[b] || step.truncated[b]);
            }
        }
        self.env_steps += step.team_rewards.len();
        let (_, next_critic) = self.inputs(&step.next, self.last_step + 1);
        self.next_values.extend(self.values(&next_critic));
        let all_done = step.terminated.iter().zip(&step.truncated).all(|(t, u)| *t || *u);
        if all_done {
            self.update()
        } else {
            Vec::new()
        }
    }
}

impl AgentState for Mappo {
    fn var_stores(&mut self) -> Vec<(&'static str, &mut nn::VarStore)> {
        vec![("actor", &mut self.actor_store), ("critic", &mut self.critic_store)]
    }

    /// Taken between rollouts (one rollout is one episode of every env).
    fn save_state(&mut self, state: &mut StateDict) -> Result<()> {
        anyhow::ensure!(self.steps.is_empty(), "MAPPO state is saved between rollouts");
        self.actor_optimizer.save("actor_optimizer", state);
        self.critic_optimizer.save("critic_optimizer", state);
        state.put("mappo", &(&self.rng, &self.value_norm, self.last_step, self.env_steps))?;
        save_stores(self.var_stores(), state);
        Ok(())
    }

    fn load_state(&mut self, state: &StateDict) -> Result<()> {
        self.actor_optimizer.load("actor_optimizer", state)?;
        self.critic_optimizer.load("critic_optimizer", state)?;
        (self.rng, self.value_norm, self.last_step, self.env_steps) = state.get("mappo")?;
        load_stores(self.var_stores(), state)
    }

    fn set_hyperparameters(&mut self, patch: &serde_json::Value) -> Result<()> {
        self.config = patched(&self.config, patch, STRUCTURAL)?;
        self.set_learning_rates(self.env_steps);
        Ok(())
    }
}
