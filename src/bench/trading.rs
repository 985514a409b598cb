//! `rlsolver bench trading`: PPO and SAC on StockTrading-v0 (FinRL's env, our generated
//! markets) against buy-and-hold and the mean-variance portfolio, out-of-sample. Per seed s:
//! market `data_seed` s; the agents train (seed s) on its training period with FinRL's published
//! hyperparameters (`finrl/config.py` PPO_PARAMS and SAC_PARAMS), then trade its test period
//! greedily; the baselines buy at the test period's first close and hold: equal dollar weights,
//! and the maximum-Sharpe point of the mean-variance frontier (the portfolio solver, Clarabel)
//! estimated from the training period's daily returns. Reported: cumulative return, annualized
//! Sharpe ratio and maximum drawdown of the test period, median (worst) over seeds.

use anyhow::{Context, Result};
use rlsolver::drl::env::stock_trading::{StockTradingConfig, StockTradingVecEnv, ID};
use rlsolver::drl::env::VecEnv;
use rlsolver::drl::run::{greedy_actions, load_policy_for, train, TrainConfig};
use rlsolver::problems::portfolio::{self, Goal};
use serde_json::json;
use std::fmt::Write as _;

#[derive(Debug, Clone)]
pub struct TradingBenchConfig {
    pub seeds: Vec<u64>,
    pub ppo_steps: usize,
    pub sac_steps: usize,
}

impl Default for TradingBenchConfig {
    fn default() -> Self {
        TradingBenchConfig { seeds: vec![0, 1, 2], ppo_steps: 200_000, sac_steps: 30_000 }
    }
}

/// FinRL's PPO_PARAMS (n_steps 2048 over our 4 envs, ent_coef 0.01, lr 2.5e-4, batch 64) and
/// SAC_PARAMS (batch 64, buffer 1e5, lr 1e-4, learning_starts 100, ent_coef auto_0.1), with SB3's
/// other defaults.
fn finrl_hyperparameters(algorithm: &str) -> serde_json::Value {
    match algorithm {
        "ppo" => json!({"rollout_steps": 512, "entropy_coef": 0.01, "learning_rate": 2.5e-4, "minibatch_size": 64,
                        "epochs": 10, "gamma": 0.99, "gae_lambda": 0.95, "clip_range": 0.2, "value_coef": 0.5,
                        "max_grad_norm": 0.5, "sde_sample_freq": null, "log_std_init": 0.0, "hidden": [64, 64]}),
        _ => json!({"batch_size": 64, "buffer_size": 100_000, "learning_rate": 1e-4, "learning_starts": 100,
                    "initial_alpha": 0.1, "gamma": 0.99, "tau": 0.005, "hidden": [256, 256]}),
    }
}

/// Daily total assets of a period -> (cumulative return, annualized Sharpe, max drawdown).
pub fn performance(assets: &[f64]) -> (f64, f64, f64) {
    let returns: Vec<f64> = assets.windows(2).map(|w| w[1] / w[0] - 1.0).collect();
    let n = returns.len().max(1) as f64;
    let mean = returns.iter().sum::<f64>() / n;
    let sd = (returns.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / n).sqrt();
    let sharpe = if sd > 0.0 { mean / sd * 252f64.sqrt() } else { 0.0 };
    let mut peak = f64::MIN;
    let mut drawdown = 0.0f64;
    for &a in assets {
        peak = peak.max(a);
        drawdown = drawdown.max(1.0 - a / peak);
    }
    (assets.last().copied().unwrap_or(0.0) / assets[0] - 1.0, sharpe, drawdown)
}

/// Buys whole shares worth `weights` of the cash at the first close (paying the buy cost) and
/// holds; the daily total assets.
pub fn buy_and_hold(closes: &[Vec<f64>], weights: &[f64], config: &StockTradingConfig) -> Vec<f64> {
    let mut cash = config.initial_amount;
    let shares: Vec<f64> = weights
        .iter()
        .zip(&closes[0])
        .map(|(w, p)| (config.initial_amount * w / (p * (1.0 + config.buy_cost_pct))).floor())
        .collect();
    for (s, p) in shares.iter().zip(&closes[0]) {
        cash -= s * p * (1.0 + config.buy_cost_pct);
    }
    closes.iter().map(|day| cash + shares.iter().zip(day).map(|(s, p)| s * p).sum::<f64>()).collect()
}

/// The maximum-Sharpe weights (risk-free rate 0) of the long-only frontier of the training
/// period's daily simple returns, over 41 tradeoffs.
pub fn mean_variance_weights(train_closes: &[Vec<f64>]) -> Result<Vec<f64>> {
    let d = train_closes[0].len();
    // Daily returns, a row per day; their mean and sample covariance (ndarray: the dense algebra).
    let returns = ndarray::Array2::from_shape_fn((train_closes.len() - 1, d), |(t, i)| {
        train_closes[t + 1][i] / train_closes[t][i] - 1.0
    });
    let mu = returns.mean_axis(ndarray::Axis(0)).context("no training returns")?;
    let centered = &returns - &mu;
    let cov = centered.t().dot(&centered) / (returns.nrows() as f64 - 1.0);
    let (mu, cov): (Vec<f64>, Vec<Vec<f64>>) = (mu.to_vec(), cov.outer_iter().map(|row| row.to_vec()).collect());
    let instance = portfolio::parse_json(&json!({"mu": mu, "cov": cov}), &Default::default())
        .map_err(|e| anyhow::anyhow!("mean-variance instance: {e:?}"))?;
    let all: Vec<usize> = (0..d).collect();
    let mut best: Option<(f64, Vec<f64>)> = None;
    for k in 0..=40 {
        let lambda = f64::from(k) / 40.0;
        let Some(allocation) = instance.solve_held(&all, &Goal::Tradeoff(lambda), false) else { continue };
        let sharpe = allocation.expected_return / allocation.variance.max(1e-18).sqrt();
        if best.as_ref().is_none_or(|(s, _)| sharpe > *s) {
            let mut weights = vec![0.0; d];
            for (&i, w) in allocation.assets.iter().zip(&allocation.weights) {
                weights[i] = *w;
            }
            best = Some((sharpe, weights));
        }
    }
    Ok(best.context("no frontier point solved")?.1)
}

/// Trains `algorithm` on the training period of market `seed`, then trades the test period
/// greedily; the test period's daily total assets.
fn agent_test_assets(algorithm: &str, steps: usize, seed: u64) -> Result<Vec<f64>> {
    let dir = std::env::temp_dir().join(format!("rlsolver-bench-trading-{}-{algorithm}-{seed}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let train_config = json!({"data_seed": seed, "split": "train"});
    let config = TrainConfig {
        eval_every: (steps / 5).max(1),
        eval_episodes: 1,
        out_dir: Some(dir.clone()),
        overrides: finrl_hyperparameters(algorithm),
        env_config: train_config,
        ..TrainConfig::new(algorithm, ID, steps, seed)
    };
    let outcome = train(&config)?;
    let test = StockTradingConfig { data_seed: seed, split: "test".into(), ..Default::default() };
    let mut env = StockTradingVecEnv::new(test.clone(), 1);
    let mut agent = load_policy_for(&dir, tch::Device::Cpu, &env)?;
    let dim = env.observation_dim();
    let mut obs = env.reset(seed);
    let mut assets = vec![test.initial_amount];
    loop {
        let step = env.step(&greedy_actions(&mut agent, &obs, dim));
        assets.push(assets.last().copied().unwrap_or_default() + f64::from(step.rewards[0]) / test.reward_scaling);
        if step.terminated[0] {
            break;
        }
        obs = step.observations;
    }
    let _ = std::fs::remove_dir_all(&dir);
    crate::progress::row_done(format!(
        "{algorithm} market {seed}: train return {:.1} (last evaluation), test cumulative {:+.3} in {:.0} s",
        outcome.evaluations.last().map_or(f64::NAN, |e| e.return_mean),
        assets.last().unwrap_or(&0.0) / assets[0] - 1.0,
        outcome.wall_s
    ));
    Ok(assets)
}

pub fn run_trading(config: &TradingBenchConfig) -> Result<String> {
    let methods = ["PPO", "SAC", "buy-and-hold (equal)", "mean-variance (max Sharpe)"];
    let mut results: Vec<Vec<(f64, f64, f64)>> = vec![Vec::new(); methods.len()];
    for &seed in &config.seeds {
        let test = StockTradingConfig { data_seed: seed, split: "test".into(), ..Default::default() };
        let env = StockTradingVecEnv::new(test.clone(), 1);
        let d = test.stocks;
        results[0].push(performance(&agent_test_assets("ppo", config.ppo_steps, seed)?));
        results[1].push(performance(&agent_test_assets("sac", config.sac_steps, seed)?));
        results[2].push(performance(&buy_and_hold(env.closes(), &vec![1.0 / d as f64; d], &test)));
        let weights = mean_variance_weights(env.train_closes())?;
        results[3].push(performance(&buy_and_hold(env.closes(), &weights, &test)));
    }
    let summary = |values: Vec<f64>, higher_better: bool| {
        let mut v = values;
        let worst = if higher_better {
            v.iter().copied().fold(f64::INFINITY, f64::min)
        } else {
            v.iter().copied().fold(f64::NEG_INFINITY, f64::max)
        };
        format!("{:.3} ({:.3})", super::drl::median(&mut v), worst)
    };
    let defaults = StockTradingConfig::default();
    let mut out = String::new();
    writeln!(out, "# StockTrading-v0 out-of-sample (`rlsolver bench trading`)\n")?;
    writeln!(
        out,
        "FinRL's stock-trading env (src/drl/env/stock_trading.rs) on generated markets of {} stocks: train {} days, \
         test the next {}; market and training seed s for s in {:?}. PPO {} steps, SAC {} steps, FinRL's \
         hyperparameters. Test period: median (worst) over markets.\n",
        defaults.stocks, defaults.train_days, defaults.test_days, config.seeds, config.ppo_steps, config.sac_steps
    )?;
    writeln!(out, "| method | cumulative return | annualized Sharpe | max drawdown |")?;
    writeln!(out, "|---|---|---|---|")?;
    for (method, rows) in methods.iter().zip(&results) {
        writeln!(
            out,
            "| {method} | {} | {} | {} |",
            summary(rows.iter().map(|r| r.0).collect(), true),
            summary(rows.iter().map(|r| r.1).collect(), true),
            summary(rows.iter().map(|r| r.2).collect(), false)
        )?;
    }
    writeln!(out, "\nPer market (cumulative return): ")?;
    for (k, seed) in config.seeds.iter().enumerate() {
        let cells: Vec<String> = methods.iter().zip(&results).map(|(m, r)| format!("{m} {:+.3}", r[k].0)).collect();
        writeln!(out, "- market {seed}: {}", cells.join(", "))?;
    }
    Ok(out)
}

/// `rlsolver bench trading`: the report, configured by the command's flags.
pub fn from_args(args: super::Args) -> anyhow::Result<String> {
    let defaults = TradingBenchConfig::default();
    let scaled = |steps: usize| ((steps as f64 * args.steps_scale) as usize).max(1000);
    run_trading(&TradingBenchConfig {
        seeds: args.seeds.clone(),
        ppo_steps: scaled(defaults.ppo_steps),
        sac_steps: scaled(defaults.sac_steps),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn performance_of_a_known_path() {
        let (cumulative, _, drawdown) = performance(&[100.0, 110.0, 99.0, 121.0]);
        assert!((cumulative - 0.21).abs() < 1e-12);
        assert!((drawdown - 0.1).abs() < 1e-12);
    }

    #[test]
    fn mean_variance_favours_the_better_asset_and_sums_to_one() {
        // Asset 1 drifts up with the same noise as asset 0, which drifts down.
        let closes: Vec<Vec<f64>> = (0..200)
            .map(|t| {
                let wiggle = if t % 2 == 0 { 1.01 } else { 0.99 };
                vec![100.0 * 0.999f64.powi(t) * wiggle, 100.0 * 1.002f64.powi(t) * wiggle]
            })
            .collect();
        let w = mean_variance_weights(&closes).unwrap();
        assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-6, "{w:?}");
        assert!(w[1] > 0.9, "{w:?}");
    }
}
