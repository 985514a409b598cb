//! The sparse Ising model every combinatorial problem reduces to:
//! H(s) = sum_{(i,j) in E} J_ij s_i s_j + sum_i h_i s_i, with spins s in {-1,+1}^n.
//! The search engine minimises H; a problem maps its objective to and from H.

use petgraph::csr::Csr;
use petgraph::visit::EdgeRef;
use petgraph::Directed;
use tch::{Device, Kind, Tensor};

#[derive(Debug, Clone)]
pub struct IsingModel {
    num_spins: usize,
    /// Couplings (i, j, J_ij) with i < j, each pair at most once.
    couplings: Vec<(u32, u32, f64)>,
    /// External fields h_i; empty when every field is zero.
    fields: Vec<f64>,
    /// Adjacency in both directions, for O(degree) field updates: petgraph's CSR, which times the
    /// same as the hand-written one it replaced (`cargo bench --bench energy`).
    adjacency: Csr<(), f64, Directed, u32>,
}

impl IsingModel {
    /// Builds the model; callers have already validated indices, uniqueness and finiteness.
    pub fn new(num_spins: usize, couplings: Vec<(u32, u32, f64)>, fields: Vec<f64>) -> Self {
        assert!(fields.is_empty() || fields.len() == num_spins);
        let mut arcs: Vec<(u32, u32, f64)> = couplings.iter().flat_map(|&(i, j, w)| [(i, j, w), (j, i, w)]).collect();
        arcs.sort_unstable_by_key(|&(i, j, _)| (i, j));
        let mut adjacency = Csr::from_sorted_edges(&arcs).expect("couplings are unique pairs i < j");
        while adjacency.node_count() < num_spins {
            adjacency.add_node(());
        }
        IsingModel { num_spins, couplings, fields, adjacency }
    }

    pub fn num_spins(&self) -> usize {
        self.num_spins
    }

    pub fn couplings(&self) -> &[(u32, u32, f64)] {
        &self.couplings
    }

    pub fn field(&self, i: usize) -> f64 {
        if self.fields.is_empty() {
            0.0
        } else {
            self.fields[i]
        }
    }

    /// Without external fields, s and -s have the same energy; the sampler fixes that gauge.
    pub fn has_spin_flip_symmetry(&self) -> bool {
        self.fields.iter().all(|&h| h == 0.0)
    }

    /// (neighbour, J) pairs of spin i.
    pub fn neighbors(&self, i: usize) -> impl Iterator<Item = (usize, f64)> + '_ {
        self.adjacency.edges(i as u32).map(|e| (e.target() as usize, *e.weight()))
    }

    /// Mean absolute coupling: the natural energy scale for temperatures.
    pub fn mean_abs_coupling(&self) -> f64 {
        if self.couplings.is_empty() {
            return 1.0;
        }
        self.couplings.iter().map(|c| c.2.abs()).sum::<f64>() / self.couplings.len() as f64
    }

    /// H(s) for one configuration, exactly in f64.
    pub fn energy(&self, spins: &[i8]) -> f64 {
        let pair: f64 =
            self.couplings.iter().map(|&(i, j, w)| w * f64::from(spins[i as usize] * spins[j as usize])).sum();
        let single: f64 = self.fields.iter().zip(spins).map(|(&h, &s)| h * f64::from(s)).sum();
        pair + single
    }

    /// Local fields f_i = sum_j J_ij s_j + h_i; flipping i changes H by -2 s_i f_i.
    pub fn local_fields(&self, spins: &[i8], out: &mut [f64]) {
        for (i, f) in out.iter_mut().enumerate().take(self.num_spins) {
            *f = self.field(i) + self.neighbors(i).map(|(j, w)| w * f64::from(spins[j])).sum::<f64>();
        }
    }

    /// A proper colouring of the coupling graph as its colour classes (spins of one class share
    /// no coupling, so they can flip together exactly), by petgraph's DSatur heuristic; every
    /// class is non-empty and sorted.
    pub fn colour_classes(&self) -> Vec<Vec<u32>> {
        let (colours, count) = petgraph::algo::dsatur_coloring(&self.adjacency);
        let mut classes = vec![Vec::new(); count];
        for (node, colour) in colours {
            classes[colour].push(node);
        }
        classes.retain(|c| !c.is_empty());
        classes.iter_mut().for_each(|c| c.sort_unstable());
        classes
    }

    /// Tensors of the couplings on `device`, for batched energies and the tensor polisher.
    pub fn tensors(&self, device: Device) -> IsingTensors {
        let rows: Vec<i64> = self.couplings.iter().map(|c| i64::from(c.0)).collect();
        let cols: Vec<i64> = self.couplings.iter().map(|c| i64::from(c.1)).collect();
        let weights: Vec<f32> = self.couplings.iter().map(|c| c.2 as f32).collect();
        let fields: Vec<f32> = (0..self.num_spins).map(|i| self.field(i) as f32).collect();
        IsingTensors {
            num_spins: self.num_spins,
            rows: Tensor::from_slice(&rows).to(device),
            cols: Tensor::from_slice(&cols).to(device),
            weights: Tensor::from_slice(&weights).to(device),
            fields: Tensor::from_slice(&fields).to(device),
            device,
        }
    }
}

/// The model's couplings as device tensors.
pub struct IsingTensors {
    pub num_spins: usize,
    pub rows: Tensor,
    pub cols: Tensor,
    pub weights: Tensor,
    pub fields: Tensor,
    pub device: Device,
}

impl IsingTensors {
    /// The Hamiltonian of a batch: spins [B, n] (float, +-1) -> energies [B].
    pub fn hamiltonian(&self, spins: &Tensor) -> Tensor {
        let left = spins.index_select(1, &self.rows);
        let right = spins.index_select(1, &self.cols);
        let pair = (left * right * &self.weights).sum_dim_intlist(1, false, Kind::Float);
        let single = spins.matmul(&self.fields);
        pair + single
    }

    /// Dense symmetric coupling matrix J [n, n], for batched local-field updates on an accelerator.
    pub fn dense_couplings(&self) -> Tensor {
        let n = self.num_spins as i64;
        let dense = Tensor::zeros([n, n], (Kind::Float, self.device));
        let dense =
            dense.index_put(&[Some(self.rows.shallow_clone()), Some(self.cols.shallow_clone())], &self.weights, true);
        dense.index_put(&[Some(self.cols.shallow_clone()), Some(self.rows.shallow_clone())], &self.weights, true)
    }
}

/// Spins as a float tensor [B, n] on `device`.
pub fn spins_to_tensor(spins: &[i8], batch: usize, num_spins: usize, device: Device) -> Tensor {
    Tensor::from_slice(spins).view([batch as i64, num_spins as i64]).to_kind(Kind::Float).to(device)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn triangle_with_field() -> IsingModel {
        IsingModel::new(3, vec![(0, 1, 1.0), (1, 2, -2.0), (0, 2, 0.5)], vec![0.25, 0.0, -1.0])
    }

    #[test]
    fn tensor_hamiltonian_matches_exact_energy_for_every_configuration() {
        let model = triangle_with_field();
        let tensors = model.tensors(Device::Cpu);
        let mut all = Vec::new();
        for mask in 0..8u32 {
            all.extend((0..3).map(|i| if mask >> i & 1 == 1 { 1i8 } else { -1 }));
        }
        let energies: Vec<f32> = tensors.hamiltonian(&spins_to_tensor(&all, 8, 3, Device::Cpu)).try_into().unwrap();
        for (b, e) in energies.iter().enumerate() {
            let exact = model.energy(&all[3 * b..3 * b + 3]);
            assert!((f64::from(*e) - exact).abs() < 1e-5, "config {b}: {e} vs {exact}");
        }
    }

    #[test]
    fn flipping_a_spin_changes_energy_by_minus_two_s_f() {
        let model = triangle_with_field();
        let spins = [1i8, -1, 1];
        let mut fields = [0.0; 3];
        model.local_fields(&spins, &mut fields);
        for i in 0..3 {
            let mut flipped = spins;
            flipped[i] = -flipped[i];
            let delta = model.energy(&flipped) - model.energy(&spins);
            assert!((delta + 2.0 * f64::from(spins[i]) * fields[i]).abs() < 1e-12);
        }
    }

    #[test]
    fn dense_couplings_are_symmetric_and_match_the_sparse_ones() {
        let model = triangle_with_field();
        let dense: Vec<Vec<f32>> = model.tensors(Device::Cpu).dense_couplings().try_into().unwrap();
        assert_eq!(dense[1][2], -2.0);
        assert_eq!(dense[2][1], -2.0);
        assert_eq!(dense[0][2], 0.5);
        assert_eq!(dense[0][0], 0.0);
    }
}
