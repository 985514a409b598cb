//! The learned pair-scoring policy (method `policy`, and a start of every search chain): a greedy
//! contraction whose score of a candidate pair is learned. At each step the live pairs that share
//! a summed index are the actions; pair (A, B) gets the logit
//!   l(A, B) = -beta g(A, B) + f_theta(x(A, B)),
//! where g = slog2(size(R) - size(A) - size(B)) is opt_einsum's greedy score under the
//! order-preserving signed log slog2(v) = sign(v) log2(1 + |v|), beta a learned scale, and
//! f_theta a two-layer tanh network on the pair's features x, scale-free where they can be so
//! one model serves small and large networks: log2 sizes of the result, the smaller operand and
//! the union (the contraction's cost) relative to the larger operand, the bits shared and
//! removed, the larger operand's size, both operands' leaf counts as log2 shares of the
//! network's tensors, and g itself. Its last layer starts at zero, so the untrained policy
//! contracts a pair of greedy's best score at every step and training starts from a greedy rule
//! (not opt_einsum's trajectory: its heap keeps only each group's cheapest pair and breaks ties
//! by id; on the validation circuits the untrained rollout is 1.24 above it in mean log10). The
//! policy's rollout (`method=policy`) contracts the highest-logit pair each step.
//!
//! Training is REINFORCE (Williams 1992) with the shared per-instance baseline of Kool, van Hoof
//! and Welling (2019, "Buy 4 REINFORCE samples, get a baseline for free"): K sampled rollouts
//! (pi(a | s) = softmax of the live pairs' logits) of each of B generated networks
//! (`generate::random_circuit`, qubits and cycles drawn per network, never the Sycamore files);
//! the advantage of rollout k is mean_j c_j - c_k in log10 cost, scaled by the batch's standard
//! deviation, and the loss -sum_k A_k sum_t log pi(a_t | s_t). A pair's features stay fixed while
//! both operands live, so each rollout records every candidate once with the decision steps it
//! was live for, and the log-softmax of step t runs over that step's live rows.
//!
//! Rollouts (training and serving) run the network in plain Rust (`PairScorer`, the weights copied
//! out of the tch store), so the served policy is `Send + Sync` and needs no lock.

use super::greedy::{weighted_pick, Contraction};
use super::tree::{ContractionTree, Legs};
use super::Network;
use crate::models::{LoadedPolicy, Manifest, WEIGHTS_FILE};
use anyhow::{Context, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::Path;
use tch::nn::{self, Module};
use tch::{Device, Kind, Tensor};

/// Features per candidate pair.
pub const FEATURES: usize = 9;
/// Differences of sizes are fed to the network in units of this many bits (absolute sizes, which
/// reach 2^60 on the Sycamore files, in units of four times as many).
const BITS: f32 = 16.0;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PolicyConfig {
    /// Width of both hidden layers of f_theta.
    pub hidden: usize,
    /// The initial beta (how sharply the untrained policy follows greedy's score, per bit).
    pub initial_beta: f64,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig { hidden: 32, initial_beta: 2.0 }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PolicyTraining {
    /// Gradient steps.
    pub steps: usize,
    /// Generated networks per step (B).
    pub instances: usize,
    /// Sampled rollouts per network (K), whose mean cost is each one's baseline.
    pub rollouts: usize,
    /// Adam's learning rate.
    pub learning_rate: f64,
    /// Qubits of the generated circuits, uniform in this range (inclusive).
    pub min_qubits: usize,
    pub max_qubits: usize,
    /// Cycles of the generated circuits, uniform in this range (inclusive).
    pub min_cycles: usize,
    pub max_cycles: usize,
    /// Held-out networks the validation compares with greedy.
    pub validation_networks: usize,
    pub seed: u64,
}

impl Default for PolicyTraining {
    fn default() -> Self {
        PolicyTraining {
            steps: 1500,
            instances: 8,
            rollouts: 8,
            learning_rate: 1e-2,
            min_qubits: 16,
            max_qubits: 64,
            min_cycles: 6,
            max_cycles: 16,
            validation_networks: 32,
            seed: 0,
        }
    }
}

/// slog2(2^r - 2^a - 2^b), greedy's score under the signed log.
fn greedy_prior(a: f64, b: f64, r: f64) -> f64 {
    let top = a.max(b).max(r);
    let x = (r - top).exp2() - (a - top).exp2() - (b - top).exp2();
    if x == 0.0 {
        return 0.0;
    }
    let magnitude = top + x.abs().log2();
    let slog = if magnitude > 60.0 { magnitude } else { magnitude.exp2().ln_1p() / std::f64::consts::LN_2 };
    slog.copysign(x)
}

/// The features of contracting (legs a, leaves na) with (legs b, leaves nb), and the prior g.
fn features(network: &Network, a: &Legs, na: u32, b: &Legs, nb: u32) -> ([f32; FEATURES], f32) {
    let (sa, sb) = (network.size_of(a), network.size_of(b));
    let (union, merged) = network.merge(a, b);
    let result = network.size_of(&merged);
    let prior = greedy_prior(sa, sb, result);
    let ((big, nbig), (small, nsmall)) = if sa >= sb { ((sa, na), (sb, nb)) } else { ((sb, nb), (sa, na)) };
    let bits = |v: f64| (v as f32) / BITS;
    let tensors = (network.num_tensors().max(2) as f32).log2();
    (
        [
            bits(result - big),
            bits(small - big),
            bits(union - big),
            bits(sa + sb - union),
            bits(union - result),
            bits(big) / 4.0,
            (nbig as f32).log2() / tensors,
            (nsmall as f32).log2() / tensors,
            bits(prior) / 4.0,
        ],
        prior as f32,
    )
}

/// The policy's network in plain Rust: the logit of a pair from its features.
#[derive(Debug, Clone)]
pub struct PairScorer {
    pub config: PolicyConfig,
    w1: Vec<f32>,
    b1: Vec<f32>,
    w2: Vec<f32>,
    b2: Vec<f32>,
    w3: Vec<f32>,
    b3: f32,
    beta: f32,
}

impl PairScorer {
    pub fn logit(&self, x: &[f32; FEATURES], prior: f32) -> f32 {
        let h = self.config.hidden;
        let first: Vec<f32> = (0..h)
            .map(|j| {
                let row = &self.w1[j * FEATURES..(j + 1) * FEATURES];
                (self.b1[j] + row.iter().zip(x).map(|(w, v)| w * v).sum::<f32>()).tanh()
            })
            .collect();
        let mut out = self.b3;
        for j in 0..h {
            let row = &self.w2[j * h..(j + 1) * h];
            let second = (self.b2[j] + row.iter().zip(&first).map(|(w, v)| w * v).sum::<f32>()).tanh();
            out += self.w3[j] * second;
        }
        out - self.beta * prior
    }
}

/// How a rollout picks among the live pairs.
pub enum Choice<'r> {
    /// The highest logit (ties: the earliest created pair).
    Best,
    /// A draw from the softmax of the logits.
    Sample(&'r mut Xoshiro256PlusPlus),
}

/// What a sampled rollout records for the gradient: every candidate once, the decision steps
/// [birth, death) it was live for, and the candidate chosen at each step.
#[derive(Debug, Default)]
pub struct Episode {
    pub features: Vec<[f32; FEATURES]>,
    pub priors: Vec<f32>,
    pub birth: Vec<i64>,
    pub death: Vec<i64>,
    pub chosen: Vec<i64>,
}

struct Live {
    a: u32,
    b: u32,
    logit: f32,
    row: usize,
}

/// One rollout of the policy: the tree and, when `record`, its episode.
pub fn rollout(
    network: &Network,
    scorer: &PairScorer,
    mut choice: Choice<'_>,
    record: bool,
) -> (ContractionTree, Option<Episode>) {
    let n = network.num_tensors();
    let mut state = Contraction::new(network);
    let mut leaves: Vec<u32> = vec![1; n];
    let mut episode = Episode::default();
    let mut live: Vec<Live> = Vec::new();
    let mut decisions = 0i64;
    let add = |live: &mut Vec<Live>,
               episode: &mut Episode,
               (legs, leaves): (&[Option<Legs>], &[u32]),
               born: i64,
               a: u32,
               b: u32| {
        let (la, lb) = (legs[a as usize].as_ref().expect("live"), legs[b as usize].as_ref().expect("live"));
        let (x, prior) = features(network, la, leaves[a as usize], lb, leaves[b as usize]);
        let logit = scorer.logit(&x, prior);
        let row = episode.features.len();
        if record {
            episode.features.push(x);
            episode.priors.push(prior);
            episode.birth.push(born);
            episode.death.push(i64::MAX);
        }
        live.push(Live { a, b, logit, row });
    };
    let mut initial: Vec<(u32, u32)> = state
        .holders
        .iter()
        .flat_map(|h| {
            h.iter().enumerate().flat_map(move |(k, &a)| h[k + 1..].iter().map(move |&b| (a.min(b), a.max(b))))
        })
        .collect();
    initial.sort_unstable();
    initial.dedup();
    for (a, b) in initial {
        add(&mut live, &mut episode, (&state.legs, &leaves), 0, a, b);
    }
    while state.pairs.len() + 1 < n {
        let (a, b) = if live.is_empty() {
            // No live pair shares an index: an outer product (no decision).
            state.two_smallest(network)
        } else {
            let at = match &mut choice {
                Choice::Best => {
                    let mut best = 0;
                    for (k, c) in live.iter().enumerate() {
                        if c.logit > live[best].logit {
                            best = k;
                        }
                    }
                    best
                }
                Choice::Sample(rng) => {
                    let top = live.iter().map(|c| c.logit).fold(f32::NEG_INFINITY, f32::max);
                    let weights: Vec<f64> = live.iter().map(|c| f64::from(c.logit - top).exp()).collect();
                    weighted_pick(&weights, rng)
                }
            };
            if record {
                episode.chosen.push(live[at].row as i64);
            }
            decisions += 1;
            (live[at].a, live[at].b)
        };
        live.retain(|c| {
            let gone = c.a == a || c.a == b || c.b == a || c.b == b;
            if gone && record {
                episode.death[c.row] = decisions;
            }
            !gone
        });
        let (c, partners) = state.contract(network, a, b);
        leaves.push(leaves[a as usize] + leaves[b as usize]);
        for p in partners {
            add(&mut live, &mut episode, (&state.legs, &leaves), decisions, p, c);
        }
    }
    for death in &mut episode.death {
        *death = (*death).min(decisions);
    }
    (ContractionTree::from_ssa(n, state.pairs), record.then_some(episode))
}

/// The policy's greedy rollout.
pub fn policy_tree(network: &Network, scorer: &PairScorer) -> ContractionTree {
    rollout(network, scorer, Choice::Best, false).0
}

/// The trainable policy: f_theta and beta in one tch store.
pub struct PairPolicy {
    pub config: PolicyConfig,
    pub store: nn::VarStore,
    layers: nn::Sequential,
    beta: Tensor,
}

impl PairPolicy {
    pub fn new(config: PolicyConfig, device: Device) -> Self {
        let store = nn::VarStore::new(device);
        let root = store.root();
        let h = config.hidden as i64;
        let zero = nn::LinearConfig { ws_init: nn::Init::Const(0.0), bs_init: Some(nn::Init::Const(0.0)), bias: true };
        let layers = nn::seq()
            .add(nn::linear(&root / "l1", FEATURES as i64, h, Default::default()))
            .add_fn(Tensor::tanh)
            .add(nn::linear(&root / "l2", h, h, Default::default()))
            .add_fn(Tensor::tanh)
            .add(nn::linear(&root / "l3", h, 1, zero));
        let beta = root.var("beta", &[1], nn::Init::Const(config.initial_beta));
        PairPolicy { config, store, layers, beta }
    }

    /// Logits of a [P, FEATURES] feature table with its [P] priors.
    fn logits(&self, features: &Tensor, priors: &Tensor) -> Tensor {
        self.layers.forward(features).squeeze_dim(1) - &self.beta * priors
    }

    /// The plain-Rust copy of the current weights.
    pub fn scorer(&self) -> PairScorer {
        let vars = self.store.variables();
        let get = |name: &str| -> Vec<f32> {
            let t = vars.get(name).unwrap_or_else(|| panic!("variable {name}"));
            Vec::<f32>::try_from(t.to_device(Device::Cpu).to_kind(Kind::Float).flatten(0, -1)).expect("f32 weights")
        };
        PairScorer {
            config: self.config.clone(),
            w1: get("l1.weight"),
            b1: get("l1.bias"),
            w2: get("l2.weight"),
            b2: get("l2.bias"),
            w3: get("l3.weight"),
            b3: get("l3.bias")[0],
            beta: get("beta")[0],
        }
    }

    /// sum_t log pi(a_t | s_t) of one recorded episode.
    fn log_likelihood(&self, episode: &Episode, device: Device) -> Tensor {
        let rows = episode.features.len() as i64;
        let flat: Vec<f32> = episode.features.iter().flatten().copied().collect();
        let features = Tensor::from_slice(&flat).view([rows, FEATURES as i64]).to_device(device);
        let priors = Tensor::from_slice(&episode.priors).to_device(device);
        let logits = self.logits(&features, &priors);
        let steps = episode.chosen.len() as i64;
        let t = Tensor::arange(steps, (Kind::Int64, device)).unsqueeze(1);
        let birth = Tensor::from_slice(&episode.birth).to_device(device).unsqueeze(0);
        let death = Tensor::from_slice(&episode.death).to_device(device).unsqueeze(0);
        let alive = t.ge_tensor(&birth).logical_and(&t.lt_tensor(&death));
        let masked =
            logits.unsqueeze(0).expand([steps, rows], false).masked_fill(&alive.logical_not(), f64::NEG_INFINITY);
        let normaliser = masked.logsumexp([1], false);
        let chosen = logits.index_select(0, &Tensor::from_slice(&episode.chosen).to_device(device));
        (chosen - normaliser).sum(Kind::Float)
    }

    /// REINFORCE with the shared baseline (module doc); returns the policy and the training
    /// curve (`supervised::train`): the mean log10 cost of the sampled rollouts minus greedy's
    /// over each tenth of the steps.
    pub fn train(
        config: PolicyConfig,
        training: &PolicyTraining,
        device: Device,
        hooks: &crate::hooks::RunHooks,
    ) -> Result<(PairPolicy, Vec<(usize, f64)>)> {
        // The hidden layers' initial weights come from torch's generator.
        let policy = crate::seed::seeded(training.seed, || PairPolicy::new(config, device));
        let run = crate::supervised::LoopConfig::new(training.steps, training.learning_rate, training.seed);
        let curve = crate::supervised::train(&mut Reinforce { policy: &policy, training, device }, run, hooks)?;
        Ok((policy, curve))
    }
}

/// REINFORCE's step (module doc): rollouts sampled on fresh networks, their advantages over the
/// group's mean cost, the loss minus the advantage-weighted log-likelihood; the figure is the
/// rollouts' mean log10 cost gap to greedy.
struct Reinforce<'a> {
    policy: &'a PairPolicy,
    training: &'a PolicyTraining,
    device: Device,
}

impl crate::supervised::PolicyTrainer for Reinforce<'_> {
    fn store(&self) -> &nn::VarStore {
        &self.policy.store
    }

    fn describe(&self, gap: f64) -> String {
        format!("log10 gap to greedy {gap:.4}")
    }

    fn max_grad_norm(&self) -> Option<f64> {
        Some(1.0)
    }

    fn step(&mut self, step: usize, rng: &mut ChaCha8Rng) -> (Tensor, f64) {
        let (policy, training, device) = (self.policy, self.training, self.device);
        let networks: Vec<Network> = (0..training.instances).map(|_| draw_network(rng, training)).collect();
        let greedy: Vec<f64> = networks.par_iter().map(|n| super::greedy::greedy(n).cost(n).log10_flops()).collect();
        let scorer = policy.scorer();
        let jobs: Vec<(usize, usize)> =
            (0..networks.len()).flat_map(|i| (0..training.rollouts).map(move |k| (i, k))).collect();
        let episodes: Vec<(f64, Episode)> = jobs
            .par_iter()
            .map(|&(i, k)| {
                let mut chain = crate::search::chain_rng(training.seed, step, i * training.rollouts + k);
                let (tree, episode) = rollout(&networks[i], &scorer, Choice::Sample(&mut chain), true);
                (tree.cost(&networks[i]).log10_flops(), episode.expect("recorded"))
            })
            .collect();
        let k = training.rollouts;
        let mut advantages: Vec<f64> = episodes
            .iter()
            .enumerate()
            .map(|(j, (cost, _))| {
                let group = &episodes[(j / k) * k..(j / k + 1) * k];
                group.iter().map(|(c, _)| c).sum::<f64>() / k as f64 - cost
            })
            .collect();
        let spread = (advantages.iter().map(|a| a * a).sum::<f64>() / advantages.len() as f64).sqrt();
        advantages.iter_mut().for_each(|a| *a /= spread.max(1e-6));
        let mean_gap =
            episodes.iter().enumerate().map(|(j, (c, _))| c - greedy[j / k]).sum::<f64>() / episodes.len() as f64;
        let mut loss = Tensor::zeros([], (Kind::Float, device));
        for ((_, episode), advantage) in episodes.iter().zip(&advantages) {
            if episode.chosen.is_empty() || *advantage == 0.0 {
                continue;
            }
            loss -= policy.log_likelihood(episode, device) * *advantage;
        }
        (loss / episodes.len() as f64, mean_gap)
    }
}

/// A generated circuit of the training distribution.
fn draw_network(rng: &mut ChaCha8Rng, training: &PolicyTraining) -> Network {
    let qubits = rng.gen_range(training.min_qubits..=training.max_qubits);
    let cycles = rng.gen_range(training.min_cycles..=training.max_cycles);
    let seed = rng.gen::<u64>();
    let limits = crate::problems::Limits::default();
    super::parse_einsum(&super::generate::random_circuit(qubits, cycles, seed), &limits)
        .expect("generated circuits are valid networks")
}

/// Held-out comparison with greedy on `count` fresh circuits of the training distribution drawn
/// from `seed`: the policy's and greedy's log10 costs, mean and median of greedy minus policy,
/// and the share where the policy is below greedy.
pub fn validate(scorer: &PairScorer, training: &PolicyTraining, count: usize, seed: u64) -> serde_json::Value {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let networks: Vec<Network> = (0..count).map(|_| draw_network(&mut rng, training)).collect();
    let (policy, greedy): (Vec<f64>, Vec<f64>) = networks
        .par_iter()
        .map(|n| (policy_tree(n, scorer).cost(n).log10_flops(), super::greedy::greedy(n).cost(n).log10_flops()))
        .unzip();
    let mut gains: Vec<f64> = greedy.iter().zip(&policy).map(|(g, p)| g - p).collect();
    gains.sort_by(f64::total_cmp);
    serde_json::json!({
        "networks": count,
        "seed": seed,
        "mean_gain_over_greedy_log10": gains.iter().sum::<f64>() / count.max(1) as f64,
        "median_gain_over_greedy_log10": gains.get(count / 2).copied().unwrap_or(0.0),
        "share_below_greedy": gains.iter().filter(|&&g| g > 1e-9).count() as f64 / count.max(1) as f64,
        "mean_policy_log10": policy.iter().sum::<f64>() / count.max(1) as f64,
        "mean_greedy_log10": greedy.iter().sum::<f64>() / count.max(1) as f64,
    })
}

/// The registry's loader of `tensor_network` models.
pub fn load(manifest: &Manifest, dir: &Path) -> Result<LoadedPolicy> {
    let config: PolicyConfig = serde_json::from_value(manifest.architecture.clone()).context("architecture")?;
    let mut policy = PairPolicy::new(config, Device::Cpu);
    policy.store.load(dir.join(WEIGHTS_FILE)).context("weights do not match the architecture")?;
    Ok(Box::new(policy.scorer()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn circuit(qubits: usize, cycles: usize, seed: u64) -> Network {
        super::super::parse_einsum(
            &super::super::generate::random_circuit(qubits, cycles, seed),
            &crate::problems::Limits::default(),
        )
        .unwrap()
    }

    #[test]
    fn the_untrained_policy_follows_greedys_score_and_matches_its_tch_network() {
        let policy = PairPolicy::new(PolicyConfig::default(), Device::Cpu);
        let scorer = policy.scorer();
        for seed in 0..4 {
            // Every step contracts a live pair of greedy's best score (the lowest prior).
            let network = circuit(20, 8, seed);
            let (_, episode) = rollout(&network, &scorer, Choice::Best, true);
            let episode = episode.unwrap();
            for (step, &chosen) in episode.chosen.iter().enumerate() {
                let step = step as i64;
                let best = (0..episode.priors.len())
                    .filter(|&r| episode.birth[r] <= step && step < episode.death[r])
                    .map(|r| episode.priors[r])
                    .fold(f32::INFINITY, f32::min);
                assert_eq!(episode.priors[chosen as usize], best, "seed {seed}, step {step}");
            }
        }
        let network = circuit(16, 6, 9);
        let mut rng = crate::search::chain_rng(1, 0, 0);
        let (_, episode) = rollout(&network, &scorer, Choice::Sample(&mut rng), true);
        let episode = episode.unwrap();
        let rows = episode.features.len() as i64;
        let flat: Vec<f32> = episode.features.iter().flatten().copied().collect();
        let tch = policy
            .logits(&Tensor::from_slice(&flat).view([rows, FEATURES as i64]), &Tensor::from_slice(&episode.priors));
        let tch = Vec::<f32>::try_from(tch).unwrap();
        for (k, (x, p)) in episode.features.iter().zip(&episode.priors).enumerate() {
            assert!((scorer.logit(x, *p) - tch[k]).abs() < 1e-3 * (1.0 + tch[k].abs()), "row {k}");
        }
        assert_eq!(episode.chosen.len() + 1, network.num_tensors());
    }

    #[test]
    fn a_short_training_run_improves_on_its_untrained_start() {
        let training = PolicyTraining {
            steps: 25,
            instances: 4,
            rollouts: 4,
            min_qubits: 12,
            max_qubits: 20,
            min_cycles: 6,
            max_cycles: 8,
            ..PolicyTraining::default()
        };
        let (policy, curve) =
            PairPolicy::train(PolicyConfig::default(), &training, Device::Cpu, &Default::default()).unwrap();
        assert_eq!(curve.len(), 10, "a point per tenth of the steps");
        // The same seed gives the same weights.
        let short = PolicyTraining { steps: 3, ..training.clone() };
        let weights = |p: &PairPolicy| Vec::<f32>::try_from(p.store.variables()["l1.weight"].flatten(0, -1)).unwrap();
        let (once, _) = PairPolicy::train(PolicyConfig::default(), &short, Device::Cpu, &Default::default()).unwrap();
        let (twice, _) = PairPolicy::train(PolicyConfig::default(), &short, Device::Cpu, &Default::default()).unwrap();
        assert_eq!(weights(&once), weights(&twice));
        let trained = validate(&policy.scorer(), &training, 16, 77);
        let untrained = validate(&PairPolicy::new(PolicyConfig::default(), Device::Cpu).scorer(), &training, 16, 77);
        let gain = |v: &serde_json::Value| v["mean_gain_over_greedy_log10"].as_f64().unwrap();
        assert!(gain(&trained) > gain(&untrained), "trained {trained} vs untrained {untrained}");
    }
}
