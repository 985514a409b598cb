//! The chains' policy-regularized Metropolis dynamics (see anneal.rs) as batched tensor ops for an
//! accelerator: each step proposes a random subset of spins in every chain at once and keeps the
//! local fields exact with one product against the dense couplings.

use crate::search::ising::IsingTensors;
use crate::seed::hashed_uniform;
use tch::{Kind, Tensor};

/// Advances a batch of chains. `spins` [B, n] float +-1; `fields` [B, n] their local fields
/// (J s + h); `log_odds` [n] of the policy in gauge s_0 = +1; `gauge` [B, 1] maps it into each
/// chain's gauge (the chain's s_0 at the start of the round, or 1 without spin-flip symmetry).
/// Each step proposes every spin with probability `proposal_fraction` (small, so that few
/// neighbours move together). Returns the new (spins, fields).
#[allow(clippy::too_many_arguments)]
pub fn tensor_metropolis(
    dense_couplings: &Tensor,
    ising: &IsingTensors,
    spins: &Tensor,
    fields: &Tensor,
    log_odds: &Tensor,
    gauge: &Tensor,
    steps: usize,
    (t_start, t_end): (f64, f64),
    proposal_fraction: f64,
    seed: u64,
    counter: u64,
    deadline: Option<std::time::Instant>,
) -> (Tensor, Tensor) {
    let size = spins.size();
    let index = Tensor::arange(size[0] * size[1], (Kind::Int64, ising.device)).view([size[0], size[1]]);
    let bias = gauge * log_odds.unsqueeze(0);
    let (mut s, mut f) = (spins.copy(), fields.copy());
    let ratio = (t_end / t_start).powf(1.0 / steps.max(1) as f64);
    let mut temperature = t_start;
    for step in 0..steps as u64 {
        if step % 16 == 0 && deadline.is_some_and(|d| std::time::Instant::now() >= d) {
            break;
        }
        let proposed = hashed_uniform(&index, seed, 2 * (counter + step)).lt(proposal_fraction);
        let delta = &s * &f * (-2.0 / temperature) + &s * &bias;
        let accept_probability = (-delta).exp().clamp_max(1.0);
        let accepted = hashed_uniform(&index, seed, 2 * (counter + step) + 1).lt_tensor(&accept_probability);
        let flips = proposed.logical_and(&accepted).to_kind(Kind::Float);
        // s' = s (1 - 2 m); f' = f + (s' - s) J = f - 2 (m * s) J.
        let moved = &flips * &s;
        f -= moved.matmul(dense_couplings) * 2.0;
        s -= moved * 2.0;
        temperature *= ratio;
    }
    (s, f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::ising::{spins_to_tensor, IsingModel};
    use tch::Device;

    #[test]
    fn hashed_uniforms_are_reproducible_in_range_and_roughly_uniform() {
        let index = Tensor::arange(100_000, (Kind::Int64, Device::Cpu));
        let a = hashed_uniform(&index, 7, 3);
        assert!(a.equal(&hashed_uniform(&index, 7, 3)));
        assert!(!a.equal(&hashed_uniform(&index, 7, 4)));
        let (min, max, mean) =
            (a.min().double_value(&[]), a.max().double_value(&[]), a.mean(Kind::Float).double_value(&[]));
        assert!(min >= 0.0 && max < 1.0 && (mean - 0.5).abs() < 0.01, "min {min} max {max} mean {mean}");
    }

    #[test]
    fn tensor_metropolis_keeps_local_fields_exact_and_cools_towards_low_energy() {
        let n = 40usize;
        let couplings: Vec<(u32, u32, f64)> =
            (0..n as u32).map(|i| (i, (i + 1) % n as u32, 1.0)).map(|(i, j, w)| (i.min(j), i.max(j), w)).collect();
        let model = IsingModel::new(n, couplings, vec![]);
        let ising = model.tensors(Device::Cpu);
        let dense = ising.dense_couplings();
        let batch = 16usize;
        let start: Vec<i8> = (0..batch * n).map(|k| if (k * 7919) % 3 == 0 { 1 } else { -1 }).collect();
        let s0 = spins_to_tensor(&start, batch, n, Device::Cpu);
        let f0 = s0.matmul(&dense) + &ising.fields;
        let log_odds = Tensor::zeros([n as i64], (Kind::Float, Device::Cpu));
        let (s, f) = tensor_metropolis(
            &dense,
            &ising,
            &s0,
            &f0,
            &log_odds,
            &s0.narrow(1, 0, 1),
            400,
            (2.0, 0.05),
            0.2,
            1,
            0,
            None,
        );
        assert!((f - (s.matmul(&dense) + &ising.fields)).abs().max().double_value(&[]) < 1e-4);
        let before = ising.hamiltonian(&s0).mean(Kind::Float).double_value(&[]);
        let after = ising.hamiltonian(&s).mean(Kind::Float).double_value(&[]);
        // The antiferromagnetic ring's ground state has H = -n; random starts sit near 0.
        assert!(after < before - 10.0 && after < -0.6 * n as f64, "before {before} after {after}");
    }
}
