//! Maximum (weight) independent set, minimum (weight) vertex cover and maximum (weight) clique:
//! one search, three registry rows. A vertex cover is the complement of an independent set, and
//! a clique of G is an independent set of G's complement, so each is solved as an independent set
//! of its working graph.
//!
//! Penalty Hamiltonian (Lucas, "Ising formulations of many NP problems", 2014, sec. 4.2), over
//! x_i = 1 when node i is in the set:
//!   E(x) = - sum_i w_i x_i + sum_{(i,j) in E} P_ij x_i x_j,  P_ij = 2 min(w_i, w_j).
//! P_ij > min(w_i, w_j) is what makes dropping the lighter end of a violated edge lower the
//! energy, so every minimum of E is independent; twice that leaves a margin without making the
//! landscape steeper than it needs to be. Repair keeps the selected nodes heaviest first, dropping
//! each that touches a kept one, then adds every node that still fits: the result is a maximal
//! independent set, and a feasible state is only ever extended.
//!
//! Unweighted graphs (the BHOSLIB and DIMACS benchmarks) run NuMVC's cover moves in the engine
//! instead (`numvc.rs`, through `search::moves`): on frb35-17-1 the spin-flip search on E found
//! 33 of 35 in 20 s, NuMVC's chains the optimum (`bench nphard`). Weighted graphs use E.

pub mod model_rb;
pub mod numvc;

use super::binary::{Penalty, PenaltyProblem, Qubo, Repaired};
use super::graph::{parse_dimacs, parse_json, Graph};
use super::{Instance, Limits, ProblemCode, ProblemError, ProblemInput};
use crate::search::hooks::SearchHooks;
use crate::search::moves::{minimize_with, MoveSet};
use crate::search::{SearchOutcome, SearchParams};
use numvc::{CoverChain, CoverGraph, NumvcParams};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Which of the three problems an instance answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetKind {
    IndependentSet,
    VertexCover,
    Clique,
}

impl SetKind {
    pub fn name(self) -> &'static str {
        match self {
            SetKind::IndependentSet => "max_independent_set",
            SetKind::VertexCover => "min_vertex_cover",
            SetKind::Clique => "max_clique",
        }
    }
}

/// An instance: the user's graph and the working graph whose independent sets are searched.
pub struct SetInstance {
    kind: SetKind,
    graph: Graph,
    /// Neighbours in the working graph (the complement for cliques).
    adjacency: Vec<Vec<u32>>,
    /// Node ids heaviest first (ties by id): the order repair keeps nodes in.
    by_weight: Vec<u32>,
    total_weight: f64,
    penalty: Penalty,
    /// NuMVC's graph, for unweighted instances.
    cover_graph: Option<CoverGraph>,
}

impl SetInstance {
    pub fn new(kind: SetKind, graph: Graph, limits: &Limits) -> Result<Self, ProblemError> {
        let working = match kind {
            SetKind::Clique => graph.complement("instance", limits)?,
            _ => graph.clone(),
        };
        let n = graph.num_nodes;
        let mut qubo = Qubo::new(n);
        for i in 0..n {
            qubo.add_linear(i, -graph.weight(i));
        }
        for &(u, v) in &working.edges {
            let penalty = 2.0 * graph.weight(u as usize).min(graph.weight(v as usize));
            qubo.add_quadratic(u as usize, v as usize, penalty);
        }
        let penalty = Penalty::new(kind.name(), qubo.to_ising());
        let mut by_weight: Vec<u32> = (0..n as u32).collect();
        by_weight.sort_by(|&a, &b| graph.weight(b as usize).total_cmp(&graph.weight(a as usize)).then(a.cmp(&b)));
        let total_weight = (0..n).map(|i| graph.weight(i)).sum();
        let unweighted = graph.weights.as_ref().is_none_or(|w| w.iter().all(|&x| x == w[0]));
        let cover_graph = unweighted.then(|| CoverGraph::new(n, &working.edges, NumvcParams::default()));
        Ok(SetInstance { kind, adjacency: working.adjacency(), graph, by_weight, total_weight, penalty, cover_graph })
    }

    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// Weight of an independent set of the working graph.
    fn set_weight(&self, x: &[bool]) -> f64 {
        x.iter().enumerate().filter(|(_, &on)| on).map(|(i, _)| self.graph.weight(i)).sum()
    }

    /// Keeps `x`'s nodes heaviest first when they fit, then every other node that fits.
    fn maximal_independent(&self, x: &[bool]) -> Vec<bool> {
        let mut kept = vec![false; x.len()];
        let mut blocked = vec![false; x.len()];
        for pass in [true, false] {
            for &node in &self.by_weight {
                let node = node as usize;
                if blocked[node] || kept[node] || (pass && !x[node]) {
                    continue;
                }
                kept[node] = true;
                for &j in &self.adjacency[node] {
                    blocked[j as usize] = true;
                }
            }
        }
        kept
    }

    /// Randomised greedy restarts: each builds a maximal independent set by taking, among the
    /// nodes that still fit, one of maximal w / (free degree + 1) (ties at random), the classic
    /// GWMIN rule (Sakai, Togasaki and Yamazaki 2003), and keeps the best until the time is up.
    fn greedy(&self, time_limit: Duration, seed: u64) -> (Vec<bool>, Duration) {
        let start = Instant::now();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let n = self.graph.num_nodes;
        let (mut best, mut best_weight, mut best_at) = (vec![false; n], f64::NEG_INFINITY, Duration::ZERO);
        loop {
            let mut free = vec![true; n];
            let mut degree: Vec<usize> = self.adjacency.iter().map(Vec::len).collect();
            let mut chosen = vec![false; n];
            let mut order: Vec<usize> = (0..n).collect();
            order.shuffle(&mut rng);
            loop {
                let score = |i: usize| self.graph.weight(i) / (degree[i] + 1) as f64;
                let Some(pick) =
                    order.iter().copied().filter(|&i| free[i]).max_by(|&a, &b| score(a).total_cmp(&score(b)))
                else {
                    break;
                };
                chosen[pick] = true;
                free[pick] = false;
                for &j in &self.adjacency[pick] {
                    let j = j as usize;
                    if free[j] {
                        free[j] = false;
                        for &k in &self.adjacency[j] {
                            degree[k as usize] = degree[k as usize].saturating_sub(1);
                        }
                    }
                }
                order.retain(|&i| free[i]);
            }
            let weight = self.set_weight(&chosen);
            if weight > best_weight {
                (best, best_weight, best_at) = (chosen, weight, start.elapsed());
            }
            if start.elapsed() >= time_limit {
                return (self.selection_of(&best), best_at);
            }
        }
    }

    /// The user's selection from an independent set of the working graph.
    fn selection_of(&self, x: &[bool]) -> Vec<bool> {
        match self.kind {
            SetKind::VertexCover => x.iter().map(|on| !on).collect(),
            _ => x.to_vec(),
        }
    }
}

impl PenaltyProblem for SetInstance {
    fn penalty(&self) -> &Penalty {
        &self.penalty
    }

    fn repair(&self, x: &[bool]) -> Vec<bool> {
        self.maximal_independent(x)
    }

    /// The weight of the set, or for a cover, of its complement's complement: total - set.
    fn objective(&self, x: &[bool]) -> f64 {
        match self.kind {
            SetKind::VertexCover => self.total_weight - self.set_weight(x),
            _ => self.set_weight(x),
        }
    }

    fn energy_for_objective(&self, objective: f64) -> f64 {
        match self.kind {
            SetKind::VertexCover => objective - self.total_weight,
            _ => -objective,
        }
    }

    /// Node ids in the input's numbering (DIMACS 1-based, JSON 0-based is the caller's: the
    /// ids here are 0-based and `SetProblem::load` shifts them).
    fn decode(&self, x: &[bool]) -> serde_json::Value {
        let chosen = self.selection_of(x);
        let nodes: Vec<usize> = chosen.iter().enumerate().filter(|(_, &on)| on).map(|(i, _)| i).collect();
        json!({ "nodes": nodes, "size": nodes.len() })
    }

    /// The baseline answers in the user's terms; the report wants the independent set back.
    fn run_baseline(&self, name: &str, time_limit: Duration, seed: u64) -> Option<(Vec<bool>, Duration)> {
        match name {
            "greedy" => {
                let (chosen, at) = self.greedy(time_limit, seed);
                Some((self.selection_of(&chosen), at))
            }
            _ => None,
        }
    }

    fn size_summary(&self) -> String {
        format!("n={} edges={}", self.graph.num_nodes, self.graph.edges.len())
    }

    fn dedicated_search(&self, params: &SearchParams) -> Option<SearchOutcome> {
        let graph = self.cover_graph.as_ref()?;
        let outcome = minimize_with(&CoverMoves { instance: self, graph }, params);
        Some(SearchOutcome {
            spins: outcome.solution,
            energy: outcome.energy,
            stop: outcome.stop,
            elapsed: outcome.elapsed,
            history: outcome.history,
            chains: outcome.chains,
            rounds: outcome.rounds,
            device: tch::Device::Cpu,
            samples: Vec::new(),
        })
    }
}

/// NuMVC chains on the working graph; a cover's complement is the independent set.
struct CoverMoves<'a> {
    instance: &'a SetInstance,
    graph: &'a CoverGraph,
}

impl MoveSet for CoverMoves<'_> {
    type Chain = CoverChain;
    type Solution = Vec<i8>;

    fn announce(&self, hooks: &SearchHooks, elapsed: Duration, spins: &Vec<i8>, energy: f64) {
        hooks.incumbent_state(elapsed, spins, energy);
    }

    fn num_variables(&self) -> usize {
        self.graph.num_nodes()
    }

    /// 10 n exchange steps: tens of milliseconds at 1,000 nodes, so incumbents, the clock and a
    /// cancel are checked often.
    fn moves_per_round(&self) -> usize {
        10 * self.graph.num_nodes()
    }

    /// A NuMVC exchange (a removal scan, an addition, the weights of both vertices' edges) takes
    /// about 0.2 us on frb45-21-1, some 20 single flips' time. Counted as one, graphs under
    /// 1,000 nodes would stay below the thread pool's threshold and their two chains take turns
    /// on one core (frb45-21-1 at 3 s, seeds 0-2: 192, 192, 233 rounds in turn against 313,
    /// 393, 391 in parallel).
    fn move_cost(&self) -> usize {
        20
    }

    fn start(&self, _chain: usize, rng: &mut Xoshiro256PlusPlus) -> CoverChain {
        CoverChain::new(self.graph, rng)
    }

    fn advance(&self, chain: &mut CoverChain, moves: usize, rng: &mut Xoshiro256PlusPlus) {
        chain.advance(self.graph, moves, rng);
    }

    /// E of the independent set (all weights equal: w times its size, negated), in H's units.
    fn best(&self, chain: &CoverChain) -> (Vec<i8>, f64) {
        let spins: Vec<i8> = chain.best_cover().iter().map(|&c| if c { -1 } else { 1 }).collect();
        let weight = self.instance.graph.weight(0);
        let independent = (self.graph.num_nodes() - chain.best_size()) as f64;
        (spins, -weight * independent - self.instance.penalty.constant)
    }
}

/// Node ids shifted to the input's numbering.
struct Numbered {
    inner: Repaired<SetInstance>,
    base: usize,
}

impl Instance for Numbered {
    fn solve(&self, params: &crate::search::SearchParams, models: super::Models<'_>) -> super::SolveReport {
        self.renumber(self.inner.solve(params, models))
    }

    fn solve_baseline(
        &self,
        name: &str,
        params: &crate::search::SearchParams,
        models: super::Models<'_>,
    ) -> Result<super::SolveReport, ProblemError> {
        Ok(self.renumber(self.inner.solve_baseline(name, params, models)?))
    }

    fn target_energy(&self, objective: f64) -> f64 {
        self.inner.target_energy(objective)
    }

    fn size_summary(&self) -> String {
        self.inner.size_summary()
    }
}

impl Numbered {
    fn renumber(&self, mut report: super::SolveReport) -> super::SolveReport {
        if let Some(nodes) = report.solution.get_mut("nodes").and_then(|n| n.as_array_mut()) {
            for id in nodes.iter_mut() {
                *id = json!(id.as_u64().unwrap_or(0) as usize + self.base);
            }
        }
        report
    }
}

/// A registry row: one of the three problems.
pub struct SetProblem(pub SetKind);

impl ProblemCode for SetProblem {
    /// Max independent set, DIMACS: `nodes` groups of a forced model RB graph as BHOSLIB's
    /// frbN-K (the optimum is N).
    fn generate(&self, spec: &super::GenerateSpec) -> Option<Result<String, String>> {
        if !matches!(self.0, SetKind::IndependentSet) {
            return None;
        }
        let (vertices, _, edges) = model_rb::generate(spec.nodes, spec.seed);
        Some(Ok(super::graph::to_dimacs(vertices, &edges)))
    }

    fn instance_schema(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "required": ["num_nodes", "edges"],
            "properties": {
                "num_nodes": {"type": "integer", "minimum": 1},
                "edges": {
                    "type": "array",
                    "description": "[u, v] with 0-indexed nodes u != v; a repeated edge counts once",
                    "items": {"type": "array", "minItems": 2, "maxItems": 2, "items": {"type": "integer"}}
                },
                "weights": {
                    "type": "array",
                    "description": "positive node weights (default: every node weighs 1)",
                    "items": {"type": "number", "exclusiveMinimum": 0}
                }
            }
        })
    }

    fn load(&self, input: ProblemInput<'_>, limits: &Limits) -> Result<Box<dyn Instance>, ProblemError> {
        let (graph, base) = match input {
            ProblemInput::Json(value) => (parse_json(value, limits)?, 0),
            ProblemInput::Text(text) => (parse_dimacs(text, limits)?, 1),
        };
        let instance = SetInstance::new(self.0, graph, limits)?;
        Ok(Box::new(Numbered { inner: Repaired(Arc::new(instance)), base }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 5-cycle plus a chord: the exact answers by enumeration.
    fn small() -> Graph {
        Graph { num_nodes: 5, edges: vec![(0, 1), (0, 4), (1, 2), (1, 4), (2, 3), (3, 4)], weights: None }
    }

    #[test]
    fn repair_returns_a_maximal_independent_set_and_keeps_a_feasible_one() {
        let instance = SetInstance::new(SetKind::IndependentSet, small(), &Limits::default()).unwrap();
        let repaired = instance.repair(&[true; 5]);
        for &(u, v) in &instance.graph.edges {
            assert!(!(repaired[u as usize] && repaired[v as usize]), "edge {u}-{v} inside the set");
        }
        for i in 0..5 {
            let fits = instance.adjacency[i].iter().all(|&j| !repaired[j as usize]);
            assert!(repaired[i] || !fits, "node {i} still fits");
        }
        let feasible = [false, false, true, false, true];
        assert_eq!(instance.repair(&feasible), feasible.to_vec());
    }

    #[test]
    fn feasible_energies_are_the_objectives_and_the_penalty_makes_minima_independent() {
        for kind in [SetKind::IndependentSet, SetKind::VertexCover, SetKind::Clique] {
            let instance = SetInstance::new(kind, small(), &Limits::default()).unwrap();
            let mut lowest = (f64::INFINITY, vec![]);
            for mask in 0..32u32 {
                let x: Vec<bool> = (0..5).map(|i| mask >> i & 1 == 1).collect();
                let spins: Vec<i8> = x.iter().map(|&b| if b { 1 } else { -1 }).collect();
                let energy = instance.penalty.energy(&spins);
                if energy < lowest.0 - 1e-9 {
                    lowest = (energy, x.clone());
                }
                let independent = (0..5).all(|i| !x[i] || instance.adjacency[i].iter().all(|&j| !x[j as usize]));
                if independent {
                    let expected = instance.energy_for_objective(instance.objective(&x));
                    assert!((energy - expected).abs() < 1e-9, "{kind:?} mask {mask}");
                }
            }
            let best = instance.objective(&lowest.1);
            let expected = match kind {
                SetKind::IndependentSet => 2.0,
                SetKind::VertexCover => 3.0,
                // 0-1-4 is the only triangle.
                SetKind::Clique => 3.0,
            };
            assert_eq!(best, expected, "{kind:?}");
        }
    }
}
