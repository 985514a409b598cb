//! `cargo bench --bench energy`: batched Hamiltonian as a tensor op vs the native per-chain loop,
//! and native tabu flip throughput. Medians of repeated runs, ratio against the native baseline.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rlsolver::search::ising::{spins_to_tensor, IsingModel};
use rlsolver::search::tabu::{tabu_search, TabuParams, TabuWorkspace};
use std::time::Instant;
use tch::Device;

fn median_ms(mut f: impl FnMut(), repeats: usize) -> f64 {
    let mut times: Vec<f64> = (0..repeats)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[repeats / 2]
}

fn main() {
    let (n, m, batch) = (2000usize, 20_000usize, 1024usize);
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let mut seen = std::collections::HashSet::new();
    let mut couplings = Vec::new();
    while couplings.len() < m {
        let (u, v) = (rng.gen_range(0..n as u32), rng.gen_range(0..n as u32));
        if u != v && seen.insert((u.min(v), u.max(v))) {
            couplings.push((u.min(v), u.max(v), 1.0));
        }
    }
    let model = IsingModel::new(n, couplings, vec![]);
    let spins: Vec<i8> = (0..batch * n).map(|_| if rng.gen_bool(0.5) { 1 } else { -1 }).collect();

    let native = median_ms(
        || {
            let total: f64 = spins.chunks(n).map(|s| model.energy(s)).sum();
            std::hint::black_box(total);
        },
        7,
    );
    let device = Device::cuda_if_available();
    let tensors = model.tensors(device);
    let batch_tensor = spins_to_tensor(&spins, batch, n, device);
    let tensor = median_ms(
        || {
            let e = tensors.hamiltonian(&batch_tensor).sum(tch::Kind::Float).double_value(&[]);
            std::hint::black_box(e);
        },
        7,
    );
    println!("energy of {batch} chains, n={n}, m={m}: native {native:.2} ms, tensor ({device:?}) {tensor:.2} ms, ratio native/tensor {:.2}", native / tensor);

    let params = TabuParams::for_size(n, 20_000);
    let mut workspace = TabuWorkspace::default();
    let tabu = median_ms(
        || {
            let mut chain = spins[..n].to_vec();
            std::hint::black_box(tabu_search(&model, &mut chain, &params, &mut rng, &mut workspace, None));
        },
        5,
    );
    println!("native tabu: {:.2} M flips/s on one core (n={n})", 20_000.0 / tabu / 1e3);
}
