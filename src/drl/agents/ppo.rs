//! PPO (Schulman et al. 2017) with the clipped surrogate (eq. 7), GAE, optional value clipping
//! and an entropy bonus, for Gaussian (continuous) and categorical (discrete) policies; A2C
//! (Mnih et al. 2016, synchronous) is the same actor-critic with one full-batch step per
//! rollout and the plain policy gradient -A log pi instead of the clipped ratio.
//!
//! A continuous action is the Gaussian's sample as drawn: its log-probability is the sample's,
//! and the env clips it to its box before stepping (the Gymnasium bridge does, as SB3's rollout
//! loop does), so an env that prices its action (MuJoCo's control cost) never charges the part
//! outside the box. `update` reports the approximate KL (r - 1) - log r, the share of clipped
//! ratios and the rollout values' explained variance, as SB3 logs them. Over Hopper-v5's first
//! 400k steps (one seed, 2; every 16th update) the KL and clip fraction stayed close to SB3's (KL
//! 0.007-0.017 against 0.008-0.018, clip fraction 0.10-0.23 against 0.08-0.17), and the policy's
//! entropy fell alike (4.16 to 2.03 against 4.09 to 1.83). The tests hold one update, the
//! advantages and three whole iterations on Hopper-v5 (rollouts, observation statistics,
//! updates) to SB3's own code run on the same weights and random numbers.

use super::{load_stores, patched, save_stores, AgentState, Metrics, OnPolicyAgent, Rollout};
use crate::drl::common::{explained_variance, RunningNorm};
use crate::drl::env::ObservationLayout;
use crate::drl::hyper::{Hyperparameters, Range};
use crate::drl::net::{Activation, GaussianActor, GaussianActorOptions, LayerInit};
use crate::drl::optim::{Optimizer, Rule};
use crate::drl::random::TensorRng;
use crate::drl::state::StateDict;
use crate::drl::structured::{Critic, DiscreteActor};
use anyhow::Result;
use serde::{Deserialize, Serialize};
use tch::{nn, Device, Kind, Tensor};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PpoConfig {
    pub hidden: Vec<i64>,
    pub learning_rate: f64,
    pub gamma: f64,
    pub gae_lambda: f64,
    /// epsilon of eq. 7; `None` = A2C's unclipped policy gradient.
    pub clip_range: Option<f64>,
    /// Clip V around its rollout value by this much (optional, as in OpenAI baselines).
    pub value_clip: Option<f64>,
    pub entropy_coef: f64,
    pub value_coef: f64,
    /// Passes over each rollout (A2C: 1).
    pub epochs: usize,
    /// Minibatch size (A2C: the whole rollout).
    pub minibatch_size: Option<usize>,
    /// Steps per env per rollout.
    pub rollout_steps: usize,
    pub max_grad_norm: f64,
    pub normalize_advantages: bool,
    /// Rewards are multiplied by this before GAE (reward scaling; returns stay in env units
    /// in evaluations).
    pub reward_scale: f64,
    /// RMSprop (alpha 0.99, eps 1e-5) as in A2C's paper and SB3, instead of Adam.
    pub rmsprop: bool,
    /// Orthogonal init (hidden gain sqrt 2, policy output 0.01, value output 1) instead of
    /// PyTorch's default.
    pub orthogonal_init: bool,
    pub activation: Activation,
    /// Initial log sigma of the Gaussian policy (continuous actions).
    pub log_std_init: f64,
    /// gSDE (continuous actions): None = independent Gaussian noise every step; Some(k) = state-
    /// dependent noise whose matrices are redrawn every k steps (0: once per rollout).
    pub sde_sample_freq: Option<usize>,
    /// Running mean/std normalization of observations (the run loop applies it, clipped to +-10).
    pub normalize_observations: bool,
    /// Continuous actions: the Gaussian's unit in env units (its samples are multiplied by
    /// this), so that a policy whose actions are in the hundreds starts at the right scale
    /// (action normalization; 1 for the classic tasks).
    #[serde(default = "unit")]
    pub action_unit: f64,
}

fn unit() -> f64 {
    1.0
}

impl Hyperparameters for PpoConfig {
    fn ranges() -> Vec<(&'static str, Range)> {
        vec![
            ("hidden", Range::Widths),
            ("learning_rate", Range::Positive),
            ("gamma", Range::Unit),
            ("gae_lambda", Range::Unit),
            ("clip_range", Range::OptionalPositive),
            ("value_clip", Range::OptionalPositive),
            ("entropy_coef", Range::NonNegative),
            ("value_coef", Range::NonNegative),
            ("epochs", Range::Positive),
            ("minibatch_size", Range::OptionalPositive),
            ("rollout_steps", Range::Positive),
            ("max_grad_norm", Range::Positive),
            ("normalize_advantages", Range::Flag),
            ("reward_scale", Range::Positive),
            ("rmsprop", Range::Flag),
            ("orthogonal_init", Range::Flag),
            ("activation", Range::OneOf(&["tanh", "relu"])),
            ("log_std_init", Range::Finite),
            ("sde_sample_freq", Range::OptionalNonNegative),
            ("normalize_observations", Range::Flag),
            ("action_unit", Range::Positive),
        ]
    }
}

const STRUCTURAL: &[&str] = &[
    "hidden",
    "rmsprop",
    "orthogonal_init",
    "activation",
    "log_std_init",
    "sde_sample_freq",
    "normalize_observations",
    "action_unit",
];

impl PpoConfig {
    /// Stable-Baselines3 zoo's PPO CartPole-v1 (8 envs x 32 steps, 20 epochs, batch 256).
    pub fn ppo_discrete() -> Self {
        PpoConfig {
            hidden: vec![64, 64],
            learning_rate: 1e-3,
            gamma: 0.98,
            gae_lambda: 0.8,
            clip_range: Some(0.2),
            value_clip: None,
            entropy_coef: 0.0,
            value_coef: 0.5,
            epochs: 20,
            minibatch_size: Some(256),
            rollout_steps: 32,
            max_grad_norm: 0.5,
            normalize_advantages: true,
            reward_scale: 1.0,
            rmsprop: false,
            orthogonal_init: true,
            activation: Activation::Tanh,
            log_std_init: 0.0,
            sde_sample_freq: None,
            normalize_observations: false,
            action_unit: 1.0,
        }
    }

    /// OR-Gym's discrete envs (masked, per-item layouts): rewards in the env's value units
    /// scaled by 1/100, gamma 0.99 (episodes are finite, the return is the packed value), 10
    /// epochs at 3e-4, a small entropy bonus so that early masks do not collapse the policy.
    pub fn orgym() -> Self {
        PpoConfig {
            learning_rate: 3e-4,
            gamma: 0.99,
            gae_lambda: 0.95,
            entropy_coef: 0.01,
            epochs: 10,
            reward_scale: 0.01,
            ..PpoConfig::ppo_discrete()
        }
    }

    /// Knapsack-v3 (accept or reject the item shown): the orgym preset made conservative
    /// (lr 5e-5, 4 epochs, clip 0.1, entropy 0.02). With the default preset the policy
    /// collapsed onto accepting every item that fits within 100k steps (42% of the offline
    /// optimum), and at lr 1e-4 it learned and then collapsed again near 2M steps.
    pub fn orgym_online() -> Self {
        PpoConfig { learning_rate: 5e-5, epochs: 4, entropy_coef: 0.02, clip_range: Some(0.1), ..PpoConfig::orgym() }
    }

    /// BinPacking-v0..v5 (a bin level per item): the orgym preset with gamma 0.995, since an
    /// opened bin's cost comes back only as later items fill it (tens of steps on the large
    /// bins).
    pub fn orgym_binpacking() -> Self {
        PpoConfig { gamma: 0.995, ..PpoConfig::orgym() }
    }

    /// TSP-v0/v1 with `node_features` (a node per action, the Deep Sets scorer): the orgym
    /// preset; TSP-v1's rewards are minus a move's length (tenths of the unit square), so they
    /// are left unscaled, where TSP-v0's completion bonus of 1000 is scaled by 0.01.
    pub fn orgym_tsp(distance_cost: bool) -> Self {
        PpoConfig { reward_scale: if distance_cost { 1.0 } else { 0.01 }, ..PpoConfig::orgym() }
    }

    /// Newsvendor-v0 (an order quantity in [0, 2000], money per step in the thousands): the
    /// continuous preset with actions in units of 100 (a policy starts near zero orders and
    /// moves in hundreds), normalized observations (prices, costs and the pipeline differ by
    /// orders of magnitude), rewards scaled by 1e-3, gamma 0.99 over the 40 steps. 200k steps: 62% of the
    /// optimal policy's return on validation episodes; 1M steps (minibatches of 256): 56%.
    pub fn orgym_newsvendor() -> Self {
        PpoConfig {
            action_unit: 100.0,
            normalize_observations: true,
            reward_scale: 1e-3,
            gamma: 0.99,
            gae_lambda: 0.95,
            sde_sample_freq: None,
            rollout_steps: 256,
            learning_rate: 3e-4,
            ..PpoConfig::ppo_continuous()
        }
    }

    /// InvManagement-v0/v1 (an order per stage, tens of units; profits of a few units of money
    /// per period): the newsvendor's preset with actions in units of 20 (the mean demand),
    /// rewards scaled by 0.1 and gamma 0.97 (the env's own discount).
    pub fn orgym_inventory() -> Self {
        PpoConfig { action_unit: 20.0, reward_scale: 0.1, gamma: 0.97, ..PpoConfig::orgym_newsvendor() }
    }

    /// PortfolioOpt-v0 (shares of three assets to trade, the wealth paid once, at the tenth
    /// period, growing from 100 to about 10^4): the newsvendor's preset with actions in units of
    /// 200 shares, rewards scaled by 1e-3 and gamma 1 (nothing is paid before the end).
    pub fn orgym_portfolio() -> Self {
        PpoConfig { action_unit: 200.0, reward_scale: 1e-3, gamma: 1.0, ..PpoConfig::orgym_newsvendor() }
    }

    /// Zoo's PPO Pendulum-v1 (4 envs x 1024 steps, gamma 0.9, 10 epochs, batch 64, gSDE redrawn
    /// every 4 steps).
    pub fn ppo_continuous() -> Self {
        PpoConfig {
            hidden: vec![64, 64],
            learning_rate: 1e-3,
            gamma: 0.9,
            gae_lambda: 0.95,
            clip_range: Some(0.2),
            value_clip: None,
            entropy_coef: 0.0,
            value_coef: 0.5,
            epochs: 10,
            minibatch_size: Some(64),
            rollout_steps: 1024,
            max_grad_norm: 0.5,
            normalize_advantages: true,
            reward_scale: 1.0,
            rmsprop: false,
            orthogonal_init: true,
            activation: Activation::Tanh,
            log_std_init: 0.0,
            sde_sample_freq: Some(4),
            normalize_observations: false,
            action_unit: 1.0,
        }
    }
}

enum Policy {
    Gaussian(GaussianActor),
    Categorical(DiscreteActor),
}

pub struct Ppo {
    config: PpoConfig,
    store: nn::VarStore,
    policy: Policy,
    value: Critic,
    optimizer: Optimizer,
    rng: TensorRng,
    /// Exploratory `act` calls so far (gSDE redraws its noise every `sde_sample_freq` of them).
    explore_calls: usize,
    observation_norm: Option<RunningNorm>,
}

impl Ppo {
    /// `discrete_actions`: Some(n) for a categorical policy (masked and per-item as `layout`
    /// says), else a Gaussian over `action_dim`.
    pub fn new(
        config: PpoConfig,
        obs_dim: usize,
        action_dim: usize,
        discrete_actions: Option<usize>,
        layout: &ObservationLayout,
        device: Device,
        seed: u64,
    ) -> Self {
        let store = nn::VarStore::new(device);
        let root = store.root();
        let init = if config.orthogonal_init { LayerInit::Orthogonal { output_gain: 0.01 } } else { LayerInit::Torch };
        let (actor, activation) = (&root / "actor", config.activation);
        let policy = match discrete_actions {
            Some(n) => Policy::Categorical(DiscreteActor::new(
                &actor,
                obs_dim as i64,
                n as i64,
                &config.hidden,
                init,
                activation,
                layout,
            )),
            None => {
                let options = GaussianActorOptions {
                    init,
                    activation,
                    log_std_init: config.log_std_init,
                    sde: config.sde_sample_freq.is_some(),
                };
                Policy::Gaussian(GaussianActor::new(&actor, obs_dim as i64, action_dim as i64, &config.hidden, options))
            }
        };
        let value = Critic::new(&(&root / "critic"), obs_dim as i64, &config.hidden, init, activation, layout);
        let rule = if config.rmsprop {
            Rule::RmsProp { alpha: 0.99, eps: 1e-5 }
        } else {
            // eps 1e-5 as in OpenAI baselines' PPO and SB3 (Huang et al. 2022, detail 3).
            Rule::Adam { beta1: 0.9, beta2: 0.999, eps: 1e-5 }
        };
        let optimizer = Optimizer::new(&store, rule, config.learning_rate);
        let observation_norm = config.normalize_observations.then(|| RunningNorm::new(obs_dim));
        let rng = TensorRng::new(seed ^ 0x990);
        Ppo { config, store, policy, value, optimizer, rng, explore_calls: 0, observation_norm }
    }

    fn log_prob_entropy(&self, obs: &Tensor, actions: &Tensor) -> (Tensor, Tensor) {
        match &self.policy {
            Policy::Gaussian(actor) => actor.log_prob_entropy(obs, &(actions / self.config.action_unit)),
            Policy::Categorical(actor) => actor.log_prob_entropy(obs, &actions.squeeze_dim(1)),
        }
    }

    /// One minibatch update; returns (policy loss, value loss, entropy, approximate KL, clip
    /// fraction) as one detached f64 tensor, so that `update` reads the device once per update.
    /// The KL estimate is Schulman's (r - 1) - log r, the one SB3 logs as `approx_kl`.
    fn step(&mut self, rollout: &Rollout, index: &Tensor) -> Tensor {
        let obs = rollout.obs.index_select(0, index);
        let actions = rollout.actions.index_select(0, index);
        let old_log_probs = rollout.log_probs.index_select(0, index);
        let old_values = rollout.values.index_select(0, index);
        let returns = rollout.returns.index_select(0, index);
        let mut advantages = rollout.advantages.index_select(0, index);
        if self.config.normalize_advantages && advantages.size()[0] > 1 {
            advantages = (&advantages - advantages.mean(Kind::Float)) / (advantages.std(true) + 1e-8);
        }
        let (log_probs, entropy) = self.log_prob_entropy(&obs, &actions);
        let log_ratio = &log_probs - &old_log_probs;
        let ratio = log_ratio.exp();
        let eps = self.config.clip_range.unwrap_or(f64::INFINITY);
        let (approx_kl, clip_fraction) = tch::no_grad(|| {
            let kl = (&ratio - 1.0 - &log_ratio).mean(Kind::Float);
            (kl, (&ratio - 1.0).abs().gt(eps).to_kind(Kind::Float).mean(Kind::Float))
        });
        let policy_loss = match self.config.clip_range {
            // L^CLIP = E[min(r A, clip(r, 1 - eps, 1 + eps) A)], r = pi / pi_old (eq. 7)
            Some(eps) => {
                let unclipped = &ratio * &advantages;
                let clipped = ratio.clamp(1.0 - eps, 1.0 + eps) * &advantages;
                -unclipped.minimum(&clipped).mean(Kind::Float)
            }
            None => -(&log_probs * &advantages).mean(Kind::Float),
        };
        let values = self.value.forward(&obs).squeeze_dim(1);
        let value_loss = match self.config.value_clip {
            Some(c) => {
                let clipped = &old_values + (&values - &old_values).clamp(-c, c);
                (&values - &returns).square().maximum(&(clipped - &returns).square()).mean(Kind::Float)
            }
            None => (&values - &returns).square().mean(Kind::Float),
        };
        let entropy = entropy.mean(Kind::Float);
        let loss = &policy_loss + self.config.value_coef * &value_loss - self.config.entropy_coef * &entropy;
        self.optimizer.minimize(&loss, Some(self.config.max_grad_norm));
        Tensor::stack(&[policy_loss.detach(), value_loss.detach(), entropy.detach(), approx_kl, clip_fraction], 0)
            .to_kind(Kind::Double)
    }
}

impl OnPolicyAgent for Ppo {
    fn act(&mut self, obs: &Tensor, explore: bool) -> (Tensor, Tensor, Tensor) {
        tch::no_grad(|| {
            let resample = match self.config.sde_sample_freq {
                Some(0) => self.explore_calls.is_multiple_of(self.config.rollout_steps),
                Some(k) => self.explore_calls.is_multiple_of(k),
                None => false,
            };
            if explore {
                self.explore_calls += 1;
            }
            let actions = match (&mut self.policy, explore) {
                (Policy::Gaussian(actor), true) => actor.sample(obs, resample, &mut self.rng) * self.config.action_unit,
                (Policy::Gaussian(actor), false) => actor.mean(obs) * self.config.action_unit,
                (Policy::Categorical(actor), true) => {
                    actor.sample(obs, &mut self.rng).to_kind(Kind::Float).view([-1, 1])
                }
                (Policy::Categorical(actor), false) => actor.greedy(obs).to_kind(Kind::Float).view([-1, 1]),
            };
            let (log_probs, _) = self.log_prob_entropy(obs, &actions);
            (actions, log_probs, self.value(obs))
        })
    }

    fn value(&self, obs: &Tensor) -> Tensor {
        tch::no_grad(|| self.value.forward(obs).squeeze_dim(1))
    }

    fn update(&mut self, rollout: &Rollout) -> Metrics {
        let n = rollout.obs.size()[0];
        let minibatch = self.config.minibatch_size.map_or(n, |m| (m as i64).min(n));
        let mut sums = Tensor::zeros([5], (Kind::Double, rollout.obs.device()));
        let mut count = 0.0;
        for _ in 0..self.config.epochs {
            let order = self.rng.permutation(n, rollout.obs.device());
            let mut start = 0;
            while start < n {
                let index = order.narrow(0, start, minibatch.min(n - start));
                sums += self.step(rollout, &index);
                count += 1.0;
                start += minibatch;
            }
        }
        // Of the values the rollout was collected with, as SB3 reports it; read with the sums.
        let explained = explained_variance(&rollout.values, &rollout.returns).view([1]);
        let read = Tensor::cat(&[sums, explained], 0).to_device(tch::Device::Cpu);
        let read = Vec::<f64>::try_from(read).expect("a 1-D f64 tensor");
        let names = ["policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction"];
        let (sums, explained) = read.split_at(names.len());
        let mut metrics: Metrics = names.into_iter().zip(sums).map(|(name, sum)| (name, sum / count)).collect();
        metrics.extend(explained.iter().filter(|e| e.is_finite()).map(|&e| ("explained_variance", e)));
        metrics
    }

    fn rollout_steps(&self) -> usize {
        self.config.rollout_steps
    }

    fn discount(&self) -> (f32, f32) {
        (self.config.gamma as f32, self.config.gae_lambda as f32)
    }

    fn reward_scale(&self) -> f32 {
        self.config.reward_scale as f32
    }

    fn actor_log_prob(&self, obs: &Tensor, actions: &Tensor) -> Option<Tensor> {
        Some(self.log_prob_entropy(obs, actions).0)
    }

    fn actor_step(&mut self, loss: &Tensor) {
        self.optimizer.minimize(loss, Some(self.config.max_grad_norm));
    }

    fn observation_normalizer(&mut self) -> Option<&mut RunningNorm> {
        self.observation_norm.as_mut()
    }
}

impl AgentState for Ppo {
    fn var_stores(&mut self) -> Vec<(&'static str, &mut nn::VarStore)> {
        vec![("actor_critic", &mut self.store)]
    }

    fn save_state(&mut self, state: &mut StateDict) -> Result<()> {
        self.optimizer.save("optimizer", state);
        state.put("ppo", &(self.explore_calls, &self.rng, &self.observation_norm))?;
        if let Policy::Gaussian(actor) = &self.policy {
            if let Some(noise) = actor.exploration_noise() {
                state.put_tensor("gsde_noise", noise);
            }
        }
        save_stores(self.var_stores(), state);
        Ok(())
    }

    fn load_state(&mut self, state: &StateDict) -> Result<()> {
        self.optimizer.load("optimizer", state)?;
        (self.explore_calls, self.rng, self.observation_norm) = state.get("ppo")?;
        if let Policy::Gaussian(actor) = &mut self.policy {
            let device = self.store.device();
            actor.set_exploration_noise(state.tensor("gsde_noise").ok().map(|t| t.to(device)));
        }
        load_stores(self.var_stores(), state)
    }

    fn set_hyperparameters(&mut self, patch: &serde_json::Value) -> Result<()> {
        self.config = patched(&self.config, patch, STRUCTURAL)?;
        self.optimizer.set_learning_rate(self.config.learning_rate);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{largest_relative_gap, sb3_update, scalar, snapshots};
    use super::*;
    use crate::drl::random::seeded;

    /// The bench's PPO settings (`bench simulators`, SB3's defaults) with `rollout_steps` per env.
    fn bench_config(rollout_steps: usize) -> PpoConfig {
        PpoConfig {
            learning_rate: 3e-4,
            gamma: 0.99,
            rollout_steps,
            sde_sample_freq: None,
            normalize_observations: true,
            ..PpoConfig::ppo_continuous()
        }
    }

    /// The bench's PPO settings (`bench simulators`, SB3's defaults) at Hopper's shapes: one update
    /// here and SB3's own `PPO.train` (`benches/peers/sb3_update.py`) from the same weights,
    /// rollout and minibatch order end at the same weights, to float rounding: every variable's
    /// difference is under 0.1% of how far the update moved it (1.8e-6 measured; a 10% change of
    /// the gradient-norm clip on SB3's side puts it at 1.1e-2).
    #[test]
    fn one_update_ends_where_stable_baselines3_ends_from_the_same_weights_and_minibatches() {
        let config = bench_config(512);
        let (obs_dim, action_dim, n) = (11, 3, 2048);
        let layout = ObservationLayout::default();
        let mut ppo = seeded(3, || Ppo::new(config.clone(), obs_dim, action_dim, None, &layout, Device::Cpu, 3));
        let mut data = TensorRng::new(11);
        let obs = data.normal(&[n, obs_dim as i64], Device::Cpu);
        let (actions, log_probs, values) = ppo.act(&obs, true);
        let advantages = data.normal(&[n], Device::Cpu) * 2.0;
        let returns = &values + &advantages;
        let mut order_rng = ppo.rng.clone();
        let order: Vec<Tensor> = (0..config.epochs).map(|_| order_rng.permutation(n, Device::Cpu)).collect();
        let input = vec![
            ("obs", obs.shallow_clone()),
            ("actions", actions.shallow_clone()),
            ("log_probs", log_probs.shallow_clone()),
            ("values", values.shallow_clone()),
            ("advantages", advantages.shallow_clone()),
            ("returns", returns.shallow_clone()),
            ("order", Tensor::stack(&order, 0)),
            ("learning_rate", scalar(config.learning_rate)),
            ("clip_range", scalar(config.clip_range.unwrap())),
            ("vf_coef", scalar(config.value_coef)),
            ("max_grad_norm", scalar(config.max_grad_norm)),
            ("batch_size", scalar(config.minibatch_size.unwrap() as f64)),
        ];
        let before = snapshots(&mut ppo);
        let Some(sb3) = sb3_update("ppo", &before, input) else { return };
        ppo.update(&Rollout { obs, actions, log_probs, values, advantages, returns });
        assert_eq!(sb3.len(), before[0].1.len(), "SB3's policy has our variables, no more");
        let gap = largest_relative_gap(&before, &mut ppo, &sb3);
        eprintln!("largest difference from SB3's, relative to the update: {gap:.2e}");
        assert!(gap < 1e-3, "{gap:.3e} of the update apart from SB3's");
    }

    /// GAE with the truncation bootstrap (`common::gae`, as the on-policy loop calls it: V of the
    /// next observation, of the final one where an episode ended) equals SB3's rollout loop,
    /// which adds gamma V(terminal observation) to a truncated step's reward, and its
    /// `compute_returns_and_advantage`, on 64 steps of 4 envs with terminations and truncations.
    #[test]
    fn advantages_equal_stable_baselines3s_with_terminations_and_truncations() {
        use crate::drl::common::gae;
        let (steps, envs, gamma, lambda) = (64usize, 4usize, 0.99f32, 0.95f32);
        let mut data = TensorRng::new(21);
        let rows = |t: Tensor| Vec::<f32>::try_from(t.flatten(0, -1)).unwrap();
        let shape = [steps as i64, envs as i64];
        let rewards = rows(data.normal(&shape, Device::Cpu));
        let values = rows(data.normal(&shape, Device::Cpu) * 5.0);
        let final_values = rows(data.normal(&shape, Device::Cpu) * 5.0);
        let last_values = rows(data.normal(&[envs as i64], Device::Cpu) * 5.0);
        let ends = rows(data.uniform_like(&Tensor::zeros(shape, (Kind::Float, Device::Cpu))));
        let terminated: Vec<bool> = ends.iter().map(|&u| u < 0.05).collect();
        let truncated: Vec<bool> = ends.iter().map(|&u| (0.05..0.10).contains(&u)).collect();
        let done: Vec<bool> = terminated.iter().zip(&truncated).map(|(a, b)| a | b).collect();
        // V of the true next state: the next step's value, the final observation's where the
        // episode ended, the rollout's last values after its last step.
        let next_values: Vec<f32> = (0..steps * envs)
            .map(|i| match (done[i], i + envs < steps * envs) {
                (true, _) => final_values[i],
                (false, true) => values[i + envs],
                (false, false) => last_values[i % envs],
            })
            .collect();
        let (advantages, returns) = gae(&rewards, &values, &next_values, &terminated, &done, envs, gamma, lambda);
        let tensor = |v: &[f32]| Tensor::from_slice(v).view(shape);
        let flag = |v: &[bool]| tensor(&v.iter().map(|&b| f32::from(u8::from(b))).collect::<Vec<_>>());
        let input = vec![
            ("rewards", tensor(&rewards)),
            ("values", tensor(&values)),
            ("final_values", tensor(&final_values)),
            ("terminated", flag(&terminated)),
            ("truncated", flag(&truncated)),
            ("last_values", Tensor::from_slice(&last_values)),
            ("gamma", scalar(f64::from(gamma))),
            ("gae_lambda", scalar(f64::from(lambda))),
        ];
        let Some(sb3) = sb3_update("gae", &[], input) else { return };
        assert!(terminated.iter().filter(|&&t| t).count() > 5 && truncated.iter().filter(|&&t| t).count() > 5);
        for (name, ours) in [("advantages", &advantages), ("returns", &returns)] {
            let theirs = Vec::<f32>::try_from(sb3[name].to_kind(Kind::Float).flatten(0, -1)).unwrap();
            for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
                assert!((a - b).abs() < 1e-4 * (1.0 + b.abs()), "{name}[{i}]: ours {a}, SB3's {b}");
            }
        }
    }

    /// Three whole iterations on Hopper-v5 through the Gymnasium bridge: observations normalized
    /// by the running statistics as they arrive, Gaussian samples clipped by the env, falls and
    /// time-limit truncations (V of the final observation), GAE, then the update; episodes, the
    /// statistics and Adam's moments carry from one rollout into the next. From the same
    /// weights, env seeds, action noise and minibatch orders, SB3's `PPO.learn` under
    /// VecNormalize (`benches/peers/sb3_update.py ppo_iteration`) ends at the same observation
    /// statistics and weights.
    #[test]
    fn three_iterations_on_hopper_end_where_stable_baselines3_ends_with_the_same_noise_and_env_seeds() {
        use crate::drl::common::RunningNorm;
        use crate::drl::run::{train, TrainConfig};
        // Episodes cut at 16 steps (a random policy falls after about 20), so that the rollout
        // holds truncations besides falls.
        let (steps, envs, epochs, iterations, seed, limit) = (128usize, 4usize, 2usize, 3usize, 5u64, 16usize);
        let config = PpoConfig { epochs, ..bench_config(steps) };
        // The run's agent before its first update, built again from the seed (a build is a
        // function of it), and the draws its stream makes: per iteration a noise row per step,
        // then an order per epoch.
        let (obs_dim, action_dim) = (11, 3);
        let layout = ObservationLayout::default();
        let mut ppo = seeded(seed, || Ppo::new(config.clone(), obs_dim, action_dim, None, &layout, Device::Cpu, seed));
        let before = snapshots(&mut ppo);
        let mut draws = ppo.rng.clone();
        let n = (steps * envs) as i64;
        let (mut noise, mut order) = (Vec::new(), Vec::new());
        for _ in 0..iterations {
            noise.extend((0..steps).map(|_| draws.normal(&[envs as i64, action_dim as i64], Device::Cpu)));
            order.extend((0..epochs).map(|_| draws.permutation(n, Device::Cpu)));
        }
        let env_seeds: Vec<i64> = (0..envs).map(|i| crate::drl::env::gymnasium::env_seed(seed, 0, i) as i64).collect();
        let input = vec![
            ("noise", Tensor::stack(&noise, 0).view([iterations as i64, steps as i64, envs as i64, action_dim as i64])),
            ("order", Tensor::stack(&order, 0).view([iterations as i64, epochs as i64, n])),
            ("env_seeds", Tensor::from_slice(&env_seeds)),
            ("max_episode_steps", scalar(limit as f64)),
            ("learning_rate", scalar(config.learning_rate)),
            ("gamma", scalar(config.gamma)),
            ("gae_lambda", scalar(config.gae_lambda)),
            ("clip_range", scalar(config.clip_range.unwrap())),
            ("vf_coef", scalar(config.value_coef)),
            ("max_grad_norm", scalar(config.max_grad_norm)),
            ("batch_size", scalar(config.minibatch_size.unwrap() as f64)),
        ];
        let Some(sb3) = sb3_update("ppo_iteration", &before, input) else { return };

        let dir = std::env::temp_dir().join(format!("rlsolver-ppo-iteration-{}", uuid::Uuid::new_v4()));
        let budget = steps * envs * iterations;
        let run = TrainConfig {
            eval_every: budget,
            eval_episodes: 1,
            overrides: serde_json::to_value(&config).unwrap(),
            out_dir: Some(dir.clone()),
            env_config: serde_json::json!({"max_episode_steps": limit}),
            ..TrainConfig::new("ppo", "gymnasium:Hopper-v5", budget, seed)
        };
        train(&run).unwrap();
        // The run's end state: weights, observation statistics and the stream's position (the
        // run drew exactly the noise and orders given to SB3).
        ppo.load_state(&crate::drl::state::StateDict::read(&dir).unwrap()).unwrap();
        std::fs::remove_dir_all(&dir).ok();
        assert_eq!(ppo.rng, draws, "the run drew other numbers than the noise and orders given to SB3");
        let norm: RunningNorm = ppo.observation_norm.clone().expect("observations normalized");

        let theirs = |key: &str| Vec::<f64>::try_from(sb3[key].to_kind(Kind::Double).flatten(0, -1)).unwrap();
        let (terminated, truncated) = (theirs("terminated")[0], theirs("truncated")[0]);
        let carried = theirs("carried")[0];
        eprintln!(
            "episodes ended: {terminated} terminated, {truncated} truncated; {carried} ran across a rollout boundary"
        );
        assert!(terminated >= 2.0 && truncated >= 2.0, "the rollout holds both ends");
        assert!(carried >= 1.0, "no episode ran across a rollout boundary");
        assert_eq!(theirs("obs_count")[0].round(), norm.count.round(), "observations counted");
        for (name, ours, sb3) in [("mean", &norm.mean, theirs("obs_mean")), ("var", &norm.var, theirs("obs_var"))] {
            for (d, (a, b)) in ours.iter().zip(&sb3).enumerate() {
                assert!((a - b).abs() < 1e-4 * (1.0 + b.abs()), "observation {name}[{d}]: ours {a}, SB3's {b}");
            }
        }
        let gap = largest_relative_gap(&before, &mut ppo, &sb3);
        eprintln!("largest difference from SB3's, relative to the update: {gap:.2e}");
        assert!(gap < 1e-3, "{gap:.3e} of the update apart from SB3's");
    }
}
