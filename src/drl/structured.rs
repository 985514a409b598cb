//! Discrete actors and critics that read an observation's `ObservationLayout`: its columns in the
//! env's units (`scale`), its action mask (a masked action's logit is -1e8, so it is never drawn
//! while any action is allowed; Huang & Ontañón 2022, "A closer look at invalid action masking"),
//! and for item lists a permutation-equivariant network (Deep Sets, Zaheer et al. 2017): every
//! item is embedded from its own features and the shared ones, the embeddings of the allowed
//! items are pooled (mean and max), and each item's logit reads its embedding with the pool. The
//! weights do not depend on the number of items, so a policy trained on 200 items runs on any number of items.
//! A plain layout gives exactly the MLP `CategoricalActor` and `value_net` (same variables).

use super::env::{ItemLayout, ObservationLayout};
use super::net::{hidden_stack, mlp_with, value_net, Activation, CategoricalActor, LayerInit};
use super::random::TensorRng;
use tch::nn::Module;
use tch::{nn, Kind, Tensor};

/// Logit of a masked action.
const MASKED_LOGIT: f64 = -1e8;
/// Added before the logarithm of an item feature (features are >= 0 in the env's units).
const LOG_FLOOR: f64 = 1e-3;

/// Divides each column by the layout's scale.
struct Scale(Option<Tensor>);

impl Scale {
    fn new(layout: &ObservationLayout, device: tch::Device) -> Self {
        Scale((!layout.scale.is_empty()).then(|| Tensor::from_slice(&layout.scale).to(device).reciprocal()))
    }

    fn apply(&self, obs: &Tensor) -> Tensor {
        self.0.as_ref().map_or_else(|| obs.shallow_clone(), |s| obs * s)
    }
}

/// The Deep Sets body: per-item inputs -> embeddings -> masked mean and max pools.
struct ItemSet {
    layout: ItemLayout,
    mask: Option<usize>,
    encoder: nn::Sequential,
}

impl ItemSet {
    fn new(
        path: &nn::Path,
        layout: &ItemLayout,
        mask: Option<usize>,
        width: i64,
        init: LayerInit,
        activation: Activation,
    ) -> Self {
        // Each feature and its logarithm (so that ratios such as value / weight are linear), the
        // shared columns, and the item's mask bit.
        let inputs = 2 * layout.features.len() + layout.globals.len() + usize::from(mask.is_some());
        let (encoder, _) = hidden_stack(&(path / "encoder"), inputs as i64, &[width, width], init, activation);
        ItemSet { layout: layout.clone(), mask, encoder }
    }

    /// [B, n, inputs] from scaled observations [B, D] (`raw` for the mask bits).
    fn inputs(&self, scaled: &Tensor, raw: &Tensor) -> Tensor {
        let n = self.layout.count as i64;
        let mut columns = Vec::new();
        for &offset in &self.layout.features {
            let block = scaled.narrow(1, offset as i64, n);
            columns.push((&block + LOG_FLOOR).log());
            columns.push(block);
        }
        for &column in &self.layout.globals {
            columns.push(scaled.narrow(1, column as i64, 1).expand([-1, n], false));
        }
        if let Some(offset) = self.mask {
            columns.push(raw.narrow(1, offset as i64, n));
        }
        Tensor::stack(&columns, 2)
    }

    fn allowed(&self, raw: &Tensor) -> Tensor {
        match self.mask {
            Some(offset) => raw.narrow(1, offset as i64, self.layout.count as i64).gt(0.5).to_kind(Kind::Float),
            None => raw.ones_like().narrow(1, 0, self.layout.count as i64),
        }
    }

    /// (embeddings [B, n, H], pooled [B, 2H]).
    fn embed(&self, scaled: &Tensor, raw: &Tensor) -> (Tensor, Tensor) {
        let embeddings = self.encoder.forward(&self.inputs(scaled, raw));
        let allowed = self.allowed(raw).unsqueeze(2);
        let count = allowed.sum_dim_intlist(1, false, Kind::Float);
        let mean = (&embeddings * &allowed).sum_dim_intlist(1, false, Kind::Float) / count.clamp_min(1.0);
        let any = count.gt(0.0).to_kind(Kind::Float);
        let max = (&embeddings + (&allowed - 1.0) * 1e4).amax(1, false) * any;
        (embeddings, Tensor::cat(&[mean, max], 1))
    }
}

enum ActorBody {
    Mlp(CategoricalActor),
    Items { set: ItemSet, head: nn::Sequential },
}

/// A categorical policy over the layout.
pub struct DiscreteActor {
    body: ActorBody,
    scale: Scale,
    mask: Option<(i64, i64)>,
}

impl DiscreteActor {
    pub fn new(
        path: &nn::Path,
        obs_dim: i64,
        actions: i64,
        hidden: &[i64],
        init: LayerInit,
        activation: Activation,
        layout: &ObservationLayout,
    ) -> Self {
        let body = match &layout.items {
            None => ActorBody::Mlp(CategoricalActor::new(path, obs_dim, actions, hidden, init, activation)),
            Some(items) => {
                let width = hidden.first().copied().unwrap_or(64);
                let set = ItemSet::new(path, items, layout.action_mask, width, init, activation);
                let head = mlp_with(&(path / "head"), 3 * width, &[width], 1, init, activation);
                ActorBody::Items { set, head }
            }
        };
        let mask = layout.action_mask.map(|offset| (offset as i64, actions));
        DiscreteActor { body, scale: Scale::new(layout, path.device()), mask }
    }

    pub fn logits(&self, obs: &Tensor) -> Tensor {
        let scaled = self.scale.apply(obs);
        let logits = match &self.body {
            ActorBody::Mlp(actor) => actor.logits(&scaled),
            ActorBody::Items { set, head } => {
                let (embeddings, pooled) = set.embed(&scaled, obs);
                let n = embeddings.size()[1];
                let context = pooled.unsqueeze(1).expand([-1, n, -1], false);
                head.forward(&Tensor::cat(&[embeddings, context], 2)).squeeze_dim(2)
            }
        };
        match self.mask {
            Some((offset, n)) => logits.masked_fill(&obs.narrow(1, offset, n).le(0.5), MASKED_LOGIT),
            None => logits,
        }
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

    pub fn greedy(&self, obs: &Tensor) -> Tensor {
        self.logits(obs).argmax(-1, false)
    }
}

enum CriticBody {
    Mlp(nn::Sequential),
    Items { set: ItemSet, head: nn::Sequential },
}

/// V(s) over the layout.
pub struct Critic {
    body: CriticBody,
    scale: Scale,
}

impl Critic {
    pub fn new(
        path: &nn::Path,
        obs_dim: i64,
        hidden: &[i64],
        init: LayerInit,
        activation: Activation,
        layout: &ObservationLayout,
    ) -> Self {
        let body = match &layout.items {
            None => CriticBody::Mlp(value_net(path, obs_dim, hidden, init, activation)),
            Some(items) => {
                let width = hidden.first().copied().unwrap_or(64);
                let set = ItemSet::new(path, items, layout.action_mask, width, init, activation);
                let init = match init {
                    LayerInit::Orthogonal { .. } => LayerInit::Orthogonal { output_gain: 1.0 },
                    LayerInit::Torch => LayerInit::Torch,
                };
                let head = mlp_with(&(path / "head"), 2 * width, &[width], 1, init, activation);
                CriticBody::Items { set, head }
            }
        };
        Critic { body, scale: Scale::new(layout, path.device()) }
    }

    /// [B, 1].
    pub fn forward(&self, obs: &Tensor) -> Tensor {
        let scaled = self.scale.apply(obs);
        match &self.body {
            CriticBody::Mlp(net) => net.forward(&scaled),
            CriticBody::Items { set, head } => head.forward(&set.embed(&scaled, obs).1),
        }
    }
}
