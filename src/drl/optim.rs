//! Adam (Kingma & Ba 2015, Algorithm 1) and RMSprop (Hinton 2012), written over tch tensors so
//! that their moments are ours to save: a checkpoint holds the step counts and moment tensors,
//! and a restored optimizer continues exactly where it stopped (tch's optimizers keep them inside
//! libtorch, out of reach). The update follows `torch.optim.Adam`/`RMSprop` (no weight decay);
//! the learning rate can change between steps (`set_learning_rate`).
//!
//! The parameters of a store live in one contiguous buffer, each variable a view of its slice,
//! and so do the moments: a step is then eight whole-buffer operations instead of eight per
//! tensor, which is what torch's `foreach`/`fused` Adam buys and what tch 0.24 does not bind.
//! On small networks the per-tensor passes cost as much as the matrix products (a TD3 profile
//! put a quarter of its time in them; `docs/src/algorithms/simulators.md`). On the CPU the step
//! is one pass over the buffers, reading each gradient where autograd left it (torch's `fused`
//! Adam, written here).

use super::state::StateDict;
use anyhow::{ensure, Result};
use tch::nn::OptimizerConfig;
use tch::{nn, Device, Kind, Tensor};

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

    /// One step of the rule on `parameter` with moments `first`, `second`, all of one shape;
    /// `t` is the step number (from 1).
    fn apply(
        self,
        learning_rate: f64,
        t: i32,
        parameter: &mut Tensor,
        first: &mut Tensor,
        second: &mut Tensor,
        grad: &Tensor,
    ) {
        match self {
            Rule::Adam { beta1, beta2, eps } => {
                // m <- b1 m + (1 - b1) g;  v <- b2 v + (1 - b2) g^2
                let _ = first.lerp_(grad, 1.0 - beta1);
                let _ = second.lerp_(&grad.square(), 1.0 - beta2);
                if t % FLUSH_EVERY == 0 {
                    flush_subnormals(first);
                    flush_subnormals(second);
                }
                // theta <- theta - lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
                let step_size = learning_rate / (1.0 - beta1.powi(t));
                if step_size != 0.0 {
                    let mut denominator = second.sqrt();
                    let _ = denominator.g_div_scalar_((1.0 - beta2.powi(t)).sqrt());
                    let _ = denominator.g_add_scalar_(eps);
                    let _ = denominator.g_mul_scalar_(-1.0 / step_size);
                    let _ = parameter.addcdiv_(first, &denominator);
                }
            }
            Rule::RmsProp { alpha, eps } => {
                // s <- alpha s + (1 - alpha) g^2;  theta <- theta - lr g / (sqrt(s) + eps)
                let _ = second.lerp_(&grad.square(), 1.0 - alpha);
                if t % FLUSH_EVERY == 0 {
                    flush_subnormals(second);
                }
                if learning_rate != 0.0 {
                    let mut denominator = second.sqrt();
                    let _ = denominator.g_add_scalar_(eps);
                    let _ = denominator.g_mul_scalar_(-1.0 / learning_rate);
                    let _ = parameter.addcdiv_(grad, &denominator);
                }
            }
        }
    }

    /// `apply` in one pass over CPU memory, element by element in f32 as torch's kernels
    /// compute it, subnormal moments flushed at every step (free here): the eight whole-buffer
    /// operations of `apply` plus the gradients' concatenation read and write the buffers nine
    /// times (the simulators report's one-thread profile counts the step's share).
    fn apply_in_one_pass(
        self,
        learning_rate: f64,
        t: i32,
        parameter: &mut [f32],
        first: &mut [f32],
        second: &mut [f32],
        grad: &[f32],
    ) {
        let flush = |x: f32| if x.abs() < f32::MIN_POSITIVE { 0.0 } else { x };
        // Indexed over slices cut to one length, so that the compiler vectorizes the loops.
        let n = grad.len();
        let (parameter, first, second) = (&mut parameter[..n], &mut first[..n], &mut second[..n]);
        match self {
            Rule::Adam { beta1, beta2, eps } => {
                let (w1, w2, eps) = ((1.0 - beta1) as f32, (1.0 - beta2) as f32, eps as f32);
                let step_size = (learning_rate / (1.0 - beta1.powi(t))) as f32;
                let correction = (1.0 - beta2.powi(t)).sqrt() as f32;
                for i in 0..n {
                    let g = grad[i];
                    first[i] = flush(first[i] + w1 * (g - first[i]));
                    second[i] = flush(second[i] + w2 * (g * g - second[i]));
                    if step_size != 0.0 {
                        parameter[i] -= step_size * first[i] / (second[i].sqrt() / correction + eps);
                    }
                }
            }
            Rule::RmsProp { alpha, eps } => {
                let (w, eps, lr) = ((1.0 - alpha) as f32, eps as f32, learning_rate as f32);
                for i in 0..n {
                    let g = grad[i];
                    second[i] = flush(second[i] + w * (g * g - second[i]));
                    if lr != 0.0 {
                        parameter[i] -= lr * g / (second[i].sqrt() + eps);
                    }
                }
            }
        }
    }
}

/// `tensor`'s elements as a slice, when it is a contiguous f32 tensor on the CPU.
fn cpu_f32(tensor: &Tensor) -> Option<&[f32]> {
    let fits = tensor.device() == Device::Cpu && tensor.kind() == Kind::Float && tensor.is_contiguous();
    // SAFETY: a contiguous f32 CPU tensor holds numel f32s from data_ptr (its storage offset
    // included); the slice borrows the tensor, and only libtorch, which runs nothing on it while
    // the caller holds the slice, writes that memory.
    fits.then(|| unsafe { std::slice::from_raw_parts(tensor.data_ptr() as *const f32, tensor.numel()) })
}

/// `cpu_f32`, mutable: the `&mut` on the tensor handle stands for its memory (a view of it held
/// elsewhere must not be used while the slice lives).
fn cpu_f32_mut(tensor: &mut Tensor) -> Option<&mut [f32]> {
    let fits = tensor.device() == Device::Cpu && tensor.kind() == Kind::Float && tensor.is_contiguous();
    // SAFETY: as `cpu_f32`, and the caller's exclusive borrow of the handle is the promise that
    // nothing else reads or writes the memory while the slice lives.
    fits.then(|| unsafe { std::slice::from_raw_parts_mut(tensor.data_ptr() as *mut f32, tensor.numel()) })
}

const FLUSH_EVERY: i32 = 16;

/// Sets the moments below f32's smallest normal number to zero. A dead ReLU unit's gradient is
/// exactly zero and its moments decay geometrically into the subnormals, where they stay: 0.9 or
/// 0.999 times the smallest subnormal rounds back to itself. Arithmetic on subnormals takes a
/// microcode path on x86: `addcdiv_` over 250,000 floats takes 39 us on normal numbers and
/// 1,228 us on subnormals (PyTorch 2.11, this project's 2-core machine), and TD3's critic on
/// Pendulum-v1 (seed 0) held 46% of its first moments there after 1,000 updates. A flushed first
/// moment would have moved its parameter by less than 1.2e-38 / eps x the learning rate (1.2e-30
/// x at Adam's eps), and a flushed second moment changes a denominator of at least eps by less
/// than 1.1e-19. A moment takes some 150 steps to decay through the subnormals, so a flush every
/// `FLUSH_EVERY` steps keeps nearly all of them out at a sixteenth of the cost of three passes
/// per step (8% of a TD3 update when run every step).
fn flush_subnormals(moment: &mut Tensor) {
    let _ = moment.masked_fill_(&moment.abs().lt(f64::from(f32::MIN_POSITIVE)), 0.0);
}

/// One contiguous buffer per role, the store's variables views of `parameters`.
struct Flat {
    parameters: Tensor,
    first: Tensor,
    second: Tensor,
    /// Each variable's data address when it was made a view: a variable whose data was replaced
    /// since (a store moved or re-typed) no longer aliases the buffer, and the step falls back
    /// to one tensor at a time for it to still be updated.
    addresses: Vec<usize>,
}

pub struct Optimizer {
    rule: Rule,
    learning_rate: f64,
    parameters: Vec<Tensor>,
    /// Adam's first moments (unused by RMSprop), views of `flat.first` when flat.
    first: Vec<Tensor>,
    /// Adam's second moments, RMSprop's squared-gradient averages.
    second: Vec<Tensor>,
    /// Steps taken per parameter (a parameter without a gradient is skipped, as PyTorch does).
    steps: Vec<i64>,
    flat: Option<Flat>,
    /// libtorch's `zero_grad` sets gradients to none, which the step then skips, as PyTorch's
    /// optimizers do; tch exposes that only through its own optimizer, kept here for it alone.
    gradient_reset: nn::Optimizer,
}

impl Optimizer {
    /// Over the trainable variables of `store`, in their creation order. Float variables on one
    /// device become views of one buffer (their values unchanged).
    pub fn new(store: &nn::VarStore, rule: Rule, learning_rate: f64) -> Self {
        let mut parameters = store.trainable_variables();
        let gradient_reset = nn::Sgd::default().build(store, 0.0).expect("a gradient reset over the store");
        let flat = Self::flatten(&mut parameters);
        let (first, second) = match &flat {
            Some(flat) => (Self::views(&flat.first, &parameters), Self::views(&flat.second, &parameters)),
            None => {
                let zeros = || parameters.iter().map(|p| tch::no_grad(|| p.zeros_like())).collect::<Vec<_>>();
                (zeros(), zeros())
            }
        };
        Optimizer {
            rule,
            learning_rate,
            steps: vec![0; parameters.len()],
            parameters,
            first,
            second,
            flat,
            gradient_reset,
        }
    }

    fn flatten(parameters: &mut [Tensor]) -> Option<Flat> {
        let first = parameters.first()?;
        let (kind, device) = (first.kind(), first.device());
        if parameters.len() < 2 || parameters.iter().any(|p| p.kind() != Kind::Float || p.device() != device) {
            return None;
        }
        let total: i64 = parameters.iter().map(Tensor::numel).sum::<usize>() as i64;
        let buffer = Tensor::zeros([total], (kind, device));
        let views = Self::views(&buffer, parameters);
        tch::no_grad(|| {
            for (parameter, mut view) in parameters.iter_mut().zip(views) {
                view.copy_(parameter);
                parameter.set_data(&view);
            }
        });
        let addresses = parameters.iter().map(|p| p.data_ptr() as usize).collect();
        Some(Flat { first: buffer.zeros_like(), second: buffer.zeros_like(), parameters: buffer, addresses })
    }

    /// Views of consecutive slices of `buffer` shaped as `parameters`.
    fn views(buffer: &Tensor, parameters: &[Tensor]) -> Vec<Tensor> {
        let mut offset = 0;
        parameters
            .iter()
            .map(|p| {
                let n = p.numel() as i64;
                let view = buffer.narrow(0, offset, n).view(p.size().as_slice());
                offset += n;
                view
            })
            .collect()
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

    /// Whole buffers when every parameter has a gradient, has taken as many steps as the others
    /// and still aliases the buffer; else one tensor at a time (same rule, same moments).
    pub fn step(&mut self) {
        let (rule, lr) = (self.rule, self.learning_rate);
        tch::no_grad(|| {
            let grads: Vec<Tensor> = self.parameters.iter().map(Tensor::grad).collect();
            if let Some(flat) = &mut self.flat {
                let aligned = grads.iter().all(Tensor::defined)
                    && self.steps.iter().all(|&s| s == self.steps[0])
                    && self.parameters.iter().zip(&flat.addresses).all(|(p, &a)| p.data_ptr() as usize == a);
                if aligned {
                    self.steps.iter_mut().for_each(|s| *s += 1);
                    let t = self.steps[0] as i32;
                    if !Self::step_in_one_pass(rule, lr, t, flat, &grads) {
                        let grad = Tensor::cat(&grads.iter().map(|g| g.reshape([-1])).collect::<Vec<_>>(), 0);
                        rule.apply(lr, t, &mut flat.parameters, &mut flat.first, &mut flat.second, &grad);
                    }
                    return;
                }
            }
            for (i, grad) in grads.iter().enumerate() {
                if !grad.defined() {
                    continue;
                }
                self.steps[i] += 1;
                let t = self.steps[i] as i32;
                rule.apply(lr, t, &mut self.parameters[i], &mut self.first[i], &mut self.second[i], grad);
            }
        })
    }

    /// The flat step as one pass over CPU memory (`Rule::apply_in_one_pass`), each variable's
    /// gradient read where autograd left it; false (nothing done) off the CPU or for a gradient
    /// that is not a contiguous f32 tensor.
    fn step_in_one_pass(rule: Rule, lr: f64, t: i32, flat: &mut Flat, grads: &[Tensor]) -> bool {
        // The variables and the moments are views of these buffers, untouched by anything else
        // during the step; each gradient is autograd's own tensor, not a view of them.
        let (Some(parameters), Some(first), Some(second)) =
            (cpu_f32_mut(&mut flat.parameters), cpu_f32_mut(&mut flat.first), cpu_f32_mut(&mut flat.second))
        else {
            return false;
        };
        let Some(grads) = grads.iter().map(cpu_f32).collect::<Option<Vec<&[f32]>>>() else { return false };
        let mut offset = 0;
        for grad in grads {
            let range = offset..offset + grad.len();
            rule.apply_in_one_pass(
                lr,
                t,
                &mut parameters[range.clone()],
                &mut first[range.clone()],
                &mut second[range],
                grad,
            );
            offset += grad.len();
        }
        true
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

    #[derive(Clone, Copy, PartialEq)]
    enum Path {
        Flat,
        PerTensor,
        Libtorch,
    }

    /// A vector and a matrix, loss 3 sum((theta - a)^2) + sum((w - b)^2), the matrix left out of
    /// the loss for the first `theta_only` steps; returns both after `steps` steps.
    fn descend(rule: Rule, torch_rule: impl OptimizerConfig + Clone, steps: usize, theta_only: usize) -> [Vec<f32>; 3] {
        let run = |path: Path| {
            let store = nn::VarStore::new(Device::Cpu);
            let theta = store.root().var_copy("theta", &Tensor::from_slice(&[1.0f32, -2.0, 0.5]));
            let w = store.root().var_copy("w", &Tensor::from_slice(&[0.4f32, -0.6, 1.5, 0.0]).view([2, 2]));
            let a = Tensor::from_slice(&[0.3f32, 0.1, -0.7]);
            let b = Tensor::from_slice(&[-0.2f32, 0.8, 0.1, 0.9]).view([2, 2]);
            let loss = |step: usize| {
                let fit = (&theta - &a).square().sum(Kind::Float) * 3.0;
                if step < theta_only {
                    fit
                } else {
                    fit + (&w - &b).square().sum(Kind::Float)
                }
            };
            if path == Path::Libtorch {
                let mut optimizer = torch_rule.clone().build(&store, 0.05).unwrap();
                for step in 0..steps {
                    optimizer.backward_step(&loss(step));
                }
            } else {
                let mut optimizer = Optimizer::new(&store, rule, 0.05);
                assert!(optimizer.flat.is_some());
                if path == Path::PerTensor {
                    optimizer.flat = None;
                }
                for step in 0..steps {
                    optimizer.minimize(&loss(step), None);
                }
            }
            Vec::<f32>::try_from(Tensor::cat(&[theta.detach(), w.detach().view([-1])], 0)).unwrap()
        };
        [run(Path::Flat), run(Path::PerTensor), run(Path::Libtorch)]
    }

    fn assert_close(name: &str, [flat, per_tensor, torch]: [Vec<f32>; 3]) {
        for ((a, b), c) in flat.iter().zip(&per_tensor).zip(&torch) {
            assert!((a - c).abs() < 1e-5 && (b - c).abs() < 1e-5, "{name}: {flat:?}, {per_tensor:?} vs {torch:?}");
        }
    }

    #[test]
    fn adam_and_rmsprop_follow_libtorch_step_for_step() {
        assert_close("adam", descend(Rule::adam(), nn::Adam::default(), 25, 0));
        let rule = Rule::RmsProp { alpha: 0.99, eps: 1e-5 };
        let torch = nn::RmsProp { alpha: 0.99, eps: 1e-5, ..Default::default() };
        assert_close("rmsprop", descend(rule, torch, 25, 0));
    }

    #[test]
    fn a_parameter_without_a_gradient_is_skipped_and_keeps_its_own_step_count() {
        // libtorch counts steps per parameter: the matrix starts its bias correction at step 1
        // when it first gets a gradient, six steps after the vector.
        let [flat, per_tensor, torch] = descend(Rule::adam(), nn::Adam::default(), 20, 6);
        assert_close("adam, late matrix", [flat, per_tensor, torch.clone()]);
        let [unchanged, ..] = descend(Rule::adam(), nn::Adam::default(), 6, 6);
        assert_eq!(&unchanged[3..], &[0.4, -0.6, 1.5, 0.0], "no gradient, no step");
        assert_ne!(&torch[3..], &unchanged[3..]);
    }

    #[test]
    fn variables_are_views_of_the_buffer_and_one_replaced_is_still_updated() {
        let store = nn::VarStore::new(Device::Cpu);
        let theta = store.root().var_copy("theta", &Tensor::from_slice(&[1.0f32, -2.0]));
        let w = store.root().var_copy("w", &Tensor::from_slice(&[0.5f32, 0.25]));
        let mut optimizer = Optimizer::adam(&store, 0.1);
        let buffer = optimizer.flat.as_ref().unwrap().parameters.shallow_clone();
        assert_eq!(Vec::<f32>::try_from(&buffer).unwrap(), vec![1.0, -2.0, 0.5, 0.25]);
        let loss = || (&theta * &w).sum(Kind::Float);
        optimizer.minimize(&loss(), None);
        assert_eq!(
            Vec::<f32>::try_from(&buffer).unwrap(),
            Vec::<f32>::try_from(Tensor::cat(&[&theta, &w], 0)).unwrap()
        );
        // A variable whose data is replaced (as a store moved to another device is) leaves the
        // buffer; the step still reaches it.
        let replacement = w.detach().copy();
        tch::no_grad(|| w.shallow_clone().set_data(&replacement));
        assert_ne!(w.data_ptr(), buffer.narrow(0, 2, 2).data_ptr());
        let before = Vec::<f32>::try_from(w.detach()).unwrap();
        let stale = Vec::<f32>::try_from(buffer.narrow(0, 2, 2)).unwrap();
        optimizer.minimize(&loss(), None);
        let after = Vec::<f32>::try_from(w.detach()).unwrap();
        // d loss / d w = theta = (+, -): the first weight goes down, the second up.
        assert!(after[0] < before[0] && after[1] > before[1], "{before:?} -> {after:?}");
        assert_eq!(Vec::<f32>::try_from(buffer.narrow(0, 2, 2)).unwrap(), stale);
    }

    #[test]
    fn the_one_pass_step_is_the_whole_buffer_step() {
        tch::manual_seed(5);
        for rule in [Rule::adam(), Rule::RmsProp { alpha: 0.99, eps: 1e-5 }] {
            let start = || [Tensor::randn([1000], tch::kind::FLOAT_CPU), Tensor::rand([1000], tch::kind::FLOAT_CPU)];
            let [mut p, mut v] = start();
            let mut m = p.zeros_like();
            let [mut p1, mut m1, mut v1] = [p.copy(), m.copy(), v.copy()];
            let p0 = p.copy();
            for t in 1..=30 {
                let grad = Tensor::randn([1000], tch::kind::FLOAT_CPU) * 0.1;
                rule.apply(3e-3, t, &mut p, &mut m, &mut v, &grad);
                let (p1s, m1s, v1s) = (cpu_f32_mut(&mut p1), cpu_f32_mut(&mut m1), cpu_f32_mut(&mut v1));
                rule.apply_in_one_pass(3e-3, t, p1s.unwrap(), m1s.unwrap(), v1s.unwrap(), cpu_f32(&grad).unwrap());
            }
            for (a, b) in [(&p, &p1), (&m, &m1), (&v, &v1)] {
                let gap = (a - b).abs().max().double_value(&[]);
                assert!(gap < 1e-6, "{rule:?}: {gap}");
            }
            assert!((&p - p0).abs().max().double_value(&[]) > 1e-3, "{rule:?}: the steps moved nothing");
        }
        // The flat step of a CPU store takes the one pass.
        let store = nn::VarStore::new(Device::Cpu);
        let theta = store.root().var_copy("theta", &Tensor::from_slice(&[1.0f32, -2.0]));
        let w = store.root().var_copy("w", &Tensor::from_slice(&[0.5f32]));
        let mut optimizer = Optimizer::adam(&store, 0.1);
        ((&theta * &w).sum(Kind::Float)).backward();
        let grads: Vec<Tensor> = optimizer.parameters.iter().map(Tensor::grad).collect();
        assert!(Optimizer::step_in_one_pass(optimizer.rule, 0.1, 1, optimizer.flat.as_mut().unwrap(), &grads));
    }

    #[test]
    fn subnormal_moments_are_flushed_and_normal_ones_kept() {
        let tiny = f32::MIN_POSITIVE;
        let mut moment = Tensor::from_slice(&[tiny / 8.0, -tiny / 2.0, tiny, -tiny, 1e-30, -2.0, 0.0]);
        flush_subnormals(&mut moment);
        assert_eq!(Vec::<f32>::try_from(&moment).unwrap(), vec![0.0, 0.0, tiny, -tiny, 1e-30, -2.0, 0.0]);
    }

    #[test]
    fn a_restored_optimizer_continues_exactly() {
        let store = nn::VarStore::new(Device::Cpu);
        let theta = store.root().var_copy("theta", &Tensor::from_slice(&[1.0f32, -2.0]));
        let w = store.root().var_copy("w", &Tensor::from_slice(&[0.5f32]));
        let loss = |theta: &Tensor| (theta * theta * theta * &w).sum(Kind::Float).abs();
        let mut optimizer = Optimizer::adam(&store, 0.01);
        for _ in 0..5 {
            optimizer.minimize(&loss(&theta), None);
        }
        let mut state = StateDict::default();
        optimizer.save("adam", &mut state);
        let before = [theta.detach().copy(), w.detach().copy()];
        for _ in 0..5 {
            optimizer.minimize(&loss(&theta), None);
        }
        let continued = [theta.detach().copy(), w.detach().copy()];
        tch::no_grad(|| {
            theta.detach().copy_(&before[0]);
            w.detach().copy_(&before[1]);
        });
        let mut restored = Optimizer::adam(&store, 0.5);
        restored.load("adam", &state).unwrap();
        assert_eq!(restored.learning_rate(), 0.01);
        for _ in 0..5 {
            restored.minimize(&loss(&theta), None);
        }
        assert!(theta.detach().equal(&continued[0]) && w.detach().equal(&continued[1]));
    }
}
