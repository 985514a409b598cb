//! `rlsolver train`: one deep-RL run on a native or bridged env.

use anyhow::{Context, Result};
use clap::Args;
use rlsolver::problems;
use std::path::PathBuf;

use crate::progress::{self, Measure};

#[derive(Args)]
pub struct TrainArgs {
    /// Algorithm (see `rlsolver algorithms`).
    #[arg(long)]
    algo: String,
    /// Environment id, e.g. CartPole-v1, Pendulum-v1, or any Gymnasium env through the Python
    /// bridge: gymnasium:Hopper-v5, gymnasium:my_package.envs:MyEnv-v0.
    #[arg(long)]
    env: String,
    /// Env-step budget (summed over the batch of envs).
    #[arg(long, default_value_t = 100_000)]
    steps: usize,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Evaluate every this many env steps (default: the library's, 5000 single-agent, 10000
    /// multi-agent).
    #[arg(long)]
    eval_every: Option<usize>,
    /// Deterministic evaluation episodes (default: the library's, 10 single-agent, 32 multi-agent).
    #[arg(long)]
    eval_episodes: Option<usize>,
    /// Stop when the evaluation mean reaches this.
    #[arg(long, allow_hyphen_values = true)]
    target_return: Option<f64>,
    /// Output folder: config.json, metrics.jsonl, weights (safetensors).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Prioritized experience replay (off-policy agents).
    #[arg(long)]
    per: bool,
    /// Off-policy random warm-up steps (the `learning_starts` hyperparameter; default: the
    /// algorithm's).
    #[arg(long)]
    learning_starts: Option<usize>,
    /// Continue the run checkpointed in --out exactly (agent, optimizer moments, replay, envs
    /// and random streams).
    #[arg(long)]
    resume: bool,
    /// A reached target counts only if this many further episodes confirm it (0 = no check;
    /// default: the library's, 100).
    #[arg(long)]
    confirm_episodes: Option<usize>,
    /// H-term weight lambda (0 = off).
    #[arg(long, default_value_t = 0.0)]
    h_term_lambda: f64,
    /// Hyperparameter overrides as a JSON object, e.g. '{"learning_rate": 0.001}'.
    #[arg(long, default_value = "{}")]
    hyper: String,
    /// An OR-Gym env's parameters changed from the id's, as a JSON object, e.g.
    /// '{"node_features": true}' for TSP-v0, or gymnasium.make's keyword arguments for a
    /// gymnasium: env, e.g. '{"forward_reward_weight": 2.0}' (single-agent runs).
    #[arg(long, alias = "env-kwargs")]
    env_config: Option<String>,
    /// Envs stepped as one batch (multi-agent runs; default: the algorithm's).
    #[arg(long)]
    num_envs: Option<usize>,
    /// On-policy runs on classic control: this many envs as tensors on --device, stepped
    /// without leaving it (e.g. 4096; no --out checkpoints yet).
    #[arg(long)]
    device_envs: Option<usize>,
    /// cpu, cuda or auto.
    #[arg(long, default_value = "cpu")]
    device: String,
    #[command(flatten)]
    bridge: super::bridge::BridgeArgs,
}

pub fn run(args: TrainArgs) -> Result<()> {
    let envs = args.bridge.envs()?;
    let mut overrides: serde_json::Value = serde_json::from_str(&args.hyper).context("--hyper is not JSON")?;
    if let (Some(warmup), Some(patch)) = (args.learning_starts, overrides.as_object_mut()) {
        patch.insert("learning_starts".into(), warmup.into());
    }
    let request = rlsolver::drl::TrainRequest {
        algorithm: args.algo,
        env: args.env,
        total_steps: args.steps,
        seed: args.seed,
        eval_every: args.eval_every,
        eval_episodes: args.eval_episodes,
        target_return: args.target_return,
        confirm_episodes: args.confirm_episodes,
        overrides,
        env_config: match &args.env_config {
            Some(text) => serde_json::from_str(text).context("--env-config is not JSON")?,
            None => serde_json::Value::Null,
        },
        out_dir: args.out,
        resume: args.resume,
        device: Some(problems::parse_device(Some(&args.device))?),
        prioritized: args.per,
        h_term_lambda: args.h_term_lambda,
        num_envs: args.num_envs,
        device_envs: args.device_envs,
        hooks: Default::default(),
        envs,
    };
    let what = format!("{} {}", request.algorithm, request.env);
    let _bar = progress::start(Measure::Steps(request.total_steps as u64), &what);
    let request = rlsolver::drl::TrainRequest { hooks: progress::training_hooks(), ..request };
    let summary = rlsolver::drl::train(&request)?;
    println!("{}", serde_json::to_string_pretty(&summary)?);
    Ok(())
}
