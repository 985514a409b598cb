//! Partition crossover of two tours (Whitley, Hains and Howe, "Tunneling between optima:
//! partition crossover for the traveling salesman problem", GECCO 2009), with the feasibility
//! test of Tinós, Whitley and Ochoa's GPX2 (2018).
//!
//! Take the union of the two tours' edges and drop the edges they share; the cities joined by
//! the remaining edges fall into components. A maximal path of shared edges whose two ends lie in
//! the same component belongs to that component (this is what makes the double bridge, the
//! difference a segment exchange leaves, one component and not three). Each tour crosses a
//! component as one or more paths between its entries; where both tours pair the entries alike
//! (always so with two entries, GPX's own case), either tour's paths can stand in for the
//! other's. The child takes, in every such component, the shorter of the two, and the base tour
//! everywhere else, so it is never longer than the base.

use super::Distances;
use petgraph::unionfind::UnionFind;

/// The child of `base` and `other` (two tours over the same cities): `base` with every feasible
/// component whose path in `other` is shorter taken from `other`, and how much shorter the child
/// is than `base`; None when no component is shorter in `other`.
pub fn partition_crossover(base: &[u32], other: &[u32], d: &Distances) -> Option<(Vec<u32>, f64)> {
    let n = base.len();
    if n < 4 || other.len() != n {
        return None;
    }
    let links = |order: &[u32]| {
        let (mut next, mut prev) = (vec![0u32; n], vec![0u32; n]);
        for k in 0..n {
            let (a, b) = (order[k], order[(k + 1) % n]);
            next[a as usize] = b;
            prev[b as usize] = a;
        }
        (next, prev)
    };
    let ((next_a, prev_a), (next_b, prev_b)) = (links(base), links(other));
    // The edge (c, next_a[c]) of `base` is shared when `other` holds it in either direction.
    let shared_a = |c: u32| {
        let e = next_a[c as usize];
        next_b[c as usize] == e || prev_b[c as usize] == e
    };
    let shared_b = |c: u32| {
        let e = next_b[c as usize];
        next_a[c as usize] == e || prev_a[c as usize] == e
    };
    let mut components = UnionFind::<u32>::new(n);
    let mut portal = vec![false; n];
    for c in 0..n as u32 {
        if !shared_a(c) {
            components.union(c, next_a[c as usize]);
            portal[c as usize] = true;
            portal[next_a[c as usize] as usize] = true;
        }
        if !shared_b(c) {
            components.union(c, next_b[c as usize]);
        }
    }
    let first = (0..n).find(|&p| portal[base[p] as usize])?;
    // The shared paths in `base`'s order, from one portal to the next (positions of their ends).
    let mut paths = Vec::new();
    let mut k = first;
    loop {
        let mut end = (k + 1) % n;
        if shared_a(base[k]) {
            while !portal[base[end] as usize] {
                end = (end + 1) % n;
            }
            paths.push((k, end));
        }
        k = end;
        if k == first {
            break;
        }
    }
    // A path whose ends lie in one component joins it (only its non-portal cities, so no two
    // components merge).
    for &(from, to) in &paths {
        if components.equiv(base[from], base[to]) {
            let mut inner = (from + 1) % n;
            while inner != to {
                components.union(base[from], base[inner]);
                inner = (inner + 1) % n;
            }
        }
    }
    let mut has_portal = vec![false; n];
    for c in 0..n as u32 {
        if portal[c as usize] {
            has_portal[components.find(c) as usize] = true;
        }
    }
    // Each component's length in either tour: its unshared edges (its inner shared paths are
    // in both).
    let (mut length_a, mut length_b) = (vec![0.0f64; n], vec![0.0f64; n]);
    for c in 0..n as u32 {
        if !shared_a(c) {
            length_a[components.find(c) as usize] += d.get(c, next_a[c as usize]);
        }
        if !shared_b(c) {
            length_b[components.find(c) as usize] += d.get(c, next_b[c as usize]);
        }
    }
    // Feasible: both tours join the component's entries in the same pairs (each run of the
    // component's cities along a tour is a path between two entries); then the other tour's
    // paths can replace the base's and the child stays one cycle.
    let label: Vec<Option<u32>> = (0..n as u32)
        .map(|c| {
            let root = components.find(c);
            has_portal[root as usize].then_some(root)
        })
        .collect();
    let pairs = |order: &[u32]| {
        let mut pairs = Vec::new();
        // A position where a run starts (none: one component holds every city).
        let Some(start) = (0..n).find(|&p| label[order[p] as usize] != label[order[(p + n - 1) % n] as usize]) else {
            return pairs;
        };
        let mut p = start;
        for _ in 0..n {
            let c = order[p];
            let q = (p + 1) % n;
            if let Some(root) = label[c as usize] {
                if label[order[(p + n - 1) % n] as usize] != Some(root) {
                    let mut end = p;
                    while label[order[(end + 1) % n] as usize] == Some(root) {
                        end = (end + 1) % n;
                    }
                    let (u, v) = (c, order[end]);
                    pairs.push((root, u.min(v), u.max(v)));
                }
            }
            p = q;
            if p == start {
                break;
            }
        }
        pairs.sort_unstable();
        pairs
    };
    let (pairs_a, pairs_b) = (pairs(base), pairs(other));
    if pairs_a.len() != pairs_b.len() {
        return None;
    }
    // A component's root: feasible until a pair differs.
    let mut feasible = has_portal;
    for (x, y) in pairs_a.iter().zip(&pairs_b) {
        if x != y {
            feasible[x.0 as usize] = false;
            feasible[y.0 as usize] = false;
        }
    }
    let taken: Vec<bool> = (0..n).map(|r| feasible[r] && length_b[r] < length_a[r] - 1e-7).collect();
    let gain: f64 = (0..n).filter(|&r| taken[r]).map(|r| length_a[r] - length_b[r]).sum();
    if gain <= 0.0 {
        return None;
    }
    let neighbours = |c: u32| {
        if taken[components.find(c) as usize] {
            (prev_b[c as usize], next_b[c as usize])
        } else {
            (prev_a[c as usize], next_a[c as usize])
        }
    };
    let mut child = Vec::with_capacity(n);
    let (mut previous, mut at) = (base[0], neighbours(base[0]).1);
    child.push(base[0]);
    while at != base[0] && child.len() < n {
        child.push(at);
        let (p, q) = neighbours(at);
        let step = if p == previous { q } else { p };
        (previous, at) = (at, step);
    }
    // A feasible component keeps the child one cycle; this check keeps a defect from ever
    // returning a partial tour.
    (child.len() == n && at == base[0]).then_some((child, gain))
}

#[cfg(test)]
mod tests {
    use super::super::tour::{is_permutation, tour_length};
    use super::super::Metric;
    use super::*;
    use rand::seq::SliceRandom;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// `n` random cities in a square of side `side` and a random tour through them.
    fn random_tour(rng: &mut Xoshiro256PlusPlus, n: usize, side: f64, metric: Metric) -> (Distances, Vec<u32>) {
        let xy: Vec<(f64, f64)> = (0..n).map(|_| (rng.gen_range(0.0..side), rng.gen_range(0.0..side))).collect();
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.shuffle(rng);
        (Distances::Coordinates { xy, metric }, order)
    }

    /// `order` with the adjacent segments of `first` and `second` cities after position `at`
    /// exchanged (the search's kick).
    fn exchange(order: &[u32], at: usize, first: usize, second: usize) -> Vec<u32> {
        let n = order.len();
        let mut out = order.to_vec();
        let segment: Vec<u32> = (1..=first + second).map(|k| order[(at + k) % n]).collect();
        for (k, &c) in segment[first..].iter().chain(&segment[..first]).enumerate() {
            out[(at + k + 1) % n] = c;
        }
        out
    }

    #[test]
    fn two_segment_exchanges_apart_are_two_components_and_the_child_takes_the_shorter_side_of_each() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let mut taken = 0;
        for trial in 0..100 {
            let n = rng.gen_range(40..200);
            let (d, order) = random_tour(&mut rng, n, 1e3, Metric::Euc2d);
            let half = n / 2;
            let a = exchange(&order, rng.gen_range(0..half - 12), rng.gen_range(1..5), rng.gen_range(1..5));
            let b = exchange(&order, half + rng.gen_range(0..half - 12), rng.gen_range(1..5), rng.gen_range(1..5));
            let (lo, la, lb) = (tour_length(&order, &d), tour_length(&a, &d), tour_length(&b, &d));
            // `a` differs from `order` in the first place only, `b` in the second only.
            let expected = lo + (la - lo).min(0.0) + (lb - lo).min(0.0);
            match partition_crossover(&a, &b, &d) {
                Some((child, gain)) => {
                    assert!(is_permutation(&child), "trial {trial}");
                    let lc = tour_length(&child, &d);
                    assert!((la - gain - lc).abs() < 1e-6, "trial {trial}: {la} - {gain} vs {lc}");
                    assert!((lc - expected).abs() < 1e-6, "trial {trial}: {lc} vs {expected}");
                    taken += 1;
                }
                None => assert!(expected >= la - 1e-6, "trial {trial}: {expected} < {la} was not found"),
            }
        }
        assert!(taken > 20, "{taken} of 100 pairs gave a child");
    }

    #[test]
    fn the_child_of_any_two_tours_is_a_tour_scored_exactly_and_no_longer_than_its_base() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        let mut taken = 0;
        for trial in 0..300 {
            let n = rng.gen_range(4..60);
            let (d, a) = random_tour(&mut rng, n, 1e2, Metric::Euclidean);
            // `b`: `a` with a few random reversals (most edges shared) or a random tour.
            let mut b = a.clone();
            if trial % 3 == 0 {
                b.shuffle(&mut rng);
            } else {
                for _ in 0..rng.gen_range(1..4) {
                    let (i, j) = (rng.gen_range(0..n), rng.gen_range(0..n));
                    b[i.min(j)..=i.max(j)].reverse();
                }
            }
            if let Some((child, gain)) = partition_crossover(&a, &b, &d) {
                assert!(is_permutation(&child), "trial {trial}");
                let (la, lc) = (tour_length(&a, &d), tour_length(&child, &d));
                assert!(gain > 0.0 && (la - gain - lc).abs() < 1e-6, "trial {trial}: {la} - {gain} vs {lc}");
                taken += 1;
            }
        }
        assert!(taken > 30, "{taken} of 300 pairs gave a child");
    }

    #[test]
    fn the_same_tour_in_either_direction_gives_no_child() {
        let xy: Vec<(f64, f64)> = (0..30).map(|k| ((k * 7 % 30) as f64, (k * 11 % 30) as f64)).collect();
        let d = Distances::Coordinates { xy, metric: Metric::Euclidean };
        let a: Vec<u32> = (0..30).collect();
        let mut b = a.clone();
        b.reverse();
        b.rotate_left(7);
        assert!(partition_crossover(&a, &a, &d).is_none());
        assert!(partition_crossover(&a, &b, &d).is_none());
    }
}
