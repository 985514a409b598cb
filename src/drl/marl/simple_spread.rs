//! MPE simple_spread as `mpe2.simple_spread_v3.parallel_env(N=3, local_ratio=0.5,
//! max_cycles=25)` computes it, continuous actions clipped to the box as mpe2's wrapper does (mpe2 1.1.1; tests/marl_envs.rs replays trajectories recorded from
//! it): 3 agents (size 0.15, colliding) and 3 landmarks in the plane; actions are forces (discrete:
//! none/left/right/down/up; continuous: [0, 1]^5 with u = (a2 - a1, a4 - a3)), times the
//! sensitivity 5; contact forces between agents; the world integrates position with the old
//! velocity, then damps and accelerates it (dt 0.1, damping 0.25). Each agent's reward is
//! 0.5 * (-sum over landmarks of the nearest agent's distance) + 0.5 * (-1 per agent it overlaps).

use super::{MultiAgentEnv, MultiAgentObservation, MultiAgentStep};
use crate::drl::env::ActionSpace;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub const AGENTS: usize = 3;
pub const LANDMARKS: usize = 3;
pub const OBSERVATION_DIM: usize = 4 + 2 * LANDMARKS + 2 * (AGENTS - 1) + 2 * (AGENTS - 1);
pub const MAX_CYCLES: usize = 25;
const AGENT_SIZE: f64 = 0.15;
const SENSITIVITY: f64 = 5.0;
const DT: f64 = 0.1;
const DAMPING: f64 = 0.25;
const CONTACT_FORCE: f64 = 1e2;
const CONTACT_MARGIN: f64 = 1e-3;
const LOCAL_RATIO: f64 = 0.5;

/// One world's physical state.
#[derive(Debug, Clone, Default)]
pub struct World {
    pub agent_positions: [[f64; 2]; AGENTS],
    pub agent_velocities: [[f64; 2]; AGENTS],
    pub landmark_positions: [[f64; 2]; LANDMARKS],
}

/// numpy.logaddexp(0, x), branch for branch.
fn logaddexp0(x: f64) -> f64 {
    if x == 0.0 {
        std::f64::consts::LN_2
    } else if -x > 0.0 {
        (x).exp().ln_1p()
    } else {
        x + (-x).exp().ln_1p()
    }
}

fn distance(a: &[f64; 2], b: &[f64; 2]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt()
}

impl World {
    fn random(rng: &mut ChaCha8Rng) -> Self {
        let mut world = World::default();
        for p in world.agent_positions.iter_mut().chain(world.landmark_positions.iter_mut()) {
            *p = [rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0)];
        }
        world
    }

    /// The physical control of one agent's action row.
    fn control(action: &[f32], continuous: bool) -> [f64; 2] {
        let u = if continuous {
            // mpe2 wraps continuous envs in ClipOutOfBoundsWrapper: actions are clipped to [0, 1].
            let a = |k: usize| f64::from(action[k].clamp(0.0, 1.0));
            [a(2) - a(1), a(4) - a(3)]
        } else {
            match action[0] as usize {
                1 => [-1.0, 0.0],
                2 => [1.0, 0.0],
                3 => [0.0, -1.0],
                4 => [0.0, 1.0],
                _ => [0.0, 0.0],
            }
        };
        [u[0] * SENSITIVITY, u[1] * SENSITIVITY]
    }

    /// One world step; returns every agent's reward.
    pub fn step(&mut self, actions: &[f32], continuous: bool) -> [f64; AGENTS] {
        let width = if continuous { 5 } else { 1 };
        let mut force: [[f64; 2]; AGENTS] =
            std::array::from_fn(|i| Self::control(&actions[i * width..(i + 1) * width], continuous));
        for a in 0..AGENTS {
            for b in a + 1..AGENTS {
                let (pa, pb) = (self.agent_positions[a], self.agent_positions[b]);
                let delta = [pa[0] - pb[0], pa[1] - pb[1]];
                let dist = (delta[0] * delta[0] + delta[1] * delta[1]).sqrt();
                let penetration = logaddexp0(-(dist - 2.0 * AGENT_SIZE) / CONTACT_MARGIN) * CONTACT_MARGIN;
                for d in 0..2 {
                    let f = CONTACT_FORCE * delta[d] / dist * penetration;
                    force[a][d] += f;
                    force[b][d] += -f;
                }
            }
        }
        for i in 0..AGENTS {
            for d in 0..2 {
                self.agent_positions[i][d] += self.agent_velocities[i][d] * DT;
                self.agent_velocities[i][d] *= 1.0 - DAMPING;
                self.agent_velocities[i][d] += force[i][d] * DT;
            }
        }
        let global: f64 = -self
            .landmark_positions
            .iter()
            .map(|l| self.agent_positions.iter().map(|a| distance(a, l)).fold(f64::INFINITY, f64::min))
            .sum::<f64>();
        std::array::from_fn(|i| {
            let collisions = (0..AGENTS)
                .filter(|&j| j != i && distance(&self.agent_positions[i], &self.agent_positions[j]) < 2.0 * AGENT_SIZE)
                .count() as f64;
            global * (1.0 - LOCAL_RATIO) - collisions * LOCAL_RATIO
        })
    }

    /// Agent i's observation: own velocity and position, landmarks and other agents relative to
    /// it, the others' (silent, zero) communication.
    pub fn observe(&self, i: usize, out: &mut [f32]) {
        let p = self.agent_positions[i];
        let mut k = 0;
        let mut put = |x: f64| {
            out[k] = x as f32;
            k += 1;
        };
        self.agent_velocities[i].iter().chain(&p).for_each(|&x| put(x));
        for l in &self.landmark_positions {
            put(l[0] - p[0]);
            put(l[1] - p[1]);
        }
        for (j, o) in self.agent_positions.iter().enumerate() {
            if j != i {
                put(o[0] - p[0]);
                put(o[1] - p[1]);
            }
        }
        for _ in 0..2 * (AGENTS - 1) {
            put(0.0);
        }
    }
}

pub struct SimpleSpread {
    worlds: Vec<World>,
    rngs: Vec<ChaCha8Rng>,
    steps: usize,
    continuous: bool,
}

impl SimpleSpread {
    pub fn new(num_envs: usize, continuous: bool) -> Self {
        let rngs: Vec<ChaCha8Rng> = (0..num_envs)
            .map(|i| {
                let mut rng = ChaCha8Rng::seed_from_u64(0);
                rng.set_stream(i as u64);
                rng
            })
            .collect();
        SimpleSpread { worlds: vec![World::default(); num_envs], rngs, steps: 0, continuous }
    }

    /// Sets env i's world (fixture replay) and restarts the episode clock.
    pub fn set_world(&mut self, i: usize, world: World) {
        self.worlds[i] = world;
        self.steps = 0;
    }

    pub fn worlds(&self) -> &[World] {
        &self.worlds
    }

    fn observe(&self) -> MultiAgentObservation {
        let dim = OBSERVATION_DIM;
        let mut observations = vec![0.0; self.worlds.len() * AGENTS * dim];
        for (w, world) in self.worlds.iter().enumerate() {
            for i in 0..AGENTS {
                let at = (w * AGENTS + i) * dim;
                world.observe(i, &mut observations[at..at + dim]);
            }
        }
        // The state is every agent's observation, concatenated (mpe2's `state()`).
        let states = observations.clone();
        let available_actions = if self.continuous { Vec::new() } else { vec![1.0; self.worlds.len() * AGENTS * 5] };
        MultiAgentObservation { observations, states, available_actions }
    }
}

impl MultiAgentEnv for SimpleSpread {
    fn num_envs(&self) -> usize {
        self.worlds.len()
    }
    fn num_agents(&self) -> usize {
        AGENTS
    }
    fn observation_dim(&self) -> usize {
        OBSERVATION_DIM
    }
    fn state_dim(&self) -> usize {
        AGENTS * OBSERVATION_DIM
    }
    fn action_space(&self) -> ActionSpace {
        if self.continuous {
            ActionSpace::Continuous { low: vec![0.0; 5], high: vec![1.0; 5] }
        } else {
            ActionSpace::Discrete { n: 5 }
        }
    }
    fn episode_limit(&self) -> usize {
        MAX_CYCLES
    }

    fn reset(&mut self, seed: u64) -> MultiAgentObservation {
        for (i, (world, rng)) in self.worlds.iter_mut().zip(&mut self.rngs).enumerate() {
            *rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(i as u64);
            *world = World::random(rng);
        }
        self.steps = 0;
        self.observe()
    }

    fn step(&mut self, actions: &[f32]) -> MultiAgentStep {
        let width = if self.continuous { 5 } else { 1 };
        let per_env = AGENTS * width;
        let mut rewards = Vec::with_capacity(self.worlds.len() * AGENTS);
        for (w, world) in self.worlds.iter_mut().enumerate() {
            let r = world.step(&actions[w * per_env..(w + 1) * per_env], self.continuous);
            rewards.extend(r.iter().map(|&x| x as f32));
        }
        self.steps += 1;
        let b = self.worlds.len();
        let truncated = self.steps >= MAX_CYCLES;
        MultiAgentStep {
            next: self.observe(),
            team_rewards: rewards.chunks(AGENTS).map(|r| r.iter().sum()).collect(),
            rewards,
            terminated: vec![false; b],
            truncated: vec![truncated; b],
        }
    }
}
