//! One generic vectorized wrapper for the single-env classic-control dynamics: time limit,
//! auto-reset and per-env seeded streams live here once.

use super::{ActionSpace, StepBatch, VecEnv};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

/// Envs per rayon task: below this a batch is stepped on one thread.
const PARALLEL_CHUNK: usize = 512;

/// The dynamics of one classic-control task, in f64 as Gymnasium computes them.
pub trait ClassicDynamics: Send + Sized + serde::Serialize + serde::de::DeserializeOwned {
    const OBSERVATION_DIM: usize;
    /// Gymnasium's TimeLimit for the registered id.
    const MAX_EPISODE_STEPS: usize;
    fn action_space() -> ActionSpace;
    /// A fresh initial state, drawn as Gymnasium draws it (same distribution, our RNG).
    fn reset(rng: &mut ChaCha8Rng) -> Self;
    /// A state set directly (fixture replay).
    fn from_state(state: &[f64]) -> Self;
    fn observe(&self, out: &mut [f32]);
    /// Applies one action; returns (reward, terminated).
    fn step(&mut self, action: &[f32]) -> (f64, bool);
}

/// One env's pieces as the step loop zips them.
type RowRefs<'a, D> = (
    (((((&'a mut D, &'a mut usize), &'a mut ChaCha8Rng), &'a [f32]), &'a mut [f32]), &'a mut [f32]),
    &'a mut (f32, bool, bool),
);

pub struct ClassicVecEnv<D: ClassicDynamics> {
    envs: Vec<D>,
    steps: Vec<usize>,
    rngs: Vec<ChaCha8Rng>,
}

impl<D: ClassicDynamics> ClassicVecEnv<D> {
    pub fn new(num_envs: usize) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let envs = (0..num_envs).map(|_| D::reset(&mut rng)).collect();
        ClassicVecEnv { envs, steps: vec![0; num_envs], rngs: (0..num_envs).map(|_| rng.clone()).collect() }
    }

    /// Sets env i to a given physical state (fixture replay), its episode clock to zero.
    pub fn set_state(&mut self, i: usize, state: &[f64]) {
        self.envs[i] = D::from_state(state);
        self.steps[i] = 0;
    }

    /// Sets env i's physical state, keeping its episode clock (fixture replay re-syncs each
    /// step on the reference state, so that last-bit differences of sin/cos cannot compound).
    pub fn resync(&mut self, i: usize, state: &[f64]) {
        self.envs[i] = D::from_state(state);
    }

    pub fn observations(&self) -> Vec<f32> {
        let mut out = vec![0.0; self.envs.len() * D::OBSERVATION_DIM];
        for (env, row) in self.envs.iter().zip(out.chunks_mut(D::OBSERVATION_DIM)) {
            env.observe(row);
        }
        out
    }
}

impl<D: ClassicDynamics> VecEnv for ClassicVecEnv<D> {
    fn num_envs(&self) -> usize {
        self.envs.len()
    }

    fn observation_dim(&self) -> usize {
        D::OBSERVATION_DIM
    }

    fn action_space(&self) -> ActionSpace {
        D::action_space()
    }

    fn save_state(&self) -> anyhow::Result<serde_json::Value> {
        Ok(serde_json::to_value((&self.envs, &self.steps, &self.rngs))?)
    }

    fn load_state(&mut self, state: &serde_json::Value) -> anyhow::Result<()> {
        let (envs, steps, rngs): (Vec<D>, Vec<usize>, Vec<ChaCha8Rng>) = serde_json::from_value(state.clone())?;
        anyhow::ensure!(envs.len() == self.envs.len(), "{} envs saved, {} here", envs.len(), self.envs.len());
        (self.envs, self.steps, self.rngs) = (envs, steps, rngs);
        Ok(())
    }

    fn reset(&mut self, seed: u64) -> Vec<f32> {
        for (i, (env, rng)) in self.envs.iter_mut().zip(&mut self.rngs).enumerate() {
            *rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(i as u64);
            *env = D::reset(rng);
        }
        self.steps.iter_mut().for_each(|s| *s = 0);
        self.observations()
    }

    fn step(&mut self, actions: &[f32]) -> StepBatch {
        let b = self.envs.len();
        let (dim, width) = (D::OBSERVATION_DIM, D::action_space().width());
        let mut observations = vec![0.0; b * dim];
        let mut final_observations = vec![0.0; b * dim];
        let mut outcomes = vec![(0.0f32, false, false); b];
        let step_row = |((((((env, steps), rng), action), row), final_row), outcome): RowRefs<'_, D>| {
            let (reward, terminated) = env.step(action);
            *steps += 1;
            // As gymnasium's TimeLimit: both flags may be set on the last allowed step.
            let truncated = *steps >= D::MAX_EPISODE_STEPS;
            if terminated || truncated {
                env.observe(final_row);
                *env = D::reset(rng);
                *steps = 0;
            }
            env.observe(row);
            *outcome = (reward as f32, terminated, truncated);
        };
        if b < 2 * PARALLEL_CHUNK {
            // Small batches stay on the caller's thread: handing them to the pool costs more.
            self.envs
                .iter_mut()
                .zip(self.steps.iter_mut())
                .zip(self.rngs.iter_mut())
                .zip(actions.chunks(width))
                .zip(observations.chunks_mut(dim))
                .zip(final_observations.chunks_mut(dim))
                .zip(outcomes.iter_mut())
                .for_each(step_row);
        } else {
            self.envs
                .par_iter_mut()
                .zip(self.steps.par_iter_mut())
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
}
