//! The search loop of the lock-step backends, which advance every spin of every chain at once in
//! a few large kernels (the shape an accelerator wants): simulated bifurcation
//! (`bifurcation.rs`) and colour-class parallel tempering (`tempering.rs`). Each round runs the
//! dynamics on all B chains on the search's device, hands the `polish_chains` lowest-energy states
//! to the native tabu polish on the CPU threads, and keeps the incumbent, the sample pool and the
//! hooks as `minimize` does. Bifurcation starts every round afresh from hashed random positions
//! (a pump from zero to a0 is one anneal); tempering carries its ladder over and takes the
//! polished states back into the chains they came from.

use super::bifurcation::{simulated_bifurcation, CouplingMatrix};
use super::tabu::{tabu_search, TabuParams, TabuWorkspace};
use super::tempering::Tempering;
use super::{
    auto_tabu_steps, chain_rng, patience_sweeps, Incumbent, SamplePool, SearchOutcome, SearchParams, StopReason,
};
use crate::search::ising::{spins_to_tensor, IsingModel};
use rayon::prelude::*;
use std::time::{Duration, Instant};
use tch::{Device, Kind};

/// Which lock-step dynamics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockStep {
    Bifurcation,
    Tempering,
}

/// Lock-step chains per device: on an accelerator as many as keep a step's products large
/// (B n about 2e7, 1,024 to 16,384); on the CPU, 64.
pub fn auto_lockstep_chains(num_spins: usize, device: Device) -> usize {
    match device {
        Device::Cuda(_) => (20_000_000 / num_spins.max(1)).clamp(1024, 16_384),
        _ => 64,
    }
}

/// A different stream of hashed random numbers per round.
fn round_seed(seed: u64, round: usize) -> u64 {
    seed ^ (round as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

pub fn minimize_lockstep(model: &IsingModel, params: &SearchParams, dynamics: LockStep) -> SearchOutcome {
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(params.time_limit_s.max(0.0));
    let n = model.num_spins();
    let device = params.device;
    let chain_count = params.chains.unwrap_or_else(|| auto_lockstep_chains(n, device)).max(1);
    let polish_count = params.polish_chains.unwrap_or(2 * rayon::current_num_threads()).clamp(1, chain_count);
    let tabu = TabuParams::for_size(n, params.tabu_steps.unwrap_or_else(|| auto_tabu_steps(n)));
    // Tempering holds its own coupling blocks; only bifurcation needs the whole matrix.
    let mut bifurcation = None;
    let mut tempering = None;
    match dynamics {
        LockStep::Bifurcation => {
            let ising = model.tensors(device);
            bifurcation = Some((CouplingMatrix::of(&ising, 0.01), ising));
        }
        LockStep::Tempering => {
            tempering = Some(Tempering::new(model, device, chain_count, &params.tempering, params.seed));
        }
    }
    let chain_count = tempering.as_ref().map_or(chain_count, Tempering::chains);

    let mut best_spins = vec![1i8; n];
    let mut best_energy = f64::INFINITY;
    let mut pool = SamplePool::new(params.keep_samples);
    let mut history = Vec::new();
    let starts: Vec<&Vec<i8>> = params.initial_states.iter().filter(|s| s.len() == n).take(chain_count).collect();
    if !starts.is_empty() {
        for state in &starts {
            let energy = model.energy(state);
            pool.offer(state, energy);
            if energy < best_energy - 1e-9 {
                best_energy = energy;
                best_spins.copy_from_slice(state);
            }
        }
        if let Some(pt) = tempering.as_mut() {
            let flat: Vec<i8> = starts.iter().flat_map(|s| s.iter().copied()).collect();
            let chains: Vec<i64> = (0..starts.len() as i64).collect();
            pt.place(&chains, &spins_to_tensor(&flat, starts.len(), n, device));
        }
        history.push(Incumbent { elapsed: start.elapsed(), energy: best_energy });
        params.hooks.incumbent_state(start.elapsed(), &best_spins, best_energy);
    }
    // Work in sweeps as `minimize` counts it, with the lock-step chains counted as one: on an
    // accelerator B of them cost about as much as one.
    let dynamics_sweeps = match dynamics {
        LockStep::Bifurcation => params.bifurcation.steps,
        LockStep::Tempering => params.tempering.sweeps,
    } as f64;
    let sweeps_per_round = dynamics_sweeps + (polish_count * tabu.steps) as f64 / n.max(1) as f64;
    let patience = patience_sweeps(n, params.patience);
    let mut sweeps_since_improvement = 0.0f64;
    let mut rounds = 0usize;
    let stop = loop {
        if Instant::now() >= deadline || params.hooks.cancelled() {
            break StopReason::TimeLimit;
        }
        if params.max_rounds.is_some_and(|m| rounds >= m) {
            break StopReason::RoundLimit;
        }
        let (spins, energies) = match (&bifurcation, tempering.as_mut()) {
            (Some((matrix, ising)), _) => {
                let seed = round_seed(params.seed, rounds);
                let run = simulated_bifurcation(ising, matrix, chain_count, &params.bifurcation, seed, Some(deadline));
                (run.spins, run.energies)
            }
            (None, Some(pt)) => {
                pt.forget_best();
                pt.run(params.tempering.sweeps, Some(deadline));
                let (spins, energies) = pt.best();
                (spins.shallow_clone(), energies.shallow_clone())
            }
            (None, None) => unreachable!("one of the two dynamics is set up above"),
        };
        let chosen = energies.argsort(0, false).narrow(0, 0, polish_count as i64);
        let mut samples: Vec<i8> = spins
            .index_select(0, &chosen)
            .to_kind(Kind::Int8)
            .to_device(Device::Cpu)
            .flatten(0, 1)
            .try_into()
            .expect("int8 spins");
        let sample_energies: Vec<f64> = samples
            .par_chunks_mut(n)
            .enumerate()
            .map_init(TabuWorkspace::default, |workspace, (c, chain)| {
                let mut rng = chain_rng(params.seed.wrapping_add(1), rounds, c);
                tabu_search(model, chain, &tabu, &mut rng, workspace, Some(deadline))
            })
            .collect();
        sweeps_since_improvement += sweeps_per_round;
        for (c, &energy) in sample_energies.iter().enumerate() {
            pool.offer(&samples[c * n..(c + 1) * n], energy);
            if energy < best_energy - 1e-9 {
                best_energy = energy;
                best_spins.copy_from_slice(&samples[c * n..(c + 1) * n]);
                sweeps_since_improvement = 0.0;
                history.push(Incumbent { elapsed: start.elapsed(), energy: best_energy });
                params.hooks.incumbent_state(start.elapsed(), &best_spins, best_energy);
            }
        }
        if let Some(pt) = tempering.as_mut() {
            let chains: Vec<i64> = chosen.to_device(Device::Cpu).try_into().expect("chain indices");
            pt.place(&chains, &spins_to_tensor(&samples, polish_count, n, device));
        }
        rounds += 1;
        if params.target_energy.is_some_and(|t| best_energy <= t + 1e-9) {
            break StopReason::TargetReached;
        }
        if sweeps_since_improvement >= patience {
            break StopReason::Converged;
        }
    };
    SearchOutcome {
        spins: best_spins,
        energy: best_energy,
        stop,
        elapsed: start.elapsed(),
        history,
        chains: chain_count,
        rounds,
        device,
        samples: pool.into_states(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::chains::Backend;
    use crate::search::minimize;

    fn graph(n: usize, m: usize, seed: u64) -> IsingModel {
        use crate::problems::{IsingProblem, Limits};
        let text = crate::problems::maxcut::generate::random_gset(n, m, &[1], seed);
        crate::problems::maxcut::parse_gset(&text, &Limits::default()).unwrap().ising().clone()
    }

    /// Both lock-step backends, through `minimize`: the reported energy is the energy of the
    /// reported spins, a round budget and seed reproduce the answer, and the answer is within
    /// 1% of the native search's at the same budget of rounds.
    #[test]
    fn lockstep_backends_report_true_energies_reproduce_and_approach_the_native_search() {
        let model = graph(300, 1200, 4);
        let native = minimize(&model, &SearchParams { max_rounds: Some(6), time_limit_s: 60.0, ..Default::default() });
        for backend in [Backend::Bifurcation, Backend::Tempering] {
            let params = SearchParams {
                backend: Some(backend),
                max_rounds: Some(4),
                time_limit_s: 60.0,
                chains: Some(32),
                seed: 3,
                ..Default::default()
            };
            let first = minimize(&model, &params);
            assert_eq!(first.stop, StopReason::RoundLimit);
            assert!((model.energy(&first.spins) - first.energy).abs() < 1e-9, "{backend:?}");
            let again = minimize(&model, &params);
            assert_eq!(first.spins, again.spins, "{backend:?}");
            assert!(
                first.energy <= native.energy * 0.99,
                "{backend:?}: {} against the native search's {}",
                first.energy,
                native.energy
            );
        }
    }

    /// A start is the tempering search's first incumbent: from all spins up (every edge uncut,
    /// an energy no random chain starts near) the history opens at that start's energy, scored
    /// here from the couplings, and one round descends well below a random partition's.
    #[test]
    fn a_start_is_the_first_incumbent() {
        let model = graph(200, 600, 5);
        let score = |spins: &[i8]| -> f64 {
            model.couplings().iter().map(|&(i, j, w)| w * f64::from(spins[i as usize] * spins[j as usize])).sum()
        };
        let up = vec![1i8; model.num_spins()];
        let params = SearchParams {
            backend: Some(Backend::Tempering),
            max_rounds: Some(1),
            chains: Some(16),
            initial_states: vec![up.clone()],
            time_limit_s: 60.0,
            ..Default::default()
        };
        let outcome = minimize(&model, &params);
        assert_eq!(outcome.history[0].energy, score(&up));
        assert!((score(&outcome.spins) - outcome.energy).abs() < 1e-9);
        // All up scores +W (the total weight); a random partition scores about 0.
        assert!(outcome.energy < -0.2 * score(&up), "{} from {}", outcome.energy, score(&up));
    }
}
