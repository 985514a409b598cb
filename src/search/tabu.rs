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
    /// delta_i = -2 s_i f_i: the energy change of flipping spin i.
    deltas: Vec<f64>,
    tabu_until: Vec<usize>,
    best: Vec<i8>,
    ties: Vec<u32>,
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
    let TabuWorkspace { deltas, tabu_until, best, ties } = workspace;
    deltas.resize(n, 0.0);
    model.local_fields(spins, deltas);
    for (d, &s) in deltas.iter_mut().zip(spins.iter()) {
        *d *= -2.0 * f64::from(s);
    }
    tabu_until.clear();
    tabu_until.resize(n, 0);
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
        // The best allowed flip, ties broken uniformly: one pass collects the spins within
        // ENERGY_EPS of the running minimum (after the first few spins the branch is almost never
        // taken), then one draw picks among them.
        let mut chosen_delta = f64::INFINITY;
        ties.clear();
        for (i, (&delta, &until)) in deltas.iter().zip(tabu_until.iter()).enumerate() {
            let allowed = (until <= step) | (delta < aspiration);
            if allowed & (delta <= chosen_delta + ENERGY_EPS) {
                if delta < chosen_delta - ENERGY_EPS {
                    chosen_delta = delta;
                    ties.clear();
                }
                ties.push(i as u32);
            }
        }
        if ties.is_empty() {
            break;
        }
        let chosen = match ties.len() {
            1 => ties[0] as usize,
            len => ties[rng.gen_range(0..len)] as usize,
        };
        energy += deltas[chosen];
        flip_deltas(model, spins, deltas, chosen);
        tabu_until[chosen] = step + params.tenure_min + rng.gen_range(0..=params.tenure_span);
        if energy < best_energy - ENERGY_EPS {
            best_energy = energy;
            best.copy_from_slice(spins);
        }
    }
    spins.copy_from_slice(best);
    model.energy(spins)
}

/// Flips spin i and updates the flip deltas: delta_i changes sign, and each neighbour's
/// delta_j = -2 s_j f_j moves by -4 s_j s_i' J_ij as f_j moves by 2 s_i' J_ij.
fn flip_deltas(model: &IsingModel, spins: &mut [i8], deltas: &mut [f64], i: usize) {
    spins[i] = -spins[i];
    deltas[i] = -deltas[i];
    let four_new = 4.0 * f64::from(spins[i]);
    for (j, w) in model.neighbors(i) {
        deltas[j] -= four_new * f64::from(spins[j]) * w;
    }
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
