//! The off-policy loop: act (uniformly random during the warm-up), store every transition,
//! update on replayed minibatches on the agent's schedule, then the shared `after_iteration`.

use super::state::RunState;
use super::{evaluate, obs_tensor, to_vec, TrainConfig};
use crate::drl::agents::OffPolicyAgent;
use crate::drl::buffer::{PrioritizedConfig, ReplayBuffer};
use crate::drl::env::{ActionSpace, VecEnv};
use crate::drl::monitor::Monitor;
use crate::drl::state::StateDict;
use anyhow::Result;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::path::Path;

fn random_actions(space: &ActionSpace, count: usize, rng: &mut ChaCha8Rng) -> Vec<f32> {
    match space {
        ActionSpace::Discrete { n } => (0..count).map(|_| rng.gen_range(0..*n) as f32).collect(),
        ActionSpace::Continuous { low, high } => (0..count)
            .flat_map(|_| low.iter().zip(high).map(|(l, h)| rng.gen_range(*l..=*h)).collect::<Vec<_>>())
            .collect(),
    }
}

/// Returns the env steps taken (the budget, or fewer when the target was reached or cancelled).
pub fn train(
    config: &TrainConfig,
    env: &mut dyn VecEnv,
    agent: &mut dyn OffPolicyAgent,
    run: &mut RunState,
    monitor: &mut Monitor,
    resumed: Option<&StateDict>,
) -> Result<usize> {
    let (dim, space, b) = (env.observation_dim(), env.action_space(), env.num_envs());
    let width = space.width();
    let prioritized =
        config.prioritized.then(|| PrioritizedConfig { beta_steps: config.total_steps, ..Default::default() });
    let mut buffer = ReplayBuffer::new(agent.schedule().buffer_size, dim, width, prioritized);
    if let Some(state) = resumed {
        buffer.load("replay", state)?;
    }
    while monitor.running(run.step) {
        let schedule = agent.schedule().clone();
        let actions = if run.step < schedule.learning_starts {
            random_actions(&space, b, &mut run.rng)
        } else {
            to_vec(&agent.act(&obs_tensor(&run.obs, dim, config.device), true))
        };
        let result = env.step(&actions);
        for i in 0..b {
            let done = result.terminated[i] || result.truncated[i];
            let (row, action) = (&run.obs[i * dim..(i + 1) * dim], &actions[i * width..(i + 1) * width]);
            let next = if done { &result.final_observations } else { &result.observations };
            buffer.push(row, action, result.rewards[i], &next[i * dim..(i + 1) * dim], result.terminated[i]);
            run.recorder.record(i, row, action, result.rewards[i], done, &mut run.h_buffer);
            run.episodes += usize::from(done);
        }
        run.obs = result.observations;
        let before = run.step;
        run.step += b;
        agent.on_env_steps(run.step);
        let burst = before / schedule.train_every.max(1) != run.step / schedule.train_every.max(1);
        // The first update follows the first step past the warm-up (SB3's `num_timesteps >
        // learning_starts`), once the replay holds a step taken by the policy.
        if run.step > schedule.learning_starts && !buffer.is_empty() && burst {
            for _ in 0..schedule.updates_per_train {
                run.losses = agent.update(&mut buffer, &mut run.rng);
            }
            let agent_ref: &dyn OffPolicyAgent = agent;
            if let Some(loss) = run.h_term_step(config.device, &|o, a| agent_ref.actor_log_prob(o, a)) {
                agent.actor_step(&loss);
                run.losses.push(("h_term_loss", loss.double_value(&[])));
            }
        }
        let (step, episodes, losses) = (run.step, run.episodes, run.losses.clone());
        let mut iteration = Iteration { config, env: &*env, agent: &mut *agent, run: &*run, buffer: &buffer };
        monitor.after_iteration(step, episodes, &losses, &mut iteration)?;
    }
    Ok(run.step)
}

struct Iteration<'a> {
    config: &'a TrainConfig,
    env: &'a dyn VecEnv,
    agent: &'a mut dyn OffPolicyAgent,
    run: &'a RunState,
    buffer: &'a ReplayBuffer,
}

impl crate::drl::monitor::Iteration for Iteration<'_> {
    fn evaluate(&mut self, episodes: usize, seed: u64) -> Result<(f64, f64)> {
        let (config, agent) = (self.config, &mut *self.agent);
        evaluate(&config.env_id, &config.env_config, episodes, seed, config.device, &config.envs, &mut |o| {
            agent.act(o, false)
        })
    }

    fn checkpoint(&mut self, dir: &Path, reached_target_at: Option<usize>) -> Result<()> {
        self.run.checkpoint(dir, self.env, &mut *self.agent, None, Some(self.buffer), reached_target_at)
    }
}
