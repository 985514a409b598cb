//! The routing references a TSP policy is judged against:
//! - TSP-v0: the nearest unvisited node by breadth-first search over the graph (uniform cost,
//!   so the nearest neighbour is the fewest moves away), one move along its shortest path per
//!   step; N - 1 moves (a Hamiltonian path) bound every walk's cost from below.
//! - TSP-v1: nearest neighbour from the start, then 2-opt on the open path (the start fixed,
//!   the end free) until no reversal shortens it, its moves replayed in the env.

use super::env::{Graph, TspConfig, Walk};
use crate::drl::env::VecEnv;
use std::collections::VecDeque;

/// TSP-v0's next move: the first node on a shortest path to the nearest unvisited node (the
/// lowest-numbered among equals); the current node when none is reachable.
pub fn nearest_unvisited_move(adjacency: &[Vec<bool>], walk: &Walk) -> usize {
    let n = adjacency.len();
    let mut first_move = vec![usize::MAX; n];
    let mut queue = VecDeque::new();
    first_move[walk.current] = walk.current;
    for (m, &edge) in adjacency[walk.current].iter().enumerate() {
        if edge && m != walk.current {
            first_move[m] = m;
            queue.push_back(m);
        }
    }
    while let Some(node) = queue.pop_front() {
        if walk.visits[node] == 0 {
            return first_move[node];
        }
        for (m, &edge) in adjacency[node].iter().enumerate() {
            if edge && first_move[m] == usize::MAX {
                first_move[m] = first_move[node];
                queue.push_back(m);
            }
        }
    }
    walk.current
}

/// Length of an open path over `points`.
pub fn path_length(points: &[[f64; 2]], path: &[usize]) -> f64 {
    path.windows(2).map(|w| Walk::distance(points[w[0]], points[w[1]])).sum()
}

/// Nearest neighbour from `start`, then 2-opt on the open path with `start` kept first.
pub fn nearest_neighbour_two_opt(points: &[[f64; 2]], start: usize) -> Vec<usize> {
    let n = points.len();
    let d = |a: usize, b: usize| Walk::distance(points[a], points[b]);
    let mut path = vec![start];
    let mut free: Vec<bool> = (0..n).map(|i| i != start).collect();
    while path.len() < n {
        let last = *path.last().expect("a start");
        let next = (0..n).filter(|&m| free[m]).min_by(|&a, &b| d(last, a).total_cmp(&d(last, b))).expect("a node left");
        free[next] = false;
        path.push(next);
    }
    let mut improved = true;
    while improved {
        improved = false;
        for i in 1..n - 1 {
            for j in i + 1..n {
                // Reverse path[i..=j]: edges (i-1, i) and (j, j+1) become (i-1, j) and (i, j+1).
                let after = if j + 1 < n { d(path[i], path[j + 1]) - d(path[j], path[j + 1]) } else { 0.0 };
                let delta = d(path[i - 1], path[j]) - d(path[i - 1], path[i]) + after;
                if delta < -1e-12 {
                    path[i..=j].reverse();
                    improved = true;
                }
            }
        }
    }
    path
}

/// The reference's move for env i of a batch (TSP-v0: the BFS walk; TSP-v1: the next node of
/// the 2-opt path planned from the episode's start, which `plans` caches per env).
pub fn reference_move(walk: &Walk, plan: &mut Option<Vec<usize>>) -> usize {
    match &walk.graph {
        Graph::Sparse(adjacency) => nearest_unvisited_move(adjacency, walk),
        Graph::Euclidean(points) => {
            if plan.as_ref().is_none_or(|p| p.first() != walk.path.first() || walk.path.len() == 1) {
                *plan = Some(nearest_neighbour_two_opt(points, walk.path[0]));
            }
            plan.as_ref().and_then(|p| p.get(walk.path.len()).copied()).unwrap_or(walk.current)
        }
    }
}

/// Actions from the batch, its observations and their width: one row per env, flat.
pub type TspActor<'a> = crate::problems::orgym::env::Actor<'a, Walk>;

/// Per-episode returns of `act` on `episodes` episodes from `seed` (each env's first episode).
pub fn rollout(config: &TspConfig, episodes: usize, seed: u64, act: &mut TspActor<'_>) -> Vec<f64> {
    crate::problems::orgym::env::first_episode_returns(config, episodes, seed, act)
}

/// Per-episode returns of the routing reference.
pub fn reference_returns(config: &TspConfig, episodes: usize, seed: u64) -> Vec<f64> {
    let mut plans = vec![None; episodes];
    rollout(config, episodes, seed, &mut |env, _, _| {
        (0..env.num_envs()).map(|i| reference_move(env.episode(i), &mut plans[i]) as f32).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problems::orgym::tsp::env::two_way;

    /// The BFS walk visits every node of a drawn graph within the step limit, never along a
    /// missing edge; 2-opt never lengthens the nearest-neighbour path and untangles a crossing.
    #[test]
    fn references_walk_and_untangle() {
        let config = TspConfig::default();
        let returns = reference_returns(&config, 8, 1);
        for r in &returns {
            // 1000 bonus, at least N - 1 moves, no -100.
            assert!(*r <= 1000.0 - 49.0 && *r > 1000.0 - 100.0, "{returns:?}");
        }
        let path_graph = two_way(4, &[vec![1], vec![2], vec![3], vec![]]);
        let walk = Walk::on(Graph::Sparse(path_graph.clone()), 3, 4);
        assert_eq!(nearest_unvisited_move(&path_graph, &walk), 2);
        // A square visited corner to opposite corner first: 2-opt makes it the perimeter.
        let square = [[0.0, 0.0], [1.0, 1.0], [1.0, 0.0], [0.0, 1.0]];
        let path = nearest_neighbour_two_opt(&square, 0);
        assert!((path_length(&square, &path) - 3.0).abs() < 1e-12, "{path:?}");
        let v1 = TspConfig::by_id("TSP-v1").unwrap();
        let negated = TspConfig { negate_distance: true, ..v1.clone() };
        let lengths = reference_returns(&negated, 8, 2);
        let random = rollout(&negated, 8, 2, &mut |env, _, _| {
            (0..env.num_envs()).map(|i| (0..50).find(|&m| env.episode(i).visits[m] == 0).unwrap_or(0) as f32).collect()
        });
        let (ours, in_order): (f64, f64) = (lengths.iter().sum(), random.iter().sum());
        assert!(ours > in_order, "2-opt {ours} vs visiting in index order {in_order}");
    }
}
