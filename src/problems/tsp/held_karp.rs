//! The Held-Karp lower bound on the shortest tour (M. Held and R. M. Karp, "The traveling-salesman
//! problem and minimum spanning trees", Operations Research 18, 1970, and part II, Mathematical
//! Programming 1, 1971). A 1-tree (a spanning tree of cities 1..n-1 plus city 0's two shortest
//! edges) is never longer than a tour; with a penalty pi_i added to every edge at city i,
//! L(pi) = (minimum 1-tree under d_ij + pi_i + pi_j) - 2 sum pi is still a lower bound for every pi,
//! since each tour uses two edges at each city. Subgradient steps pi += t (degree - 2), with
//! t = lambda (U - L(pi)) / ||degree - 2||^2 (Held, Wolfe & Crowder 1974), raise it; lambda halves
//! after `STALL` steps without a better bound. Each step is Prim's algorithm on the complete graph,
//! O(n^2) distance evaluations.

use super::Distances;
use crate::problems::subgradient::Ascent;
use std::time::Instant;

/// Steps without a better bound before lambda halves.
const STALL: usize = 20;
const MIN_LAMBDA: f64 = 1e-3;
const MAX_STEPS: usize = 1_000;

/// The minimum 1-tree under penalties `pi`: its penalised length and every city's degree.
fn one_tree(distances: &Distances, pi: &[f64], degree: &mut [u32]) -> f64 {
    let n = pi.len();
    let cost = |i: usize, j: usize| distances.get(i as u32, j as u32) + pi[i] + pi[j];
    degree.iter_mut().for_each(|d| *d = 0);
    // Prim on cities 1..n: `near[j]` is the tree city closest to j, `key[j]` that edge's cost.
    let mut in_tree = vec![false; n];
    let mut key = vec![f64::INFINITY; n];
    let mut near = vec![1usize; n];
    let mut length = 0.0;
    let mut current = 1;
    in_tree[1] = true;
    for _ in 2..n {
        let mut next = usize::MAX;
        for j in 2..n {
            if in_tree[j] {
                continue;
            }
            let c = cost(current, j);
            if c < key[j] {
                (key[j], near[j]) = (c, current);
            }
            if next == usize::MAX || key[j] < key[next] {
                next = j;
            }
        }
        in_tree[next] = true;
        length += key[next];
        degree[next] += 1;
        degree[near[next]] += 1;
        current = next;
    }
    // City 0's two cheapest edges close the 1-tree.
    let (mut first, mut second) = ((f64::INFINITY, 0), (f64::INFINITY, 0));
    for j in 1..n {
        let c = cost(0, j);
        if c < first.0 {
            (second, first) = (first, (c, j));
        } else if c < second.0 {
            second = (c, j);
        }
    }
    degree[0] = 2;
    degree[first.1] += 1;
    degree[second.1] += 1;
    length + first.0 + second.0
}

/// The best L(pi) found by `deadline` (at least one step runs) from the penalties `pi` (zeros, or
/// a sparse ascent's: `alpha`), given a tour of length `upper`.
pub fn lower_bound(distances: &Distances, upper: f64, deadline: Instant, mut pi: Vec<f64>) -> f64 {
    let n = distances.len();
    if n < 3 {
        return 0.0;
    }
    let mut degree = vec![0u32; n];
    let mut ascent = Ascent::new(STALL, MIN_LAMBDA);
    for _ in 0..MAX_STEPS {
        let bound = one_tree(distances, &pi, &mut degree) - 2.0 * pi.iter().sum::<f64>();
        let going = ascent.record(bound);
        let norm: f64 = degree.iter().map(|&d| (f64::from(d) - 2.0).powi(2)).sum();
        if norm == 0.0 || !going || ascent.best >= upper - 1e-9 || Instant::now() >= deadline {
            // A 1-tree with every degree 2 is a tour: the bound is its length.
            break;
        }
        let step = ascent.step(upper, bound, norm);
        for (p, &d) in pi.iter_mut().zip(&degree) {
            *p += step * (f64::from(d) - 2.0);
        }
    }
    ascent.best
}

#[cfg(test)]
mod tests {
    use super::super::Metric;
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;
    use std::time::Duration;

    /// The shortest tour by enumerating every order of cities 1..n after city 0.
    fn shortest(distances: &Distances) -> f64 {
        fn extend(d: &Distances, path: &mut Vec<u32>, left: &mut Vec<u32>, length: f64, best: &mut f64) {
            if left.is_empty() {
                *best = best.min(length + d.get(*path.last().unwrap(), 0));
                return;
            }
            for k in 0..left.len() {
                let city = left.remove(k);
                let step = d.get(*path.last().unwrap(), city);
                path.push(city);
                extend(d, path, left, length + step, best);
                path.pop();
                left.insert(k, city);
            }
        }
        let mut best = f64::INFINITY;
        let mut left: Vec<u32> = (1..distances.len() as u32).collect();
        extend(distances, &mut vec![0], &mut left, 0.0, &mut best);
        best
    }

    #[test]
    fn the_bound_is_below_the_enumerated_optimum_and_exact_on_a_convex_polygon() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let far = Instant::now() + Duration::from_secs(30);
        for trial in 0..30 {
            let n = rng.gen_range(4..9);
            let xy: Vec<(f64, f64)> = (0..n).map(|_| (rng.gen_range(0.0..100.0), rng.gen_range(0.0..100.0))).collect();
            let distances = Distances::Coordinates { xy, metric: Metric::Euclidean };
            let optimum = shortest(&distances);
            let bound = lower_bound(&distances, optimum * 1.3, far, vec![0.0; n]);
            assert!(bound <= optimum + 1e-6, "trial {trial}: {bound} > {optimum}");
            assert!(bound >= 0.7 * optimum, "trial {trial}: {bound} is far below {optimum}");
        }
        // On a convex polygon the hull is the optimal tour and the bound reaches it.
        let xy: Vec<(f64, f64)> =
            (0..9).map(|k| f64::from(k) * std::f64::consts::TAU / 9.0).map(|a| (a.cos(), a.sin())).collect();
        let distances = Distances::Coordinates { xy, metric: Metric::Euclidean };
        let optimum = shortest(&distances);
        assert!((lower_bound(&distances, optimum * 1.2, far, vec![0.0; 9]) - optimum).abs() < 1e-3 * optimum);
    }
}
