//! Multi-agent deep RL: vectorized multi-agent environments (the QMIX two-step game, MPE
//! simple_spread), value decomposition (`vdn`, `qmix`), `maddpg` and `matd3`, `mappo`, and their
//! run loop.

pub mod heuristic;
pub mod maddpg;
pub mod mappo;
pub mod matd3;
pub mod qmix;
pub mod run;
pub mod simple_spread;
pub mod two_step;
pub mod vdn;

use super::env::ActionSpace;

/// The finite-horizon input (Pardo et al. 2018): the elapsed fraction `step / episode_limit` as
/// a column of `rows` (QMIX's agents and mixer, MAPPO's critic).
pub fn elapsed_column(rows: i64, step: usize, episode_limit: usize, device: tch::Device) -> tch::Tensor {
    tch::Tensor::full([rows, 1], step as f64 / episode_limit.max(1) as f64, (tch::Kind::Float, device))
}

/// One observation of a batch of B multi-agent envs with N agents.
#[derive(Debug, Clone, Default)]
pub struct MultiAgentObservation {
    /// [B, N, obs_dim]
    pub observations: Vec<f32>,
    /// The global state for centralized critics and mixers: [B, state_dim].
    pub states: Vec<f32>,
    /// 1.0 where an action is available: [B, N, actions] (discrete spaces; empty otherwise).
    pub available_actions: Vec<f32>,
}

#[derive(Debug, Clone, Default)]
pub struct MultiAgentStep {
    pub next: MultiAgentObservation,
    /// [B, N]
    pub rewards: Vec<f32>,
    /// The team's reward, the sum over agents: [B].
    pub team_rewards: Vec<f32>,
    /// [B]: the task ended (no bootstrapping).
    pub terminated: Vec<bool>,
    /// [B]: the episode limit cut it (bootstrapping continues from `next`).
    pub truncated: Vec<bool>,
}

/// B copies of a multi-agent task stepped together. Both tasks here have a fixed horizon, so
/// all envs of a batch finish together; after a step that ends them the caller resets the batch.
pub trait MultiAgentEnv: Send {
    fn num_envs(&self) -> usize;
    fn num_agents(&self) -> usize;
    fn observation_dim(&self) -> usize;
    fn state_dim(&self) -> usize;
    /// Every agent's action space (the same for all agents).
    fn action_space(&self) -> ActionSpace;
    fn episode_limit(&self) -> usize;
    /// Env i draws from a stream derived from (seed, i).
    fn reset(&mut self, seed: u64) -> MultiAgentObservation;
    /// `actions` is [B, N, width] (discrete: the index as f32).
    fn step(&mut self, actions: &[f32]) -> MultiAgentStep;
}

/// Multi-agent env ids.
pub const ENV_IDS: &[&str] = &["two_step", "simple_spread", "simple_spread_continuous"];

pub fn make(env_id: &str, num_envs: usize) -> Option<Box<dyn MultiAgentEnv>> {
    match env_id {
        "two_step" => Some(Box::new(two_step::TwoStepGame::new(num_envs))),
        "simple_spread" => Some(Box::new(simple_spread::SimpleSpread::new(num_envs, false))),
        "simple_spread_continuous" => Some(Box::new(simple_spread::SimpleSpread::new(num_envs, true))),
        _ => None,
    }
}
