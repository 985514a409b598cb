//! Max-Cut. Ising form: s in {-1,+1}^n, H(s) = sum_{(i,j)} w_ij s_i s_j, and
//! cut(s) = (sum_{(i,j)} w_ij - H(s)) / 2, so minimising H maximises the cut.

pub mod baselines;
pub mod bound;
pub mod generate;
mod parse;

use super::ising::IsingModel;
use super::{Instance, IsingProblem, Limits, ProblemCode, ProblemError, ProblemInput};
use serde_json::json;
use std::time::Duration;

pub use parse::{parse_gset, parse_json};

/// A Max-Cut instance: an undirected weighted graph without self-loops or duplicate edges.
#[derive(Debug, Clone)]
pub struct MaxCutInstance {
    model: IsingModel,
    total_weight: f64,
}

impl MaxCutInstance {
    /// `edges` are 0-indexed (u, v, w), already validated.
    pub fn new(num_nodes: usize, edges: Vec<(u32, u32, f64)>) -> Self {
        let total_weight = edges.iter().map(|e| e.2).sum();
        let couplings = edges.into_iter().map(|(u, v, w)| (u.min(v), u.max(v), w)).collect();
        MaxCutInstance { model: IsingModel::new(num_nodes, couplings, vec![]), total_weight }
    }

    pub fn num_nodes(&self) -> usize {
        self.model.num_spins()
    }

    pub fn edges(&self) -> &[(u32, u32, f64)] {
        self.model.couplings()
    }

    /// Sum of w over edges whose ends are on different sides, computed directly from the graph.
    pub fn cut_value(&self, spins: &[i8]) -> f64 {
        self.edges().iter().filter(|&&(u, v, _)| spins[u as usize] != spins[v as usize]).map(|e| e.2).sum()
    }
}

impl IsingProblem for MaxCutInstance {
    const NAME: &'static str = "maxcut";

    fn ising(&self) -> &IsingModel {
        &self.model
    }

    fn objective(&self, energy: f64) -> f64 {
        (self.total_weight - energy) / 2.0
    }

    fn energy_for_objective(&self, cut: f64) -> f64 {
        self.total_weight - 2.0 * cut
    }

    fn decode(&self, spins: &[i8]) -> serde_json::Value {
        json!(spins.iter().map(|&s| u8::from(s > 0)).collect::<Vec<_>>())
    }

    fn run_baseline(&self, name: &str, time_limit: Duration, seed: u64) -> Option<(Vec<i8>, Duration)> {
        let result = match name {
            "greedy" => baselines::greedy(self, time_limit, seed),
            "sa" => baselines::simulated_annealing(self, time_limit, seed),
            "rank2" => baselines::rank_two(self, time_limit, seed),
            _ => return None,
        };
        Some((result.spins, result.time_to_best))
    }

    fn bound_step_s(&self) -> Option<f64> {
        Some(bound::step_seconds(self.num_nodes()))
    }

    /// Poljak and Rendl's eigenvalue bound (`bound`), rounded down when every weight is an
    /// integer (every cut is then one).
    fn bound(&self, best: f64, budget: Duration) -> Option<f64> {
        let config = bound::BoundConfig::default();
        let bound = bound::mohar_poljak(self.num_nodes(), self.edges(), best, budget, &config)?;
        Some(if self.edges().iter().all(|e| e.2.fract() == 0.0) { bound.floor() } else { bound })
    }
}

/// Greedy restarts, single-chain simulated annealing, Burer-Monteiro-Zhang rank-2, and the
/// pretrained Ising policy alone (its best of `chains` answers, default 16, greedily polished).
pub const BASELINES: &[&str] = &["greedy", "sa", "rank2", "policy"];

/// The registry entry.
pub struct MaxCut;

impl ProblemCode for MaxCut {
    /// Gset text: `nodes` nodes, `edges` distinct edges, weights drawn from `weights`.
    fn generate(&self, spec: &super::GenerateSpec) -> Option<Result<String, String>> {
        Some(if spec.edges > spec.nodes * spec.nodes.saturating_sub(1) / 2 {
            Err(format!("too many edges for {} nodes", spec.nodes))
        } else if spec.weights.is_empty() {
            Err("--weights needs at least one value".into())
        } else {
            Ok(generate::random_gset(spec.nodes, spec.edges, &spec.weights, spec.seed))
        })
    }

    fn instance_schema(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "required": ["num_nodes", "edges"],
            "properties": {
                "num_nodes": {"type": "integer", "minimum": 1},
                "edges": {
                    "type": "array",
                    "description": "[u, v, w] with 0-indexed nodes u != v and finite weight w (w may be omitted: 1)",
                    "items": {"type": "array", "minItems": 2, "maxItems": 3, "items": {"type": "number"}}
                }
            }
        })
    }

    /// The Ising policy serves Max-Cut (and any Ising model) without a model of its own.
    fn policy_loader(&self) -> Option<crate::models::PolicyLoader> {
        Some(crate::search::ising_policy::load)
    }

    fn load(&self, input: ProblemInput<'_>, limits: &Limits) -> Result<Box<dyn Instance>, ProblemError> {
        let instance = match input {
            ProblemInput::Json(value) => parse_json(value, limits)?,
            ProblemInput::Text(text) => parse_gset(text, limits)?,
        };
        Ok(Box::new(instance))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_from_energy_matches_cut_counted_on_the_graph_for_every_partition() {
        // A 6-node graph with mixed-sign weights; all 2^6 partitions.
        let edges = vec![(0, 1, 1.0), (1, 2, 2.0), (2, 3, -1.0), (3, 4, 1.5), (4, 5, 1.0), (5, 0, -2.0), (0, 3, 1.0)];
        let graph = MaxCutInstance::new(6, edges);
        let mut best = f64::NEG_INFINITY;
        for mask in 0..64u32 {
            let spins: Vec<i8> = (0..6).map(|i| if mask >> i & 1 == 1 { 1 } else { -1 }).collect();
            let from_energy = graph.objective(graph.ising().energy(&spins));
            assert!((from_energy - graph.cut_value(&spins)).abs() < 1e-9, "mask {mask}");
            best = best.max(from_energy);
        }
        // The maximum, enumerated independently (positive edges 0-1, 1-2, 3-4, 4-5, 0-3 cut; 2-3 and 5-0 not).
        assert_eq!(best, 5.5);
    }
}
