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

#[derive(serde::Serialize, serde::Deserialize)]
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

/// Gymnasium keeps this env's state in float32 after the first step (and computes the push in
/// float32 under NumPy 2's promotion rules); replaying its trajectories needs the same rounding.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct MountainCarContinuous {
    position: f64,
    velocity: f64,
    stored_as_f32: bool,
}

impl ClassicDynamics for MountainCarContinuous {
    const OBSERVATION_DIM: usize = 2;
    const MAX_EPISODE_STEPS: usize = 999;

    fn action_space() -> ActionSpace {
        ActionSpace::Continuous { low: vec![-1.0], high: vec![1.0] }
    }

    fn reset(rng: &mut ChaCha8Rng) -> Self {
        let (position, velocity) = reset_state(rng);
        MountainCarContinuous { position, velocity, stored_as_f32: false }
    }

    /// A state whose values are all exact float32 numbers is taken as gymnasium's float32
    /// post-step state; a fresh reset state (float64) virtually never is.
    fn from_state(state: &[f64]) -> Self {
        let stored_as_f32 = state[..2].iter().all(|&x| f64::from(x as f32) == x);
        MountainCarContinuous { position: state[0], velocity: state[1], stored_as_f32 }
    }

    fn observe(&self, out: &mut [f32]) {
        out[0] = self.position as f32;
        out[1] = self.velocity as f32;
    }

    fn step(&mut self, action: &[f32]) -> (f64, bool) {
        let force = action[0].clamp(-1.0, 1.0);
        let push = force * 0.0015f32;
        let (position, velocity) = if self.stored_as_f32 {
            let p = self.position as f32;
            let gravity = (0.0025 * f64::from(3.0f32 * p).cos()) as f32;
            let mut v = self.velocity as f32 + (push - gravity);
            v = v.clamp(-MAX_SPEED as f32, MAX_SPEED as f32);
            let p = (p + v).clamp(MIN_POSITION as f32, MAX_POSITION as f32);
            if p == MIN_POSITION as f32 && v < 0.0 {
                v = 0.0;
            }
            (f64::from(p), f64::from(v))
        } else {
            let gravity = 0.0025 * (3.0 * self.position).cos();
            let mut v = self.velocity + f64::from(push - gravity as f32);
            v = v.clamp(-MAX_SPEED, MAX_SPEED);
            let p = (self.position + v).clamp(MIN_POSITION, MAX_POSITION);
            if p == MIN_POSITION && v < 0.0 {
                v = 0.0;
            }
            (p, v)
        };
        let terminated = position >= 0.45 && velocity >= 0.0;
        self.position = f64::from(position as f32);
        self.velocity = f64::from(velocity as f32);
        self.stored_as_f32 = true;
        // gymnasium charges the unclipped action.
        let raw = f64::from(action[0]);
        let reward = if terminated { 100.0 } else { 0.0 } - raw * raw * 0.1;
        (reward, terminated)
    }
}
