//! OR-Gym (Hubbs et al. 2020) ported natively (Knapsack-v0..v3, BinPacking-v0..v5, Newsvendor-v0,
//! InvManagement-v0/v1, PortfolioOpt-v0, TSP-v0/v1, VMPacking-v0/v1, VehicleRouting-v0): the same parameters, rewards, action masks,
//! termination and time limits as or-gymnasium 0.1.0 (tests replay trajectories recorded from it,
//! tests/fixtures/orgym/record.py), vectorized, with explicit seeds.
//!
//! Where or-gymnasium 0.1.0 and or-gym 0.5.0 disagree, and which we follow:
//! - Instances: or-gym draws them from NumPy's global generator, or-gymnasium from the env's
//!   generator before any seed is given; both are therefore unseeded, fixed at construction and
//!   kept across episodes. Ours are part of the config: a given `instance`, or (the default) a
//!   fresh one each episode from the episode's seeded stream, with the same distributions.
//! - `env_config`: or-gym applies it; or-gymnasium ignores it (its `assign_env_config` is
//!   commented out). We follow or-gym: every parameter is configurable.
//! - Knapsack-v3's 50-item limit: or-gym ends the episode (`done`), or-gymnasium truncates it
//!   (`truncated`, both flags can be set). We follow or-gymnasium, as Gymnasium's contract does.
//! - Observation dtypes (float vs int32/uint8): the values are the same; ours are f32.
//! - BinPacking's `mask`: or-gymnasium builds every bin-packing env unmasked (the plain state)
//!   and ignores env_config; or-gym takes `mask: True`. Ours default to the masked observation
//!   (the policies need it) and take `mask: false` for or-gymnasium's exactly; the fixtures
//!   replay both.
//!
//! Observations are the reference's `Dict` flattened as `gymnasium.spaces.flatten` does (keys
//! sorted: `action_mask`, `avail_actions`, `state`), and `VecEnv::layout` says where the mask
//! and the per-item blocks are. Some envs take options of ours that append columns a policy
//! needs and the reference's state lacks, after its observation and without changing the
//! dynamics (`node_features` for TSP; `planning_features` for Knapsack-v3, InvManagement and
//! PortfolioOpt: the clock and what the state hides); `make_configured` builds an env with
//! them (`TrainRequest::env_config`), and the shipped policies are trained on them.

use super::{binpacking, inventory, knapsack, newsvendor, portfolio, tsp, vehicle_routing, vmpacking};
use crate::drl::env::{ActionSpace, ConfigError, EnvFamily, ObservationLayout, StepBatch, VecEnv};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::{de::DeserializeOwned, Serialize};

/// Envs per rayon task: below twice this a batch is stepped on one thread.
const PARALLEL_CHUNK: usize = 256;

/// A uniformly random allowed action (any action when none is allowed, as the reference does).
pub fn random_allowed(mask: &[f32], rng: &mut impl rand::Rng) -> f32 {
    let allowed = mask.iter().filter(|&&m| m > 0.5).count();
    if allowed == 0 {
        return rng.gen_range(0..mask.len()) as f32;
    }
    let k = rng.gen_range(0..allowed);
    mask.iter().enumerate().filter(|(_, &m)| m > 0.5).nth(k).map_or(0.0, |(i, _)| i as f32)
}

/// Actions from a batch, its observations and their width: one action row per env, flat.
pub type Actor<'a, E> = dyn FnMut(&OrGymVecEnv<E>, &[f32], usize) -> Vec<f32> + 'a;

/// Each env's first-episode return under `act` (env i of a batch of `episodes` reset with
/// `seed`), by `env::first_episode_returns`.
pub fn first_episode_returns<E: OrGymEpisode>(
    config: &E::Config,
    episodes: usize,
    seed: u64,
    act: &mut Actor<'_, E>,
) -> Vec<f64> {
    let mut env = OrGymVecEnv::<E>::new(config.clone(), episodes);
    let dim = env.observation_dim();
    crate::drl::env::first_episode_returns(&mut env, seed, &mut |env, obs| act(env, obs, dim))
}

/// An env's parameters as the batch needs them.
pub trait OrGymConfig: Clone + Send + Sync {
    fn observation_dim(&self) -> usize;
    fn action_space(&self) -> ActionSpace;
    fn layout(&self) -> ObservationLayout;
    /// This config as the shipped policy observes it: with the observation options of ours it
    /// was trained on (`planning_features`, `node_features`; the module doc), the dynamics and
    /// rewards unchanged. The policy's training, its endpoint and the bench all go through here.
    fn policy_observation(&self) -> Self {
        self.clone()
    }
}

/// One env's episode in progress: how it starts, steps and shows itself.
pub trait OrGymEpisode: Clone + Send + Serialize + DeserializeOwned {
    type Config: OrGymConfig;
    fn start(config: &Self::Config, rng: &mut ChaCha8Rng) -> Self;
    /// (reward, terminated, truncated) of one action row (a discrete env's index as f32).
    fn step(&mut self, config: &Self::Config, action: &[f32], rng: &mut ChaCha8Rng) -> (f32, bool, bool);
    fn observe(&self, config: &Self::Config, out: &mut [f32]);
}

/// A batch of one OR-Gym env sharing a config; env i draws from the stream (seed, i).
pub struct OrGymVecEnv<E: OrGymEpisode> {
    config: E::Config,
    episodes: Vec<E>,
    rngs: Vec<ChaCha8Rng>,
}

impl<E: OrGymEpisode> OrGymVecEnv<E> {
    /// `config` must have passed its `validate`.
    pub fn new(config: E::Config, num_envs: usize) -> Self {
        let mut env = OrGymVecEnv { config, episodes: Vec::new(), rngs: vec![ChaCha8Rng::seed_from_u64(0); num_envs] };
        env.reset(0);
        env
    }

    pub fn config(&self) -> &E::Config {
        &self.config
    }

    /// Env i's episode.
    pub fn episode(&self, i: usize) -> &E {
        &self.episodes[i]
    }

    /// Env i's episode, to present a reference's draw (fixture replay).
    pub fn episode_mut(&mut self, i: usize) -> &mut E {
        &mut self.episodes[i]
    }

    /// Env i's random stream (its next draws).
    pub fn stream(&self, i: usize) -> &ChaCha8Rng {
        &self.rngs[i]
    }

    pub fn observations(&self) -> Vec<f32> {
        let dim = self.config.observation_dim();
        let mut out = vec![0.0; self.episodes.len() * dim];
        for (episode, row) in self.episodes.iter().zip(out.chunks_mut(dim)) {
            episode.observe(&self.config, row);
        }
        out
    }
}

impl<E: OrGymEpisode> VecEnv for OrGymVecEnv<E> {
    fn num_envs(&self) -> usize {
        self.episodes.len()
    }

    fn observation_dim(&self) -> usize {
        self.config.observation_dim()
    }

    fn action_space(&self) -> ActionSpace {
        self.config.action_space()
    }

    fn layout(&self) -> ObservationLayout {
        self.config.layout()
    }

    fn reset(&mut self, seed: u64) -> Vec<f32> {
        self.rngs = (0..self.rngs.len() as u64)
            .map(|i| {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                rng.set_stream(i);
                rng
            })
            .collect();
        let config = &self.config;
        self.episodes = self.rngs.iter_mut().map(|rng| E::start(config, rng)).collect();
        self.observations()
    }

    /// Every env steps with its action; one that finished writes its last observation to
    /// `final_observations` and starts its next episode (auto-reset).
    fn step(&mut self, actions: &[f32]) -> StepBatch {
        let (b, dim, config) = (self.episodes.len(), self.config.observation_dim(), &self.config);
        let width = config.action_space().width();
        let mut observations = vec![0.0; b * dim];
        let mut final_observations = vec![0.0; b * dim];
        let mut outcomes = vec![(0.0f32, false, false); b];
        let step_row = |(((((episode, rng), action), row), final_row), outcome): RowRefs<'_, E>| {
            let (reward, terminated, truncated) = episode.step(config, action, rng);
            if terminated || truncated {
                episode.observe(config, final_row);
                *episode = E::start(config, rng);
            }
            episode.observe(config, row);
            *outcome = (reward, terminated, truncated);
        };
        if b < 2 * PARALLEL_CHUNK {
            self.episodes
                .iter_mut()
                .zip(self.rngs.iter_mut())
                .zip(actions.chunks(width))
                .zip(observations.chunks_mut(dim))
                .zip(final_observations.chunks_mut(dim))
                .zip(outcomes.iter_mut())
                .for_each(step_row);
        } else {
            self.episodes
                .par_iter_mut()
                .zip(self.rngs.par_iter_mut())
                .zip(actions.par_chunks(width))
                .zip(observations.par_chunks_mut(dim))
                .zip(final_observations.par_chunks_mut(dim))
                .zip(outcomes.par_iter_mut())
                .with_min_len(PARALLEL_CHUNK)
                .for_each(step_row);
        }
        StepBatch {
            observations,
            rewards: outcomes.iter().map(|o| o.0).collect(),
            terminated: outcomes.iter().map(|o| o.1).collect(),
            truncated: outcomes.iter().map(|o| o.2).collect(),
            final_observations,
        }
    }

    fn save_state(&self) -> anyhow::Result<serde_json::Value> {
        Ok(serde_json::to_value((&self.episodes, &self.rngs))?)
    }

    fn load_state(&mut self, state: &serde_json::Value) -> anyhow::Result<()> {
        let (episodes, rngs): (Vec<E>, Vec<ChaCha8Rng>) = serde_json::from_value(state.clone())?;
        anyhow::ensure!(
            episodes.len() == self.episodes.len(),
            "{} envs saved, {} here",
            episodes.len(),
            self.episodes.len()
        );
        (self.episodes, self.rngs) = (episodes, rngs);
        Ok(())
    }
}

/// One env's pieces as the step loop zips them.
type RowRefs<'a, S> =
    (((((&'a mut S, &'a mut ChaCha8Rng), &'a [f32]), &'a mut [f32]), &'a mut [f32]), &'a mut (f32, bool, bool));

/// `defaults` with the fields of `overrides` (a JSON object of the config's fields; null: none)
/// laid over them, checked by `validate`.
pub fn configured<C: Serialize + DeserializeOwned>(
    defaults: C,
    overrides: &serde_json::Value,
    validate: impl FnOnce(&C) -> Result<(), ConfigError>,
) -> Result<C, ConfigError> {
    let mut value = serde_json::to_value(defaults).expect("a config serializes");
    match overrides {
        serde_json::Value::Null => {}
        serde_json::Value::Object(fields) => {
            value.as_object_mut().expect("a config is an object").extend(fields.clone())
        }
        _ => {
            return Err(ConfigError {
                field: "env_config",
                message: "expected a JSON object of the env's parameters".into(),
                too_large: false,
            })
        }
    }
    let config: C = serde_json::from_value(value).map_err(|e| ConfigError {
        field: "env_config",
        message: e.to_string(),
        too_large: false,
    })?;
    validate(&config)?;
    Ok(config)
}

/// An OR-Gym env by id with `overrides` laid over the id's parameters (`configured`); None for
/// an id that is not OR-Gym's.
pub fn make_configured(
    id: &str,
    num_envs: usize,
    overrides: &serde_json::Value,
) -> Option<Result<Box<dyn VecEnv>, ConfigError>> {
    fn build<E: OrGymEpisode + 'static>(
        defaults: E::Config,
        overrides: &serde_json::Value,
        validate: fn(&E::Config) -> Result<(), ConfigError>,
        num_envs: usize,
    ) -> Result<Box<dyn VecEnv>, ConfigError>
    where
        E::Config: Serialize + DeserializeOwned + 'static,
    {
        let config = configured(defaults, overrides, validate)?;
        Ok(Box::new(OrGymVecEnv::<E>::new(config, num_envs)))
    }
    Some(match id {
        "Newsvendor-v0" => build::<newsvendor::env::Shop>(
            Default::default(),
            overrides,
            newsvendor::env::NewsvendorConfig::validate,
            num_envs,
        ),
        "PortfolioOpt-v0" => build::<portfolio::env::Portfolio>(
            Default::default(),
            overrides,
            portfolio::env::PortfolioConfig::validate,
            num_envs,
        ),
        "VehicleRouting-v0" => build::<vehicle_routing::env::Dispatch>(
            Default::default(),
            overrides,
            vehicle_routing::env::VehicleRoutingConfig::validate,
            num_envs,
        ),
        id if id.starts_with("InvManagement-") => build::<inventory::env::Chain>(
            inventory::env::InventoryConfig::by_id(id)?,
            overrides,
            inventory::env::InventoryConfig::validate,
            num_envs,
        ),
        id if id.starts_with("VMPacking-") => build::<vmpacking::env::DataCenter>(
            vmpacking::env::VmPackingConfig::by_id(id)?,
            overrides,
            vmpacking::env::VmPackingConfig::validate,
            num_envs,
        ),
        id if id.starts_with("TSP-") => {
            build::<tsp::env::Walk>(tsp::env::TspConfig::by_id(id)?, overrides, tsp::env::TspConfig::validate, num_envs)
        }
        id if id.starts_with("BinPacking-") => build::<binpacking::env::BinState>(
            binpacking::env::BinPackingConfig::by_id(id)?,
            overrides,
            binpacking::env::BinPackingConfig::validate,
            num_envs,
        ),
        id => build::<knapsack::env::Episode>(
            knapsack::env::KnapsackConfig::new(knapsack::env::Variant::from_id(id)?),
            overrides,
            knapsack::env::KnapsackConfig::validate,
            num_envs,
        ),
    })
}

/// The OR-Gym ports as the env family a run is handed (`drl::env::Envs::with`).
pub struct OrGymEnvs;

impl EnvFamily for OrGymEnvs {
    fn ids(&self) -> &'static [&'static str] {
        &[
            "Knapsack-v0",
            "Knapsack-v1",
            "Knapsack-v2",
            "Knapsack-v3",
            "BinPacking-v0",
            "BinPacking-v1",
            "BinPacking-v2",
            "BinPacking-v3",
            "BinPacking-v4",
            "BinPacking-v5",
            "Newsvendor-v0",
            "InvManagement-v0",
            "InvManagement-v1",
            "PortfolioOpt-v0",
            "TSP-v0",
            "TSP-v1",
            "VMPacking-v0",
            "VMPacking-v1",
            "VehicleRouting-v0",
        ]
    }

    fn make(
        &self,
        id: &str,
        num_envs: usize,
        env_config: &serde_json::Value,
    ) -> Option<Result<Box<dyn VecEnv>, ConfigError>> {
        make_configured(id, num_envs, env_config)
    }
}
