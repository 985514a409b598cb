//! Graph colouring with k colours on its Ising Hamiltonian, for method `ising` (Lucas, "Ising
//! formulations of many NP problems", 2014, sec. 6.1):
//!   E(x) = A sum_v (1 - sum_c x_vc)^2 + B sum_{(u,v)} sum_c x_uc x_vc,
//! x_vc = 1 when node v has colour c (spin v k + c), B = 1: a one-hot state's energy is its
//! conflict count. Why A = 1 + floor(max degree / k): a node left without a colour pays A, more
//! than the conflicts of its least-conflict colour (at most floor(d_v / k) by pigeonhole), so no
//! minimum leaves a node uncoloured. The decision problem needs k (`colors`); minimising k stays
//! with TabuCol. The engine runs its spin-flip search on E (the tensor kernels on an accelerator);
//! every incumbent is decoded to one colour per node (its first colour on, else its least-conflict
//! colour given the nodes before it) and scored by its conflicts.

use super::ColoringInstance;
use crate::problems::binary::{Penalty, PenaltyProblem, Qubo, MAX_PENALTY_COUPLINGS};
use crate::problems::ProblemError;
use serde_json::Value;

pub struct OneHotColoring {
    instance: ColoringInstance,
    k: usize,
    penalty: Penalty,
}

impl OneHotColoring {
    pub fn new(instance: &ColoringInstance) -> Result<Self, ProblemError> {
        let k = instance.colors.ok_or_else(|| {
            ProblemError::invalid("colors", "the Ising encoding colours with a given k: set `colors` (JSON)")
        })?;
        let n = instance.graph.num_nodes;
        let couplings = n * k * k.saturating_sub(1) / 2 + instance.graph.edges.len() * k;
        if couplings > MAX_PENALTY_COUPLINGS {
            return Err(ProblemError::too_large(
                "colors",
                format!("the Ising encoding needs {couplings} couplings; it takes at most {MAX_PENALTY_COUPLINGS}"),
            ));
        }
        let max_degree = instance.adjacency.iter().map(Vec::len).max().unwrap_or(0);
        let penalty = 1.0 + (max_degree / k) as f64;
        let mut qubo = Qubo::new(n * k);
        for v in 0..n {
            let terms: Vec<(usize, f64)> = (0..k).map(|c| (v * k + c, 1.0)).collect();
            qubo.add_squared(&terms, -1.0, penalty);
        }
        for &(u, v) in &instance.graph.edges {
            for c in 0..k {
                qubo.add_quadratic(u as usize * k + c, v as usize * k + c, 1.0);
            }
        }
        Ok(OneHotColoring { instance: instance.clone(), k, penalty: Penalty::new("graph_coloring", qubo.to_ising()) })
    }

    /// One colour per node: its first colour on, else the colour fewest of its earlier
    /// neighbours have (ties: the lowest).
    fn colors_of(&self, x: &[bool]) -> Vec<u32> {
        let (n, k) = (self.instance.graph.num_nodes, self.k);
        let mut colors: Vec<Option<u32>> = (0..n).map(|v| (0..k).find(|&c| x[v * k + c]).map(|c| c as u32)).collect();
        for v in 0..n {
            if colors[v].is_none() {
                let conflicts =
                    |c: u32| self.instance.adjacency[v].iter().filter(|&&u| colors[u as usize] == Some(c)).count();
                colors[v] = (0..k as u32).min_by_key(|&c| conflicts(c));
            }
        }
        colors.into_iter().map(|c| c.expect("k >= 1")).collect()
    }
}

impl PenaltyProblem for OneHotColoring {
    fn penalty(&self) -> &Penalty {
        &self.penalty
    }

    fn repair(&self, x: &[bool]) -> Vec<bool> {
        let k = self.k;
        let mut bits = vec![false; x.len()];
        for (v, c) in self.colors_of(x).into_iter().enumerate() {
            bits[v * k + c as usize] = true;
        }
        bits
    }

    fn objective(&self, x: &[bool]) -> f64 {
        self.instance.conflicts(&self.colors_of(x)) as f64
    }

    fn energy_for_objective(&self, objective: f64) -> f64 {
        objective
    }

    fn decode(&self, x: &[bool]) -> Value {
        self.instance.solution(&self.colors_of(x))
    }

    fn size_summary(&self) -> String {
        format!(
            "n={} edges={} colors={} (Ising)",
            self.instance.graph.num_nodes,
            self.instance.graph.edges.len(),
            self.k
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problems::graph::Graph;
    use crate::problems::Instance;
    use crate::search::SearchParams;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// n nodes in k planted classes, edges only across classes with probability `density`.
    fn planted(n: usize, k: u32, density: f64, seed: u64) -> Graph {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut edges = Vec::new();
        for u in 0..n as u32 {
            for v in u + 1..n as u32 {
                if u % k != v % k && rng.gen::<f64>() < density {
                    edges.push((u, v));
                }
            }
        }
        Graph { num_nodes: n, edges, weights: None }
    }

    /// E = A sum_v (1 - colours on v)^2 + same-coloured edge pairs on every state of a small
    /// graph, and a repaired state's energy is its conflict count.
    #[test]
    fn the_hamiltonian_is_the_one_hot_penalty_plus_the_conflicts() {
        let instance = ColoringInstance::new(planted(5, 2, 0.9, 1), Some(3), "instance").unwrap();
        let encoding = OneHotColoring::new(&instance).unwrap();
        let (n, k) = (5, 3);
        let max_degree = instance.adjacency.iter().map(Vec::len).max().unwrap();
        let penalty = 1.0 + (max_degree / k) as f64;
        for mask in 0..1u32 << (n * k) {
            let x: Vec<bool> = (0..n * k).map(|i| mask >> i & 1 == 1).collect();
            let one_hot: f64 = (0..n).map(|v| (1.0 - (0..k).filter(|&c| x[v * k + c]).count() as f64).powi(2)).sum();
            let pairs = instance
                .graph
                .edges
                .iter()
                .map(|&(u, v)| (0..k).filter(|&c| x[u as usize * k + c] && x[v as usize * k + c]).count())
                .sum::<usize>();
            let expected = penalty * one_hot + pairs as f64;
            let spins: Vec<i8> = x.iter().map(|&b| if b { 1 } else { -1 }).collect();
            let energy = encoding.penalty.energy(&spins);
            assert!((energy - expected).abs() < 1e-9, "{mask}: {energy} vs {expected}");
            if mask % 211 == 0 {
                let repaired = encoding.repair(&x);
                let spins: Vec<i8> = repaired.iter().map(|&b| if b { 1 } else { -1 }).collect();
                let energy = encoding.penalty.energy(&spins);
                assert!((energy - encoding.objective(&repaired)).abs() < 1e-9);
            }
        }
    }

    /// The engine on E properly colours a planted 3-colourable graph with 3 colours (conflicts
    /// re-counted from the returned colours); without `colors` the method is a 422 naming it.
    #[test]
    fn method_ising_finds_a_planted_three_colouring() {
        let instance = ColoringInstance::new(planted(24, 3, 0.5, 2), Some(3), "instance").unwrap();
        let registry = crate::models::ModelRegistry::empty(crate::problems::policy_loaders);
        let models = crate::problems::Models { registry: &registry, requested: None };
        let params = SearchParams { time_limit_s: 5.0, max_rounds: Some(100), ..SearchParams::default() };
        let report = instance.solve_baseline("ising", &params, models).unwrap();
        let colors: Vec<u32> = serde_json::from_value(report.solution["colors"].clone()).expect("colour per node");
        assert!(colors.iter().all(|&c| c < 3));
        assert_eq!(instance.conflicts(&colors) as f64, report.objective);
        assert_eq!(report.objective, 0.0);
        let unbounded = ColoringInstance::new(planted(24, 3, 0.5, 2), None, "instance").unwrap();
        let error = unbounded.solve_baseline("ising", &params, models).expect_err("needs k");
        assert!(format!("{error:?}").contains("colors"));
    }
}
