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
//! only the best. An edge added is never removed in the same chain. When no chain gains, the
//! first step may instead take t4 after t3 (`Chain::alternate`), a 3-opt move that 2-opt steps
//! reach only through a losing step.

use super::tour::Tour;
use super::Distances;

/// Alternatives tried for t3 at the chain's first steps; one beyond. With `MAX_DEPTH`, chosen at
/// 10 s on pr1002 and two random instances (2,000 uniform and 3,000 clustered cities), seeds 0-2:
/// (5, 3) to depth 12 ran twice the kicks of (5, 3, 2) to depth 50 and gave tours as short or
/// shorter; (5) to depth 6 ran four times the kicks and gave longer tours on all three. Checked
/// again with the kick window of 400 at 10 s, seeds 3-8, median (worst) % above the shortest
/// known tour of generated C3000, E2000 and a second C3000 (generator seed 1): (5, 3) to depth
/// 12 0.10 (0.25), 0.05 (0.08) and 0.16 (0.32); (5, 1) to depth 8, with 2.1 times the kicks,
/// 0.15 (0.33), 0.07 (0.09) and 0.31 (0.43); (3, 2) to depth 12 0.11 (0.17) and 0.05 (0.07) on
/// the first two. The same (5, 3) search with 30 s reached 0.06 (0.11) on C3000: time, not
/// breadth, is what the clustered instance lacks.
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
    /// Edges added by a first step that is a 3-opt move (`alternate`), never removed after.
    fixed: Option<[(u32, u32); 2]>,
}

/// A first step whose t4 follows t3 (`Chain::alternate`): t5 and t6 close the cycle it cuts off.
#[derive(Clone, Copy)]
struct Alternate {
    t3: u32,
    t4: u32,
    t5: u32,
    t6: u32,
    /// The gain before the closing edge (t6, t1).
    g3: f64,
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
            let mut chain = Chain::new(d, candidates, t1);
            let g = d.get(t1, t2);
            let found = match chain.extend(self, t2, g, 0, 1e-9) {
                Some(gain) => Some((gain, None)),
                None => chain.alternate(self, t2, g).map(|(gain, cities)| (gain, Some(cities))),
            };
            if let Some((gain, first)) = found {
                self.length -= gain;
                self.mark(t1);
                for c in first.into_iter().flatten() {
                    self.mark(c);
                }
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

impl<'a> Chain<'a> {
    fn new(d: &'a Distances, candidates: &'a [Vec<(u32, f64)>], t1: u32) -> Self {
        Chain { d, candidates, t1, steps: Vec::new(), fixed: None }
    }

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

    /// Whether (a, b) is an edge this chain added: (t2, t3) of an earlier step, or one of an
    /// alternate first step's.
    fn added(&self, a: u32, b: u32) -> bool {
        let edge = |(x, y): (u32, u32)| (x == a && y == b) || (x == b && y == a);
        self.fixed.iter().flatten().any(|&e| edge(e)) || self.steps.iter().any(|s| edge((s.t2, s.t3)))
    }

    /// Lin and Kernighan's alternate first step (their step 6(b); Johnson and McGeoch's LK
    /// takes it at the first level only): t4 the successor of t3, so that removing (t3, t4) cuts
    /// off the cycle t2..t3; t5, a candidate of t4 on that cycle, and t6, either of t5's
    /// neighbours there, join it back. The 3-opt move either swaps the segments t2..t5 and
    /// t6..t3 (t6 after t5) or reverses both in place (t6 before t5): the segment insertions
    /// that a chain of 2-opt steps reaches only through a losing step. The option of largest gain
    /// before the closing edge (t6, t1) is closed there or extended by plain steps from t6.
    /// Returns the gain and the six cities, the tour left there, or None with the tour as it was.
    ///
    /// One option, not the best three in turn: at 10 s on generated C3000 (seeds 3-8, kicks in a
    /// window of 50) one gave tours 0.24% (worst 0.27%) above LKH-3's, three 0.27% (0.32%; each
    /// try that fails costs its flips and a deeper search) and none 0.30% (0.43%); on E2000 the
    /// three medians were within 0.01% of each other (worsts 0.17-0.23%); on pr1002 (seeds 0-2)
    /// one reached the optimum on every seed, three missed it on one. Taken also deeper in the
    /// chain (at depth 1, or depths 1-2, where no 2-opt step gains; with the window of 400, the
    /// instances and seeds of `BREADTH`'s check) it gave 0.11 (0.15) and 0.11 (0.19) on C3000,
    /// 0.04 (0.09) and 0.04 (0.07) on E2000, 0.19 (0.23) and 0.13 (0.18) on the second C3000:
    /// within the seeds' spread, at about 2% fewer kicks (C3000 seed 3, two runs each: 88 rounds
    /// against 90), so the first step only.
    fn alternate(&mut self, tour: &mut Tour, t2: u32, g: f64) -> Option<(f64, [u32; 6])> {
        let (d, t1) = (self.d, self.t1);
        let forward = tour.next(t1) == t2;
        let n = tour.order.len();
        let from = tour.position[t2 as usize] as usize;
        // Steps from t2 along the orientation; the cut-off cycle is offsets 0..=offset(t3).
        let offset = |tour: &Tour, c: u32| {
            let at = tour.position[c as usize] as usize;
            if forward {
                (at + n - from) % n
            } else {
                (from + n - at) % n
            }
        };
        let mut best: Option<Alternate> = None;
        for &(t3, d23) in &self.candidates[t2 as usize] {
            let g1 = g - d23;
            let t4 = tour.succ(t3, forward);
            if g1 <= 1e-9 || t3 == t1 || t4 == t1 {
                continue;
            }
            let (span, d34) = (offset(tour, t3), d.get(t3, t4));
            for &(t5, d45) in &self.candidates[t4 as usize] {
                let g2 = g1 + d34 - d45;
                if g2 <= 1e-9 || t5 == t3 || offset(tour, t5) > span {
                    continue;
                }
                for t6 in [tour.succ(t5, forward), tour.succ(t5, !forward)] {
                    let g3 = g2 + d.get(t5, t6);
                    // Ties: the first found.
                    if t6 != t1 && offset(tour, t6) <= span && best.is_none_or(|b| g3 > b.g3) {
                        best = Some(Alternate { t3, t4, t5, t6, g3 });
                    }
                }
            }
        }
        let Alternate { t3, t4, t5, t6, g3 } = best?;
        // t1 [t2..t5][t6..t3] t4 becomes t1 [t6..t3][t2..t5] t4 (t6 after t5: the segments swap),
        // else t1 [t2..t6][t5..t3] t4 becomes t1 [t6..t2][t3..t5] t4; flip_after(a, b, c) is
        // undone by flip_after(a, c, b), the flips in reverse order.
        let flips: &[(u32, u32, u32)] = if t6 == tour.succ(t5, forward) {
            &[(t1, t2, t3), (t1, t3, t6), (t3, t5, t2)]
        } else {
            &[(t1, t2, t6), (t2, t5, t3)]
        };
        for &(a, b, c) in flips {
            tour.flip_after(a, b, c);
        }
        self.fixed = Some([(t2, t3), (t4, t5)]);
        let closed = g3 - d.get(t6, t1);
        if let Some(gain) = self.extend(tour, t6, g3, 1, closed.max(1e-9)) {
            return Some((gain, [t1, t2, t3, t4, t5, t6]));
        }
        if closed > 1e-9 {
            return Some((closed, [t1, t2, t3, t4, t5, t6]));
        }
        self.fixed = None;
        for &(a, b, c) in flips.iter().rev() {
            tour.flip_after(a, c, b);
        }
        None
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

    #[test]
    fn alternate_first_steps_gain_exactly_keep_their_added_edges_and_undo_cleanly() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        let (mut swaps, mut reversals) = (0, 0);
        for _ in 0..200 {
            let n = rng.gen_range(8..120);
            let xy: Vec<(f64, f64)> = (0..n).map(|_| (rng.gen_range(0.0..1e3), rng.gen_range(0.0..1e3))).collect();
            let d = Distances::Coordinates { xy, metric: Metric::Euclidean };
            let candidates: Vec<Vec<u32>> = (0..n as u32)
                .map(|i| {
                    let mut others: Vec<u32> = (0..n as u32).filter(|&j| j != i).collect();
                    others.sort_by(|&a, &b| d.get(i, a).total_cmp(&d.get(i, b)));
                    others.truncate(6);
                    others
                })
                .collect();
            let candidates = with_lengths(&candidates, &d);
            let mut order: Vec<u32> = (0..n as u32).collect();
            order.shuffle(&mut rng);
            let mut tour = Tour::new(order, &d);
            let t1 = rng.gen_range(0..n as u32);
            let t2 = if rng.gen() { tour.next(t1) } else { tour.prev(t1) };
            let (before, old) = (tour.length, tour.clone());
            let mut chain = Chain::new(&d, &candidates, t1);
            match chain.alternate(&mut tour, t2, d.get(t1, t2)) {
                None => assert_eq!(tour.order, old.order, "an alternate that gains nothing leaves the tour"),
                Some((gain, [_, _, t3, t4, t5, t6])) => {
                    assert!(super::super::tour::is_permutation(&tour.order));
                    let exact = tour_length(&tour.order, &d);
                    assert!(
                        gain > 0.0 && (before - gain - exact).abs() < 1e-6 * before,
                        "{before} - {gain} != {exact}"
                    );
                    let adjacent = |a: u32, b: u32| tour.next(a) == b || tour.prev(a) == b;
                    assert!(adjacent(t2, t3) && adjacent(t4, t5), "an added edge was removed");
                    let forward = old.next(t1) == t2;
                    assert_eq!(t4, old.succ(t3, forward), "t4 follows t3");
                    if t6 == old.succ(t5, forward) {
                        swaps += 1;
                    } else {
                        reversals += 1;
                    }
                }
            }
        }
        assert!(swaps > 0 && reversals > 0, "swaps {swaps}, reversals {reversals}");
    }
}
