//! How well a trained OR-Gym policy folder does against its env's reference policies, on
//! evaluation episodes from a given seed: what a policy manifest records as its validation and
//! what `rlsolver bench orgym` tabulates.

use crate::drl::env::VecEnv;
use crate::drl::run::{greedy_actions, load_policy_for};
use crate::problems::orgym::binpacking::env::{BinPackingConfig, BinPackingVecEnv};
use crate::problems::orgym::binpacking::reference::{rollout as binpacking_rollout, sum_of_squares_action, Packing};
use crate::problems::orgym::env::{first_episode_returns, OrGymEpisode, OrGymVecEnv};
use crate::problems::orgym::inventory::env::{Chain, InventoryConfig};
use crate::problems::orgym::inventory::reference::{base_stock_action, best_base_stock, rollout as inventory_rollout};
use crate::problems::orgym::knapsack::env::{KnapsackConfig, KnapsackVecEnv};
use crate::problems::orgym::knapsack::reference::rollout;
use crate::problems::orgym::newsvendor::env::{NewsvendorConfig, NewsvendorVecEnv};
use crate::problems::orgym::newsvendor::reference::{
    critical_fractile_order, economics_of, plans as newsvendor_plans, rollout as newsvendor_rollout,
};
use crate::problems::orgym::portfolio::env::{Portfolio, PortfolioConfig};
use crate::problems::orgym::portfolio::reference::{
    oracle_wealths, shrinking_horizon_rollout as portfolio_shrinking_horizon,
};
use crate::problems::orgym::tsp::env::{TspConfig, Walk};
use crate::problems::orgym::tsp::reference::reference_returns as tsp_reference_returns;
use crate::problems::orgym::vehicle_routing::env::{Dispatch, VehicleRoutingConfig};
use crate::problems::orgym::vehicle_routing::reference::dispatcher_returns;
use crate::problems::orgym::vmpacking::env::{DataCenter, VmPackingConfig};
use crate::problems::orgym::vmpacking::reference::{rule_returns, Rule};
use anyhow::Result;
use std::path::Path;

/// Tuned reference policies (the fixed threshold, the best base stock) are tuned on episodes
/// from this seed, never on the evaluation ones.
pub const TUNING_SEED: u64 = 11;

/// Mean and 95% confidence half-width (normal approximation).
pub fn mean_ci(values: &[f64]) -> (f64, f64) {
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
    let (returns, references) =
        rollout(env_config, episodes, seed, &mut |obs, dim| greedy_actions(&mut agent, obs, dim));
    Ok(percent_of(&returns, &references))
}

pub fn percent_of(returns: &[f64], references: &[f64]) -> (f64, f64) {
    let ratios: Vec<f64> =
        returns.iter().zip(references).filter(|(_, r)| **r > 0.0).map(|(x, r)| 100.0 * x / r).collect();
    mean_ci(&ratios)
}

/// Mean waste and its 95% half-width of a bin-packing policy folder on `episodes` episodes of
/// `env_config` from `seed`, with sum of squares' on the same episodes, and the policy's
/// failed episodes (an impossible action).
pub fn validate_binpacking(
    dir: &Path,
    env_config: &BinPackingConfig,
    episodes: usize,
    seed: u64,
) -> Result<serde_json::Value> {
    let probe = BinPackingVecEnv::new(env_config.clone(), 1);
    let mut agent = load_policy_for(dir, tch::Device::Cpu, &probe)?;
    let policy = binpacking_rollout(env_config, episodes, seed, &mut |obs, dim| greedy_actions(&mut agent, obs, dim));
    let ss = binpacking_rollout(env_config, episodes, seed, &mut |obs, dim| {
        obs.chunks(dim).map(|row| sum_of_squares_action(env_config, row)).collect()
    });
    let (waste, ci) = mean_ci(&wastes(&policy));
    let (ss_waste, ss_ci) = mean_ci(&wastes(&ss));
    Ok(serde_json::json!({
        "policy_waste": [waste, ci], "sum_of_squares_waste": [ss_waste, ss_ci],
        "failed_episodes": policy.iter().filter(|p| p.failed).count(),
    }))
}

pub fn wastes(packings: &[Packing]) -> Vec<f64> {
    packings.iter().map(|p| -p.episode_return).collect()
}

/// Per-episode returns of a newsvendor policy folder (greedy: the Gaussian's mean).
pub fn newsvendor_policy_returns(
    dir: &Path,
    env_config: &NewsvendorConfig,
    episodes: usize,
    seed: u64,
) -> Result<Vec<f64>> {
    let probe = NewsvendorVecEnv::new(env_config.clone(), 1);
    let mut agent = load_policy_for(dir, tch::Device::Cpu, &probe)?;
    Ok(newsvendor_rollout(env_config, episodes, seed, &mut |obs, dim, _| greedy_actions(&mut agent, obs, dim)))
}

/// The newsvendor's references on the same episodes: the textbook critical fractile's returns,
/// the optimal (clock-aware DP) policy's returns and its expected returns (None where an
/// episode's demand is beyond the DP's grid).
pub struct NewsvendorReferences {
    pub fractile: Vec<f64>,
    pub optimal: Vec<f64>,
    pub expected_optimal: Vec<f64>,
}

pub fn newsvendor_references(env_config: &NewsvendorConfig, episodes: usize, seed: u64) -> NewsvendorReferences {
    let fractile = newsvendor_rollout(env_config, episodes, seed, &mut |obs, dim, _| {
        obs.chunks(dim).map(|row| critical_fractile_order(&economics_of(row)) as f32).collect()
    });
    let plans = newsvendor_plans(env_config, episodes, seed);
    let optimal = newsvendor_rollout(env_config, episodes, seed, &mut |obs, dim, t| {
        obs.chunks(dim)
            .zip(&plans)
            .map(|(row, plan)| plan.as_ref().map_or(0.0, |p| p.order(t, row.get(5).copied().unwrap_or(0.0))))
            .collect()
    });
    let expected_optimal = plans.iter().flatten().map(|p| p.expected_return).collect();
    NewsvendorReferences { fractile, optimal, expected_optimal }
}

/// The mean return (95% half-width) of a newsvendor policy folder on `episodes` episodes of
/// `env_config` from `seed`, with the critical fractile's and the optimal policy's.
pub fn validate_newsvendor(
    dir: &Path,
    env_config: &NewsvendorConfig,
    episodes: usize,
    seed: u64,
) -> Result<serde_json::Value> {
    let policy = newsvendor_policy_returns(dir, env_config, episodes, seed)?;
    let references = newsvendor_references(env_config, episodes, seed);
    Ok(serde_json::json!({
        "policy": mean_ci(&policy), "critical_fractile": mean_ci(&references.fractile),
        "optimal": mean_ci(&references.optimal), "optimal_expected": mean_ci(&references.expected_optimal).0,
    }))
}

/// Per-episode returns of a policy folder (greedy) on `episodes` episodes of `env_config` from
/// `seed`, any OR-Gym env.
pub fn policy_returns<E: OrGymEpisode>(
    dir: &Path,
    env_config: &E::Config,
    episodes: usize,
    seed: u64,
) -> Result<Vec<f64>> {
    let probe = OrGymVecEnv::<E>::new(env_config.clone(), 1);
    let mut agent = load_policy_for(dir, tch::Device::Cpu, &probe)?;
    Ok(first_episode_returns::<E>(env_config, episodes, seed, &mut |_, obs, dim| greedy_actions(&mut agent, obs, dim)))
}

/// The best base-stock levels (tuned on `TUNING_SEED`'s episodes) and their returns on the
/// evaluation episodes.
pub fn inventory_base_stock(env_config: &InventoryConfig, episodes: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let (levels, _) = best_base_stock(env_config, 200, TUNING_SEED);
    let returns = inventory_rollout(env_config, episodes, seed, &mut |env, _, _| {
        (0..env.num_envs()).flat_map(|i| base_stock_action(env_config, env.episode(i), &levels)).collect()
    });
    (levels, returns)
}

/// The mean return (95% half-width) of an inventory policy folder on `episodes` episodes of
/// `env_config` from `seed`, with the best base-stock policy's.
pub fn validate_inventory(
    dir: &Path,
    env_config: &InventoryConfig,
    episodes: usize,
    seed: u64,
) -> Result<serde_json::Value> {
    let policy = policy_returns::<Chain>(dir, env_config, episodes, seed)?;
    let (levels, base_stock) = inventory_base_stock(env_config, episodes, seed);
    Ok(serde_json::json!({"policy": mean_ci(&policy), "base_stock": mean_ci(&base_stock), "base_stock_levels": levels}))
}

/// A PortfolioOpt policy folder's mean wealth and mean percentage of the oracle's (95%
/// half-widths), with the shrinking-horizon LP's.
pub fn validate_portfolio(
    dir: &Path,
    env_config: &PortfolioConfig,
    episodes: usize,
    seed: u64,
) -> Result<serde_json::Value> {
    let policy = policy_returns::<Portfolio>(dir, env_config, episodes, seed)?;
    let (lp, oracle) =
        (portfolio_shrinking_horizon(env_config, episodes, seed), oracle_wealths(env_config, episodes, seed));
    Ok(serde_json::json!({
        "policy": mean_ci(&policy), "policy_percent_of_oracle": percent_of(&policy, &oracle),
        "shrinking_horizon_lp": mean_ci(&lp), "lp_percent_of_oracle": percent_of(&lp, &oracle), "oracle": mean_ci(&oracle),
    }))
}

/// A TSP policy folder's mean return (95% half-width) with the routing reference's.
pub fn validate_tsp(dir: &Path, env_config: &TspConfig, episodes: usize, seed: u64) -> Result<serde_json::Value> {
    let policy = policy_returns::<Walk>(dir, env_config, episodes, seed)?;
    Ok(serde_json::json!({
        "policy": mean_ci(&policy), "reference": mean_ci(&tsp_reference_returns(env_config, episodes, seed)),
    }))
}

/// A VM-packing policy folder's mean return (95% half-width) with first fit's and best fit's.
pub fn validate_vmpacking(
    dir: &Path,
    env_config: &VmPackingConfig,
    episodes: usize,
    seed: u64,
) -> Result<serde_json::Value> {
    let policy = policy_returns::<DataCenter>(dir, env_config, episodes, seed)?;
    Ok(serde_json::json!({
        "policy": mean_ci(&policy),
        "first_fit": mean_ci(&rule_returns(env_config, episodes, seed, Rule::FirstFit)),
        "best_fit": mean_ci(&rule_returns(env_config, episodes, seed, Rule::BestFit)),
        "overloads": policy.iter().filter(|&&r| r <= -1000.0).count(),
    }))
}

/// A VehicleRouting policy folder's mean return (95% half-width) with the dispatcher's.
pub fn validate_vehicle_routing(
    dir: &Path,
    env_config: &VehicleRoutingConfig,
    episodes: usize,
    seed: u64,
) -> Result<serde_json::Value> {
    let policy = policy_returns::<Dispatch>(dir, env_config, episodes, seed)?;
    Ok(serde_json::json!({
        "policy": mean_ci(&policy), "dispatcher": mean_ci(&dispatcher_returns(env_config, episodes, seed)),
    }))
}
