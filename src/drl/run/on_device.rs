//! The on-policy loop with the envs on the learner's device (`TensorClassicEnv`): the
//! rollout, GAE and the update never copy observations to the host, so an accelerator can step
//! 4,096 to 65,536 envs per call. Per rollout the host reads one number (the episodes finished)
//! and, for agents that normalize observations, the rollout's raw observations for the running
//! statistics (updated once per rollout here, per step in `on_policy`). Evaluation runs on the
//! native envs, as every other run's does.
//!
//! Massively parallel PPO wants fewer, larger minibatches than the 8-env defaults: unless the
//! overrides say otherwise, a device run uses `rollout_steps` 16, 4 minibatches per rollout and 5
//! epochs (Rudin et al. 2021, "Learning to walk in minutes using massively parallel deep RL",
//! Table 2: 4 minibatches, 5 epochs, 24 steps per env).

use super::{env_spec, evaluate_on_policy, TrainConfig, TrainOutcome};
use crate::drl::agents::{Agent, OnPolicyAgent, Rollout};
use crate::drl::algorithms::{self, Learner};
use crate::drl::env::tensor_classic::{TensorClassic, TensorClassicEnv};
use crate::drl::monitor::Monitor;
use anyhow::{bail, Result};
use serde_json::{json, Value};
use std::path::Path;
use tch::{Kind, Tensor};

/// Largest batch of device envs (memory: a few floats per env and step of the rollout).
pub const MAX_DEVICE_ENVS: usize = 1 << 20;

/// GAE (Schulman et al. 2016, Eq. 16) over [T, B] tensors: (advantages, returns), each [T * B].
pub fn gae_tensors(
    rewards: &Tensor,
    values: &Tensor,
    next_values: &Tensor,
    terminated: &Tensor,
    done: &Tensor,
    gamma: f64,
    lambda: f64,
) -> (Tensor, Tensor) {
    let steps = rewards.size()[0];
    let keep_bootstrap = terminated.logical_not().to_kind(Kind::Float);
    let keep_carry = done.logical_not().to_kind(Kind::Float);
    let deltas = rewards + next_values * &keep_bootstrap * gamma - values;
    let mut next_advantage = deltas.get(0).zeros_like();
    let mut advantages = Vec::with_capacity(steps as usize);
    for t in (0..steps).rev() {
        let advantage = deltas.get(t) + keep_carry.get(t) * &next_advantage * (gamma * lambda);
        next_advantage = advantage.shallow_clone();
        advantages.push(advantage);
    }
    advantages.reverse();
    let advantages = Tensor::stack(&advantages, 0);
    let returns = &advantages + values;
    (advantages.flatten(0, 1), returns.flatten(0, 1))
}

/// The overrides with the massively parallel defaults added where the algorithm has the field
/// and the caller did not set it.
fn device_overrides(defaults: &Value, overrides: &Value, rollout_envs: usize) -> Value {
    let mut patched = match overrides {
        Value::Object(map) => map.clone(),
        _ => serde_json::Map::new(),
    };
    let rollout_steps = patched.get("rollout_steps").and_then(Value::as_u64).unwrap_or(16) as usize;
    let suggested = [
        ("rollout_steps", json!(16)),
        ("epochs", json!(5)),
        ("minibatch_size", json!((rollout_envs * rollout_steps / 4).max(1))),
    ];
    for (key, value) in suggested {
        // A2C's whole-rollout step (minibatch null, one epoch) stays as it is.
        let applies =
            defaults.get(key).is_some_and(|d| !d.is_null()) && defaults.get("clip_range").is_some_and(|c| !c.is_null());
        if applies && !patched.contains_key(key) {
            patched.insert(key.into(), value);
        }
    }
    Value::Object(patched)
}

/// Trains an on-policy agent on `num_envs` envs living on `config.device`.
pub fn train_on_device(config: &TrainConfig, num_envs: usize) -> Result<TrainOutcome> {
    let algorithm = algorithms::find(&config.algorithm)?;
    if algorithm.family != "on_policy" || algorithm.multi_agent {
        bail!("device envs train on-policy agents (ppo, ppo_discrete, a2c), not {}", algorithm.name);
    }
    let Some(kind) = TensorClassic::from_env_id(&config.env_id) else {
        bail!("device envs exist for {}, not {}", TensorClassic::ENV_IDS.join(", "), config.env_id);
    };
    if num_envs == 0 || num_envs > MAX_DEVICE_ENVS {
        bail!("device envs: between 1 and {MAX_DEVICE_ENVS}, not {num_envs}");
    }
    if config.out_dir.is_some() || config.resume || config.h_term_lambda != 0.0 || !config.env_config.is_null() {
        bail!("device envs: no checkpoints, resume, H-term or env parameters yet (the native loop has them)");
    }
    let overrides = device_overrides(&(algorithm.defaults)(), &config.overrides, num_envs);
    let hyperparameters = algorithm.configure(&overrides)?;
    let probe = config.envs.make_configured(&config.env_id, 1, &Value::Null)?;
    algorithm.check_takes(&config.env_id, &probe.action_space())?;
    let spec = env_spec(&config.env_id, probe.as_ref());
    let Learner::Single(Agent::OnPolicy(mut agent)) =
        (algorithm.build)(&hyperparameters, &spec, config.device, config.seed)?
    else {
        bail!("{} did not build an on-policy agent", algorithm.name);
    };
    let plan = config.evaluation_plan();
    let run_config = json!({
        "algorithm": config.algorithm, "env": config.env_id, "seed": config.seed, "device_envs": num_envs,
        "total_steps": config.total_steps, "overrides": overrides, "hyperparameters": hyperparameters,
    });
    let mut monitor = Monitor::new(plan, config.hooks.clone(), None, &run_config, None)?;
    let mut env = TensorClassicEnv::new(kind, num_envs, config.device);
    let mut obs = env.reset(config.seed);
    let (mut step, mut episodes) = (0usize, 0usize);
    while monitor.running(step) {
        let (gamma, lambda) = agent.discount();
        let reward_scale = f64::from(agent.reward_scale());
        let norm = agent.observation_normalizer().cloned();
        let input_of = |raw: &Tensor| norm.as_ref().map_or_else(|| raw.shallow_clone(), |n| n.normalize_tensor(raw));
        let steps = agent.rollout_steps();
        let (mut raw, mut inputs, mut actions, mut log_probs, mut values) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut rewards, mut next_values, mut terminated, mut done) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..steps {
            let input = input_of(&obs);
            let (action, log_prob, value) = agent.act(&input, true);
            let result = env.step(&action);
            let finished = result.terminated.logical_or(&result.truncated);
            let true_next = result.final_observations.where_self(&finished.unsqueeze(1), &result.observations);
            next_values.push(agent.value(&input_of(&true_next)).reshape([-1]));
            raw.push(obs);
            inputs.push(input);
            actions.push(action);
            log_probs.push(log_prob);
            values.push(value.reshape([-1]));
            rewards.push(result.rewards * reward_scale);
            terminated.push(result.terminated);
            done.push(finished);
            obs = result.observations;
        }
        let done = Tensor::stack(&done, 0);
        episodes += done.sum(Kind::Int64).int64_value(&[]) as usize;
        step += steps * num_envs;
        let values = Tensor::stack(&values, 0);
        let (advantages, returns) = gae_tensors(
            &Tensor::stack(&rewards, 0),
            &values,
            &Tensor::stack(&next_values, 0),
            &Tensor::stack(&terminated, 0),
            &done,
            f64::from(gamma),
            f64::from(lambda),
        );
        if let Some(norm) = agent.observation_normalizer() {
            let batch: Vec<f32> = Tensor::cat(&raw, 0).to_device(tch::Device::Cpu).flatten(0, 1).try_into()?;
            norm.update(&batch);
        }
        let rollout = Rollout {
            obs: Tensor::cat(&inputs, 0),
            actions: Tensor::cat(&actions, 0),
            log_probs: Tensor::cat(&log_probs, 0),
            values: values.flatten(0, 1),
            advantages,
            returns,
        };
        let losses = agent.update(&rollout);
        let mut iteration = DeviceIteration { config, agent: agent.as_mut() };
        monitor.after_iteration(step, episodes, &losses, &mut iteration)?;
    }
    let (wall_s, train_s) = monitor.clock();
    let reached = monitor.reached_target_at;
    let cancelled = config.hooks.cancelled() && reached.is_none() && step < config.total_steps;
    Ok(TrainOutcome {
        evaluations: monitor.evaluations,
        reached_target_at: reached,
        steps: step,
        wall_s,
        train_s,
        cancelled,
    })
}

struct DeviceIteration<'a> {
    config: &'a TrainConfig,
    agent: &'a mut dyn OnPolicyAgent,
}

impl crate::drl::monitor::Iteration for DeviceIteration<'_> {
    fn evaluate(&mut self, episodes: usize, seed: u64) -> Result<(f64, f64)> {
        let config = self.config;
        evaluate_on_policy(
            &mut *self.agent,
            &config.env_id,
            &config.env_config,
            episodes,
            seed,
            config.device,
            &config.envs,
        )
    }

    fn checkpoint(&mut self, _dir: &Path, _reached_target_at: Option<usize>) -> Result<()> {
        bail!("device-env runs write no checkpoints")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drl::common::gae;

    /// The tensor GAE equals the host one on random rewards, values and episode ends.
    #[test]
    fn tensor_gae_matches_the_host_gae() {
        let (t, b) = (7usize, 5usize);
        let u = |k: u64| {
            let index = Tensor::arange((t * b) as i64, (Kind::Int64, tch::Device::Cpu));
            crate::seed::hashed_uniform(&index, 9, k).view([t as i64, b as i64])
        };
        let (rewards, values, next_values) = (u(0), u(1), u(2));
        let done = u(3).lt(0.3);
        let terminated = done.logical_and(&u(4).lt(0.5));
        let flat = |x: &Tensor| -> Vec<f32> { x.to_kind(Kind::Float).flatten(0, -1).try_into().unwrap() };
        let flags = |x: &Tensor| -> Vec<bool> { flat(x).iter().map(|&v| v > 0.5).collect() };
        let (adv, ret) =
            gae(&flat(&rewards), &flat(&values), &flat(&next_values), &flags(&terminated), &flags(&done), b, 0.97, 0.9);
        let (adv_t, ret_t) = gae_tensors(&rewards, &values, &next_values, &terminated, &done, 0.97, 0.9);
        for (a, b) in adv.iter().zip(flat(&adv_t)).chain(ret.iter().zip(flat(&ret_t))) {
            assert!((a - b).abs() < 1e-5, "{a} vs {b}");
        }
    }
}
