//! The deep-RL library, ElegantRL's Net-Agent-Env-Run split: `net` builds networks, `agents`
//! own nets and optimizers (`act`, `update`), `env` steps batches of environments, `run` (and
//! `marl::run`) alternates them, with `monitor` evaluating and checkpointing once for both. The
//! `algorithms` table names every algorithm once; `hyper` declares hyperparameter ranges,
//! `optim` and `random` keep optimizer moments and random streams ours to save, `state` writes
//! whole-run checkpoints. Shared pieces live once in `buffer` and `common`.

pub mod agents;
pub mod algorithms;
pub mod apex;
pub mod buffer;
pub mod common;
pub mod ensemble;
pub mod env;
pub use crate::hooks;
pub mod hterm;
pub mod hyper;
pub mod marl;
pub mod monitor;
pub mod net;
pub mod optim;
pub mod random;
pub mod run;
pub mod state;
pub mod structured;

use anyhow::{bail, Result};
use serde::Serialize;
use std::path::PathBuf;

/// Every algorithm's name, single-agent first.
pub fn algorithm_names() -> Vec<&'static str> {
    algorithms::names()
}

/// One training run of any algorithm of the table, single- or multi-agent: what the CLI and the
/// job service both hand over. Settings left `None` take the run loop's defaults
/// (`run::TrainConfig::new`, `marl::run::MarlConfig::new`).
#[derive(Debug, Clone, Default)]
pub struct TrainRequest {
    pub algorithm: String,
    pub env: String,
    pub total_steps: usize,
    pub seed: u64,
    pub eval_every: Option<usize>,
    pub eval_episodes: Option<usize>,
    /// Single-agent only.
    pub target_return: Option<f64>,
    pub confirm_episodes: Option<usize>,
    /// Hyperparameter overrides by field (null or an object).
    pub overrides: serde_json::Value,
    /// Single-agent only: the env's parameters changed from the id's (an OR-Gym config's
    /// fields; null: none).
    pub env_config: serde_json::Value,
    pub out_dir: Option<PathBuf>,
    pub resume: bool,
    /// None: the CPU.
    pub device: Option<tch::Device>,
    /// Single-agent off-policy only.
    pub prioritized: bool,
    /// Single-agent only; 0 = off.
    pub h_term_lambda: f64,
    /// Multi-agent only (None: the algorithm's batch).
    pub num_envs: Option<usize>,
    /// Single-agent on-policy only: train on this many classic-control envs held as tensors on
    /// `device` (`run::train_on_device`; no checkpoints yet) instead of the algorithm's native batch.
    pub device_envs: Option<usize>,
    pub hooks: hooks::RunHooks,
    /// The envs the run can make by id, `gymnasium:<id>` ones with their Python.
    pub envs: env::Envs,
}

/// What a run reports, whichever loop ran it.
#[derive(Debug, Clone, Serialize)]
pub struct TrainSummary {
    pub steps: usize,
    pub wall_s: f64,
    /// Training time, evaluations excluded (single-agent runs).
    pub train_s: Option<f64>,
    pub reached_target_at: Option<usize>,
    pub cancelled: bool,
    pub evaluations: Vec<monitor::Evaluation>,
}

impl TrainSummary {
    pub fn final_return(&self) -> Option<f64> {
        self.evaluations.last().map(|e| e.return_mean)
    }
}

/// Runs `request` in the loop its algorithm's row calls for.
pub fn train(request: &TrainRequest) -> Result<TrainSummary> {
    let algorithm = algorithms::find(&request.algorithm)?;
    let overrides = if request.overrides.is_null() { serde_json::json!({}) } else { request.overrides.clone() };
    let device = request.device.unwrap_or(tch::Device::Cpu);
    if algorithm.multi_agent {
        let single_only = [
            (request.target_return.is_some(), "a target return"),
            (request.confirm_episodes.is_some(), "confirmation episodes"),
            (request.prioritized, "prioritized replay"),
            (request.h_term_lambda != 0.0, "the H-term"),
            (!request.env_config.is_null(), "an env_config"),
            (request.device_envs.is_some(), "device envs"),
        ];
        if let Some((_, what)) = single_only.iter().find(|(set, _)| *set) {
            bail!("{} is multi-agent: {what} applies to single-agent runs only", algorithm.name);
        }
        let defaults = marl::run::MarlConfig::new(&request.algorithm, &request.env, request.total_steps, request.seed);
        let config = marl::run::MarlConfig {
            eval_every: request.eval_every.unwrap_or(defaults.eval_every),
            eval_episodes: request.eval_episodes.unwrap_or(defaults.eval_episodes),
            overrides,
            num_envs: request.num_envs,
            out_dir: request.out_dir.clone(),
            resume: request.resume,
            device,
            hooks: request.hooks.clone(),
            ..defaults
        };
        let outcome = marl::run::train(&config)?;
        Ok(TrainSummary {
            steps: outcome.steps,
            wall_s: outcome.wall_s,
            train_s: None,
            reached_target_at: None,
            cancelled: outcome.cancelled,
            evaluations: outcome.evaluations,
        })
    } else {
        if request.num_envs.is_some() {
            bail!("{}: the batch of envs is the algorithm's own for single-agent runs", algorithm.name);
        }
        let defaults = run::TrainConfig::new(&request.algorithm, &request.env, request.total_steps, request.seed);
        let config = run::TrainConfig {
            eval_every: request.eval_every.unwrap_or(defaults.eval_every),
            eval_episodes: request.eval_episodes.unwrap_or(defaults.eval_episodes),
            target_return: request.target_return,
            confirm_episodes: request.confirm_episodes.unwrap_or(defaults.confirm_episodes),
            out_dir: request.out_dir.clone(),
            device,
            prioritized: request.prioritized,
            overrides,
            env_config: request.env_config.clone(),
            h_term_lambda: request.h_term_lambda,
            resume: request.resume,
            hooks: request.hooks.clone(),
            envs: request.envs.clone(),
            ..defaults
        };
        let outcome = match request.device_envs {
            Some(envs) => run::train_on_device(&config, envs)?,
            None => run::train(&config)?,
        };
        Ok(TrainSummary {
            steps: outcome.steps,
            wall_s: outcome.wall_s,
            train_s: Some(outcome.train_s),
            reached_target_at: outcome.reached_target_at,
            cancelled: outcome.cancelled,
            evaluations: outcome.evaluations,
        })
    }
}
