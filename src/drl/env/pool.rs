//! Envs that are not vectorized: one `SingleEnv` per slot, stepped in parallel by a dedicated
//! worker pool, with the same auto-reset and terminated/truncated contract as every `VecEnv`.

use super::{ActionSpace, StepBatch, VecEnv};
use rayon::prelude::*;

/// One env's step: observation, reward, terminated, truncated, final observation.
type EnvStepResult = (Vec<f32>, f32, bool, bool, Vec<f32>);

/// One non-vectorized environment (its own time limit included).
pub trait SingleEnv: Send {
    fn observation_dim(&self) -> usize;
    fn action_space(&self) -> ActionSpace;
    fn reset(&mut self, seed: u64) -> Vec<f32>;
    /// Returns (observation, reward, terminated, truncated).
    fn step(&mut self, action: &[f32]) -> (Vec<f32>, f32, bool, bool);
}

pub struct ThreadPoolVecEnv<E: SingleEnv> {
    envs: Vec<E>,
    pool: rayon::ThreadPool,
    /// Each env's next reset seed: its episodes differ but replay from the batch seed.
    next_seeds: Vec<u64>,
}

impl<E: SingleEnv> ThreadPoolVecEnv<E> {
    pub fn new(envs: Vec<E>, workers: usize) -> Self {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(workers.max(1)).build().expect("worker pool");
        let next_seeds = vec![0; envs.len()];
        ThreadPoolVecEnv { envs, pool, next_seeds }
    }
}

impl<E: SingleEnv> VecEnv for ThreadPoolVecEnv<E> {
    fn num_envs(&self) -> usize {
        self.envs.len()
    }

    fn observation_dim(&self) -> usize {
        self.envs[0].observation_dim()
    }

    fn action_space(&self) -> ActionSpace {
        self.envs[0].action_space()
    }

    fn reset(&mut self, seed: u64) -> Vec<f32> {
        let (envs, seeds) = (&mut self.envs, &mut self.next_seeds);
        self.pool.install(|| {
            envs.par_iter_mut()
                .zip(seeds.par_iter_mut())
                .enumerate()
                .flat_map_iter(|(i, (env, next))| {
                    let env_seed = seed.wrapping_mul(1_000_003).wrapping_add(i as u64);
                    *next = env_seed.wrapping_add(0x9E37_79B9);
                    env.reset(env_seed)
                })
                .collect()
        })
    }

    fn step(&mut self, actions: &[f32]) -> StepBatch {
        let width = self.action_space().width();
        let dim = self.observation_dim();
        let (envs, seeds) = (&mut self.envs, &mut self.next_seeds);
        let results: Vec<EnvStepResult> = self.pool.install(|| {
            envs.par_iter_mut()
                .zip(seeds.par_iter_mut())
                .zip(actions.par_chunks(width))
                .map(|((env, next), action)| {
                    let (observation, reward, terminated, truncated) = env.step(action);
                    if terminated || truncated {
                        let first = env.reset(*next);
                        *next = next.wrapping_add(0x9E37_79B9);
                        (first, reward, terminated, truncated, observation)
                    } else {
                        (observation, reward, false, false, vec![0.0; dim])
                    }
                })
                .collect()
        });
        let mut batch = StepBatch::default();
        for (observation, reward, terminated, truncated, last) in results {
            batch.observations.extend(observation);
            batch.rewards.push(reward);
            batch.terminated.push(terminated);
            batch.truncated.push(truncated);
            batch.final_observations.extend(last);
        }
        batch
    }
}
