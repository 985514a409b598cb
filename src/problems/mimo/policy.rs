//! The learned beamforming policy: a "beamforming neural network" (Xia et al. 2020) that maps a
//! channel to the two power vectors of the optimal MISO beamforming structure (Bjornson,
//! Bengtsson, Ottersten 2014):
//!   w_k = sqrt(p_k) u_k / ||u_k||,  u_k = (I_N + sum_j (q_j / sigma^2) h_j^H h_j)^-1 h_k^H,
//! with q, p >= 0 and sum q = sum p = P (softmax outputs times P), so every output meets the power
//! budget. Uniform p and q give a regularized-ZF-like start (the output layer starts at zero); the
//! net is trained unsupervised, maximizing the mean sum rate over i.i.d. CN(0, 1) channels drawn
//! from a seeded stream. Input: Re H and Im H, flattened.

use super::beamforming::COMPLEX;
use crate::drl::net::mlp;
use crate::models::{LoadedPolicy, Manifest, WEIGHTS_FILE};
use crate::problems::random::standard_normal;
use anyhow::{Context, Result};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Mutex;
use tch::nn::{Module, OptimizerConfig};
use tch::{nn, Device, Kind, Tensor};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PolicyConfig {
    pub users: usize,
    pub antennas: usize,
    /// Power budget P the policy was trained for, and the noise power.
    pub power: f64,
    pub noise: f64,
    pub hidden: Vec<i64>,
}

impl Default for PolicyConfig {
    /// K = N = 8 at P = 10 with unit noise, two 256-wide hidden layers (the shipped models).
    fn default() -> Self {
        PolicyConfig { users: 8, antennas: 8, power: 10.0, noise: 1.0, hidden: vec![256, 256] }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrainingConfig {
    pub steps: usize,
    /// Channels per gradient step.
    pub batch: usize,
    pub learning_rate: f64,
    pub seed: u64,
}

impl Default for TrainingConfig {
    fn default() -> Self {
        TrainingConfig { steps: 3000, batch: 256, learning_rate: 1e-3, seed: 0 }
    }
}

pub struct MimoPolicy {
    pub config: PolicyConfig,
    pub store: nn::VarStore,
    net: nn::Sequential,
}

/// `count` i.i.d. CN(0, 1) channels [count, K, N] from `rng` (Box-Muller).
pub fn rayleigh_channels(rng: &mut ChaCha8Rng, count: usize, users: usize, antennas: usize) -> Tensor {
    let n = count * users * antennas;
    let mut normal = || standard_normal(rng) * 0.5f64.sqrt();
    let re: Vec<f64> = (0..n).map(|_| normal()).collect();
    let im: Vec<f64> = (0..n).map(|_| normal()).collect();
    let shape = [count as i64, users as i64, antennas as i64];
    Tensor::complex(&Tensor::from_slice(&re).view(shape), &Tensor::from_slice(&im).view(shape)).to_kind(COMPLEX)
}

impl MimoPolicy {
    pub fn new(config: PolicyConfig, device: Device) -> Self {
        let store = nn::VarStore::new(device);
        let (k, n) = (config.users as i64, config.antennas as i64);
        let net = mlp(&(store.root() / "policy"), 2 * k * n, &config.hidden, 2 * k);
        // Zero output layer: uniform powers, the regularized-ZF-like structure, to start from.
        tch::no_grad(|| {
            for (name, mut t) in store.variables() {
                if name.starts_with("policy.out") {
                    let _ = t.zero_();
                }
            }
        });
        MimoPolicy { config, store, net }
    }

    /// Beamformers [B, N, K] (complex128, on the CPU) for channels [B, K, N].
    pub fn beamformers(&self, h: &Tensor) -> Tensor {
        let device = self.store.device();
        let (b, k, n) = (h.size()[0], self.config.users as i64, self.config.antennas as i64);
        let h = h.to_device(device);
        let features = Tensor::cat(&[h.real().reshape([b, -1]), h.imag().reshape([b, -1])], 1).to_kind(Kind::Float);
        let out = self.net.forward(&features).to_kind(Kind::Double);
        let power = self.config.power;
        let q = out.narrow(1, 0, k).softmax(1, Kind::Double) * power;
        let p = out.narrow(1, k, k).softmax(1, Kind::Double) * power;
        // A = I + sum_j (q_j / sigma^2) h_j^H h_j  [B, N, N]
        let hh = h.conj().transpose(1, 2).resolve_conj(); // [B, N, K]
        let weighted = &hh * (q / self.config.noise).to_kind(COMPLEX).unsqueeze(1);
        let a = weighted.matmul(&h) + Tensor::eye(n, (COMPLEX, device));
        let u = Tensor::linalg_solve(&a, &hh, true); // [B, N, K], column k = A^-1 h_k^H
        let norms = u.abs().square().sum_dim_intlist(1, true, Kind::Double).sqrt().clamp_min(1e-30);
        (u / norms.to_kind(COMPLEX)) * p.sqrt().to_kind(COMPLEX).unsqueeze(1)
    }

    /// Mean sum rate of the policy on channels [B, K, N].
    pub fn mean_rate(&self, h: &Tensor) -> f64 {
        tch::no_grad(|| batch_rates(h, &self.beamformers(h), self.config.noise).mean(Kind::Double).double_value(&[]))
    }

    /// Trains a fresh policy; returns it with (step, mean training rate) every 10% of the steps.
    pub fn train(
        config: PolicyConfig,
        training: &TrainingConfig,
        device: Device,
    ) -> Result<(MimoPolicy, Vec<(usize, f64)>)> {
        tch::manual_seed(training.seed as i64);
        let policy = MimoPolicy::new(config, device);
        let mut optimizer = nn::Adam::default().build(&policy.store, training.learning_rate)?;
        let mut rng = ChaCha8Rng::seed_from_u64(training.seed);
        let mut curve = Vec::new();
        for step in 0..training.steps {
            let h = rayleigh_channels(&mut rng, training.batch, policy.config.users, policy.config.antennas);
            let rate = batch_rates(&h, &policy.beamformers(&h), policy.config.noise).mean(Kind::Double);
            optimizer.zero_grad();
            (-&rate).backward();
            optimizer.step();
            if (step + 1) % (training.steps / 10).max(1) == 0 {
                curve.push((step + 1, rate.double_value(&[])));
            }
        }
        Ok((policy, curve))
    }
}

/// Sum rates [B] of beamformers [B, N, K] on their own channels [B, K, N].
pub fn batch_rates(h: &Tensor, w: &Tensor, noise: f64) -> Tensor {
    let h = h.to_device(w.device());
    let gains = h.matmul(w).abs().square(); // [B, K, K]
    let signal = gains.diagonal(0, 1, 2);
    let interference = gains.sum_dim_intlist(2, false, Kind::Double) - &signal;
    (signal / (interference + noise) + 1.0).log2().sum_dim_intlist(1, false, Kind::Double)
}

/// The model registry's loader for `mimo` manifests.
pub fn load(manifest: &Manifest, dir: &Path) -> Result<LoadedPolicy> {
    let config: PolicyConfig = serde_json::from_value(manifest.architecture.clone()).context("architecture")?;
    let mut policy = MimoPolicy::new(config, Device::Cpu);
    policy.store.load(dir.join(WEIGHTS_FILE)).context("weights do not match the architecture")?;
    Ok(Box::new(Mutex::new(policy)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problems::mimo::beamforming::sum_rate;

    #[test]
    fn outputs_meet_the_power_budget_and_batch_rates_match_the_single_channel_formula() {
        let config = PolicyConfig { users: 3, antennas: 4, power: 10.0, noise: 1.0, hidden: vec![32] };
        let policy = MimoPolicy::new(config, Device::Cpu);
        let h = rayleigh_channels(&mut ChaCha8Rng::seed_from_u64(1), 5, 3, 4);
        let w = tch::no_grad(|| policy.beamformers(&h));
        let power = w.abs().square().sum_dim_intlist([1, 2].as_slice(), false, Kind::Double);
        assert!((power - 10.0).abs().max().double_value(&[]) < 1e-9);
        let batch = batch_rates(&h, &w, 1.0);
        for i in 0..5 {
            let single = sum_rate(&h.get(i), &w.get(i), 1.0).double_value(&[0]);
            assert!((batch.double_value(&[i]) - single).abs() < 1e-9);
        }
    }

    #[test]
    fn a_short_training_run_raises_the_mean_rate() {
        let config = PolicyConfig { users: 4, antennas: 4, power: 10.0, noise: 1.0, hidden: vec![64, 64] };
        let before = MimoPolicy::new(config.clone(), Device::Cpu);
        let validation = rayleigh_channels(&mut ChaCha8Rng::seed_from_u64(99), 256, 4, 4);
        let training = TrainingConfig { steps: 150, batch: 128, learning_rate: 3e-3, seed: 2 };
        let (after, _) = MimoPolicy::train(config, &training, Device::Cpu).unwrap();
        let (r0, r1) = (before.mean_rate(&validation), after.mean_rate(&validation));
        assert!(r1 > r0 + 0.05, "trained {r1} vs initial {r0}");
    }
}

#[cfg(test)]
mod registry_tests {
    use super::{MimoPolicy, PolicyConfig};
    use crate::models::{write_model, Manifest, ModelRecord, ModelRegistry, MANIFEST_FILE, WEIGHTS_FILE};
    use std::path::Path;
    use tch::Device;

    fn write_small(dir: &Path, name: &str) {
        let policy = MimoPolicy::new(
            PolicyConfig { users: 2, antennas: 2, power: 10.0, noise: 1.0, hidden: vec![8] },
            Device::Cpu,
        );
        let record = ModelRecord {
            problem: "mimo",
            architecture: serde_json::to_value(&policy.config).unwrap(),
            training: serde_json::json!({"command": "test"}),
            training_data: "none",
            metrics: serde_json::json!({}),
        };
        write_model(dir, name, &policy.store, record).unwrap();
    }

    #[test]
    fn verified_models_load_and_corrupt_or_mismatched_ones_are_refused_without_stopping_the_rest() {
        let dir = std::env::temp_dir().join(format!("rlsolver-models-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for name in ["good", "corrupt", "mismatched"] {
            write_small(&dir, name);
        }
        // Flip one byte of the weights: the hash no longer matches.
        let weights = dir.join("corrupt").join(WEIGHTS_FILE);
        let mut bytes = std::fs::read(&weights).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        std::fs::write(&weights, bytes).unwrap();
        // A manifest whose architecture does not fit its (intact) weights.
        let manifest_path = dir.join("mismatched").join(MANIFEST_FILE);
        let mut manifest: Manifest = serde_json::from_str(&std::fs::read_to_string(&manifest_path).unwrap()).unwrap();
        manifest.architecture["hidden"] = serde_json::json!([16]);
        std::fs::write(&manifest_path, serde_json::to_string(&manifest).unwrap()).unwrap();

        let registry = ModelRegistry::load_dir(&dir, crate::problems::policy_loaders);
        assert_eq!(registry.models.iter().map(|m| m.manifest.name.as_str()).collect::<Vec<_>>(), vec!["good"]);
        assert_eq!(registry.rejected.len(), 2);
        assert!(
            registry.rejected.iter().any(|(f, why)| f.ends_with("corrupt") && why.contains("sha256")),
            "{:?}",
            registry.rejected
        );
        assert!(
            registry.rejected.iter().any(|(f, why)| f.ends_with("mismatched") && why.contains("architecture")),
            "{:?}",
            registry.rejected
        );
        let default = |users, antennas, power| super::super::default_model(&registry, users, antennas, power);
        assert!(default(2, 2, 100.0).is_some() && default(3, 2, 10.0).is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
