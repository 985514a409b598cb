//! Per-run random streams for tensors. libtorch's generator is global to the process, so two runs
//! in one process would interleave their draws, and its position cannot be saved; every draw of a
//! training run (exploration noise, sampled actions, minibatch orders) comes instead from the
//! run's own ChaCha stream, whose position a checkpoint records. Weight initialization still uses
//! libtorch's initializers, seeded and run under one process-wide lock (`seeded`), so that a
//! build is a function of its seed even while other runs train.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use serde::{Deserialize, Serialize};
use tch::{Device, Kind, Tensor};

pub use crate::seed::seeded;

/// A run's tensor generator (serializable: a checkpoint stores its exact position).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TensorRng {
    rng: ChaCha8Rng,
}

impl TensorRng {
    pub fn new(seed: u64) -> Self {
        TensorRng { rng: ChaCha8Rng::seed_from_u64(seed) }
    }

    /// The underlying generator, for draws on the CPU side.
    pub fn rng(&mut self) -> &mut ChaCha8Rng {
        &mut self.rng
    }

    /// Standard normal f32 tensor of `shape`.
    pub fn normal(&mut self, shape: &[i64], device: Device) -> Tensor {
        let count = shape.iter().product::<i64>().max(0) as usize;
        let values: Vec<f32> = (0..count).map(|_| self.rng.sample(StandardNormal)).collect();
        Tensor::from_slice(&values).view(shape).to(device)
    }

    /// Standard normal noise shaped and placed like `like` (f32).
    pub fn normal_like(&mut self, like: &Tensor) -> Tensor {
        self.normal(&like.size(), like.device())
    }

    /// Uniform [0, 1) f32 noise shaped and placed like `like`.
    pub fn uniform_like(&mut self, like: &Tensor) -> Tensor {
        let shape = like.size();
        let count = shape.iter().product::<i64>().max(0) as usize;
        let values: Vec<f32> = (0..count).map(|_| self.rng.gen::<f32>()).collect();
        Tensor::from_slice(&values).view(shape.as_slice()).to(like.device())
    }

    /// A uniformly random permutation of 0..n (Int64).
    pub fn permutation(&mut self, n: i64, device: Device) -> Tensor {
        let mut order: Vec<i64> = (0..n).collect();
        rand::seq::SliceRandom::shuffle(order.as_mut_slice(), &mut self.rng);
        Tensor::from_slice(&order).to(device)
    }

    /// One index per row of `probabilities` [B, K] (rows summing to 1), by inverting the CDF at a
    /// uniform draw; Int64 [B].
    pub fn categorical(&mut self, probabilities: &Tensor) -> Tensor {
        let rows = probabilities.size()[0];
        let last = probabilities.size()[1] - 1;
        let u = self.uniform_like(&Tensor::zeros([rows, 1], (Kind::Float, probabilities.device())));
        let cdf = probabilities.to_kind(Kind::Float).cumsum(1, Kind::Float);
        cdf.lt_tensor(&u).sum_dim_intlist(1, false, Kind::Int64).clamp_max(last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_draws_the_same_tensors_and_a_restored_stream_continues_it() {
        let mut a = TensorRng::new(7);
        let first = a.normal(&[3, 4], Device::Cpu);
        let saved = serde_json::to_string(&a).unwrap();
        let next = a.normal(&[5], Device::Cpu);
        let mut b = TensorRng::new(7);
        assert!(b.normal(&[3, 4], Device::Cpu).equal(&first));
        let mut restored: TensorRng = serde_json::from_str(&saved).unwrap();
        assert!(restored.normal(&[5], Device::Cpu).equal(&next));
    }

    #[test]
    fn categorical_draws_follow_the_probabilities() {
        let mut rng = TensorRng::new(1);
        let probabilities = Tensor::from_slice(&[0.1f32, 0.0, 0.9]).view([1, 3]).repeat([4000, 1]);
        let draws: Vec<i64> = rng.categorical(&probabilities).try_into().unwrap();
        let share = |k| draws.iter().filter(|&&d| d == k).count() as f64 / draws.len() as f64;
        assert_eq!(share(1), 0.0);
        assert!((share(0) - 0.1).abs() < 0.02 && (share(2) - 0.9).abs() < 0.02, "{} {}", share(0), share(2));
    }

    #[test]
    fn a_permutation_holds_every_index_once() {
        let mut order: Vec<i64> = TensorRng::new(3).permutation(50, Device::Cpu).try_into().unwrap();
        order.sort();
        assert_eq!(order, (0..50).collect::<Vec<_>>());
    }
}
