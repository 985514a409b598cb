//! PortfolioOpt-v0 as a solve endpoint: the env's parameters (`prices` fixes every period's
//! prices; without it they are drawn with the request's seed), one episode traded by the
//! shipped policy, answered with each period's executed trades, prices, cash and holdings, the
//! final wealth, and on the same prices the perfect-information oracle's wealth (an upper
//! bound) and the shrinking-horizon LP's. Baselines: `shrinking_horizon_lp`, `oracle` (its
//! plan executed), `hold_cash`.

/// The env as or-gymnasium defines it, vectorized.
pub mod env;
/// The reference policies the env is measured against.
pub mod reference;

use super::{config_from, with_policy, Endpoint, EpisodeSolve};
use crate::drl::env::VecEnv;
use crate::problems::orgym::env::OrGymConfig;
use crate::problems::orgym::portfolio::env::{Portfolio, PortfolioConfig, PortfolioVecEnv, Trades};
use crate::problems::orgym::portfolio::reference::{as_action, plan, shrinking_horizon_action};
use crate::problems::{Models, ProblemError, ProblemInput, SolveReport};
use serde_json::{json, Value};
use std::time::Instant;

/// The registry row.
pub(crate) static PORTFOLIO_OPT: Endpoint<PortfolioEpisode> = Endpoint::new(ID);

const ID: &str = "PortfolioOpt-v0";

/// `policy` and the reference policies, each usable as `method`.
const BASELINES: &[&str] = &["policy", "shrinking_horizon_lp", "oracle", "hold_cash"];

pub(crate) struct PortfolioEpisode {
    config: PortfolioConfig,
}

/// One episode: the prices it ran on and each period's trades with the cash and holdings after.
pub(crate) struct Run {
    prices: Vec<Vec<f64>>,
    periods: Vec<(Trades, f64, Vec<f64>)>,
}

impl Run {
    fn wealth(&self) -> f64 {
        self.periods.iter().map(|(t, _, _)| t.reward).sum()
    }
}

impl PortfolioEpisode {
    /// The episode `seed` draws (or the given prices).
    fn start(&self, seed: u64) -> Portfolio {
        let mut env = PortfolioVecEnv::new(self.config.clone(), 1);
        env.reset(seed);
        env.episode(0).clone()
    }

    /// Runs one episode, each period's trades from `act` (observation row, episode).
    fn run(&self, seed: u64, act: &mut dyn FnMut(&[f32], &Portfolio) -> Vec<f32>) -> Run {
        self.run_observing(&self.config, seed, act)
    }

    /// `run` with `config`'s observation (the request's, or with the policy's planning features).
    fn run_observing(
        &self,
        config: &PortfolioConfig,
        seed: u64,
        act: &mut dyn FnMut(&[f32], &Portfolio) -> Vec<f32>,
    ) -> Run {
        let mut episode = self.start(seed);
        let prices = episode.prices.clone();
        let mut row = vec![0.0; config.observation_dim()];
        let periods = (0..self.config.periods())
            .map(|_| {
                episode.fill(config, &mut row);
                let action = act(&row, &episode);
                let trades = episode.step_period(&self.config, &action);
                (trades, episode.cash, episode.holdings.clone())
            })
            .collect();
        Run { prices, periods }
    }

    fn shrinking_horizon(&self, seed: u64) -> Run {
        self.run(seed, &mut |_, episode| shrinking_horizon_action(&self.config, episode))
    }

    /// The oracle's plan (made once on the episode's prices) executed period by period.
    fn oracle(&self, seed: u64) -> Run {
        let start = self.start(seed);
        let planned = plan(&self.config, &start, &start.prices);
        self.run(seed, &mut |_, episode| match &planned {
            Some((trades, _)) => as_action(&self.config, episode, &trades[episode.period]),
            None => vec![0.0; self.config.assets()],
        })
    }
}

impl EpisodeSolve for PortfolioEpisode {
    type Run = Run;
    const FALLBACK: &'static str = "shrinking_horizon_lp";
    const SUMMARY: &'static str = "OR-Gym multi-period asset allocation with transaction costs: one episode by the shipped policy, with the perfect-information oracle's and the shrinking-horizon LP's wealth on the same prices";
    const BASELINES: &'static [&'static str] = BASELINES;

    fn schema() -> Value {
        let costs = |d: &str| json!({"type": "array", "items": {"type": "number", "minimum": 0, "exclusiveMaximum": 1}, "description": d});
        let matrix = |d: &str| json!({"type": "array", "items": {"type": "array", "items": {"type": "number"}}, "description": d});
        json!({
            "type": "object",
            "properties": {
                "initial_cash": {"type": "number", "minimum": 0, "description": "cash at the start (100)"},
                "buy_cost": costs("proportional cost of buying each asset ([0.045, 0.025, 0.035])"),
                "sell_cost": costs("proportional cost of selling each asset ([0.04, 0.02, 0.03])"),
                "price_means": matrix("mean price of each asset (rows) per period (columns); the width is the horizon (or-gym's 3 x 10)"),
                "price_std": {"type": "number", "minimum": 0, "description": "standard deviation of every drawn price (0.45)"},
                "max_trade": {"type": "number", "minimum": 0, "description": "the largest trade per asset and period, in shares (2000)"},
                "prices": matrix("every period's prices (assets x periods, at least 0) instead of draws")
            }
        })
    }

    fn load(_: &'static str, input: ProblemInput<'_>) -> Result<Self, ProblemError> {
        let config = config_from(PortfolioConfig::default(), input, PortfolioConfig::validate)?;
        Ok(PortfolioEpisode { config })
    }

    fn policy_run(&self, models: &Models<'_>, seed: u64) -> Result<(Self::Run, String), String> {
        let featured = self.config.policy_observation();
        let probe = PortfolioVecEnv::new(featured.clone(), 1);
        with_policy(models, ID, &probe, |act| self.run_observing(&featured, seed, &mut |row, _| act(row)))
    }

    fn baseline(&self, name: &str, seed: u64) -> Option<Result<Self::Run, ProblemError>> {
        Some(Ok(match name {
            "shrinking_horizon_lp" => self.shrinking_horizon(seed),
            "oracle" => self.oracle(seed),
            "hold_cash" => self.run(seed, &mut |_, _| vec![0.0; self.config.assets()]),
            _ => return None,
        }))
    }

    fn report(&self, method: &str, run: Run, start: Instant, seed: u64) -> SolveReport {
        let wealth = run.wealth();
        // Only the oracle's promised wealth: its LP, not its episode.
        let episode = self.start(seed);
        let oracle = plan(&self.config, &episode, &episode.prices).map(|(_, wealth)| wealth);
        // The LP's own episode is its reference: not run twice.
        let lp =
            if method.starts_with("shrinking_horizon_lp") { wealth } else { self.shrinking_horizon(seed).wealth() };
        let solution = json!({
            "method": method,
            "prices": run.prices,
            "trades": run.periods.iter().map(|(t, _, _)| &t.shares).collect::<Vec<_>>(),
            "cash": run.periods.iter().map(|(_, c, _)| c).collect::<Vec<_>>(),
            "holdings": run.periods.iter().map(|(_, _, h)| h).collect::<Vec<_>>(),
            "wealth": wealth,
            "reference": {"oracle_wealth": oracle, "shrinking_horizon_lp_wealth": lp},
        });
        super::episode_report(ID, wealth, solution, run.periods.len(), start, seed)
    }

    fn size_summary(&self) -> String {
        format!("{} assets, {} periods", self.config.assets(), self.config.periods())
    }
}
