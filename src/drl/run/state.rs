//! What a single-agent loop carries between iterations besides the agent, and the checkpoint
//! that saves it with the agent: `state.safetensors` + `state.json` (the whole run, for
//! `resume`), plus `<store>.safetensors` and `observation_norm.json` (the policy alone, for
//! `evaluate` and promotion).

use super::{Progress, TrainConfig};
use crate::drl::agents::{Agent, AgentState, Metrics};
use crate::drl::buffer::ReplayBuffer;
use crate::drl::common::RunningNorm;
use crate::drl::env::VecEnv;
use crate::drl::hterm::{h_term_loss, HTermBuffer, HTermConfig};
use crate::drl::state::StateDict;
use anyhow::Result;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::path::Path;
use tch::{Device, Tensor};

pub const OBSERVATION_NORM_FILE: &str = "observation_norm.json";

/// Per-env running episodes, handed to the H-term buffer when they finish.
#[derive(Serialize, Deserialize)]
pub struct EpisodeRecorder {
    obs: Vec<Vec<f32>>,
    actions: Vec<Vec<f32>>,
    rewards: Vec<Vec<f32>>,
}

impl EpisodeRecorder {
    fn new(envs: usize) -> Self {
        EpisodeRecorder {
            obs: vec![Vec::new(); envs],
            actions: vec![Vec::new(); envs],
            rewards: vec![Vec::new(); envs],
        }
    }

    pub fn record(&mut self, i: usize, obs: &[f32], action: &[f32], reward: f32, done: bool, buffer: &mut HTermBuffer) {
        if !buffer.enabled() {
            return;
        }
        self.obs[i].extend_from_slice(obs);
        self.actions[i].extend_from_slice(action);
        self.rewards[i].push(reward);
        if done {
            let rewards = std::mem::take(&mut self.rewards[i]);
            buffer.push(std::mem::take(&mut self.obs[i]), std::mem::take(&mut self.actions[i]), &rewards);
        }
    }
}

pub struct RunState {
    /// The envs' current observations [B, obs_dim].
    pub obs: Vec<f32>,
    pub step: usize,
    pub episodes: usize,
    /// The loop's own draws (random warm-up actions, replay minibatches, H-term windows).
    pub rng: ChaCha8Rng,
    pub recorder: EpisodeRecorder,
    pub h_buffer: HTermBuffer,
    pub losses: Metrics,
}

/// An on-policy agent's running observation statistics count a reset's observations when they
/// arrive (the loop counts each step's), as SB3's VecNormalize does.
fn count_arrival(agent: &mut Agent, obs: &[f32]) {
    if let Agent::OnPolicy(agent) = agent {
        if let Some(norm) = agent.observation_normalizer() {
            norm.update(obs);
        }
    }
}

impl RunState {
    /// A fresh run (envs reset from the run seed), or the checkpointed one.
    pub fn start(
        config: &TrainConfig,
        env: &mut dyn VecEnv,
        agent: &mut Agent,
        resumed: Option<&StateDict>,
    ) -> Result<Self> {
        let (dim, width) = (env.observation_dim(), env.action_space().width());
        let h_config = HTermConfig { lambda: config.h_term_lambda, ..Default::default() };
        let mut run = RunState {
            obs: env.reset(config.seed),
            step: 0,
            episodes: 0,
            rng: ChaCha8Rng::seed_from_u64(config.seed),
            recorder: EpisodeRecorder::new(env.num_envs()),
            h_buffer: HTermBuffer::new(h_config, dim, width),
            losses: Vec::new(),
        };
        if let Some(state) = resumed {
            agent.state().load_state(state)?;
            env.load_state(state.json("envs")?)?;
            let progress: Progress = state.get("progress")?;
            (run.step, run.episodes) = (progress.step, progress.episodes);
            (run.obs, run.rng, run.recorder) = state.get("run")?;
            run.h_buffer.load_state(state.json("h_term")?)?;
            if !env.resumes_mid_episode() {
                // A simulator whose state the checkpoint lacks: fresh episodes, from a seed the
                // run has not reset with before.
                run.obs = env.reset(config.seed ^ (progress.step as u64).rotate_left(32));
                run.recorder = EpisodeRecorder::new(env.num_envs());
                count_arrival(agent, &run.obs);
            }
        } else {
            count_arrival(agent, &run.obs);
        }
        Ok(run)
    }

    /// Writes the whole run into `dir` (see the module doc).
    pub fn checkpoint(
        &self,
        dir: &Path,
        env: &dyn VecEnv,
        agent: &mut dyn AgentState,
        observation_norm: Option<&RunningNorm>,
        replay: Option<&ReplayBuffer>,
        reached_target_at: Option<usize>,
    ) -> Result<()> {
        let mut state = StateDict::default();
        agent.save_state(&mut state)?;
        if let Some(replay) = replay {
            replay.save("replay", &mut state)?;
        }
        state.put_json("envs", env.save_state()?);
        state.put("run", &(&self.obs, &self.rng, &self.recorder))?;
        state.put_json("h_term", self.h_buffer.save_state()?);
        state.put("progress", &Progress { step: self.step, episodes: self.episodes, reached_target_at })?;
        if let Some(norm) = observation_norm {
            std::fs::write(dir.join(OBSERVATION_NORM_FILE), serde_json::to_string(norm)?)?;
        }
        for (name, store) in agent.var_stores() {
            store.save(dir.join(format!("{name}.safetensors")))?;
        }
        state.write(dir)
    }

    /// One H-term actor step, when enabled and trajectories are stored.
    pub fn h_term_step(
        &mut self,
        device: Device,
        log_prob: &dyn Fn(&Tensor, &Tensor) -> Option<Tensor>,
    ) -> Option<Tensor> {
        if !self.h_buffer.enabled() {
            return None;
        }
        let windows = self.h_buffer.sample(&mut self.rng, device)?;
        let log_probs = log_prob(&windows.obs, &windows.actions)?;
        Some(h_term_loss(&windows, &log_probs, self.h_buffer.lambda()))
    }
}
