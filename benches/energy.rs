//! `cargo bench --bench energy`: batched Hamiltonian as a tensor op vs the native per-chain loop,
//! native tabu flip throughput, and the Ising CSR against petgraph's graph types on the engine's
//! two hot operations. Medians of repeated runs, ratios against the native baseline.

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
    compare_with_petgraph(&model, &spins[..n], &mut rng);
}

/// Whether the Ising model's adjacency should be petgraph's or a hand-written CSR. The
/// engine's hot operations are "every local field" (a refresh) and "flip one spin, update its
/// neighbours' fields" (every accepted Metropolis move and every tabu flip); both are timed on the
/// same graph stored three ways: the model (petgraph's `csr::Csr`), a
/// hand-written CSR (rebuilt here), and petgraph's `UnGraph`.
fn compare_with_petgraph(model: &IsingModel, spins: &[i8], rng: &mut ChaCha8Rng) {
    use petgraph::visit::EdgeRef;
    let n = model.num_spins();
    let (offsets, targets, weights) = hand_written_csr(model);
    let hand_written = |i: usize| (offsets[i]..offsets[i + 1]).map(|k| (targets[k] as usize, weights[k]));
    let graph = petgraph::graph::UnGraph::<(), f64, u32>::from_edges(model.couplings().iter().copied());
    let graph_neighbors = |i: usize| {
        graph.edges(petgraph::graph::NodeIndex::new(i)).map(move |e| {
            let other = if e.source().index() == i { e.target() } else { e.source() };
            (other.index(), *e.weight())
        })
    };
    let refresh_rows = [
        ("model (petgraph csr)", time_refresh(spins, |i| model.neighbors(i))),
        ("hand-written csr", time_refresh(spins, hand_written)),
        ("petgraph graph", time_refresh(spins, graph_neighbors)),
    ];
    let picks: Vec<usize> = (0..1_000_000).map(|_| rng.gen_range(0..n)).collect();
    let flip_rows = [
        ("model (petgraph csr)", time_flips(model, spins, &picks, |i| model.neighbors(i))),
        ("hand-written csr", time_flips(model, spins, &picks, hand_written)),
        ("petgraph graph", time_flips(model, spins, &picks, graph_neighbors)),
    ];
    for (label, rows) in [("all local fields", &refresh_rows), ("1M flips with field updates", &flip_rows)] {
        let model_ms = rows[0].1;
        let cells: Vec<String> =
            rows.iter().map(|(name, ms)| format!("{name} {ms:.3} ms ({:.2}x the model)", ms / model_ms)).collect();
        println!("{label}, n={n}, m={}: {}", model.couplings().len(), cells.join(", "));
    }
}

/// Median ms to compute every local field through `neighbors`.
fn time_refresh<I: Iterator<Item = (usize, f64)>>(spins: &[i8], neighbors: impl Fn(usize) -> I) -> f64 {
    let mut fields = vec![0.0; spins.len()];
    median_ms(
        || {
            for (i, f) in fields.iter_mut().enumerate() {
                *f = neighbors(i).map(|(j, w)| w * f64::from(spins[j])).sum();
            }
            std::hint::black_box(&fields);
        },
        51,
    )
}

/// Median ms to flip the `picks` one by one, updating the neighbours' fields through `neighbors`.
fn time_flips<I: Iterator<Item = (usize, f64)>>(
    model: &IsingModel,
    spins: &[i8],
    picks: &[usize],
    neighbors: impl Fn(usize) -> I,
) -> f64 {
    let mut state = spins.to_vec();
    let mut fields = vec![0.0; spins.len()];
    model.local_fields(&state, &mut fields);
    median_ms(
        || {
            for &i in picks {
                state[i] = -state[i];
                let twice = 2.0 * f64::from(state[i]);
                neighbors(i).for_each(|(j, w)| fields[j] += twice * w);
            }
            std::hint::black_box(&fields);
        },
        7,
    )
}

/// A hand-written adjacency for `IsingModel`: a counting sort by source.
fn hand_written_csr(model: &IsingModel) -> (Vec<usize>, Vec<u32>, Vec<f64>) {
    let n = model.num_spins();
    let mut offsets = vec![0usize; n + 1];
    for &(i, j, _) in model.couplings() {
        offsets[i as usize + 1] += 1;
        offsets[j as usize + 1] += 1;
    }
    for k in 0..n {
        offsets[k + 1] += offsets[k];
    }
    let mut cursor = offsets.clone();
    let mut targets = vec![0u32; 2 * model.couplings().len()];
    let mut weights = vec![0.0; 2 * model.couplings().len()];
    for &(i, j, w) in model.couplings() {
        for (a, b) in [(i, j), (j, i)] {
            targets[cursor[a as usize]] = b;
            weights[cursor[a as usize]] = w;
            cursor[a as usize] += 1;
        }
    }
    (offsets, targets, weights)
}
