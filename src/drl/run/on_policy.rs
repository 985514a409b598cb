//! The on-policy loop: collect `rollout_steps` from every env (observations normalized by the
//! agent's running statistics when it keeps them, counted as they arrive), GAE (Schulman et al.
//! 2016), one agent update per rollout, then the shared `after_iteration`.

use super::state::RunState;
use super::{evaluate_on_policy, obs_tensor, to_vec, TrainConfig};
use crate::drl::agents::{OnPolicyAgent, Rollout};
use crate::drl::common::gae;
use crate::drl::env::VecEnv;
use crate::drl::monitor::Monitor;
use anyhow::Result;
use std::path::Path;
use tch::{Device, Tensor};

/// What an on-policy agent sees of `obs`: normalized by its running statistics when it keeps
/// them.
fn agent_input(agent: &mut dyn OnPolicyAgent, obs: &[f32], dim: usize, device: Device) -> Tensor {
    let raw = obs_tensor(obs, dim, device);
    match agent.observation_normalizer() {
        Some(norm) => norm.normalize_tensor(&raw),
        None => raw,
    }
}

/// Returns the env steps taken (the budget, or fewer when the target was reached or cancelled).
pub fn train(
    config: &TrainConfig,
    env: &mut dyn VecEnv,
    agent: &mut dyn OnPolicyAgent,
    run: &mut RunState,
    monitor: &mut Monitor,
) -> Result<usize> {
    let (dim, b, device) = (env.observation_dim(), env.num_envs(), config.device);
    let width = env.action_space().width();
    while monitor.running(run.step) {
        let (gamma, lambda) = agent.discount();
        let reward_scale = agent.reward_scale();
        let (mut all_obs, mut all_actions, mut all_log_probs, mut all_values) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut rewards, mut next_values, mut terminated, mut done) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..agent.rollout_steps() {
            let input = agent_input(agent, &run.obs, dim, device);
            let (actions, log_probs, values) = agent.act(&input, true);
            let action_vec = to_vec(&actions);
            let result = env.step(&action_vec);
            // V of the true next state: the final observation where an episode just ended.
            let mut true_next = result.observations.clone();
            for i in 0..b {
                let finished = result.terminated[i] || result.truncated[i];
                if finished {
                    true_next[i * dim..(i + 1) * dim]
                        .copy_from_slice(&result.final_observations[i * dim..(i + 1) * dim]);
                    run.episodes += 1;
                }
                let (row, action) = (&run.obs[i * dim..(i + 1) * dim], &action_vec[i * width..(i + 1) * width]);
                run.recorder.record(i, row, action, result.rewards[i], finished, &mut run.h_buffer);
            }
            // The statistics count each observation as it arrives (a reset's when it is made,
            // `RunState::start`), as SB3's VecNormalize does: V of the next observation is read
            // with the statistics the next step acts with.
            if let Some(norm) = agent.observation_normalizer() {
                norm.update(&result.observations);
            }
            let next_input = agent_input(agent, &true_next, dim, device);
            next_values.extend(to_vec(&agent.value(&next_input)));
            all_obs.push(input);
            all_actions.push(actions);
            all_log_probs.push(log_probs);
            all_values.extend(to_vec(&values));
            rewards.extend(result.rewards.iter().map(|r| r * reward_scale));
            terminated.extend(&result.terminated);
            done.extend(result.terminated.iter().zip(&result.truncated).map(|(t, u)| *t || *u));
            run.obs = result.observations;
            run.step += b;
        }
        let (advantages, returns) = gae(&rewards, &all_values, &next_values, &terminated, &done, b, gamma, lambda);
        let rollout = Rollout {
            obs: Tensor::cat(&all_obs, 0),
            actions: Tensor::cat(&all_actions, 0),
            log_probs: Tensor::cat(&all_log_probs, 0),
            values: Tensor::from_slice(&all_values).to(device),
            advantages: Tensor::from_slice(&advantages).to(device),
            returns: Tensor::from_slice(&returns).to(device),
        };
        run.losses = agent.update(&rollout);
        let agent_ref: &dyn OnPolicyAgent = agent;
        if let Some(loss) = run.h_term_step(device, &|o, a| agent_ref.actor_log_prob(o, a)) {
            agent.actor_step(&loss);
            run.losses.push(("h_term_loss", loss.double_value(&[])));
        }
        let (step, episodes, losses) = (run.step, run.episodes, run.losses.clone());
        let mut iteration = Iteration { config, env: &*env, agent: &mut *agent, run: &*run };
        monitor.after_iteration(step, episodes, &losses, &mut iteration)?;
    }
    Ok(run.step)
}

struct Iteration<'a> {
    config: &'a TrainConfig,
    env: &'a dyn VecEnv,
    agent: &'a mut dyn OnPolicyAgent,
    run: &'a RunState,
}

impl crate::drl::monitor::Iteration for Iteration<'_> {
    fn evaluate(&mut self, episodes: usize, seed: u64) -> Result<(f64, f64)> {
        evaluate_on_policy(
            &mut *self.agent,
            &self.config.env_id,
            &self.config.env_config,
            episodes,
            seed,
            self.config.device,
            &self.config.envs,
        )
    }

    fn checkpoint(&mut self, dir: &Path, reached_target_at: Option<usize>) -> Result<()> {
        let norm = self.agent.observation_normalizer().cloned();
        self.run.checkpoint(dir, self.env, &mut *self.agent, norm.as_ref(), None, reached_target_at)
    }
}
