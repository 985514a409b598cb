//! Newsvendor-v0 as a solve endpoint: the env's parameters (`instance` fixes the economics;
//! without it they are drawn with the request's seed), one 40-step episode ordered by the
//! shipped policy, answered with each step's order, arrival, demand and reward, the return, and
//! on the same demands the optimal policy's return (dynamic programming with the clock) and the
//! textbook critical fractile's. Baselines: `optimal`, `critical_fractile`, `zero`.

/// The env as or-gymnasium defines it, vectorized.
pub mod env;
/// The reference policies the env is measured against.
pub mod reference;

use super::{config_from, with_policy, Endpoint, EpisodeSolve};
use crate::drl::env::VecEnv;
use crate::problems::orgym::newsvendor::env::{NewsvendorConfig, NewsvendorVecEnv, Period};
use crate::problems::orgym::newsvendor::reference::{
    critical_fractile_order, economics_of, OptimalPlan, MAX_DP_WORK, MAX_GRID,
};
use crate::problems::{Models, ProblemError, ProblemInput, SolveReport};
use serde_json::{json, Value};
use std::time::Instant;

/// The registry row.
pub(crate) static NEWSVENDOR: Endpoint<NewsvendorEpisode> = Endpoint::new(ID);

const ID: &str = "Newsvendor-v0";

/// `policy` and the reference policies, each usable as `method`.
const BASELINES: &[&str] = &["policy", "optimal", "critical_fractile", "zero"];

pub(crate) struct NewsvendorEpisode {
    config: NewsvendorConfig,
}

/// One episode: its periods and the economics it ran on.
pub(crate) struct Run {
    periods: Vec<Period>,
    economics: crate::problems::orgym::newsvendor::env::Economics,
    /// The optimal policy's expected return, when this is the optimal policy's episode.
    expected_optimal: Option<f64>,
}

impl Run {
    fn total(&self) -> f64 {
        self.periods.iter().map(|p| p.reward).sum()
    }
}

impl NewsvendorEpisode {
    /// Runs one episode from `seed`, each order from `act` (observation row, step -> order).
    fn run(&self, seed: u64, act: &mut dyn FnMut(&[f32], usize) -> f32) -> Run {
        let mut env = NewsvendorVecEnv::new(self.config.clone(), 1);
        env.reset(seed);
        let economics = env.episode(0).economics;
        // The env's own step loop, period by period (the batch API hides the demand).
        let mut shop = env.episode(0).clone();
        let mut rng = env.stream(0).clone();
        let mut periods = Vec::with_capacity(self.config.step_limit);
        let mut row = vec![0.0; self.config.observation_dim()];
        for t in 0..self.config.step_limit {
            shop.fill(&mut row);
            let order = act(&row, t);
            periods.push(shop.step_period(&self.config, order, &mut rng));
        }
        Run { periods, economics, expected_optimal: None }
    }

    fn fractile(&self, seed: u64) -> Run {
        self.run(seed, &mut |row, _| critical_fractile_order(&economics_of(row)) as f32)
    }

    /// The optimal policy's episode with its expected return (None beyond the DP's limits).
    fn optimal(&self, seed: u64) -> Option<Run> {
        let mut env = NewsvendorVecEnv::new(self.config.clone(), 1);
        env.reset(seed);
        let economics = env.episode(0).economics;
        let plan = OptimalPlan::new(&self.config, &economics)?;
        let run = self.run(seed, &mut |row, t| plan.order(t, row.get(5).copied().unwrap_or(0.0)));
        Some(Run { expected_optimal: Some(plan.expected_return), ..run })
    }
}

impl EpisodeSolve for NewsvendorEpisode {
    type Run = Run;
    const FALLBACK: &'static str = "critical_fractile";
    const SUMMARY: &'static str = "OR-Gym multi-period newsvendor with lead time: one episode by the shipped policy, with the optimal policy's return on the same demands";
    const BASELINES: &'static [&'static str] = BASELINES;

    fn schema() -> Value {
        let number = |description: &str| json!({"type": "number", "minimum": 0, "description": description});
        json!({
            "type": "object",
            "properties": {
                "lead_time": {"type": "integer", "minimum": 0, "maximum": crate::problems::orgym::newsvendor::env::MAX_LEAD_TIME, "description": "steps an order takes to arrive (5)"},
                "step_limit": {"type": "integer", "minimum": 1, "description": "steps per episode (40)"},
                "max_inventory": number("orders are clipped so the pipeline holds at most this (4000)"),
                "max_order_quantity": number("the action box's upper bound (2000)"),
                "p_max": number("drawn prices are uniform below this (100)"),
                "h_max": number("drawn holding costs are below min(cost, this) (5)"),
                "k_max": number("drawn lost-sales penalties are below this (10)"),
                "mu_max": number("drawn mean demands are below this (200)"),
                "gamma": number("the discount in the purchase term (1)"),
                "instance": {
                    "type": "object",
                    "properties": {
                        "price": number("p"), "cost": number("c"), "holding_cost": number("h"),
                        "lost_sales_penalty": number("k"), "mean_demand": number("mu of the Poisson demand")
                    },
                    "required": ["price", "cost", "holding_cost", "lost_sales_penalty", "mean_demand"],
                    "description": "the economics; absent: drawn with the request's seed"
                }
            }
        })
    }

    fn load(_: &'static str, input: ProblemInput<'_>) -> Result<Self, ProblemError> {
        let config = config_from(NewsvendorConfig::default(), input, NewsvendorConfig::validate)?;
        Ok(NewsvendorEpisode { config })
    }

    fn policy_run(&self, models: &Models<'_>, seed: u64) -> Result<(Self::Run, String), String> {
        let probe = NewsvendorVecEnv::new(self.config.clone(), 1);
        with_policy(models, ID, &probe, |act| self.run(seed, &mut |row, _| act(row)[0]))
    }

    fn baseline(&self, name: &str, seed: u64) -> Option<Result<Self::Run, ProblemError>> {
        Some(Ok(match name {
            "critical_fractile" => self.fractile(seed),
            "zero" => self.run(seed, &mut |_, _| 0.0),
            "optimal" => {
                return Some(self.optimal(seed).ok_or_else(|| {
                    let message = format!(
                        "the optimal policy's DP takes mean demands up to about {} and steps x grid^2 up to {:e}; this episode is larger",
                        MAX_GRID * 7 / 8,
                        MAX_DP_WORK
                    );
                    ProblemError::invalid("method", message)
                }))
            }
            _ => return None,
        }))
    }

    /// The answer, against the optimal policy's episode on the same seed (the run itself when it
    /// is that episode: the DP runs once).
    fn report(&self, method: &str, run: Run, start: Instant, seed: u64) -> SolveReport {
        let computed;
        let reference = if run.expected_optimal.is_some() {
            Some(&run)
        } else {
            computed = self.optimal(seed);
            computed.as_ref()
        };
        let total = run.total();
        let fractile = self.fractile(seed);
        let solution = json!({
            "method": method,
            "economics": run.economics,
            "orders": run.periods.iter().map(|p| p.order).collect::<Vec<_>>(),
            "on_hand": run.periods.iter().map(|p| p.on_hand).collect::<Vec<_>>(),
            "demands": run.periods.iter().map(|p| p.demand).collect::<Vec<_>>(),
            "rewards": run.periods.iter().map(|p| p.reward).collect::<Vec<_>>(),
            "return": total,
            "reference": match reference {
                Some(optimal) => json!({
                    "method": "optimal",
                    "return": optimal.total(),
                    "expected_return": optimal.expected_optimal,
                    "critical_fractile_return": fractile.total(),
                }),
                // Beyond the DP's limits the critical fractile is the one reference there is
                // (no null fields: a null in a solution reads as an overflow).
                None => json!({"method": "critical_fractile", "return": fractile.total(),
                               "critical_fractile_return": fractile.total()}),
            },
        });
        super::episode_report(ID, total, solution, run.periods.len(), start, seed)
    }

    fn size_summary(&self) -> String {
        format!("{} steps, lead time {}", self.config.step_limit, self.config.lead_time)
    }

    /// The optimal policy's episode when the DP fits, else the critical fractile's.
    fn fallback_report(&self, why: &str, seed: u64, start: Instant) -> SolveReport {
        let (name, run) = match self.optimal(seed) {
            Some(run) => ("optimal", run),
            None => ("critical_fractile", self.fractile(seed)),
        };
        self.report(&format!("{name} ({why})"), run, start, seed)
    }
}
