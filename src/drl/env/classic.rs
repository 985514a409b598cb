//! One generic vectorized wrapper for the single-env classic-control dynamics: time limit,
//! auto-reset and per-env seeded streams live here once.

use super::{ActionSpace, StepBatch, VecEnv};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The dynamics of one classic-control task, in f64 as Gymnasium computes them.
pub trait ClassicDynamics: Send + Sized {
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
        let mut batch = StepBatch {
            observations: vec![0.0; b * dim],
            rewards: vec![0.0; b],
            terminated: vec![false; b],
            truncated: vec![false; b],
            final_observations: vec![0.0; b * dim],
        };
        for i in 0..b {
            let env = &mut self.envs[i];
            let (reward, terminated) = env.step(&actions[i * width..(i + 1) * width]);
            self.steps[i] += 1;
            // As gymnasium's TimeLimit: both flags may be set on the last allowed step.
            let truncated = self.steps[i] >= D::MAX_EPISODE_STEPS;
            batch.rewards[i] = reward as f32;
            batch.terminated[i] = terminated;
            batch.truncated[i] = truncated;
            if terminated || truncated {
                env.observe(&mut batch.final_observations[i * dim..(i + 1) * dim]);
                *env = D::reset(&mut self.rngs[i]);
                self.steps[i] = 0;
            }
            self.envs[i].observe(&mut batch.observations[i * dim..(i + 1) * dim]);
        }
        batch
    }
}
