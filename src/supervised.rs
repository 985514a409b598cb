//! One training loop for the policy networks the problems ship: the MIMO beamformer, LISTA, the
//! Ising message-passing policy and the tensor-network pair scorer. Each trainer says what one
//! step's loss is, on data it draws from the run's own generator (ChaCha8 from the seed: no
//! shared stream, so concurrent runs stay reproducible); the loop runs Adam (Kingma and Ba 2015)
//! on it, reports progress and the running figure through `RunHooks`, and records the figure's
//! mean over each tenth of the steps as the training curve.

use crate::hooks::RunHooks;
use anyhow::Result;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tch::nn::{self, OptimizerConfig};
use tch::Tensor;

/// What differs between the supervised (and REINFORCE) policy trainers.
pub trait PolicyTrainer {
    /// The weights Adam updates.
    fn store(&self) -> &nn::VarStore;
    /// Step `step`: the loss to minimise, on data drawn from `rng`, and the step's figure (what
    /// the curve records: a sum rate, an NMSE in dB, a gap to greedy).
    fn step(&mut self, step: usize, rng: &mut ChaCha8Rng) -> (Tensor, f64);
    /// The figure as the progress bar shows it.
    fn describe(&self, figure: f64) -> String;
    /// The gradient's norm is clipped to this before each update (None: not clipped).
    fn max_grad_norm(&self) -> Option<f64> {
        None
    }
}

/// The loop's budget, rate and seed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoopConfig {
    /// Optimizer steps.
    pub steps: usize,
    /// Adam's learning rate.
    pub learning_rate: f64,
    /// Seeds the generator the trainer draws its data from.
    pub seed: u64,
}

impl LoopConfig {
    pub fn new(steps: usize, learning_rate: f64, seed: u64) -> Self {
        LoopConfig { steps, learning_rate, seed }
    }
}

/// Trains for `config.steps` steps; returns the curve: (step, mean figure since the previous
/// point) at the end of each tenth of the steps (each step when there are fewer than ten).
pub fn train(trainer: &mut dyn PolicyTrainer, config: LoopConfig, hooks: &RunHooks) -> Result<Vec<(usize, f64)>> {
    let mut optimizer = nn::Adam::default().build(trainer.store(), config.learning_rate)?;
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    let (mut curve, mut window) = (Vec::new(), Vec::new());
    for step in 0..config.steps {
        let (loss, figure) = trainer.step(step, &mut rng);
        optimizer.zero_grad();
        loss.backward();
        if let Some(norm) = trainer.max_grad_norm() {
            optimizer.clip_grad_norm(norm);
        }
        optimizer.step();
        window.push(figure);
        hooks.progress(step + 1);
        if ends_a_tenth(step, config.steps) {
            let mean = window.iter().sum::<f64>() / window.len() as f64;
            curve.push((step + 1, mean));
            hooks.figure(step + 1, trainer.describe(mean));
            window.clear();
        }
    }
    Ok(curve)
}

/// Whether step `step` (0-based) of `steps` is the last of a tenth of them.
fn ends_a_tenth(step: usize, steps: usize) -> bool {
    (step + 1) * 10 / steps > step * 10 / steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use tch::{Device, Kind};

    /// Fits y = 3x by least squares on draws from the run's generator.
    struct Line {
        store: nn::VarStore,
        slope: Tensor,
    }

    impl PolicyTrainer for Line {
        fn store(&self) -> &nn::VarStore {
            &self.store
        }
        fn step(&mut self, _step: usize, rng: &mut ChaCha8Rng) -> (Tensor, f64) {
            use rand::Rng;
            let x: Vec<f32> = (0..16).map(|_| rng.gen_range(-1.0..1.0)).collect();
            let x = Tensor::from_slice(&x);
            let loss = (&self.slope * &x - &x * 3.0).square().mean(Kind::Float);
            let value = loss.double_value(&[]);
            (loss, value)
        }
        fn describe(&self, figure: f64) -> String {
            format!("squared error {figure:.4}")
        }
    }

    fn line() -> Line {
        let store = nn::VarStore::new(Device::Cpu);
        let slope = store.root().zeros("slope", &[1]);
        Line { store, slope }
    }

    #[test]
    fn the_loop_fits_reports_ten_curve_points_and_repeats_with_its_seed() {
        let config = LoopConfig { steps: 25, learning_rate: 0.1, seed: 4 };
        let progress = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let seen = progress.clone();
        let hooks = RunHooks {
            on_progress: Some(std::sync::Arc::new(move |step| seen.store(step, std::sync::atomic::Ordering::SeqCst))),
            ..Default::default()
        };
        let mut first = line();
        let curve = train(&mut first, config, &hooks).unwrap();
        assert_eq!(curve.iter().map(|p| p.0).collect::<Vec<_>>(), vec![3, 5, 8, 10, 13, 15, 18, 20, 23, 25]);
        assert_eq!(progress.load(std::sync::atomic::Ordering::SeqCst), 25);
        assert!(curve[9].1 < curve[0].1 / 5.0, "the error falls: {curve:?}");
        let mut second = line();
        assert_eq!(train(&mut second, config, &Default::default()).unwrap(), curve, "same seed, same run");
        let short = LoopConfig { steps: 3, ..config };
        assert_eq!(train(&mut line(), short, &Default::default()).unwrap().len(), 3, "every step below ten");
    }
}
