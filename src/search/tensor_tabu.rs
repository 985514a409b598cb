//! The same tabu search as `tabu.rs`, written as batched tensor ops so that all chains flip in
//! lock-step on an accelerator: per step one argmin over [B, n] and one row gather of J.

use crate::search::ising::IsingTensors;
use rand::Rng;
use tch::{Kind, Tensor};

use super::tabu::TabuParams;

/// Polishes a batch `spins` [B, n] (float, +-1, on the tensors' device) with `params.steps`
/// tabu steps per chain. Returns (best spins [B, n], their energies [B]).
pub fn tensor_tabu_search<R: Rng>(
    ising: &IsingTensors,
    dense_couplings: &Tensor,
    spins: &Tensor,
    params: &TabuParams,
    rng: &mut R,
    deadline: Option<std::time::Instant>,
) -> (Tensor, Tensor) {
    let device = ising.device;
    let size = spins.size();
    let (batch, n) = (size[0], size[1]);
    // Randomness comes from the caller's seeded RNG (not torch's global generator) so that
    // concurrent solves stay reproducible: tie-breaking jitter and per-(chain, spin) tenures.
    let jitter: Vec<f32> = (0..batch * n).map(|_| rng.gen::<f32>() * 1e-3).collect();
    let jitter = Tensor::from_slice(&jitter).view([batch, n]).to(device);
    let tenures: Vec<i64> =
        (0..batch * n).map(|_| (params.tenure_min + rng.gen_range(0..=params.tenure_span)) as i64).collect();
    let tenures = Tensor::from_slice(&tenures).view([batch, n]).to(device);

    let scale = ising.weights.abs().mean(Kind::Float).double_value(&[]).max(1e-6);
    let jitter = jitter * scale;
    let mut s = spins.to_kind(Kind::Float).copy();
    let mut fields = s.matmul(dense_couplings) + &ising.fields;
    let mut energy = ising.hamiltonian(&s);
    let mut best_s = s.copy();
    let mut best_energy = energy.copy();
    let mut tabu_until = Tensor::zeros([batch, n], (Kind::Int64, device));
    let eps = 1e-6 * scale;
    for step in 0..params.steps as i64 {
        if step % 64 == 0 && deadline.is_some_and(|d| std::time::Instant::now() >= d) {
            break;
        }
        let delta = &s * &fields * -2.0;
        let aspiring = (energy.unsqueeze(1) + &delta).lt_tensor(&(best_energy.unsqueeze(1) - eps));
        let allowed = tabu_until.le(step).logical_or(&aspiring);
        let score = (&delta + &jitter).masked_fill(&allowed.logical_not(), f64::INFINITY);
        let chosen = score.argmin(1, true); // [B, 1]
        let chosen_delta = delta.gather(1, &chosen, false).squeeze_dim(1);
        let flipped = -s.gather(1, &chosen, false); // [B, 1], the new spin values
        s = s.scatter(1, &chosen, &flipped);
        fields += dense_couplings.index_select(0, &chosen.squeeze_dim(1)) * (&flipped * 2.0);
        energy += chosen_delta;
        let release = tenures.gather(1, &chosen, false) + step;
        tabu_until = tabu_until.scatter(1, &chosen, &release);
        let improved = energy.lt_tensor(&(&best_energy - eps)).unsqueeze(1);
        best_s = s.where_self(&improved, &best_s);
        best_energy = energy.minimum(&best_energy);
    }
    // Recompute exactly rather than trust the running sum of float deltas.
    let exact = ising.hamiltonian(&best_s);
    (best_s, exact)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::ising::{spins_to_tensor, IsingModel};
    use crate::search::tabu::{tabu_search, TabuWorkspace};
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;
    use tch::Device;

    #[test]
    fn tensor_and_native_tabu_agree_on_energies_and_never_worsen_a_start() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let n = 30usize;
        let mut couplings = Vec::new();
        for i in 0..n as u32 {
            for j in i + 1..n as u32 {
                if rng.gen_bool(0.25) {
                    couplings.push((i, j, if rng.gen_bool(0.5) { 1.0 } else { -1.0 }));
                }
            }
        }
        let model = IsingModel::new(n, couplings, vec![]);
        let ising = model.tensors(Device::Cpu);
        let dense = ising.dense_couplings();
        let batch = 8;
        let start: Vec<i8> = (0..batch * n).map(|_| if rng.gen_bool(0.5) { 1 } else { -1 }).collect();
        let params = TabuParams::for_size(n, 100);
        let (best, energies) = tensor_tabu_search(
            &ising,
            &dense,
            &spins_to_tensor(&start, batch, n, Device::Cpu),
            &params,
            &mut rng,
            None,
        );
        let best: Vec<f32> = best.flatten(0, 1).try_into().unwrap();
        let energies: Vec<f32> = energies.try_into().unwrap();
        let mut workspace = TabuWorkspace::default();
        for b in 0..batch {
            let chain: Vec<i8> = best[b * n..(b + 1) * n].iter().map(|&x| x as i8).collect();
            let exact = model.energy(&chain);
            assert!(
                (exact - f64::from(energies[b])).abs() < 1e-4,
                "chain {b}: tensor {} vs exact {exact}",
                energies[b]
            );
            let start_energy = model.energy(&start[b * n..(b + 1) * n]);
            assert!(exact <= start_energy + 1e-9);
            // The native polisher from the same start reaches a local minimum of the same model.
            let mut native = start[b * n..(b + 1) * n].to_vec();
            let native_energy = tabu_search(&model, &mut native, &params, &mut rng, &mut workspace, None);
            assert!((native_energy - model.energy(&native)).abs() < 1e-9);
            assert!(native_energy <= start_energy);
        }
    }
}
