//! The sampler's policy, as in MCPG (Chen et al., "Monte Carlo policy gradient method for binary
//! optimization"): independent Bernoulli spins P(s_i = +1) = sigmoid(theta_i), trained online by
//! REINFORCE on the Hamiltonian of the local-search-filtered samples.

use tch::{nn, nn::OptimizerConfig, Device, Kind, Tensor};

/// Policy hyperparameters.
#[derive(Debug, Clone, Copy)]
pub struct PolicyParams {
    /// Adam learning rate on the logits.
    pub learning_rate: f64,
    /// Entropy bonus weight; keeps the sampler from collapsing onto one configuration.
    pub entropy_weight: f64,
    /// |theta_i| is clipped here so that every spin keeps a probability of at least sigmoid(-clip).
    pub logit_clip: f64,
}

impl Default for PolicyParams {
    fn default() -> Self {
        PolicyParams { learning_rate: 0.05, entropy_weight: 0.01, logit_clip: 1.0 }
    }
}

pub struct BernoulliPolicy {
    _store: nn::VarStore,
    logits: Tensor,
    optimizer: nn::Optimizer,
    params: PolicyParams,
    device: Device,
}

impl BernoulliPolicy {
    /// Starts uniform: theta = 0, every spin +1 with probability 1/2.
    pub fn new(num_spins: usize, params: PolicyParams, device: Device) -> Self {
        let store = nn::VarStore::new(device);
        let logits = store.root().zeros("logits", &[num_spins as i64]);
        let optimizer = nn::Adam::default().build(&store, params.learning_rate).expect("Adam on a fresh VarStore");
        BernoulliPolicy { _store: store, logits, optimizer, params, device }
    }

    /// log P(s_i = +1) - log P(s_i = -1) for every spin: the logits themselves.
    pub fn log_odds(&self) -> Vec<f32> {
        self.logits.detach().to_device(Device::Cpu).try_into().expect("1-d float tensor")
    }

    /// One policy-gradient step: minimise E_b[A_b log p_theta(s_b)] - beta H(p_theta), where
    /// A_b = (E_b - mean E) / std E is the standardized energy (lower energy, higher probability).
    /// `spins` holds `batch` configurations of n spins each. Returns the surrogate loss.
    pub fn update(&mut self, spins: &[i8], energies: &[f64], batch: usize) -> f64 {
        let n = spins.len() / batch.max(1);
        let samples = Tensor::from_slice(spins).view([batch as i64, n as i64]).to_kind(Kind::Float).to(self.device);
        let energy = Tensor::from_slice(energies).to_kind(Kind::Float).to(self.device);
        let advantage = (&energy - energy.mean(Kind::Float)) / (energy.std(true) + 1e-6);
        // log p(s) = sum_i log sigmoid(s_i theta_i) for s_i in {-1, +1}.
        let log_prob = (&samples * &self.logits).log_sigmoid().sum_dim_intlist(1, false, Kind::Float);
        let p = self.logits.sigmoid();
        let q: Tensor = 1.0 - &p;
        let entropy = -(&p * (&p + 1e-9).log() + &q * (&q + 1e-9).log()).mean(Kind::Float);
        let loss = (advantage * log_prob).mean(Kind::Float) / n as f64 - self.params.entropy_weight * entropy;
        self.optimizer.backward_step(&loss);
        tch::no_grad(|| {
            let _ = self.logits.clamp_(-self.params.logit_clip, self.params.logit_clip);
        });
        loss.double_value(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_gradient_moves_probability_towards_low_energy_samples() {
        let mut policy = BernoulliPolicy::new(
            2,
            PolicyParams { entropy_weight: 0.0, logit_clip: 3.0, ..Default::default() },
            Device::Cpu,
        );
        // Spin 0 = +1 is always the low-energy choice; spin 1 is irrelevant.
        let spins = [1i8, 1, 1, -1, -1, 1, -1, -1];
        let energies = [-1.0, -1.0, 1.0, 1.0];
        for _ in 0..50 {
            policy.update(&spins, &energies, 4);
        }
        let p: Vec<f32> = policy.log_odds().iter().map(|x| 1.0 / (1.0 + (-x).exp())).collect();
        assert!(p[0] > 0.8, "P(s0=+1) = {}", p[0]);
        assert!((p[1] - 0.5).abs() < 0.1, "P(s1=+1) = {}", p[1]);
    }
}
