//! Acrobot-v1 (Sutton 1996; "book" dynamics) as gymnasium.envs.classic_control.AcrobotEnv:
//! RK4 over dt = 0.2, reward -1 per step until the tip swings above the bar, 500-step limit.

use super::classic::ClassicDynamics;
use super::ActionSpace;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::f64::consts::PI;

const DT: f64 = 0.2;
const LINK_LENGTH_1: f64 = 1.0;
const LINK_MASS_1: f64 = 1.0;
const LINK_MASS_2: f64 = 1.0;
const LINK_COM_POS_1: f64 = 0.5;
const LINK_COM_POS_2: f64 = 0.5;
const LINK_MOI: f64 = 1.0;
const MAX_VEL_1: f64 = 4.0 * PI;
const MAX_VEL_2: f64 = 9.0 * PI;
const AVAILABLE_TORQUE: [f64; 3] = [-1.0, 0.0, 1.0];

#[derive(serde::Serialize, serde::Deserialize)]
pub struct Acrobot {
    state: [f64; 4],
}

/// Time derivative of (theta1, theta2, dtheta1, dtheta2) under torque `a`.
fn derivatives(s: [f64; 4], a: f64) -> [f64; 4] {
    let (m1, m2, l1, lc1, lc2, i1, i2, g) =
        (LINK_MASS_1, LINK_MASS_2, LINK_LENGTH_1, LINK_COM_POS_1, LINK_COM_POS_2, LINK_MOI, LINK_MOI, 9.8);
    let [theta1, theta2, dtheta1, dtheta2] = s;
    let d1 = m1 * lc1.powi(2) + m2 * (l1.powi(2) + lc2.powi(2) + 2.0 * l1 * lc2 * theta2.cos()) + i1 + i2;
    let d2 = m2 * (lc2.powi(2) + l1 * lc2 * theta2.cos()) + i2;
    let phi2 = m2 * lc2 * g * (theta1 + theta2 - PI / 2.0).cos();
    let phi1 = -m2 * l1 * lc2 * dtheta2.powi(2) * theta2.sin() - 2.0 * m2 * l1 * lc2 * dtheta2 * dtheta1 * theta2.sin()
        + (m1 * lc1 + m2 * l1) * g * (theta1 - PI / 2.0).cos()
        + phi2;
    let ddtheta2 = (a + d2 / d1 * phi1 - m2 * l1 * lc2 * dtheta1.powi(2) * theta2.sin() - phi2)
        / (m2 * lc2.powi(2) + i2 - d2.powi(2) / d1);
    let ddtheta1 = -(d2 * ddtheta2 + phi1) / d1;
    [dtheta1, dtheta2, ddtheta1, ddtheta2]
}

fn add_scaled(y: [f64; 4], k: [f64; 4], h: f64) -> [f64; 4] {
    std::array::from_fn(|i| y[i] + h * k[i])
}

fn wrap(mut x: f64, low: f64, high: f64) -> f64 {
    let diff = high - low;
    while x > high {
        x -= diff;
    }
    while x < low {
        x += diff;
    }
    x
}

impl ClassicDynamics for Acrobot {
    const OBSERVATION_DIM: usize = 6;
    const MAX_EPISODE_STEPS: usize = 500;

    fn action_space() -> ActionSpace {
        ActionSpace::Discrete { n: 3 }
    }

    fn reset(rng: &mut ChaCha8Rng) -> Self {
        // gymnasium stores the initial state as float32.
        Acrobot { state: std::array::from_fn(|_| f64::from(rng.gen_range(-0.1..0.1f64) as f32)) }
    }

    fn from_state(state: &[f64]) -> Self {
        Acrobot { state: [state[0], state[1], state[2], state[3]] }
    }

    fn observe(&self, out: &mut [f32]) {
        let [t1, t2, d1, d2] = self.state;
        let values = [t1.cos(), t1.sin(), t2.cos(), t2.sin(), d1, d2];
        for (o, v) in out.iter_mut().zip(values) {
            *o = v as f32;
        }
    }

    fn step(&mut self, action: &[f32]) -> (f64, bool) {
        let torque = AVAILABLE_TORQUE[action[0].round().clamp(0.0, 2.0) as usize];
        let y0 = self.state;
        let half = DT / 2.0;
        let k1 = derivatives(y0, torque);
        let k2 = derivatives(add_scaled(y0, k1, half), torque);
        let k3 = derivatives(add_scaled(y0, k2, half), torque);
        let k4 = derivatives(add_scaled(y0, k3, DT), torque);
        let mut next: [f64; 4] =
            std::array::from_fn(|i| y0[i] + DT / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]));
        next[0] = wrap(next[0], -PI, PI);
        next[1] = wrap(next[1], -PI, PI);
        next[2] = next[2].clamp(-MAX_VEL_1, MAX_VEL_1);
        next[3] = next[3].clamp(-MAX_VEL_2, MAX_VEL_2);
        self.state = next;
        let terminated = -next[0].cos() - (next[1] + next[0]).cos() > 1.0;
        (if terminated { 0.0 } else { -1.0 }, terminated)
    }
}
