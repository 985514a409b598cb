//! Network builders (tch-rs style: every net hangs off a `VarStore` path, so saving and loading
//! is by name). MLPs with ReLU; Q-nets (plain, dueling); critics Q(s, a) in ensembles of N;
//! deterministic, tanh-squashed Gaussian (SAC) and state-independent Gaussian (PPO) actors;
//! categorical actors; value nets.

use tch::nn::{self, Module};
use tch::{Kind, Tensor};

/// Linear layers `input -> hidden... -> output` with ReLU between (none after the last).
pub fn mlp(path: &nn::Path, input: i64, hidden: &[i64], output: i64) -> nn::Sequential {
    let mut net = nn::seq();
    let mut width = input;
    for (i, &h) in hidden.iter().enumerate() {
        net = net.add(nn::linear(path / format!("layer{i}"), width, h, Default::default())).add_fn(|x| x.relu());
        width = h;
    }
    net.add(nn::linear(path / "out", width, output, Default::default()))
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
            value: nn::linear(path / "value", width, 1, Default::default()),
            advantage: nn::linear(path / "advantage", width, actions, Default::default()),
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

/// N independent critics Q_k(s, a) (N = 1 DDPG, 2 TD3/SAC, 10 REDQ).
pub struct CriticEnsemble {
    critics: Vec<nn::Sequential>,
}

impl CriticEnsemble {
    pub fn new(path: &nn::Path, obs_dim: i64, action_dim: i64, hidden: &[i64], count: usize) -> Self {
        let critics = (0..count).map(|k| mlp(&(path / format!("q{k}")), obs_dim + action_dim, hidden, 1)).collect();
        CriticEnsemble { critics }
    }

    pub fn len(&self) -> usize {
        self.critics.len()
    }

    pub fn is_empty(&self) -> bool {
        self.critics.is_empty()
    }

    /// Q values of every critic: [N, B].
    pub fn forward_all(&self, obs: &Tensor, action: &Tensor) -> Tensor {
        let input = Tensor::cat(&[obs, action], 1);
        Tensor::stack(&self.critics.iter().map(|q| q.forward(&input).squeeze_dim(1)).collect::<Vec<_>>(), 0)
    }

    /// Q values of the critics in `subset`: [|subset|, B].
    pub fn forward_subset(&self, obs: &Tensor, action: &Tensor, subset: &[usize]) -> Tensor {
        let input = Tensor::cat(&[obs, action], 1);
        Tensor::stack(&subset.iter().map(|&k| self.critics[k].forward(&input).squeeze_dim(1)).collect::<Vec<_>>(), 0)
    }
}

/// Maps [-1, 1] to the action box [low, high].
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
}

/// mu(s) = scale * tanh(f(s)) + bias (DDPG, TD3).
pub struct DeterministicActor {
    net: nn::Sequential,
    pub bounds: ActionScale,
}

impl DeterministicActor {
    pub fn new(path: &nn::Path, obs_dim: i64, action_dim: i64, hidden: &[i64], bounds: ActionScale) -> Self {
        DeterministicActor { net: mlp(path, obs_dim, hidden, action_dim), bounds }
    }

    pub fn forward(&self, obs: &Tensor) -> Tensor {
        self.bounds.apply(&self.net.forward(obs).tanh())
    }
}

/// SAC's actor (Haarnoja et al. 2018, appendix C): u ~ N(mu(s), sigma(s)), a = tanh(u) scaled;
/// log pi(a|s) = log N(u) - sum log(1 - tanh(u)^2).
pub struct SquashedGaussianActor {
    body: nn::Sequential,
    mean: nn::Linear,
    log_std: nn::Linear,
    pub bounds: ActionScale,
}

/// log sqrt(2 pi), the Gaussian log-density constant.
const LOG_SQRT_2PI: f64 = 0.918_938_533_204_672_7;

const LOG_STD_RANGE: (f64, f64) = (-20.0, 2.0);

impl SquashedGaussianActor {
    pub fn new(path: &nn::Path, obs_dim: i64, action_dim: i64, hidden: &[i64], bounds: ActionScale) -> Self {
        let (body_hidden, last) = hidden.split_at(hidden.len().saturating_sub(1));
        let width = *last.first().unwrap_or(&64);
        SquashedGaussianActor {
            body: mlp(&(path / "body"), obs_dim, body_hidden, width),
            mean: nn::linear(path / "mean", width, action_dim, Default::default()),
            log_std: nn::linear(path / "log_std", width, action_dim, Default::default()),
            bounds,
        }
    }

    /// (action in the box, log pi(action | s) [B]) with the reparameterization trick.
    pub fn sample(&self, obs: &Tensor) -> (Tensor, Tensor) {
        let h = self.body.forward(obs).relu();
        let mean = self.mean.forward(&h);
        let log_std = self.log_std.forward(&h).clamp(LOG_STD_RANGE.0, LOG_STD_RANGE.1);
        let noise = mean.randn_like();
        let u = &mean + log_std.exp() * &noise;
        let a = u.tanh();
        let log_normal = (noise.square() * -0.5 - &log_std - LOG_SQRT_2PI).sum_dim_intlist(1, false, Kind::Float);
        let squash = (a.square().neg() + 1.0 + 1e-6).log().sum_dim_intlist(1, false, Kind::Float)
            + self.bounds.scale.log().sum(Kind::Float);
        (self.bounds.apply(&a), log_normal - squash)
    }

    /// log pi(action | s) of given in-box actions (inverting the tanh squash).
    pub fn log_prob(&self, obs: &Tensor, action: &Tensor) -> Tensor {
        let h = self.body.forward(obs).relu();
        let mean = self.mean.forward(&h);
        let log_std = self.log_std.forward(&h).clamp(LOG_STD_RANGE.0, LOG_STD_RANGE.1);
        let unit = ((action - &self.bounds.bias) / &self.bounds.scale).clamp(-1.0 + 1e-6, 1.0 - 1e-6);
        let u = unit.atanh();
        let z = (u - mean) / log_std.exp();
        let log_normal = (z.square() * -0.5 - &log_std - LOG_SQRT_2PI).sum_dim_intlist(1, false, Kind::Float);
        let squash = (unit.square().neg() + 1.0 + 1e-6).log().sum_dim_intlist(1, false, Kind::Float)
            + self.bounds.scale.log().sum(Kind::Float);
        log_normal - squash
    }

    pub fn deterministic(&self, obs: &Tensor) -> Tensor {
        let h = self.body.forward(obs).relu();
        self.bounds.apply(&self.mean.forward(&h).tanh())
    }
}

/// PPO/A2C's continuous actor: N(mu(s), exp(log_std)) with a state-independent log_std.
pub struct GaussianActor {
    mean: nn::Sequential,
    pub log_std: Tensor,
}

impl GaussianActor {
    pub fn new(path: &nn::Path, obs_dim: i64, action_dim: i64, hidden: &[i64]) -> Self {
        GaussianActor {
            mean: mlp(&(path / "mean"), obs_dim, hidden, action_dim),
            log_std: path.zeros("log_std", &[action_dim]),
        }
    }

    pub fn mean(&self, obs: &Tensor) -> Tensor {
        self.mean.forward(obs)
    }

    /// log N(action; mu(s), sigma) summed over action dims [B], and the entropy [B].
    pub fn log_prob_entropy(&self, obs: &Tensor, action: &Tensor) -> (Tensor, Tensor) {
        let mean = self.mean(obs);
        let z = (action - &mean) / self.log_std.exp();
        let log_prob = (z.square() * -0.5 - &self.log_std - LOG_SQRT_2PI).sum_dim_intlist(1, false, Kind::Float);
        let entropy = (&self.log_std + 0.5 + LOG_SQRT_2PI).sum(Kind::Float) * mean.ones_like().narrow(1, 0, 1).squeeze_dim(1);
        (log_prob, entropy)
    }

    pub fn sample(&self, obs: &Tensor) -> Tensor {
        let mean = self.mean(obs);
        &mean + self.log_std.exp() * mean.randn_like()
    }
}

/// Categorical policy over discrete actions (PPO-discrete, A2C-discrete).
pub struct CategoricalActor {
    logits: nn::Sequential,
}

impl CategoricalActor {
    pub fn new(path: &nn::Path, obs_dim: i64, actions: i64, hidden: &[i64]) -> Self {
        CategoricalActor { logits: mlp(path, obs_dim, hidden, actions) }
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

    pub fn sample(&self, obs: &Tensor) -> Tensor {
        self.logits(obs).softmax(-1, Kind::Float).multinomial(1, true).squeeze_dim(1)
    }
}

/// V(s).
pub fn value_net(path: &nn::Path, obs_dim: i64, hidden: &[i64]) -> nn::Sequential {
    mlp(path, obs_dim, hidden, 1)
}
