//! Pieces every agent shares, written once: target-network updates, generalized advantage
//! estimation, running observation normalization (optimizers: `optim`).

use tch::{nn, Tensor};

/// Polyak averaging theta' <- tau theta + (1 - tau) theta' over variables with equal names
/// (tau = 1: hard copy, exactly: libtorch's lerp computes end - (end - start)(1 - w) for w >= 0.5).
pub fn soft_update(target: &mut nn::VarStore, online: &nn::VarStore, tau: f64) {
    let online = online.variables();
    tch::no_grad(|| {
        for (name, mut t) in target.variables() {
            let source = &online[&name];
            let _ = t.lerp_(source, tau);
        }
    });
}

/// GAE (Schulman et al. 2016, eq. 11-16) over a rollout of T steps x B envs, time-major:
/// delta_t = r_t + gamma V(s_{t+1}) (1 - terminated_t) - V(s_t),
/// A_t = delta_t + gamma lambda (1 - done_t) A_{t+1}.
/// `next_values[t]` is V of the true next state (the final observation when an episode was
/// truncated), so truncation still bootstraps while `done` stops the recursion.
#[allow(clippy::too_many_arguments)]
pub fn gae(
    rewards: &[f32],
    values: &[f32],
    next_values: &[f32],
    terminated: &[bool],
    done: &[bool],
    envs: usize,
    gamma: f32,
    lambda: f32,
) -> (Vec<f32>, Vec<f32>) {
    let steps = rewards.len() / envs;
    let mut advantages = vec![0.0f32; rewards.len()];
    let mut next_advantage = vec![0.0f32; envs];
    for t in (0..steps).rev() {
        for e in 0..envs {
            let i = t * envs + e;
            let bootstrap = if terminated[i] { 0.0 } else { gamma * next_values[i] };
            let delta = rewards[i] + bootstrap - values[i];
            let carry = if done[i] { 0.0 } else { gamma * lambda * next_advantage[e] };
            advantages[i] = delta + carry;
            next_advantage[e] = advantages[i];
        }
    }
    let returns = advantages.iter().zip(values).map(|(a, v)| a + v).collect();
    (advantages, returns)
}

/// The share of the returns' variance the value estimates explain, 1 - Var[R - V] / Var[R]
/// (population variances, in f64), as SB3 logs it for its on-policy algorithms: 1 is a perfect
/// critic, 0 one no better than the returns' mean, below 0 worse; not finite when the returns do
/// not vary. A 0-d tensor on the inputs' device, so that the caller chooses when to read it.
pub fn explained_variance(values: &Tensor, returns: &Tensor) -> Tensor {
    tch::no_grad(|| {
        let returns = returns.to_kind(tch::Kind::Double);
        let errors = &returns - values.to_kind(tch::Kind::Double);
        1.0 - errors.var(false) / returns.var(false)
    })
}

/// Running mean and variance (Chan et al. parallel update) for observation normalization.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct RunningNorm {
    pub mean: Vec<f64>,
    pub var: Vec<f64>,
    pub count: f64,
}

impl RunningNorm {
    pub fn new(dim: usize) -> Self {
        RunningNorm { mean: vec![0.0; dim], var: vec![1.0; dim], count: 1e-4 }
    }

    pub fn update(&mut self, batch: &[f32]) {
        let dim = self.mean.len();
        let n = (batch.len() / dim) as f64;
        if n == 0.0 {
            return;
        }
        for d in 0..dim {
            let column = batch.iter().skip(d).step_by(dim).map(|&x| f64::from(x));
            let batch_mean = column.clone().sum::<f64>() / n;
            let batch_var = column.map(|x| (x - batch_mean).powi(2)).sum::<f64>() / n;
            let delta = batch_mean - self.mean[d];
            let total = self.count + n;
            self.mean[d] += delta * n / total;
            self.var[d] = (self.var[d] * self.count + batch_var * n + delta * delta * self.count * n / total) / total;
        }
        self.count += n;
    }

    /// (x - mean) / sqrt(var + 1e-8), clipped to +-10, on a [B, dim] tensor.
    pub fn normalize_tensor(&self, batch: &Tensor) -> Tensor {
        let options = (tch::Kind::Float, batch.device());
        let mean = Tensor::from_slice(&self.mean).to_kind(options.0).to(options.1);
        let std = (Tensor::from_slice(&self.var).to_kind(options.0).to(options.1) + 1e-8).sqrt();
        ((batch - mean) / std).clamp(-10.0, 10.0)
    }

    pub fn normalize(&self, batch: &[f32]) -> Vec<f32> {
        let dim = self.mean.len();
        batch
            .iter()
            .enumerate()
            .map(|(k, &x)| {
                ((f64::from(x) - self.mean[k % dim]) / (self.var[k % dim] + 1e-8).sqrt()).clamp(-10.0, 10.0) as f32
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explained_variance_is_one_for_exact_values_zero_for_the_mean_and_not_finite_for_constant_returns() {
        let returns = Tensor::from_slice(&[1.0f32, 3.0, -2.0, 6.0]);
        let of = |values: &[f32], returns: &Tensor| {
            explained_variance(&Tensor::from_slice(values), returns).double_value(&[])
        };
        assert_eq!(of(&[1.0, 3.0, -2.0, 6.0], &returns), 1.0);
        assert!(of(&[2.0; 4], &returns).abs() < 1e-12, "the returns' mean explains nothing");
        // Errors of 1, -1, 1, -1 around returns of variance 8.5 (mean 2): 1 - 1 / 8.5.
        let values = [0.0f32, 4.0, -3.0, 7.0];
        assert!((of(&values, &returns) - (1.0 - 1.0 / 8.5)).abs() < 1e-12);
        assert!(!of(&values, &Tensor::from_slice(&[2.0f32; 4])).is_finite());
    }

    #[test]
    fn a_soft_update_with_tau_one_copies_exactly_and_a_small_tau_moves_a_fraction() {
        let stores = || {
            let (online, target) = (nn::VarStore::new(tch::Device::Cpu), nn::VarStore::new(tch::Device::Cpu));
            let values = Tensor::from_slice(&[0.1f32, -3.7, 1e-3, 12.5]);
            let _ = online.root().var_copy("w", &values);
            let _ = target.root().var_copy("w", &(values.cos() * 7.3));
            (online, target)
        };
        let weight = |store: &nn::VarStore| store.variables()["w"].detach();
        let (online, mut target) = stores();
        soft_update(&mut target, &online, 1.0);
        assert!(weight(&target).equal(&weight(&online)), "{} vs {}", weight(&target), weight(&online));
        let (online, mut target) = stores();
        let before = weight(&target).copy();
        soft_update(&mut target, &online, 0.005);
        let expected = &before + (weight(&online) - &before) * 0.005;
        assert!(weight(&target).allclose(&expected, 1e-6, 1e-7, false));
        assert!(!weight(&target).allclose(&before, 1e-6, 1e-7, false));
    }

    #[test]
    fn gae_with_lambda_one_is_the_discounted_return_minus_value_and_stops_at_termination() {
        // One env, three steps, terminated at the last.
        let (adv, ret) = gae(
            &[1.0, 1.0, 1.0],
            &[0.5, 0.5, 0.5],
            &[0.5, 0.5, 9.0],
            &[false, false, true],
            &[false, false, true],
            1,
            0.9,
            1.0,
        );
        let expected_return = [1.0 + 0.9 + 0.81, 1.0 + 0.9, 1.0];
        for t in 0..3 {
            assert!((ret[t] - expected_return[t]).abs() < 1e-5, "t={t}: {ret:?}");
            assert!((adv[t] - (expected_return[t] - 0.5)).abs() < 1e-5);
        }
    }

    #[test]
    fn truncation_bootstraps_from_the_final_observation_value() {
        let (adv, _) = gae(&[1.0], &[0.0], &[2.0], &[false], &[true], 1, 0.5, 0.95);
        assert!((adv[0] - 2.0).abs() < 1e-6);
    }

    #[test]
    fn tensor_and_slice_normalization_agree() {
        let mut norm = RunningNorm::new(2);
        norm.update(&[1.0, 10.0, 3.0, -10.0, 5.0, 30.0]);
        let batch = [2.0f32, 0.0, 100.0, -100.0];
        let expected = norm.normalize(&batch);
        let got: Vec<f32> =
            norm.normalize_tensor(&Tensor::from_slice(&batch).view([2, 2])).flatten(0, -1).try_into().unwrap();
        for (a, b) in expected.iter().zip(&got) {
            assert!((a - b).abs() < 1e-5, "{expected:?} vs {got:?}");
        }
        assert_eq!(got[2], 10.0, "clipped");
    }

    #[test]
    fn running_norm_converges_to_the_data_moments() {
        let mut norm = RunningNorm::new(1);
        let data: Vec<f32> = (0..1000).map(|i| (i % 10) as f32).collect();
        for chunk in data.chunks(100) {
            norm.update(chunk);
        }
        assert!((norm.mean[0] - 4.5).abs() < 1e-3 && (norm.var[0] - 8.25).abs() < 1e-2, "{norm:?}");
    }
}
