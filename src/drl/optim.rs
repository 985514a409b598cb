//! Adam (Kingma & Ba 2015, Algorithm 1) and RMSprop (Hinton 2012), written over tch tensors so
//! that their moments are ours to save: a checkpoint holds the step counts and moment tensors,
//! and a restored optimizer continues exactly where it stopped (tch's optimizers keep them inside
//! libtorch, out of reach). The update follows `torch.optim.Adam`/`RMSprop` (single-tensor path,
//! no weight decay); the learning rate can change between steps (`set_learning_rate`).

use super::state::StateDict;
use anyhow::{ensure, Result};
use tch::nn::OptimizerConfig;
use tch::{nn, Kind, Tensor};

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rule {
    /// beta1, beta2, eps.
    Adam { beta1: f64, beta2: f64, eps: f64 },
    /// alpha (the squared-gradient average's decay), eps.
    RmsProp { alpha: f64, eps: f64 },
}

impl Rule {
    /// PyTorch's Adam defaults.
    pub fn adam() -> Self {
        Rule::Adam { beta1: 0.9, beta2: 0.999, eps: 1e-8 }
    }
}

pub struct Optimizer {
    rule: Rule,
    learning_rate: f64,
    parameters: Vec<Tensor>,
    /// Adam's first moments (unused by RMSprop).
    first: Vec<Tensor>,
    /// Adam's second moments, RMSprop's squared-gradient averages.
    second: Vec<Tensor>,
    /// Steps taken per parameter (a parameter without a gradient is skipped, as PyTorch does).
    steps: Vec<i64>,
    /// libtorch's `zero_grad` sets gradients to none, which the step then skips, as PyTorch's
    /// optimizers do; tch exposes that only through its own optimizer, kept here for it alone.
    gradient_reset: nn::Optimizer,
}

impl Optimizer {
    /// Over the trainable variables of `store`, in their creation order.
    pub fn new(store: &nn::VarStore, rule: Rule, learning_rate: f64) -> Self {
        let parameters = store.trainable_variables();
        let zeros = || parameters.iter().map(|p| tch::no_grad(|| p.zeros_like())).collect::<Vec<_>>();
        let (first, second) = (zeros(), zeros());
        let gradient_reset = nn::Sgd::default().build(store, 0.0).expect("a gradient reset over the store");
        Optimizer { rule, learning_rate, steps: vec![0; parameters.len()], parameters, first, second, gradient_reset }
    }

    pub fn adam(store: &nn::VarStore, learning_rate: f64) -> Self {
        Self::new(store, Rule::adam(), learning_rate)
    }

    pub fn set_learning_rate(&mut self, learning_rate: f64) {
        self.learning_rate = learning_rate;
    }

    pub fn learning_rate(&self) -> f64 {
        self.learning_rate
    }

    pub fn zero_grad(&mut self) {
        self.gradient_reset.zero_grad();
    }

    /// Scales the gradients so that their global L2 norm is at most `max` (as
    /// `torch.nn.utils.clip_grad_norm_`).
    pub fn clip_grad_norm(&self, max: f64) {
        tch::no_grad(|| {
            let grads: Vec<Tensor> = self.parameters.iter().map(Tensor::grad).filter(Tensor::defined).collect();
            if grads.is_empty() {
                return;
            }
            let norms: Vec<Tensor> = grads.iter().map(|g| g.norm()).collect();
            let total = Tensor::stack(&norms, 0).norm().double_value(&[]);
            let coefficient = max / (total + 1e-6);
            if coefficient < 1.0 {
                for mut g in grads {
                    let _ = g.g_mul_scalar_(coefficient);
                }
            }
        })
    }

    pub fn step(&mut self) {
        let lr = self.learning_rate;
        tch::no_grad(|| {
            for i in 0..self.parameters.len() {
                let grad = self.parameters[i].grad();
                if !grad.defined() {
                    continue;
                }
                self.steps[i] += 1;
                let t = self.steps[i] as i32;
                match self.rule {
                    Rule::Adam { beta1, beta2, eps } => {
                        // m <- b1 m + (1 - b1) g;  v <- b2 v + (1 - b2) g^2
                        let _ = self.first[i].lerp_(&grad, 1.0 - beta1);
                        let _ = self.second[i].g_mul_scalar_(beta2).g_add_(&(grad.square() * (1.0 - beta2)));
                        // theta <- theta - lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
                        let step_size = lr / (1.0 - beta1.powi(t));
                        let denominator = self.second[i].sqrt() / (1.0 - beta2.powi(t)).sqrt() + eps;
                        let _ = self.parameters[i].g_sub_(&(&self.first[i] / denominator * step_size));
                    }
                    Rule::RmsProp { alpha, eps } => {
                        // s <- alpha s + (1 - alpha) g^2;  theta <- theta - lr g / (sqrt(s) + eps)
                        let _ = self.second[i].g_mul_scalar_(alpha).g_add_(&(grad.square() * (1.0 - alpha)));
                        let denominator = self.second[i].sqrt() + eps;
                        let _ = self.parameters[i].g_sub_(&(grad / denominator * lr));
                    }
                }
            }
        })
    }

    /// Zero the gradients, backpropagate `loss`, clip the global norm when asked, step.
    pub fn minimize(&mut self, loss: &Tensor, max_grad_norm: Option<f64>) {
        self.zero_grad();
        loss.backward();
        if let Some(max) = max_grad_norm {
            self.clip_grad_norm(max);
        }
        self.step();
    }

    /// Moments under `prefix.first.i` / `prefix.second.i`, step counts and the learning rate as JSON.
    pub fn save(&self, prefix: &str, state: &mut StateDict) {
        for (i, (m, v)) in self.first.iter().zip(&self.second).enumerate() {
            state.put_tensor(format!("{prefix}.first.{i}"), m);
            state.put_tensor(format!("{prefix}.second.{i}"), v);
        }
        state.put_json(
            format!("{prefix}.optimizer"),
            serde_json::json!({"steps": self.steps, "learning_rate": self.learning_rate}),
        );
    }

    pub fn load(&mut self, prefix: &str, state: &StateDict) -> Result<()> {
        let saved = state.json(&format!("{prefix}.optimizer"))?;
        let steps: Vec<i64> = serde_json::from_value(saved["steps"].clone())?;
        ensure!(
            steps.len() == self.parameters.len(),
            "{prefix}: {} moments saved, {} parameters",
            steps.len(),
            self.parameters.len()
        );
        self.steps = steps;
        self.learning_rate = saved["learning_rate"].as_f64().unwrap_or(self.learning_rate);
        for i in 0..self.parameters.len() {
            tch::no_grad(|| -> Result<()> {
                self.first[i].copy_(&state.tensor(&format!("{prefix}.first.{i}"))?.to_kind(Kind::Float));
                self.second[i].copy_(&state.tensor(&format!("{prefix}.second.{i}"))?.to_kind(Kind::Float));
                Ok(())
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tch::{Device, Kind};

    /// One parameter vector, loss sum((theta - target)^2), `steps` steps; returns theta.
    fn descend(rule: Rule, torch_rule: impl OptimizerConfig + Clone, steps: usize) -> (Vec<f32>, Vec<f32>) {
        let run = |ours: bool| {
            let store = nn::VarStore::new(Device::Cpu);
            let theta = store.root().var_copy("theta", &Tensor::from_slice(&[1.0f32, -2.0, 0.5]));
            let target = Tensor::from_slice(&[0.3f32, 0.1, -0.7]);
            let loss = |theta: &Tensor| (theta - &target).square().sum(Kind::Float) * 3.0;
            if ours {
                let mut optimizer = Optimizer::new(&store, rule, 0.05);
                for _ in 0..steps {
                    optimizer.minimize(&loss(&theta), None);
                }
            } else {
                let mut optimizer = torch_rule.clone().build(&store, 0.05).unwrap();
                for _ in 0..steps {
                    optimizer.backward_step(&loss(&theta));
                }
            }
            Vec::<f32>::try_from(theta.detach()).unwrap()
        };
        (run(true), run(false))
    }

    #[test]
    fn adam_and_rmsprop_follow_libtorch_step_for_step() {
        let (ours, torch) = descend(Rule::adam(), nn::Adam::default(), 25);
        for (a, b) in ours.iter().zip(&torch) {
            assert!((a - b).abs() < 1e-5, "adam {ours:?} vs {torch:?}");
        }
        let rule = Rule::RmsProp { alpha: 0.99, eps: 1e-5 };
        let (ours, torch) = descend(rule, nn::RmsProp { alpha: 0.99, eps: 1e-5, ..Default::default() }, 25);
        for (a, b) in ours.iter().zip(&torch) {
            assert!((a - b).abs() < 1e-5, "rmsprop {ours:?} vs {torch:?}");
        }
    }

    #[test]
    fn a_restored_optimizer_continues_exactly() {
        let store = nn::VarStore::new(Device::Cpu);
        let theta = store.root().var_copy("theta", &Tensor::from_slice(&[1.0f32, -2.0]));
        let loss = |theta: &Tensor| (theta * theta * theta).sum(Kind::Float).abs();
        let mut optimizer = Optimizer::adam(&store, 0.01);
        for _ in 0..5 {
            optimizer.minimize(&loss(&theta), None);
        }
        let mut state = StateDict::default();
        optimizer.save("adam", &mut state);
        let before = theta.detach().copy();
        for _ in 0..5 {
            optimizer.minimize(&loss(&theta), None);
        }
        let continued = theta.detach().copy();
        tch::no_grad(|| theta.detach().copy_(&before));
        let mut restored = Optimizer::adam(&store, 0.5);
        restored.load("adam", &state).unwrap();
        assert_eq!(restored.learning_rate(), 0.01);
        for _ in 0..5 {
            restored.minimize(&loss(&theta), None);
        }
        assert!(theta.detach().equal(&continued));
    }
}
