//! `rlsolver bench orgym`: every OR-Gym env's shipped policy against its reference (exact DP for
//! Knapsack-v0..v2, the offline optimum for v3) on evaluation episodes the policy never saw
//! (seeds disjoint from training's and from the training monitor's), with the class's textbook
//! heuristics and a uniformly random allowed action beside it, on the default parameters and on
//! changed ones (larger knapsacks, a longer online horizon); then env throughput at B = 1 and
//! B = 4096 against or-gymnasium's own env stepped by `benches/peers/orgym_peer.py` in the run.

use crate::drl::env::orgym::knapsack::{KnapsackConfig, KnapsackVecEnv, Variant};
use crate::drl::env::orgym::knapsack_reference::{best_threshold, greedy_action, online_bellman_value, rollout};
use crate::drl::env::VecEnv;
use crate::drl::run::{load_policy_for, obs_tensor, to_vec};
use anyhow::{Context, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Evaluation episodes start from this seed (training runs use small seeds; the training
/// monitor evaluates on 1_000_003).
pub const EVALUATION_SEED: u64 = 7_000_000_001;
/// The fixed-threshold policy is tuned on these episodes, not on the evaluation ones.
const TUNING_SEED: u64 = 11;

#[derive(Debug, Clone)]
pub struct OrGymBenchConfig {
    /// The folder of the shipped policies (`models/orgym-<env>/`).
    pub models: PathBuf,
    pub episodes: usize,
    /// Python with or-gymnasium, and the peer script (None: our throughput only).
    pub peer: Option<(PathBuf, PathBuf)>,
    /// Envs per batch in the throughput table.
    pub batches: Vec<usize>,
}

impl Default for OrGymBenchConfig {
    fn default() -> Self {
        OrGymBenchConfig { models: "models".into(), episodes: 1000, peer: None, batches: vec![1, 4096] }
    }
}

/// The folder a variant's shipped policy lives in.
pub fn model_dir(models: &Path, variant: Variant) -> PathBuf {
    models.join(format!("orgym-{}", variant.id().to_lowercase()))
}

/// Mean and 95% confidence half-width (normal approximation).
fn mean_ci(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (mean, 1.96 * (var / n).sqrt())
}

/// The mean percentage of the reference (and its 95% half-width) a policy folder reaches on
/// `episodes` episodes of `env_config` from `seed`.
pub fn validate(dir: &Path, env_config: &KnapsackConfig, episodes: usize, seed: u64) -> Result<(f64, f64)> {
    let probe = KnapsackVecEnv::new(env_config.clone(), 1);
    let mut agent = load_policy_for(dir, tch::Device::Cpu, &probe)?;
    let (returns, references) = rollout(env_config, episodes, seed, &mut |obs, dim| {
        to_vec(&crate::drl::run::act_greedy(&mut agent, &obs_tensor(obs, dim, tch::Device::Cpu)))
    });
    Ok(percent_of(&returns, &references))
}

fn percent_of(returns: &[f64], references: &[f64]) -> (f64, f64) {
    let ratios: Vec<f64> = returns.iter().zip(references).filter(|(_, r)| **r > 0.0).map(|(x, r)| 100.0 * x / r).collect();
    mean_ci(&ratios)
}

/// "mean ± ci | % of reference ± ci" cells of one policy's returns.
fn cells(returns: &[f64], references: &[f64]) -> String {
    let (mean, ci) = mean_ci(returns);
    let (ratio, ratio_ci) = percent_of(returns, references);
    format!("{mean:.1} ± {ci:.1} | {ratio:.2} ± {ratio_ci:.2}")
}

/// The settings each variant is measured on: the default, then changed parameters.
fn settings(variant: Variant) -> Vec<(String, KnapsackConfig)> {
    let default = KnapsackConfig::new(variant);
    let changed = match variant {
        Variant::Online => KnapsackConfig { step_limit: 100, capacity: 300, ..default.clone() },
        _ => KnapsackConfig { items: 500, capacity: 500, ..default.clone() },
    };
    let describe = |c: &KnapsackConfig| match variant {
        Variant::Online => format!("N {} C {} T {}", c.items, c.capacity, c.step_limit),
        _ => format!("N {} C {}", c.items, c.capacity),
    };
    vec![(describe(&default), default), (describe(&changed), changed)]
}

fn quality(config: &OrGymBenchConfig, report: &mut String) -> Result<()> {
    let n = config.episodes;
    writeln!(
        report,
        "| env | parameters | reference mean | policy: return ± 95% CI | % of reference | heuristic | return | % of reference | random: % of reference |"
    )?;
    writeln!(report, "|---|---|---|---|---|---|---|---|---|")?;
    let mut bounds = Vec::new();
    for variant in Variant::ALL {
        for (label, env_config) in settings(variant) {
            let dir = model_dir(&config.models, variant);
            let probe = KnapsackVecEnv::new(env_config.clone(), n);
            let policy_cells = match load_policy_for(&dir, tch::Device::Cpu, &probe) {
                Ok(mut agent) => {
                    let (returns, references) = rollout(&env_config, n, EVALUATION_SEED, &mut |obs, dim| {
                        to_vec(&crate::drl::run::act_greedy(&mut agent, &obs_tensor(obs, dim, tch::Device::Cpu)))
                    });
                    cells(&returns, &references)
                }
                Err(error) => {
                    eprintln!("{}: no policy ({error:#})", dir.display());
                    "- | -".into()
                }
            };
            let (heuristic, threshold) = match variant {
                Variant::Online => {
                    let (threshold, _) = best_threshold(&env_config, n, TUNING_SEED);
                    (format!("best fixed threshold (value/weight >= {threshold:.2})"), threshold)
                }
                _ => ("value/weight greedy".to_string(), 0.0),
            };
            let (heuristic_returns, references) = rollout(&env_config, n, EVALUATION_SEED, &mut |obs, dim| {
                obs.chunks(dim).map(|row| greedy_action(&env_config, row, threshold)).collect()
            });
            let mut rng = ChaCha8Rng::seed_from_u64(EVALUATION_SEED);
            let actions = env_config.action_count();
            let (random_returns, _) = rollout(&env_config, n, EVALUATION_SEED, &mut |obs, dim| {
                obs.chunks(dim).map(|row| random_allowed(&row[..actions], &mut rng)).collect()
            });
            let (reference, reference_ci) = mean_ci(&references);
            let random = cells(&random_returns, &references);
            let random_ratio = random.split(" | ").nth(1).unwrap_or("-").to_string();
            writeln!(
                report,
                "| {} | {label} | {reference:.1} ± {reference_ci:.1} | {policy_cells} | {heuristic} | {} | {random_ratio} |",
                variant.id(),
                cells(&heuristic_returns, &references),
            )?;
            if variant == Variant::Online {
                let mut env = KnapsackVecEnv::new(env_config.clone(), n);
                env.reset(EVALUATION_SEED);
                let bound: Vec<f64> = (0..n)
                    .map(|i| online_bellman_value(env.instance(i), env_config.capacity, env_config.step_limit))
                    .collect();
                let bound = bound.iter().sum::<f64>() / n as f64;
                bounds.push(format!(
                    "{} {label}: the best online policy that also knows the clock (Bellman) expects {bound:.1}, {:.2}% of the offline mean",
                    variant.id(),
                    100.0 * bound / reference
                ));
            }
            eprintln!("{} {label} done", variant.id());
        }
    }
    writeln!(report)?;
    for line in bounds {
        writeln!(report, "- {line}")?;
    }
    Ok(())
}

/// A uniformly random allowed action (any action when none is allowed, as the reference does).
fn random_allowed(mask: &[f32], rng: &mut ChaCha8Rng) -> f32 {
    let allowed: Vec<usize> = (0..mask.len()).filter(|&i| mask[i] > 0.5).collect();
    if allowed.is_empty() {
        rng.gen_range(0..mask.len()) as f32
    } else {
        allowed[rng.gen_range(0..allowed.len())] as f32
    }
}

/// Env steps per second of our batch of `b` with random allowed actions: the median of 5
/// repeats of at least 0.3 s each.
fn our_rate(variant: Variant, b: usize) -> f64 {
    let mut env = KnapsackVecEnv::new(KnapsackConfig::new(variant), b);
    let actions_n = env.config().action_count();
    let dim = env.observation_dim();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut obs = env.reset(1);
    let mut rates: Vec<f64> = (0..5)
        .map(|_| {
            let (start, mut steps) = (Instant::now(), 0usize);
            while start.elapsed().as_secs_f64() < 0.3 {
                let actions: Vec<f32> = obs.chunks(dim).map(|row| random_allowed(&row[..actions_n], &mut rng)).collect();
                obs = env.step(&actions).observations;
                steps += b;
            }
            steps as f64 / start.elapsed().as_secs_f64()
        })
        .collect();
    rates.sort_by(f64::total_cmp);
    super::median(&rates)
}

fn throughput(config: &OrGymBenchConfig, report: &mut String) -> Result<()> {
    let peer: Option<serde_json::Value> = match &config.peer {
        Some((python, script)) => {
            let batches: Vec<String> = config.batches.iter().map(usize::to_string).collect();
            let output = std::process::Command::new(python)
                .arg(script)
                .args(["--batches", &batches.join(",")])
                .stderr(std::process::Stdio::inherit())
                .output()
                .with_context(|| format!("running {} {}", python.display(), script.display()))?;
            anyhow::ensure!(output.status.success(), "peer script failed: {}", output.status);
            Some(serde_json::from_slice(&output.stdout).context("peer script output")?)
        }
        None => None,
    };
    let header: String = config.batches.iter().map(|b| format!(" B = {b}: ours | or-gymnasium | ratio |")).collect();
    writeln!(report, "| env |{header}")?;
    writeln!(report, "|---|{}", "---|---|---|".repeat(config.batches.len()))?;
    for variant in Variant::ALL {
        let mut row = format!("| {} |", variant.id());
        for &b in &config.batches {
            let ours = our_rate(variant, b);
            let theirs = peer.as_ref().and_then(|p| p[variant.id()][b.to_string()].as_f64());
            match theirs {
                Some(t) => write!(row, " {ours:.0} | {t:.0} | {:.0}x |", ours / t)?,
                None => write!(row, " {ours:.0} | - | - |")?,
            }
        }
        writeln!(report, "{row}")?;
    }
    Ok(())
}

pub fn run_orgym(config: &OrGymBenchConfig) -> Result<String> {
    let mut report = String::new();
    writeln!(
        report,
        "Policy vs reference: mean over {} evaluation episodes (seed {EVALUATION_SEED}, never trained on), \
         each on a fresh instance of the class; % of reference = mean of per-episode return / reference.\n",
        config.episodes
    )?;
    quality(config, &mut report)?;
    writeln!(report, "\nEnv steps per second (random allowed actions; median of 5 repeats):\n")?;
    throughput(config, &mut report)?;
    Ok(report)
}
