//! Simulated bifurcation (Goto, Tatsumura & Dixon 2019, "Combinatorial optimization by simulating
//! adiabatic bifurcations in nonlinear Hamiltonian systems"; Goto et al. 2021, "High-performance
//! combinatorial optimization based on classical mechanics"): every spin of every chain is a
//! particle with position x and momentum y, and one step updates all of them with a single
//! product against the couplings, so B chains of n spins advance as two [B, n] tensors in a few
//! large kernels. In Goto 2021's notation (their Eqs. 5-6, with the inelastic walls of Eq. 7):
//!
//!   y <- y + dt [ -(a0 - a(t)) x - c0 (J s + h) ],   x <- x + dt a0 y,
//!   |x_i| > 1  =>  x_i <- sign(x_i), y_i <- 0,
//!
//! where a(t) rises linearly from 0 to a0, and s = x for ballistic SB (bSB) or s = sign(x) for
//! discrete SB (dSB). Our H(s) = sum_{i<j} J_ij s_i s_j + h.s is their Ising energy with the
//! couplings' sign flipped, hence the minus before c0. c0 = 0.5 / (sqrt(n) sigma_J) as in their
//! Eq. 8 (sigma_J the root mean square of the dense matrix's entries).
//!
//! The spins sign(x) are read every `check_every` steps (the only host synchronisation), and each
//! chain keeps the best state it passed through. Every random number is hashed from the seed
//! (`seed::hashed_uniform`), so a seed reproduces a run on the same device.

use crate::search::ising::IsingTensors;
use crate::seed::hashed_uniform;
use tch::{Kind, Tensor};

/// Which dynamics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dynamics {
    /// bSB: the forces read the positions. Here (2 cores, 256 chains, 1000 steps) it cut 3047
    /// of G14's 3064 and 13333 of G22's 13359 (`tests/bifurcation.rs`, `--ignored`).
    Ballistic,
    /// dSB: the forces read the signs. With Goto 2021's dt 1.25 and c0 it cut 3037 of G14 but
    /// only 10152 of G22 (random spins cut about 10,000): untuned for sparse graphs yet.
    Discrete,
}

/// Every knob of one run; `Default` documents the defaults.
#[derive(Debug, Clone)]
pub struct BifurcationParams {
    pub dynamics: Dynamics,
    /// Steps; a(t) reaches a0 at the last (default 1000).
    pub steps: usize,
    /// Time step (default 0.5, for bSB; Goto 2021 uses 1.25 for dSB).
    pub dt: f64,
    /// The pump's final amplitude and the detuning a0 (default 1).
    pub a0: f64,
    /// Coupling scale; None: 0.5 / (sqrt(n) sigma_J) (Goto 2021, Eq. 8).
    pub c0: Option<f64>,
    /// Read the signs and keep each chain's best every this many steps (default 10).
    pub check_every: usize,
    /// Initial positions and momenta are uniform in [-amplitude, amplitude] (default 0.1).
    pub initial_amplitude: f64,
}

impl Default for BifurcationParams {
    fn default() -> Self {
        BifurcationParams {
            dynamics: Dynamics::Ballistic,
            steps: 1000,
            dt: 0.5,
            a0: 1.0,
            c0: None,
            check_every: 10,
            initial_amplitude: 0.1,
        }
    }
}

/// The couplings as the step multiplies them: a dense [n, n] matrix, or a sparse one for graphs
/// whose dense matrix would be mostly zeros (a 10,000-spin torus: 4 of 10,000 per row).
pub enum CouplingMatrix {
    Dense(Tensor),
    Sparse(Tensor),
}

impl CouplingMatrix {
    /// Dense when at least `dense_fraction` of the entries are non-zero or n is small; sparse
    /// (COO, coalesced) otherwise.
    pub fn of(ising: &IsingTensors, dense_fraction: f64) -> Self {
        let n = ising.num_spins as i64;
        let nonzero = 2 * ising.weights.size()[0];
        if n <= 1024 || nonzero as f64 >= dense_fraction * (n * n) as f64 {
            return CouplingMatrix::Dense(ising.dense_couplings());
        }
        let rows = Tensor::cat(&[&ising.rows, &ising.cols], 0);
        let cols = Tensor::cat(&[&ising.cols, &ising.rows], 0);
        let indices = Tensor::stack(&[rows, cols], 0);
        let values = Tensor::cat(&[&ising.weights, &ising.weights], 0);
        let sparse =
            Tensor::sparse_coo_tensor_indices_size(&indices, &values, [n, n], (Kind::Float, ising.device), false);
        CouplingMatrix::Sparse(sparse.coalesce())
    }

    /// s J for a batch s [B, n] (J is symmetric).
    pub fn product(&self, s: &Tensor) -> Tensor {
        match self {
            CouplingMatrix::Dense(j) => s.matmul(j),
            CouplingMatrix::Sparse(j) => j.mm(&s.transpose(0, 1)).transpose(0, 1),
        }
    }

    /// Root mean square of the dense matrix's entries (Goto 2021's sigma_J).
    fn rms(&self, n: usize) -> f64 {
        let squares = match self {
            CouplingMatrix::Dense(j) => j.square().sum(Kind::Double).double_value(&[]),
            CouplingMatrix::Sparse(j) => j.values().square().sum(Kind::Double).double_value(&[]),
        };
        (squares / (n * n.saturating_sub(1)).max(1) as f64).sqrt()
    }
}

/// What a run found: each chain's best spins and energy.
pub struct BifurcationOutcome {
    /// [B, n] float +-1.
    pub spins: Tensor,
    /// [B].
    pub energies: Tensor,
    pub steps_run: usize,
}

/// Runs `chains` chains of `params` on the model from `seed`, stopping early at `deadline`.
pub fn simulated_bifurcation(
    ising: &IsingTensors,
    couplings: &CouplingMatrix,
    chains: usize,
    params: &BifurcationParams,
    seed: u64,
    deadline: Option<std::time::Instant>,
) -> BifurcationOutcome {
    let (b, n) = (chains as i64, ising.num_spins as i64);
    let index = Tensor::arange(b * n, (Kind::Int64, ising.device)).view([b, n]);
    let amplitude = params.initial_amplitude;
    let mut x = (hashed_uniform(&index, seed, 0) * 2.0 - 1.0) * amplitude;
    let mut y = (hashed_uniform(&index, seed, 1) * 2.0 - 1.0) * amplitude;
    let c0 = params.c0.unwrap_or_else(|| 0.5 / ((n as f64).sqrt() * couplings.rms(ising.num_spins).max(1e-12)));
    let fields = ising.fields.unsqueeze(0);
    let signs = |x: &Tensor| x.sign() + x.eq(0.0).to_kind(Kind::Float);
    let mut best_spins = signs(&x);
    let mut best_energies = ising.hamiltonian(&best_spins);
    let mut steps_run = 0;
    for step in 0..params.steps {
        if step % 16 == 0 && deadline.is_some_and(|d| std::time::Instant::now() >= d) {
            break;
        }
        let pump = params.a0 * step as f64 / params.steps.max(1) as f64;
        let read = match params.dynamics {
            Dynamics::Ballistic => x.shallow_clone(),
            Dynamics::Discrete => x.sign(),
        };
        let force = couplings.product(&read) + &fields;
        y += (&x * (pump - params.a0) - force * c0) * params.dt;
        x += &y * (params.dt * params.a0);
        // Inelastic walls: a particle past +-1 stops there.
        let outside = x.abs().gt(1.0);
        x = x.clamp(-1.0, 1.0);
        y = y.masked_fill(&outside, 0.0);
        steps_run = step + 1;
        if steps_run % params.check_every.max(1) == 0 || steps_run == params.steps {
            let spins = signs(&x);
            let energies = ising.hamiltonian(&spins);
            let better = energies.lt_tensor(&best_energies);
            best_spins = best_spins.where_self(&better.unsqueeze(1).logical_not(), &spins);
            best_energies = best_energies.minimum(&energies);
        }
    }
    BifurcationOutcome { spins: best_spins, energies: best_energies, steps_run }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::ising::IsingModel;
    use tch::Device;

    /// A toroidal L x L grid with +-1 couplings from a fixed pattern (frustrated).
    fn torus(side: u32) -> IsingModel {
        let mut couplings = Vec::new();
        for r in 0..side {
            for c in 0..side {
                let i = r * side + c;
                for j in [r * side + (c + 1) % side, ((r + 1) % side) * side + c] {
                    let w = if (i * 7 + j * 3) % 5 < 2 { -1.0 } else { 1.0 };
                    couplings.push((i.min(j), i.max(j), w));
                }
            }
        }
        couplings.sort_by_key(|c| (c.0, c.1));
        IsingModel::new((side * side) as usize, couplings, Vec::new())
    }

    fn as_i8(spins: &Tensor) -> Vec<Vec<i8>> {
        let rows: Vec<Vec<f32>> = spins.try_into().unwrap();
        rows.iter().map(|r| r.iter().map(|&v| if v > 0.0 { 1 } else { -1 }).collect()).collect()
    }

    /// Each chain's reported energy is the exact energy of its reported spins; a seed
    /// reproduces the run; dense and sparse couplings give the same dynamics.
    #[test]
    fn energies_are_exact_and_a_seed_reproduces_the_run() {
        let model = torus(6);
        let ising = model.tensors(Device::Cpu);
        let dense = CouplingMatrix::Dense(ising.dense_couplings());
        for dynamics in [Dynamics::Discrete, Dynamics::Ballistic] {
            let params = BifurcationParams {
                dynamics,
                steps: 300,
                dt: if dynamics == Dynamics::Discrete { 1.25 } else { 0.5 },
                ..Default::default()
            };
            let run = simulated_bifurcation(&ising, &dense, 16, &params, 7, None);
            let again = simulated_bifurcation(&ising, &dense, 16, &params, 7, None);
            assert!(run.spins.equal(&again.spins) && run.energies.equal(&again.energies), "{dynamics:?}: reproducible");
            let energies: Vec<f32> = run.energies.shallow_clone().try_into().unwrap();
            for (spins, energy) in as_i8(&run.spins).iter().zip(&energies) {
                assert!((model.energy(spins) - f64::from(*energy)).abs() < 1e-4, "{dynamics:?}");
            }
            let other = simulated_bifurcation(&ising, &dense, 16, &params, 8, None);
            assert!(!run.spins.equal(&other.spins), "{dynamics:?}: another seed, other chains");
        }
        let big = torus(40);
        let tensors = big.tensors(Device::Cpu);
        let sparse = CouplingMatrix::of(&tensors, 0.01);
        assert!(matches!(sparse, CouplingMatrix::Sparse(_)), "1,600 spins with 4 neighbours each are sparse");
        let dense = CouplingMatrix::Dense(tensors.dense_couplings());
        let params = BifurcationParams { steps: 50, ..Default::default() };
        let (a, b) = (
            simulated_bifurcation(&tensors, &sparse, 4, &params, 3, None),
            simulated_bifurcation(&tensors, &dense, 4, &params, 3, None),
        );
        let (ea, eb): (Vec<f32>, Vec<f32>) = (a.energies.try_into().unwrap(), b.energies.try_into().unwrap());
        assert_eq!(ea, eb, "sparse and dense products agree");
    }

    /// bSB and dSB find the ground state of a ferromagnetic torus (every coupling -1: all spins equal,
    /// energy -2n) and of a planted one (Mattis: J_ij = -w_ij p_i p_j for a hidden pattern p,
    /// whose ground state p has energy -sum w, while its couplings look like a spin glass's).
    #[test]
    fn finds_the_ground_states_of_a_ferromagnet_and_a_planted_torus() {
        let side = 8u32;
        let n = (side * side) as usize;
        let pattern: Vec<f64> = (0..n).map(|i| if (i * 37 + 11) % 7 < 3 { 1.0 } else { -1.0 }).collect();
        let edges = torus(side).couplings().to_vec();
        let ferro: Vec<(u32, u32, f64)> = edges.iter().map(|&(i, j, _)| (i, j, -1.0)).collect();
        let planted: Vec<(u32, u32, f64)> = edges
            .iter()
            .map(|&(i, j, _)| {
                let w = 1.0 + f64::from((i + 3 * j) % 2);
                (i, j, -w * pattern[i as usize] * pattern[j as usize])
            })
            .collect();
        for (name, couplings) in [("ferromagnet", ferro), ("planted", planted)] {
            let ground: f64 = -couplings.iter().map(|c| c.2.abs()).sum::<f64>();
            let model = IsingModel::new(n, couplings, Vec::new());
            let ising = model.tensors(Device::Cpu);
            let matrix = CouplingMatrix::of(&ising, 0.01);
            for (dynamics, dt) in [(Dynamics::Ballistic, 0.5), (Dynamics::Discrete, 1.25)] {
                let params = BifurcationParams { dynamics, dt, ..Default::default() };
                let run = simulated_bifurcation(&ising, &matrix, 32, &params, 1, None);
                let best = run.energies.min().double_value(&[]);
                assert_eq!(best, ground, "{name} {dynamics:?}: ground state");
            }
        }
    }
}
