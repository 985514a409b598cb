//! `rlsolver bench drl`: env steps/s of the native vectorized environments at several batch
//! sizes, and training seconds (evaluations excluded) to a return threshold, both next to the
//! same measurements of gymnasium and Stable-Baselines3 taken by `benches/peers/sb3_peer.py` in
//! the same run. Medians over repeats/seeds; ratios = peer time / our time (or our rate / peer
//! rate), so above 1 means we are faster.

use anyhow::Result;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rlsolver::drl::env::ActionSpace;
use rlsolver::drl::run::{train, TrainConfig};
use serde::Deserialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Debug, Clone)]
pub struct DrlBenchConfig {
    /// Batch sizes B of the throughput table.
    pub batch_sizes: Vec<usize>,
    /// Timed repeats per (env, B); the median is reported.
    pub repeats: usize,
    /// Minimum seconds of one repeat.
    pub seconds_per_repeat: f64,
    /// Seeds of the time-to-threshold runs.
    pub seeds: Vec<u64>,
    /// `python benches/peers/sb3_peer.py` (None: ours only).
    pub peer: Option<(PathBuf, PathBuf)>,
}

impl Default for DrlBenchConfig {
    /// Batches of 1, 64 and 4096 envs, the median of 5 repeats of at least 0.5 s, seeds 0-2, no peer.
    fn default() -> Self {
        DrlBenchConfig {
            batch_sizes: vec![1, 64, 4096],
            repeats: 5,
            seconds_per_repeat: 0.5,
            seeds: vec![0, 1, 2],
            peer: None,
        }
    }
}

/// One time-to-threshold task, run identically by us and by the peer script.
pub struct ThresholdTask {
    pub algorithm: &'static str,
    pub env_id: &'static str,
    pub threshold: f64,
    pub budget: usize,
    pub eval_every: usize,
}

/// The two speed tasks; SB3 gets the same hyperparameters in the peer script.
pub const THRESHOLD_TASKS: &[ThresholdTask] = &[
    ThresholdTask {
        algorithm: "ppo_discrete",
        env_id: "CartPole-v1",
        threshold: 475.0,
        budget: 100_000,
        eval_every: 1_000,
    },
    ThresholdTask { algorithm: "sac", env_id: "Pendulum-v1", threshold: -200.0, budget: 20_000, eval_every: 1_000 },
];

/// Median env steps/s of `env_id` at batch size `b` under uniformly random actions (a
/// `gymnasium:` id runs through the bridge, its workers started before the clock).
pub fn env_steps_per_second(env_id: &str, b: usize, repeats: usize, seconds: f64) -> Result<f64> {
    let mut env = rlsolver::problems::envs(Default::default()).make_configured(env_id, b, &serde_json::Value::Null)?;
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    // Pre-drawn actions so that the timing holds the env alone.
    let actions: Vec<Vec<f32>> = (0..16)
        .map(|_| match env.action_space() {
            ActionSpace::Discrete { n } => (0..b).map(|_| rng.gen_range(0..n) as f32).collect(),
            ActionSpace::Continuous { low, high } => (0..b)
                .flat_map(|_| low.iter().zip(&high).map(|(l, h)| rng.gen_range(*l..=*h)).collect::<Vec<_>>())
                .collect(),
        })
        .collect();
    env.reset(0);
    let mut rates = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        let start = Instant::now();
        let mut batches = 0usize;
        while start.elapsed().as_secs_f64() < seconds {
            for a in &actions {
                std::hint::black_box(env.step(a));
            }
            batches += actions.len();
        }
        rates.push((batches * b) as f64 / start.elapsed().as_secs_f64());
    }
    Ok(median(&mut rates))
}

pub(crate) fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// (training seconds, env steps) to the threshold per seed; None where it was not reached.
fn our_threshold_runs(task: &ThresholdTask, seeds: &[u64]) -> Result<Vec<Option<(f64, usize)>>> {
    seeds
        .iter()
        .map(|&seed| {
            crate::progress::figure(format!("measuring ours {} {} seed {seed}", task.algorithm, task.env_id));
            let config = TrainConfig {
                eval_every: task.eval_every,
                target_return: Some(task.threshold),
                ..TrainConfig::new(task.algorithm, task.env_id, task.budget, seed)
            };
            let outcome = train(&config)?;
            crate::progress::row_done(format!(
                "ours {} {} seed {seed}: {:?} in {:.1} s",
                task.algorithm, task.env_id, outcome.reached_target_at, outcome.train_s
            ));
            Ok(outcome.reached_target_at.map(|steps| (outcome.train_s, steps)))
        })
        .collect()
}

#[derive(Debug, Deserialize)]
struct PeerReport {
    versions: serde_json::Value,
    env_throughput: Vec<PeerThroughput>,
    threshold: Vec<PeerThreshold>,
}

#[derive(Debug, Deserialize)]
struct PeerThroughput {
    env: String,
    batch: usize,
    steps_per_s: f64,
}

#[derive(Debug, Deserialize)]
struct PeerThreshold {
    algorithm: String,
    env: String,
    reached_at: Option<usize>,
    train_s: f64,
}

fn run_peer(python: &Path, script: &Path, seeds: &[u64]) -> Result<PeerReport> {
    let seeds = seeds.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
    super::run_peer(python, script, &["--seeds".into(), seeds])
}

/// "median s (median steps, k/n reached)" over the reached runs.
fn summarize(runs: &[Option<(f64, usize)>]) -> (String, Option<f64>) {
    let reached: Vec<(f64, usize)> = runs.iter().flatten().copied().collect();
    if reached.is_empty() {
        return (format!("not reached (0/{})", runs.len()), None);
    }
    let s = median(&mut reached.iter().map(|r| r.0).collect::<Vec<_>>());
    let steps = median(&mut reached.iter().map(|r| r.1 as f64).collect::<Vec<_>>());
    (format!("{s:.2} s ({steps:.0} steps, {}/{} reached)", reached.len(), runs.len()), Some(s))
}

/// Runs the benchmark; returns the markdown report.
pub fn run_drl(config: &DrlBenchConfig) -> Result<String> {
    let peer = match &config.peer {
        Some((python, script)) => Some(run_peer(python, script, &config.seeds)?),
        None => None,
    };
    let mut report = String::new();
    writeln!(
        report,
        "Env throughput (uniformly random actions, median of {} x {} s):\n",
        config.repeats, config.seconds_per_repeat
    )?;
    writeln!(report, "| env | B | ours steps/s | gymnasium steps/s (same B) | ratio | gymnasium single env steps/s | ratio to single env |")?;
    writeln!(report, "|---|---|---|---|---|---|---|")?;
    for env_id in &rlsolver::problems::envs(Default::default()).ids() {
        for &b in &config.batch_sizes {
            let ours = env_steps_per_second(env_id, b, config.repeats, config.seconds_per_repeat)?;
            let peer_rate = |batch: usize| {
                peer.as_ref().and_then(|p| {
                    p.env_throughput.iter().find(|t| t.env == *env_id && t.batch == batch).map(|t| t.steps_per_s)
                })
            };
            let cell = |rate: Option<f64>| {
                rate.map_or(("-".to_string(), "-".to_string()), |r| (format!("{r:.0}"), format!("{:.1}x", ours / r)))
            };
            let (same, same_ratio) = cell(peer_rate(b));
            let (single, single_ratio) = cell(peer_rate(1));
            writeln!(report, "| {env_id} | {b} | {ours:.0} | {same} | {same_ratio} | {single} | {single_ratio} |")?;
        }
    }
    writeln!(report, "\nTraining seconds to the threshold (evaluations excluded; deterministic evaluation over 10 episodes every 1000 steps; seeds {:?}; medians over the seeds that reached it):\n", config.seeds)?;
    writeln!(report, "| algorithm | env | threshold | ours | Stable-Baselines3 | SB3 time / our time |")?;
    writeln!(report, "|---|---|---|---|---|---|")?;
    for task in THRESHOLD_TASKS {
        let (ours, our_s) = summarize(&our_threshold_runs(task, &config.seeds)?);
        let (theirs, their_s) = match &peer {
            Some(p) => summarize(
                &p.threshold
                    .iter()
                    .filter(|t| t.algorithm == task.algorithm && t.env == task.env_id)
                    .map(|t| t.reached_at.map(|steps| (t.train_s, steps)))
                    .collect::<Vec<_>>(),
            ),
            None => ("not run".into(), None),
        };
        let ratio = match (our_s, their_s) {
            (Some(a), Some(b)) => format!("{:.1}x", b / a),
            _ => "-".into(),
        };
        writeln!(
            report,
            "| {} | {} | {} | {ours} | {theirs} | {ratio} |",
            task.algorithm, task.env_id, task.threshold
        )?;
    }
    if let Some(p) = &peer {
        writeln!(report, "\nPeer versions: {}", p.versions)?;
    }
    Ok(report)
}

/// `rlsolver bench drl`: the report, configured by the command's flags.
pub fn from_args(args: super::Args) -> anyhow::Result<String> {
    run_drl(&DrlBenchConfig {
        seeds: args.seeds,
        peer: args
            .python
            .map(|python| (python, args.peer_script.clone().unwrap_or_else(|| "benches/peers/sb3_peer.py".into()))),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
    }

    #[test]
    fn summary_uses_reached_runs_only() {
        let (text, s) = summarize(&[Some((2.0, 100)), None, Some((4.0, 300))]);
        assert_eq!(s, Some(3.0));
        assert!(text.contains("2/3 reached"), "{text}");
        assert_eq!(summarize(&[None]).1, None);
    }
}
