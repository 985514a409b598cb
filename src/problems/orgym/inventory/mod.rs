//! InvManagement-v0 (backlog) and -v1 (lost sales) as solve endpoints: the env's parameters
//! (the id's defaults, any changed; `demand` fixes every period's demand), one episode ordered
//! by the shipped policy, answered with each period's requested and shipped orders, demand,
//! sales and discounted profit, the return, and on the same demands the best base-stock
//! policy's return (levels tuned on 64 other episodes of these parameters) and the
//! shrinking-horizon LP's (re-planned each period on mean demand). Baselines: `base_stock`,
//! `shrinking_horizon_lp`, `zero`.

/// The env as or-gymnasium defines it, vectorized.
pub mod env;
/// The reference policies the env is measured against.
pub mod reference;

use super::{config_from, with_policy, Endpoint, EpisodeSolve};
use crate::drl::env::VecEnv;
use crate::problems::orgym::env::OrGymConfig;
use crate::problems::orgym::inventory::env::{InventoryConfig, InventoryVecEnv, PeriodLog, IDS};
use crate::problems::orgym::inventory::reference::{base_stock_action, best_base_stock, shrinking_horizon_action};
use crate::problems::{Models, ProblemError, ProblemInput, SolveReport};
use serde_json::{json, Value};
use std::time::Instant;

/// Base-stock levels are tuned on these episodes (the request's seed draws the answered one).
const TUNING_EPISODES: usize = 64;
const TUNING_SEED: u64 = 11;

/// One registry row per env id.
pub(crate) static INVENTORY: [Endpoint<InventoryEpisode>; 2] = [Endpoint::new(IDS[0].0), Endpoint::new(IDS[1].0)];

/// `policy` and the reference policies, each usable as `method`.
const BASELINES: &[&str] = &["policy", "base_stock", "shrinking_horizon_lp", "zero"];

pub(crate) struct InventoryEpisode {
    id: &'static str,
    config: InventoryConfig,
    /// The tuned base-stock levels (they depend on the parameters only), tuned once.
    levels: std::sync::OnceLock<Vec<f64>>,
}

impl InventoryEpisode {
    /// Runs one episode from `seed`, each period's orders from `act` (observation row, chain).
    fn run(
        &self,
        seed: u64,
        act: &mut dyn FnMut(&[f32], &crate::problems::orgym::inventory::env::Chain) -> Vec<f32>,
    ) -> Vec<PeriodLog> {
        self.run_observing(&self.config, seed, act)
    }

    /// `run` with `config`'s observation (the request's, or with the policy's planning features).
    fn run_observing(
        &self,
        config: &InventoryConfig,
        seed: u64,
        act: &mut dyn FnMut(&[f32], &crate::problems::orgym::inventory::env::Chain) -> Vec<f32>,
    ) -> Vec<PeriodLog> {
        let mut env = InventoryVecEnv::new(config.clone(), 1);
        env.reset(seed);
        let mut chain = env.episode(0).clone();
        let mut rng = env.stream(0).clone();
        let mut row = vec![0.0; config.observation_dim()];
        (0..config.periods)
            .map(|_| {
                chain.fill(config, &mut row);
                let orders = act(&row, &chain);
                chain.step_period(config, &orders, &mut rng)
            })
            .collect()
    }

    fn base_stock(&self, seed: u64) -> (Vec<PeriodLog>, &[f64]) {
        let levels = self.levels.get_or_init(|| best_base_stock(&self.config, TUNING_EPISODES, TUNING_SEED).0);
        (self.run(seed, &mut |_, chain| base_stock_action(&self.config, chain, levels)), levels)
    }

    fn shrinking_horizon(&self, seed: u64) -> Vec<PeriodLog> {
        self.run(seed, &mut |_, chain| {
            shrinking_horizon_action(&self.config, chain).unwrap_or_else(|| vec![0.0; self.config.stages()])
        })
    }
}

impl EpisodeSolve for InventoryEpisode {
    type Run = Vec<PeriodLog>;
    const FALLBACK: &'static str = "base_stock";
    const SUMMARY: &'static str = "OR-Gym multi-echelon inventory management: one episode by the shipped policy, with the best base-stock policy's return on the same demands";
    const BASELINES: &'static [&'static str] = BASELINES;

    fn schema() -> Value {
        let numbers = |d: &str| json!({"type": "array", "items": {"type": "number", "minimum": 0}, "description": d});
        let counts = |d: &str| json!({"type": "array", "items": {"type": "integer", "minimum": 0}, "description": d});
        json!({
            "type": "object",
            "properties": {
                "periods": {"type": "integer", "minimum": 1, "description": "periods per episode (30)"},
                "initial_inventory": counts("on-hand stock of stages 0..M-1 ([100, 100, 200])"),
                "price": {"type": "number", "minimum": 0, "description": "the retailer's unit price (2)"},
                "unit_cost": numbers("replenishment cost per stage, the factory last (M + 1 entries)"),
                "penalty": numbers("backlog or lost-sales penalty per stage (M + 1 entries)"),
                "holding_cost": numbers("holding cost of stages 0..M-1"),
                "capacity": counts("supply capacity of stages 1..M"),
                "lead_time": counts("lead time into stages 0..M-1 ([3, 5, 10])"),
                "backlog": {"type": "boolean", "description": "v0: true; v1: false"},
                "mean_demand": {"type": "number", "minimum": 0, "description": "the Poisson demand's mean (20)"},
                "discount": {"type": "number", "exclusiveMinimum": 0, "maximum": 1, "description": "alpha (0.97)"},
                "demand": counts("every period's demand instead of draws")
            }
        })
    }

    fn load(id: &'static str, input: ProblemInput<'_>) -> Result<Self, ProblemError> {
        let config = config_from(InventoryConfig::by_id(id).expect("registered id"), input, InventoryConfig::validate)?;
        Ok(InventoryEpisode { id, config, levels: Default::default() })
    }

    fn policy_run(&self, models: &Models<'_>, seed: u64) -> Result<(Self::Run, String), String> {
        let featured = self.config.policy_observation();
        let probe = InventoryVecEnv::new(featured.clone(), 1);
        with_policy(models, self.id, &probe, |act| self.run_observing(&featured, seed, &mut |row, _| act(row)))
    }

    fn baseline(&self, name: &str, seed: u64) -> Option<Result<Self::Run, ProblemError>> {
        Some(Ok(match name {
            "base_stock" => self.base_stock(seed).0,
            "shrinking_horizon_lp" => self.shrinking_horizon(seed),
            "zero" => self.run(seed, &mut |_, _| vec![0.0; self.config.stages()]),
            _ => return None,
        }))
    }

    fn report(&self, method: &str, log: Vec<PeriodLog>, start: Instant, seed: u64) -> SolveReport {
        let total: f64 = log.iter().map(|p| p.reward).sum();
        let (reference, levels) = self.base_stock(seed);
        let solution = json!({
            "method": method,
            "orders": log.iter().map(|p| &p.requested).collect::<Vec<_>>(),
            "shipped": log.iter().map(|p| &p.shipped).collect::<Vec<_>>(),
            "demands": log.iter().map(|p| p.demand).collect::<Vec<_>>(),
            "sold": log.iter().map(|p| p.sold).collect::<Vec<_>>(),
            "rewards": log.iter().map(|p| p.reward).collect::<Vec<_>>(),
            "return": total,
            "reference": {
                "method": "base_stock", "levels": levels, "return": reference.iter().map(|p| p.reward).sum::<f64>(),
                "shrinking_horizon_lp_return": self.shrinking_horizon(seed).iter().map(|p| p.reward).sum::<f64>(),
            },
        });
        super::episode_report(self.id, total, solution, log.len(), start, seed)
    }

    fn size_summary(&self) -> String {
        format!("{} stages, {} periods", self.config.stages(), self.config.periods)
    }
}
