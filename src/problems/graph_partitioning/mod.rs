//! Graph partitioning: split the nodes into `parts` parts each weighing at most
//! ceil(W / parts (1 + imbalance)) (W the total node weight; every node weighs 1 unless node
//! weights are given), minimising the weight of the edges between parts. `imbalance` = 0 with 2
//! parts and unit weights is exact bisection (sizes floor(n/2) and ceil(n/2)).
//!
//! Inputs: METIS / Chaco graph text (`n m [fmt [ncon]]`, `%` comments, then line i lists node i's
//! neighbours, 1-indexed, each edge on both its lines; fmt 1: a weight after each neighbour; fmt
//! 10: the line starts with the node's weight; fmt 11: both; one weight per node, ncon = 1) with
//! parts = 2 and imbalance = 0, and JSON `{num_nodes, edges: [[u, v, w?]], node_weights?, parts?,
//! imbalance?}`. Node weights are positive integers, as METIS's. `solution.parts` gives each
//! node's part, 0..parts-1, in input order; every answer meets the balance bound. With node
//! weights the bound may admit no partition at all (weights 3 and 1 in two parts of at most 2):
//! the load runs the largest-first greedy (each node, heaviest first, into the lightest part),
//! whose heaviest part is at most W / parts + the heaviest node, and refuses the instance with a
//! 422 naming `imbalance` when even that one breaks the bound.
//!
//! Search: annealing chains in the engine's loop (`search::moves`) over balanced assignments:
//! a move sends a node to a part with room, or swaps two nodes of different parts (what keeps an
//! exact bisection moving), accepted by Metropolis on the cut change; chains start from a random
//! balanced assignment. Why moves and not the Ising encoding: the balance term (sum s_i)^2 couples
//! every pair of nodes (n^2 couplings) and single flips break an exact bisection at once.
//! Baseline `bfs`: breadth-first region growing from random seeds, parts filled in turn.
//! Method `ising`: the engine on Lucas' bisection Hamiltonian (`ising.rs`; 2 parts, up to
//! `binary::MAX_DENSE_SPINS` nodes), on an accelerator through the tensor kernels.

pub mod ising;

use super::graph::check_node_count;
use super::{penalty_baseline, Baseline};
use super::{Instance, Limits, Models, ProblemCode, ProblemError, ProblemInput, SolveReport, SolveRun};
use crate::problems::Solved;
use crate::search::moves::{cycle_temperature, minimize_with, MoveSet};
use crate::search::{SearchParams, StopReason};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde_json::{json, Value};
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// The most parts.
pub const MAX_PARTS: usize = 1024;

#[derive(Clone)]
pub struct PartitionGraph {
    num_nodes: usize,
    edges: Vec<(u32, u32, f64)>,
    adjacency: Vec<Vec<(u32, f64)>>,
    /// None: every node weighs 1.
    node_weights: Option<Vec<u64>>,
    parts: usize,
    /// The heaviest part allowed (in node weight).
    capacity: u64,
}

impl PartitionGraph {
    pub fn new(num_nodes: usize, edges: Vec<(u32, u32, f64)>, parts: usize, imbalance: f64) -> Self {
        Self::weighted(num_nodes, edges, None, parts, imbalance)
    }

    /// With node weights (positive, one per node; the parsers check them).
    pub fn weighted(
        num_nodes: usize,
        edges: Vec<(u32, u32, f64)>,
        node_weights: Option<Vec<u64>>,
        parts: usize,
        imbalance: f64,
    ) -> Self {
        let mut adjacency = vec![Vec::new(); num_nodes];
        for &(u, v, w) in &edges {
            adjacency[u as usize].push((v, w));
            adjacency[v as usize].push((u, w));
        }
        let total = node_weights.as_ref().map_or(num_nodes as u64, |w| w.iter().sum());
        // Less a rounding margin: 200 nodes, 4 parts, imbalance 0.1 is 55, not ceil(55.000000000000007).
        let capacity = ((total as f64 / parts as f64) * (1.0 + imbalance) - 1e-9).ceil().max(1.0) as u64;
        PartitionGraph { num_nodes, edges, adjacency, node_weights, parts, capacity }
    }

    fn weight(&self, v: usize) -> u64 {
        self.node_weights.as_ref().map_or(1, |w| w[v])
    }

    fn part_weights(&self, parts: &[u32]) -> Vec<u64> {
        let mut weights = vec![0u64; self.parts];
        parts.iter().enumerate().for_each(|(v, &p)| weights[p as usize] += self.weight(v));
        weights
    }

    /// Largest first: each node in `order`, heaviest first (stable), into the lightest part.
    fn largest_first(&self, mut order: Vec<usize>) -> Vec<u32> {
        order.sort_by_key(|&v| std::cmp::Reverse(self.weight(v)));
        let mut heap: std::collections::BinaryHeap<std::cmp::Reverse<(u64, u32)>> =
            (0..self.parts as u32).map(|p| std::cmp::Reverse((0, p))).collect();
        let mut parts = vec![0u32; self.num_nodes];
        for v in order {
            let std::cmp::Reverse((w, p)) = heap.pop().expect("a part");
            parts[v] = p;
            heap.push(std::cmp::Reverse((w + self.weight(v), p)));
        }
        parts
    }

    /// The balance bound admits the largest-first partition (always true with unit weights).
    fn check_feasible(&self) -> Result<(), ProblemError> {
        let heaviest = self.part_weights(&self.largest_first((0..self.num_nodes).collect())).into_iter().max();
        match heaviest {
            Some(w) if w > self.capacity => Err(ProblemError::invalid(
                "imbalance",
                format!(
                    "with these node weights no partition into {} parts of at most {} was found (largest first gives a part of {w}); raise imbalance",
                    self.parts, self.capacity
                ),
            )),
            _ => Ok(()),
        }
    }

    pub fn cut(&self, parts: &[u32]) -> f64 {
        self.edges.iter().filter(|&&(u, v, _)| parts[u as usize] != parts[v as usize]).map(|e| e.2).sum()
    }

    pub fn balanced(&self, parts: &[u32]) -> bool {
        self.part_weights(parts).iter().all(|&w| w <= self.capacity)
    }

    /// Nodes in a random order, largest first (with unit weights: dealt round-robin, so parts
    /// differ in size by at most one); the deterministic order where a random one breaks the bound.
    fn random_balanced(&self, rng: &mut Xoshiro256PlusPlus) -> Vec<u32> {
        let mut order: Vec<usize> = (0..self.num_nodes).collect();
        order.shuffle(rng);
        let parts = self.largest_first(order);
        if self.balanced(&parts) {
            parts
        } else {
            self.largest_first((0..self.num_nodes).collect())
        }
    }

    /// Breadth-first region growing: each part in turn grows from a random unassigned node to
    /// its share of the nodes.
    fn bfs(&self, seed: u64) -> Vec<u32> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut parts = vec![u32::MAX; self.num_nodes];
        let mut order: Vec<usize> = (0..self.num_nodes).collect();
        order.shuffle(&mut rng);
        let mut next_seed = order.into_iter();
        let total: u64 = (0..self.num_nodes).map(|v| self.weight(v)).sum();
        let mut assigned = 0;
        for p in 0..self.parts {
            let share = (total - assigned).div_ceil((self.parts - p) as u64);
            let mut size = 0;
            let mut queue = VecDeque::new();
            while size < share {
                let v = match queue.pop_front() {
                    Some(v) => v,
                    None => match next_seed.by_ref().find(|&v| parts[v] == u32::MAX) {
                        Some(v) => v,
                        None => break,
                    },
                };
                if parts[v] != u32::MAX || size + self.weight(v) > self.capacity {
                    continue;
                }
                parts[v] = p as u32;
                size += self.weight(v);
                queue.extend(self.adjacency[v].iter().map(|&(u, _)| u as usize).filter(|&u| parts[u] == u32::MAX));
            }
            assigned += size;
        }
        // Nodes skipped for weight go to the lightest part; if that breaks the bound, largest first.
        let mut weights = vec![0u64; self.parts];
        (0..self.num_nodes)
            .filter(|&v| parts[v] != u32::MAX)
            .for_each(|v| weights[parts[v] as usize] += self.weight(v));
        for v in 0..self.num_nodes {
            if parts[v] == u32::MAX {
                let p = (0..self.parts).min_by_key(|&p| (weights[p], p)).expect("a part");
                parts[v] = p as u32;
                weights[p] += self.weight(v);
            }
        }
        if self.balanced(&parts) {
            parts
        } else {
            self.random_balanced(&mut rng)
        }
    }

    /// `{parts, sizes, cut}` (and `weights` per part with node weights).
    fn solution(&self, parts: &[u32]) -> Value {
        let mut sizes = vec![0usize; self.parts];
        parts.iter().for_each(|&p| sizes[p as usize] += 1);
        let mut solution = json!({"parts": parts, "sizes": sizes, "cut": self.cut(parts)});
        if self.node_weights.is_some() {
            solution["weights"] = json!(self.part_weights(parts));
        }
        solution
    }

    fn report(&self, parts: &[u32], run: SolveRun) -> SolveReport {
        let cut = self.cut(parts);
        SolveReport::new("graph_partitioning", cut, cut, self.solution(parts), run)
    }
}

/// One chain: the assignment, part weights, cut, and the best seen.
#[derive(Clone)]
pub struct PartChain {
    parts: Vec<u32>,
    sizes: Vec<u64>,
    cut: f64,
    best: Vec<u32>,
    best_cut: f64,
    moves: u64,
}

struct Annealing<'a> {
    graph: &'a PartitionGraph,
    hot: f64,
    cold: f64,
    cycle: u64,
}

impl Annealing<'_> {
    /// The cut change of moving v to part `to` (v's other edges unchanged).
    fn move_delta(&self, chain: &PartChain, v: usize, to: u32) -> f64 {
        let from = chain.parts[v];
        self.graph.adjacency[v]
            .iter()
            .map(|&(u, w)| {
                let p = chain.parts[u as usize];
                f64::from(u8::from(p != to)) * w - f64::from(u8::from(p != from)) * w
            })
            .sum()
    }

    fn weight_between(&self, u: usize, v: usize) -> f64 {
        self.graph.adjacency[u].iter().filter(|&&(x, _)| x as usize == v).map(|&(_, w)| w).sum()
    }
}

impl MoveSet for Annealing<'_> {
    type Chain = PartChain;
    type Solution = Vec<u32>;

    fn num_variables(&self) -> usize {
        self.graph.num_nodes
    }

    fn moves_per_round(&self) -> usize {
        (self.cycle / 10).max(1) as usize
    }

    fn min_patience_rounds(&self) -> usize {
        40
    }

    fn start(&self, _chain: usize, rng: &mut Xoshiro256PlusPlus) -> PartChain {
        let parts = self.graph.random_balanced(rng);
        let sizes = self.graph.part_weights(&parts);
        let cut = self.graph.cut(&parts);
        PartChain { best: parts.clone(), best_cut: cut, parts, sizes, cut, moves: 0 }
    }

    fn advance(&self, chain: &mut PartChain, moves: usize, rng: &mut Xoshiro256PlusPlus) {
        let (n, k) = (self.graph.num_nodes, self.graph.parts as u32);
        if n < 2 || k < 2 {
            return;
        }
        for _ in 0..moves {
            let temperature = cycle_temperature(chain.moves, self.cycle, self.hot, self.cold);
            chain.moves += 1;
            let v = rng.gen_range(0..n);
            let to = (chain.parts[v] + rng.gen_range(1..k)) % k;
            let accept = |delta: f64, rng: &mut Xoshiro256PlusPlus| {
                delta <= 0.0 || rng.gen::<f64>() < (-delta / temperature).exp()
            };
            let weight = self.graph.weight(v);
            if chain.sizes[to as usize] + weight <= self.graph.capacity && rng.gen::<bool>() {
                let delta = self.move_delta(chain, v, to);
                if accept(delta, rng) {
                    chain.sizes[chain.parts[v] as usize] -= weight;
                    chain.sizes[to as usize] += weight;
                    chain.parts[v] = to;
                    chain.cut += delta;
                }
            } else {
                // Swap v with a random node u of part `to`: found by sampling, as parts are not indexed.
                let u = (0..8).map(|_| rng.gen_range(0..n)).find(|&u| chain.parts[u] == to);
                let Some(u) = u else { continue };
                let from = chain.parts[v];
                let other = self.graph.weight(u);
                if chain.sizes[from as usize] - weight + other > self.graph.capacity
                    || chain.sizes[to as usize] - other + weight > self.graph.capacity
                {
                    continue;
                }
                // Moving both counts their shared edges twice as changed; they stay cut.
                let delta =
                    self.move_delta(chain, v, to) + self.move_delta(chain, u, from) + 2.0 * self.weight_between(u, v);
                if accept(delta, rng) {
                    chain.parts[v] = to;
                    chain.parts[u] = from;
                    chain.sizes[from as usize] = chain.sizes[from as usize] - weight + other;
                    chain.sizes[to as usize] = chain.sizes[to as usize] - other + weight;
                    chain.cut += delta;
                }
            }
            if chain.cut < chain.best_cut - 1e-9 {
                chain.best_cut = chain.cut;
                chain.best.copy_from_slice(&chain.parts);
            }
        }
    }

    fn best(&self, chain: &PartChain) -> (Vec<u32>, f64) {
        (chain.best.clone(), chain.best_cut)
    }
}

impl PartitionGraph {
    const BASELINES: &'static [Baseline<Self>] = &[
        Baseline { name: "bfs", run: |g, params, _| Ok(g.bfs_baseline(params)) },
        Baseline { name: "ising", run: |g, params, models| penalty_baseline(ising::Bisection::new(g), params, models) },
    ];

    /// Breadth-first growth from random seeds, restarted until the time limit; the best cut.
    fn bfs_baseline(&self, params: &SearchParams) -> SolveReport {
        let start = Instant::now();
        let deadline = start + Duration::from_secs_f64(params.time_limit_s);
        let (mut best, mut best_cut, mut at) = (self.bfs(params.seed), f64::INFINITY, Duration::ZERO);
        let mut restart = 0u64;
        while restart == 0 || Instant::now() < deadline {
            let parts = self.bfs(params.seed.wrapping_add(restart));
            let cut = self.cut(&parts);
            if cut < best_cut {
                (best, best_cut, at) = (parts, cut, start.elapsed());
            }
            restart += 1;
        }
        self.report(&best, SolveRun::once(StopReason::TimeLimit, start.elapsed(), at, best_cut, params.seed))
    }
}

impl Instance for PartitionGraph {
    fn solve(&self, params: &SearchParams, _: Models<'_>) -> SolveReport {
        let mean = if self.edges.is_empty() {
            1.0
        } else {
            self.edges.iter().map(|e| e.2.abs()).sum::<f64>() / self.edges.len() as f64
        };
        let moves =
            Annealing { graph: self, hot: 2.0 * mean, cold: 0.02 * mean, cycle: (2_000 * self.num_nodes) as u64 };
        let outcome = minimize_with(&moves, params);
        // The chains' running cut drifts by rounding; the report re-counts it.
        self.report(&outcome.solution, SolveRun::of_moves(&outcome, |energy| energy, params.seed))
    }

    fn solve_baseline(&self, name: &str, params: &SearchParams, models: Models<'_>) -> Solved {
        super::run_baseline(Self::BASELINES, self, name, params, models)
    }

    fn size_summary(&self) -> String {
        format!("n={} edges={} parts={}", self.num_nodes, self.edges.len(), self.parts)
    }
}

/// Checks shared by both formats: node range, self-loops, finite weights, repeated edges summed.
struct EdgeSet<'a> {
    n: usize,
    weights: HashMap<(u32, u32), f64>,
    limits: &'a Limits,
}

impl<'a> EdgeSet<'a> {
    fn push(&mut self, u: usize, v: usize, w: f64, field: &str, base: usize) -> Result<(), ProblemError> {
        for x in [u, v] {
            if x >= self.n {
                return Err(ProblemError::invalid(
                    field,
                    format!("node {} is out of range {base}..={}", x + base, self.n - 1 + base),
                ));
            }
        }
        if u == v {
            return Err(ProblemError::invalid(field, format!("self-loop on node {}", u + base)));
        }
        if !w.is_finite() {
            return Err(ProblemError::invalid(field, "edge weight must be a finite number"));
        }
        if self.weights.len() >= self.limits.max_edges {
            return Err(ProblemError::too_large(
                field,
                format!("more than this server's limit of {} edges", self.limits.max_edges),
            ));
        }
        self.weights.insert((u.min(v) as u32, u.max(v) as u32), w);
        Ok(())
    }

    fn finish(self) -> Vec<(u32, u32, f64)> {
        let mut edges: Vec<(u32, u32, f64)> = self.weights.into_iter().map(|((u, v), w)| (u, v, w)).collect();
        edges.sort_unstable_by_key(|&(u, v, _)| (u, v));
        edges
    }
}

/// METIS text of an unweighted graph (`n m`, then each node's neighbours, 1-indexed).
pub fn to_metis(num_nodes: usize, edges: &[(u32, u32)]) -> String {
    let mut neighbours = vec![Vec::new(); num_nodes];
    for &(u, v) in edges {
        neighbours[u as usize].push(v + 1);
        neighbours[v as usize].push(u + 1);
    }
    let mut text = format!("{num_nodes} {}\n", edges.len());
    for list in &mut neighbours {
        list.sort_unstable();
        text.push_str(&list.iter().map(u32::to_string).collect::<Vec<_>>().join(" "));
        text.push('\n');
    }
    text
}

/// METIS / Chaco text, parts = 2, imbalance = 0.
pub fn parse_metis(text: &str, limits: &Limits) -> Result<PartitionGraph, ProblemError> {
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())).filter(|(_, l)| !l.starts_with('%'));
    let (_, header) = lines
        .find(|(_, l)| !l.is_empty())
        .ok_or_else(|| ProblemError::invalid("line 1", "expected the header `n m [fmt]`"))?;
    let fields: Vec<usize> =
        header.split_whitespace().map(str::parse).collect::<Result<_, _>>().map_err(|_| {
            ProblemError::invalid("line 1", format!("expected `n m [fmt]` (integers), found '{header}'"))
        })?;
    let (n, m, fmt) = match fields[..] {
        [n, m] => (n, m, 0),
        [n, m, fmt] | [n, m, fmt, _] => (n, m, fmt),
        _ => return Err(ProblemError::invalid("line 1", format!("expected `n m [fmt]`, found '{header}'"))),
    };
    if ![0, 1, 10, 11].contains(&fmt) {
        return Err(ProblemError::invalid("line 1", format!("fmt {fmt} is not 0, 1, 10 or 11")));
    }
    if fields.get(3).is_some_and(|&ncon| ncon != 1) {
        return Err(ProblemError::invalid("line 1", "one weight per node (ncon = 1) is supported"));
    }
    let (edge_weights, has_node_weights) = (fmt % 10 == 1, fmt >= 10);
    let mut node_weights = Vec::new();
    check_node_count(n, "line 1", limits)?;
    let mut set = EdgeSet { n, weights: HashMap::new(), limits };
    let mut entries = 0usize;
    let mut node = 0usize;
    for (number, line) in lines {
        let field = format!("line {number}");
        if node == n {
            if line.is_empty() {
                continue;
            }
            return Err(ProblemError::invalid(&field, format!("more than the {n} node lines the header declares")));
        }
        let mut tokens: Vec<&str> = line.split_whitespace().collect();
        if has_node_weights {
            let weight = tokens.first().and_then(|t| t.parse::<u64>().ok()).filter(|&w| w >= 1).ok_or_else(|| {
                ProblemError::invalid(&field, "fmt 10/11: the line starts with the node's weight, a positive integer")
            })?;
            node_weights.push(weight);
            tokens.remove(0);
        }
        let step = if edge_weights { 2 } else { 1 };
        if !tokens.len().is_multiple_of(step) {
            return Err(ProblemError::invalid(&field, "fmt 1 lists `neighbour weight` pairs"));
        }
        for pair in tokens.chunks(step) {
            let u =
                pair[0].parse::<usize>().ok().filter(|&u| u >= 1).ok_or_else(|| {
                    ProblemError::invalid(&field, format!("neighbour '{}' is not a node id", pair[0]))
                })?;
            let w = match pair.get(1) {
                Some(t) => t
                    .parse::<f64>()
                    .map_err(|_| ProblemError::invalid(&field, format!("weight '{t}' is not a number")))?,
                None => 1.0,
            };
            set.push(node, u - 1, w, &field, 1)?;
            entries += 1;
        }
        node += 1;
    }
    if node != n {
        return Err(ProblemError::invalid(
            "line 1",
            format!("the header declares {n} nodes but the file has {node} node lines"),
        ));
    }
    if entries != 2 * m || set.weights.len() != m {
        return Err(ProblemError::invalid(
            "line 1",
            format!("the header declares {m} edges; the lists hold {entries} entries ({} distinct edges): each edge must be on both its lines", set.weights.len()),
        ));
    }
    let node_weights = has_node_weights.then_some(node_weights);
    check_total_weight(node_weights.as_deref(), "line 1")?;
    let graph = PartitionGraph::weighted(n, set.finish(), node_weights, 2, 0.0);
    graph.check_feasible()?;
    Ok(graph)
}

/// Node weights must sum to a total the balance arithmetic can hold.
fn check_total_weight(weights: Option<&[u64]>, field: &str) -> Result<(), ProblemError> {
    match weights.map(|w| w.iter().try_fold(0u64, |t, &x| t.checked_add(x)).filter(|&t| t < 1 << 53)) {
        Some(None) => Err(ProblemError::invalid(field, "node weights must sum to less than 2^53")),
        _ => Ok(()),
    }
}

pub fn parse_json(value: &Value, limits: &Limits) -> Result<PartitionGraph, ProblemError> {
    let object = value.as_object().ok_or_else(|| ProblemError::invalid("instance", "expected a JSON object"))?;
    let known = ["num_nodes", "edges", "node_weights", "parts", "imbalance"];
    if let Some(unknown) = object.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(ProblemError::invalid(
            unknown.as_str(),
            "unknown field; expected num_nodes, edges, node_weights, parts, imbalance",
        ));
    }
    let n = object
        .get("num_nodes")
        .and_then(Value::as_u64)
        .ok_or_else(|| ProblemError::invalid("num_nodes", "must be a positive integer"))? as usize;
    check_node_count(n, "num_nodes", limits)?;
    let parts = match object.get("parts") {
        None | Some(Value::Null) => 2,
        Some(p) => p
            .as_u64()
            .filter(|&p| (2..=MAX_PARTS as u64).contains(&p))
            .ok_or_else(|| ProblemError::invalid("parts", format!("must be an integer in 2..={MAX_PARTS}")))?
            as usize,
    };
    let imbalance = match object.get("imbalance") {
        None | Some(Value::Null) => 0.0,
        Some(x) => x
            .as_f64()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .ok_or_else(|| ProblemError::invalid("imbalance", "must be a non-negative number"))?,
    };
    let edges = object
        .get("edges")
        .and_then(Value::as_array)
        .ok_or_else(|| ProblemError::invalid("edges", "must be an array of [u, v] or [u, v, w]"))?;
    let mut set = EdgeSet { n, weights: HashMap::new(), limits };
    for (k, edge) in edges.iter().enumerate() {
        let field = format!("edges[{k}]");
        let e = edge
            .as_array()
            .filter(|e| e.len() == 2 || e.len() == 3)
            .ok_or_else(|| ProblemError::invalid(&field, "must be [u, v] or [u, v, w]"))?;
        let id = |v: &Value| {
            v.as_u64()
                .map(|x| x as usize)
                .ok_or_else(|| ProblemError::invalid(&field, "node ids must be non-negative integers"))
        };
        let w = match e.get(2) {
            Some(w) => w.as_f64().ok_or_else(|| ProblemError::invalid(&field, "weight must be a number"))?,
            None => 1.0,
        };
        set.push(id(&e[0])?, id(&e[1])?, w, &field, 0)?;
    }
    let node_weights = match object.get("node_weights") {
        None | Some(Value::Null) => None,
        Some(Value::Array(list)) if list.len() == n => Some(
            list.iter()
                .enumerate()
                .map(|(i, w)| {
                    w.as_u64().filter(|&w| w >= 1).ok_or_else(|| {
                        ProblemError::invalid(format!("node_weights[{i}]"), "must be a positive integer")
                    })
                })
                .collect::<Result<Vec<u64>, _>>()?,
        ),
        Some(_) => {
            return Err(ProblemError::invalid("node_weights", format!("must be an array of {n} positive integers")))
        }
    };
    check_total_weight(node_weights.as_deref(), "node_weights")?;
    let graph = PartitionGraph::weighted(n, set.finish(), node_weights, parts, imbalance);
    graph.check_feasible()?;
    Ok(graph)
}

/// The registry row.
pub struct GraphPartitioning;

impl ProblemCode for GraphPartitioning {
    /// METIS: `nodes` nodes in two planted halves, `edges` inside them and `cut` across.
    fn generate(&self, spec: &super::GenerateSpec) -> Option<Result<String, String>> {
        let graph = super::graph::planted(spec.nodes, 2, spec.edges, spec.cut, false, spec.seed);
        Some(graph.map(|edges| to_metis(spec.nodes, &edges)))
    }

    fn instance_schema(&self) -> Value {
        json!({
            "type": "object",
            "required": ["num_nodes", "edges"],
            "properties": {
                "num_nodes": {"type": "integer", "minimum": 1},
                "edges": {"type": "array", "items": {"type": "array", "minItems": 2, "maxItems": 3, "items": {"type": "number"}}},
                "node_weights": {"type": "array", "items": {"type": "integer", "minimum": 1}, "description": "one per node; default all 1"},
                "parts": {"type": "integer", "minimum": 2, "maximum": MAX_PARTS, "description": "default 2"},
                "imbalance": {"type": "number", "minimum": 0, "description": "parts weigh at most ceil(W / parts (1 + imbalance)), W the total node weight; default 0"}
            }
        })
    }

    fn load(&self, input: ProblemInput<'_>, limits: &Limits) -> Result<Box<dyn Instance>, ProblemError> {
        Ok(Box::new(match input {
            ProblemInput::Json(value) => parse_json(value, limits)?,
            ProblemInput::Text(text) => parse_metis(text, limits)?,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_stay_balanced_their_cut_is_exact_and_small_bisections_are_optimal() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(6);
        let n = 16;
        let mut edges = Vec::new();
        for u in 0..n as u32 {
            for v in u + 1..n as u32 {
                if rng.gen::<f64>() < 0.3 {
                    edges.push((u, v, rng.gen_range(1..5) as f64));
                }
            }
        }
        let graph = PartitionGraph::new(n, edges, 2, 0.0);
        let best = (0..1u32 << n)
            .filter(|m| m.count_ones() == 8)
            .map(|m| graph.cut(&(0..n).map(|i| m >> i & 1).collect::<Vec<u32>>()))
            .fold(f64::INFINITY, f64::min);
        let moves = Annealing { graph: &graph, hot: 4.0, cold: 0.05, cycle: 32_000 };
        let mut chain = moves.start(0, &mut rng);
        for _ in 0..40 {
            moves.advance(&mut chain, 1_000, &mut rng);
            assert!(graph.balanced(&chain.parts));
            assert!((graph.cut(&chain.parts) - chain.cut).abs() < 1e-9);
        }
        assert_eq!(graph.cut(&chain.best), best);
    }

    #[test]
    fn weighted_chains_respect_the_weight_bound_and_find_the_enumerated_optimum() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
        let n = 14;
        let mut edges = Vec::new();
        for u in 0..n as u32 {
            for v in u + 1..n as u32 {
                if rng.gen::<f64>() < 0.35 {
                    edges.push((u, v, rng.gen_range(1..4) as f64));
                }
            }
        }
        let weights: Vec<u64> = (0..n).map(|_| rng.gen_range(1..5)).collect();
        let graph = PartitionGraph::weighted(n, edges, Some(weights.clone()), 2, 0.05);
        graph.check_feasible().unwrap();
        let best = (0..1u32 << n)
            .map(|m| (0..n).map(|i| m >> i & 1).collect::<Vec<u32>>())
            .filter(|parts| graph.balanced(parts))
            .map(|parts| graph.cut(&parts))
            .fold(f64::INFINITY, f64::min);
        let moves = Annealing { graph: &graph, hot: 4.0, cold: 0.05, cycle: 32_000 };
        let mut chain = moves.start(0, &mut rng);
        for _ in 0..40 {
            moves.advance(&mut chain, 1_000, &mut rng);
            assert!(graph.balanced(&chain.parts));
            assert_eq!(graph.part_weights(&chain.parts), chain.sizes);
            assert!((graph.cut(&chain.parts) - chain.cut).abs() < 1e-9);
        }
        assert_eq!(graph.cut(&chain.best), best);
        assert!(graph.balanced(&graph.bfs(3)));
    }

    #[test]
    fn metis_node_weights_are_read_and_an_unbalanceable_instance_is_refused() {
        let limits = Limits::default();
        // A path 1-2-3-4 with node weights 3, 1, 1, 1 (fmt 10): halves of at most 3.
        let graph = parse_metis("4 3 10\n3 2\n1 1 3\n1 2 4\n1 3\n", &limits).unwrap();
        assert_eq!(graph.node_weights, Some(vec![3, 1, 1, 1]));
        assert_eq!(graph.capacity, 3);
        assert!(graph.balanced(&[0, 1, 1, 1]) && !graph.balanced(&[0, 0, 1, 1]));
        // fmt 11: node weight, then neighbour-weight pairs.
        let graph = parse_metis("2 1 11\n2 2 5\n2 1 5\n", &limits).unwrap();
        assert_eq!((graph.node_weights.clone(), graph.cut(&[0, 1])), (Some(vec![2, 2]), 5.0));
        // Weights 3 and 1 cannot split into two parts of at most 2.
        let error = parse_metis("2 1 10\n3 2\n1 1\n", &limits).err().unwrap().to_string();
        assert!(error.contains("imbalance"), "{error}");
        let error = parse_metis("2 1 10\n0 2\n1 1\n", &limits).err().unwrap().to_string();
        assert!(error.contains("line 2") && error.contains("positive"), "{error}");
        let error = parse_metis("2 1 10 2\n1 2\n1 1\n", &limits).err().unwrap().to_string();
        assert!(error.contains("ncon"), "{error}");
        let json = json!({"num_nodes": 2, "edges": [[0, 1]], "node_weights": [1, 0]});
        assert!(parse_json(&json, &limits).err().unwrap().to_string().contains("node_weights[1]"));
    }
}
