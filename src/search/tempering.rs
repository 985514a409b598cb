//! Parallel tempering (replica exchange: Swendsen & Wang 1986, Hukushima & Nemoto 1996) with
//! Metropolis sweeps over the colour classes of the coupling graph, as [B, n] tensors: spins of
//! one colour share no coupling, so every spin of a class in every chain is proposed and flipped
//! in one step, exactly as single-spin Metropolis would (the detailed balance of a sequential
//! sweep, unlike the search's random-subset tensor steps, whose neighbours may flip together).
//!
//! The B chains form R = B / K replicas of a ladder of K temperatures, geometric from
//! sqrt(mean degree) * mean|J| * `hot` down to mean|J| * `cold`; chain b sits at rung b mod K.
//! One sweep visits every class once:
//!
//!   f_c = s J_{:,c} + h_c,   dE = -2 s_c f_c,   flip where u < exp(-beta dE),
//!
//! then neighbouring rungs (k, k+1), even or odd pairs in turn, exchange their states with the
//! Metropolis probability min(1, exp((beta_k - beta_{k+1}) (E_k - E_{k+1}))) (Hukushima & Nemoto
//! 1996, Eq. 6). Energies are recomputed exactly after each sweep; each chain keeps the best
//! state it passed through. Random numbers are hashed from (seed, counter), so a seed
//! reproduces a run on the same device.

use crate::search::ising::{IsingModel, IsingTensors};
use crate::seed::hashed_uniform;
use tch::{Device, Kind, Tensor};

/// Every knob of the tempering dynamics; `Default` documents the defaults.
#[derive(Debug, Clone)]
pub struct TemperingParams {
    /// Temperatures in the ladder, K (default 16); chain b runs at rung b mod K.
    pub rungs: usize,
    /// The hottest rung: sqrt(mean degree) * mean|J| * `hot` (default 1.5: at the search's
    /// anneal start, 0.5, the hottest chains of a mean-degree-8 graph sat within 3% of the
    /// coldest's energy and never decorrelated; on generated graphs of 1,000-2,000 nodes at 5 s,
    /// 0.5 to 3 were within the seeds' spread).
    pub hot: f64,
    /// The coldest rung: mean|J| * `cold` (default 0.1).
    pub cold: f64,
    /// Sweeps per round of the search (default 50).
    pub sweeps: usize,
}

impl Default for TemperingParams {
    fn default() -> Self {
        TemperingParams { rungs: 16, hot: 1.5, cold: 0.1, sweeps: 50 }
    }
}

/// One colour class: its spins and the couplings into them.
struct ColourBlock {
    /// [|c|] spin indices.
    spins: Tensor,
    /// h restricted to the class, [|c|].
    fields: Tensor,
    couplings: BlockCouplings,
    /// [B, |c|] element numbers of the class's acceptance draws (fixed, so made once).
    draws: Tensor,
}

/// J's columns of one class: dense [n, |c|], or sparse [|c|, n] (J^T's rows, for `mm`).
enum BlockCouplings {
    Dense(Tensor),
    Sparse(Tensor),
}

impl ColourBlock {
    /// s J_{:,c} + h_c for a batch s [B, n].
    fn fields_of(&self, s: &Tensor) -> Tensor {
        let product = match &self.couplings {
            BlockCouplings::Dense(j) => s.matmul(j),
            BlockCouplings::Sparse(jt) => jt.mm(&s.transpose(0, 1)).transpose(0, 1),
        };
        product + &self.fields
    }
}

/// The chains of a tempering run, on one device.
pub struct Tempering {
    ising: IsingTensors,
    blocks: Vec<ColourBlock>,
    rungs: usize,
    /// [B, 1]: 1 / T of each chain's rung.
    betas: Tensor,
    /// [B, n] float +-1.
    spins: Tensor,
    /// [B] exact energies of `spins`.
    energies: Tensor,
    best_spins: Tensor,
    best_energies: Tensor,
    /// Made once for the exchanges: [R, K - 1] element numbers of their draws, [1, K - 1] each
    /// pair's parity, [R, K] each chain's own index.
    pair_draws: Tensor,
    pair_parity: Tensor,
    slots: Tensor,
    seed: u64,
    /// Counter of the hashed random numbers drawn so far.
    counter: u64,
}

impl Tempering {
    /// `chains` chains (rounded up to a multiple of the rungs) from uniformly random spins.
    /// Dense blocks when n <= 1024 or at least 1% of J's entries are non-zero, sparse otherwise.
    pub fn new(model: &IsingModel, device: Device, chains: usize, params: &TemperingParams, seed: u64) -> Self {
        let n = model.num_spins();
        let rungs = params.rungs.max(1);
        let b = chains.max(1).div_ceil(rungs) * rungs;
        let ising = model.tensors(device);
        let classes = model.colour_classes();
        let dense = n <= 1024 || (2 * model.couplings().len()) as f64 >= 0.01 * (n * n) as f64;
        let dense_matrix = dense.then(|| ising.dense_couplings());
        let blocks = classes
            .iter()
            .map(|class| {
                let index: Vec<i64> = class.iter().map(|&i| i64::from(i)).collect();
                let spins = Tensor::from_slice(&index).to(device);
                let fields = ising.fields.index_select(0, &spins);
                let couplings = match &dense_matrix {
                    Some(j) => BlockCouplings::Dense(j.index_select(1, &spins)),
                    None => BlockCouplings::Sparse(sparse_block(model, class, device)),
                };
                let width = class.len() as i64;
                let draws = Tensor::arange(b as i64 * width, (Kind::Int64, device)).view([b as i64, width]);
                ColourBlock { spins, fields, couplings, draws }
            })
            .collect();
        let (hot_unit, cold_unit) = super::temperature_units(model);
        let t_hot = hot_unit * params.hot;
        let t_cold = (cold_unit * params.cold).min(t_hot);
        let betas: Vec<f32> = (0..b)
            .map(|c| {
                let k = c % rungs;
                let progress = if rungs > 1 { k as f64 / (rungs - 1) as f64 } else { 1.0 };
                (1.0 / (t_hot * (t_cold / t_hot).powf(progress))) as f32
            })
            .collect();
        let betas = Tensor::from_slice(&betas).to(device).unsqueeze(1);
        let index = Tensor::arange((b * n) as i64, (Kind::Int64, device)).view([b as i64, n as i64]);
        let spins = hashed_uniform(&index, seed, 0).lt(0.5).to_kind(Kind::Float) * 2.0 - 1.0;
        let energies = ising.hamiltonian(&spins);
        let (replicas, k) = ((b / rungs) as i64, rungs as i64);
        let pairs = (k - 1).max(1);
        let pair_draws = Tensor::arange(replicas * pairs, (Kind::Int64, device)).view([replicas, pairs]);
        let pair_parity = Tensor::arange(pairs, (Kind::Int64, device)).remainder(2).unsqueeze(0);
        let slots = (Tensor::arange(replicas, (Kind::Int64, device)) * k).unsqueeze(1)
            + Tensor::arange(k, (Kind::Int64, device)).unsqueeze(0);
        Tempering {
            pair_draws,
            pair_parity,
            slots,
            best_spins: spins.copy(),
            best_energies: energies.copy(),
            ising,
            blocks,
            rungs,
            betas,
            spins,
            energies,
            seed,
            counter: 1,
        }
    }

    pub fn chains(&self) -> usize {
        self.spins.size()[0] as usize
    }

    /// Runs `sweeps` sweeps (each followed by an exchange), stopping early at `deadline`.
    /// Returns the sweeps run.
    pub fn run(&mut self, sweeps: usize, deadline: Option<std::time::Instant>) -> usize {
        let b = self.chains() as i64;
        for sweep in 0..sweeps {
            if sweep % 4 == 0 && deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                return sweep;
            }
            for block in &self.blocks {
                let s_c = self.spins.index_select(1, &block.spins);
                let delta = &s_c * block.fields_of(&self.spins) * -2.0;
                let u = hashed_uniform(&block.draws, self.seed, self.counter);
                self.counter += 1;
                let accept = u.lt_tensor(&(-(&delta) * &self.betas).exp());
                let flipped = s_c.where_self(&accept.logical_not(), &(-&s_c));
                let _ = self.spins.index_copy_(1, &block.spins, &flipped);
            }
            self.energies = self.ising.hamiltonian(&self.spins);
            self.exchange(b);
            let better = self.energies.lt_tensor(&self.best_energies);
            self.best_spins = self.best_spins.where_self(&better.unsqueeze(1).logical_not(), &self.spins);
            self.best_energies = self.best_energies.minimum(&self.energies);
        }
        sweeps
    }

    /// Replica exchange between neighbouring rungs, even pairs then odd pairs on alternate calls.
    fn exchange(&mut self, b: i64) {
        let k = self.rungs as i64;
        if k < 2 {
            return;
        }
        let replicas = b / k;
        let parity = (self.counter % 2) as i64;
        let device = self.ising.device;
        let energies = self.energies.view([replicas, k]);
        let betas = self.betas.view([replicas, k]);
        let (e_low, e_high) = (energies.narrow(1, 0, k - 1), energies.narrow(1, 1, k - 1));
        let (b_low, b_high) = (betas.narrow(1, 0, k - 1), betas.narrow(1, 1, k - 1));
        let log_ratio = (b_low - b_high) * (e_low - e_high);
        let u = hashed_uniform(&self.pair_draws, self.seed, self.counter);
        self.counter += 1;
        let swap = u.lt_tensor(&log_ratio.exp()).logical_and(&self.pair_parity.eq(parity)).to_kind(Kind::Int64);
        // Rung k takes k + 1's state where pair (k, k + 1) swaps, and k + 1 takes k's.
        let zeros = Tensor::zeros([replicas, 1], (Kind::Int64, device));
        let up = Tensor::cat(&[&swap, &zeros], 1);
        let down = Tensor::cat(&[&zeros, &swap], 1);
        let source = (&self.slots + up - down).view([b]);
        self.spins = self.spins.index_select(0, &source);
        self.energies = self.energies.index_select(0, &source);
    }

    /// Each chain's best (spins [B, n], energies [B]) since `forget_best`.
    pub fn best(&self) -> (&Tensor, &Tensor) {
        (&self.best_spins, &self.best_energies)
    }

    /// The best states start over from the current ones.
    pub fn forget_best(&mut self) {
        self.best_spins = self.spins.copy();
        self.best_energies = self.energies.copy();
    }

    /// Chain c continues from row r of `states` [R, n] for each (c, r) in `placements`.
    pub fn place(&mut self, chains: &[i64], states: &Tensor) {
        let index = Tensor::from_slice(chains).to(self.ising.device);
        let _ = self.spins.index_copy_(0, &index, &states.to_kind(Kind::Float).to(self.ising.device));
        self.energies = self.ising.hamiltonian(&self.spins);
    }
}

/// J^T's rows for the spins of `class`, sparse [|c|, n].
fn sparse_block(model: &IsingModel, class: &[u32], device: Device) -> Tensor {
    let (mut rows, mut cols, mut values) = (Vec::new(), Vec::new(), Vec::new());
    for (row, &j) in class.iter().enumerate() {
        for (i, w) in model.neighbors(j as usize) {
            rows.push(row as i64);
            cols.push(i as i64);
            values.push(w as f32);
        }
    }
    let indices = Tensor::stack(&[Tensor::from_slice(&rows), Tensor::from_slice(&cols)], 0).to(device);
    let values = Tensor::from_slice(&values).to(device);
    let size = [class.len() as i64, model.num_spins() as i64];
    Tensor::sparse_coo_tensor_indices_size(&indices, &values, size, (Kind::Float, device), false).coalesce()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problems::maxcut::generate::random_gset;
    use crate::problems::maxcut::parse_gset;
    use crate::problems::{IsingProblem, Limits};

    fn graph(n: usize, m: usize, seed: u64) -> IsingModel {
        parse_gset(&random_gset(n, m, &[1, -1], seed), &Limits::default()).unwrap().ising().clone()
    }

    fn rows(spins: &Tensor) -> Vec<Vec<i8>> {
        let rows: Vec<Vec<f32>> = spins.to_device(Device::Cpu).try_into().unwrap();
        rows.iter().map(|r| r.iter().map(|&v| if v > 0.0 { 1 } else { -1 }).collect()).collect()
    }

    #[test]
    fn colour_classes_are_independent_sets_covering_every_spin() {
        let model = graph(300, 1500, 3);
        let classes = model.colour_classes();
        let mut seen = vec![0; 300];
        for class in &classes {
            let mut colour = vec![false; 300];
            class.iter().for_each(|&i| colour[i as usize] = true);
            for &(i, j, _) in model.couplings() {
                assert!(!(colour[i as usize] && colour[j as usize]), "edge {i}-{j} inside a class");
            }
            class.iter().for_each(|&i| seen[i as usize] += 1);
        }
        assert!(seen.iter().all(|&k| k == 1));
        assert!(classes.len() < 20, "{} colours for mean degree 10", classes.len());
    }

    /// The tracked energies are the exact energies of the states (native f64 energy), the best
    /// only improves, a seed reproduces the run, and dense and sparse blocks agree.
    #[test]
    fn energies_are_exact_and_a_seed_reproduces_the_run() {
        let model = graph(1100, 2200, 5);
        let params = TemperingParams { rungs: 4, ..Default::default() };
        let mut pt = Tempering::new(&model, Device::Cpu, 8, &params, 11);
        assert!(matches!(pt.blocks[0].couplings, BlockCouplings::Sparse(_)));
        let start: f64 = pt.best().1.min().double_value(&[]);
        pt.run(20, None);
        let (spins, energies) = pt.best();
        let energies: Vec<f64> = energies.to_kind(Kind::Double).try_into().unwrap();
        for (row, energy) in rows(spins).iter().zip(&energies) {
            assert!((model.energy(row) - energy).abs() < 1e-3, "{} vs {energy}", model.energy(row));
        }
        let best = energies.iter().cloned().fold(f64::INFINITY, f64::min);
        assert!(best < start - 50.0, "20 sweeps: {start} -> {best}");
        let current: Vec<f64> = pt.energies.to_kind(Kind::Double).try_into().unwrap();
        for (row, energy) in rows(&pt.spins).iter().zip(&current) {
            assert!((model.energy(row) - energy).abs() < 1e-3);
        }
        let mut again = Tempering::new(&model, Device::Cpu, 8, &params, 11);
        again.run(20, None);
        assert!(again.spins.equal(&pt.spins));
        // The same dynamics from dense blocks.
        let small = graph(200, 800, 6);
        let mut dense = Tempering::new(&small, Device::Cpu, 8, &params, 2);
        let mut sparse = Tempering::new(&small, Device::Cpu, 8, &params, 2);
        sparse.blocks = small
            .colour_classes()
            .iter()
            .zip(&dense.blocks)
            .map(|(class, block)| ColourBlock {
                spins: block.spins.shallow_clone(),
                fields: block.fields.shallow_clone(),
                couplings: BlockCouplings::Sparse(sparse_block(&small, class, Device::Cpu)),
                draws: block.draws.shallow_clone(),
            })
            .collect();
        dense.run(10, None);
        sparse.run(10, None);
        assert!(dense.spins.equal(&sparse.spins));
    }

    /// At the coldest rung of a one-rung ladder with a tiny temperature only downhill and
    /// neutral flips pass: the energy never rises (the class update is exact).
    #[test]
    fn a_cold_sweep_never_raises_the_energy() {
        let model = graph(400, 1600, 8);
        let params = TemperingParams { rungs: 1, hot: 1e-6, cold: 1e-6, sweeps: 1 };
        let mut pt = Tempering::new(&model, Device::Cpu, 4, &params, 1);
        let mut last: Vec<f64> = pt.energies.to_kind(Kind::Double).try_into().unwrap();
        for _ in 0..10 {
            pt.run(1, None);
            let now: Vec<f64> = pt.energies.to_kind(Kind::Double).try_into().unwrap();
            for (a, b) in now.iter().zip(&last) {
                assert!(a <= &(b + 1e-6), "{b} -> {a}");
            }
            last = now;
        }
    }

    /// Exchanges move the low energies to the cold rungs: after a run, the coldest rung's mean
    /// energy is below the hottest's.
    #[test]
    fn exchanges_keep_the_ladder_ordered() {
        let model = graph(300, 1200, 9);
        let params = TemperingParams { rungs: 8, ..Default::default() };
        let mut pt = Tempering::new(&model, Device::Cpu, 64, &params, 4);
        pt.run(30, None);
        let energies = pt.energies.view([8, 8]).to_kind(Kind::Double);
        let cold = energies.select(1, 7).mean(Kind::Double).double_value(&[]);
        let hot = energies.select(1, 0).mean(Kind::Double).double_value(&[]);
        assert!(cold < hot - 20.0, "cold {cold} hot {hot}");
    }
}
