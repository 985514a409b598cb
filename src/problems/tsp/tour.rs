//! A tour as an array (`order`, with each city's position in `position`) and its local search:
//! Lin-Kernighan moves (`lk`), Or-opt (a segment of 1 to 3 cities moved, possibly reversed, next
//! to one of its ends' near neighbours) and plain 2-opt, all over candidate lists and driven by a
//! queue of "dirty" cities (Bentley's don't-look bits: a city is looked at again only when an edge
//! at it changed). A reversal reverses the shorter side of the tour, so it costs at most n/2 swaps.

use super::Distances;
use std::collections::VecDeque;

#[derive(Debug, Clone)]
pub struct Tour {
    pub order: Vec<u32>,
    pub position: Vec<u32>,
    pub length: f64,
    queue: VecDeque<u32>,
    queued: Vec<bool>,
}

impl Tour {
    pub fn new(order: Vec<u32>, d: &Distances) -> Self {
        let n = order.len();
        let mut position = vec![0u32; n];
        for (p, &c) in order.iter().enumerate() {
            position[c as usize] = p as u32;
        }
        let length = tour_length(&order, d);
        Tour { order, position, length, queue: VecDeque::new(), queued: vec![false; n] }
    }

    fn n(&self) -> usize {
        self.order.len()
    }

    pub fn next(&self, c: u32) -> u32 {
        let p = self.position[c as usize] as usize + 1;
        self.order[if p == self.n() { 0 } else { p }]
    }

    pub fn prev(&self, c: u32) -> u32 {
        let p = self.position[c as usize] as usize;
        self.order[if p == 0 { self.n() - 1 } else { p - 1 }]
    }

    pub fn mark(&mut self, c: u32) {
        if !self.queued[c as usize] {
            self.queued[c as usize] = true;
            self.queue.push_back(c);
        }
    }

    pub fn mark_all(&mut self) {
        for c in 0..self.n() as u32 {
            self.mark(c);
        }
    }

    fn swap_positions(&mut self, i: usize, j: usize) {
        self.order.swap(i, j);
        self.position[self.order[i] as usize] = i as u32;
        self.position[self.order[j] as usize] = j as u32;
    }

    /// Reverses the path from city `from` forward to city `to` (inclusive); when that path is
    /// over half the tour, reverses the rest instead (the same cyclic tour, mirrored).
    ///
    /// A third of the search's time on 3,000 cities (`perf`, generated C3000 at 10 s, seed 3 alone):
    /// about 1,500 reversals per kick, most of them Lin-Kernighan's trial steps and their undoing,
    /// of 61 cities on average, so a two-level list (O(sqrt n) per reversal) would gain little at
    /// this size. A slice reversal and a pass over the positions instead of the swap loop ran 6%
    /// fewer kicks in 10 s (same seed, two runs each: 85 rounds against 90). Trial steps kept
    /// as pending position ranges instead of reversals (each query mapped through them) found
    /// the same moves and ran fewer kicks still (C3000 seed 3, two runs each: 68 and 63 rounds
    /// against 84 and 80): at 61 cities a reversal and its undoing cost no more than the queries.
    pub fn reverse(&mut self, from: u32, to: u32) {
        let n = self.n();
        let (mut i, mut j) = (self.position[from as usize] as usize, self.position[to as usize] as usize);
        let mut len = (j + n - i) % n + 1;
        if 2 * len > n {
            let (a, b) = (self.next(to), self.prev(from));
            i = self.position[a as usize] as usize;
            j = self.position[b as usize] as usize;
            len = n - len;
        }
        for _ in 0..len / 2 {
            self.swap_positions(i, j);
            i = if i + 1 == n { 0 } else { i + 1 };
            j = if j == 0 { n - 1 } else { j - 1 };
        }
    }

    /// Runs local search until no queued city has an improving move: with `candidates`,
    /// Lin-Kernighan moves over them (`lk`) and Or-opt moves; without, 2-opt moves only.
    pub fn optimize(&mut self, d: &Distances, neighbours: &[Vec<u32>], candidates: Option<&[Vec<(u32, f64)>]>) {
        while let Some(a) = self.queue.pop_front() {
            self.queued[a as usize] = false;
            if self.n() < 5 {
                continue;
            }
            let improved = match candidates {
                Some(candidates) => self.lin_kernighan(a, d, candidates) || self.or_opt(a, d, neighbours),
                None => self.two_opt(a, d, neighbours),
            };
            if improved {
                self.mark(a);
            }
        }
    }

    /// The best improving 2-opt at `a`'s two tour edges, applied.
    fn two_opt(&mut self, a: u32, d: &Distances, neighbours: &[Vec<u32>]) -> bool {
        for forward in [true, false] {
            let b = if forward { self.next(a) } else { self.prev(a) };
            let ab = d.get(a, b);
            let mut best: Option<(f64, u32, u32)> = None;
            for &c in &neighbours[a as usize] {
                let ac = d.get(a, c);
                if ac >= ab {
                    break;
                }
                let e = if forward { self.next(c) } else { self.prev(c) };
                if c == b || e == a {
                    continue;
                }
                let delta = ac + d.get(b, e) - ab - d.get(c, e);
                if delta < -1e-9 && best.is_none_or(|(bd, _, _)| delta < bd) {
                    best = Some((delta, c, e));
                }
            }
            if let Some((delta, c, e)) = best {
                // forward: a b ... c e -> a c ... b e; backward: e c ... b a -> e b ... c a.
                if forward {
                    self.reverse(b, c);
                } else {
                    self.reverse(c, b);
                }
                self.length += delta;
                for x in [a, b, c, e] {
                    self.mark(x);
                }
                return true;
            }
        }
        false
    }

    /// The best improving move of a segment of 1-3 cities starting or ending at `a`, inserted
    /// between a near neighbour of one of its ends and that neighbour's tour successor or
    /// predecessor, in either orientation; applied.
    fn or_opt(&mut self, a: u32, d: &Distances, neighbours: &[Vec<u32>]) -> bool {
        let n = self.n();
        let mut best: Option<(f64, Vec<u32>, u32, u32)> = None;
        for len in 1..=3usize.min(n - 3) {
            for starts_at_a in [true, false] {
                // The segment s1..s2 in tour order.
                let mut seg = vec![a];
                for _ in 1..len {
                    let last = *seg.last().expect("a city");
                    let more = if starts_at_a { self.next(last) } else { self.prev(last) };
                    seg.push(more);
                }
                if !starts_at_a {
                    seg.reverse();
                }
                let (s1, s2) = (seg[0], seg[len - 1]);
                let (p, q) = (self.prev(s1), self.next(s2));
                let removed = d.get(p, s1) + d.get(s2, q) - d.get(p, q);
                for &end in &[s1, s2] {
                    for &c in &neighbours[end as usize] {
                        let gain_bound = d.get(end, c);
                        if gain_bound >= removed {
                            break;
                        }
                        if seg.contains(&c) {
                            continue;
                        }
                        for e in [self.next(c), self.prev(c)] {
                            if seg.contains(&e) {
                                continue;
                            }
                            // Insert between c and e with `end` next to c.
                            let other = if end == s1 { s2 } else { s1 };
                            let added = d.get(c, end) + d.get(other, e) - d.get(c, e);
                            let delta = added - removed;
                            if delta < -1e-9 && best.as_ref().is_none_or(|b| delta < b.0) {
                                // The segment as it will read from c to e.
                                let mut placed = seg.clone();
                                if end != s1 {
                                    placed.reverse();
                                }
                                best = Some((delta, placed, c, e));
                            }
                        }
                    }
                }
            }
        }
        let Some((delta, placed, c, e)) = best else { return false };
        // The old neighbours of the segment are joined: they are looked at again too.
        let (first, last) = (placed[0], placed[placed.len() - 1]);
        let joined = [self.prev(first), self.next(first), self.prev(last), self.next(last)];
        self.move_segment(&placed, c, e);
        self.length += delta;
        for x in joined.into_iter().chain([first, last, c, e]) {
            self.mark(x);
        }
        true
    }

    /// Removes the cities of `placed` and re-inserts them between the adjacent cities c and e,
    /// reading `placed` from c to e. Rebuilds the order in O(n).
    fn move_segment(&mut self, placed: &[u32], c: u32, e: u32) {
        let n = self.n();
        let mut moving = vec![false; n];
        placed.iter().for_each(|&x| moving[x as usize] = true);
        let start = self.position[c as usize] as usize;
        let forward = self.next(c) == e;
        let mut order = Vec::with_capacity(n);
        // Walk the tour from c in the direction of e, skipping the moved cities.
        let mut p = start;
        for _ in 0..n {
            let city = self.order[p];
            if !moving[city as usize] {
                order.push(city);
                if city == c {
                    order.extend_from_slice(placed);
                }
            }
            p = if forward { (p + 1) % n } else { (p + n - 1) % n };
        }
        self.order = order;
        for (p, &city) in self.order.iter().enumerate() {
            self.position[city as usize] = p as u32;
        }
    }
}

/// Whether `order` holds each of the cities 0..n once.
#[cfg(test)]
pub fn is_permutation(order: &[u32]) -> bool {
    let mut seen = order.to_vec();
    seen.sort_unstable();
    seen.iter().enumerate().all(|(k, &c)| c == k as u32)
}

/// The closed tour's length.
pub fn tour_length(order: &[u32], d: &Distances) -> f64 {
    let n = order.len();
    (0..n).map(|i| d.get(order[i], order[(i + 1) % n])).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problems::tsp::{Metric, Tsp};
    use rand::seq::SliceRandom;
    use rand::{Rng, SeedableRng};

    #[test]
    fn local_search_keeps_a_valid_tour_whose_tracked_length_is_exact_and_two_opt_optimal() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(9);
        for n in [5usize, 8, 60, 300] {
            let xy: Vec<(f64, f64)> =
                (0..n).map(|_| (rng.gen_range(0.0..1000.0), rng.gen_range(0.0..1000.0))).collect();
            let tsp = Tsp::new(Distances::Coordinates { xy, metric: Metric::Euc2d }, (0..n as i64).collect()).unwrap();
            let mut order: Vec<u32> = (0..n as u32).collect();
            order.shuffle(&mut rng);
            let mut tour = Tour::new(order, &tsp.distances);
            let start = tour.length;
            tour.mark_all();
            let candidates = super::super::lk::with_lengths(&tsp.neighbours, &tsp.distances);
            tour.optimize(&tsp.distances, &tsp.neighbours, Some(&candidates));
            assert!(is_permutation(&tour.order), "a permutation");
            for (p, &c) in tour.order.iter().enumerate() {
                assert_eq!(tour.position[c as usize] as usize, p);
            }
            let exact = tour_length(&tour.order, &tsp.distances);
            assert!((tour.length - exact).abs() < 1e-6, "n {n}: tracked {} vs {exact}", tour.length);
            assert!(exact <= start);
            // No improving 2-opt between any two edges (all pairs, not just the candidates) on the
            // small instances, where the 10 neighbours are nearly everyone.
            if n <= 8 {
                let d = &tsp.distances;
                for i in 0..n {
                    for j in i + 2..n {
                        let (a, b) = (tour.order[i], tour.order[i + 1]);
                        let (c, e) = (tour.order[j], tour.order[(j + 1) % n]);
                        if e == a {
                            continue;
                        }
                        assert!(d.get(a, c) + d.get(b, e) >= d.get(a, b) + d.get(c, e) - 1e-9, "n {n}: 2-opt left");
                    }
                }
            }
        }
    }
}
