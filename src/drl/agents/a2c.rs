//! A2C (Mnih et al. 2016, "Asynchronous methods for deep RL", synchronous variant as in
//! Stable-Baselines3): the actor-critic of `ppo` with one full-batch step per rollout and the plain
//! policy gradient -A log pi (no clipped ratio), RMSprop. The agent is `ppo::Ppo` with these
//! presets: `continuous` (Gaussian policy) and `discrete` (categorical policy).

use super::ppo::PpoConfig;
use crate::drl::net::Activation;

/// Continuous A2C: the zoo's A2C Pendulum-v1 (8 envs x 8 steps, gamma 0.9, GAE 0.9, value
/// weight 0.4, RMSprop, gSDE redrawn once per rollout from log sigma -2, PyTorch init,
/// normalized observations). The zoo's reward normalization is a fixed reward scale of 0.05
/// here and its linear learning-rate decay is left out.
pub fn continuous() -> PpoConfig {
    PpoConfig {
        rollout_steps: 8,
        gamma: 0.9,
        gae_lambda: 0.9,
        value_coef: 0.4,
        sde_sample_freq: Some(0),
        log_std_init: -2.0,
        orthogonal_init: false,
        normalize_observations: true,
        reward_scale: 0.05,
        ..discrete()
    }
}

/// A2C defaults (Mnih et al. 2016 as in SB3): 5 steps per env, one full-batch step.
pub fn discrete() -> PpoConfig {
    PpoConfig {
        hidden: vec![64, 64],
        learning_rate: 7e-4,
        gamma: 0.99,
        gae_lambda: 1.0,
        clip_range: None,
        value_clip: None,
        entropy_coef: 0.0,
        value_coef: 0.5,
        epochs: 1,
        minibatch_size: None,
        rollout_steps: 5,
        max_grad_norm: 0.5,
        normalize_advantages: false,
        reward_scale: 1.0,
        rmsprop: true,
        orthogonal_init: true,
        activation: Activation::Tanh,
        log_std_init: 0.0,
        sde_sample_freq: None,
        normalize_observations: false,
        action_unit: 1.0,
    }
}
