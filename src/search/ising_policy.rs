//! The pretrained Ising policy: a message-passing network over the couplings that
//! maps any Ising model H(s) = sum J_ij s_i s_j + sum h_i s_i to per-spin probabilities, the
//! sampling policy of MCPG (Chen et al. 2023) made size-independent and trained once on
//! distributions of graphs instead of per instance.
//!
//! Each of `layers` layers is one round of messages: spin i receives its normalized local field
//! f_i = -(sum_j J_ij x_j + h_i) / (sum_j |J_ij| + |h_i|) from the soft spins x in (-1, 1), and
//! updates
//!   x_i <- tanh(exp(beta_l + a_i) f_i + (gamma_l + b_i) x_i),  (a_i, b_i) = MLP(x_i^2, f_i^2, x_i f_i, l / L),
//! with one MLP shared by every node and layer and the per-layer beta_l, gamma_l its learned
//! annealing schedule (beta_l starts as a geometric ramp: mean-field annealing, which the MLP then
//! corrects). The update is odd in (x, f), so with h = 0 it respects the spin-flip symmetry, and
//! the field's coefficient is positive, so a spin never learns to move against its field: the
//! prototypes without either collapsed to the all-equal state on ferromagnetic training graphs. Random soft starts x^0 ~ U(-0.1, 0.1) break the symmetry; B chains give B
//! samples.
//!
//! Training minimizes the policy's expected energy E_{s ~ p}[H(s)] = sum J_ij x_i x_j + sum h_i
//! x_i (exact for independent spins with means x: the REINFORCE objective of MCPG's sampler, whose
//! gradient is here taken in closed form instead of by sampling), normalized by sum |J| + sum |h|,
//! on graphs drawn fresh every step (`TrainingGraphs`). Answers: sign(x), then a greedy descent
//! (steepest single flips) per chain, the best chain kept.

use crate::models::{LoadedPolicy, Manifest, ModelRegistry, RegisteredModel, WEIGHTS_FILE};
use crate::problems::random::standard_normal;
use crate::search::ising::{IsingModel, IsingTensors};
use crate::search::tabu::greedy_descent;
use anyhow::{Context, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::path::Path;
use std::sync::Mutex;
use tch::nn::Module;
use tch::{nn, Device, Kind, Tensor};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct IsingPolicyConfig {
    /// Message-passing layers (rounds of soft-spin updates).
    pub layers: usize,
    /// Width of the node MLP's two hidden layers.
    pub hidden: i64,
}

impl Default for IsingPolicyConfig {
    fn default() -> Self {
        IsingPolicyConfig { layers: 32, hidden: 16 }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IsingPolicyTraining {
    /// Gradient steps, one fresh graph each.
    pub steps: usize,
    /// Chains (random starts) per graph.
    pub chains: usize,
    pub learning_rate: f64,
    /// Graph sizes, log-uniform in [min_nodes, max_nodes].
    pub min_nodes: usize,
    pub max_nodes: usize,
    pub seed: u64,
}

impl Default for IsingPolicyTraining {
    fn default() -> Self {
        IsingPolicyTraining { steps: 1500, chains: 16, learning_rate: 3e-3, min_nodes: 100, max_nodes: 2000, seed: 0 }
    }
}

/// What the training graphs are drawn from, for the manifest.
pub const TRAINING_DATA: &str = "graphs drawn on the fly by ChaCha8 from the seed (search::ising_policy::training_model): Erdos-Renyi (mean degree 2-30), Barabasi-Albert (1-10 edges per new node), random regular (degree 3-16), 2-D toroidal and planar grids; weights all +1, +-1 or N(0, 1), each with probability 1/3; sizes log-uniform in [min_nodes, max_nodes]; none stored, never a Gset file";

/// One of the training distribution's models (no fields: Max-Cut-like), `n` nodes or the
/// nearest square for the grids.
pub fn training_model(rng: &mut ChaCha8Rng, n: usize) -> IsingModel {
    let n = n.max(4);
    let mut edges: HashSet<(u32, u32)> = HashSet::new();
    let add = |edges: &mut HashSet<(u32, u32)>, u: usize, v: usize| {
        if u != v {
            edges.insert((u.min(v) as u32, u.max(v) as u32));
        }
    };
    let mut nodes = n;
    match rng.gen_range(0..5) {
        0 => {
            let target = (rng.gen_range(2.0..30.0) * n as f64 / 2.0) as usize;
            while edges.len() < target.min(n * (n - 1) / 2) {
                let (u, v) = (rng.gen_range(0..n), rng.gen_range(0..n));
                add(&mut edges, u, v);
            }
        }
        1 => {
            let k = rng.gen_range(1..=10usize).min(n - 1);
            let mut ends: Vec<usize> = Vec::new();
            for i in 0..=k {
                for j in 0..i {
                    add(&mut edges, i, j);
                    ends.extend([i, j]);
                }
            }
            for v in k + 1..n {
                // A Vec, not a HashSet: its order feeds `ends`, and a HashSet's varies per run.
                let mut chosen = Vec::with_capacity(k);
                while chosen.len() < k {
                    let u = ends[rng.gen_range(0..ends.len())];
                    if !chosen.contains(&u) {
                        chosen.push(u);
                    }
                }
                for u in chosen {
                    add(&mut edges, u, v);
                    ends.extend([u, v]);
                }
            }
        }
        2 => {
            let degree = rng.gen_range(3..=16usize);
            let mut stubs: Vec<usize> = (0..n).flat_map(|i| std::iter::repeat_n(i, degree)).collect();
            for i in (1..stubs.len()).rev() {
                stubs.swap(i, rng.gen_range(0..=i));
            }
            for pair in stubs.chunks_exact(2) {
                add(&mut edges, pair[0], pair[1]);
            }
        }
        grid => {
            let side = (n as f64).sqrt().round().max(2.0) as usize;
            nodes = side * side;
            let periodic = grid == 3;
            for r in 0..side {
                for c in 0..side {
                    let i = r * side + c;
                    if periodic || c + 1 < side {
                        add(&mut edges, i, r * side + (c + 1) % side);
                    }
                    if periodic || r + 1 < side {
                        add(&mut edges, i, ((r + 1) % side) * side + c);
                    }
                }
            }
        }
    }
    let mut edges: Vec<(u32, u32)> = edges.into_iter().collect();
    edges.sort_unstable();
    let weights = rng.gen_range(0..3);
    let couplings = edges
        .into_iter()
        .map(|(u, v)| {
            let w = match weights {
                0 => 1.0,
                1 => {
                    if rng.gen_bool(0.5) {
                        1.0
                    } else {
                        -1.0
                    }
                }
                _ => standard_normal(rng),
            };
            (u, v, w)
        })
        .collect();
    IsingModel::new(nodes, couplings, vec![])
}

/// An Ising model as the network's tensors: the model's own (`IsingModel::tensors`: couplings
/// once each, fields), both directions of every coupling for the messages, and the per-spin
/// normalizer 1 / (sum_j |J_ij| + |h_i|).
struct GraphTensors {
    ising: IsingTensors,
    source: Tensor,
    target: Tensor,
    weight: Tensor,
    inverse_norm: Tensor,
    /// sum |J| + sum |h|.
    total: f64,
}

impl GraphTensors {
    fn new(model: &IsingModel, device: Device) -> Self {
        let n = model.num_spins();
        let mut norm: Vec<f64> = (0..n).map(|i| model.field(i).abs()).collect();
        for &(i, j, w) in model.couplings() {
            norm[i as usize] += w.abs();
            norm[j as usize] += w.abs();
        }
        let total = model.couplings().iter().map(|c| c.2.abs()).sum::<f64>()
            + (0..n).map(|i| model.field(i).abs()).sum::<f64>();
        let inverse: Vec<f32> = norm.iter().map(|&s| if s > 0.0 { (1.0 / s) as f32 } else { 0.0 }).collect();
        let ising = model.tensors(device);
        GraphTensors {
            source: Tensor::cat(&[&ising.rows, &ising.cols], 0),
            target: Tensor::cat(&[&ising.cols, &ising.rows], 0),
            weight: Tensor::cat(&[&ising.weights, &ising.weights], 0),
            inverse_norm: Tensor::from_slice(&inverse).to(device),
            total: total.max(1e-12),
            ising,
        }
    }

    /// Local fields sum_j J_ij x_j + h_i of soft spins x [B, n].
    fn local_fields(&self, x: &Tensor) -> Tensor {
        let messages = x.index_select(1, &self.source) * &self.weight;
        x.zeros_like().index_add(1, &self.target, &messages) + &self.ising.fields
    }

    /// H at soft spins x [B, n] (the expected energy of independent spins with means x),
    /// divided by sum |J| + sum |h|: [B].
    fn normalized_energy(&self, x: &Tensor) -> Tensor {
        self.ising.hamiltonian(x) / self.total
    }
}

pub struct IsingPolicy {
    pub config: IsingPolicyConfig,
    pub store: nn::VarStore,
    mlp: nn::Sequential,
    log_beta: Tensor,
    gamma: Tensor,
}

impl IsingPolicy {
    pub fn new(config: IsingPolicyConfig, device: Device) -> Self {
        let store = nn::VarStore::new(device);
        let root = store.root();
        let h = config.hidden;
        let mlp = nn::seq()
            .add(nn::linear(&root / "node1", 4, h, Default::default()))
            .add_fn(|x| x.tanh())
            .add(nn::linear(&root / "node2", h, h, Default::default()))
            .add_fn(|x| x.tanh())
            .add(nn::linear(
                &root / "node_out",
                h,
                2,
                nn::LinearConfig { ws_init: nn::Init::Const(0.0), bs_init: Some(nn::Init::Const(0.0)), bias: true },
            ));
        let layers = config.layers.max(1) as i64;
        // Mean-field annealing's ramp of inverse temperatures, 0.3 to 6, to start from.
        let ramp = Tensor::linspace(0.3f64.ln(), 6.0f64.ln(), layers, (Kind::Float, device));
        let log_beta = root.var_copy("log_beta", &ramp);
        let gamma = root.zeros("gamma", &[layers]);
        IsingPolicy { config, store, mlp, log_beta, gamma }
    }

    /// Soft spins [B, n] after the last layer, from starts x0 [B, n].
    fn forward(&self, graph: &GraphTensors, x0: &Tensor) -> Tensor {
        let layers = self.config.layers.max(1) as i64;
        let mut x = x0.shallow_clone();
        for l in 0..layers {
            let f = -(graph.local_fields(&x) * &graph.inverse_norm);
            let clock = x.full_like(l as f64 / layers as f64);
            let features = Tensor::stack(&[&x * &x, &f * &f, &x * &f, clock], -1);
            let out = self.mlp.forward(&features);
            let (a, b) = (out.select(-1, 0), out.select(-1, 1));
            x = ((self.log_beta.get(l) + a).exp() * &f + (self.gamma.get(l) + b) * &x).tanh();
        }
        x
    }

    /// Uniform soft starts in (-0.1, 0.1) [chains, n] from `seed`.
    fn starts(&self, n: usize, chains: usize, seed: u64) -> Tensor {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let values: Vec<f32> = (0..chains * n).map(|_| rng.gen_range(-0.1f32..0.1)).collect();
        Tensor::from_slice(&values).view([chains as i64, n as i64]).to(self.store.device())
    }

    /// The policy's per-spin probabilities P(s_i = +1) of `chains` samples [chains][n].
    pub fn probabilities(&self, model: &IsingModel, chains: usize, seed: u64) -> Vec<Vec<f32>> {
        let graph = GraphTensors::new(model, self.store.device());
        let x = tch::no_grad(|| self.forward(&graph, &self.starts(model.num_spins(), chains, seed)));
        let p: Vec<f32> = ((x + 1.0) * 0.5).to_device(Device::Cpu).flatten(0, 1).try_into().expect("f32");
        p.chunks(model.num_spins().max(1)).map(<[f32]>::to_vec).collect()
    }

    /// `chains` answers: each chain's sign(x), greedily descended; (spins, energy), lowest first.
    pub fn sample(&self, model: &IsingModel, chains: usize, seed: u64) -> Vec<(Vec<i8>, f64)> {
        let mut answers: Vec<(Vec<i8>, f64)> = self
            .probabilities(model, chains.max(1), seed)
            .into_par_iter()
            .map(|p| {
                let mut spins: Vec<i8> = p.iter().map(|&q| if q >= 0.5 { 1 } else { -1 }).collect();
                let energy = greedy_descent(model, &mut spins);
                (spins, energy)
            })
            .collect();
        answers.sort_by(|a, b| a.1.total_cmp(&b.1));
        answers
    }

    /// Trains a fresh policy; returns it with (step, mean normalized energy over the last tenth).
    pub fn train(
        config: IsingPolicyConfig,
        training: &IsingPolicyTraining,
        device: Device,
        hooks: &crate::hooks::RunHooks,
    ) -> Result<(Self, Vec<(usize, f64)>)> {
        let policy = crate::seed::seeded(training.seed, || IsingPolicy::new(config, device));
        let run = crate::supervised::LoopConfig::new(training.steps, training.learning_rate, training.seed);
        let curve = crate::supervised::train(&mut EnergyTrainer { policy: &policy, training, device }, run, hooks)?;
        Ok((policy, curve))
    }
}

/// The Ising policy's step: the mean normalized energy of its answers on a fresh graph of the
/// training distribution, sizes log-uniform in [min_nodes, max_nodes].
struct EnergyTrainer<'a> {
    policy: &'a IsingPolicy,
    training: &'a IsingPolicyTraining,
    device: Device,
}

impl crate::supervised::PolicyTrainer for EnergyTrainer<'_> {
    fn store(&self) -> &nn::VarStore {
        &self.policy.store
    }

    fn step(&mut self, _step: usize, rng: &mut ChaCha8Rng) -> (Tensor, f64) {
        let t = self.training;
        let (low, high) = ((t.min_nodes.max(4) as f64).ln(), (t.max_nodes.max(4) as f64).ln());
        let n = rng.gen_range(low..=high).exp().round() as usize;
        let model = training_model(rng, n);
        let graph = GraphTensors::new(&model, self.device);
        let x0 = self.policy.starts(model.num_spins(), t.chains.max(1), rng.gen());
        let loss = graph.normalized_energy(&self.policy.forward(&graph, &x0)).mean(Kind::Float);
        let value = loss.double_value(&[]);
        (loss, value)
    }

    fn describe(&self, energy: f64) -> String {
        format!("normalized energy {energy:.4}")
    }

    fn max_grad_norm(&self) -> Option<f64> {
        Some(1.0)
    }
}

/// Validation on `graphs` fresh training-distribution graphs drawn from `seed`: the mean
/// normalized energy (H / sum |J|, lower is better) of the policy's best of `chains` answers and
/// of the best of `chains` greedy descents from uniformly random spins, and the policy's mean
/// milliseconds per graph (network and polish).
pub fn validate(
    policy: &IsingPolicy,
    training: &IsingPolicyTraining,
    graphs: usize,
    chains: usize,
    seed: u64,
) -> serde_json::Value {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (low, high) = ((training.min_nodes.max(4) as f64).ln(), (training.max_nodes.max(4) as f64).ln());
    let (mut learned, mut greedy, mut wins, mut ms) = (0.0, 0.0, 0usize, 0.0);
    for g in 0..graphs {
        let n = rng.gen_range(low..=high).exp().round() as usize;
        let model = training_model(&mut rng, n);
        let norm: f64 = model.couplings().iter().map(|c| c.2.abs()).sum::<f64>().max(1e-12);
        let start = std::time::Instant::now();
        let best = policy.sample(&model, chains, seed.wrapping_add(g as u64))[0].1;
        ms += start.elapsed().as_secs_f64() * 1e3;
        let mut starts = ChaCha8Rng::seed_from_u64(seed.wrapping_add(g as u64));
        let random_best = (0..chains)
            .map(|_| {
                let mut spins: Vec<i8> =
                    (0..model.num_spins()).map(|_| if starts.gen_bool(0.5) { 1 } else { -1 }).collect();
                greedy_descent(&model, &mut spins)
            })
            .fold(f64::INFINITY, f64::min);
        learned += best / norm;
        greedy += random_best / norm;
        wins += usize::from(best < random_best - 1e-9);
    }
    let count = graphs.max(1) as f64;
    serde_json::json!({
        "graphs": graphs, "chains": chains, "seed": seed,
        "policy_normalized_energy": learned / count, "greedy_normalized_energy": greedy / count,
        "policy_beats_greedy_on": wins, "policy_ms_per_graph": ms / count,
    })
}

/// The registry's first Ising policy, with its entry (the default of every Ising problem).
pub fn find_in(registry: &ModelRegistry) -> Option<(&Mutex<IsingPolicy>, &RegisteredModel)> {
    registry.models.iter().find_map(|m| m.policy::<Mutex<IsingPolicy>>().map(|p| (p, m)))
}

/// The model registry's loader for `ising` manifests.
pub fn load(manifest: &Manifest, dir: &Path) -> Result<LoadedPolicy> {
    let config: IsingPolicyConfig = serde_json::from_value(manifest.architecture.clone()).context("architecture")?;
    let mut policy = IsingPolicy::new(config, Device::Cpu);
    policy.store.load(dir.join(WEIGHTS_FILE)).context("weights do not match the architecture")?;
    Ok(Box::new(Mutex::new(policy)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute_force(model: &IsingModel) -> f64 {
        let n = model.num_spins();
        (0..1u32 << n)
            .map(|mask| model.energy(&(0..n).map(|i| if mask >> i & 1 == 1 { 1 } else { -1 }).collect::<Vec<i8>>()))
            .fold(f64::INFINITY, f64::min)
    }

    #[test]
    fn soft_energy_at_corners_is_the_model_energy_over_the_norm() {
        let model = IsingModel::new(4, vec![(0, 1, 1.0), (1, 2, -2.0), (0, 3, 0.5)], vec![0.0, 1.0, 0.0, -1.0]);
        let graph = GraphTensors::new(&model, Device::Cpu);
        let spins = [1i8, -1, -1, 1];
        let x = Tensor::from_slice(&spins.map(f32::from)).view([1, 4]);
        let soft = graph.normalized_energy(&x).double_value(&[0]) * graph.total;
        assert!((soft - model.energy(&spins)).abs() < 1e-5, "{soft} vs {}", model.energy(&spins));
        assert!((graph.total - 5.5).abs() < 1e-12);
    }

    #[test]
    fn training_graphs_are_simple_and_of_the_asked_size() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for _ in 0..40 {
            let n = rng.gen_range(20..200);
            let model = training_model(&mut rng, n);
            let side = (n as f64).sqrt().round() as usize;
            assert!(model.num_spins() == n || model.num_spins() == side * side);
            let mut seen = HashSet::new();
            for &(i, j, w) in model.couplings() {
                assert!(i < j && (j as usize) < model.num_spins() && w.is_finite());
                assert!(seen.insert((i, j)));
            }
        }
    }

    #[test]
    fn without_fields_the_untrained_dynamics_is_odd_and_short_training_lowers_the_energy() {
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let model = training_model(&mut rng, 60);
        let config = IsingPolicyConfig { layers: 6, hidden: 8 };
        let policy = IsingPolicy::new(config.clone(), Device::Cpu);
        let graph = GraphTensors::new(&model, Device::Cpu);
        let x0 = policy.starts(model.num_spins(), 3, 1);
        let (plus, minus) = tch::no_grad(|| (policy.forward(&graph, &x0), policy.forward(&graph, &-&x0)));
        assert!((plus + minus).abs().max().double_value(&[]) < 1e-6);

        let training =
            IsingPolicyTraining { steps: 60, chains: 4, learning_rate: 1e-2, min_nodes: 30, max_nodes: 80, seed: 1 };
        let (trained, curve) = IsingPolicy::train(config.clone(), &training, Device::Cpu, &Default::default()).unwrap();
        assert_eq!(curve.len(), 10);
        let (again, _) = IsingPolicy::train(config, &training, Device::Cpu, &Default::default()).unwrap();
        assert_eq!(trained.sample(&model, 4, 2), again.sample(&model, 4, 2), "same seed, same policy");
        let mean_energy = |p: &IsingPolicy| {
            let x = tch::no_grad(|| p.forward(&graph, &p.starts(model.num_spins(), 8, 5)));
            graph.normalized_energy(&x).mean(Kind::Float).double_value(&[])
        };
        assert!(mean_energy(&trained) < mean_energy(&policy) - 0.02);
    }

    #[test]
    fn answers_are_greedy_local_minima_scored_exactly_and_reach_small_ground_states() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let mut couplings = Vec::new();
        for i in 0..12u32 {
            for j in i + 1..12 {
                if rng.gen_bool(0.4) {
                    couplings.push((i, j, standard_normal(&mut rng)));
                }
            }
        }
        let model = IsingModel::new(12, couplings, vec![]);
        let policy = IsingPolicy::new(IsingPolicyConfig { layers: 8, hidden: 8 }, Device::Cpu);
        let answers = policy.sample(&model, 64, 9);
        assert_eq!(answers.len(), 64);
        for (spins, energy) in &answers {
            assert!((model.energy(spins) - energy).abs() < 1e-9);
            let mut fields = vec![0.0; 12];
            model.local_fields(spins, &mut fields);
            assert!((0..12).all(|i| -2.0 * f64::from(spins[i]) * fields[i] >= -1e-9), "not a local minimum");
        }
        assert!(answers.windows(2).all(|w| w[0].1 <= w[1].1));
        assert!((answers[0].1 - brute_force(&model)).abs() < 1e-9, "64 starts find the ground state of 12 spins");
    }
}
