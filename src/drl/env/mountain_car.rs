//! MountainCar-v0 (discrete, 200-step limit) and MountainCarContinuous-v0 (999-step limit) as
//! gymnasium's classic_control implementations (Moore 1990).

use super::classic::ClassicDynamics;
use super::ActionSpace;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

const MIN_POSITION: f64 = -1.2;
const MAX_POSITION: f64 = 0.6;
const MAX_SPEED: f64 = 0.07;

/// Shared position/velocity update: velocity += push - gravity term, clipped; the left wall
/// stops the car.
fn integrate(position: &mut f64, velocity: &mut f64, push: f64) {
    *velocity += push - 0.0025 * (3.0 * *position).cos();
    *velocity = velocity.clamp(-MAX_SPEED, MAX_SPEED);
    *position += *velocity;
    *position = position.clamp(MIN_POSITION, MAX_POSITION);
    if *position == MIN_POSITION && *velocity < 0.0 {
        *velocity = 0.0;
    }
}

fn reset_state(rng: &mut ChaCha8Rng) -> (f64, f64) {
    (rng.gen_range(-0.6..-0.4), 0.0)
}

pub struct MountainCar {
    position: f64,
    velocity: f64,
}

impl ClassicDynamics for MountainCar {
    const OBSERVATION_DIM: usize = 2;
    const MAX_EPISODE_STEPS: usize = 200;

    fn action_space() -> ActionSpace {
        ActionSpace::Discrete { n: 3 }
    }

    fn reset(rng: &mut ChaCha8Rng) -> Self {
        let (position, velocity) = reset_state(rng);
        MountainCar { position, velocity }
    }

    fn from_state(state: &[f64]) -> Self {
        MountainCar { position: state[0], velocity: state[1] }
    }

    fn observe(&self, out: &mut [f32]) {
        out[0] = self.position as f32;
        out[1] = self.velocity as f32;
    }

    fn step(&mut self, action: &[f32]) -> (f64, bool) {
        let a = action[0].round().clamp(0.0, 2.0) as f64;
        integrate(&mut self.position, &mut self.velocity, (a - 1.0) * 0.001);
        let terminated = self.position >= 0.5 && self.velocity >= 0.0;
        (-1.0, terminated)
    }
}

pub struct MountainCarContinuous {
    position: f64,
    velocity: f64,
}

impl ClassicDynamics for MountainCarContinuous {
    const OBSERVATION_DIM: usize = 2;
    const MAX_EPISODE_STEPS: usize = 999;

    fn action_space() -> ActionSpace {
        ActionSpace::Continuous { low: vec![-1.0], high: vec![1.0] }
    }

    fn reset(rng: &mut ChaCha8Rng) -> Self {
        let (position, velocity) = reset_state(rng);
        MountainCarContinuous { position, velocity }
    }

    fn from_state(state: &[f64]) -> Self {
        MountainCarContinuous { position: state[0], velocity: state[1] }
    }

    fn observe(&self, out: &mut [f32]) {
        out[0] = self.position as f32;
        out[1] = self.velocity as f32;
    }

    fn step(&mut self, action: &[f32]) -> (f64, bool) {
        let raw = f64::from(action[0]);
        let force = raw.clamp(-1.0, 1.0);
        integrate(&mut self.position, &mut self.velocity, force * 0.0015);
        let terminated = self.position >= 0.45 && self.velocity >= 0.0;
        // gymnasium charges the unclipped action.
        let reward = if terminated { 100.0 } else { 0.0 } - raw * raw * 0.1;
        (reward, terminated)
    }
}
