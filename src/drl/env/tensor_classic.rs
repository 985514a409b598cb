//! The classic-control envs (CartPole-v1, Acrobot-v1, MountainCar-v0, MountainCarContinuous-v0,
//! Pendulum-v1) as batched tensor ops: the whole batch [B] steps in a
//! few element-wise kernels on the env's device, with gymnasium's auto-reset (the final
//! observation kept, the env reset in place) and time limit, and no host synchronisation, so a
//! learner on an accelerator can keep 65,536 envs on it. The dynamics are the native envs'
//! (`cartpole.rs`, `acrobot.rs`, `mountain_car.rs`, `pendulum.rs`) line for line in float64
//! (MountainCarContinuous in float32, as gymnasium stores its state); a unit test steps both
//! from the same states and actions. Resets draw from hashed uniforms of (seed, reset count, env)
//! on the device, not from the native envs' ChaCha streams, so episodes are reproducible per seed
//! but not the native envs' episodes; MountainCarContinuous's reset position is rounded to
//! float32 (gymnasium keeps the first step's state in float64: a difference below 1e-8).

use crate::seed::hashed_uniform;
use std::f64::consts::PI;
use tch::{Device, Kind, Tensor};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TensorClassic {
    CartPole,
    Acrobot,
    MountainCar,
    MountainCarContinuous,
    Pendulum,
}

impl TensorClassic {
    /// The Gymnasium ids with a tensor implementation.
    pub const ENV_IDS: [&'static str; 5] =
        ["CartPole-v1", "Acrobot-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Pendulum-v1"];

    pub fn from_env_id(id: &str) -> Option<Self> {
        match id {
            "CartPole-v1" => Some(TensorClassic::CartPole),
            "Acrobot-v1" => Some(TensorClassic::Acrobot),
            "MountainCar-v0" => Some(TensorClassic::MountainCar),
            "MountainCarContinuous-v0" => Some(TensorClassic::MountainCarContinuous),
            "Pendulum-v1" => Some(TensorClassic::Pendulum),
            _ => None,
        }
    }

    fn state_dim(self) -> i64 {
        match self {
            TensorClassic::CartPole | TensorClassic::Acrobot => 4,
            TensorClassic::MountainCar | TensorClassic::MountainCarContinuous | TensorClassic::Pendulum => 2,
        }
    }

    pub fn observation_dim(self) -> i64 {
        match self {
            TensorClassic::CartPole => 4,
            TensorClassic::Acrobot => 6,
            TensorClassic::MountainCar | TensorClassic::MountainCarContinuous => 2,
            TensorClassic::Pendulum => 3,
        }
    }

    fn max_episode_steps(self) -> i64 {
        match self {
            TensorClassic::CartPole | TensorClassic::Acrobot => 500,
            TensorClassic::MountainCar | TensorClassic::Pendulum => 200,
            TensorClassic::MountainCarContinuous => 999,
        }
    }
}

/// One batched step's results, all on the env's device: observations after auto-reset [B, obs],
/// rewards [B] (f32), terminated and truncated [B] (bool), and the final observations [B, obs]
/// (the pre-reset observation where an episode ended, else equal to `observations`).
pub struct TensorStep {
    pub observations: Tensor,
    pub rewards: Tensor,
    pub terminated: Tensor,
    pub truncated: Tensor,
    pub final_observations: Tensor,
}

pub struct TensorClassicEnv {
    pub kind: TensorClassic,
    /// Physical states [B, state_dim], float64.
    state: Tensor,
    /// Steps in the current episode [B], int64.
    steps: Tensor,
    seed: u64,
    resets: u64,
}

impl TensorClassicEnv {
    pub fn new(kind: TensorClassic, num_envs: usize, device: Device) -> Self {
        TensorClassicEnv {
            kind,
            state: Tensor::zeros([num_envs as i64, kind.state_dim()], (Kind::Double, device)),
            steps: Tensor::zeros([num_envs as i64], (Kind::Int64, device)),
            seed: 0,
            resets: 0,
        }
    }

    pub fn num_envs(&self) -> i64 {
        self.state.size()[0]
    }

    /// Fresh initial states [B, state_dim] as the native `reset`s draw them (CartPole: each
    /// coordinate U(-0.05, 0.05); Acrobot: each U(-0.1, 0.1) rounded to float32; MountainCar:
    /// position U(-0.6, -0.4), velocity 0; Pendulum: theta U(-pi, pi), theta_dot U(-1, 1)).
    fn initial_states(&mut self) -> Tensor {
        let (b, d) = (self.num_envs(), self.kind.state_dim());
        let index = Tensor::arange(b * d, (Kind::Int64, self.state.device()));
        let u = hashed_uniform(&index, self.seed, self.resets).to_kind(Kind::Double).view([b, d]);
        self.resets += 1;
        match self.kind {
            TensorClassic::CartPole => u * 0.1 - 0.05,
            TensorClassic::Acrobot => (u * 0.2 - 0.1).to_kind(Kind::Float).to_kind(Kind::Double),
            TensorClassic::MountainCar | TensorClassic::MountainCarContinuous => {
                let position = u.select(1, 0) * 0.2 - 0.6;
                let position = if self.kind == TensorClassic::MountainCarContinuous {
                    position.to_kind(Kind::Float).to_kind(Kind::Double)
                } else {
                    position
                };
                Tensor::stack(&[position.shallow_clone(), position.zeros_like()], 1)
            }
            TensorClassic::Pendulum => {
                let scale = Tensor::from_slice(&[2.0 * PI, 2.0]).to(self.state.device());
                let low = Tensor::from_slice(&[-PI, -1.0]).to(self.state.device());
                u * scale + low
            }
        }
    }

    fn observe(&self, state: &Tensor) -> Tensor {
        match self.kind {
            TensorClassic::CartPole | TensorClassic::MountainCar | TensorClassic::MountainCarContinuous => {
                state.to_kind(Kind::Float)
            }
            TensorClassic::Acrobot => {
                let (t1, t2) = (state.select(1, 0), state.select(1, 1));
                Tensor::stack(&[t1.cos(), t1.sin(), t2.cos(), t2.sin(), state.select(1, 2), state.select(1, 3)], 1)
                    .to_kind(Kind::Float)
            }
            TensorClassic::Pendulum => {
                let theta = state.select(1, 0);
                Tensor::stack(&[theta.cos(), theta.sin(), state.select(1, 1)], 1).to_kind(Kind::Float)
            }
        }
    }

    /// Resets every env from `seed`; observations [B, obs] (f32).
    pub fn reset(&mut self, seed: u64) -> Tensor {
        self.seed = seed;
        self.resets = 0;
        self.state = self.initial_states();
        let _ = self.steps.zero_();
        self.observe(&self.state)
    }

    /// Sets the physical states [B, state_dim] (tests and replays).
    pub fn set_states(&mut self, states: &Tensor) {
        self.state = states.to_kind(Kind::Double).to_device(self.state.device());
    }

    /// One step of every env; `actions` [B] or [B, 1] (discrete: the index; continuous: the force).
    pub fn step(&mut self, actions: &Tensor) -> TensorStep {
        let actions = actions.to_device(self.state.device());
        let (next, rewards, terminated) = match self.kind {
            TensorClassic::CartPole => cartpole_step(&self.state, &actions.reshape([-1])),
            TensorClassic::Acrobot => acrobot_step(&self.state, &actions.reshape([-1])),
            TensorClassic::MountainCar => mountain_car_step(&self.state, &actions.reshape([-1])),
            TensorClassic::MountainCarContinuous => mountain_car_continuous_step(&self.state, &actions.reshape([-1])),
            TensorClassic::Pendulum => pendulum_step(&self.state, &actions.reshape([-1])),
        };
        self.steps += 1;
        let truncated = self.steps.ge(self.kind.max_episode_steps());
        let done = terminated.logical_or(&truncated);
        let final_observations = self.observe(&next);
        let fresh = self.initial_states();
        let done_rows = done.unsqueeze(1);
        self.state = fresh.where_self(&done_rows, &next);
        self.steps = self.steps.zeros_like().where_self(&done, &self.steps);
        TensorStep {
            observations: self.observe(&self.state),
            rewards: rewards.to_kind(Kind::Float),
            terminated,
            truncated,
            final_observations,
        }
    }
}

/// CartPole-v1's Euler step (`cartpole.rs`): next states, rewards (1), terminated.
fn cartpole_step(state: &Tensor, actions: &Tensor) -> (Tensor, Tensor, Tensor) {
    const GRAVITY: f64 = 9.8;
    const MASS_POLE: f64 = 0.1;
    const TOTAL_MASS: f64 = 1.1;
    const HALF_LENGTH: f64 = 0.5;
    const POLE_MASS_LENGTH: f64 = MASS_POLE * HALF_LENGTH;
    const TAU: f64 = 0.02;
    let theta_limit = 12.0 * 2.0 * PI / 360.0;
    let (x, x_dot, theta, theta_dot) = (state.select(1, 0), state.select(1, 1), state.select(1, 2), state.select(1, 3));
    let force = actions.ge(0.5).to_kind(Kind::Double) * 20.0 - 10.0;
    let (sin, cos) = (theta.sin(), theta.cos());
    let temp = (force + &theta_dot * &theta_dot * &sin * POLE_MASS_LENGTH) / TOTAL_MASS;
    let theta_acc =
        (&sin * GRAVITY - &cos * &temp) / (((&cos * &cos) * (-MASS_POLE / TOTAL_MASS) + 4.0 / 3.0) * HALF_LENGTH);
    let x_acc = &temp - &theta_acc * &cos * (POLE_MASS_LENGTH / TOTAL_MASS);
    let next = Tensor::stack(
        &[&x + &x_dot * TAU, &x_dot + x_acc * TAU, &theta + &theta_dot * TAU, &theta_dot + theta_acc * TAU],
        1,
    );
    let (nx, ntheta) = (next.select(1, 0), next.select(1, 2));
    let terminated = nx.abs().gt(2.4).logical_or(&ntheta.abs().gt(theta_limit));
    let rewards = nx.ones_like();
    (next, rewards, terminated)
}

/// Acrobot-v1's RK4 step of dt 0.2 (`acrobot.rs`, gymnasium's "book" dynamics).
fn acrobot_step(state: &Tensor, actions: &Tensor) -> (Tensor, Tensor, Tensor) {
    const DT: f64 = 0.2;
    let torque = actions.round().clamp(0.0, 2.0).to_kind(Kind::Double) - 1.0;
    let derivatives = |s: &Tensor| {
        let (m1, m2, l1, lc1, lc2, i1, i2, g) = (1.0, 1.0, 1.0, 0.5, 0.5, 1.0, 1.0, 9.8);
        let (theta1, theta2, dtheta1, dtheta2) = (s.select(1, 0), s.select(1, 1), s.select(1, 2), s.select(1, 3));
        let cos2 = theta2.cos();
        let sin2 = theta2.sin();
        let d1 = (&cos2 * (2.0 * l1 * lc2) + (l1 * l1 + lc2 * lc2)) * m2 + (m1 * lc1 * lc1 + i1 + i2);
        let d2 = (&cos2 * (l1 * lc2) + lc2 * lc2) * m2 + i2;
        let phi2 = (&theta1 + &theta2 - PI / 2.0).cos() * (m2 * lc2 * g);
        let phi1 = -(dtheta2.square() * &sin2 * (m2 * l1 * lc2)) - &dtheta2 * &dtheta1 * &sin2 * (2.0 * m2 * l1 * lc2)
            + (&theta1 - PI / 2.0).cos() * ((m1 * lc1 + m2 * l1) * g)
            + &phi2;
        let ddtheta2 = (&torque + &d2 / &d1 * &phi1 - dtheta1.square() * &sin2 * (m2 * l1 * lc2) - &phi2)
            / (-(d2.square() / &d1) + (m2 * lc2 * lc2 + i2));
        let ddtheta1 = -(&d2 * &ddtheta2 + &phi1) / &d1;
        Tensor::stack(&[dtheta1, dtheta2, ddtheta1, ddtheta2], 1)
    };
    let k1 = derivatives(state);
    let k2 = derivatives(&(state + &k1 * (DT / 2.0)));
    let k3 = derivatives(&(state + &k2 * (DT / 2.0)));
    let k4 = derivatives(&(state + &k3 * DT));
    let next = state + (k1 + k2 * 2.0 + k3 * 2.0 + k4) * (DT / 6.0);
    // gymnasium's wrap: whole turns off until the angle is back in [-pi, pi].
    let wrap = |x: Tensor| {
        let turn = 2.0 * PI;
        let above = ((&x - PI) / turn).ceil().clamp_min(0.0);
        let below = ((-PI - &x) / turn).ceil().clamp_min(0.0);
        x - above * turn + below * turn
    };
    let theta1 = wrap(next.select(1, 0));
    let theta2 = wrap(next.select(1, 1));
    let next = Tensor::stack(
        &[
            theta1.shallow_clone(),
            theta2.shallow_clone(),
            next.select(1, 2).clamp(-4.0 * PI, 4.0 * PI),
            next.select(1, 3).clamp(-9.0 * PI, 9.0 * PI),
        ],
        1,
    );
    let terminated = (-theta1.cos() - (&theta2 + &theta1).cos()).gt(1.0);
    let rewards = terminated.to_kind(Kind::Double) - 1.0;
    (next, rewards, terminated)
}

/// MountainCar-v0's step (`mountain_car.rs`): push (a - 1) 0.001 against gravity.
fn mountain_car_step(state: &Tensor, actions: &Tensor) -> (Tensor, Tensor, Tensor) {
    let push = (actions.round().clamp(0.0, 2.0).to_kind(Kind::Double) - 1.0) * 0.001;
    let (position, velocity) = (state.select(1, 0), state.select(1, 1));
    let velocity = (&velocity + push - (&position * 3.0).cos() * 0.0025).clamp(-0.07, 0.07);
    let position = (&position + &velocity).clamp(-1.2, 0.6);
    let velocity = velocity.zeros_like().where_self(&position.eq(-1.2).logical_and(&velocity.lt(0.0)), &velocity);
    let terminated = position.ge(0.5).logical_and(&velocity.ge(0.0));
    let rewards = position.full_like(-1.0);
    (Tensor::stack(&[position, velocity], 1), rewards, terminated)
}

/// MountainCarContinuous-v0's step (`mountain_car.rs`) in float32, as gymnasium stores the state.
fn mountain_car_continuous_step(state: &Tensor, actions: &Tensor) -> (Tensor, Tensor, Tensor) {
    let raw = actions.to_kind(Kind::Float);
    let push = raw.clamp(-1.0, 1.0) * 0.0015f64;
    let position = state.select(1, 0).to_kind(Kind::Float);
    let gravity = ((&position * 3.0).to_kind(Kind::Double).cos() * 0.0025).to_kind(Kind::Float);
    let velocity = (state.select(1, 1).to_kind(Kind::Float) + (push - gravity)).clamp(-0.07, 0.07);
    let position = (position + &velocity).clamp(-1.2, 0.6);
    let at_wall = position.eq(-1.2f32 as f64).logical_and(&velocity.lt(0.0));
    let velocity = velocity.zeros_like().where_self(&at_wall, &velocity);
    // The goal test reads the float32 state as float64, as the native env does.
    let terminated = position.to_kind(Kind::Double).ge(0.45).logical_and(&velocity.ge(0.0));
    let raw = raw.to_kind(Kind::Double);
    let rewards = terminated.to_kind(Kind::Double) * 100.0 - &raw * &raw * 0.1;
    (Tensor::stack(&[position, velocity], 1).to_kind(Kind::Double), rewards, terminated)
}

/// Pendulum-v1's step (`pendulum.rs`, the float32 rounding of the action terms included).
fn pendulum_step(state: &Tensor, actions: &Tensor) -> (Tensor, Tensor, Tensor) {
    let (theta, theta_dot) = (state.select(1, 0), state.select(1, 1));
    let u = actions.to_kind(Kind::Float).clamp(-2.0, 2.0);
    let normalized = (&theta + PI).remainder(2.0 * PI) - PI;
    let cost = normalized.square() + theta_dot.square() * 0.1 + (&u * &u * 0.001).to_kind(Kind::Double);
    let torque = (&u * 3.0).to_kind(Kind::Double);
    let new_theta_dot = (&theta_dot + (theta.sin() * 15.0 + torque) * 0.05).clamp(-8.0, 8.0);
    let next = Tensor::stack(&[&theta + &new_theta_dot * 0.05, new_theta_dot], 1);
    let terminated = theta.zeros_like().to_kind(Kind::Bool);
    (next, -cost, terminated)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drl::env::acrobot::Acrobot;
    use crate::drl::env::cartpole::CartPole;
    use crate::drl::env::classic::ClassicDynamics;
    use crate::drl::env::mountain_car::{MountainCar, MountainCarContinuous};
    use crate::drl::env::pendulum::Pendulum;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Steps `B` random states with random actions both ways and compares states and rewards.
    fn compare<D: ClassicDynamics>(
        kind: TensorClassic,
        state: impl Fn(&mut ChaCha8Rng) -> Vec<f64>,
        action: impl Fn(&mut ChaCha8Rng) -> f32,
    ) {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let b = 256;
        let states: Vec<Vec<f64>> = (0..b).map(|_| state(&mut rng)).collect();
        let actions: Vec<f32> = (0..b).map(|_| action(&mut rng)).collect();
        let mut env = TensorClassicEnv::new(kind, b, Device::Cpu);
        let flat: Vec<f64> = states.iter().flatten().copied().collect();
        env.set_states(&Tensor::from_slice(&flat).view([b as i64, kind.state_dim()]));
        let out = env.step(&Tensor::from_slice(&actions));
        let final_obs: Vec<f32> = out.final_observations.flatten(0, 1).try_into().unwrap();
        let rewards: Vec<f32> = out.rewards.try_into().unwrap();
        let terminated: Vec<bool> = out.terminated.try_into().unwrap();
        let obs_dim = kind.observation_dim() as usize;
        for i in 0..b {
            let mut native = D::from_state(&states[i]);
            let (reward, done) = native.step(&[actions[i]]);
            let mut expected = vec![0.0f32; obs_dim];
            native.observe(&mut expected);
            for k in 0..obs_dim {
                assert!((expected[k] - final_obs[i * obs_dim + k]).abs() < 1e-6, "env {i} coordinate {k}");
            }
            assert!((reward as f32 - rewards[i]).abs() < 1e-5, "env {i}: {reward} vs {}", rewards[i]);
            assert_eq!(done, terminated[i], "env {i}");
        }
    }

    #[test]
    fn acrobot_and_mountain_cars_step_as_the_native_envs() {
        compare::<Acrobot>(
            TensorClassic::Acrobot,
            |rng| (0..4).map(|k| rng.gen_range(-1.0..1.0) * [3.1, 3.1, 12.0, 28.0][k]).collect(),
            |rng| f32::from(rng.gen_range(0u8..3)),
        );
        compare::<MountainCar>(
            TensorClassic::MountainCar,
            |rng| vec![rng.gen_range(-1.2..0.6), rng.gen_range(-0.07..0.07)],
            |rng| f32::from(rng.gen_range(0u8..3)),
        );
        // Float32 states, as the env holds them after its first step.
        compare::<MountainCarContinuous>(
            TensorClassic::MountainCarContinuous,
            |rng| vec![f64::from(rng.gen_range(-1.2f32..0.6)), f64::from(rng.gen_range(-0.07f32..0.07))],
            |rng| rng.gen_range(-1.5f32..1.5),
        );
        // Next to the goal and the wall, where the branches decide.
        compare::<MountainCarContinuous>(
            TensorClassic::MountainCarContinuous,
            |rng| vec![f64::from(rng.gen_range(0.40f32..0.46)), f64::from(rng.gen_range(-0.01f32..0.07))],
            |rng| rng.gen_range(-1.0f32..1.0),
        );
        compare::<MountainCar>(
            TensorClassic::MountainCar,
            |rng| vec![rng.gen_range(-1.2..-1.15), rng.gen_range(-0.07..0.0)],
            |_| 0.0,
        );
    }

    #[test]
    fn cartpole_and_pendulum_step_as_the_native_envs() {
        compare::<CartPole>(
            TensorClassic::CartPole,
            |rng| (0..4).map(|k| rng.gen_range(-1.0..1.0) * [2.5, 2.0, 0.22, 2.0][k]).collect(),
            |rng| f32::from(u8::from(rng.gen_bool(0.5))),
        );
        compare::<Pendulum>(
            TensorClassic::Pendulum,
            |rng| vec![rng.gen_range(-7.0..7.0), rng.gen_range(-8.0..8.0)],
            |rng| rng.gen_range(-3.0f32..3.0),
        );
    }

    #[test]
    fn episodes_end_with_auto_reset_at_the_time_limit_and_reproduce_per_seed() {
        let mut env = TensorClassicEnv::new(TensorClassic::Pendulum, 8, Device::Cpu);
        let first = env.reset(3);
        let theta: Vec<f32> = first.select(1, 0).try_into().unwrap();
        assert!(theta.iter().all(|c| (-1.0..=1.0).contains(c)));
        let zero = Tensor::zeros([8], (Kind::Float, Device::Cpu));
        for step in 1..=200 {
            let out = env.step(&zero);
            let truncated: Vec<bool> = out.truncated.try_into().unwrap();
            assert!(truncated.iter().all(|&t| t == (step == 200)), "step {step}");
            if step == 200 {
                // The final observation is the pre-reset one; the returned one a fresh start.
                assert!(out.final_observations.not_equal_tensor(&out.observations).any().int64_value(&[]) == 1);
            }
        }
        let mut again = TensorClassicEnv::new(TensorClassic::Pendulum, 8, Device::Cpu);
        assert!(again.reset(3).equal(&first));
        assert!(!again.reset(4).equal(&first));

        // CartPole terminates when the pole falls: pushing right forever ends every episode
        // well before the limit, and those envs restart inside the start box.
        let mut cart = TensorClassicEnv::new(TensorClassic::CartPole, 16, Device::Cpu);
        let _ = cart.reset(1);
        let right = Tensor::ones([16], (Kind::Float, Device::Cpu));
        let mut ended = Tensor::zeros([16], (Kind::Bool, Device::Cpu));
        for _ in 0..100 {
            let out = cart.step(&right);
            let restarted = out.observations.select(1, 0).masked_select(&out.terminated);
            assert!(restarted.abs().le(0.05).all().int64_value(&[]) == 1);
            ended = ended.logical_or(&out.terminated);
        }
        assert!(ended.all().int64_value(&[]) == 1);
    }
}
