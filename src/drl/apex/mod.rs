//! One off-policy agent split across processes (Ape-X, Horgan et al. 2018): a learner owns the
//! replay buffer and the updates; rollout processes step their own envs with the latest weights
//! and stream transitions to it in binary batches over HTTP (`wire`); the learner publishes its
//! weights every `broadcast_every` updates and the rollouts fetch them when the version they are
//! told moved. The learner updates as fast as it can once its replay holds `learning_starts`
//! transitions, so adding rollouts adds env steps, not updates.

pub mod learner;
pub mod rollout;
pub mod wire;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// What a learner trains (`serve --role learner --learn FILE`).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ApexConfig {
    /// An off-policy single-agent algorithm (dqn, double_dqn, d3qn, ddpg, td3, sac, redq).
    pub algorithm: String,
    pub env: String,
    #[serde(default)]
    pub seed: u64,
    /// Overrides of the algorithm's defaults (`learning_starts`: replay size before the first
    /// update; `buffer_size`; rates ...).
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub hyperparameters: Option<serde_json::Value>,
    /// Updates before the learner stops.
    pub updates: usize,
    /// Publish the weights every this many updates (default 50).
    #[serde(default)]
    pub broadcast_every: Option<usize>,
    /// Transitions a rollout sends per request (default 256).
    #[serde(default)]
    pub send_every: Option<usize>,
    /// Deterministic episodes of the final evaluation (default 20).
    #[serde(default)]
    pub eval_episodes: Option<usize>,
    /// The envs this process can make (its flags for a `gymnasium:<id>` one), never sent.
    #[serde(skip)]
    pub envs: crate::drl::env::Envs,
}

impl ApexConfig {
    pub fn broadcast_every(&self) -> usize {
        self.broadcast_every.unwrap_or(50).max(1)
    }

    pub fn send_every(&self) -> usize {
        self.send_every.unwrap_or(256).clamp(1, wire::MAX_ROWS)
    }

    pub fn overrides(&self) -> serde_json::Value {
        self.hyperparameters.clone().unwrap_or_else(|| serde_json::json!({}))
    }
}
