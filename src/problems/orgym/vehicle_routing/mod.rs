//! VehicleRouting-v0 as a solve endpoint: the env's parameters, one episode (its orders drawn
//! with the request's seed as the episode unfolds) dispatched by the shipped policy, answered
//! with each step's action, reward, driver cell and load, the return, and the greedy
//! dispatcher's return from the same seed (the orders it sees differ once the actions do:
//! withdrawals are drawn only for open orders). Baselines: `dispatcher`, `wait`.

/// The env as or-gymnasium defines it, vectorized.
pub mod env;
/// The reference policies the env is measured against.
pub mod reference;

use super::{config_from, with_policy, Endpoint, EpisodeSolve};
use crate::drl::env::VecEnv;
use crate::problems::orgym::vehicle_routing::env::{Dispatch, VehicleRoutingConfig, VehicleRoutingVecEnv};
use crate::problems::orgym::vehicle_routing::reference::dispatcher_action;
use crate::problems::{Models, ProblemError, ProblemInput, SolveReport};
use serde_json::{json, Value};
use std::time::Instant;

/// The registry row.
pub(crate) static VEHICLE_ROUTING: Endpoint<RoutingEpisode> = Endpoint::new(ID);

const ID: &str = "VehicleRouting-v0";

/// `policy` and the reference policies, each usable as `method`.
const BASELINES: &[&str] = &["policy", "dispatcher", "wait"];

pub(crate) struct RoutingEpisode {
    config: VehicleRoutingConfig,
}

/// One episode: the restaurants and each step's (action, reward, driver cell, load).
pub(crate) struct Run {
    restaurants: Vec<(i64, i64)>,
    steps: Vec<(usize, f64, (i64, i64), i64)>,
}

impl Run {
    fn total(&self) -> f64 {
        self.steps.iter().map(|s| s.1).sum()
    }
}

impl RoutingEpisode {
    fn run(&self, seed: u64, act: &mut dyn FnMut(&[f32], &Dispatch) -> usize) -> Run {
        let mut env = VehicleRoutingVecEnv::new(self.config.clone(), 1);
        env.reset(seed);
        let mut episode = env.episode(0).clone();
        let mut rng = env.stream(0).clone();
        let mut row = vec![0.0; self.config.observation_dim()];
        let restaurants = episode.restaurants.to_vec();
        let steps = (0..self.config.step_limit)
            .map(|_| {
                episode.fill(&mut row);
                let action = act(&row, &episode).min(self.config.action_count() - 1);
                let (reward, _) = episode.act(&self.config, action, &mut rng);
                (action, reward, episode.driver, episode.load)
            })
            .collect();
        Run { restaurants, steps }
    }

    fn dispatcher(&self, seed: u64) -> Run {
        self.run(seed, &mut |_, episode| dispatcher_action(episode))
    }
}

impl EpisodeSolve for RoutingEpisode {
    type Run = Run;
    const FALLBACK: &'static str = "dispatcher";
    const SUMMARY: &'static str = "OR-Gym food-delivery vehicle routing: one episode by the shipped policy, with the greedy dispatcher's return from the same seed";
    const BASELINES: &'static [&'static str] = BASELINES;

    fn schema() -> Value {
        let odds = |d: &str| json!({"type": "number", "minimum": 0, "maximum": 1, "description": d});
        let four = |d: &str| json!({"type": "array", "items": {"type": "number"}, "minItems": 4, "maxItems": 4, "description": d});
        json!({
            "type": "object",
            "properties": {
                "order_prob": odds("odds that an open order slot fills each step (0.5)"),
                "order_timeout_prob": odds("odds that an unaccepted order is withdrawn each step (0.15)"),
                "vehicle_capacity": {"type": "integer", "minimum": 0, "description": "orders carried at once (4)"},
                "order_promise": {"type": "integer", "minimum": 0, "description": "steps an order lives (60)"},
                "order_probs_per_zone": four("odds of each zone for a delivery point ([0.1, 0.5, 0.3, 0.1])"),
                "order_reward_min": four("each zone's lowest order value ([8, 5, 2, 1])"),
                "order_reward_max": four("each zone's highest order value ([12, 8, 5, 3])"),
                "penalty_per_move": {"type": "number", "description": "cost of a move (0.1)"},
                "order_miss_penalty": {"type": "number", "description": "cost of an accepted order that expires (50)"},
                "step_limit": {"type": "integer", "minimum": 1, "maximum": crate::problems::orgym::vehicle_routing::env::MAX_STEPS, "description": "steps per episode (1000)"}
            }
        })
    }

    fn load(_: &'static str, input: ProblemInput<'_>) -> Result<Self, ProblemError> {
        let config = config_from(VehicleRoutingConfig::default(), input, VehicleRoutingConfig::validate)?;
        Ok(RoutingEpisode { config })
    }

    fn policy_run(&self, models: &Models<'_>, seed: u64) -> Result<(Self::Run, String), String> {
        let probe = VehicleRoutingVecEnv::new(self.config.clone(), 1);
        with_policy(models, ID, &probe, |act| self.run(seed, &mut |row, _| act(row)[0] as usize))
    }

    fn baseline(&self, name: &str, seed: u64) -> Option<Result<Self::Run, ProblemError>> {
        Some(Ok(match name {
            "dispatcher" => self.dispatcher(seed),
            "wait" => self.run(seed, &mut |_, _| 0),
            _ => return None,
        }))
    }

    fn report(&self, method: &str, run: Run, start: Instant, seed: u64) -> SolveReport {
        let total = run.total();
        let solution = json!({
            "method": method,
            "restaurants": run.restaurants,
            "actions": run.steps.iter().map(|s| s.0).collect::<Vec<_>>(),
            "rewards": run.steps.iter().map(|s| s.1).collect::<Vec<_>>(),
            "driver": run.steps.iter().map(|s| s.2).collect::<Vec<_>>(),
            "load": run.steps.iter().map(|s| s.3).collect::<Vec<_>>(),
            "return": total,
            "reference": {"method": "dispatcher", "return": self.dispatcher(seed).total()},
        });
        super::episode_report(ID, total, solution, run.steps.len(), start, seed)
    }

    fn size_summary(&self) -> String {
        format!("{} steps", self.config.step_limit)
    }
}
