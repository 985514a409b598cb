//! Graph bisection on its Ising Hamiltonian (Lucas, "Ising formulations of many NP problems",
//! 2014, sec. 2.2), for method `ising`: the engine's own spin-flip search on it (the tensor
//! kernels on an accelerator), every incumbent repaired to the balance bound and scored.
//!   H(s) = A (sum_i w_i s_i)^2 + B sum_{(u,v)} w_uv (1 - s_u s_v) / 2,
//! s_i = +1 for part 1, w_i the node weights (1 without), B = 1 and A = max_v d_v / (4 w_v^2),
//! d_v the weighted degree of v. Why that A (Lucas' A/B >= Delta/4 for unit weights): moving v off
//! a side heavier by at least 2 w_v lowers the balance term by at least 4 A w_v^2 >= d_v, more
//! than the cut can rise, so a minimum of H is as balanced as the weights allow. The balance term
//! couples every pair of nodes, hence `binary::MAX_DENSE_SPINS`; the move set (`Annealing`) stays the default.

use super::PartitionGraph;
use crate::problems::binary::{square_of_sum, Penalty, PenaltyProblem, MAX_DENSE_SPINS};
use crate::problems::ProblemError;
use crate::search::ising::IsingModel;
use serde_json::Value;

pub struct Bisection {
    graph: PartitionGraph,
    penalty: Penalty,
    /// The least balance term a state can have: A for an odd count of unit-weight nodes, else 0.
    balance_floor: f64,
}

impl Bisection {
    pub fn new(graph: &PartitionGraph) -> Result<Self, ProblemError> {
        if graph.parts != 2 {
            return Err(ProblemError::invalid("method", "the Ising encoding splits into 2 parts only"));
        }
        let n = graph.num_nodes;
        if n > MAX_DENSE_SPINS {
            return Err(ProblemError::too_large(
                "method",
                format!("the Ising encoding couples every pair of nodes; it takes at most {MAX_DENSE_SPINS} nodes"),
            ));
        }
        let weight = |v: usize| graph.weight(v) as f64;
        let a = (0..n)
            .map(|v| graph.adjacency[v].iter().map(|e| e.1.abs()).sum::<f64>() / (4.0 * weight(v).powi(2)))
            .fold(0.0, f64::max)
            .max(f64::MIN_POSITIVE);
        // A (sum w s)^2; edge terms added at their pair's index.
        let weights: Vec<f64> = (0..n).map(weight).collect();
        let (mut couplings, balance_constant) = square_of_sum(&weights, a);
        let pair = |u: usize, v: usize| u * n - u * (u + 1) / 2 + (v - u - 1);
        let mut edge_total = 0.0;
        for &(u, v, w) in &graph.edges {
            let (u, v) = (u.min(v) as usize, u.max(v) as usize);
            couplings[pair(u, v)].2 -= w / 2.0;
            edge_total += w;
        }
        couplings.retain(|c| c.2 != 0.0);
        let constant = balance_constant + edge_total / 2.0;
        let balance_floor = if graph.node_weights.is_none() && n % 2 == 1 { a } else { 0.0 };
        Ok(Bisection {
            graph: graph.clone(),
            penalty: Penalty::new("graph_partitioning", (IsingModel::new(n, couplings, vec![]), constant)),
            balance_floor,
        })
    }

    fn parts_of(x: &[bool]) -> Vec<u32> {
        x.iter().map(|&on| u32::from(on)).collect()
    }

    /// Moves nodes off the heavier side, each time the one whose move raises the cut least
    /// among those that fit the other side, until both sides meet the bound; the largest-first
    /// partition where no node fits.
    fn balance(&self, mut parts: Vec<u32>) -> Vec<u32> {
        let graph = &self.graph;
        loop {
            let weights = graph.part_weights(&parts);
            let heavy = if weights[0] >= weights[1] { 0 } else { 1 };
            if weights[heavy] <= graph.capacity {
                return parts;
            }
            let room = graph.capacity.saturating_sub(weights[1 - heavy]);
            let rise = |v: usize| {
                graph.adjacency[v]
                    .iter()
                    .map(|&(u, w)| if parts[u as usize] == heavy as u32 { w } else { -w })
                    .sum::<f64>()
            };
            let pick = (0..graph.num_nodes)
                .filter(|&v| parts[v] == heavy as u32 && graph.weight(v) <= room)
                .map(|v| (rise(v), v))
                .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            match pick {
                Some((_, v)) => parts[v] = 1 - heavy as u32,
                None => return graph.largest_first((0..graph.num_nodes).collect()),
            }
        }
    }
}

impl PenaltyProblem for Bisection {
    fn penalty(&self) -> &Penalty {
        &self.penalty
    }

    fn repair(&self, x: &[bool]) -> Vec<bool> {
        self.balance(Self::parts_of(x)).into_iter().map(|p| p == 1).collect()
    }

    fn objective(&self, x: &[bool]) -> f64 {
        self.graph.cut(&Self::parts_of(x))
    }

    /// B cut plus the least balance term (0 where the weights may balance exactly).
    fn energy_for_objective(&self, objective: f64) -> f64 {
        objective + self.balance_floor
    }

    fn decode(&self, x: &[bool]) -> Value {
        self.graph.solution(&Self::parts_of(x))
    }

    fn size_summary(&self) -> String {
        format!("n={} edges={} parts=2 (Ising)", self.graph.num_nodes, self.graph.edges.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problems::binary::spins_to_bits;
    use crate::problems::Instance;
    use crate::search::SearchParams;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn random_graph(n: usize, density: f64, seed: u64) -> Vec<(u32, u32, f64)> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut edges = Vec::new();
        for u in 0..n as u32 {
            for v in u + 1..n as u32 {
                if rng.gen::<f64>() < density {
                    edges.push((u, v, rng.gen_range(1..4) as f64));
                }
            }
        }
        edges
    }

    /// E(x) = H(s) + constant equals A (sum w s)^2 + cut on every state of a small graph.
    #[test]
    fn the_hamiltonian_is_the_balance_term_plus_the_cut() {
        let n = 9;
        let graph = PartitionGraph::weighted(n, random_graph(n, 0.5, 1), Some(vec![1, 2, 1, 3, 1, 1, 2, 1, 1]), 2, 0.2);
        let bisection = Bisection::new(&graph).unwrap();
        let weights: Vec<f64> = (0..n).map(|v| graph.weight(v) as f64).collect();
        let a = (0..n)
            .map(|v| graph.adjacency[v].iter().map(|e| e.1).sum::<f64>() / (4.0 * weights[v].powi(2)))
            .fold(0.0, f64::max);
        for mask in 0..1u32 << n {
            let spins: Vec<i8> = (0..n).map(|i| if mask >> i & 1 == 1 { 1 } else { -1 }).collect();
            let parts: Vec<u32> = (0..n).map(|i| mask >> i & 1).collect();
            let imbalance: f64 = spins.iter().zip(&weights).map(|(&s, w)| f64::from(s) * w).sum();
            let expected = a * imbalance * imbalance + graph.cut(&parts);
            let energy = bisection.penalty.energy(&spins);
            assert!((energy - expected).abs() < 1e-9, "{mask}: {energy} vs {expected}");
            let repaired = bisection.repair(&spins_to_bits(&spins));
            assert!(graph.balanced(&Bisection::parts_of(&repaired)));
        }
    }

    /// The engine on H (exactly enumerated at this size, then by its chains at 30 nodes) returns
    /// a balanced partition whose re-counted cut is the enumerated optimum.
    #[test]
    fn method_ising_finds_the_optimal_bisection_and_a_balanced_one_beyond_enumeration() {
        let n = 16;
        let graph = PartitionGraph::new(n, random_graph(n, 0.3, 6), 2, 0.0);
        let best = (0..1u32 << n)
            .filter(|m| m.count_ones() == 8)
            .map(|m| graph.cut(&(0..n).map(|i| m >> i & 1).collect::<Vec<u32>>()))
            .fold(f64::INFINITY, f64::min);
        let registry = crate::models::ModelRegistry::empty(crate::problems::policy_loaders);
        let models = crate::problems::Models { registry: &registry, requested: None };
        let params = SearchParams { time_limit_s: 5.0, max_rounds: Some(50), ..SearchParams::default() };
        let solve = |graph: &PartitionGraph| {
            let report = graph.solve_baseline("ising", &params, models).unwrap();
            let parts: Vec<u32> = serde_json::from_value(report.solution["parts"].clone()).expect("parts per node");
            assert!(graph.balanced(&parts));
            assert_eq!(graph.cut(&parts), report.objective);
            report.objective
        };
        assert_eq!(solve(&graph), best);
        let larger = PartitionGraph::new(31, random_graph(31, 0.2, 7), 2, 0.0);
        let quick = SearchParams { time_limit_s: 0.5, ..SearchParams::default() };
        let bfs = larger.solve_baseline("bfs", &quick, models).unwrap();
        assert!(solve(&larger) <= bfs.objective);
    }
}
