//! The H-term (ElegantRL's "Hamiltonian term"): an optional extra actor update on a buffer of the
//! best recent trajectories. For a window of k consecutive steps (s_t..s_{t+k-1}, a_t..a_{t+k-1})
//! of a stored trajectory with discounted return-to-go G_t = sum_{j>=0} gamma^j r_{t+j}:
//!
//!   L_H(theta) = -lambda * mean_windows[ w_t * sum_{j<k} log pi_theta(a_{t+j} | s_{t+j}) ],
//!   w_t = (G_t - min G) / (max G - min G + 1e-8) over the sampled windows,
//!
//! i.e. maximise the joint probability of the k-step action sequences, weighted by their
//! normalized discounted return. Off unless `h_term_lambda > 0`.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use tch::{Device, Tensor};

#[derive(Debug, Clone, Copy)]
pub struct HTermConfig {
    /// lambda; 0 disables the term.
    pub lambda: f64,
    /// Steps per window (k).
    pub horizon: usize,
    /// Trajectories kept (the best by return among those seen).
    pub keep: usize,
    /// Windows per update.
    pub windows: usize,
    pub gamma: f64,
}

impl Default for HTermConfig {
    fn default() -> Self {
        HTermConfig { lambda: 0.0, horizon: 8, keep: 16, windows: 32, gamma: 0.99 }
    }
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Trajectory {
    obs: Vec<f32>,
    actions: Vec<f32>,
    returns_to_go: Vec<f32>,
    total: f64,
}

/// The best recent complete trajectories.
pub struct HTermBuffer {
    config: HTermConfig,
    obs_dim: usize,
    action_width: usize,
    trajectories: Vec<Trajectory>,
}

impl HTermBuffer {
    /// The kept trajectories, for a checkpoint.
    pub fn save_state(&self) -> anyhow::Result<serde_json::Value> {
        Ok(serde_json::to_value(&self.trajectories)?)
    }

    pub fn load_state(&mut self, state: &serde_json::Value) -> anyhow::Result<()> {
        self.trajectories = serde_json::from_value(state.clone())?;
        Ok(())
    }
}

/// A batch of windows as tensors: obs [W*k, d], actions [W*k, a], weights [W].
pub struct Windows {
    pub obs: Tensor,
    pub actions: Tensor,
    pub weights: Tensor,
    pub horizon: usize,
}

impl HTermBuffer {
    pub fn new(config: HTermConfig, obs_dim: usize, action_width: usize) -> Self {
        HTermBuffer { config, obs_dim, action_width, trajectories: Vec::new() }
    }

    pub fn enabled(&self) -> bool {
        self.config.lambda > 0.0
    }

    pub fn lambda(&self) -> f64 {
        self.config.lambda
    }

    /// Adds a finished episode; keeps the `keep` best by undiscounted return.
    pub fn push(&mut self, obs: Vec<f32>, actions: Vec<f32>, rewards: &[f32]) {
        if rewards.len() < self.config.horizon {
            return;
        }
        let mut returns_to_go = vec![0.0f32; rewards.len()];
        let mut running = 0.0f64;
        for t in (0..rewards.len()).rev() {
            running = f64::from(rewards[t]) + self.config.gamma * running;
            returns_to_go[t] = running as f32;
        }
        let total = rewards.iter().map(|&r| f64::from(r)).sum();
        self.trajectories.push(Trajectory { obs, actions, returns_to_go, total });
        self.trajectories.sort_by(|a, b| b.total.total_cmp(&a.total));
        self.trajectories.truncate(self.config.keep);
    }

    /// Samples windows; None until a trajectory is stored.
    pub fn sample(&self, rng: &mut ChaCha8Rng, device: Device) -> Option<Windows> {
        if self.trajectories.is_empty() {
            return None;
        }
        let k = self.config.horizon;
        let (mut obs, mut actions, mut g) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..self.config.windows {
            let trajectory = &self.trajectories[rng.gen_range(0..self.trajectories.len())];
            let length = trajectory.returns_to_go.len();
            let t = rng.gen_range(0..=length - k);
            obs.extend_from_slice(&trajectory.obs[t * self.obs_dim..(t + k) * self.obs_dim]);
            actions.extend_from_slice(&trajectory.actions[t * self.action_width..(t + k) * self.action_width]);
            g.push(trajectory.returns_to_go[t]);
        }
        let (low, high) = g.iter().fold((f32::MAX, f32::MIN), |(l, h), &x| (l.min(x), h.max(x)));
        let weights: Vec<f32> = g.iter().map(|&x| (x - low) / (high - low + 1e-8)).collect();
        let rows = (self.config.windows * k) as i64;
        Some(Windows {
            obs: Tensor::from_slice(&obs).view([rows, self.obs_dim as i64]).to(device),
            actions: Tensor::from_slice(&actions).view([rows, self.action_width as i64]).to(device),
            weights: Tensor::from_slice(&weights).to(device),
            horizon: k,
        })
    }
}

/// L_H for per-step log-probabilities `log_probs` [W*k] of the windows' actions.
pub fn h_term_loss(windows: &Windows, log_probs: &Tensor, lambda: f64) -> Tensor {
    let joint = log_probs.view([-1, windows.horizon as i64]).sum_dim_intlist(1, false, tch::Kind::Float);
    -(joint * &windows.weights).mean(tch::Kind::Float) * lambda
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn keeps_the_best_trajectories_and_weights_windows_by_normalized_return() {
        let config = HTermConfig { lambda: 1.0, horizon: 2, keep: 1, windows: 4, gamma: 1.0 };
        let mut buffer = HTermBuffer::new(config, 1, 1);
        buffer.push(vec![0.0; 3], vec![0.0; 3], &[0.0, 0.0, 0.0]);
        buffer.push(vec![1.0; 3], vec![1.0; 3], &[1.0, 1.0, 1.0]);
        let windows = buffer.sample(&mut ChaCha8Rng::seed_from_u64(0), Device::Cpu).unwrap();
        let actions: Vec<f32> = (&windows.actions.flatten(0, -1)).try_into().unwrap();
        let weights: Vec<f32> = (&windows.weights).try_into().unwrap();
        assert!(actions.iter().all(|&a| a == 1.0), "only the better trajectory is kept");
        assert!(weights.iter().all(|w| (0.0..=1.0).contains(w)));
        // Raising log-probabilities lowers the loss.
        let low = h_term_loss(&windows, &Tensor::full([8], -2.0, (tch::Kind::Float, Device::Cpu)), 1.0);
        let high = h_term_loss(&windows, &Tensor::full([8], -1.0, (tch::Kind::Float, Device::Cpu)), 1.0);
        assert!(high.double_value(&[]) <= low.double_value(&[]));
    }
}
