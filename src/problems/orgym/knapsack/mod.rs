//! The OR-Gym envs as solve endpoints (`POST /v1/problems/Knapsack-v1/solve`): the env's
//! parameters as JSON (an instance, or the class to draw one from with the request's seed), one
//! episode rolled out by the env's shipped policy (model `orgym-<env>`, or the one the request
//! names), answered with the episode's decisions, its return and the reference (the DP optimum,
//! or for Knapsack-v3 the offline optimum of the items shown). Baselines: `greedy` (value/weight;
//! v3: accept at value/weight >= 2, about the tuned threshold), `random` (a uniformly random
//! allowed action) and, for v0-v2, `dp` (the optimum's items, in order).

/// The env as or-gymnasium defines it, vectorized.
pub mod env;
/// The reference policies the env is measured against.
pub mod reference;

use super::{config_error, env_parameters, with_policy, Endpoint, EpisodeSolve};
use crate::drl::env::VecEnv;
use crate::problems::orgym::env::OrGymConfig;
use crate::problems::orgym::knapsack::env::{KnapsackConfig, KnapsackItems, KnapsackVecEnv, Variant};
use crate::problems::orgym::knapsack::reference::{greedy_action, offline_optimum, optimum};
use crate::problems::{Models, ProblemError, ProblemInput, SolveReport};
use rand::SeedableRng;
use serde_json::{json, Value};
use std::time::Instant;

/// The online baseline's threshold on value/weight (`bench orgym` tunes one per class; 2 is
/// within a few percent of the tuned one on or-gym's class).
const ONLINE_GREEDY_THRESHOLD: f64 = 2.0;

/// One registry row per env id.
pub(crate) static KNAPSACK: [Endpoint<KnapsackEpisode>; 4] = [
    Endpoint::new("Knapsack-v0"),
    Endpoint::new("Knapsack-v1"),
    Endpoint::new("Knapsack-v2"),
    Endpoint::new("Knapsack-v3"),
];

/// The offline variants' baselines (the online one has no DP: its items are not known ahead).
const BASELINES: &[&str] = &["policy", "greedy", "random", "dp"];

pub(crate) struct KnapsackEpisode {
    config: KnapsackConfig,
}

/// One rolled-out episode.
pub(crate) struct Episode {
    actions: Vec<usize>,
    rewards: Vec<f32>,
    /// Whether each action placed an item (it was allowed: the mask said it fits and has copies).
    placed: Vec<bool>,
    reference: f64,
    instance: KnapsackItems,
    /// Knapsack-v3: the item shown at each step.
    shown: Vec<usize>,
}

impl KnapsackEpisode {
    /// Runs one episode from `seed`, each action from `act` (observation row -> action).
    fn run(&self, seed: u64, act: &mut dyn FnMut(&[f32]) -> f32) -> Episode {
        self.run_observing(&self.config, seed, act)
    }

    /// `run` with `config`'s observation (the request's, or with the policy's planning features).
    fn run_observing(&self, config: &KnapsackConfig, seed: u64, act: &mut dyn FnMut(&[f32]) -> f32) -> Episode {
        let mut env = KnapsackVecEnv::new(config.clone(), 1);
        let mut obs = env.reset(seed);
        let instance = env.instance(0).clone();
        let online = self.config.variant == Variant::Online;
        let shown = if online { env.shown_sequence(0) } else { Vec::new() };
        let reference = match self.config.variant {
            Variant::Online => offline_optimum(&instance, &shown, self.config.capacity),
            variant => optimum(&instance, variant, self.config.capacity).0,
        } as f64;
        let (mut actions, mut rewards, mut placed) = (Vec::new(), Vec::new(), Vec::new());
        loop {
            let action = act(&obs).max(0.0) as usize;
            let allowed =
                if online { action == 1 && obs[1] > 0.5 } else { obs[action.min(self.config.items - 1)] > 0.5 };
            let step = env.step(&[action as f32]);
            actions.push(action);
            rewards.push(step.rewards[0]);
            placed.push(allowed);
            if step.terminated[0] || step.truncated[0] {
                break;
            }
            obs = step.observations;
        }
        let steps = actions.len();
        Episode { actions, rewards, placed, reference, instance, shown: shown.into_iter().take(steps).collect() }
    }

    fn greedy(&self, seed: u64) -> Episode {
        let threshold = ONLINE_GREEDY_THRESHOLD;
        self.run(seed, &mut |row| greedy_action(&self.config, row, threshold))
    }
}

impl EpisodeSolve for KnapsackEpisode {
    type Run = Episode;
    const FALLBACK: &'static str = "greedy";
    const SUMMARY: &'static str = "OR-Gym knapsack: one episode by the shipped policy, with the DP optimum";
    const BASELINES: &'static [&'static str] = BASELINES;

    fn describe(id: &str) -> (&'static str, &'static [&'static str]) {
        match Variant::from_id(id).expect("registered id") {
            Variant::Unbounded => {
                ("OR-Gym Knapsack-v0 (unbounded): one episode by the shipped policy, with the DP optimum", BASELINES)
            }
            Variant::Binary => {
                ("OR-Gym Knapsack-v1 (0/1): one episode by the shipped policy, with the DP optimum", BASELINES)
            }
            Variant::Bounded => {
                ("OR-Gym Knapsack-v2 (bounded): one episode by the shipped policy, with the DP optimum", BASELINES)
            }
            Variant::Online => (
                "OR-Gym Knapsack-v3 (online): one episode by the shipped policy, with the offline optimum",
                &["policy", "greedy", "random"],
            ),
        }
    }

    fn schema() -> Value {
        let counts = json!({"type": "array", "items": {"type": "integer", "minimum": 0}});
        json!({
            "type": "object",
            "properties": {
                "items": {"type": "integer", "minimum": 1, "description": "N (default 200, or the instance's length)"},
                "capacity": {"type": "integer", "minimum": 1, "description": "the knapsack's capacity (default 200); items x capacity <= 2000000"},
                "max_item_weight": {"type": "integer", "minimum": 1, "description": "a drawn instance's weights are uniform on 1..=this (99)"},
                "max_item_value": {"type": "integer", "minimum": 0, "description": "values uniform on 0..=this (99)"},
                "max_item_limit": {"type": "integer", "minimum": 1, "description": "copies uniform on 1..=this (9; v2, v3)"},
                "step_limit": {"type": "integer", "minimum": 1, "description": "items shown (v3; 50)"},
                "instance": {
                    "type": "object",
                    "properties": {"weights": counts, "values": counts, "limits": counts},
                    "required": ["weights", "values"],
                    "description": "the items; absent: drawn from the class with the request's seed"
                }
            }
        })
    }

    fn load(id: &'static str, input: ProblemInput<'_>) -> Result<Self, ProblemError> {
        let mut value = env_parameters(input)?;
        if let Some(n) = value.get("instance").and_then(|i| i["weights"].as_array()).map(Vec::len) {
            value.entry("items").or_insert(json!(n));
        }
        value.insert(
            "variant".into(),
            serde_json::to_value(Variant::from_id(id).expect("registered id")).expect("variant"),
        );
        let config: KnapsackConfig = serde_json::from_value(Value::Object(value))
            .map_err(|e| ProblemError::invalid("instance", e.to_string()))?;
        config.validate().map_err(config_error)?;
        Ok(KnapsackEpisode { config })
    }

    fn baselines(&self) -> &'static [&'static str] {
        Self::describe(self.config.variant.id()).1
    }

    fn policy_run(&self, models: &Models<'_>, seed: u64) -> Result<(Self::Run, String), String> {
        let featured = self.config.policy_observation();
        let probe = KnapsackVecEnv::new(featured.clone(), 1);
        with_policy(models, self.config.variant.id(), &probe, |act| {
            self.run_observing(&featured, seed, &mut |row| act(row)[0])
        })
    }

    fn baseline(&self, name: &str, seed: u64) -> Option<Result<Self::Run, ProblemError>> {
        Some(Ok(match (name, self.config.variant) {
            ("greedy", _) => self.greedy(seed),
            ("random", _) => {
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x5EED);
                let n = self.config.action_count();
                self.run(seed, &mut |row| crate::problems::orgym::env::random_allowed(&row[..n], &mut rng))
            }
            ("dp", variant) if variant != Variant::Online => {
                let mut env = KnapsackVecEnv::new(self.config.clone(), 1);
                env.reset(seed);
                let (_, counts) = optimum(env.instance(0), variant, self.config.capacity);
                let mut plan: Vec<usize> =
                    counts.iter().enumerate().flat_map(|(i, &c)| std::iter::repeat_n(i, c as usize)).collect();
                plan.reverse();
                // After the plan, an unplaceable item ends the episode as the env requires.
                self.run(seed, &mut |row| match plan.pop() {
                    Some(item) => item as f32,
                    None => (0..self.config.items).find(|&i| row[i] < 0.5).unwrap_or(0) as f32,
                })
            }
            _ => return None,
        }))
    }

    fn report(&self, method: &str, episode: Episode, start: Instant, seed: u64) -> SolveReport {
        let total: f64 = episode.rewards.iter().map(|&r| f64::from(r)).sum();
        let mut counts = vec![0u32; self.config.items];
        for (t, (&action, &placed)) in episode.actions.iter().zip(&episode.placed).enumerate() {
            if placed {
                counts[if self.config.variant == Variant::Online { episode.shown[t] } else { action }] += 1;
            }
        }
        let weight: u64 =
            counts.iter().zip(&episode.instance.weights).map(|(&c, &w)| u64::from(c) * u64::from(w)).sum();
        let mut solution = json!({
            "method": method,
            "actions": episode.actions,
            "counts": counts,
            "weight": weight,
            "return": total,
            "reference": episode.reference,
        });
        if self.config.variant == Variant::Online {
            solution["shown"] = json!(episode.shown);
        }
        if self.config.instance.is_none() {
            solution["instance"] = json!(episode.instance);
        }
        super::episode_report(self.config.variant.id(), total, solution, episode.actions.len(), start, seed)
    }

    fn size_summary(&self) -> String {
        format!("{} items, capacity {}", self.config.items, self.config.capacity)
    }
}
