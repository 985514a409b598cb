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

pub mod binpacking;
pub mod binpacking_reference;
pub mod knapsack;
pub mod knapsack_reference;

use super::StepBatch;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

/// Envs per rayon task: below twice this a batch is stepped on one thread.
const PARALLEL_CHUNK: usize = 256;

/// One generator per env of a batch reset with `seed`: env i draws from the stream (seed, i).
pub(crate) fn env_streams(seed: u64, b: usize) -> Vec<ChaCha8Rng> {
    (0..b as u64)
        .map(|i| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(i);
            rng
        })
        .collect()
}

/// Steps every env of a batch with its action: `step` gives (reward, terminated, truncated);
/// an env that finished writes its last observation to `final_observations` and starts its
/// next episode by `restart` (auto-reset).
pub(crate) fn step_batch<S: Send>(
    states: &mut [S],
    rngs: &mut [ChaCha8Rng],
    actions: &[f32],
    dim: usize,
    step: impl Fn(&mut S, usize, &mut ChaCha8Rng) -> (f32, bool, bool) + Sync,
    restart: impl Fn(&mut ChaCha8Rng) -> S + Sync,
    observe: impl Fn(&S, &mut [f32]) + Sync,
) -> StepBatch {
    let b = states.len();
    let mut observations = vec![0.0; b * dim];
    let mut final_observations = vec![0.0; b * dim];
    let mut outcomes = vec![(0.0f32, false, false); b];
    let step_row = |(((((state, rng), action), row), final_row), outcome): RowRefs<'_, S>| {
        let (reward, terminated, truncated) = step(state, action.max(0.0) as usize, rng);
        if terminated || truncated {
            observe(state, final_row);
            *state = restart(rng);
        }
        observe(state, row);
        *outcome = (reward, terminated, truncated);
    };
    if b < 2 * PARALLEL_CHUNK {
        states
            .iter_mut()
            .zip(rngs.iter_mut())
            .zip(actions)
            .zip(observations.chunks_mut(dim))
            .zip(final_observations.chunks_mut(dim))
            .zip(outcomes.iter_mut())
            .for_each(step_row);
    } else {
        states
            .par_iter_mut()
            .zip(rngs.par_iter_mut())
            .zip(actions.par_iter())
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

/// One env's pieces as the step loop zips them.
type RowRefs<'a, S> =
    (((((&'a mut S, &'a mut ChaCha8Rng), &'a f32), &'a mut [f32]), &'a mut [f32]), &'a mut (f32, bool, bool));
