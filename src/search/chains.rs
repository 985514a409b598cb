//! The B chains of the search and their two backends: native (rayon over chains, one Metropolis
//! kernel and one tabu kernel per chain) and tensor (every chain at once as batched tensor ops,
//! for an accelerator). Both advance the same policy-regularized dynamics and polish with the
//! same tabu rule, over the same `IsingModel`.

use super::tabu::{tabu_search, TabuParams, TabuWorkspace};
use super::{anneal, chain_rng, tensor_anneal, tensor_tabu};
use crate::search::ising::{spins_to_tensor, IsingModel, IsingTensors};
use rand::Rng;
use rayon::prelude::*;
use std::time::Instant;
use tch::{Device, Kind, Tensor};

/// Which kernels advance and polish the chains.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// Per-chain native kernels on CPU threads.
    Native,
    /// Batched tensor ops on the search's device.
    Tensor,
    /// Simulated bifurcation on the search's device, every spin per step (lockstep.rs).
    Bifurcation,
    /// Colour-class parallel tempering on the search's device (lockstep.rs).
    Tempering,
}

/// Below this much work per chain and round (Metropolis proposals plus tabu flips times n) the
/// chains run one after another in the calling thread: handing a round to the thread pool and
/// back cost more than it saved on a 32-node graph, and under concurrent requests the cores are
/// busy with other solves anyway.
const PARALLEL_MIN_WORK: usize = 100_000;

/// Runs `f` on every item, on rayon's pool when `parallel`.
fn for_each_chain<T: Send>(parallel: bool, items: Vec<T>, f: impl Fn(T) + Sync + Send) {
    if parallel {
        items.into_par_iter().for_each(f);
    } else {
        items.into_iter().for_each(f);
    }
}

/// Maps every item with a per-thread scratch value from `init`, on rayon's pool when `parallel`.
fn map_chains<T: Send, S, R: Send>(
    parallel: bool,
    items: Vec<T>,
    init: impl Fn() -> S + Sync + Send,
    f: impl Fn(&mut S, T) -> R + Sync + Send,
) -> Vec<R> {
    if parallel {
        items.into_par_iter().map_init(init, f).collect()
    } else {
        let mut scratch = init();
        items.into_iter().map(|item| f(&mut scratch, item)).collect()
    }
}

/// Per-round work of one chain.
#[derive(Debug, Clone, Copy)]
pub struct RoundWork {
    /// Native: single-spin Metropolis proposals per chain.
    pub metropolis_steps: usize,
    /// Tensor: synchronous subset-update steps per round.
    pub tensor_steps: usize,
    /// Tensor: probability that a spin is proposed in a subset-update step.
    pub proposal_fraction: f64,
    pub tabu: TabuParams,
}

pub enum Chains<'a> {
    Native { model: &'a IsingModel, states: Vec<i8>, fields: Vec<f64>, energies: Vec<f64>, parallel: bool },
    Tensor { model: &'a IsingModel, tensors: IsingTensors, dense: Tensor, spins: Tensor, fields: Tensor },
}

fn random_spins(len: usize, seed: u64, round: usize) -> Vec<i8> {
    let mut rng = chain_rng(seed, round, usize::MAX >> 2);
    (0..len).map(|_| if rng.gen_bool(0.5) { 1 } else { -1 }).collect()
}

impl<'a> Chains<'a> {
    /// B chains from uniformly random spins drawn from `seed`, each doing `work` per round.
    pub fn new(
        model: &'a IsingModel,
        backend: Backend,
        device: Device,
        chains: usize,
        seed: u64,
        work: &RoundWork,
    ) -> Self {
        let n = model.num_spins();
        let states = random_spins(chains * n, seed, usize::MAX);
        match backend {
            Backend::Native => {
                let parallel = work.metropolis_steps + work.tabu.steps * n >= PARALLEL_MIN_WORK;
                let mut chains = Chains::Native {
                    model,
                    states,
                    fields: vec![0.0; chains * n],
                    energies: vec![0.0; chains],
                    parallel,
                };
                chains.refresh();
                chains
            }
            Backend::Tensor | Backend::Bifurcation | Backend::Tempering => {
                let tensors = model.tensors(device);
                let dense = tensors.dense_couplings();
                let spins = spins_to_tensor(&states, chains, n, device);
                let fields = spins.matmul(&dense) + &tensors.fields;
                Chains::Tensor { model, tensors, dense, spins, fields }
            }
        }
    }

    fn len(&self) -> usize {
        match self {
            Chains::Native { energies, .. } => energies.len(),
            Chains::Tensor { spins, .. } => spins.size()[0] as usize,
        }
    }

    /// Recomputes the native fields and energies from the states.
    fn refresh(&mut self) {
        if let Chains::Native { model, states, fields, energies, parallel } = self {
            let n = model.num_spins();
            let items: Vec<_> = states.chunks(n).zip(fields.chunks_mut(n)).zip(energies.iter_mut()).collect();
            for_each_chain(*parallel, items, |((s, f), e)| {
                model.local_fields(s, f);
                *e = model.energy(s);
            });
        }
    }

    /// One round of Metropolis dynamics from `temperatures.0` to `.1`. `log_odds` are the
    /// policy's in the gauge s_0 = +1; with spin-flip symmetry each chain maps them to its own
    /// gauge, else `gauge_fixed` is false and they apply as they are.
    #[allow(clippy::too_many_arguments)]
    pub fn advance(
        &mut self,
        log_odds: &[f32],
        gauge_fixed: bool,
        temperatures: (f64, f64),
        work: &RoundWork,
        seed: u64,
        round: usize,
        deadline: Instant,
    ) {
        match self {
            Chains::Native { model, states, fields, energies, parallel } => {
                let n = model.num_spins();
                let items: Vec<_> =
                    states.chunks_mut(n).zip(fields.chunks_mut(n)).zip(energies.iter_mut()).enumerate().collect();
                for_each_chain(*parallel, items, |(c, ((state, field), energy))| {
                    let mut rng = chain_rng(seed, round, c);
                    let sign = if gauge_fixed { state[0] } else { 1 };
                    *energy += anneal::metropolis(
                        model,
                        state,
                        field,
                        log_odds,
                        sign,
                        work.metropolis_steps,
                        temperatures,
                        &mut rng,
                        Some(deadline),
                    );
                });
            }
            Chains::Tensor { tensors, dense, spins, fields, .. } => {
                let odds = Tensor::from_slice(log_odds).to(tensors.device);
                let first = spins.narrow(1, 0, 1);
                let gauge = if gauge_fixed { first.copy() } else { first.ones_like() };
                let (s, f) = tensor_anneal::tensor_metropolis(
                    dense,
                    tensors,
                    spins,
                    fields,
                    &odds,
                    &gauge,
                    work.tensor_steps,
                    temperatures,
                    work.proposal_fraction,
                    seed,
                    (round * work.tensor_steps) as u64,
                    Some(deadline),
                );
                *spins = s;
                *fields = f;
            }
        }
    }

    /// Copies of the chains polished by tabu search: (spins [B * n], exact energies).
    pub fn polished(&self, work: &RoundWork, seed: u64, round: usize, deadline: Instant) -> (Vec<i8>, Vec<f64>) {
        match self {
            Chains::Native { model, states, parallel, .. } => {
                let n = model.num_spins();
                let mut samples = states.clone();
                let items: Vec<_> = samples.chunks_mut(n).enumerate().collect();
                let energies = map_chains(*parallel, items, TabuWorkspace::default, |workspace, (c, chain)| {
                    let mut rng = chain_rng(seed.wrapping_add(1), round, c);
                    tabu_search(model, chain, &work.tabu, &mut rng, workspace, Some(deadline))
                });
                (samples, energies)
            }
            Chains::Tensor { model, tensors, dense, spins, .. } => {
                let mut rng = chain_rng(seed.wrapping_add(1), round, usize::MAX >> 1);
                let (best, _) =
                    tensor_tabu::tensor_tabu_search(tensors, dense, spins, &work.tabu, &mut rng, Some(deadline));
                let samples: Vec<i8> =
                    best.to_kind(Kind::Int8).to_device(Device::Cpu).flatten(0, 1).try_into().expect("int8 spins");
                // Exact f64 energies on the host, as the native path reports.
                let energies = samples.par_chunks(model.num_spins()).map(|chain| model.energy(chain)).collect();
                (samples, energies)
            }
        }
    }

    /// Chain c continues from `states[c]` for every c < min(B, len).
    pub fn start_from(&mut self, states: &[&Vec<i8>]) {
        let count = states.len().min(self.len());
        match self {
            Chains::Native { model, states: current, .. } => {
                let n = model.num_spins();
                for (c, state) in states.iter().take(count).enumerate() {
                    current[c * n..(c + 1) * n].copy_from_slice(state);
                }
                self.refresh();
            }
            Chains::Tensor { model, tensors, dense, spins, fields } => {
                let n = model.num_spins();
                let flat: Vec<i8> = states.iter().take(count).flat_map(|s| s.iter().copied()).collect();
                let head = spins_to_tensor(&flat, count, n, tensors.device);
                *spins = Tensor::cat(&[head, spins.narrow(0, count as i64, spins.size()[0] - count as i64)], 0);
                *fields = spins.matmul(dense) + &tensors.fields;
            }
        }
    }

    /// The worst quarter of chains continue from copies of the best quarter.
    pub fn reseed_worst_from_best(&mut self) {
        let chains = self.len();
        let quarter = chains / 4;
        if quarter == 0 {
            return;
        }
        let energies: Vec<f64> = match self {
            Chains::Native { energies, .. } => energies.clone(),
            Chains::Tensor { tensors, spins, .. } => {
                tensors.hamiltonian(spins).to_kind(Kind::Double).to_device(Device::Cpu).try_into().expect("energies")
            }
        };
        let mut order: Vec<usize> = (0..chains).collect();
        order.sort_by(|&a, &b| energies[a].total_cmp(&energies[b]).then(a.cmp(&b)));
        let (good, bad): (Vec<usize>, Vec<usize>) = (0..quarter).map(|k| (order[k], order[chains - 1 - k])).unzip();
        match self {
            Chains::Native { model, states, fields, energies, .. } => {
                let n = model.num_spins();
                for (&g, &b) in good.iter().zip(&bad) {
                    states.copy_within(g * n..(g + 1) * n, b * n);
                    fields.copy_within(g * n..(g + 1) * n, b * n);
                    energies[b] = energies[g];
                }
            }
            Chains::Tensor { spins, fields, tensors, .. } => {
                let to_index = |v: &[usize]| {
                    Tensor::from_slice(&v.iter().map(|&x| x as i64).collect::<Vec<_>>()).to(tensors.device)
                };
                let (good, bad) = (to_index(&good), to_index(&bad));
                *spins = spins.index_copy(0, &bad, &spins.index_select(0, &good));
                *fields = fields.index_copy(0, &bad, &fields.index_select(0, &good));
            }
        }
    }

    /// Every chain restarts from fresh random spins.
    pub fn restart(&mut self, seed: u64, round: usize) {
        let chains = self.len();
        match self {
            Chains::Native { model, states, .. } => {
                *states = random_spins(chains * model.num_spins(), seed, round);
                self.refresh();
            }
            Chains::Tensor { model, tensors, dense, spins, fields } => {
                let n = model.num_spins();
                *spins = spins_to_tensor(&random_spins(chains * n, seed, round), chains, n, tensors.device);
                *fields = spins.matmul(dense) + &tensors.fields;
            }
        }
    }
}
