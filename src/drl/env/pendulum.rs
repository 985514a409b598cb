//! Pendulum-v1 as gymnasium.envs.classic_control.PendulumEnv: torque in [-2, 2], reward
//! -(angle^2 + 0.1 thdot^2 + 0.001 u^2), never terminates, 200-step limit.

use super::classic::ClassicDynamics;
use super::ActionSpace;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::f64::consts::PI;

const MAX_SPEED: f64 = 8.0;
const MAX_TORQUE: f64 = 2.0;
const DT: f64 = 0.05;
const G: f64 = 10.0;
const M: f64 = 1.0;
const L: f64 = 1.0;

#[derive(serde::Serialize, serde::Deserialize)]
pub struct Pendulum {
    theta: f64,
    theta_dot: f64,
}

fn angle_normalize(x: f64) -> f64 {
    (x + PI).rem_euclid(2.0 * PI) - PI
}

impl ClassicDynamics for Pendulum {
    const OBSERVATION_DIM: usize = 3;
    const MAX_EPISODE_STEPS: usize = 200;

    fn action_space() -> ActionSpace {
        ActionSpace::Continuous { low: vec![-MAX_TORQUE as f32], high: vec![MAX_TORQUE as f32] }
    }

    fn reset(rng: &mut ChaCha8Rng) -> Self {
        Pendulum { theta: rng.gen_range(-PI..PI), theta_dot: rng.gen_range(-1.0..1.0) }
    }

    fn from_state(state: &[f64]) -> Self {
        Pendulum { theta: state[0], theta_dot: state[1] }
    }

    fn observe(&self, out: &mut [f32]) {
        out[0] = self.theta.cos() as f32;
        out[1] = self.theta.sin() as f32;
        out[2] = self.theta_dot as f32;
    }

    fn step(&mut self, action: &[f32]) -> (f64, bool) {
        // The action stays float32 in gymnasium, so its terms round as float32 (NumPy 2 rules).
        let u = action[0].clamp(-MAX_TORQUE as f32, MAX_TORQUE as f32);
        let cost = angle_normalize(self.theta).powi(2) + 0.1 * self.theta_dot.powi(2) + f64::from(0.001f32 * (u * u));
        let torque_term = f64::from((3.0 / (M * L * L)) as f32 * u);
        let new_theta_dot =
            (self.theta_dot + (3.0 * G / (2.0 * L) * self.theta.sin() + torque_term) * DT).clamp(-MAX_SPEED, MAX_SPEED);
        self.theta += new_theta_dot * DT;
        self.theta_dot = new_theta_dot;
        (-cost, false)
    }
}
