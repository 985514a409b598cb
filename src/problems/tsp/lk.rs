//! Lin-Kernighan moves on the array tour (S. Lin and B. W. Kernighan, "An effective heuristic
//! algorithm for the traveling-salesman problem", Operations Research 21, 1973), in the form of
//! Johnson and McGeoch's implementation ("The traveling salesman problem: a case study in local
//! optimization", 1997, section 3.3): a sequential move built as a chain of 2-opt moves that are
//! applied as it grows.
//!
//! With t1 fixed and t2 its successor, a step removes the edge (t1, t2), adds (t2, t3) for a
//! candidate t3 of t2, removes (t4, t3) for t4 the predecessor of t3 and closes the tour with
//! (t4, t1): the path t2..t4 reverses. G, the removed lengths less the added ones before the
//! closing edge, must stay positive after each added edge (the gain criterion, Lin and Kernighan's
//! step 4(c)); the closing edge is removed again by the next step, with t4 as the new t2. Of the
//! chain's prefixes the one with the largest closed gain is kept; none that gains, and the chain
//! is undone. The first `BREADTH.len()` steps try several t3 in order of the lookahead
//! d(t3, t4) - d(t2, t3) (Mak and Morton; LKH's (5, 5, 3, 2, 1)-style backtracking), deeper ones
//! only the best. An edge added is never removed in the same chain.

use super::tour::Tour;
use super::Distances;

/// Alternatives tried for t3 at the chain's first steps; one beyond. With `MAX_DEPTH`, chosen at
/// 10 s on pr1002 and two random instances (2,000 uniform and 3,000 clustered cities), seeds 0-2:
/// (5, 3) to depth 12 ran twice the kicks of (5, 3, 2) to depth 50 and gave tours as short or
/// shorter; (5) to depth 6 ran four times the kicks and gave longer tours on all three.
const BREADTH: [usize; 2] = [5, 3];
/// BREADTH never grows with depth: its first entry bounds the options kept.
const MAX_BREADTH: usize = BREADTH[0];
/// Steps in one chain at most.
const MAX_DEPTH: usize = 12;

/// Each city's candidates with their distances (the lists `lin_kernighan` takes).
pub fn with_lengths(candidates: &[Vec<u32>], d: &Distances) -> Vec<Vec<(u32, f64)>> {
    candidates.iter().enumerate().map(|(a, list)| list.iter().map(|&b| (b, d.get(a as u32, b))).collect()).collect()
}

/// One applied step, to undo it or to mark its cities.
#[derive(Clone, Copy)]
struct Step {
    t2: u32,
    t3: u32,
    t4: u32,
}

struct Chain<'a> {
    d: &'a Distances,
    candidates: &'a [Vec<(u32, f64)>],
    t1: u32,
    steps: Vec<Step>,
}

impl Tour {
    /// Successor of `c` in the orientation in which `t2` follows `t1`.
    fn succ(&self, c: u32, forward: bool) -> u32 {
        if forward {
            self.next(c)
        } else {
            self.prev(c)
        }
    }

    /// Reverses the path t2..t4 that follows t1 (in either orientation): t1 t2 .. t4 t3 becomes
    /// t1 t4 .. t2 t3.
    fn flip_after(&mut self, t1: u32, t2: u32, t4: u32) {
        if self.next(t1) == t2 {
            self.reverse(t2, t4);
        } else {
            self.reverse(t4, t2);
        }
    }

    /// The best Lin-Kernighan move from `t1` over either of its tour edges, applied; its cities
    /// are marked for the local search's queue.
    pub fn lin_kernighan(&mut self, t1: u32, d: &Distances, candidates: &[Vec<(u32, f64)>]) -> bool {
        for t2 in [self.next(t1), self.prev(t1)] {
            let mut chain = Chain { d, candidates, t1, steps: Vec::new() };
            if let Some(gain) = chain.extend(self, t2, d.get(t1, t2), 0, 1e-9) {
                self.length -= gain;
                self.mark(t1);
                for s in chain.steps {
                    for c in [s.t2, s.t3, s.t4] {
                        self.mark(c);
                    }
                }
                return true;
            }
        }
        false
    }
}

impl Chain<'_> {
    /// Extends the chain from `t2` (the successor of t1 now) with gain `g` so far; returns the
    /// best closed gain of this step or a deeper one when it exceeds `floor`, the tour left
    /// there, or None with the tour as it was.
    fn extend(&mut self, tour: &mut Tour, t2: u32, g: f64, depth: usize, floor: f64) -> Option<f64> {
        if depth >= MAX_DEPTH {
            return None;
        }
        let (d, t1) = (self.d, self.t1);
        let forward = tour.next(t1) == t2;
        // The `breadth` best options by lookahead, best first (ties: the lower t3), on the stack.
        let breadth = BREADTH.get(depth).copied().unwrap_or(1);
        let mut options = [(0.0f64, 0u32, 0u32); MAX_BREADTH];
        let mut count = 0;
        for &(t3, d23) in &self.candidates[t2 as usize] {
            let g1 = g - d23;
            if g1 <= 1e-9 {
                continue;
            }
            if t3 == t1 || t3 == tour.succ(t2, forward) {
                continue;
            }
            let t4 = tour.succ(t3, !forward);
            if t4 == t2 || self.added(t3, t4) {
                continue;
            }
            let option = (d.get(t3, t4) - d23, t3, t4);
            let before = |a: &(f64, u32, u32), b: &(f64, u32, u32)| a.0 > b.0 || (a.0 == b.0 && a.1 < b.1);
            let mut at = count.min(breadth);
            while at > 0 && before(&option, &options[at - 1]) {
                if at < breadth {
                    options[at] = options[at - 1];
                }
                at -= 1;
            }
            if at < breadth {
                options[at] = option;
                count = (count + 1).min(breadth);
            }
        }
        for &(lookahead, t3, t4) in &options[..count] {
            // g - d(t2, t3) + d(t3, t4)
            let g2 = g + lookahead;
            tour.flip_after(t1, t2, t4);
            self.steps.push(Step { t2, t3, t4 });
            let closed = g2 - d.get(t4, t1);
            if let Some(gain) = self.extend(tour, t4, g2, depth + 1, floor.max(closed)) {
                return Some(gain);
            }
            if closed > floor {
                return Some(closed);
            }
            self.steps.pop();
            tour.flip_after(t1, t4, t2);
        }
        None
    }

    /// Whether (a, b) is an edge this chain added: (t2, t3) of an earlier step.
    fn added(&self, a: u32, b: u32) -> bool {
        self.steps.iter().any(|s| (s.t2 == a && s.t3 == b) || (s.t2 == b && s.t3 == a))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tour::tour_length;
    use super::super::{Distances, Metric};
    use super::*;
    use rand::seq::SliceRandom;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn moves_keep_a_permutation_and_the_tracked_length_and_never_lengthen() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        for trial in 0..20 {
            let n = rng.gen_range(8..300);
            let xy: Vec<(f64, f64)> = (0..n).map(|_| (rng.gen_range(0.0..1e3), rng.gen_range(0.0..1e3))).collect();
            let d = Distances::Coordinates { xy, metric: Metric::Euclidean };
            // Every other city as a candidate list of 5 random others.
            let candidates: Vec<Vec<u32>> = (0..n as u32)
                .map(|i| {
                    let mut list = Vec::new();
                    while list.len() < 5 {
                        let j = rng.gen_range(0..n as u32);
                        if j != i && !list.contains(&j) {
                            list.push(j);
                        }
                    }
                    list
                })
                .collect();
            let candidates = with_lengths(&candidates, &d);
            let mut order: Vec<u32> = (0..n as u32).collect();
            order.shuffle(&mut rng);
            let mut tour = Tour::new(order, &d);
            let start = tour.length;
            for _ in 0..3 * n {
                let before = tour.length;
                let t1 = rng.gen_range(0..n as u32);
                let moved = tour.lin_kernighan(t1, &d, &candidates);
                let exact = tour_length(&tour.order, &d);
                assert!((exact - tour.length).abs() < 1e-6 * exact, "trial {trial}: {exact} vs {}", tour.length);
                assert!(if moved { exact < before - 1e-9 } else { (exact - before).abs() < 1e-6 * exact });
                assert!(super::super::tour::is_permutation(&tour.order));
                assert!(tour.order.iter().enumerate().all(|(p, &c)| tour.position[c as usize] == p as u32));
            }
            assert!(tour.length < 0.7 * start, "trial {trial}: a random tour barely shortened");
        }
    }
}
