//! Reference policies for simple_spread: uniformly random actions, and a scripted heuristic that
//! assigns agents to landmarks by a minimum-cost matching (total distance, over all 3!
//! assignments) every step and steers each agent toward its landmark with the control that
//! minimizes its distance two steps ahead under the env's dynamics (collisions ignored).

use super::simple_spread::{World, AGENTS, LANDMARKS};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

const DT: f64 = 0.1;
const DAMPING: f64 = 0.25;
const SENSITIVITY: f64 = 5.0;

/// The landmark of each agent in the cheapest assignment.
pub fn assignment(world: &World) -> [usize; AGENTS] {
    let mut best = ([0, 1, 2], f64::INFINITY);
    for p in permutations() {
        let cost: f64 = (0..AGENTS)
            .map(|i| {
                let (a, l) = (world.agent_positions[i], world.landmark_positions[p[i]]);
                ((a[0] - l[0]).powi(2) + (a[1] - l[1]).powi(2)).sqrt()
            })
            .sum();
        if cost < best.1 {
            best = (p, cost);
        }
    }
    best.0
}

fn permutations() -> Vec<[usize; LANDMARKS]> {
    let mut out = Vec::new();
    for a in 0..3 {
        for b in 0..3 {
            for c in 0..3 {
                if a != b && b != c && a != c {
                    out.push([a, b, c]);
                }
            }
        }
    }
    out
}

/// Position two steps ahead under control u (per unit of sensitivity).
fn lookahead(position: [f64; 2], velocity: [f64; 2], u: [f64; 2]) -> [f64; 2] {
    std::array::from_fn(|d| {
        let v1 = velocity[d] * (1.0 - DAMPING) + u[d] * SENSITIVITY * DT;
        position[d] + velocity[d] * DT + v1 * DT
    })
}

/// The heuristic's joint action for one world: [N] discrete indices or [N, 5] continuous rows.
pub fn heuristic_actions(world: &World, continuous: bool) -> Vec<f32> {
    let targets = assignment(world);
    let mut out = Vec::new();
    for i in 0..AGENTS {
        let (p, v, goal) = (world.agent_positions[i], world.agent_velocities[i], world.landmark_positions[targets[i]]);
        if continuous {
            // Solve lookahead(p, v, u) = goal per axis, clipped to the reachable [-1, 1].
            let u: [f64; 2] = std::array::from_fn(|d| {
                ((goal[d] - p[d] - v[d] * DT * (2.0 - DAMPING)) / (SENSITIVITY * DT * DT)).clamp(-1.0, 1.0)
            });
            out.extend([
                0.0,
                (-u[0]).max(0.0) as f32,
                u[0].max(0.0) as f32,
                (-u[1]).max(0.0) as f32,
                u[1].max(0.0) as f32,
            ]);
        } else {
            let controls = [[0.0, 0.0], [-1.0, 0.0], [1.0, 0.0], [0.0, -1.0], [0.0, 1.0]];
            let distance = |u: [f64; 2]| {
                let q = lookahead(p, v, u);
                (q[0] - goal[0]).powi(2) + (q[1] - goal[1]).powi(2)
            };
            let best = (0..5).min_by(|&a, &b| distance(controls[a]).total_cmp(&distance(controls[b]))).unwrap();
            out.push(best as f32);
        }
    }
    out
}

/// Uniformly random joint actions for `count` agents.
pub fn random_actions(count: usize, continuous: bool, rng: &mut ChaCha8Rng) -> Vec<f32> {
    if continuous {
        (0..count * 5).map(|_| rng.gen_range(0.0..1.0)).collect()
    } else {
        (0..count).map(|_| rng.gen_range(0..5) as f32).collect()
    }
}
