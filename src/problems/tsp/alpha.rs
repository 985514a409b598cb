//! Candidate edges by alpha-nearness (K. Helsgaun, "An effective implementation of the
//! Lin-Kernighan traveling salesman heuristic", European Journal of Operational Research 126,
//! 2000, sections 4.1-4.2). alpha(i, j) is how much the minimum 1-tree grows when it is made to
//! hold the edge (i, j): the edge's cost less the longest edge on the tree path between i and j.
//! Costs are the Held-Karp penalised ones, d_ij + pi_i + pi_j, with pi from a subgradient ascent
//! (the steps of `held_karp`), so that the 1-tree is as close to a tour as the ascent gets: most
//! optimal-tour edges then have alpha 0 and five alpha-nearest candidates hold nearly all of them,
//! where the ten nearest by distance miss some (Helsgaun's Table 1).
//!
//! The ascent and the alpha values run on a sparse graph: every city's `NEIGHBOURS` nearest,
//! both ways, joined by the minimum spanning tree of the complete graph when those lists leave it
//! disconnected. A heap-based Prim step then costs O(m log n) instead of the complete graph's
//! O(n^2), which is what lets the ascent take hundreds of steps on thousands of cities.

use super::Tsp;
use crate::problems::subgradient::Ascent;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

/// Seconds of one ascent step per adjacency entry (a heap-based Prim step and the 1-tree's
/// leaf scan), measured on this machine's cores.
const STEP_SECONDS_PER_ENTRY: f64 = 60e-9;

/// Hyperparameters of the candidate sets.
#[derive(Debug, Clone)]
pub struct AlphaConfig {
    /// Candidates kept per city (Helsgaun's default, 5).
    pub per_city: usize,
    /// Ascent steps at most.
    pub max_steps: usize,
    /// Steps without a better bound before the step factor halves.
    pub stall: usize,
}

impl Default for AlphaConfig {
    fn default() -> Self {
        AlphaConfig { per_city: 5, max_steps: 1_000, stall: 20 }
    }
}

/// The ascent's outcome: each city's candidates, best first, and the penalties they were
/// ranked under (a warm start for the dense bound).
pub struct Candidates {
    pub lists: Vec<Vec<u32>>,
    pub pi: Vec<f64>,
}

/// Total order on costs for the heap.
#[derive(Clone, Copy, PartialEq)]
struct Cost(f64);

impl Eq for Cost {}
impl PartialOrd for Cost {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Cost {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// The sparse graph: adjacency with each edge's distance.
struct Graph {
    adj: Vec<Vec<(u32, f64)>>,
}

/// A minimum spanning tree rooted at city 0: each city's parent (the root its own), the cost
/// of that edge, and the cities in the order Prim added them (parents first).
struct Tree {
    parent: Vec<u32>,
    cost: Vec<f64>,
    order: Vec<u32>,
    length: f64,
}

impl Graph {
    fn new(tsp: &Tsp) -> Self {
        let n = tsp.num_cities();
        let mut lists: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (i, near) in tsp.neighbours.iter().enumerate() {
            for &j in near {
                lists[i].push(j);
                lists[j as usize].push(i as u32);
            }
        }
        let mut graph = Graph { adj: Vec::new() };
        graph.set(tsp, lists);
        graph
    }

    fn set(&mut self, tsp: &Tsp, mut lists: Vec<Vec<u32>>) {
        self.adj = lists
            .iter_mut()
            .enumerate()
            .map(|(i, list)| {
                list.sort_unstable();
                list.dedup();
                list.iter().map(|&j| (j, tsp.distances.get(i as u32, j))).collect()
            })
            .collect();
    }

    /// Adds the complete graph's minimum spanning tree (Prim, O(n^2)) when the lists leave the
    /// graph disconnected; false when that would take more than `seconds`.
    fn connect(&mut self, tsp: &Tsp, seconds: f64) -> bool {
        let n = self.adj.len();
        if self.tree(&vec![0.0; n]).order.len() == n {
            return true;
        }
        // About 4 ns per pair on this machine's cores.
        if (n * n) as f64 * 4e-9 > seconds {
            return false;
        }
        let mut lists: Vec<Vec<u32>> = self.adj.iter().map(|l| l.iter().map(|&(j, _)| j).collect()).collect();
        let (mut in_tree, mut key, mut near) = (vec![false; n], vec![f64::INFINITY; n], vec![0u32; n]);
        let mut current = 0usize;
        in_tree[0] = true;
        for _ in 1..n {
            let mut next = usize::MAX;
            for j in 0..n {
                if in_tree[j] {
                    continue;
                }
                let c = tsp.distances.get(current as u32, j as u32);
                if c < key[j] {
                    (key[j], near[j]) = (c, current as u32);
                }
                if next == usize::MAX || key[j] < key[next] {
                    next = j;
                }
            }
            in_tree[next] = true;
            lists[next].push(near[next]);
            lists[near[next] as usize].push(next as u32);
            current = next;
        }
        self.set(tsp, lists);
        true
    }

    /// Prim's algorithm from city 0 under penalties `pi`; a tree of fewer cities than the graph
    /// has when it is disconnected.
    fn tree(&self, pi: &[f64]) -> Tree {
        let n = self.adj.len();
        let mut tree =
            Tree { parent: vec![u32::MAX; n], cost: vec![0.0; n], order: Vec::with_capacity(n), length: 0.0 };
        let mut done = vec![false; n];
        let mut heap = BinaryHeap::new();
        heap.push(Reverse((Cost(0.0), 0u32, 0u32)));
        while let Some(Reverse((Cost(c), city, from))) = heap.pop() {
            if done[city as usize] {
                continue;
            }
            done[city as usize] = true;
            (tree.parent[city as usize], tree.cost[city as usize]) = (from, c);
            tree.order.push(city);
            tree.length += c;
            for &(j, d) in &self.adj[city as usize] {
                if !done[j as usize] {
                    heap.push(Reverse((Cost(d + pi[city as usize] + pi[j as usize]), j, city)));
                }
            }
        }
        tree
    }

    /// The minimum 1-tree's length and each city's degree in it: the tree plus, of the leaves,
    /// the one whose cheapest edge outside the tree is longest (Helsgaun's choice of special
    /// node, which makes the 1-tree as long as a leaf allows).
    fn one_tree(&self, pi: &[f64], degree: &mut [u32]) -> f64 {
        let tree = self.tree(pi);
        degree.iter_mut().for_each(|d| *d = 0);
        for &c in &tree.order[1..] {
            degree[c as usize] += 1;
            degree[tree.parent[c as usize] as usize] += 1;
        }
        let mut extra: Option<(f64, u32, u32)> = None;
        for (leaf, &deg) in degree.iter().enumerate() {
            if deg != 1 {
                continue;
            }
            let cheapest = self.adj[leaf]
                .iter()
                .filter(|&&(j, _)| j != tree.parent[leaf] && tree.parent[j as usize] != leaf as u32)
                .map(|&(j, d)| (d + pi[leaf] + pi[j as usize], j))
                .min_by(|a, b| a.0.total_cmp(&b.0));
            if let Some((c, j)) = cheapest {
                if extra.is_none_or(|(e, _, _)| c > e) {
                    extra = Some((c, leaf as u32, j));
                }
            }
        }
        let Some((c, leaf, j)) = extra else { return tree.length };
        degree[leaf as usize] += 1;
        degree[j as usize] += 1;
        tree.length + c
    }
}

/// The longest edge on the tree path between two cities, by binary lifting (O(log n) a query
/// after O(n log n) set-up, where walking the path costs up to its length, n on a chain).
struct PathMax {
    depth: Vec<u32>,
    /// `up[k][c]`: the ancestor 2^k levels above c (the root above itself), `longest[k][c]` the
    /// longest edge on the way.
    up: Vec<Vec<u32>>,
    longest: Vec<Vec<f64>>,
}

impl PathMax {
    fn new(tree: &Tree) -> Self {
        let n = tree.parent.len();
        let mut depth = vec![0u32; n];
        for &c in &tree.order[1..] {
            depth[c as usize] = depth[tree.parent[c as usize] as usize] + 1;
        }
        let root = tree.order[0];
        let mut up = vec![tree.parent.iter().map(|&p| if p == u32::MAX { root } else { p }).collect::<Vec<u32>>()];
        up[0][root as usize] = root;
        let mut longest = vec![tree.cost.clone()];
        longest[0][root as usize] = f64::NEG_INFINITY;
        let levels = (usize::BITS - n.leading_zeros()) as usize;
        for k in 1..levels.max(1) {
            let (prev_up, prev_long) = (&up[k - 1], &longest[k - 1]);
            let next_up: Vec<u32> = (0..n).map(|c| prev_up[prev_up[c] as usize]).collect();
            let next_long: Vec<f64> = (0..n).map(|c| prev_long[c].max(prev_long[prev_up[c] as usize])).collect();
            up.push(next_up);
            longest.push(next_long);
        }
        PathMax { depth, up, longest }
    }

    fn longest(&self, mut i: u32, mut j: u32) -> f64 {
        let mut best = f64::NEG_INFINITY;
        if self.depth[i as usize] < self.depth[j as usize] {
            std::mem::swap(&mut i, &mut j);
        }
        let mut rise = self.depth[i as usize] - self.depth[j as usize];
        let mut k = 0;
        while rise > 0 {
            if rise & 1 == 1 {
                best = best.max(self.longest[k][i as usize]);
                i = self.up[k][i as usize];
            }
            (rise, k) = (rise >> 1, k + 1);
        }
        if i == j {
            return best;
        }
        for k in (0..self.up.len()).rev() {
            if self.up[k][i as usize] != self.up[k][j as usize] {
                best = best.max(self.longest[k][i as usize]).max(self.longest[k][j as usize]);
                (i, j) = (self.up[k][i as usize], self.up[k][j as usize]);
            }
        }
        best.max(self.longest[0][i as usize]).max(self.longest[0][j as usize])
    }
}

/// Each city's `per_city` alpha-nearest candidates, ties broken by penalised cost, after an
/// ascent of as many steps as `seconds` hold by the graph's size (so that the same instance and
/// limit give the same lists), stopped at twice `seconds` on a slower machine; `upper` is any
/// tour's length (the step's target). None when the neighbour lists leave the graph disconnected
/// and the complete graph's spanning tree that would join it does not fit in `seconds`.
pub fn candidates(tsp: &Tsp, upper: f64, seconds: f64, config: &AlphaConfig) -> Option<Candidates> {
    let started = Instant::now();
    let n = tsp.num_cities();
    let mut graph = Graph::new(tsp);
    if !graph.connect(tsp, seconds) {
        return None;
    }
    let entries: usize = graph.adj.iter().map(Vec::len).sum();
    let steps = ((seconds / (entries as f64 * STEP_SECONDS_PER_ENTRY)) as usize).clamp(1, config.max_steps);
    let deadline = started + Duration::from_secs_f64(2.0 * seconds.max(0.0));
    let mut pi = vec![0.0f64; n];
    let mut best_pi = pi.clone();
    let mut degree = vec![0u32; n];
    let mut ascent = Ascent::new(config.stall, 1e-3);
    for _ in 0..steps {
        let bound = graph.one_tree(&pi, &mut degree) - 2.0 * pi.iter().sum::<f64>();
        if bound > ascent.best + 1e-9 {
            best_pi.clone_from(&pi);
        }
        let going = ascent.record(bound);
        let norm: f64 = degree.iter().map(|&d| (f64::from(d) - 2.0).powi(2)).sum();
        if norm == 0.0 || !going || Instant::now() >= deadline {
            break;
        }
        let step = ascent.step(upper, bound, norm);
        for (p, &d) in pi.iter_mut().zip(&degree) {
            *p += step * (f64::from(d) - 2.0);
        }
    }
    let tree = graph.tree(&best_pi);
    let path = PathMax::new(&tree);
    let lists = (0..n as u32)
        .map(|i| {
            let mut ranked: Vec<(f64, f64, u32)> = graph.adj[i as usize]
                .iter()
                .map(|&(j, d)| {
                    let cost = d + best_pi[i as usize] + best_pi[j as usize];
                    ((cost - path.longest(i, j)).max(0.0), cost, j)
                })
                .collect();
            ranked.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)).then(a.2.cmp(&b.2)));
            ranked.into_iter().take(config.per_city).map(|(_, _, j)| j).collect()
        })
        .collect();
    Some(Candidates { lists, pi: best_pi })
}

#[cfg(test)]
mod tests {
    use super::super::{Distances, Metric};
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn the_lifted_path_maximum_matches_a_walk_up_the_tree() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        for n in [2usize, 3, 17, 300] {
            // A random tree: each city hangs under an earlier one.
            let mut tree = Tree { parent: vec![0; n], cost: vec![0.0; n], order: (0..n as u32).collect(), length: 0.0 };
            for c in 1..n {
                tree.parent[c] = rng.gen_range(0..c as u32);
                tree.cost[c] = rng.gen_range(0.0..10.0);
            }
            let path = PathMax::new(&tree);
            let walk = |mut i: u32, mut j: u32| {
                let mut longest = f64::NEG_INFINITY;
                while i != j {
                    if path.depth[i as usize] < path.depth[j as usize] {
                        std::mem::swap(&mut i, &mut j);
                    }
                    longest = longest.max(tree.cost[i as usize]);
                    i = tree.parent[i as usize];
                }
                longest
            };
            for _ in 0..500 {
                let (i, j) = (rng.gen_range(0..n as u32), rng.gen_range(0..n as u32));
                assert_eq!(path.longest(i, j), walk(i, j), "n {n}: {i}-{j}");
            }
        }
    }

    #[test]
    fn tree_edges_are_candidates_and_every_list_is_full_and_distinct() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        // Two far clusters: the nearest-neighbour lists alone leave the graph disconnected.
        let xy: Vec<(f64, f64)> = (0..200)
            .map(|k| {
                let shift = if k < 100 { 0.0 } else { 1e5 };
                (shift + rng.gen_range(0.0..100.0), rng.gen_range(0.0..100.0))
            })
            .collect();
        let tsp = Tsp::new(Distances::Coordinates { xy, metric: Metric::Euclidean }, (0..200).collect()).unwrap();
        let found = candidates(&tsp, 4e5, 30.0, &AlphaConfig::default()).expect("room to join the clusters");
        // The minimum spanning tree under the final penalties has alpha 0 on its edges.
        let mut graph = Graph::new(&tsp);
        assert!(graph.connect(&tsp, 30.0));
        let tree = graph.tree(&found.pi);
        assert_eq!(tree.order.len(), 200, "the joined graph spans both clusters");
        for &c in &tree.order[1..] {
            let p = tree.parent[c as usize];
            assert!(
                found.lists[c as usize].contains(&p) || found.lists[p as usize].contains(&c),
                "tree edge {c}-{p} is nobody's candidate"
            );
        }
        for (i, list) in found.lists.iter().enumerate() {
            assert_eq!(list.len(), 5);
            let mut sorted = list.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), 5, "city {i}: {list:?}");
            assert!(!list.contains(&(i as u32)));
        }
    }
}
