//! Graph colouring: give every node one of k colours so that no edge joins two nodes of the same
//! colour. With `colors` = k the answer is the colouring with the fewest conflicting edges (0: a
//! proper k-colouring); without it, the fewest colours of a proper colouring are sought.
//!
//! Inputs: DIMACS (`p edge n m` or `p col n m`, `e u v`; the text form minimises k) and JSON
//! `{num_nodes, edges, colors?}`. `solution.colors` gives each node's colour, 0..k-1, in input order.
//!
//! Search: TabuCol (Hertz and de Werra, "Using tabu search techniques for graph coloring",
//! Computing 39, 1987; tenure as Galinier and Hao 1999: 0.6 |conflicting nodes| + U{0..9}) in the
//! engine's chain loop (`search::moves`). A step recolours a conflicting node to the colour of
//! least conflict change that is not tabu (or that beats the chain's best); the (node, old colour)
//! pair is then tabu. Minimising k, every chain starts from DSATUR's colouring (Brelaz 1979, also
//! the baseline `dsatur`); each time it reaches a proper colouring with k colours it records it,
//! recolours the last colour class at random into the others and looks for k - 1.
//! Why moves and not the Ising encoding: one-hot colours need n k spins and a penalty per node,
//! and single flips leave the one-hot states at once. Method `ising` (given k): the engine's spin
//! flips on that encoding (`ising.rs`); measured against TabuCol in the README.

pub mod ising;

use super::graph::{parse_dimacs, parse_json as parse_graph_json, Graph};
use super::{penalty_baseline, Baseline};
use super::{Instance, Limits, Models, ProblemCode, ProblemError, ProblemInput, SolveReport, SolveRun};
use crate::problems::Solved;
use crate::search::moves::{minimize_with, MoveSet};
use crate::search::{SearchParams, StopReason};
use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde_json::{json, Value};
use std::collections::{BinaryHeap, HashSet};
use std::time::Instant;

/// The largest conflict table a colouring search keeps: nodes times colours.
pub const MAX_TABLE_CELLS: usize = 50_000_000;

#[derive(Clone)]
pub struct ColoringInstance {
    graph: Graph,
    adjacency: Vec<Vec<u32>>,
    /// Some(k): the fewest conflicts with k colours; None: the fewest colours.
    colors: Option<usize>,
}

impl ColoringInstance {
    pub fn new(graph: Graph, colors: Option<usize>, field: &str) -> Result<Self, ProblemError> {
        let adjacency = graph.adjacency();
        let n = graph.num_nodes;
        let widest = colors.unwrap_or_else(|| adjacency.iter().map(Vec::len).max().unwrap_or(0) + 1);
        if n.saturating_mul(widest) > MAX_TABLE_CELLS {
            return Err(ProblemError::too_large(
                field,
                format!("{n} nodes times {widest} colours exceed this server's limit of {MAX_TABLE_CELLS} table cells"),
            ));
        }
        Ok(ColoringInstance { graph, adjacency, colors })
    }

    pub fn conflicts(&self, colors: &[u32]) -> usize {
        self.graph.edges.iter().filter(|&&(u, v)| colors[u as usize] == colors[v as usize]).count()
    }

    /// DSATUR: the uncoloured node with the most distinct neighbour colours (ties: the highest
    /// degree, then the lowest id) takes the smallest colour none of its neighbours has.
    pub fn dsatur(&self) -> Vec<u32> {
        let n = self.graph.num_nodes;
        let mut colors = vec![u32::MAX; n];
        let mut seen: Vec<HashSet<u32>> = vec![HashSet::new(); n];
        let mut heap: BinaryHeap<(usize, usize, std::cmp::Reverse<usize>)> =
            (0..n).map(|v| (0, self.adjacency[v].len(), std::cmp::Reverse(v))).collect();
        while let Some((saturation, _, std::cmp::Reverse(v))) = heap.pop() {
            if colors[v] != u32::MAX || saturation != seen[v].len() {
                continue;
            }
            let color = (0..).find(|c| !seen[v].contains(c)).expect("some colour is free");
            colors[v] = color;
            for &u in &self.adjacency[v] {
                let u = u as usize;
                if colors[u] == u32::MAX && seen[u].insert(color) {
                    heap.push((seen[u].len(), self.adjacency[u].len(), std::cmp::Reverse(u)));
                }
            }
        }
        colors
    }

    /// `{colors, num_colors, conflicts}`.
    fn solution(&self, colors: &[u32]) -> Value {
        let used = colors.iter().copied().collect::<HashSet<u32>>().len();
        json!({"colors": colors, "num_colors": used, "conflicts": self.conflicts(colors)})
    }

    /// Conflicts with k colours, else the colours used.
    fn objective(&self, colors: &[u32]) -> f64 {
        match self.colors {
            Some(_) => self.conflicts(colors) as f64,
            None => colors.iter().copied().collect::<HashSet<u32>>().len() as f64,
        }
    }

    fn report(&self, colors: &[u32], run: SolveRun) -> SolveReport {
        let objective = self.objective(colors);
        SolveReport::new("graph_coloring", objective, objective, self.solution(colors), run)
    }
}

/// One TabuCol chain.
#[derive(Clone)]
pub struct ColorChain {
    k: usize,
    colors: Vec<u32>,
    /// gamma[v k + c]: v's neighbours of colour c.
    gamma: Vec<u32>,
    conflicts: usize,
    /// Nodes with a same-coloured neighbour, and each node's place there (usize::MAX: none).
    conflicting: Vec<u32>,
    position: Vec<usize>,
    /// tabu[v k + c]: the step until which v may not take colour c.
    tabu: Vec<u64>,
    step: u64,
    /// The best colouring at this chain's target k (conflicts) or its best proper one (colours).
    best: Vec<u32>,
    best_value: usize,
    /// Fewest conflicts at the current k (restarts at each new k).
    best_conflicts: usize,
}

struct TabuCol<'a> {
    instance: &'a ColoringInstance,
}

impl TabuCol<'_> {
    fn chain(&self, colors: Vec<u32>, k: usize) -> ColorChain {
        let n = colors.len();
        let mut chain = ColorChain {
            k,
            gamma: vec![0; n * k],
            conflicts: 0,
            conflicting: Vec::new(),
            position: vec![usize::MAX; n],
            tabu: vec![0; n * k],
            step: 0,
            best: colors.clone(),
            best_value: usize::MAX,
            best_conflicts: usize::MAX,
            colors,
        };
        self.rebuild(&mut chain);
        chain
    }

    /// Tables from the colours.
    fn rebuild(&self, chain: &mut ColorChain) {
        let (n, k) = (chain.colors.len(), chain.k);
        chain.gamma = vec![0; n * k];
        chain.tabu = vec![0; n * k];
        chain.conflicting.clear();
        chain.position = vec![usize::MAX; n];
        for v in 0..n {
            for &u in &self.instance.adjacency[v] {
                chain.gamma[v * k + chain.colors[u as usize] as usize] += 1;
            }
        }
        chain.conflicts = self.instance.conflicts(&chain.colors);
        for v in 0..n {
            self.refresh(chain, v);
        }
        chain.best_conflicts = chain.conflicts;
    }

    /// Keeps v's membership of the conflicting list in step with its table.
    fn refresh(&self, chain: &mut ColorChain, v: usize) {
        let conflicted = chain.gamma[v * chain.k + chain.colors[v] as usize] > 0;
        match (conflicted, chain.position[v] != usize::MAX) {
            (true, false) => {
                chain.position[v] = chain.conflicting.len();
                chain.conflicting.push(v as u32);
            }
            (false, true) => {
                let at = chain.position[v];
                chain.conflicting.swap_remove(at);
                if let Some(&moved) = chain.conflicting.get(at) {
                    chain.position[moved as usize] = at;
                }
                chain.position[v] = usize::MAX;
            }
            _ => {}
        }
    }

    fn recolor(&self, chain: &mut ColorChain, v: usize, color: u32) {
        let k = chain.k;
        let old = chain.colors[v];
        chain.conflicts =
            chain.conflicts + chain.gamma[v * k + color as usize] as usize - chain.gamma[v * k + old as usize] as usize;
        chain.colors[v] = color;
        for &u in &self.instance.adjacency[v] {
            let u = u as usize;
            chain.gamma[u * k + old as usize] -= 1;
            chain.gamma[u * k + color as usize] += 1;
            self.refresh(chain, u);
        }
        self.refresh(chain, v);
    }

    /// A proper colouring with k colours: record it (minimising) and move on to k - 1, unless
    /// k is already the fewest any colouring needs (one colour, two once there is an edge).
    fn on_proper(&self, chain: &mut ColorChain, rng: &mut Xoshiro256PlusPlus) -> bool {
        if self.instance.colors.is_some() {
            return false;
        }
        chain.best.copy_from_slice(&chain.colors);
        chain.best_value = chain.k;
        let fewest = if self.instance.graph.edges.is_empty() { 1 } else { 2 };
        if chain.k <= fewest {
            return false;
        }
        let k = chain.k - 1;
        for c in chain.colors.iter_mut() {
            if *c as usize == k {
                *c = rng.gen_range(0..k as u32);
            }
        }
        chain.k = k;
        self.rebuild(chain);
        true
    }
}

impl MoveSet for TabuCol<'_> {
    type Chain = ColorChain;
    type Solution = Vec<u32>;

    fn num_variables(&self) -> usize {
        self.instance.graph.num_nodes
    }

    fn moves_per_round(&self) -> usize {
        (10 * self.instance.graph.num_nodes).max(1_000)
    }

    /// A recolouring move takes 1.22-1.25 us (400 nodes, 6,000 edges, k = 9, one chain for 2 s,
    /// seeds 0-2), some 100 single flips' time. Counted as one, graphs under 1,000 nodes would
    /// stay below the thread pool's threshold and their two chains take turns on one core (that
    /// graph, 2 s, seeds 0-2: 199 (192) rounds in turn against 267 (265) in parallel, median
    /// (worst); one chain alone runs 401-409).
    fn move_cost(&self) -> usize {
        100
    }

    /// Minimising: DSATUR's colouring with its k, looking for k - 1 at once. Fixed k: random.
    fn start(&self, _chain: usize, rng: &mut Xoshiro256PlusPlus) -> ColorChain {
        let n = self.instance.graph.num_nodes;
        match self.instance.colors {
            Some(k) => {
                let colors = (0..n).map(|_| rng.gen_range(0..k as u32)).collect();
                let mut chain = self.chain(colors, k);
                chain.best_value = chain.conflicts;
                chain
            }
            None => {
                let colors = self.instance.dsatur();
                let k = colors.iter().map(|&c| c as usize + 1).max().unwrap_or(1);
                let mut chain = self.chain(colors, k);
                chain.best_value = k;
                self.on_proper(&mut chain, rng);
                chain
            }
        }
    }

    fn advance(&self, chain: &mut ColorChain, moves: usize, rng: &mut Xoshiro256PlusPlus) {
        for _ in 0..moves {
            if chain.conflicts == 0 && !self.on_proper(chain, rng) {
                return;
            }
            chain.step += 1;
            let k = chain.k;
            let mut pick: Option<(i64, usize, u32)> = None;
            let mut ties = 0u32;
            for &v in &chain.conflicting {
                let v = v as usize;
                let here = chain.gamma[v * k + chain.colors[v] as usize] as i64;
                for c in 0..k as u32 {
                    if c == chain.colors[v] {
                        continue;
                    }
                    let delta = chain.gamma[v * k + c as usize] as i64 - here;
                    let aspires = (chain.conflicts as i64 + delta) < chain.best_conflicts as i64;
                    if chain.tabu[v * k + c as usize] > chain.step && !aspires {
                        continue;
                    }
                    match pick {
                        Some((d, _, _)) if delta > d => {}
                        Some((d, _, _)) if delta == d => {
                            ties += 1;
                            if rng.gen_range(0..ties) == 0 {
                                pick = Some((delta, v, c));
                            }
                        }
                        _ => {
                            ties = 1;
                            pick = Some((delta, v, c));
                        }
                    }
                }
            }
            let (v, c) = match pick {
                Some((_, v, c)) => (v, c),
                // One colour: no node can move.
                None if k < 2 => return,
                // Every move tabu: a random conflicting node takes a random other colour.
                None => {
                    let v = chain.conflicting[rng.gen_range(0..chain.conflicting.len())] as usize;
                    (v, (chain.colors[v] + rng.gen_range(1..k as u32)) % k as u32)
                }
            };
            let old = chain.colors[v];
            let tenure = (0.6 * chain.conflicting.len() as f64) as u64 + rng.gen_range(0..10);
            self.recolor(chain, v, c);
            chain.tabu[v * k + old as usize] = chain.step + tenure;
            if chain.conflicts < chain.best_conflicts {
                chain.best_conflicts = chain.conflicts;
                if self.instance.colors.is_some() {
                    chain.best.copy_from_slice(&chain.colors);
                    chain.best_value = chain.conflicts;
                }
            }
        }
    }

    fn best(&self, chain: &ColorChain) -> (Vec<u32>, f64) {
        (chain.best.clone(), chain.best_value as f64)
    }
}

impl ColoringInstance {
    const BASELINES: &'static [Baseline<Self>] = &[
        Baseline { name: "dsatur", run: |c, params, _| Ok(c.dsatur_baseline(params)) },
        Baseline {
            name: "ising",
            run: |c, params, models| penalty_baseline(ising::OneHotColoring::new(c), params, models),
        },
    ];

    /// DSATUR; with k colours, nodes past colour k - 1 take their least-conflict colour.
    fn dsatur_baseline(&self, params: &SearchParams) -> SolveReport {
        let start = Instant::now();
        let mut colors = self.dsatur();
        if let Some(k) = self.colors {
            for v in 0..colors.len() {
                if colors[v] as usize >= k {
                    let conflicts = |c: u32| self.adjacency[v].iter().filter(|&&u| colors[u as usize] == c).count();
                    colors[v] = (0..k as u32).min_by_key(|&c| conflicts(c)).expect("k >= 1");
                }
            }
        }
        let elapsed = start.elapsed();
        let run = SolveRun::once(StopReason::Converged, elapsed, elapsed, self.objective(&colors), params.seed);
        self.report(&colors, run)
    }
}

impl Instance for ColoringInstance {
    fn solve(&self, params: &SearchParams, _: Models<'_>) -> SolveReport {
        // Fixed k: a proper colouring ends the search unless the caller set its own target.
        let target_energy = params.target_energy.or(self.colors.map(|_| 0.0));
        let outcome = minimize_with(&TabuCol { instance: self }, &SearchParams { target_energy, ..params.clone() });
        self.report(&outcome.solution, SolveRun::of_moves(&outcome, |energy| energy, params.seed))
    }

    fn solve_baseline(&self, name: &str, params: &SearchParams, models: Models<'_>) -> Solved {
        super::run_baseline(Self::BASELINES, self, name, params, models)
    }

    fn size_summary(&self) -> String {
        format!("n={} edges={} colors={:?}", self.graph.num_nodes, self.graph.edges.len(), self.colors)
    }
}

/// The registry row.
pub struct GraphColoring;

impl ProblemCode for GraphColoring {
    /// DIMACS: `nodes` nodes, `edges` edges between `colors` planted colour classes plus a
    /// planted clique.
    fn generate(&self, spec: &super::GenerateSpec) -> Option<Result<String, String>> {
        let graph = super::graph::planted(spec.nodes, spec.colors, 0, spec.edges, true, spec.seed);
        Some(graph.map(|edges| super::graph::to_dimacs(spec.nodes, &edges)))
    }

    fn instance_schema(&self) -> Value {
        json!({
            "type": "object",
            "required": ["num_nodes", "edges"],
            "properties": {
                "num_nodes": {"type": "integer", "minimum": 1},
                "edges": {"type": "array", "items": {"type": "array", "minItems": 2, "maxItems": 2, "items": {"type": "integer"}}},
                "colors": {"type": "integer", "minimum": 1, "description": "k: the fewest conflicts with k colours (default: minimise the colours)"}
            }
        })
    }

    fn load(&self, input: ProblemInput<'_>, limits: &Limits) -> Result<Box<dyn Instance>, ProblemError> {
        let (graph, colors) = match input {
            ProblemInput::Text(text) => (parse_dimacs(&text.replace("p col ", "p edge "), limits)?, None),
            ProblemInput::Json(value) => {
                let mut object = value
                    .as_object()
                    .cloned()
                    .ok_or_else(|| ProblemError::invalid("instance", "expected a JSON object"))?;
                let colors = match object.remove("colors") {
                    None | Some(Value::Null) => None,
                    Some(k) => Some(
                        k.as_u64()
                            .filter(|&k| k >= 1)
                            .ok_or_else(|| ProblemError::invalid("colors", "must be a positive integer"))?
                            as usize,
                    ),
                };
                if object.contains_key("weights") {
                    return Err(ProblemError::invalid("weights", "colouring takes no node weights"));
                }
                (parse_graph_json(&Value::Object(object), limits)?, colors)
            }
        };
        Ok(Box::new(ColoringInstance::new(graph, colors, "instance")?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn a_bipartite_graph_takes_two_colours_and_one_colour_is_all_conflicts() {
        let graph = Graph { num_nodes: 4, edges: vec![(0, 1), (1, 2), (2, 3), (3, 0)], weights: None };
        let params = SearchParams { time_limit_s: 1.0, max_rounds: Some(2), ..SearchParams::default() };
        let registry = crate::models::ModelRegistry::empty(crate::problems::policy_loaders);
        let models = Models { registry: &registry, requested: None };
        let fewest = ColoringInstance::new(graph.clone(), None, "instance").unwrap().solve(&params, models);
        let colors: Vec<u64> =
            fewest.solution["colors"].as_array().unwrap().iter().map(|c| c.as_u64().unwrap()).collect();
        assert!(graph.edges.iter().all(|&(u, v)| colors[u as usize] != colors[v as usize]), "{colors:?}");
        assert_eq!(colors.iter().max(), Some(&1), "two colours");
        let one = ColoringInstance::new(graph, Some(1), "colors").unwrap().solve(&params, models);
        assert_eq!(one.objective, 4.0, "every edge conflicts with one colour");
    }

    #[test]
    fn tables_stay_exact_and_a_planted_colouring_is_found() {
        // 60 nodes in 4 planted colour classes, edges only across classes.
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
        let n = 60;
        let planted: Vec<u32> = (0..n).map(|v| v as u32 % 4).collect();
        let mut edges = Vec::new();
        for u in 0..n as u32 {
            for v in u + 1..n as u32 {
                if planted[u as usize] != planted[v as usize] && rng.gen::<f64>() < 0.5 {
                    edges.push((u, v));
                }
            }
        }
        let graph = Graph { num_nodes: n, edges, weights: None };
        let instance = ColoringInstance::new(graph, Some(4), "instance").unwrap();
        let moves = TabuCol { instance: &instance };
        let mut chain = moves.start(0, &mut rng);
        for _ in 0..50 {
            moves.advance(&mut chain, 20, &mut rng);
            assert_eq!(chain.conflicts, instance.conflicts(&chain.colors));
            for v in 0..n {
                for c in 0..4u32 {
                    let expected =
                        instance.adjacency[v].iter().filter(|&&u| chain.colors[u as usize] == c).count() as u32;
                    assert_eq!(chain.gamma[v * 4 + c as usize], expected);
                }
            }
        }
        moves.advance(&mut chain, 20_000, &mut rng);
        assert_eq!(instance.conflicts(&chain.best), 0);
        let dsatur = instance.dsatur();
        assert_eq!(instance.conflicts(&dsatur), 0);
    }
}
