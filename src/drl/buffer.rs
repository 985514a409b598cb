//! Experience replay for every off-policy agent: uniform sampling, or prioritized experience
//! replay (Schaul et al. 2016, proportional variant) with a sum tree, priority exponent alpha,
//! importance-sampling exponent beta annealed to 1, and weights normalised by their maximum.

use super::state::StateDict;
use anyhow::{ensure, Result};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use tch::{Device, Tensor};

/// PER hyperparameters.
#[derive(Debug, Clone, Copy)]
pub struct PrioritizedConfig {
    /// Priority exponent (0 = uniform); paper default 0.6.
    pub alpha: f64,
    /// Initial importance-sampling exponent, annealed linearly to 1; paper default 0.4.
    pub beta_start: f64,
    /// Samples over which beta reaches 1.
    pub beta_steps: usize,
    /// Added to |TD error| so that no transition starves.
    pub epsilon: f64,
}

impl Default for PrioritizedConfig {
    fn default() -> Self {
        PrioritizedConfig { alpha: 0.6, beta_start: 0.4, beta_steps: 100_000, epsilon: 1e-6 }
    }
}

/// A sampled minibatch as tensors on the agent's device.
pub struct Batch {
    pub obs: Tensor,
    pub actions: Tensor,
    pub rewards: Tensor,
    pub next_obs: Tensor,
    /// 1 where the episode terminated (no bootstrap); truncation keeps bootstrapping.
    pub terminated: Tensor,
    /// Importance weights (all 1 for uniform replay).
    pub weights: Tensor,
    /// Buffer slots, for `update_priorities`.
    pub indices: Vec<usize>,
}

/// A binary sum tree over `capacity` leaves (power of two).
struct SumTree {
    leaves: usize,
    nodes: Vec<f64>,
}

impl SumTree {
    fn new(capacity: usize) -> Self {
        let leaves = capacity.next_power_of_two();
        SumTree { leaves, nodes: vec![0.0; 2 * leaves] }
    }

    fn total(&self) -> f64 {
        self.nodes[1]
    }

    fn set(&mut self, slot: usize, value: f64) {
        let mut i = slot + self.leaves;
        self.nodes[i] = value;
        while i > 1 {
            i /= 2;
            self.nodes[i] = self.nodes[2 * i] + self.nodes[2 * i + 1];
        }
    }

    fn get(&self, slot: usize) -> f64 {
        self.nodes[slot + self.leaves]
    }

    /// The slot whose prefix-sum interval contains `mass`.
    fn find(&self, mut mass: f64) -> usize {
        let mut i = 1;
        while i < self.leaves {
            if mass <= self.nodes[2 * i] || self.nodes[2 * i + 1] == 0.0 {
                i *= 2;
            } else {
                mass -= self.nodes[2 * i];
                i = 2 * i + 1;
            }
        }
        i - self.leaves
    }
}

pub struct ReplayBuffer {
    capacity: usize,
    obs_dim: usize,
    action_width: usize,
    /// Rewards per transition: 1, or one per agent (multi-agent joint transitions).
    reward_width: usize,
    obs: Vec<f32>,
    actions: Vec<f32>,
    rewards: Vec<f32>,
    next_obs: Vec<f32>,
    terminated: Vec<f32>,
    len: usize,
    cursor: usize,
    prioritized: Option<(PrioritizedConfig, SumTree, f64)>,
    samples_drawn: usize,
}

impl ReplayBuffer {
    pub fn new(capacity: usize, obs_dim: usize, action_width: usize, prioritized: Option<PrioritizedConfig>) -> Self {
        Self::with_reward_width(capacity, obs_dim, action_width, 1, prioritized)
    }

    /// A buffer of transitions carrying `reward_width` rewards each (sampled as [B, width]).
    pub fn with_reward_width(
        capacity: usize,
        obs_dim: usize,
        action_width: usize,
        reward_width: usize,
        prioritized: Option<PrioritizedConfig>,
    ) -> Self {
        ReplayBuffer {
            capacity,
            obs_dim,
            action_width,
            reward_width,
            obs: vec![0.0; capacity * obs_dim],
            actions: vec![0.0; capacity * action_width],
            rewards: vec![0.0; capacity * reward_width],
            next_obs: vec![0.0; capacity * obs_dim],
            terminated: vec![0.0; capacity],
            len: 0,
            cursor: 0,
            prioritized: prioritized.map(|c| (c, SumTree::new(capacity), 1.0)),
            samples_drawn: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// The stored transitions (only the filled rows), the cursor and the priorities, under `prefix`.
    pub fn save(&self, prefix: &str, state: &mut StateDict) -> Result<()> {
        let rows = self.len;
        state.put_floats(format!("{prefix}.obs"), &self.obs[..rows * self.obs_dim]);
        state.put_floats(format!("{prefix}.actions"), &self.actions[..rows * self.action_width]);
        state.put_floats(format!("{prefix}.rewards"), &self.rewards[..rows * self.reward_width]);
        state.put_floats(format!("{prefix}.next_obs"), &self.next_obs[..rows * self.obs_dim]);
        state.put_floats(format!("{prefix}.terminated"), &self.terminated[..rows]);
        let priorities = self.prioritized.as_ref().map(|(_, tree, max)| (tree.nodes.clone(), *max));
        state.put(format!("{prefix}.position"), &(self.len, self.cursor, self.samples_drawn, priorities))
    }

    pub fn load(&mut self, prefix: &str, state: &StateDict) -> Result<()> {
        let (len, cursor, samples_drawn, priorities): (usize, usize, usize, Option<(Vec<f64>, f64)>) =
            state.get(&format!("{prefix}.position"))?;
        ensure!(len <= self.capacity, "{prefix}: {len} transitions saved, capacity {}", self.capacity);
        let fill = |target: &mut Vec<f32>, name: &str, width: usize| -> Result<()> {
            let saved = state.floats(&format!("{prefix}.{name}"))?;
            ensure!(saved.len() == len * width, "{prefix}.{name}: {} values for {len} rows", saved.len());
            target[..saved.len()].copy_from_slice(&saved);
            Ok(())
        };
        fill(&mut self.obs, "obs", self.obs_dim)?;
        fill(&mut self.actions, "actions", self.action_width)?;
        fill(&mut self.rewards, "rewards", self.reward_width)?;
        fill(&mut self.next_obs, "next_obs", self.obs_dim)?;
        fill(&mut self.terminated, "terminated", 1)?;
        (self.len, self.cursor, self.samples_drawn) = (len, cursor, samples_drawn);
        if let (Some((_, tree, max)), Some((nodes, saved_max))) = (self.prioritized.as_mut(), priorities) {
            ensure!(nodes.len() == tree.nodes.len(), "{prefix}: priority tree of another capacity");
            (tree.nodes, *max) = (nodes, saved_max);
        }
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds one transition; new transitions get the maximum priority seen so far.
    pub fn push(&mut self, obs: &[f32], action: &[f32], reward: f32, next_obs: &[f32], terminated: bool) {
        self.push_rewards(obs, action, &[reward], next_obs, terminated);
    }

    /// `push` with `reward_width` rewards.
    pub fn push_rewards(&mut self, obs: &[f32], action: &[f32], rewards: &[f32], next_obs: &[f32], terminated: bool) {
        let i = self.cursor;
        let w = self.reward_width;
        self.rewards[i * w..(i + 1) * w].copy_from_slice(rewards);
        self.obs[i * self.obs_dim..(i + 1) * self.obs_dim].copy_from_slice(obs);
        self.actions[i * self.action_width..(i + 1) * self.action_width].copy_from_slice(action);
        self.next_obs[i * self.obs_dim..(i + 1) * self.obs_dim].copy_from_slice(next_obs);
        self.terminated[i] = f32::from(u8::from(terminated));
        if let Some((config, tree, max_priority)) = &mut self.prioritized {
            tree.set(i, max_priority.powf(config.alpha));
        }
        self.cursor = (self.cursor + 1) % self.capacity;
        self.len = (self.len + 1).min(self.capacity);
    }

    /// Samples `size` transitions (stratified over the sum tree for PER).
    pub fn sample(&mut self, size: usize, rng: &mut ChaCha8Rng, device: Device) -> Batch {
        let (indices, weights): (Vec<usize>, Vec<f32>) = match &self.prioritized {
            None => ((0..size).map(|_| rng.gen_range(0..self.len)).collect(), vec![1.0; size]),
            Some((config, tree, _)) => {
                let progress = (self.samples_drawn as f64 / config.beta_steps.max(1) as f64).min(1.0);
                let beta = config.beta_start + (1.0 - config.beta_start) * progress;
                let total = tree.total();
                let segment = total / size as f64;
                let indices: Vec<usize> =
                    (0..size).map(|k| tree.find(segment * (k as f64 + rng.gen::<f64>())).min(self.len - 1)).collect();
                // w_i = (N P(i))^-beta / max_j w_j
                let raw: Vec<f64> =
                    indices.iter().map(|&i| (self.len as f64 * tree.get(i) / total).max(1e-12).powf(-beta)).collect();
                let max = raw.iter().cloned().fold(f64::MIN, f64::max);
                (indices, raw.iter().map(|w| (w / max) as f32).collect())
            }
        };
        self.samples_drawn += size;
        let gather = |source: &[f32], width: usize| {
            let mut out = Vec::with_capacity(size * width);
            for &i in &indices {
                out.extend_from_slice(&source[i * width..(i + 1) * width]);
            }
            Tensor::from_slice(&out).view([size as i64, width as i64]).to(device)
        };
        Batch {
            obs: gather(&self.obs, self.obs_dim),
            actions: gather(&self.actions, self.action_width),
            rewards: match self.reward_width {
                1 => gather(&self.rewards, 1).view([-1]),
                w => gather(&self.rewards, w),
            },
            next_obs: gather(&self.next_obs, self.obs_dim),
            terminated: gather(&self.terminated, 1).view([-1]),
            weights: Tensor::from_slice(&weights).to(device),
            indices,
        }
    }

    /// PER: new priorities |delta| + epsilon for the sampled slots (no-op for uniform replay).
    pub fn update_priorities(&mut self, indices: &[usize], td_errors: &[f32]) {
        if let Some((config, tree, max_priority)) = &mut self.prioritized {
            for (&i, &delta) in indices.iter().zip(td_errors) {
                let priority = f64::from(delta.abs()) + config.epsilon;
                *max_priority = max_priority.max(priority);
                tree.set(i, priority.powf(config.alpha));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn sum_tree_finds_slots_in_proportion_to_their_priority() {
        let mut tree = SumTree::new(4);
        for (slot, p) in [1.0, 2.0, 3.0, 4.0].iter().enumerate() {
            tree.set(slot, *p);
        }
        assert_eq!(tree.total(), 10.0);
        assert_eq!([0.5, 1.5, 2.5, 5.5, 6.5, 9.9].map(|m| tree.find(m)), [0, 1, 1, 2, 3, 3]);
    }

    #[test]
    fn prioritized_replay_samples_high_td_error_more_and_downweights_it() {
        let mut buffer = ReplayBuffer::new(8, 1, 1, Some(PrioritizedConfig { alpha: 1.0, ..Default::default() }));
        for i in 0..8 {
            buffer.push(&[i as f32], &[0.0], 0.0, &[0.0], false);
        }
        let td: Vec<f32> = (0..8).map(|i| if i == 3 { 10.0 } else { 0.1 }).collect();
        buffer.update_priorities(&(0..8).collect::<Vec<_>>(), &td);
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let batch = buffer.sample(64, &mut rng, Device::Cpu);
        let hits = batch.indices.iter().filter(|&&i| i == 3).count();
        assert!(hits > 40, "slot 3 drawn {hits}/64 times");
        let weights: Vec<f32> = batch.weights.try_into().unwrap();
        let (w3, w_other) = (
            weights[batch.indices.iter().position(|&i| i == 3).unwrap()],
            weights[batch.indices.iter().position(|&i| i != 3).unwrap()],
        );
        assert!(w3 < w_other, "importance weight of the frequent slot {w3} vs {w_other}");
    }
}
