//! CartPole-v1 (Barto, Sutton & Anderson 1983) as gymnasium.envs.classic_control.CartPoleEnv:
//! Euler integration, reward 1 per step, 500-step limit.

use super::classic::ClassicDynamics;
use super::ActionSpace;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

const GRAVITY: f64 = 9.8;
const MASS_CART: f64 = 1.0;
const MASS_POLE: f64 = 0.1;
const TOTAL_MASS: f64 = MASS_CART + MASS_POLE;
const HALF_LENGTH: f64 = 0.5;
const POLE_MASS_LENGTH: f64 = MASS_POLE * HALF_LENGTH;
const FORCE: f64 = 10.0;
const TAU: f64 = 0.02;
const THETA_LIMIT: f64 = 12.0 * 2.0 * std::f64::consts::PI / 360.0;
const X_LIMIT: f64 = 2.4;

#[derive(serde::Serialize, serde::Deserialize)]
pub struct CartPole {
    state: [f64; 4],
}

impl ClassicDynamics for CartPole {
    const OBSERVATION_DIM: usize = 4;
    const MAX_EPISODE_STEPS: usize = 500;

    fn action_space() -> ActionSpace {
        ActionSpace::Discrete { n: 2 }
    }

    fn reset(rng: &mut ChaCha8Rng) -> Self {
        CartPole { state: std::array::from_fn(|_| rng.gen_range(-0.05..0.05)) }
    }

    fn from_state(state: &[f64]) -> Self {
        CartPole { state: [state[0], state[1], state[2], state[3]] }
    }

    fn observe(&self, out: &mut [f32]) {
        for (o, s) in out.iter_mut().zip(self.state) {
            *o = s as f32;
        }
    }

    fn step(&mut self, action: &[f32]) -> (f64, bool) {
        let [x, x_dot, theta, theta_dot] = self.state;
        let force = if action[0] >= 0.5 { FORCE } else { -FORCE };
        let (sin, cos) = theta.sin_cos();
        let temp = (force + POLE_MASS_LENGTH * theta_dot * theta_dot * sin) / TOTAL_MASS;
        let theta_acc = (GRAVITY * sin - cos * temp) / (HALF_LENGTH * (4.0 / 3.0 - MASS_POLE * cos * cos / TOTAL_MASS));
        let x_acc = temp - POLE_MASS_LENGTH * theta_acc * cos / TOTAL_MASS;
        self.state = [x + TAU * x_dot, x_dot + TAU * x_acc, theta + TAU * theta_dot, theta_dot + TAU * theta_acc];
        let [x, _, theta, _] = self.state;
        let terminated = !(-X_LIMIT..=X_LIMIT).contains(&x) || !(-THETA_LIMIT..=THETA_LIMIT).contains(&theta);
        (1.0, terminated)
    }
}
