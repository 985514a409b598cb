//! Newsvendor-v0 as a solve endpoint: the env's parameters (`instance` fixes the economics;
//! without it they are drawn with the request's seed), one 40-step episode ordered by the
//! shipped policy, answered with each step's order, arrival, demand and reward, the return, and
//! on the same demands the optimal policy's return (dynamic programming with the clock) and the
//! textbook critical fractile's. Baselines: `optimal`, `critical_fractile`, `zero`.

use super::{config_from, shipped_policy, unknown_baseline};
use crate::drl::env::orgym::newsvendor::{NewsvendorConfig, NewsvendorVecEnv, Period};
use crate::drl::env::orgym::newsvendor_reference::{
    critical_fractile_order, economics_of, OptimalPlan, MAX_DP_WORK, MAX_GRID,
};
use crate::drl::env::VecEnv;
use crate::drl::run::greedy_actions;
use crate::problems::{Instance, Limits, Models, Problem, ProblemError, ProblemInput, SolveReport};
use crate::search::SearchParams;
use serde_json::{json, Value};
use std::time::Instant;

pub struct OrGymNewsvendor;

pub static NEWSVENDOR: OrGymNewsvendor = OrGymNewsvendor;

const ID: &str = "Newsvendor-v0";

impl Problem for OrGymNewsvendor {
    fn name(&self) -> &'static str {
        ID
    }

    fn summary(&self) -> &'static str {
        "OR-Gym multi-period newsvendor with lead time: one episode by the shipped policy, with the optimal policy's return on the same demands"
    }

    fn formats(&self) -> &'static [&'static str] {
        &["json"]
    }

    fn baselines(&self) -> &'static [&'static str] {
        &["policy", "optimal", "critical_fractile", "zero"]
    }

    fn instance_schema(&self) -> Value {
        let number = |description: &str| json!({"type": "number", "minimum": 0, "description": description});
        json!({
            "type": "object",
            "properties": {
                "lead_time": {"type": "integer", "minimum": 0, "maximum": crate::drl::env::orgym::newsvendor::MAX_LEAD_TIME, "description": "steps an order takes to arrive (5)"},
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

    fn load(&self, input: ProblemInput<'_>, _limits: &Limits) -> Result<Box<dyn Instance>, ProblemError> {
        let config = config_from(NewsvendorConfig::default(), input, NewsvendorConfig::validate)?;
        Ok(Box::new(NewsvendorEpisode { config }))
    }
}

struct NewsvendorEpisode {
    config: NewsvendorConfig,
}

/// One episode: its periods and the economics it ran on.
#[derive(Clone)]
struct Run {
    periods: Vec<Period>,
    economics: crate::drl::env::orgym::newsvendor::Economics,
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
        Run { periods, economics }
    }

    fn fractile(&self, seed: u64) -> Run {
        self.run(seed, &mut |row, _| critical_fractile_order(&economics_of(row)) as f32)
    }

    /// The optimal policy's episode and its expected return (None beyond the DP's limits).
    fn optimal(&self, seed: u64) -> Option<(Run, f64)> {
        let mut env = NewsvendorVecEnv::new(self.config.clone(), 1);
        env.reset(seed);
        let economics = env.episode(0).economics;
        let plan = OptimalPlan::new(&self.config, &economics)?;
        let run = self.run(seed, &mut |row, t| plan.order(t, row.get(5).copied().unwrap_or(0.0)));
        Some((run, plan.expected_return))
    }

    fn report(&self, method: &str, run: Run, start: Instant, seed: u64) -> SolveReport {
        self.report_against(method, run, self.optimal(seed), start, seed)
    }

    /// The answer with the optimal policy's episode on the same seed already at hand.
    fn report_against(
        &self,
        method: &str,
        run: Run,
        optimal: Option<(Run, f64)>,
        start: Instant,
        seed: u64,
    ) -> SolveReport {
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
            "reference": {
                "method": "optimal",
                "return": optimal.as_ref().map(|(r, _)| r.total()),
                "expected_return": optimal.as_ref().map(|(_, e)| *e),
                "critical_fractile_return": fractile.total(),
            },
        });
        super::episode_report(ID, total, solution, run.periods.len(), start, seed)
    }
}

impl Instance for NewsvendorEpisode {
    /// The shipped (or requested) policy's episode; without one that takes these parameters
    /// (another lead time changes the observation's width), the optimal policy's.
    fn solve(&self, params: &SearchParams, models: Models<'_>) -> SolveReport {
        let start = Instant::now();
        let probe = NewsvendorVecEnv::new(self.config.clone(), 1);
        let fallback = |why: String| match self.optimal(params.seed) {
            Some(optimal) => {
                let run = optimal.0.clone();
                self.report_against(&format!("optimal ({why})"), run, Some(optimal), start, params.seed)
            }
            None => self.report(&format!("critical_fractile ({why})"), self.fractile(params.seed), start, params.seed),
        };
        match shipped_policy(&models, ID, &probe) {
            Ok((mut agent, name)) => {
                let dim = probe.observation_dim();
                let run = self.run(params.seed, &mut |row, _| greedy_actions(&mut agent, row, dim)[0]);
                self.report(&format!("policy {name}"), run, start, params.seed)
            }
            Err(why) => fallback(why),
        }
    }

    fn solve_baseline(
        &self,
        name: &str,
        params: &SearchParams,
        models: Models<'_>,
    ) -> Result<SolveReport, ProblemError> {
        let start = Instant::now();
        let run = match name {
            "policy" => return Ok(self.solve(params, models)),
            "optimal" => match self.optimal(params.seed) {
                Some(optimal) => {
                    let run = optimal.0.clone();
                    return Ok(self.report_against(name, run, Some(optimal), start, params.seed));
                }
                None => {
                    let message = format!(
                        "the optimal policy's DP takes mean demands up to about {} and steps x grid^2 up to {:e}; this episode is larger",
                        MAX_GRID * 7 / 8,
                        MAX_DP_WORK
                    );
                    return Err(ProblemError::invalid("method", message));
                }
            },
            "critical_fractile" => self.fractile(params.seed),
            "zero" => self.run(params.seed, &mut |_, _| 0.0),
            _ => {
                return Err(unknown_baseline(&OrGymNewsvendor, name));
            }
        };
        Ok(self.report(name, run, start, params.seed))
    }

    fn target_energy(&self, objective: f64) -> f64 {
        -objective
    }

    fn size_summary(&self) -> String {
        format!("{} steps, lead time {}", self.config.step_limit, self.config.lead_time)
    }
}
