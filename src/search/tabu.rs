//! Native single-flip local search on an Ising model with incremental local-field updates:
//! the CPU hot loop that polishes every sample of the sampler.

use crate::search::ising::IsingModel;
use rand::Rng;
use std::time::Instant;

/// Energies closer than this are ties; couplings are user floats, so exact equality is too strict.
const ENERGY_EPS: f64 = 1e-9;
/// How many flips run between two looks at the clock.
const DEADLINE_CHECK_EVERY: usize = 512;

/// Tabu-search knobs (Glover's short-term memory: a flipped spin may not flip back for `tenure` steps).
#[derive(Debug, Clone, Copy)]
pub struct TabuParams {
    /// Flips per call.
    pub steps: usize,
    /// Smallest tabu tenure.
    pub tenure_min: usize,
    /// Tenure is tenure_min + uniform{0..=tenure_span}, drawn per flip.
    pub tenure_span: usize,
}

impl TabuParams {
    /// Tenures scale with n, as in the tabu searches for Max-Cut (BLS: Benlic & Hao 2013).
    /// Tenure in [n/40, n/40 + n/20]: measured on G14 (n = 800), 2M flips from one start,
    /// [8, 24] stalls at cut 3024 while [20, 60] reaches 3064; long tenures are what keep a
    /// single-flip search on a sparse graph from cycling.
    pub fn for_size(num_spins: usize, steps: usize) -> Self {
        TabuParams { steps, tenure_min: (num_spins / 40).max(3), tenure_span: (num_spins / 20).max(5) }
    }
}

/// Reusable buffers so that a chain does not allocate per call.
#[derive(Default)]
pub struct TabuWorkspace {
    fields: Vec<f64>,
    tabu_until: Vec<usize>,
    best: Vec<i8>,
}

/// Runs tabu search from `spins`; on return `spins` holds the best configuration visited and the
/// function returns its exact energy. Never returns a configuration worse than the start.
pub fn tabu_search<R: Rng>(
    model: &IsingModel,
    spins: &mut [i8],
    params: &TabuParams,
    rng: &mut R,
    workspace: &mut TabuWorkspace,
    deadline: Option<Instant>,
) -> f64 {
    let n = model.num_spins();
    workspace.fields.resize(n, 0.0);
    workspace.tabu_until.clear();
    workspace.tabu_until.resize(n, 0);
    model.local_fields(spins, &mut workspace.fields);
    let fields = &mut workspace.fields;
    let tabu_until = &mut workspace.tabu_until;
    let best = &mut workspace.best;
    best.clear();
    best.extend_from_slice(spins);

    let mut energy = model.energy(spins);
    let mut best_energy = energy;
    for step in 0..params.steps {
        if step % DEADLINE_CHECK_EVERY == 0 && deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        // Aspiration: a tabu flip is allowed when it beats the best energy of this run.
        let aspiration = best_energy - energy - ENERGY_EPS;
        let mut chosen = usize::MAX;
        let mut chosen_delta = f64::INFINITY;
        let mut ties = 0u32;
        for i in 0..n {
            let delta = -2.0 * f64::from(spins[i]) * fields[i];
            if tabu_until[i] > step && delta >= aspiration {
                continue;
            }
            if delta < chosen_delta - ENERGY_EPS {
                chosen = i;
                chosen_delta = delta;
                ties = 1;
            } else if delta <= chosen_delta + ENERGY_EPS {
                ties += 1;
                if rng.gen_range(0..ties) == 0 {
                    chosen = i;
                }
            }
        }
        if chosen == usize::MAX {
            break;
        }
        flip(model, spins, fields, chosen);
        energy += chosen_delta;
        tabu_until[chosen] = step + params.tenure_min + rng.gen_range(0..=params.tenure_span);
        if energy < best_energy - ENERGY_EPS {
            best_energy = energy;
            best.copy_from_slice(spins);
        }
    }
    spins.copy_from_slice(best);
    model.energy(spins)
}

/// Steepest descent with single flips until no flip lowers the energy; returns the exact energy.
pub fn greedy_descent(model: &IsingModel, spins: &mut [i8]) -> f64 {
    let n = model.num_spins();
    let mut fields = vec![0.0; n];
    model.local_fields(spins, &mut fields);
    loop {
        let (best_i, best_delta) = (0..n)
            .map(|i| (i, -2.0 * f64::from(spins[i]) * fields[i]))
            .fold((usize::MAX, -ENERGY_EPS), |acc, x| if x.1 < acc.1 { x } else { acc });
        if best_i == usize::MAX || best_delta >= -ENERGY_EPS {
            break;
        }
        flip(model, spins, &mut fields, best_i);
    }
    model.energy(spins)
}

/// Flips spin i and updates its neighbours' local fields: f_j += 2 s_i' J_ij.
pub fn flip(model: &IsingModel, spins: &mut [i8], fields: &mut [f64], i: usize) {
    spins[i] = -spins[i];
    let twice_new = 2.0 * f64::from(spins[i]);
    for (j, w) in model.neighbors(i) {
        fields[j] += twice_new * w;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn random_model(n: usize, seed: u64) -> IsingModel {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut couplings = Vec::new();
        for i in 0..n as u32 {
            for j in i + 1..n as u32 {
                if rng.gen_bool(0.3) {
                    couplings.push((i, j, [1.0, -1.0, 2.5][rng.gen_range(0..3)]));
                }
            }
        }
        IsingModel::new(n, couplings, vec![])
    }

    fn random_spins(n: usize, rng: &mut ChaCha8Rng) -> Vec<i8> {
        (0..n).map(|_| if rng.gen_bool(0.5) { 1 } else { -1 }).collect()
    }

    #[test]
    fn tabu_search_never_returns_a_worse_configuration_and_reports_its_true_energy() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut workspace = TabuWorkspace::default();
        for seed in 0..20 {
            let model = random_model(40, seed);
            let mut spins = random_spins(40, &mut rng);
            let before = model.energy(&spins);
            let params = TabuParams::for_size(40, 200);
            let after = tabu_search(&model, &mut spins, &params, &mut rng, &mut workspace, None);
            assert!(after <= before + 1e-9, "seed {seed}: {after} > {before}");
            assert!((after - model.energy(&spins)).abs() < 1e-9);
        }
    }

    #[test]
    fn greedy_descent_ends_in_a_one_flip_local_minimum() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let model = random_model(60, 11);
        let mut spins = random_spins(60, &mut rng);
        let before = model.energy(&spins);
        let after = greedy_descent(&model, &mut spins);
        assert!(after <= before);
        for i in 0..60 {
            let mut flipped = spins.clone();
            flipped[i] = -flipped[i];
            assert!(model.energy(&flipped) >= after - 1e-9, "flip {i} still improves");
        }
    }
}
