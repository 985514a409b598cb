//! The parallel minimum-energy search engine, generic over anything that reduces to an
//! `IsingModel`. MCPG-style (Chen et al.): B chains run Metropolis dynamics on the
//! policy-regularized Hamiltonian H_T(s) = H(s) - T sum_i log p_theta(s_i) (anneal.rs) along one
//! annealing schedule over the whole budget; every round each chain's sample is polished by tabu
//! search (tabu.rs, or tensor_tabu.rs on an accelerator), the Bernoulli policy p_theta is trained
//! by policy gradient on the polished Hamiltonians (policy.rs), and the best chains periodically
//! re-seed the worst.

pub mod anneal;
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
    /// When every chain's polished sample has sat at the best energy for this many rounds, the
    /// anneal restarts; three restarts in a row without a better energy stop as converged (default 50).
    pub patience_rounds: usize,
    /// Tabu flips per chain per round; `None` = `auto_tabu_steps`.
    pub tabu_steps: Option<usize>,
    /// Metropolis proposals per chain per round, in sweeps of n (default 2000).
    pub sweeps_per_round: usize,
    /// Annealing from sqrt(mean degree) * mean|J| * `temperature.0` down to mean|J| *
    /// `temperature.1` over the budget (default (1, 0.01), as the SA baseline).
    pub temperature: (f64, f64),
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
            patience_rounds: 50,
            tabu_steps: None,
            sweeps_per_round: 2000,
            temperature: (1.0, 0.01),
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

/// Chains per device. On CPU, two chains a core: long tabu runs beat many short ones there
/// (G14, 10 s: 1024 chains x 1.6k flips reach 3038, 4 chains x 100k flips 3063-3064). On an
/// accelerator every chain flips in lock-step, so thousands cost about as much as one.
pub fn auto_chains(num_spins: usize, device: Device) -> usize {
    match device {
        Device::Cuda(_) => (20_000_000 / num_spins.max(1)).clamp(256, 16_384),
        _ => 2 * rayon::current_num_threads(),
    }
}

/// Tabu flips per chain and round: 25 n, at most 20k. The annealing chains do the exploring;
/// the polish only has to reach the bottom of the chain's basin (G14/G15/G22, 10 s: 20k flips
/// reach 3059/3050/13356, 5k flips 3053/-/13315).
pub fn auto_tabu_steps(num_spins: usize) -> usize {
    (25 * num_spins).clamp(200, 20_000)
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
    let time_limit = Duration::from_secs_f64(params.time_limit_s.max(0.0));
    let deadline = start + time_limit;
    let n = model.num_spins();
    let chains = params.chains.unwrap_or_else(|| auto_chains(n, params.device)).max(1);
    let tabu = TabuParams::for_size(n, params.tabu_steps.unwrap_or_else(|| auto_tabu_steps(n)));
    let scale = model.mean_abs_coupling();
    let mean_degree = 2.0 * model.couplings().len() as f64 / n.max(1) as f64;
    let t_hot = mean_degree.sqrt().max(1.0) * scale * params.temperature.0;
    let t_cold = scale * params.temperature.1;
    let temperature_at = |progress: f64| t_hot * (t_cold / t_hot).powf(progress.clamp(0.0, 1.0));
    let metropolis_steps = params.sweeps_per_round * n;
    let gauge_fixed = model.has_spin_flip_symmetry();
    let mut policy = BernoulliPolicy::new(n, params.policy, params.device);
    let mut polisher = Polisher::new(model, params.device);

    let mut initial_rng = ChaCha8Rng::seed_from_u64(params.seed);
    let mut states: Vec<i8> = (0..chains * n).map(|_| if initial_rng.gen_bool(0.5) { 1 } else { -1 }).collect();
    let mut fields = vec![0.0; chains * n];
    states.par_chunks(n).zip(fields.par_chunks_mut(n)).for_each(|(s, f)| model.local_fields(s, f));
    let mut energies: Vec<f64> = states.par_chunks(n).map(|s| model.energy(s)).collect();
    let mut samples = vec![0i8; chains * n];
    let mut best_spins = vec![1i8; n];
    let mut best_energy = f64::INFINITY;
    let mut history = Vec::new();
    let mut rounds = 0usize;
    let mut last_improvement = 0usize;
    let mut last_round_time = Duration::ZERO;
    let mut cycle = Cycle { start_round: 0, start_time: start, improved: false, fruitless: 0 };
    let stop = loop {
        if params.target_energy.is_some_and(|t| best_energy <= t + 1e-9) {
            break StopReason::TargetReached;
        }
        let round_start = Instant::now();
        if round_start >= deadline {
            break StopReason::TimeLimit;
        }
        if params.max_rounds.is_some_and(|m| rounds >= m) {
            break StopReason::RoundLimit;
        }
        // The schedule follows the round budget when there is one (reproducible), else the clock.
        // A cycle anneals over the budget left when it began.
        let (progress_start, progress_end) = match params.max_rounds {
            Some(m) => {
                let length = (m - cycle.start_round) as f64;
                ((rounds - cycle.start_round) as f64 / length, (rounds + 1 - cycle.start_round) as f64 / length)
            }
            None => {
                let length = (deadline - cycle.start_time).as_secs_f64().max(1e-9);
                let done = (round_start - cycle.start_time).as_secs_f64() / length;
                (done, done + last_round_time.as_secs_f64() / length)
            }
        };
        let temperatures = (temperature_at(progress_start), temperature_at(progress_end));
        let log_odds: Vec<f32> = policy.probabilities().iter().map(|&p| (p / (1.0 - p)).ln()).collect();
        states
            .par_chunks_mut(n)
            .zip(fields.par_chunks_mut(n))
            .zip(energies.par_iter_mut())
            .enumerate()
            .for_each(|(c, ((state, field), energy))| {
                let mut rng = chain_rng(params.seed, rounds, c);
                // The policy is learned in the gauge s_0 = +1; map it into this chain's gauge.
                let sign = if gauge_fixed { state[0] } else { 1 };
                *energy += anneal::metropolis(model, state, field, &log_odds, sign, metropolis_steps, temperatures, &mut rng);
            });
        samples.copy_from_slice(&states);
        let sample_energies = polisher.polish(&mut samples, chains, &tabu, params.seed, rounds, deadline);

        for c in 0..chains {
            if sample_energies[c] < best_energy - 1e-9 {
                best_energy = sample_energies[c];
                best_spins.copy_from_slice(&samples[c * n..(c + 1) * n]);
                last_improvement = rounds;
                cycle.improved = true;
                history.push(Incumbent { elapsed: start.elapsed(), energy: best_energy });
            }
        }
        if gauge_fixed {
            for sample in samples.chunks_mut(n) {
                if sample[0] < 0 {
                    sample.iter_mut().for_each(|s| *s = -*s);
                }
            }
        }
        policy.update(&samples, &sample_energies, chains);
        rounds += 1;
        if chains >= 4 && rounds % params.reseed_every.max(1) == 0 {
            reseed_worst_from_best(&mut states, &mut fields, &mut energies, n);
        }
        // Every chain stuck at the incumbent: the budget left is better spent on a fresh
        // anneal (keeping the policy) than on more of the same; converged after
        // `FRUITLESS_CYCLES` restarts in a row that found nothing better.
        let all_at_best = sample_energies.iter().all(|&e| e <= best_energy + 1e-9);
        if all_at_best && rounds - last_improvement.max(cycle.start_round) >= params.patience_rounds {
            cycle.fruitless = if cycle.improved { 0 } else { cycle.fruitless + 1 };
            if cycle.fruitless >= FRUITLESS_CYCLES {
                break StopReason::Converged;
            }
            cycle = Cycle { start_round: rounds, start_time: Instant::now(), improved: false, ..cycle };
            let mut restart_rng = chain_rng(params.seed, rounds, usize::MAX >> 2);
            states.iter_mut().for_each(|s| *s = if restart_rng.gen_bool(0.5) { 1 } else { -1 });
            states.par_chunks(n).zip(fields.par_chunks_mut(n)).for_each(|(s, f)| model.local_fields(s, f));
            energies.par_iter_mut().zip(states.par_chunks(n)).for_each(|(e, s)| *e = model.energy(s));
        }
        last_round_time = round_start.elapsed();
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

const FRUITLESS_CYCLES: usize = 3;

/// One annealing schedule, from hot to cold over the budget left at its start.
struct Cycle {
    start_round: usize,
    start_time: Instant,
    improved: bool,
    fruitless: usize,
}

/// The worst quarter of chains restart from copies of the best quarter.
fn reseed_worst_from_best(states: &mut [i8], fields: &mut [f64], energies: &mut [f64], n: usize) {
    let chains = energies.len();
    let mut order: Vec<usize> = (0..chains).collect();
    order.sort_by(|&a, &b| energies[a].total_cmp(&energies[b]).then(a.cmp(&b)));
    let quarter = chains / 4;
    for k in 0..quarter {
        let (good, bad) = (order[k], order[chains - 1 - k]);
        let source = states[good * n..(good + 1) * n].to_vec();
        states[bad * n..(bad + 1) * n].copy_from_slice(&source);
        fields.copy_within(good * n..(good + 1) * n, bad * n);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn random_model(n: usize, density: f64, seed: u64, fields: bool) -> IsingModel {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut couplings = Vec::new();
        for i in 0..n as u32 {
            for j in i + 1..n as u32 {
                if rng.gen_bool(density) {
                    couplings.push((i, j, rng.gen_range(-2.0..2.0)));
                }
            }
        }
        let h = if fields { (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect() } else { vec![] };
        IsingModel::new(n, couplings, h)
    }

    fn ground_state_energy(model: &IsingModel) -> f64 {
        let n = model.num_spins();
        (0..1u32 << n)
            .map(|mask| {
                let spins: Vec<i8> = (0..n).map(|i| if mask >> i & 1 == 1 { 1 } else { -1 }).collect();
                model.energy(&spins)
            })
            .fold(f64::INFINITY, f64::min)
    }

    #[test]
    fn search_finds_the_brute_force_ground_state_of_small_models() {
        for (seed, fields) in [(1, false), (2, true), (3, false)] {
            let model = random_model(14, 0.4, seed, fields);
            let params = SearchParams { max_rounds: Some(20), chains: Some(8), seed, ..SearchParams::default() };
            let outcome = minimize(&model, &params);
            assert!((outcome.energy - ground_state_energy(&model)).abs() < 1e-9, "seed {seed}");
            assert!((outcome.energy - model.energy(&outcome.spins)).abs() < 1e-9);
        }
    }

    #[test]
    fn the_same_seed_and_round_budget_reproduce_the_same_result() {
        let model = random_model(120, 0.05, 4, false);
        let params =
            SearchParams { max_rounds: Some(5), chains: Some(6), tabu_steps: Some(300), seed: 11, ..SearchParams::default() };
        let (a, b) = (minimize(&model, &params), minimize(&model, &params));
        assert_eq!(a.spins, b.spins);
        assert_eq!(a.energy, b.energy);
        assert_eq!(a.stop, StopReason::RoundLimit);
        let other = minimize(&model, &SearchParams { seed: 12, ..params.clone() });
        assert_eq!(other.rounds, 5);
    }

    #[test]
    fn a_reachable_target_stops_the_search_early() {
        let model = random_model(12, 0.5, 5, false);
        let target = ground_state_energy(&model);
        let params = SearchParams { target_energy: Some(target), time_limit_s: 30.0, ..SearchParams::default() };
        let outcome = minimize(&model, &params);
        assert_eq!(outcome.stop, StopReason::TargetReached);
        assert!(outcome.elapsed < Duration::from_secs(5));
    }
}
