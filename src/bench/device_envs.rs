//! `bench device-envs`: the classic-control envs held as tensors on a device
//! (`drl::env::tensor_classic`) and PPO trained on them (`drl::run::train_on_device`), against the
//! native envs and the native on-policy loop, by the same command on the same machine:
//! - env steps per second with uniformly random actions drawn on the device, per env and batch
//!   size (median of 5 timed repeats of at least `repeat_s`), next to the native batch's;
//! - training seconds (evaluations excluded) to a return threshold, median and worst over seeds,
//!   for PPO-discrete on CartPole-v1 (475) and PPO on Pendulum-v1 (-200), with the device envs
//!   at each batch size and with the native loop (the algorithm's own batch).

use super::median;
use anyhow::Result;
use rlsolver::drl::env::tensor_classic::{TensorClassic, TensorClassicEnv};
use rlsolver::drl::env::{self, ActionSpace};
use rlsolver::drl::run::{train, train_on_device, TrainConfig};
use rlsolver::seed::hashed_uniform;
use std::fmt::Write as _;
use std::time::Instant;
use tch::{Device, Kind, Tensor};

pub struct DeviceEnvsBenchConfig {
    pub device: Device,
    /// Batch sizes of the throughput table.
    pub throughput_batches: Vec<usize>,
    /// Seconds per timed repeat (default 0.5).
    pub repeat_s: f64,
    /// Device-env batch sizes of the training table.
    pub training_batches: Vec<usize>,
    pub seeds: Vec<u64>,
}

impl Default for DeviceEnvsBenchConfig {
    fn default() -> Self {
        DeviceEnvsBenchConfig {
            device: Device::Cpu,
            throughput_batches: vec![4096, 65_536],
            repeat_s: 0.5,
            training_batches: vec![256, 1024, 4096],
            seeds: vec![0, 1, 2],
        }
    }
}

/// Device-env steps per second, median of 5 repeats, with random actions drawn on the device.
fn device_throughput(kind: TensorClassic, id: &str, batch: usize, device: Device, repeat_s: f64) -> Result<f64> {
    let space = env::make(id, 1).ok_or_else(|| anyhow::anyhow!("no env {id}"))?.action_space();
    let mut env = TensorClassicEnv::new(kind, batch, device);
    let _ = env.reset(0);
    let index = Tensor::arange(batch as i64, (Kind::Int64, device));
    let mut counter = 0u64;
    let mut action = || {
        counter += 1;
        let u = hashed_uniform(&index, 1, counter);
        match &space {
            ActionSpace::Discrete { n } => (u * *n as f64).floor(),
            ActionSpace::Continuous { low, high } => u * (high[0] - low[0]) as f64 + low[0] as f64,
        }
    };
    let mut rates = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        let mut steps = 0usize;
        let mut rewards = Tensor::zeros([batch as i64], (Kind::Float, device));
        while start.elapsed().as_secs_f64() < repeat_s {
            for _ in 0..16 {
                rewards += env.step(&action()).rewards;
            }
            // Reading one number waits for the device's queue, so the clock counts the work.
            let _ = rewards.sum(Kind::Double).double_value(&[]);
            steps += 16 * batch;
        }
        rates.push(steps as f64 / start.elapsed().as_secs_f64());
    }
    rates.sort_by(f64::total_cmp);
    Ok(median(&rates))
}

/// "median (worst)" seconds over the seeds, "n/N reached".
fn threshold_cell(runs: &[Option<(f64, usize)>]) -> String {
    let mut seconds: Vec<f64> = runs.iter().flatten().map(|r| r.0).collect();
    let reached = seconds.len();
    if reached == 0 {
        return format!("not reached (0/{})", runs.len());
    }
    let mut steps: Vec<f64> = runs.iter().flatten().map(|r| r.1 as f64).collect();
    let worst = if reached == runs.len() {
        format!("{:.1}", seconds.iter().cloned().fold(f64::MIN, f64::max))
    } else {
        "not reached".into()
    };
    seconds.sort_by(f64::total_cmp);
    steps.sort_by(f64::total_cmp);
    format!("{:.1} s ({worst}), {:.0} steps, {reached}/{} reached", median(&seconds), median(&steps), runs.len())
}

pub fn run_device_envs(config: &DeviceEnvsBenchConfig) -> Result<String> {
    let mut report = String::new();
    writeln!(
        report,
        "Device envs on {:?}: env steps per second with random actions (median of 5 repeats of {} s), and PPO \
         training seconds to a threshold (evaluations excluded; median (worst) over seeds {:?}).\n",
        config.device, config.repeat_s, config.seeds
    )?;
    writeln!(report, "| env | B | device envs steps/s | native batch steps/s (same B, CPU) | ratio |")?;
    writeln!(report, "|---|---|---|---|---|")?;
    for id in TensorClassic::ENV_IDS {
        let kind = TensorClassic::from_env_id(id).expect("listed");
        for &batch in &config.throughput_batches {
            let ours = device_throughput(kind, id, batch, config.device, config.repeat_s)?;
            let native = super::drl::env_steps_per_second(id, batch, 5, config.repeat_s)?;
            writeln!(report, "| {id} | {batch} | {ours:.3e} | {native:.3e} | {:.2}x |", ours / native)?;
            crate::progress::row_done(format!("{id} B={batch}: {ours:.3e} vs {native:.3e}"));
        }
    }
    writeln!(report, "\n| algorithm | env | threshold | loop | envs | to threshold |")?;
    writeln!(report, "|---|---|---|---|---|---|")?;
    let tasks = [("ppo_discrete", "CartPole-v1", 475.0, 2_000_000), ("ppo", "Pendulum-v1", -200.0, 10_000_000)];
    for (algorithm, id, threshold, budget) in tasks {
        let base = |seed| TrainConfig {
            target_return: Some(threshold),
            device: config.device,
            ..TrainConfig::new(algorithm, id, budget, seed)
        };
        let native: Vec<Option<(f64, usize)>> = config
            .seeds
            .iter()
            .map(|&seed| {
                let outcome = train(&TrainConfig { eval_every: 1000, ..base(seed) })?;
                crate::progress::row_done(format!(
                    "native {algorithm} {id} seed {seed}: {:?} in {:.1} s",
                    outcome.reached_target_at, outcome.train_s
                ));
                Ok(outcome.reached_target_at.map(|steps| (outcome.train_s, steps)))
            })
            .collect::<Result<_>>()?;
        let envs = rlsolver::drl::algorithms::find(algorithm)?.num_envs;
        writeln!(report, "| {algorithm} | {id} | {threshold} | native | {envs} | {} |", threshold_cell(&native))?;
        for &batch in &config.training_batches {
            let runs: Vec<Option<(f64, usize)>> = config
                .seeds
                .iter()
                .map(|&seed| {
                    // One evaluation per rollout of the device loop (16 steps per env).
                    let outcome = train_on_device(&TrainConfig { eval_every: 16 * batch, ..base(seed) }, batch)?;
                    crate::progress::row_done(format!(
                        "device {algorithm} {id} B={batch} seed {seed}: {:?} in {:.1} s",
                        outcome.reached_target_at, outcome.train_s
                    ));
                    Ok(outcome.reached_target_at.map(|steps| (outcome.train_s, steps)))
                })
                .collect::<Result<_>>()?;
            writeln!(report, "| {algorithm} | {id} | {threshold} | device | {batch} | {} |", threshold_cell(&runs))?;
        }
    }
    Ok(report)
}

/// `rlsolver bench device-envs`: the report, configured by the command's flags.
pub fn from_args(args: super::Args) -> anyhow::Result<String> {
    run_device_envs(&DeviceEnvsBenchConfig {
        device: rlsolver::problems::parse_device(Some(&args.device))?,
        seeds: args.seeds.clone(),
        ..DeviceEnvsBenchConfig::default()
    })
}
