//! OR-Gym (Hubbs et al. 2020) ported natively: the same parameters, rewards, action masks,
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
//!
//! Observations are the reference's `Dict` flattened as `gymnasium.spaces.flatten` does (keys
//! sorted: `action_mask`, `avail_actions`, `state`), and `VecEnv::layout` says where the mask
//! and the per-item blocks are.

pub mod knapsack;
pub mod knapsack_reference;
