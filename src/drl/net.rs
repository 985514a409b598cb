//! Network builders (tch-rs style: every net hangs off a `VarStore` path, so saving and loading
//! is by name). MLPs with ReLU; Q-nets (plain, dueling); critics Q(s, a) in ensembles of N;
//! deterministic, tanh-squashed Gaussian (SAC) and state-independent Gaussian (PPO) actors;
//! categorical actors; value nets.

use super::random::TensorRng;
use serde::{Deserialize, Serialize};
use tch::nn::{self, Module};
use tch::{Kind, Tensor};

/// How a network's linear layers start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LayerInit {
    /// PyTorch's `nn.Linear` default, U(+-1/sqrt(fan_in)) for weights and biases: what the papers'
    /// code, SB3 and CleanRL start from. tch's own default (Kaiming for ReLU) is 2.45x wider and
    /// saturates tanh actors on unnormalized observations such as Pendulum's angular velocity.
    Torch,
    /// Orthogonal weights with gain sqrt(2) on hidden layers and `output_gain` on the last, zero
    /// biases (the PPO implementation details of Engstrom et al. 2020 / Huang et al. 2022, SB3's
    /// `ortho_init`).
    Orthogonal { output_gain: f64 },
}

/// One linear layer with `init`'s scheme; `gain` applies to the orthogonal case only.
pub fn linear(path: nn::Path, input: i64, output: i64, init: LayerInit, gain: f64) -> nn::Linear {
    let config = match init {
        LayerInit::Torch => nn::LinearConfig {
            ws_init: nn::Init::Kaiming {
                dist: nn::init::NormalOrUniform::Uniform,
                fan: nn::init::FanInOut::FanIn,
                non_linearity: nn::init::NonLinearity::ExplicitGain(1.0 / 3f64.sqrt()),
            },
            ..Default::default()
        },
        LayerInit::Orthogonal { .. } => {
            nn::LinearConfig { ws_init: nn::Init::Orthogonal { gain }, bs_init: Some(nn::Init::Const(0.0)), bias: true }
        }
    };
    nn::linear(path, input, output, config)
}

/// Linear layers `input -> hidden... -> output` with ReLU between (none after the last).
pub fn mlp(path: &nn::Path, input: i64, hidden: &[i64], output: i64) -> nn::Sequential {
    mlp_with(path, input, hidden, output, LayerInit::Torch, Activation::Relu)
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Activation {
    Relu,
    /// SB3's default for on-policy nets; bounded features also keep gSDE's noise bounded.
    Tanh,
}

/// `input -> hidden...` with the activation after every layer; returns the stack and its width.
pub fn hidden_stack(
    path: &nn::Path,
    input: i64,
    hidden: &[i64],
    init: LayerInit,
    activation: Activation,
) -> (nn::Sequential, i64) {
    let mut net = nn::seq();
    let mut width = input;
    for (i, &h) in hidden.iter().enumerate() {
        net = net.add(linear(path / format!("layer{i}"), width, h, init, 2f64.sqrt()));
        net = match activation {
            Activation::Relu => net.add_fn(|x| x.relu()),
            Activation::Tanh => net.add_fn(|x| x.tanh()),
        };
        width = h;
    }
    (net, width)
}

pub fn mlp_with(
    path: &nn::Path,
    input: i64,
    hidden: &[i64],
    output: i64,
    init: LayerInit,
    activation: Activation,
) -> nn::Sequential {
    let (net, width) = hidden_stack(path, input, hidden, init, activation);
    net.add(linear(path / "out", width, output, init, init.output_gain()))
}

impl LayerInit {
    fn output_gain(self) -> f64 {
        match self {
            LayerInit::Orthogonal { output_gain } => output_gain,
            LayerInit::Torch => 1.0,
        }
    }
}

/// Q(s, .) over discrete actions; dueling (Wang et al. 2016): Q = V + A - mean_a A.
pub enum QNet {
    Plain(nn::Sequential),
    Dueling { body: nn::Sequential, value: nn::Linear, advantage: nn::Linear },
}

impl QNet {
    pub fn new(path: &nn::Path, obs_dim: i64, hidden: &[i64], actions: i64, dueling: bool) -> Self {
        if !dueling {
            return QNet::Plain(mlp(path, obs_dim, hidden, actions));
        }
        let (body_hidden, last) = hidden.split_at(hidden.len().saturating_sub(1));
        let width = *last.first().unwrap_or(&64);
        QNet::Dueling {
            body: mlp(&(path / "body"), obs_dim, body_hidden, width),
            value: linear(path / "value", width, 1, LayerInit::Torch, 1.0),
            advantage: linear(path / "advantage", width, actions, LayerInit::Torch, 1.0),
        }
    }

    pub fn forward(&self, obs: &Tensor) -> Tensor {
        match self {
            QNet::Plain(net) => net.forward(obs),
            QNet::Dueling { body, value, advantage } => {
                let h = body.forward(obs).relu();
                let a = advantage.forward(&h);
                value.forward(&h) + &a - a.mean_dim(-1, true, Kind::Float)
            }
        }
    }
}

/// N independent critics Q_k(s, a) (N = 1 DDPG, 2 TD3/SAC, 10 REDQ), evaluated together: layer
/// l of all critics is one [N, in, out] weight and one batched matmul, so an ensemble of ten costs
/// about what one critic does in kernel launches. Each critic starts from PyTorch's default init.
pub struct CriticEnsemble {
    /// (weight [N, in, out], bias [N, 1, out]) per layer, the last with out = 1.
    layers: Vec<(Tensor, Tensor)>,
    count: usize,
}

impl CriticEnsemble {
    pub fn new(path: &nn::Path, obs_dim: i64, action_dim: i64, hidden: &[i64], count: usize) -> Self {
        let mut widths = vec![obs_dim + action_dim];
        widths.extend_from_slice(hidden);
        widths.push(1);
        let n = count as i64;
        let layers = widths
            .windows(2)
            .enumerate()
            .map(|(i, w)| {
                let bound = 1.0 / (w[0] as f64).sqrt();
                let uniform = nn::Init::Uniform { lo: -bound, up: bound };
                (
                    path.var(&format!("layer{i}_weight"), &[n, w[0], w[1]], uniform),
                    path.var(&format!("layer{i}_bias"), &[n, 1, w[1]], uniform),
                )
            })
            .collect();
        CriticEnsemble { layers, count }
    }

    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    fn run(&self, input: &Tensor, select: Option<&Tensor>, frozen: bool) -> Tensor {
        let k = select.map_or(self.count as i64, |s| s.size()[0]);
        let mut x = input.unsqueeze(0).expand([k, input.size()[0], input.size()[1]], false);
        let last = self.layers.len() - 1;
        for (l, (w, b)) in self.layers.iter().enumerate() {
            let (w, b) = match select {
                Some(s) => (w.index_select(0, s), b.index_select(0, s)),
                None => (w.shallow_clone(), b.shallow_clone()),
            };
            let (w, b) = if frozen { (w.detach(), b.detach()) } else { (w, b) };
            if l < last {
                x = b.baddbmm(&x, &w, 1.0, 1.0).relu();
            } else {
                // The one-output layer as a product and a row sum: MKL's batched product with one
                // output column (and its backward, with one inner column) is slow on the CPU
                // (simulators report: "Where one-thread training time goes").
                x = (x * w.transpose(1, 2)).sum_dim_intlist(-1, false, Kind::Float) + b.squeeze_dim(2);
            }
        }
        x
    }

    /// Q values of every critic: [N, B].
    pub fn forward_all(&self, obs: &Tensor, action: &Tensor) -> Tensor {
        self.run(&Tensor::cat(&[obs, action], 1), None, false)
    }

    /// `forward_all` with the critics' weights treated as constants: gradients reach the action
    /// (an actor's loss) without computing the critics' weight gradients it would throw away.
    pub fn forward_all_frozen(&self, obs: &Tensor, action: &Tensor) -> Tensor {
        self.run(&Tensor::cat(&[obs, action], 1), None, true)
    }

    /// Q values of the critics in `subset`: [|subset|, B].
    pub fn forward_subset(&self, obs: &Tensor, action: &Tensor, subset: &[usize]) -> Tensor {
        self.run(&Tensor::cat(&[obs, action], 1), Some(&Self::index(subset, obs.device())), false)
    }

    /// `forward_subset` with frozen weights (see `forward_all_frozen`).
    pub fn forward_subset_frozen(&self, obs: &Tensor, action: &Tensor, subset: &[usize]) -> Tensor {
        self.run(&Tensor::cat(&[obs, action], 1), Some(&Self::index(subset, obs.device())), true)
    }

    fn index(subset: &[usize], device: tch::Device) -> Tensor {
        Tensor::from_slice(&subset.iter().map(|&k| k as i64).collect::<Vec<_>>()).to(device)
    }
}

/// Maps the unit box [-1, 1] to the action box [low, high] and back. The off-policy actors and
/// critics work in the unit box, as SB3's (which rescales every Box action to [-1, 1] before its
/// buffer) and the SAC authors' code do: noise fractions, the critic's action input and SAC's
/// entropy target (-|A|) then mean the same on every box. The replay buffer keeps env units;
/// `to_unit` maps a batch back.
#[derive(Debug)]
pub struct ActionScale {
    pub scale: Tensor,
    pub bias: Tensor,
}

impl ActionScale {
    pub fn new(low: &[f32], high: &[f32], device: tch::Device) -> Self {
        let low = Tensor::from_slice(low).to(device);
        let high = Tensor::from_slice(high).to(device);
        ActionScale { scale: (&high - &low) / 2.0, bias: (high + low) / 2.0 }
    }

    pub fn apply(&self, unit: &Tensor) -> Tensor {
        unit * &self.scale + &self.bias
    }

    /// The inverse of `apply`, clamped to [-1, 1] (a stored action may sit on the box's edge
    /// up to rounding).
    pub fn to_unit(&self, action: &Tensor) -> Tensor {
        ((action - &self.bias) / &self.scale).clamp(-1.0, 1.0)
    }
}

/// mu(s) = tanh(f(s)) in the unit box (DDPG, TD3; `ActionScale` maps it to the env's).
pub struct DeterministicActor {
    net: nn::Sequential,
}

impl DeterministicActor {
    pub fn new(path: &nn::Path, obs_dim: i64, action_dim: i64, hidden: &[i64]) -> Self {
        DeterministicActor { net: mlp(path, obs_dim, hidden, action_dim) }
    }

    pub fn forward(&self, obs: &Tensor) -> Tensor {
        self.net.forward(obs).tanh()
    }
}

/// SAC's actor (Haarnoja et al. 2018, appendix C): u ~ N(mu(s), sigma(s)), a = tanh(u) in the
/// unit box; log pi(a|s) = log N(u) - sum log(1 - tanh(u)^2), the density in the unit box as SB3
/// and the authors' code measure it, so that the entropy target -|A| does not depend on the
/// env's action range (a density in env units adds -sum log(half-range): -1.1 nats on
/// InvertedPendulum's [-3, 3], which moved the tuned entropy by as much).
pub struct SquashedGaussianActor {
    body: nn::Sequential,
    mean: nn::Linear,
    log_std: nn::Linear,
}

/// log sqrt(2 pi), the Gaussian log-density constant.
pub const LOG_SQRT_2PI: f64 = 0.918_938_533_204_672_7;

const LOG_STD_RANGE: (f64, f64) = (-20.0, 2.0);

impl SquashedGaussianActor {
    pub fn new(path: &nn::Path, obs_dim: i64, action_dim: i64, hidden: &[i64]) -> Self {
        let (body_hidden, last) = hidden.split_at(hidden.len().saturating_sub(1));
        let width = *last.first().unwrap_or(&64);
        SquashedGaussianActor {
            body: mlp(&(path / "body"), obs_dim, body_hidden, width),
            mean: linear(path / "mean", width, action_dim, LayerInit::Torch, 1.0),
            log_std: linear(path / "log_std", width, action_dim, LayerInit::Torch, 1.0),
        }
    }

    /// (action in the unit box, log pi(action | s) [B]) with the reparameterization trick.
    pub fn sample(&self, obs: &Tensor, rng: &mut TensorRng) -> (Tensor, Tensor) {
        let h = self.body.forward(obs).relu();
        let mean = self.mean.forward(&h);
        let log_std = self.log_std.forward(&h).clamp(LOG_STD_RANGE.0, LOG_STD_RANGE.1);
        let noise = rng.normal_like(&mean);
        let u = &mean + log_std.exp() * &noise;
        let a = u.tanh();
        let log_normal = (noise.square() * -0.5 - &log_std - LOG_SQRT_2PI).sum_dim_intlist(1, false, Kind::Float);
        let squash = (a.square().neg() + 1.0 + 1e-6).log().sum_dim_intlist(1, false, Kind::Float);
        (a, log_normal - squash)
    }

    /// log pi(action | s) of given unit-box actions (inverting the tanh squash).
    pub fn log_prob(&self, obs: &Tensor, action: &Tensor) -> Tensor {
        let h = self.body.forward(obs).relu();
        let mean = self.mean.forward(&h);
        let log_std = self.log_std.forward(&h).clamp(LOG_STD_RANGE.0, LOG_STD_RANGE.1);
        let unit = action.clamp(-1.0 + 1e-6, 1.0 - 1e-6);
        let u = unit.atanh();
        let z = (u - mean) / log_std.exp();
        let log_normal = (z.square() * -0.5 - &log_std - LOG_SQRT_2PI).sum_dim_intlist(1, false, Kind::Float);
        let squash = (unit.square().neg() + 1.0 + 1e-6).log().sum_dim_intlist(1, false, Kind::Float);
        log_normal - squash
    }

    /// tanh(mu(s)), in the unit box.
    pub fn deterministic(&self, obs: &Tensor) -> Tensor {
        let h = self.body.forward(obs).relu();
        self.mean.forward(&h).tanh()
    }
}

/// PPO/A2C's continuous actor: N(mu(s), sigma) with either a state-independent log sigma, or
/// generalized state-dependent exploration (gSDE, Raffin et al. 2021): the exploration noise is
/// phi(s)^T E with phi the policy's last hidden features and E ~ N(0, sigma_ij^2) a
/// [features x actions] matrix per env, held for several steps, so the action distribution is
/// N(mu(s), sum_j phi_j(s)^2 sigma_j^2) per action (phi detached, as SB3's `learn_features=False`).
/// Actions are unbounded; the env clips them to its box.
pub struct GaussianActor {
    body: nn::Sequential,
    mean: nn::Linear,
    /// [actions], or [features, actions] under gSDE.
    pub log_std: Tensor,
    sde: bool,
    /// gSDE's current noise matrices [B, features, actions] (`exploration_noise` saves them).
    exploration: Option<Tensor>,
}

/// Options of the Gaussian actor.
#[derive(Debug, Clone, Copy)]
pub struct GaussianActorOptions {
    pub init: LayerInit,
    pub activation: Activation,
    pub log_std_init: f64,
    pub sde: bool,
}

impl GaussianActor {
    pub fn new(path: &nn::Path, obs_dim: i64, action_dim: i64, hidden: &[i64], options: GaussianActorOptions) -> Self {
        let (body, width) = hidden_stack(&(path / "mean"), obs_dim, hidden, options.init, options.activation);
        let mean = linear(path / "mean" / "out", width, action_dim, options.init, options.init.output_gain());
        let shape: &[i64] = if options.sde { &[width, action_dim] } else { &[action_dim] };
        let log_std = path.var("log_std", shape, nn::Init::Const(options.log_std_init));
        GaussianActor { body, mean, log_std, sde: options.sde, exploration: None }
    }

    pub fn mean(&self, obs: &Tensor) -> Tensor {
        self.mean.forward(&self.body.forward(obs))
    }

    /// (mean [B, A], std [B, A], features [B, F]).
    fn distribution(&self, obs: &Tensor) -> (Tensor, Tensor, Tensor) {
        let features = self.body.forward(obs);
        let mean = self.mean.forward(&features);
        let std = if self.sde {
            let variance = features.detach().square().matmul(&self.log_std.exp().square());
            (variance + 1e-6).sqrt()
        } else {
            self.log_std.exp().expand_as(&mean)
        };
        (mean, std, features)
    }

    /// log N(action; mu(s), sigma(s)) summed over action dims [B], and the entropy [B].
    pub fn log_prob_entropy(&self, obs: &Tensor, action: &Tensor) -> (Tensor, Tensor) {
        let (mean, std, _) = self.distribution(obs);
        let log_std = std.log();
        let z = (action - &mean) / &std;
        let log_prob = (z.square() * -0.5 - &log_std - LOG_SQRT_2PI).sum_dim_intlist(1, false, Kind::Float);
        let entropy = (log_std + 0.5 + LOG_SQRT_2PI).sum_dim_intlist(1, false, Kind::Float);
        (log_prob, entropy)
    }

    /// An exploratory action per row; under gSDE `resample` draws new noise matrices (they are
    /// also drawn when the batch size changes).
    pub fn sample(&mut self, obs: &Tensor, resample: bool, rng: &mut TensorRng) -> Tensor {
        let (mean, std, features) = self.distribution(obs);
        if !self.sde {
            return &mean + std * rng.normal_like(&mean);
        }
        let batch = obs.size()[0];
        if resample || self.exploration.as_ref().is_none_or(|e| e.size()[0] != batch) {
            let sigma = self.log_std.exp().detach();
            let shape = [batch, sigma.size()[0], sigma.size()[1]];
            self.exploration = Some(rng.normal(&shape, obs.device()) * sigma.unsqueeze(0));
        }
        let noise = features.detach().unsqueeze(1).bmm(self.exploration.as_ref().expect("drawn")).squeeze_dim(1);
        mean + noise
    }

    /// gSDE's held noise matrices, for a checkpoint.
    pub fn exploration_noise(&self) -> Option<&Tensor> {
        self.exploration.as_ref()
    }

    pub fn set_exploration_noise(&mut self, noise: Option<Tensor>) {
        self.exploration = noise;
    }
}

/// Categorical policy over discrete actions (PPO-discrete, A2C-discrete).
pub struct CategoricalActor {
    logits: nn::Sequential,
}

impl CategoricalActor {
    pub fn new(
        path: &nn::Path,
        obs_dim: i64,
        actions: i64,
        hidden: &[i64],
        init: LayerInit,
        activation: Activation,
    ) -> Self {
        CategoricalActor { logits: mlp_with(path, obs_dim, hidden, actions, init, activation) }
    }

    pub fn logits(&self, obs: &Tensor) -> Tensor {
        self.logits.forward(obs)
    }

    /// (log pi(action | s) [B], entropy [B]) for integer actions [B].
    pub fn log_prob_entropy(&self, obs: &Tensor, action: &Tensor) -> (Tensor, Tensor) {
        let log_p = self.logits(obs).log_softmax(-1, Kind::Float);
        let chosen = log_p.gather(1, &action.to_kind(Kind::Int64).view([-1, 1]), false).squeeze_dim(1);
        let entropy = -(log_p.exp() * &log_p).sum_dim_intlist(1, false, Kind::Float);
        (chosen, entropy)
    }

    pub fn sample(&self, obs: &Tensor, rng: &mut TensorRng) -> Tensor {
        rng.categorical(&self.logits(obs).softmax(-1, Kind::Float))
    }
}

/// V(s).
/// V(s); under orthogonal init its output layer has gain 1 whatever the actor's.
pub fn value_net(
    path: &nn::Path,
    obs_dim: i64,
    hidden: &[i64],
    init: LayerInit,
    activation: Activation,
) -> nn::Sequential {
    let init = match init {
        LayerInit::Orthogonal { .. } => LayerInit::Orthogonal { output_gain: 1.0 },
        LayerInit::Torch => LayerInit::Torch,
    };
    mlp_with(path, obs_dim, hidden, 1, init, activation)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tch::{nn::VarStore, Device};

    /// Critic k computed alone, layer by layer with 2-D products (as `nn.Linear` does).
    fn one_critic(critics: &CriticEnsemble, k: i64, input: &Tensor) -> Tensor {
        let last = critics.layers.len() - 1;
        let mut x = input.shallow_clone();
        for (l, (w, b)) in critics.layers.iter().enumerate() {
            x = x.matmul(&w.get(k)) + b.get(k);
            if l < last {
                x = x.relu();
            }
        }
        x.squeeze_dim(1)
    }

    #[test]
    fn each_critic_of_the_ensemble_is_its_own_mlp_in_values_and_gradients() {
        tch::manual_seed(3);
        let store = VarStore::new(Device::Cpu);
        let critics = CriticEnsemble::new(&store.root(), 5, 2, &[16, 12], 3);
        let (obs, action) = (Tensor::randn([7, 5], tch::kind::FLOAT_CPU), Tensor::randn([7, 2], tch::kind::FLOAT_CPU));
        let weights = Tensor::randn([3, 7], tch::kind::FLOAT_CPU);
        let together = critics.forward_all(&obs, &action);
        let input = Tensor::cat(&[&obs, &action], 1);
        let alone = Tensor::stack(&(0..3).map(|k| one_critic(&critics, k, &input)).collect::<Vec<_>>(), 0);
        assert!(together.allclose(&alone, 1e-5, 1e-6, false), "{together} {alone}");
        let variables = store.trainable_variables();
        let gradients = |q: &Tensor| Tensor::run_backward(&[(q * &weights).sum(Kind::Float)], &variables, false, false);
        for (a, b) in gradients(&together).iter().zip(gradients(&alone)) {
            assert!(a.allclose(&b, 1e-5, 1e-6, false), "{a} {b}");
        }
        // Frozen: the same values; a backward fills the action's gradient and no weight's (the
        // unfrozen ensemble's backward fills every weight's).
        let action = action.set_requires_grad(true);
        let frozen = critics.forward_all_frozen(&obs, &action);
        assert!(frozen.allclose(&together, 0.0, 0.0, false));
        frozen.sum(Kind::Float).backward();
        assert_eq!(action.grad().size(), [7, 2]);
        assert!(action.grad().abs().sum(Kind::Float).double_value(&[]) > 0.0);
        assert!(critics.layers.iter().all(|(w, b)| !w.grad().defined() && !b.grad().defined()));
        critics.forward_all(&obs, &action).sum(Kind::Float).backward();
        assert!(critics.layers.iter().all(|(w, b)| w.grad().defined() && b.grad().defined()));
    }
}
