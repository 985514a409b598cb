//! `rlsolver evaluate`: a checkpoint's mean return over deterministic episodes.

use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct EvaluateArgs {
    /// Folder written by `train --out`.
    #[arg(long)]
    checkpoint: PathBuf,
    #[arg(long, default_value_t = 10)]
    episodes: usize,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[command(flatten)]
    bridge: super::bridge::BridgeArgs,
}

pub fn run(args: EvaluateArgs) -> Result<()> {
    let envs = args.bridge.envs()?;
    let (mut learner, env_id) = rlsolver::drl::run::load_checkpoint(&args.checkpoint, tch::Device::Cpu, &envs)?;
    let env_config = rlsolver::drl::run::checkpoint_env_config(&args.checkpoint)?;
    let (mean, std) = rlsolver::drl::run::evaluate_learner(
        &mut learner,
        &env_id,
        &env_config,
        args.episodes,
        args.seed,
        tch::Device::Cpu,
        &envs,
    )?;
    println!(
        "{}",
        serde_json::json!({"env": env_id, "episodes": args.episodes, "return_mean": mean, "return_std": std})
    );
    Ok(())
}
