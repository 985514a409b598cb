//! BinPacking-v0..v5 as solve endpoints: the env's parameters (the id's defaults, any of them
//! changed; `sequence` to pack given items in order instead of drawn ones), one episode packed
//! by the shipped policy, answered with each item's level decision, the bin it went into, the
//! bins' contents, the waste, and the sum-of-squares heuristic's waste on the same items (the
//! reference) with the offline lower bound. Baselines: `sum_of_squares`, `best_fit`, `random`.

/// The env as or-gymnasium defines it, vectorized.
pub mod env;
/// The reference policies the env is measured against.
pub mod reference;

use super::{config_from, with_policy, Endpoint, EpisodeSolve};
use crate::drl::env::VecEnv;
use crate::problems::orgym::binpacking::env::{BinPackingConfig, BinPackingVecEnv, IDS};
use crate::problems::orgym::binpacking::reference::{allowed_levels, best_fit_action, sum_of_squares_action};
use crate::problems::orgym::env::random_allowed;
use crate::problems::{Models, ProblemError, ProblemInput, SolveReport};
use rand::SeedableRng;
use serde_json::{json, Value};
use std::time::Instant;

/// One registry row per env id.
pub(crate) static BIN_PACKING: [Endpoint<BinPackingEpisode>; 6] = [
    Endpoint::new(IDS[0]),
    Endpoint::new(IDS[1]),
    Endpoint::new(IDS[2]),
    Endpoint::new(IDS[3]),
    Endpoint::new(IDS[4]),
    Endpoint::new(IDS[5]),
];

/// `policy` and the reference policies, each usable as `method`.
const BASELINES: &[&str] = &["policy", "sum_of_squares", "best_fit", "random"];

pub(crate) struct BinPackingEpisode {
    id: &'static str,
    config: BinPackingConfig,
}

/// One packed episode.
pub(crate) struct Packed {
    /// The level each item was put at (0: a new bin).
    actions: Vec<usize>,
    sizes: Vec<u32>,
    /// The bin each item went into; None for the item of an impossible action.
    assignment: Vec<Option<usize>>,
    bins: Vec<Vec<usize>>,
    episode_return: f64,
    failed: bool,
}

impl Packed {
    fn waste(&self, capacity: u32) -> u64 {
        let placed: u64 =
            self.assignment.iter().zip(&self.sizes).filter(|(a, _)| a.is_some()).map(|(_, &s)| u64::from(s)).sum();
        self.bins.len() as u64 * u64::from(capacity) - placed
    }
}

impl BinPackingEpisode {
    /// Packs one episode from `seed`, each action from `act` (observation row -> level).
    fn run(&self, seed: u64, act: &mut dyn FnMut(&[f32]) -> f32) -> Packed {
        let cap = self.config.bin_capacity as usize;
        let mut env = BinPackingVecEnv::new(self.config.clone(), 1);
        let mut obs = env.reset(seed);
        let mut packed = Packed {
            actions: Vec::new(),
            sizes: Vec::new(),
            assignment: Vec::new(),
            bins: Vec::new(),
            episode_return: 0.0,
            failed: false,
        };
        // The open bins at each level, the earliest opened first.
        let mut at_level: Vec<Vec<usize>> = vec![Vec::new(); cap];
        loop {
            let level = (act(&obs).max(0.0) as usize).min(cap - 1);
            let size = env.episode(0).item as usize;
            let allowed = env.episode(0).allowed(self.config.bin_capacity, level);
            let step = env.step(&[level as f32]);
            packed.actions.push(level);
            packed.sizes.push(size as u32);
            packed.episode_return += f64::from(step.rewards[0]);
            if allowed {
                let bin = if level == 0 {
                    packed.bins.push(Vec::new());
                    packed.bins.len() - 1
                } else {
                    at_level[level].remove(0)
                };
                packed.bins[bin].push(packed.sizes.len() - 1);
                if level + size < cap {
                    at_level[level + size].push(bin);
                }
                packed.assignment.push(Some(bin));
            } else {
                packed.assignment.push(None);
                packed.failed = true;
            }
            if step.terminated[0] || step.truncated[0] {
                return packed;
            }
            obs = step.observations;
        }
    }

    fn sum_of_squares(&self, seed: u64) -> Packed {
        self.run(seed, &mut |row| sum_of_squares_action(&self.config, row))
    }
}

impl EpisodeSolve for BinPackingEpisode {
    type Run = Packed;
    const FALLBACK: &'static str = "sum_of_squares";
    const SUMMARY: &'static str = "OR-Gym online bin packing (Balaji et al.): one episode by the shipped policy, with sum-of-squares' waste on the same items";
    const BASELINES: &'static [&'static str] = BASELINES;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "bin_capacity": {"type": "integer", "minimum": 2, "maximum": crate::problems::orgym::binpacking::env::MAX_CAPACITY, "description": "a bin's capacity (v0, v2, v4: 9; v1, v3, v5: 100)"},
                "item_sizes": {"type": "array", "items": {"type": "integer", "minimum": 1}, "description": "the sizes items are drawn from, each below the capacity"},
                "item_probs": {"type": "array", "items": {"type": "number", "minimum": 0}, "description": "the probability of each size (sum 1)"},
                "step_limit": {"type": "integer", "minimum": 1, "description": "items per episode (100 or 1000)"},
                "mask": {"type": "boolean", "description": "observe the action mask (default true; the policies need it)"},
                "sequence": {"type": "array", "items": {"type": "integer", "minimum": 1}, "description": "items to pack in this order instead of drawn ones"}
            }
        })
    }

    fn load(id: &'static str, input: ProblemInput<'_>) -> Result<Self, ProblemError> {
        let config =
            config_from(BinPackingConfig::by_id(id).expect("registered id"), input, BinPackingConfig::validate)?;
        Ok(BinPackingEpisode { id, config })
    }

    fn policy_run(&self, models: &Models<'_>, seed: u64) -> Result<(Self::Run, String), String> {
        let probe = BinPackingVecEnv::new(self.config.clone(), 1);
        with_policy(models, self.id, &probe, |act| self.run(seed, &mut |row| act(row)[0]))
    }

    fn baseline(&self, name: &str, seed: u64) -> Option<Result<Self::Run, ProblemError>> {
        Some(Ok(match name {
            "sum_of_squares" => self.sum_of_squares(seed),
            "best_fit" => self.run(seed, &mut |row| best_fit_action(&self.config, row)),
            "random" => {
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x5EED);
                self.run(seed, &mut |row| random_allowed(&allowed_levels(&self.config, row), &mut rng))
            }
            _ => return None,
        }))
    }

    fn report(&self, method: &str, packed: Packed, start: Instant, seed: u64) -> SolveReport {
        let cap = self.config.bin_capacity;
        let waste = packed.waste(cap);
        let reference = self.sum_of_squares(seed).waste(cap);
        let total: u64 = packed.sizes.iter().map(|&s| u64::from(s)).sum();
        let lower_bound = total.div_ceil(u64::from(cap)) * u64::from(cap) - total;
        let solution = json!({
            "method": method,
            "actions": packed.actions,
            "items": packed.sizes,
            "assignment": packed.assignment,
            "bins": packed.bins,
            "waste": waste,
            "return": packed.episode_return,
            "failed": packed.failed,
            "reference": {"method": "sum_of_squares", "waste": reference},
            "lower_bound_waste": lower_bound,
        });
        super::episode_report(self.id, packed.episode_return, solution, packed.actions.len(), start, seed)
    }

    fn size_summary(&self) -> String {
        format!("{} items, bin capacity {}", self.config.steps(), self.config.bin_capacity)
    }
}
