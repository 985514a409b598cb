//! TSP-v0 and TSP-v1 as or-gymnasium's `tsp.py`: an agent walks a graph of N = 50 nodes from a
//! random start, one move per step (action = the node to move to).
//! - TSP-v0 (`TSPEnv`): a sparse random graph drawn at every reset (each node picks 2..N-2
//!   others, then every edge is made two-way) with uniform cost: -1 per move, -100 for a node
//!   not adjacent (the agent stays), +1000 once every node has been visited (terminated);
//!   truncated after 2N steps. Observation: the current node, then the N x N matrix with 1 for
//!   an edge into an unvisited node, -1 for an edge into a visited one, 0 for no edge.
//! - TSP-v1 (`TSPDistCost`): the complete graph on N points in the unit square; a move's reward
//!   is its euclidean length (positive, as the reference writes it, although its doc calls it
//!   a cost), a revisit gives -100 and ends the episode, and so does the last new node; no time
//!   limit. Observation: the current node, then 1 per visited node.
//!
//! `node_features` (ours, off by default) appends what a policy scores the nodes by, one block
//! of N per feature (`ObservationLayout::items`, so one network serves any N): the allowed
//! moves (v0: along an edge; v1: to an unvisited node), whether each node is unvisited, then
//! TSP-v0: the moves from each node to its nearest unvisited node (a multi-source breadth-first
//! search, 0 for an unvisited node) and its unvisited neighbours, TSP-v1: each node's distance
//! from the current one and to its nearest other unvisited node; last the fraction visited.
//! The reference's observation comes first, unchanged; the dynamics do not change.
//!
//! Where we differ: the reference draws TSP-v1's points once, unseeded, when the env is built,
//! and keeps them; ours are part of the config (`coordinates`) or drawn per episode from the
//! episode's seeded stream. The reference's TSP-v1 reward sign is kept by default;
//! `negate_distance` makes a move's reward minus its length (a shortest-path objective, which
//! the routing references minimize).

use crate::drl::env::ConfigError;
use crate::drl::env::{ActionSpace, ItemLayout, ObservationLayout};
use rand::seq::index::sample;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// The most nodes (TSP-v0's observation is N^2 + 1 wide).
pub const MAX_NODES: usize = 500;

/// The registered ids and whether each is the distance-cost variant.
pub const IDS: [(&str, bool); 2] = [("TSP-v0", false), ("TSP-v1", true)];

/// The env's parameters; the defaults are or-gym's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TspConfig {
    /// TSP-v1's complete euclidean graph (true) or TSP-v0's sparse uniform-cost one.
    pub distance_cost: bool,
    /// Nodes (50).
    pub nodes: usize,
    /// TSP-v0's reward per move (-1).
    pub move_cost: f64,
    /// Reward of a move along no edge (v0) or to a visited node (v1) (-100).
    pub invalid_action_cost: f64,
    /// TSP-v0's bonus for the last new node (1000).
    pub completion_bonus: f64,
    /// TSP-v1: reward minus the length instead of the length.
    pub negate_distance: bool,
    /// TSP-v1's points (x, y); None: drawn uniformly in the unit square per episode.
    pub coordinates: Option<Vec<[f64; 2]>>,
    /// TSP-v0's adjacency lists (made two-way); None: drawn per episode.
    pub edges: Option<Vec<Vec<usize>>>,
    /// Append the per-node features a policy reads (module doc); false: the reference's
    /// observation exactly.
    pub node_features: bool,
}

impl Default for TspConfig {
    fn default() -> Self {
        TspConfig {
            distance_cost: false,
            nodes: 50,
            move_cost: -1.0,
            invalid_action_cost: -100.0,
            completion_bonus: 1000.0,
            negate_distance: false,
            coordinates: None,
            edges: None,
            node_features: false,
        }
    }
}

impl TspConfig {
    pub fn by_id(id: &str) -> Option<Self> {
        IDS.iter().find(|(i, _)| *i == id).map(|&(_, distance_cost)| TspConfig { distance_cost, ..Default::default() })
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |field, message: String| Err(ConfigError { field, message, too_large: false });
        if self.nodes < 3 {
            return invalid("nodes", format!("at least 3, got {}", self.nodes));
        }
        if self.nodes > MAX_NODES {
            return Err(ConfigError {
                field: "nodes",
                message: format!("at most {MAX_NODES}, got {}", self.nodes),
                too_large: true,
            });
        }
        let costs = [
            ("move_cost", self.move_cost),
            ("invalid_action_cost", self.invalid_action_cost),
            ("completion_bonus", self.completion_bonus),
        ];
        if let Some((field, value)) = costs.iter().find(|(_, v)| !v.is_finite()) {
            return invalid(field, format!("must be finite, got {value}"));
        }
        if let Some(points) = &self.coordinates {
            if points.len() != self.nodes {
                return invalid("coordinates", format!("{} points for {} nodes", points.len(), self.nodes));
            }
            if points.iter().flatten().any(|x| !x.is_finite()) {
                return invalid("coordinates", "every coordinate must be finite".into());
            }
        }
        if let Some(edges) = &self.edges {
            if edges.len() != self.nodes {
                return invalid("edges", format!("{} adjacency lists for {} nodes", edges.len(), self.nodes));
            }
            if edges.iter().enumerate().any(|(n, list)| list.iter().any(|&m| m >= self.nodes || m == n)) {
                return invalid("edges", format!("every neighbour must be another node below {}", self.nodes));
            }
        }
        Ok(())
    }

    /// The reference's observation width (the current node, then v0's matrix or v1's visits).
    pub fn reference_dim(&self) -> usize {
        1 + if self.distance_cost { self.nodes } else { self.nodes * self.nodes }
    }

    pub fn observation_dim(&self) -> usize {
        self.reference_dim() + if self.node_features { NODE_FEATURE_BLOCKS * self.nodes + 1 } else { 0 }
    }

    pub fn step_limit(&self) -> Option<usize> {
        (!self.distance_cost).then_some(2 * self.nodes)
    }

    /// TSP-v0's graph as the reference draws it: each node picks 2..=N-2 distinct others, then
    /// every edge is made two-way.
    pub fn draw_graph(&self, rng: &mut ChaCha8Rng) -> Vec<Vec<bool>> {
        let n = self.nodes;
        let lists: Vec<Vec<usize>> = (0..n)
            .map(|node| {
                let count = rng.gen_range(2..n - 1);
                sample(rng, n - 1, count).into_iter().map(|k| if k >= node { k + 1 } else { k }).collect()
            })
            .collect();
        two_way(n, &lists)
    }
}

/// Blocks of N columns `node_features` appends (mask, unvisited, two per variant), before the
/// fraction visited.
const NODE_FEATURE_BLOCKS: usize = 4;

/// The adjacency matrix of lists made two-way.
pub fn two_way(n: usize, lists: &[Vec<usize>]) -> Vec<Vec<bool>> {
    let mut adjacency = vec![vec![false; n]; n];
    for (a, list) in lists.iter().enumerate() {
        for &b in list {
            adjacency[a][b] = true;
            adjacency[b][a] = true;
        }
    }
    adjacency
}

impl crate::problems::orgym::env::OrGymConfig for TspConfig {
    fn policy_observation(&self) -> Self {
        TspConfig { node_features: true, ..self.clone() }
    }

    fn observation_dim(&self) -> usize {
        TspConfig::observation_dim(self)
    }

    fn action_space(&self) -> ActionSpace {
        ActionSpace::Discrete { n: self.nodes }
    }

    fn layout(&self) -> ObservationLayout {
        if !self.node_features {
            return ObservationLayout::default();
        }
        let (base, n) = (self.reference_dim(), self.nodes);
        ObservationLayout {
            action_mask: Some(base),
            scale: Vec::new(),
            items: Some(ItemLayout {
                count: n,
                features: vec![base + n, base + 2 * n, base + 3 * n],
                globals: vec![base + NODE_FEATURE_BLOCKS * n],
            }),
        }
    }
}

/// The episode's graph: TSP-v0's adjacency or TSP-v1's points.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Graph {
    Sparse(Vec<Vec<bool>>),
    Euclidean(Vec<[f64; 2]>),
}

/// One episode in progress.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Walk {
    pub graph: Graph,
    pub current: usize,
    pub visits: Vec<u32>,
    pub steps: usize,
    /// The nodes in order of the moves made, the start first.
    pub path: Vec<usize>,
}

impl Walk {
    /// A walk from `start` on `graph`.
    pub fn on(graph: Graph, start: usize, nodes: usize) -> Self {
        let mut visits = vec![0; nodes];
        visits[start] = 1;
        Walk { graph, current: start, visits, steps: 0, path: vec![start] }
    }

    /// The reference's distance between two points.
    pub fn distance(a: [f64; 2], b: [f64; 2]) -> f64 {
        ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt()
    }

    pub fn visited(&self) -> usize {
        self.visits.iter().filter(|&&v| v > 0).count()
    }

    /// (reward, terminated, truncated) of moving to `to`.
    pub fn step_to(&mut self, config: &TspConfig, to: usize) -> (f64, bool, bool) {
        let to = to.min(config.nodes - 1);
        self.steps += 1;
        match &self.graph {
            Graph::Sparse(adjacency) => {
                let mut reward = if adjacency[self.current][to] {
                    self.current = to;
                    self.visits[to] += 1;
                    self.path.push(to);
                    config.move_cost
                } else {
                    config.invalid_action_cost
                };
                let terminated = self.visited() >= config.nodes;
                if terminated {
                    reward += config.completion_bonus;
                }
                (reward, terminated, self.steps >= 2 * config.nodes)
            }
            Graph::Euclidean(points) => {
                if self.visits[to] > 0 {
                    return (config.invalid_action_cost, true, false);
                }
                let length = Walk::distance(points[self.current], points[to]);
                self.current = to;
                self.visits[to] = 1;
                self.path.push(to);
                let reward = if config.negate_distance { -length } else { length };
                (reward, self.visited() == config.nodes, false)
            }
        }
    }

    pub fn fill(&self, out: &mut [f32]) {
        out[0] = self.current as f32;
        match &self.graph {
            Graph::Sparse(adjacency) => {
                let n = adjacency.len();
                for (r, row) in adjacency.iter().enumerate() {
                    for (c, &edge) in row.iter().enumerate() {
                        out[1 + r * n + c] = match (edge, self.visits[c] > 0) {
                            (false, _) => 0.0,
                            (true, true) => -1.0,
                            (true, false) => 1.0,
                        };
                    }
                }
            }
            Graph::Euclidean(_) => {
                for (o, &v) in out[1..].iter_mut().zip(&self.visits) {
                    *o = f32::from(u8::from(v > 0));
                }
            }
        }
        let base = 1 + match &self.graph {
            Graph::Sparse(adjacency) => adjacency.len() * adjacency.len(),
            Graph::Euclidean(points) => points.len(),
        };
        if out.len() > base {
            self.fill_node_features(&mut out[base..]);
        }
    }

    /// The `node_features` blocks (module doc) into `out` (4N + 1 columns).
    fn fill_node_features(&self, out: &mut [f32]) {
        let n = self.visits.len();
        let (blocks, fraction) = out.split_at_mut(NODE_FEATURE_BLOCKS * n);
        let (allowed, rest) = blocks.split_at_mut(n);
        let (unvisited, rest) = rest.split_at_mut(n);
        let (first, second) = rest.split_at_mut(n);
        for m in 0..n {
            unvisited[m] = f32::from(u8::from(self.visits[m] == 0));
        }
        match &self.graph {
            Graph::Sparse(adjacency) => {
                let hops = self.hops_to_unvisited(adjacency);
                for m in 0..n {
                    allowed[m] = f32::from(u8::from(adjacency[self.current][m]));
                    first[m] = hops[m] as f32 / n as f32;
                    let open = (0..n).filter(|&k| adjacency[m][k] && self.visits[k] == 0).count();
                    second[m] = open as f32 / n as f32;
                }
            }
            Graph::Euclidean(points) => {
                for m in 0..n {
                    allowed[m] = unvisited[m];
                    first[m] = Walk::distance(points[self.current], points[m]) as f32;
                    second[m] = (0..n)
                        .filter(|&k| k != m && self.visits[k] == 0)
                        .map(|k| Walk::distance(points[m], points[k]))
                        .fold(None, |best: Option<f64>, d| Some(best.map_or(d, |b| b.min(d))))
                        .unwrap_or(0.0) as f32;
                }
            }
        }
        fraction[0] = self.visited() as f32 / n as f32;
    }

    /// Moves from each node to its nearest unvisited node (0 for an unvisited node, N when none
    /// is reachable): one breadth-first search from every unvisited node at once.
    fn hops_to_unvisited(&self, adjacency: &[Vec<bool>]) -> Vec<usize> {
        let n = adjacency.len();
        let mut hops = vec![n; n];
        let mut queue = std::collections::VecDeque::new();
        for m in (0..n).filter(|&m| self.visits[m] == 0) {
            hops[m] = 0;
            queue.push_back(m);
        }
        while let Some(node) = queue.pop_front() {
            for k in 0..n {
                if adjacency[node][k] && hops[k] == n {
                    hops[k] = hops[node] + 1;
                    queue.push_back(k);
                }
            }
        }
        hops
    }
}

/// A batch of TSP envs.
pub type TspVecEnv = crate::problems::orgym::env::OrGymVecEnv<Walk>;

impl crate::problems::orgym::env::OrGymEpisode for Walk {
    type Config = TspConfig;

    fn start(config: &TspConfig, rng: &mut ChaCha8Rng) -> Self {
        let n = config.nodes;
        let graph = if config.distance_cost {
            Graph::Euclidean(
                config
                    .coordinates
                    .clone()
                    .unwrap_or_else(|| (0..n).map(|_| [rng.gen::<f64>(), rng.gen::<f64>()]).collect()),
            )
        } else {
            Graph::Sparse(config.edges.as_ref().map_or_else(|| config.draw_graph(rng), |lists| two_way(n, lists)))
        };
        let start = rng.gen_range(0..n);
        Walk::on(graph, start, n)
    }

    fn step(&mut self, config: &TspConfig, action: &[f32], _rng: &mut ChaCha8Rng) -> (f32, bool, bool) {
        let (reward, terminated, truncated) = self.step_to(config, action[0].max(0.0) as usize);
        (reward as f32, terminated, truncated)
    }

    fn observe(&self, _config: &TspConfig, out: &mut [f32]) {
        self.fill(out)
    }
}

impl TspVecEnv {
    pub fn by_id(id: &str, num_envs: usize) -> Option<Self> {
        Some(TspVecEnv::new(TspConfig::by_id(id)?, num_envs))
    }

    /// Env i restarts on `graph` from `start` (fixture replay presents the reference's draw).
    pub fn set_walk(&mut self, i: usize, graph: Graph, start: usize) {
        let n = self.config().nodes;
        *self.episode_mut(i) = Walk::on(graph, start, n);
    }
}
