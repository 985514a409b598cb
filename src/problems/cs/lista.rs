//! The compressive-sensing policy: LISTA (learned ISTA, Gregor & LeCun 2010), unrolled for a fixed
//! number of layers, in the weight-coupled form with support selection (LISTA-CPSS, Chen et al.
//! 2018) and analytic weights (ALISTA, Liu et al. 2019):
//!   x^{k+1} = eta_{theta_k, p_k}(x^k - gamma_k W^T (A x^k - y)),
//! where eta soft-thresholds by theta_k except the p_k share of entries of largest magnitude,
//! which pass unshrunk, and W minimizes the coherence ||W^T A||_F subject to diag(W^T A) = 1,
//! column by column in closed form: w_i = (A A^T)^-1 a_i / (a_i^T (A A^T)^-1 a_i). Learned per
//! layer: the step gamma_k and the threshold theta_k. Because W comes from the instance's own A,
//! one trained policy serves every Gaussian matrix of its shape (classic LISTA learns W for one
//! fixed A, while every request here brings its own).
//! Inputs are normalized (unit-norm columns of A, y scaled so ||A^T y||_inf = 1) so the policy
//! does not depend on the scale of the instance. Trained supervised on seeded Gaussian instances
//! (A with N(0, 1/m) entries, k-sparse x with N(0, 1) entries, k uniform in a range), minimizing
//! the normalized error ||x^K - x||^2 / ||x||^2.

use super::recovery::Matrix;
use crate::models::{LoadedPolicy, Manifest, WEIGHTS_FILE};
use crate::problems::random::standard_normal;
use anyhow::{Context, Result};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Mutex;
use tch::{nn, Device, Kind, Tensor};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ListaConfig {
    /// Measurements m and unknowns n the policy is trained for.
    pub measurements: usize,
    pub unknowns: usize,
    /// Unrolled layers K.
    pub layers: usize,
    /// Support selection: layer k passes the top min(k * step, max) share of entries unshrunk.
    pub support_step: f64,
    pub support_max: f64,
}

impl ListaConfig {
    /// 16 layers, support selection growing by 1.2% of n per layer up to 13% (LISTA-CPSS's
    /// schedule scaled to K = 16).
    pub fn new(measurements: usize, unknowns: usize) -> Self {
        ListaConfig { measurements, unknowns, layers: 16, support_step: 0.012, support_max: 0.13 }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ListaTraining {
    pub steps: usize,
    /// Instances per gradient step.
    pub batch: usize,
    pub learning_rate: f64,
    /// Sparsity of the training instances, uniform in this range (inclusive).
    pub min_sparsity: usize,
    pub max_sparsity: usize,
    pub seed: u64,
}

impl Default for ListaTraining {
    fn default() -> Self {
        ListaTraining { steps: 4000, batch: 64, learning_rate: 5e-3, min_sparsity: 5, max_sparsity: 15, seed: 0 }
    }
}

pub struct ListaPolicy {
    pub config: ListaConfig,
    pub store: nn::VarStore,
    /// log gamma_k and log theta_k [K] (logs keep both positive).
    log_steps: Tensor,
    log_thresholds: Tensor,
}

/// A batch of normalized instances on one device: A [B, m, n] (unit columns), y [B, m], and the
/// analytic weights W [B, m, n].
struct Normalized {
    a: Tensor,
    y: Tensor,
    w: Tensor,
    /// x = z * scale / column_norms.
    column_norms: Tensor,
    scale: Tensor,
}

fn normalize(a: &Tensor, y: &Tensor) -> Normalized {
    let column_norms = a.square().sum_dim_intlist(1, true, Kind::Float).sqrt().clamp_min(1e-12); // [B, 1, n]
    let a = a / &column_norms;
    let scale = a.transpose(1, 2).matmul(&y.unsqueeze(2)).abs().amax(&[1, 2][..], true).clamp_min(1e-12).squeeze_dim(2); // [B, 1]
                                                                                                                         // W = (A A^T)^-1 A diag(1 / (a_i^T (A A^T)^-1 a_i)), in double precision for the solve.
    let a64 = a.to_kind(Kind::Double);
    let gram = a64.matmul(&a64.transpose(1, 2));
    let m = gram.size()[1];
    let ridge = Tensor::eye(m, (Kind::Double, a.device())) * 1e-10;
    let z = Tensor::linalg_solve(&(gram + ridge), &a64, true);
    let diagonal = (&a64 * &z).sum_dim_intlist(1, true, Kind::Double).clamp_min(1e-12);
    let w = (z / diagonal).to_kind(Kind::Float);
    Normalized { y: y / &scale, a, w, column_norms: column_norms.squeeze_dim(1), scale }
}

impl ListaPolicy {
    pub fn new(config: ListaConfig, device: Device) -> Self {
        let store = nn::VarStore::new(device);
        let root = store.root();
        let k = config.layers as i64;
        // W^T A ~ (n / m) times a projection, so gamma = m / n starts as a stable step;
        // theta = 0.1 gamma.
        let step = config.measurements as f64 / config.unknowns as f64;
        let log_steps = root.var("log_steps", &[k], nn::Init::Const(step.ln()));
        let log_thresholds = root.var("log_thresholds", &[k], nn::Init::Const((0.1 * step).ln()));
        ListaPolicy { config, store, log_steps, log_thresholds }
    }

    /// Shrinks every entry of x [B, n] by theta except the `keep` of largest magnitude per row.
    fn shrink(&self, x: &Tensor, threshold: &Tensor, keep: i64) -> Tensor {
        let soft = x.sign() * (x.abs() - threshold).relu();
        if keep == 0 {
            return soft;
        }
        let cutoff = x.abs().topk(keep, 1, true, true).0.narrow(1, keep - 1, 1).detach();
        let passed = x.abs().ge_tensor(&cutoff);
        x.where_self(&passed, &soft)
    }

    /// The unrolled estimate for normalized instances (differentiable).
    fn unroll(&self, instance: &Normalized) -> Tensor {
        let (b, n) = (instance.a.size()[0], instance.a.size()[2]);
        let wt = instance.w.transpose(1, 2);
        let mut x = Tensor::zeros([b, n], (Kind::Float, instance.a.device()));
        for layer in 0..self.config.layers {
            let residual = instance.a.matmul(&x.unsqueeze(2)).squeeze_dim(2) - &instance.y;
            let gradient = wt.matmul(&residual.unsqueeze(2)).squeeze_dim(2);
            let step = self.log_steps.get(layer as i64).exp();
            let threshold = self.log_thresholds.get(layer as i64).exp();
            let share = ((layer + 1) as f64 * self.config.support_step).min(self.config.support_max);
            let keep = (share * n as f64).floor() as i64;
            x = self.shrink(&(&x - step * gradient), &threshold, keep);
        }
        x
    }

    /// Estimates x [B, n] for A [B, m, n] and y [B, m] (float tensors, any scale).
    pub fn estimate_batch(&self, a: &Tensor, y: &Tensor) -> Tensor {
        let device = self.store.device();
        let instance = normalize(&a.to_device(device).to_kind(Kind::Float), &y.to_device(device).to_kind(Kind::Float));
        let z = self.unroll(&instance);
        z * &instance.scale / &instance.column_norms
    }

    /// The estimate for one instance.
    pub fn estimate(&self, a: &Matrix, y: &[f64]) -> Vec<f64> {
        let values: Vec<f64> = a.iter().copied().collect();
        let at = Tensor::from_slice(&values).view([1, a.nrows() as i64, a.ncols() as i64]);
        let yt = Tensor::from_slice(y).view([1, a.nrows() as i64]);
        let x = tch::no_grad(|| self.estimate_batch(&at, &yt));
        Vec::<f64>::try_from(x.to_kind(Kind::Double).to_device(Device::Cpu).flatten(0, -1)).expect("f64")
    }

    /// Mean normalized squared error on a batch with known x [B, n].
    fn nmse(&self, a: &Tensor, y: &Tensor, x: &Tensor) -> Tensor {
        let estimate = self.estimate_batch(a, y);
        ((estimate - x).square().sum_dim_intlist(1, false, Kind::Float)
            / x.square().sum_dim_intlist(1, false, Kind::Float).clamp_min(1e-12))
        .mean(Kind::Float)
    }

    /// Trains a fresh policy on the NMSE of fresh Gaussian batches; returns it with the training
    /// curve (`supervised::train`: the mean NMSE in dB over each tenth).
    pub fn train(
        config: ListaConfig,
        training: &ListaTraining,
        device: Device,
        hooks: &crate::hooks::RunHooks,
    ) -> Result<(ListaPolicy, Vec<(usize, f64)>)> {
        let policy = ListaPolicy::new(config, device);
        let run = crate::supervised::LoopConfig::new(training.steps, training.learning_rate, training.seed);
        let curve = crate::supervised::train(&mut NmseTrainer { policy: &policy, training, device }, run, hooks)?;
        Ok((policy, curve))
    }
}

/// LISTA's step: the NMSE of a fresh batch of Gaussian instances.
struct NmseTrainer<'a> {
    policy: &'a ListaPolicy,
    training: &'a ListaTraining,
    device: Device,
}

impl crate::supervised::PolicyTrainer for NmseTrainer<'_> {
    fn store(&self) -> &nn::VarStore {
        &self.policy.store
    }

    fn step(&mut self, _step: usize, rng: &mut ChaCha8Rng) -> (Tensor, f64) {
        let t = self.training;
        let (a, y, x) = gaussian_batch(rng, t.batch, &self.policy.config, t.min_sparsity, t.max_sparsity);
        let loss = self.policy.nmse(&a.to_device(self.device), &y.to_device(self.device), &x.to_device(self.device));
        let nmse_db = 10.0 * loss.double_value(&[]).log10();
        (loss, nmse_db)
    }

    fn describe(&self, nmse_db: f64) -> String {
        format!("NMSE {nmse_db:.2} dB")
    }
}

/// `count` seeded Gaussian instances: A [B, m, n], y [B, m], x [B, n] (float, CPU).
pub fn gaussian_batch(
    rng: &mut ChaCha8Rng,
    count: usize,
    config: &ListaConfig,
    min_sparsity: usize,
    max_sparsity: usize,
) -> (Tensor, Tensor, Tensor) {
    let (m, n) = (config.measurements, config.unknowns);
    let scale = 1.0 / (m as f64).sqrt();
    let a: Vec<f32> = (0..count * m * n).map(|_| (standard_normal(rng) * scale) as f32).collect();
    let mut x = vec![0.0f32; count * n];
    for row in x.chunks_mut(n) {
        let k = rng.gen_range(min_sparsity..=max_sparsity.max(min_sparsity)).min(n);
        for index in rand::seq::index::sample(rng, n, k) {
            row[index] = standard_normal(rng) as f32;
        }
    }
    let a = Tensor::from_slice(&a).view([count as i64, m as i64, n as i64]);
    let x = Tensor::from_slice(&x).view([count as i64, n as i64]);
    let y = a.matmul(&x.unsqueeze(2)).squeeze_dim(2);
    (a, y, x)
}

/// The model registry's loader for `compressive_sensing` manifests.
pub fn load(manifest: &Manifest, dir: &Path) -> Result<LoadedPolicy> {
    let config: ListaConfig = serde_json::from_value(manifest.architecture.clone()).context("architecture")?;
    let mut policy = ListaPolicy::new(config, Device::Cpu);
    policy.store.load(dir.join(WEIGHTS_FILE)).context("weights do not match the architecture")?;
    Ok(Box::new(Mutex::new(policy)))
}

impl ListaPolicy {
    /// The LISTA policy on fresh Gaussian instances of its shape, per k in 5, 10, .., 30: the raw
    /// estimate's mean normalized error (dB), and the share of instances recovered (relative error
    /// < 1e-3) after the least-squares refit on its k largest entries.
    pub fn validate(&self, per_k: usize, seed: u64) -> serde_json::Value {
        use crate::problems::cs::recovery::{gaussian_instance, least_squares, relative_error, top_k};
        let (m, n) = (self.config.measurements, self.config.unknowns);
        let rows: Vec<serde_json::Value> = (1..=6)
            .map(|step| 5 * step)
            .filter(|&k| k < m)
            .map(|k| {
                let (mut nmse, mut recovered) = (0.0, 0usize);
                for i in 0..per_k {
                    let (a, x, y) = gaussian_instance(m, n, k, seed.wrapping_mul(7_919).wrapping_add((k * 10_000 + i) as u64));
                    let estimate = self.estimate(&a, &y);
                    nmse += relative_error(&estimate, &x).powi(2);
                    let support = top_k(&estimate, k);
                    let (values, _) = least_squares(&a, &y, &support);
                    let mut refit = vec![0.0; n];
                    for (s, v) in support.iter().zip(values) {
                        refit[*s] = v;
                    }
                    recovered += usize::from(relative_error(&refit, &x) < 1e-3);
                }
                serde_json::json!({"k": k, "nmse_db": 10.0 * (nmse / per_k as f64).log10(), "recovered_after_refit": recovered as f64 / per_k as f64})
            })
            .collect();
        serde_json::json!(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn a_short_training_run_beats_its_ista_start_and_the_estimate_is_scale_invariant() {
        let config = ListaConfig { layers: 8, ..ListaConfig::new(20, 40) };
        let training = ListaTraining { steps: 150, batch: 32, min_sparsity: 2, max_sparsity: 4, ..Default::default() };
        let mut rng = ChaCha8Rng::seed_from_u64(99);
        let (a, y, x) = gaussian_batch(&mut rng, 256, &config, 2, 4);
        let untrained =
            tch::no_grad(|| ListaPolicy::new(config.clone(), Device::Cpu).nmse(&a, &y, &x)).double_value(&[]);
        let (policy, _) = ListaPolicy::train(config, &training, Device::Cpu, &Default::default()).unwrap();
        let trained = tch::no_grad(|| policy.nmse(&a, &y, &x)).double_value(&[]);
        assert!(trained < 0.5 * untrained, "trained NMSE {trained} vs untrained {untrained}");
        // Scaling y (and so x) by 1000 scales the estimate by 1000.
        let one = Matrix::from_shape_vec(
            (20, 40),
            Vec::<f64>::try_from(a.get(0).to_kind(Kind::Double).flatten(0, -1)).unwrap(),
        )
        .unwrap();
        let y0 = Vec::<f64>::try_from(y.get(0).to_kind(Kind::Double)).unwrap();
        let big: Vec<f64> = y0.iter().map(|v| v * 1000.0).collect();
        let (small_x, big_x) = (policy.estimate(&one, &y0), policy.estimate(&one, &big));
        for (s, b) in small_x.iter().zip(&big_x) {
            assert!((s * 1000.0 - b).abs() <= 1e-3 * (1.0 + b.abs()), "{s} vs {b}");
        }
    }
}
