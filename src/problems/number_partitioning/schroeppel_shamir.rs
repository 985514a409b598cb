//! The complete sweep of Schroeppel and Shamir ("A T = O(2^n/2), S = O(2^n/4) algorithm for
//! certain NP-complete problems", SIAM J. Comput. 10, 1981), the algorithm Korf, Schreiber and
//! Moffitt ("Optimal sequential multi-way number partitioning", ISAIM 2014) found fastest for
//! two-way partitioning of high-precision numbers, where CKK's tree has ~2^n nodes.
//!
//! The numbers are split into quarters A, B, C, D. Every subset sum is x + y with x from A + B
//! and y from C + D; a min-heap over A's sums walks A + B in increasing order and a max-heap over
//! C's walks C + D in decreasing order, each in O(2^(n/4)) memory, and the two streams meet as in
//! the two-pointer scan for the pair sum closest to a target: the scan sees, for every x, the y
//! on either side of the target, so it is complete after O(2^(n/2)) heap steps.
//!
//! The first number is fixed to side 1 (a partition and its mirror are the same), and the next
//! `log2(workers)` numbers are fixed per worker, so each core sweeps its own share. The workers
//! run freely; of the shares that reach the stop difference, the answer is the one a lockstep
//! sweep would meet first (see `Shared`), so it does not depend on which thread ran faster.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// The largest instance swept: quarters of at most 16 numbers keep masks in a `u32` and the
/// heaps at 2^16 entries; past it the sweep's 2^(n/2) steps outlast any time limit anyway.
pub const MAX_NUMBERS: usize = 66;

/// Heap steps between two looks at the clock, the cancel flag and the other workers' hits.
const CHECK_EVERY: u64 = 1 << 12;

pub struct Sweep {
    /// Each number's side (true = side 1).
    pub sides: Vec<bool>,
    pub difference: u128,
    /// Every partition was examined (so `difference` is optimal) or `stop_at` was reached.
    pub complete: bool,
    /// Shares swept in parallel (a power of two, at most the workers asked for).
    pub workers: usize,
}

/// What ends the sweep early, besides finishing it.
pub struct SweepLimits<'a> {
    pub deadline: Instant,
    /// Any difference at or below this ends the sweep (the parity optimum, or a target).
    pub stop_at: u128,
    pub cancelled: &'a (dyn Fn() -> bool + Sync),
    /// Called with every difference that improves on all workers' best so far.
    pub on_improvement: &'a (dyn Fn(u128) + Sync),
}

/// Subset sums of one quarter, ascending, with the subset as a mask over the quarter.
fn subset_sums<S: Sum>(values: &[S]) -> Vec<(S, u32)> {
    let mut sums = vec![(S::ZERO, 0u32)];
    for (bit, &v) in values.iter().enumerate() {
        let extended: Vec<(S, u32)> = sums.iter().map(|&(s, m)| (s + v, m | 1 << bit)).collect();
        sums.extend(extended);
    }
    sums.sort_unstable();
    sums
}

/// A subset sum: `u64` when the total fits (a narrower heap entry is faster), else `u128`.
trait Sum: Copy + Ord + std::ops::Add<Output = Self> + Send + Sync {
    const ZERO: Self;
    fn from_value(value: u128) -> Self;
    fn wide(self) -> i128;
}

impl Sum for u64 {
    const ZERO: Self = 0;
    fn from_value(value: u128) -> Self {
        value as u64
    }
    fn wide(self) -> i128 {
        self as i128
    }
}

impl Sum for u128 {
    const ZERO: Self = 0;
    fn from_value(value: u128) -> Self {
        value
    }
    fn wide(self) -> i128 {
        self as i128
    }
}

/// Pair sums of `small` + `large` in increasing order (or decreasing, `descending`), with a heap
/// over `small`'s entries.
struct PairStream<'a, S> {
    small: &'a [(S, u32)],
    large: &'a [(S, u32)],
    /// `small` is the second list given to `new` (so masks come back swapped).
    swapped: bool,
    descending: bool,
    up: BinaryHeap<Reverse<(S, u32, u32)>>,
    down: BinaryHeap<(S, u32, u32)>,
}

impl<'a, S: Sum> PairStream<'a, S> {
    fn new(a: &'a [(S, u32)], b: &'a [(S, u32)], descending: bool) -> Self {
        let swapped = a.len() > b.len();
        let (small, large) = if swapped { (b, a) } else { (a, b) };
        let mut stream =
            PairStream { small, large, swapped, descending, up: BinaryHeap::new(), down: BinaryHeap::new() };
        let last = (large.len() - 1) as u32;
        for (i, &(s, _)) in small.iter().enumerate() {
            if descending {
                stream.down.push((s + large[last as usize].0, i as u32, last));
            } else {
                stream.up.push(Reverse((s + large[0].0, i as u32, 0)));
            }
        }
        stream
    }

    /// The current pair: its sum and (index in small, index in large).
    fn current(&self) -> Option<(S, u32, u32)> {
        if self.descending {
            self.down.peek().copied()
        } else {
            self.up.peek().map(|r| r.0)
        }
    }

    fn advance(&mut self) {
        if self.descending {
            if let Some(mut top) = self.down.peek_mut() {
                let (_, i, j) = *top;
                if j == 0 {
                    std::collections::binary_heap::PeekMut::pop(top);
                } else {
                    *top = (self.small[i as usize].0 + self.large[j as usize - 1].0, i, j - 1);
                }
            }
        } else if let Some(mut top) = self.up.peek_mut() {
            let Reverse((_, i, j)) = *top;
            if j as usize + 1 == self.large.len() {
                std::collections::binary_heap::PeekMut::pop(top);
            } else {
                *top = Reverse((self.small[i as usize].0 + self.large[j as usize + 1].0, i, j + 1));
            }
        }
    }

    /// The masks behind a pair, as (mask over the first list given to `new`, over the second).
    fn masks(&self, i: u32, j: u32) -> (u32, u32) {
        let (s, l) = (self.small[i as usize].1, self.large[j as usize].1);
        if self.swapped {
            (l, s)
        } else {
            (s, l)
        }
    }
}

/// One worker's share: the fixed numbers' contribution and the four quarters of the rest.
struct Share<'a> {
    quarters: [&'a [usize]; 4],
    /// Sum of the numbers fixed to side 1 in this share.
    fixed_sum: u128,
    fixed_side_one: Vec<usize>,
}

struct WorkerBest {
    difference: u128,
    side_one: Vec<usize>,
    /// The key of its stop, if it reached the stop difference.
    hit: Option<u64>,
    finished: bool,
}

/// What the workers share. A worker that reaches the stop difference at its step s publishes
/// the key (s, its index); the answer is the hit with the least key, the one a lockstep sweep
/// would meet first, so it does not depend on which thread ran faster. A worker stops once its
/// own key passes the least published one (it can no longer win).
struct Shared<'a> {
    earliest_hit: AtomicU64,
    best: Mutex<u128>,
    limits: &'a SweepLimits<'a>,
}

fn hit_key(step: u64, index: usize) -> u64 {
    step << 7 | index as u64
}

fn sweep_share<S: Sum>(
    numbers: &[u128],
    total: u128,
    share: &Share<'_>,
    index: usize,
    shared: &Shared<'_>,
) -> WorkerBest {
    let values = |q: &[usize]| q.iter().map(|&i| S::from_value(numbers[i])).collect::<Vec<_>>();
    let lists: Vec<Vec<(S, u32)>> = share.quarters.iter().map(|q| subset_sums(&values(q))).collect();
    let mut rising = PairStream::new(&lists[0], &lists[1], false);
    let mut falling = PairStream::new(&lists[2], &lists[3], true);
    // Minimise |2 (fixed + x + y) - total| over x + y.
    let goal = total as i128 - 2 * share.fixed_sum as i128;
    let limits = shared.limits;
    let mut best: Option<(u128, [u32; 4])> = None;
    let mut hit = None;
    let mut finished = true;
    let mut step = 0u64;
    while let (Some((x, i, j)), Some((y, k, l))) = (rising.current(), falling.current()) {
        if step.is_multiple_of(CHECK_EVERY)
            && (hit_key(step, index) > shared.earliest_hit.load(Ordering::Relaxed)
                || Instant::now() >= limits.deadline
                || (limits.cancelled)())
        {
            finished = false;
            break;
        }
        let twice = 2 * (x + y).wide();
        let difference = (twice - goal).unsigned_abs();
        if best.is_none_or(|(d, _)| difference < d) {
            let (ma, mb) = rising.masks(i, j);
            let (mc, md) = falling.masks(k, l);
            best = Some((difference, [ma, mb, mc, md]));
            let mut global = shared.best.lock().expect("sweep best");
            if difference < *global {
                *global = difference;
                (limits.on_improvement)(difference);
            }
            if difference <= limits.stop_at {
                hit = Some(hit_key(step, index));
                shared.earliest_hit.fetch_min(hit_key(step, index), Ordering::Relaxed);
                break;
            }
        }
        if twice < goal {
            rising.advance();
        } else {
            falling.advance();
        }
        step += 1;
    }
    let (difference, masks) = best.expect("every stream has the empty pair");
    let mut side_one = share.fixed_side_one.clone();
    for (quarter, mask) in share.quarters.iter().zip(masks) {
        side_one.extend(quarter.iter().enumerate().filter(|(bit, _)| mask >> bit & 1 == 1).map(|(_, &i)| i));
    }
    WorkerBest { difference, side_one, hit, finished }
}

/// Sweep every partition of `numbers` (at most `MAX_NUMBERS`) on `workers` threads.
pub fn sweep(numbers: &[i64], workers: usize, limits: &SweepLimits<'_>) -> Sweep {
    let n = numbers.len();
    assert!((1..=MAX_NUMBERS).contains(&n), "the sweep takes 1..={MAX_NUMBERS} numbers");
    let values: Vec<u128> = numbers.iter().map(|&a| a as u128).collect();
    let total: u128 = values.iter().sum();
    // Fix the first number to side 1, then log2(workers) more per share.
    let fixed_bits = (workers.max(1).ilog2() as usize).min(n - 1);
    let rest: Vec<usize> = (1 + fixed_bits..n).collect();
    let quarter_len = |q: usize| rest.len() / 4 + usize::from(q < rest.len() % 4);
    let mut bounds = [0usize; 5];
    for q in 0..4 {
        // Quarters 0, 2 (the heaps' sides) get the shorter lengths: 0 and 1 form x, 2 and 3 y.
        bounds[q + 1] = bounds[q] + quarter_len([3, 1, 2, 0][q]);
    }
    let quarters: [&[usize]; 4] = std::array::from_fn(|q| &rest[bounds[q]..bounds[q + 1]]);
    let shares: Vec<Share<'_>> = (0..1usize << fixed_bits)
        .map(|choice| {
            let mut fixed_side_one = vec![0];
            fixed_side_one.extend((0..fixed_bits).filter(|b| choice >> b & 1 == 1).map(|b| 1 + b));
            let fixed_sum = fixed_side_one.iter().map(|&i| values[i]).sum();
            Share { quarters, fixed_sum, fixed_side_one }
        })
        .collect();
    let shared = Shared { earliest_hit: AtomicU64::new(u64::MAX), best: Mutex::new(u128::MAX), limits };
    let results: Vec<WorkerBest> = std::thread::scope(|scope| {
        let handles: Vec<_> = shares
            .iter()
            .enumerate()
            .map(|(index, share)| {
                let (values, shared) = (&values, &shared);
                scope.spawn(move || {
                    if total <= u64::MAX as u128 {
                        sweep_share::<u64>(values, total, share, index, shared)
                    } else {
                        sweep_share::<u128>(values, total, share, index, shared)
                    }
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("sweep worker")).collect()
    });
    // The earliest hit, else the best difference (the lowest share on ties).
    let chosen = (0..results.len())
        .filter(|&i| results[i].hit.is_some())
        .min_by_key(|&i| results[i].hit)
        .unwrap_or_else(|| (0..results.len()).min_by_key(|&i| (results[i].difference, i)).expect("a share"));
    let complete = results[chosen].hit.is_some() || results.iter().all(|r| r.finished);
    let mut sides = vec![false; n];
    results[chosen].side_one.iter().for_each(|&i| sides[i] = true);
    Sweep { sides, difference: results[chosen].difference, complete, workers: results.len() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute_force(numbers: &[i64]) -> u128 {
        let total: i128 = numbers.iter().map(|&a| a as i128).sum();
        (0..1u64 << numbers.len())
            .map(|m| {
                let s: i128 =
                    numbers.iter().enumerate().filter(|(i, _)| m >> i & 1 == 1).map(|(_, &a)| a as i128).sum();
                (2 * s - total).unsigned_abs()
            })
            .min()
            .unwrap()
    }

    fn never() -> bool {
        false
    }

    #[test]
    fn the_sweep_finds_the_enumerated_optimum_on_any_worker_count() {
        let limits = SweepLimits {
            deadline: Instant::now() + std::time::Duration::from_secs(60),
            stop_at: 0,
            cancelled: &never,
            on_improvement: &|_| {},
        };
        for (n, bits, seed) in [(1, 8, 0), (2, 8, 1), (5, 10, 2), (9, 20, 3), (14, 14, 4), (17, 30, 5), (18, 62, 6)] {
            let numbers = super::super::generate(n, bits, seed);
            let optimum = brute_force(&numbers);
            for workers in [1, 2, 4] {
                let sweep = sweep(&numbers, workers, &limits);
                let instance = super::super::PartitionInstance::new(numbers.clone());
                assert_eq!(instance.residue(&sweep.sides).unsigned_abs(), sweep.difference, "n={n} w={workers}");
                assert_eq!(sweep.difference, optimum, "n={n} seed={seed} workers={workers}");
                assert!(sweep.complete);
            }
        }
    }
}
