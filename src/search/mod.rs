//! The parallel minimum-energy search engine, generic over anything that reduces to an
//! `IsingModel`. MCPG-style (Chen et al.): B chains; each round a Bernoulli policy proposes
//! Metropolis moves for every chain, every proposal is polished by tabu search, proposals are
//! accepted by the Metropolis rule, the policy is trained by policy gradient on the polished
//! Hamiltonians, and the best chains periodically re-seed the worst.

pub mod policy;
pub mod tabu;
pub mod tensor_tabu;

use crate::problems::ising::{spins_to_tensor, IsingModel};
use policy::{BernoulliPolicy, PolicyParams};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::Serialize;
use std::time::{Duration, Instant};
use tabu::{tabu_search, TabuParams, TabuWorkspace};
use tch::{Device, Kind};
use utoipa::ToSchema;

/// Every knob of one search; `Default` documents the defaults.
#[derive(Debug, Clone)]
pub struct SearchParams {
    /// Wall-clock budget in seconds (default 10).
    pub time_limit_s: f64,
    /// Seed of every random choice (default 0).
    pub seed: u64,
    /// Parallel chains B; `None` picks from instance size and device (see `auto_chains`).
    pub chains: Option<usize>,
    /// Where tensors live; CUDA also moves the tabu polish onto the device.
    pub device: Device,
    /// Stop as soon as an energy at or below this is found.
    pub target_energy: Option<f64>,
    /// Iteration budget in rounds; with it, the same seed reproduces the same result.
    pub max_rounds: Option<usize>,
    /// Stop as converged after this many rounds without a better energy (default 200).
    pub patience_rounds: usize,
    /// Tabu flips per chain per round; `None` = 2n (at least 200).
    pub tabu_steps: Option<usize>,
    /// Each proposal resamples between these fractions of the spins from the policy (default 1%..10%).
    pub perturb_fraction: (f64, f64),
    /// Metropolis temperature in units of the mean |J| (default 0.5).
    pub temperature: f64,
    /// Every this many rounds the worst quarter of chains restart from the best quarter (default 4).
    pub reseed_every: usize,
    pub policy: PolicyParams,
}

impl Default for SearchParams {
    fn default() -> Self {
        SearchParams {
            time_limit_s: 10.0,
            seed: 0,
            chains: None,
            device: Device::Cpu,
            target_energy: None,
            max_rounds: None,
            patience_rounds: 200,
            tabu_steps: None,
            perturb_fraction: (0.01, 0.1),
            temperature: 0.5,
            reseed_every: 4,
            policy: PolicyParams::default(),
        }
    }
}

/// Why a search stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    TargetReached,
    TimeLimit,
    Converged,
    RoundLimit,
}

/// A new best-so-far energy and when it was found.
#[derive(Debug, Clone, Copy)]
pub struct Incumbent {
    pub elapsed: Duration,
    pub energy: f64,
}

#[derive(Debug, Clone)]
pub struct SearchOutcome {
    pub spins: Vec<i8>,
    pub energy: f64,
    pub stop: StopReason,
    pub elapsed: Duration,
    pub history: Vec<Incumbent>,
    pub chains: usize,
    pub rounds: usize,
    pub device: Device,
}

/// Chains per device: enough to keep every core (or the GPU) busy for a round of a few hundred
/// milliseconds; fewer for large instances so rounds stay short.
pub fn auto_chains(num_spins: usize, device: Device) -> usize {
    match device {
        Device::Cuda(_) => (20_000_000 / num_spins.max(1)).clamp(1024, 32_768),
        _ => (2_000_000 / num_spins.max(1)).clamp(64, 2048).min(rayon::current_num_threads() * 512),
    }
}

/// A per-(round, chain) RNG so that parallel chains are reproducible whatever the thread schedule.
fn chain_rng(seed: u64, round: usize, chain: usize) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(((round as u64) << 32) | chain as u64);
    rng
}

/// Runs the search until the target, the time limit, the round budget or convergence.
pub fn minimize(model: &IsingModel, params: &SearchParams) -> SearchOutcome {
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(params.time_limit_s.max(0.0));
    let n = model.num_spins();
    let chains = params.chains.unwrap_or_else(|| auto_chains(n, params.device)).max(1);
    let tabu = TabuParams::for_size(n, params.tabu_steps.unwrap_or((2 * n).max(200)));
    let temperature = params.temperature * model.mean_abs_coupling();
    let gauge_fixed = model.has_spin_flip_symmetry();
    let mut master = ChaCha8Rng::seed_from_u64(params.seed ^ 0x9E37_79B9_7F4A_7C15);
    let mut policy = BernoulliPolicy::new(n, params.policy, params.device);
    let mut polisher = Polisher::new(model, params.device);

    let mut states = vec![1i8; chains * n];
    let mut energies = vec![f64::INFINITY; chains];
    let mut proposals = vec![0i8; chains * n];
    let mut best_spins = vec![1i8; n];
    let mut best_energy = f64::INFINITY;
    let mut history = Vec::new();
    let mut rounds = 0usize;
    let mut last_improvement = 0usize;
    let stop = loop {
        if params.target_energy.is_some_and(|t| best_energy <= t + 1e-9) {
            break StopReason::TargetReached;
        }
        if Instant::now() >= deadline {
            break StopReason::TimeLimit;
        }
        if params.max_rounds.is_some_and(|m| rounds >= m) {
            break StopReason::RoundLimit;
        }
        if rounds - last_improvement >= params.patience_rounds {
            break StopReason::Converged;
        }
        let probabilities = policy.probabilities();
        // Round 0 samples every spin from the (uniform) policy; later rounds perturb.
        let (low, high) = if rounds == 0 {
            (n, n)
        } else {
            let low = ((params.perturb_fraction.0 * n as f64).round() as usize).max(1);
            (low, ((params.perturb_fraction.1 * n as f64).round() as usize).max(low))
        };
        proposals.copy_from_slice(&states);
        proposals.par_chunks_mut(n).enumerate().for_each(|(c, proposal)| {
            let mut rng = chain_rng(params.seed, rounds, c);
            let count = rng.gen_range(low..=high);
            // The policy is learned in the gauge s_0 = +1; map it into this chain's gauge.
            let sign = if gauge_fixed { proposal[0] } else { 1 };
            for _ in 0..count {
                let i = rng.gen_range(0..n);
                let up = rng.gen::<f32>() < probabilities[i];
                proposal[i] = if up { sign } else { -sign };
            }
        });
        let proposal_energies = polisher.polish(&mut proposals, chains, &tabu, params.seed, rounds, deadline);

        for c in 0..chains {
            let (new, old) = (proposal_energies[c], energies[c]);
            let accept = new <= old || master.gen::<f64>() < (-(new - old) / temperature).exp();
            if accept {
                states[c * n..(c + 1) * n].copy_from_slice(&proposals[c * n..(c + 1) * n]);
                energies[c] = new;
            }
            if new < best_energy - 1e-9 {
                best_energy = new;
                best_spins.copy_from_slice(&proposals[c * n..(c + 1) * n]);
                last_improvement = rounds;
                history.push(Incumbent { elapsed: start.elapsed(), energy: new });
            }
        }
        if gauge_fixed {
            for proposal in proposals.chunks_mut(n) {
                if proposal[0] < 0 {
                    proposal.iter_mut().for_each(|s| *s = -*s);
                }
            }
        }
        policy.update(&proposals, &proposal_energies, chains);
        rounds += 1;
        if chains >= 4 && rounds % params.reseed_every.max(1) == 0 {
            reseed_worst_from_best(&mut states, &mut energies, n);
        }
    };
    SearchOutcome {
        spins: best_spins,
        energy: best_energy,
        stop,
        elapsed: start.elapsed(),
        history,
        chains,
        rounds,
        device: params.device,
    }
}

/// The worst quarter of chains restart from copies of the best quarter.
fn reseed_worst_from_best(states: &mut [i8], energies: &mut [f64], n: usize) {
    let chains = energies.len();
    let mut order: Vec<usize> = (0..chains).collect();
    order.sort_by(|&a, &b| energies[a].total_cmp(&energies[b]).then(a.cmp(&b)));
    let quarter = chains / 4;
    for k in 0..quarter {
        let (good, bad) = (order[k], order[chains - 1 - k]);
        let source = states[good * n..(good + 1) * n].to_vec();
        states[bad * n..(bad + 1) * n].copy_from_slice(&source);
        energies[bad] = energies[good];
    }
}

/// Native rayon tabu on CPU; batched tensor tabu on an accelerator. Both polish the same model.
struct Polisher<'a> {
    model: &'a IsingModel,
    accelerator: Option<(crate::problems::ising::IsingTensors, tch::Tensor)>,
}

impl<'a> Polisher<'a> {
    fn new(model: &'a IsingModel, device: Device) -> Self {
        let accelerator = match device {
            Device::Cpu => None,
            _ => {
                let tensors = model.tensors(device);
                let dense = tensors.dense_couplings();
                Some((tensors, dense))
            }
        };
        Polisher { model, accelerator }
    }

    /// Polishes every chain in place and returns the exact energies.
    fn polish(
        &mut self,
        spins: &mut [i8],
        chains: usize,
        tabu: &TabuParams,
        seed: u64,
        round: usize,
        deadline: Instant,
    ) -> Vec<f64> {
        let n = spins.len() / chains;
        let model = self.model;
        match &self.accelerator {
            None => {
                let mut energies = Vec::with_capacity(chains);
                spins
                    .par_chunks_mut(n)
                    .enumerate()
                    .map_init(TabuWorkspace::default, |workspace, (c, chain)| {
                        // A stream distinct from the proposal's, same determinism.
                        let mut rng = chain_rng(seed.wrapping_add(1), round, c);
                        tabu_search(model, chain, tabu, &mut rng, workspace, Some(deadline))
                    })
                    .collect_into_vec(&mut energies);
                energies
            }
            Some((tensors, dense)) => {
                let mut rng = chain_rng(seed.wrapping_add(1), round, usize::MAX >> 1);
                let batch = spins_to_tensor(spins, chains, n, tensors.device);
                let (best, _) = tensor_tabu::tensor_tabu_search(tensors, dense, &batch, tabu, &mut rng, Some(deadline));
                let best: Vec<i8> =
                    best.to_kind(Kind::Int8).to_device(Device::Cpu).flatten(0, 1).try_into().expect("int8 spins");
                spins.copy_from_slice(&best);
                // Exact f64 energies on the host, as the native path reports.
                spins.par_chunks(n).map(|chain| model.energy(chain)).collect()
            }
        }
    }
}
