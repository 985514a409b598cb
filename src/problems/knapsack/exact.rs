//! Exact 0/1 knapsack with one capacity and integer data, by Pisinger's expanding-core dynamic
//! programme (D. Pisinger, "A minimal algorithm for the 0-1 knapsack problem", Operations
//! Research 45(5), 1997). Items are ordered by profit/weight; the break solution packs every item
//! before the break item b. The enumerated core [s, t) starts at {b} and grows by one item on each
//! side per step (item t may join, item s - 1 may leave), each step merging the list of
//! (weight, profit) states with its shifted copy, dropping every state a lighter one dominates
//! and every state whose bound cannot beat the incumbent: for a state that fits, its profit plus
//! the free capacity at item t's ratio; for one that does not, its profit minus the excess at
//! item s - 1's ratio (the paper's bounds (12)-(13), Dantzig's bound applied to a state). When no
//! state is left open the incumbent is optimal; there is no n x W table, so the work follows the
//! core, not the capacity.
//!
//! Identical items (equal profit and weight) first become power-of-two bundles, 1, 2, 4, ... and
//! the remainder (the bounded-to-0/1 transformation, Martello and Toth 1990, section 3.2): every
//! count of copies is a sum of distinct bundles, so the optimum is unchanged, and a type with k
//! copies costs the core about log2(k) steps instead of k. Pisinger's spanner classes (11-13) are
//! 20 item types over 10,000 items, all of one of two ratios, so the bounds prune little inside a
//! ratio and, item by item, the core would walk the copies one at a time.
//!
//! Once the open states pass `HARD_STATES` the run adds the steps of Pisinger's combo (S. Martello,
//! D. Pisinger and P. Toth, "Dynamic programming and strong bounds for the 0-1 knapsack problem",
//! Management Science 45(3), 1999). Lower bounds: the best single exchange with the break solution
//! (one item in, one out, the rest filled by ratio), once, and every `PAIRING_STEPS` core steps
//! each open state paired with its best item outside the core; on the correlated classes at wide
//! coefficient ranges (p = w + R/10) these often fill the capacity exactly with the break
//! solution's item count. An upper bound, once: every solution holds at most k or at least k + 1
//! items, k the break solution's count; for each side the capacity and the count constraint are
//! merged into one surrogate constraint, sum (w_i + s n_i) x_i <= c + s k (at most k; n_i the
//! copies in bundle i) or sum (w_i - s n_i) x_i <= c - s (k + 1) (at least k + 1), whose Dantzig
//! bound is valid for every s >= 0; s is searched by bisection on the break count, and the bound is
//! the larger side's least value (Martello, Pisinger and Toth's surrogated cardinality bound; no
//! item count fits a side when the lightest copies or the most profitable ones rule it out). Each
//! side's surrogate problem at that s is then itself solved by this programme, within
//! `SURROGATE_STATES` states and a quarter of the time left: its bound replaces the side's Dantzig
//! bound, and its selection, where it fits the capacity, is an incumbent (almost strongly
//! correlated class at R = 100,000, 10,000 items, seeds 0-2: proven in 0.05 s median, 0.10 s worst,
//! with it, 1.4 and 4.5 s without; `rlsolver bench nphard --only knapsack-ranges`). The Dantzig
//! bound of a state stays about R/10 above the optimum there, so without it the lists end only by
//! exhaustion.

use std::time::Instant;

/// Trail nodes and open states kept at most (8 bytes of reconstruction trail each, 24 per list
/// entry): a full trail is compacted to the nodes that live states and the incumbent still reach,
/// and when that frees less than half of it, or the states alone reach the cap, the run stops
/// with the incumbent and its bound, unproven.
pub const MAX_STATES: usize = 1 << 24;

/// Open states past which the run takes combo's steps (the exchange, the pairings, the
/// cardinality bound and its surrogate problems; up to a quarter of the time left), so runs that
/// the core proves at once pay nothing for them.
const HARD_STATES: usize = 1 << 15;

/// Trail nodes and open states of a surrogate problem's run (6 MB of states): enough for the
/// surrogate problem to close where its bounds are tight, and a bounded cost where they are not.
const SURROGATE_STATES: usize = 1 << 18;

/// Core steps between two pairings of the open states with the items outside the core, once
/// the states have passed `HARD_STATES` (a sort of the outside items and a search per state).
const PAIRING_STEPS: usize = 8;

/// What the exact run found.
#[derive(Debug, Clone, PartialEq)]
pub struct ExactOutcome {
    /// The selection, in the instance's item order.
    pub x: Vec<bool>,
    pub value: u64,
    /// An upper bound on the optimum: `value` itself when `optimal`.
    pub bound: u64,
    pub optimal: bool,
    /// The state cap (`MAX_STATES`), not the deadline or the cancel flag, stopped the proof.
    pub capped: bool,
}

/// A partial solution of the enumerated core: its total weight and profit (the fixed items
/// included) and its trail node.
#[derive(Clone, Copy)]
struct State {
    weight: u64,
    profit: u64,
    node: u32,
}

/// A candidate state: `parent`'s node with `item` (a sorted position) toggled, or no toggle.
#[derive(Clone, Copy)]
struct Candidate {
    weight: u64,
    profit: u64,
    parent: u32,
    item: Option<u32>,
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// `a * b / c` rounded down, without overflow.
fn mul_div_floor(a: u64, b: u64, c: u64) -> u64 {
    (u128::from(a) * u128::from(b) / u128::from(c)) as u64
}

/// `a * b / c` rounded up.
fn mul_div_ceil(a: u64, b: u64, c: u64) -> u64 {
    (u128::from(a) * u128::from(b)).div_ceil(u128::from(c)) as u64
}

/// The optimum of `max sum p_i x_i, sum w_i x_i <= capacity`, or the best found by `deadline`
/// (or when `cancelled` says so) with a valid bound; `improved` hears every new incumbent value.
pub fn solve(
    profits: &[u64],
    weights: &[u64],
    capacity: u64,
    deadline: Instant,
    cancelled: &dyn Fn() -> bool,
    improved: &mut dyn FnMut(u64),
) -> ExactOutcome {
    let limits = Limits { max_states: MAX_STATES, hard_states: HARD_STATES, pairing_steps: PAIRING_STEPS };
    solve_within(profits, weights, capacity, deadline, cancelled, improved, limits)
}

/// The state counts that stop a run (`max_states`, trail nodes and open states) and that start
/// combo's steps (`hard_states`), and the core steps between two pairings (`pairing_steps`).
#[derive(Clone, Copy)]
struct Limits {
    max_states: usize,
    hard_states: usize,
    pairing_steps: usize,
}

/// `solve` within `limits`.
fn solve_within(
    profits: &[u64],
    weights: &[u64],
    capacity: u64,
    deadline: Instant,
    cancelled: &dyn Fn() -> bool,
    improved: &mut dyn FnMut(u64),
    limits: Limits,
) -> ExactOutcome {
    let Limits { max_states, hard_states, pairing_steps } = limits;
    let n = profits.len();
    let mut x = vec![false; n];
    // Weightless items always go in; items heavier than the capacity never do.
    let mut base_profit = 0u64;
    let mut kept: Vec<usize> = Vec::with_capacity(n);
    for i in 0..n {
        if weights[i] == 0 {
            x[i] = true;
            base_profit += profits[i];
        } else if weights[i] <= capacity && profits[i] > 0 {
            kept.push(i);
        }
    }
    let mut order = bundles(&kept, profits, weights, capacity);
    // By ratio, best first (cross-multiplied, exact), ties by first item for a deterministic order.
    order.sort_by(|a, b| {
        (u128::from(b.profit) * u128::from(a.weight))
            .cmp(&(u128::from(a.profit) * u128::from(b.weight)))
            .then(a.items[0].cmp(&b.items[0]))
    });
    let (p, w): (Vec<u64>, Vec<u64>) = order.iter().map(|bundle| (bundle.profit, bundle.weight)).unzip();
    let copies: Vec<u64> = order.iter().map(|bundle| bundle.items.len() as u64).collect();
    // Positions by weight, for the exchange and the pairings.
    let mut by_weight: Vec<usize> = (0..order.len()).collect();
    by_weight.sort_by_key(|&i| (w[i], i));
    let m = order.len();
    let (mut break_weight, mut break_profit, mut b) = (0u64, base_profit, 0);
    while b < m && break_weight + w[b] <= capacity {
        break_weight += w[b];
        break_profit += p[b];
        b += 1;
    }
    let finish = |chosen: &[bool], value: u64, bound: u64, capped: bool, x: &mut Vec<bool>| {
        for (bundle, &on) in order.iter().zip(chosen) {
            for &i in &bundle.items {
                x[i] = on;
            }
        }
        ExactOutcome { x: x.clone(), value, bound, optimal: value == bound, capped: capped && value < bound }
    };
    if b == m {
        improved(break_profit);
        return finish(&vec![true; m], break_profit, break_profit, false, &mut x);
    }
    // Every value is the weightless items' profit plus a multiple of the profits' greatest common
    // divisor, so a bound rounds down to the next such value (Pisinger's profit ceiling class
    // has every profit a multiple of 3).
    let step = p.iter().fold(0, |g, &pi| gcd(g, pi)).max(1);
    let round = |u: u64| if u < base_profit { u } else { u - (u - base_profit) % step };
    // Dantzig's bound: the break solution plus the free capacity at the break item's ratio.
    let dantzig = round(break_profit + mul_div_floor(capacity - break_weight, p[b], w[b]));
    // The incumbent: the break solution filled greedily past the break item.
    let mut incumbent = vec![false; m];
    incumbent[..b].iter_mut().for_each(|g| *g = true);
    let (mut load, mut best) = (break_weight, break_profit);
    for k in b..m {
        if load + w[k] <= capacity {
            incumbent[k] = true;
            load += w[k];
            best += p[k];
        }
    }
    improved(best);
    if best == dantzig {
        return finish(&incumbent, best, dantzig, false, &mut x);
    }
    // Trail of toggles: node k > 0 toggles `trail[k].1` relative to node `trail[k].0`; node 0 is the
    // break solution itself.
    let mut trail: Vec<(u32, u32)> = vec![(0, u32::MAX)];
    let mut best_node: Option<u32> = None;
    let mut states = vec![State { weight: break_weight, profit: break_profit, node: 0 }];
    let (mut s, mut t) = (b, b);
    let bound_of = |state: &State, s: usize, t: usize| -> Option<u64> {
        if state.weight <= capacity {
            Some(round(state.profit + if t < m { mul_div_floor(capacity - state.weight, p[t], w[t]) } else { 0 }))
        } else if s > 0 {
            state.profit.checked_sub(mul_div_ceil(state.weight - capacity, p[s - 1], w[s - 1])).map(round)
        } else {
            None
        }
    };
    let (mut stopped, mut capped) = (false, false);
    let mut card_bound: Option<u64> = None;
    let mut steps = 0usize;
    while !states.is_empty() && (s > 0 || t < m) {
        if card_bound.is_none() && states.len() >= hard_states {
            if let Some((value, chosen)) = best_exchange(&p, &w, &by_weight, b, (break_weight, break_profit), capacity)
            {
                if value > best {
                    (best, best_node, incumbent) = (value, None, chosen);
                    improved(best);
                }
            }
            let break_copies = copies[..b].iter().sum();
            let now = Instant::now();
            let exact_until = now + deadline.saturating_duration_since(now) / 4;
            let (bound, found) =
                cardinality_bound(&p, &w, &copies, capacity, break_copies, best - base_profit, Some(exact_until));
            card_bound = Some(round(base_profit + bound));
            if let Some((value, chosen)) = found {
                if base_profit + value > best {
                    (best, best_node, incumbent) = (base_profit + value, None, chosen);
                    improved(best);
                }
            }
            states.retain(|state| bound_of(state, s, t).is_some_and(|u| u > best));
        }
        if card_bound.is_some_and(|u| u <= best) {
            states.clear();
            break;
        }
        let full = trail.len() >= max_states && {
            compact(&mut trail, &mut states, &mut best_node);
            2 * trail.len() >= max_states
        };
        capped = full || states.len() >= max_states;
        if capped || Instant::now() >= deadline || cancelled() {
            stopped = true;
            break;
        }
        if t < m {
            states = expand(&states, w[t], p[t], true, t as u32, &mut trail);
            t += 1;
        }
        if s > 0 {
            s -= 1;
            states = expand(&states, w[s], p[s], false, s as u32, &mut trail);
        }
        let before = best;
        for state in &states {
            if state.weight <= capacity && state.profit > best {
                best = state.profit;
                best_node = Some(state.node);
            }
        }
        steps += 1;
        if card_bound.is_some() && steps.is_multiple_of(pairing_steps) {
            if let Some((value, parent, item)) = best_pairing(&states, &p, &w, &by_weight, (s, t), capacity) {
                if value > best {
                    trail.push((parent, item as u32));
                    best = value;
                    best_node = Some((trail.len() - 1) as u32);
                }
            }
        }
        if best > before {
            improved(best);
        }
        states.retain(|state| bound_of(state, s, t).is_some_and(|u| u > best));
    }
    let bound = if stopped { states.iter().filter_map(|st| bound_of(st, s, t)).fold(best, u64::max) } else { best };
    let bound = card_bound.map_or(bound, |u| bound.min(u.max(best)));
    let chosen = match best_node {
        None => incumbent,
        Some(mut node) => {
            let mut chosen = vec![false; m];
            chosen[..b].iter_mut().for_each(|c| *c = true);
            while node != 0 {
                let (parent, item) = trail[node as usize];
                chosen[item as usize] = !chosen[item as usize];
                node = parent;
            }
            chosen
        }
    };
    finish(&chosen, best, bound.min(dantzig), capped, &mut x)
}

/// Items of one stretch of the ratio order by ascending weight, with the least profitable one
/// from each position on and the most profitable one up to each: what an exchange or a pairing
/// looks up ("the cheapest item of weight at least x", "the best item of weight at most x").
struct ByWeight {
    items: Vec<usize>,
    least_from: Vec<(u64, usize)>,
    most_upto: Vec<(u64, usize)>,
}

impl ByWeight {
    /// The items of `by_weight` (all items, lightest first) that `keep` accepts.
    fn new(by_weight: &[usize], p: &[u64], keep: impl Fn(usize) -> bool) -> Self {
        let items: Vec<usize> = by_weight.iter().copied().filter(|&i| keep(i)).collect();
        let mut least_from = vec![(u64::MAX, usize::MAX); items.len() + 1];
        for k in (0..items.len()).rev() {
            least_from[k] = least_from[k + 1].min((p[items[k]], items[k]));
        }
        let mut most_upto = vec![(0, usize::MAX); items.len() + 1];
        for k in 0..items.len() {
            most_upto[k + 1] = most_upto[k].max((p[items[k]], items[k]));
        }
        ByWeight { items, least_from, most_upto }
    }

    /// The least profitable item weighing at least `weight`, with its profit.
    fn cheapest_at_least(&self, w: &[u64], weight: u64) -> Option<(u64, usize)> {
        let (profit, item) = self.least_from[self.items.partition_point(|&i| w[i] < weight)];
        (item != usize::MAX).then_some((profit, item))
    }

    /// The most profitable item weighing at most `weight`, with its profit.
    fn best_at_most(&self, w: &[u64], weight: u64) -> Option<(u64, usize)> {
        let (profit, item) = self.most_upto[self.items.partition_point(|&i| w[i] <= weight)];
        (item != usize::MAX).then_some((profit, item))
    }
}

/// The best solution one exchange away from the break solution (items `..b` of the ratio order,
/// `(weight, profit)`): item j >= b in and the least profitable item i < b heavy enough to make
/// room out (or none), the capacity then filled by ratio; `None` when no exchange gains.
fn best_exchange(
    p: &[u64],
    w: &[u64],
    by_weight: &[usize],
    b: usize,
    (break_weight, break_profit): (u64, u64),
    capacity: u64,
) -> Option<(u64, Vec<bool>)> {
    let inside = ByWeight::new(by_weight, p, |i| i < b);
    let free = capacity - break_weight;
    let mut best: Option<(u64, usize, Option<usize>)> = None;
    for j in b..p.len() {
        let (loss, out) = if w[j] <= free {
            (0, None)
        } else {
            match inside.cheapest_at_least(w, w[j] - free) {
                Some((profit, i)) => (profit, Some(i)),
                None => continue,
            }
        };
        if p[j] > loss && best.is_none_or(|(gain, _, _)| p[j] - loss > gain) {
            best = Some((p[j] - loss, j, out));
        }
    }
    let (gain, j, out) = best?;
    let mut chosen: Vec<bool> = (0..p.len()).map(|k| k < b || k == j).collect();
    let (mut load, mut value) = (break_weight + w[j], break_profit + gain);
    if let Some(i) = out {
        chosen[i] = false;
        load -= w[i];
    }
    for k in b..p.len() {
        if !chosen[k] && load + w[k] <= capacity {
            chosen[k] = true;
            load += w[k];
            value += p[k];
        }
    }
    Some((value, chosen))
}

/// The best solution one item away from an open state (combo's pairing of states with the items
/// outside the core): a state that fits takes the most profitable item after the core that fits
/// its free capacity; one that does not drops the least profitable item before the core that
/// makes it fit. Returns the value, the state's trail node and the item toggled.
fn best_pairing(
    states: &[State],
    p: &[u64],
    w: &[u64],
    by_weight: &[usize],
    (s, t): (usize, usize),
    capacity: u64,
) -> Option<(u64, u32, usize)> {
    let after = ByWeight::new(by_weight, p, |j| j >= t);
    let before = ByWeight::new(by_weight, p, |i| i < s);
    let mut best: Option<(u64, u32, usize)> = None;
    for state in states {
        let found = if state.weight <= capacity {
            after.best_at_most(w, capacity - state.weight).map(|(profit, j)| (state.profit + profit, j))
        } else {
            before
                .cheapest_at_least(w, state.weight - capacity)
                .and_then(|(profit, i)| Some((state.profit.checked_sub(profit)?, i)))
        };
        if let Some((value, item)) = found {
            if best.is_none_or(|(top, _, _)| value > top) {
                best = Some((value, state.node, item));
            }
        }
    }
    best
}

/// An upper bound on every solution of `max sum p_i x_i, sum w_i x_i <= capacity` (bundle i holds
/// `copies[i]` items), by the surrogated cardinality constraint on each side of `k`, the break
/// solution's item count (see the module doc); `incumbent` rules out counts that cannot beat it.
/// With `exact_until`, the multiplier search stops there and each side's surrogate problem is
/// solved exactly until then; the best of their selections that fits comes back with the bound.
fn cardinality_bound(
    p: &[u64],
    w: &[u64],
    copies: &[u64],
    capacity: u64,
    k: u64,
    incumbent: u64,
    exact_until: Option<Instant>,
) -> (u64, Option<(u64, Vec<bool>)>) {
    // The most items any solution holds: the lightest copies first.
    let mut by_weight: Vec<usize> = (0..p.len()).collect();
    by_weight
        .sort_by(|&a, &b| (u128::from(w[a]) * u128::from(copies[b])).cmp(&(u128::from(w[b]) * u128::from(copies[a]))));
    let (mut most, mut load) = (0u64, 0u64);
    for &i in &by_weight {
        let each = w[i] / copies[i];
        let fit = copies[i].min((capacity - load) / each.max(1));
        most += fit;
        load += fit * each;
        if fit < copies[i] {
            break;
        }
    }
    // The fewest items that beat the incumbent: the most profitable copies first.
    let mut by_profit = by_weight;
    by_profit
        .sort_by(|&a, &b| (u128::from(p[b]) * u128::from(copies[a])).cmp(&(u128::from(p[a]) * u128::from(copies[b]))));
    let (mut fewest, mut gained) = (0u64, 0u64);
    for &i in &by_profit {
        let each = p[i] / copies[i];
        let need = (incumbent - gained) / each.max(1) + 1;
        if need <= copies[i] {
            fewest += need;
            gained = incumbent + 1;
            break;
        }
        fewest += copies[i];
        gained += p[i];
    }
    if gained <= incumbent {
        // Not even every item beats it.
        return (incumbent, None);
    }
    let at_most = if fewest <= k {
        surrogate_side(p, w, copies, capacity, k, true, exact_until).map(|(u, s)| (u, s, k))
    } else {
        None
    };
    let at_least = if most > k {
        surrogate_side(p, w, copies, capacity, k + 1, false, exact_until).map(|(u, s)| (u, s, k + 1))
    } else {
        None
    };
    let mut found: Option<(u64, Vec<bool>)> = None;
    let mut bound = incumbent;
    for (lp, sigma, count) in at_most.into_iter().chain(at_least) {
        // A side whose Dantzig bound already meets the incumbent needs no exact solve.
        let side = match exact_until {
            Some(until) if lp > incumbent => {
                let Some((exact, chosen)) = surrogate_exact(p, w, copies, capacity, count, sigma, until) else {
                    continue;
                };
                let (weight, value) =
                    (0..p.len()).filter(|&i| chosen[i]).fold((0, 0), |(a, b), i| (a + w[i], b + p[i]));
                if weight <= capacity && found.as_ref().is_none_or(|f| value > f.0) {
                    found = Some((value, chosen));
                }
                lp.min(exact)
            }
            _ => lp,
        };
        bound = bound.max(side);
    }
    (bound, found)
}

/// The surrogate constraint `sum (w_i + s n_i) x_i <= capacity + s count` with every bundle of
/// surrogate weight <= 0 taken whole (it only adds room): the bundles' surrogate weights, the
/// room left, and the taken bundles' profit and copies.
struct Surrogate {
    weights: Vec<i128>,
    room: i128,
    taken_profit: u64,
    taken_copies: u64,
}

impl Surrogate {
    fn new(p: &[u64], w: &[u64], copies: &[u64], capacity: u64, count: u64, s: i128) -> Self {
        let weights: Vec<i128> = w.iter().zip(copies).map(|(&wi, &n)| wi as i128 + s * n as i128).collect();
        let mut surrogate =
            Surrogate { weights, room: capacity as i128 + s * count as i128, taken_profit: 0, taken_copies: 0 };
        for i in 0..p.len() {
            if surrogate.weights[i] <= 0 {
                surrogate.room -= surrogate.weights[i];
                surrogate.taken_profit += p[i];
                surrogate.taken_copies += copies[i];
            }
        }
        surrogate
    }
}

/// The surrogate problem of one side solved by the core programme itself until `until` (the
/// surrogate relaxation solved exactly, as combo does): its bound, valid for that side, and its
/// selection; `None` when it has no solution.
fn surrogate_exact(
    p: &[u64],
    w: &[u64],
    copies: &[u64],
    capacity: u64,
    count: u64,
    sigma: i128,
    until: Instant,
) -> Option<(u64, Vec<bool>)> {
    let surrogate = Surrogate::new(p, w, copies, capacity, count, sigma);
    let room = u64::try_from(surrogate.room).ok()?;
    let rest: Vec<usize> = (0..p.len()).filter(|&i| surrogate.weights[i] > 0).collect();
    let (rp, rw): (Vec<u64>, Vec<u64>) = rest.iter().map(|&i| (p[i], surrogate.weights[i] as u64)).collect();
    let limits = Limits { max_states: SURROGATE_STATES, hard_states: usize::MAX, pairing_steps: PAIRING_STEPS };
    let out = solve_within(&rp, &rw, room, until, &|| false, &mut |_| {}, limits);
    let mut chosen: Vec<bool> = surrogate.weights.iter().map(|&wi| wi <= 0).collect();
    for (&i, &on) in rest.iter().zip(&out.x) {
        chosen[i] = on;
    }
    Some((surrogate.taken_profit + out.bound, chosen))
}

/// The least Dantzig bound, and its signed multiplier, over the multipliers s >= 0 tried (by
/// `until`) of `sum (w_i + s n_i) x_i <= capacity + s count` (`at_most`) or
/// `sum (w_i - s n_i) x_i <= capacity - s count`; `None` when some s leaves no fractional
/// solution at all (no solution holds that many items).
fn surrogate_side(
    p: &[u64],
    w: &[u64],
    copies: &[u64],
    capacity: u64,
    count: u64,
    at_most: bool,
    until: Option<Instant>,
) -> Option<(u64, i128)> {
    let top = p.iter().max().copied().unwrap_or(0).max(1) as i128 * w.iter().max().copied().unwrap_or(0).max(1) as i128;
    let (mut low, mut high) = (0i128, top.min(1 << 50));
    let mut least = (u64::MAX, 0);
    let mut order: Vec<usize> = (0..p.len()).collect();
    let sign = if at_most { 1 } else { -1 };
    while low <= high {
        let s = (low + high) / 2;
        let (bound, full) = surrogate_dantzig(p, w, copies, capacity, count, sign * s, &mut order)?;
        if bound < least.0 {
            least = (bound, sign * s);
        }
        // Every multiplier gives a valid bound, so the search may stop at any point.
        if until.is_some_and(|until| Instant::now() >= until) {
            break;
        }
        // More items in the break solution than `count` asks for a larger s on the at-most side
        // and a smaller one on the at-least side.
        if (full >= count) == at_most {
            low = s + 1;
        } else {
            high = s - 1;
        }
    }
    Some(least)
}

/// The Dantzig bound of `sum (w_i + s n_i) x_i <= capacity + s count` (items of weight <= 0 taken
/// whole) and the copies taken whole; `None` when even the fractional problem has no solution.
fn surrogate_dantzig(
    p: &[u64],
    w: &[u64],
    copies: &[u64],
    capacity: u64,
    count: u64,
    s: i128,
    order: &mut [usize],
) -> Option<(u64, u64)> {
    let Surrogate { weights, mut room, taken_profit, taken_copies } = Surrogate::new(p, w, copies, capacity, count, s);
    if room < 0 {
        return None;
    }
    let (mut profit, mut full) = (u128::from(taken_profit), taken_copies);
    order.sort_unstable_by(|&a, &b| {
        let (wa, wb) = (weights[a].max(1) as u128, weights[b].max(1) as u128);
        (u128::from(p[b]) * wa).cmp(&(u128::from(p[a]) * wb))
    });
    for &i in order.iter() {
        let wi = weights[i];
        if wi <= 0 {
            continue;
        }
        if wi <= room {
            room -= wi;
            profit += u128::from(p[i]);
            full += copies[i];
        } else {
            profit += u128::from(p[i]) * room as u128 / wi as u128;
            break;
        }
    }
    Some((u64::try_from(profit).unwrap_or(u64::MAX), full))
}

/// Drops the trail nodes that no open state and not the incumbent `best` reach, renumbering the
/// rest in order (a parent is always older than its children, so it keeps a lower number).
fn compact(trail: &mut Vec<(u32, u32)>, states: &mut [State], best: &mut Option<u32>) {
    const DROPPED: u32 = u32::MAX;
    let mut renumbered = vec![DROPPED; trail.len()];
    renumbered[0] = 0;
    for mut node in states.iter().map(|st| st.node).chain(*best) {
        while renumbered[node as usize] == DROPPED {
            renumbered[node as usize] = 0;
            node = trail[node as usize].0;
        }
    }
    let mut kept = 1u32;
    for k in 1..trail.len() {
        if renumbered[k] != DROPPED {
            let (parent, item) = trail[k];
            trail[kept as usize] = (renumbered[parent as usize], item);
            renumbered[k] = kept;
            kept += 1;
        }
    }
    trail.truncate(kept as usize);
    for state in states.iter_mut() {
        state.node = renumbered[state.node as usize];
    }
    *best = best.map(|node| renumbered[node as usize]);
}

/// Copies of one item type taken together: `items` (instance indices) with their summed profit
/// and weight.
struct Bundle {
    profit: u64,
    weight: u64,
    items: Vec<usize>,
}

/// The items `kept` grouped by (profit, weight), each group split into bundles of 1, 2, 4, ...
/// copies and the remainder; bundles heavier than `capacity` are dropped (any count that needs
/// one is itself too heavy, and the smaller bundles still make every lower count).
fn bundles(kept: &[usize], profits: &[u64], weights: &[u64], capacity: u64) -> Vec<Bundle> {
    let mut by_type = kept.to_vec();
    by_type.sort_by_key(|&i| (profits[i], weights[i], i));
    let mut out = Vec::new();
    for group in by_type.chunk_by(|&a, &b| (profits[a], weights[a]) == (profits[b], weights[b])) {
        let (p, w) = (profits[group[0]], weights[group[0]]);
        let (mut from, mut size) = (0, 1);
        while from < group.len() {
            let take = size.min(group.len() - from);
            let copies = take as u64;
            if w.saturating_mul(copies) <= capacity {
                out.push(Bundle { profit: p * copies, weight: w * copies, items: group[from..from + take].to_vec() });
            }
            from += take;
            size *= 2;
        }
    }
    out
}

/// `states` merged with each state's copy that takes (`add`) or leaves item `item` of weight
/// `weight` and profit `profit`, sorted by weight, without dominated states (a state is dropped
/// when a state no heavier has at least its profit); survivors that toggled get a trail node.
fn expand(states: &[State], weight: u64, profit: u64, add: bool, item: u32, trail: &mut Vec<(u32, u32)>) -> Vec<State> {
    let shifted = |st: &State| -> Option<Candidate> {
        let (weight, profit) = if add {
            (st.weight + weight, st.profit + profit)
        } else {
            (st.weight.checked_sub(weight)?, st.profit.checked_sub(profit)?)
        };
        Some(Candidate { weight, profit, parent: st.node, item: Some(item) })
    };
    let kept = |st: &State| Candidate { weight: st.weight, profit: st.profit, parent: st.node, item: None };
    // Both lists are sorted by weight; removing an item shifts every state by the same amount,
    // so the shifted list stays sorted too.
    let (mut i, mut j) = (0, 0);
    let shifted_list: Vec<Candidate> = states.iter().filter_map(shifted).collect();
    let mut out: Vec<State> = Vec::with_capacity(states.len() + shifted_list.len());
    let mut last: Option<Candidate> = None;
    let mut push = |c: Candidate, out: &mut Vec<State>, trail: &mut Vec<(u32, u32)>| {
        if let Some(prev) = last {
            if c.profit <= prev.profit {
                return;
            }
            if c.weight == prev.weight {
                out.pop();
            }
        }
        let node = match c.item {
            None => c.parent,
            Some(item) => {
                trail.push((c.parent, item));
                (trail.len() - 1) as u32
            }
        };
        out.push(State { weight: c.weight, profit: c.profit, node });
        last = Some(c);
    };
    while i < states.len() || j < shifted_list.len() {
        let take_kept = j >= shifted_list.len()
            || (i < states.len()
                && (states[i].weight, std::cmp::Reverse(states[i].profit))
                    <= (shifted_list[j].weight, std::cmp::Reverse(shifted_list[j].profit)));
        if take_kept {
            push(kept(&states[i]), &mut out, trail);
            i += 1;
        } else {
            push(shifted_list[j], &mut out, trail);
            j += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;
    use std::time::Duration;

    /// The optimum by the textbook table over capacities.
    fn table_optimum(p: &[u64], w: &[u64], c: u64) -> u64 {
        let mut best = vec![0u64; c as usize + 1];
        for i in 0..p.len() {
            for cap in (w[i] as usize..=c as usize).rev() {
                best[cap] = best[cap].max(best[cap - w[i] as usize] + p[i]);
            }
        }
        best[c as usize]
    }

    /// The weight and profit of the selection `x`, re-scored from the items.
    fn packed(p: &[u64], w: &[u64], x: &[bool]) -> (u64, u64) {
        let chosen = |values: &[u64]| values.iter().zip(x).filter(|(_, &on)| on).map(|(v, _)| v).sum::<u64>();
        (chosen(w), chosen(p))
    }

    /// A small instance of Pisinger's class `trial % 6 + 1` (6: subset sum) at range 10, 100 or
    /// 1000, every seventh with zero profits: profits, weights and a capacity.
    fn pisinger_instance(rng: &mut Xoshiro256PlusPlus, trial: usize) -> (Vec<u64>, Vec<u64>, u64) {
        let n = rng.gen_range(1..40);
        let r = [10u64, 100, 1000][trial % 3];
        let mut w = Vec::new();
        let mut p = Vec::new();
        for _ in 0..n {
            let wi = rng.gen_range(1..=r);
            let pi = match trial % 6 + 1 {
                1 => rng.gen_range(1..=r),
                2 => (wi as i64 + rng.gen_range(-(r as i64) / 10..=(r as i64) / 10)).max(1) as u64,
                3 => wi + r / 10,
                4 => wi.saturating_sub(r / 10).max(1),
                5 => wi + r / 10 + rng.gen_range(0..=r / 500 + 1),
                _ => wi,
            };
            w.push(wi);
            p.push(if trial.is_multiple_of(7) { 0 } else { pi });
        }
        let c = rng.gen_range(0..=w.iter().sum::<u64>());
        (p, w, c)
    }

    #[test]
    fn matches_the_table_on_every_pisinger_class() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        let far = Instant::now() + Duration::from_secs(60);
        for trial in 0..300 {
            let (p, w, c) = pisinger_instance(&mut rng, trial);
            let out = solve(&p, &w, c, far, &|| false, &mut |_| {});
            let (weight, value) = packed(&p, &w, &out.x);
            assert!(weight <= c, "trial {trial}: overweight");
            assert_eq!(value, out.value, "trial {trial}: value");
            assert_eq!(value, table_optimum(&p, &w, c), "trial {trial} class {}", trial % 6 + 1);
            assert!(out.optimal && out.bound == value, "trial {trial}: proven");
        }
    }

    #[test]
    fn combo_steps_from_the_first_state_keep_every_optimum() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(21);
        let far = Instant::now() + Duration::from_secs(60);
        // Every core step pairs the states too, so the pairings' selections are rebuilt here.
        let limits = Limits { max_states: MAX_STATES, hard_states: 1, pairing_steps: 1 };
        for trial in 0..300 {
            let (p, w, c) = pisinger_instance(&mut rng, trial);
            let out = solve_within(&p, &w, c, far, &|| false, &mut |_| {}, limits);
            let (weight, value) = packed(&p, &w, &out.x);
            assert!(weight <= c && value == out.value, "trial {trial}: selection");
            assert_eq!(value, table_optimum(&p, &w, c), "trial {trial} class {}", trial % 6 + 1);
            assert!(out.optimal && out.bound == value, "trial {trial}: proven");
        }
    }

    #[test]
    fn the_cardinality_bound_holds_for_every_count_and_is_tight_on_strongly_correlated_items() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(23);
        for trial in 0..300 {
            let (p, w, c) = pisinger_instance(&mut rng, trial);
            let kept: Vec<usize> = (0..p.len()).filter(|&i| p[i] > 0 && w[i] <= c).collect();
            let (kp, kw): (Vec<u64>, Vec<u64>) = kept.iter().map(|&i| (p[i], w[i])).unzip();
            let optimum = table_optimum(&p, &w, c);
            let far = Instant::now() + Duration::from_secs(60);
            for k in 0..=kp.len() as u64 {
                let below = rng.gen_range(0..=optimum);
                let (bound, _) = cardinality_bound(&kp, &kw, &vec![1; kp.len()], c, k, below, None);
                assert!(bound >= optimum, "trial {trial}, k {k}: {bound} < {optimum}");
                // With each side's surrogate problem solved exactly: no looser, still valid, and
                // a selection it offers fits and is worth what it says.
                let (exact, found) = cardinality_bound(&kp, &kw, &vec![1; kp.len()], c, k, below, Some(far));
                assert!(optimum <= exact && exact <= bound, "trial {trial}, k {k}: {optimum} <= {exact} <= {bound}");
                if let Some((value, chosen)) = found {
                    let (weight, worth) = packed(&kp, &kw, &chosen);
                    assert!(weight <= c && worth == value && value <= optimum, "trial {trial}, k {k}");
                }
            }
        }
        // p = w + R/10 at a range wide against the item count: an exact fill with the most items
        // that fit is likely, and then the bound is the optimum while Dantzig's is not.
        let (mut tight, mut dantzig_tight) = (0, 0);
        for _ in 0..100 {
            let w: Vec<u64> = (0..30).map(|_| rng.gen_range(1..=1000)).collect();
            let p: Vec<u64> = w.iter().map(|&w| w + 100).collect();
            let c = w.iter().sum::<u64>() / 2;
            let optimum = table_optimum(&p, &w, c);
            let mut order: Vec<usize> = (0..30).collect();
            order.sort_by_key(|&i| w[i]);
            let (mut load, mut k, mut profit) = (0, 0, 0);
            while load + w[order[k]] <= c {
                (load, profit) = (load + w[order[k]], profit + p[order[k]]);
                k += 1;
            }
            let dantzig = profit + (c - load) * p[order[k]] / w[order[k]];
            let (bound, _) = cardinality_bound(&p, &w, &[1; 30], c, k as u64, 0, None);
            assert!(optimum <= bound && bound <= dantzig, "{optimum} <= {bound} <= {dantzig}");
            tight += usize::from(bound == optimum);
            dantzig_tight += usize::from(dantzig == optimum);
        }
        assert!(tight > 50 && dantzig_tight < 10, "tight {tight} of 100, Dantzig tight {dantzig_tight}");
    }

    #[test]
    fn the_best_exchange_is_a_packing_worth_what_it_says() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(29);
        let mut gained = 0;
        for _ in 0..200 {
            let n = rng.gen_range(2..40);
            let w: Vec<u64> = (0..n).map(|_| rng.gen_range(1..=1000)).collect();
            let p: Vec<u64> = w.iter().map(|&w| w + 100).collect();
            // By ratio, best first: lightest first when p = w + 100.
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by_key(|&i| w[i]);
            let (p, w): (Vec<u64>, Vec<u64>) = order.iter().map(|&i| (p[i], w[i])).unzip();
            let c = rng.gen_range(w[0]..w.iter().sum::<u64>());
            let b = (0..n).take_while(|&k| w[..=k].iter().sum::<u64>() <= c).count();
            let (load, profit) = (w[..b].iter().sum::<u64>(), p[..b].iter().sum::<u64>());
            let by_weight: Vec<usize> = (0..n).collect();
            if let Some((value, chosen)) = best_exchange(&p, &w, &by_weight, b, (load, profit), c) {
                let (weight, packed_value) = packed(&p, &w, &chosen);
                assert!(
                    weight <= c && packed_value == value && value > profit,
                    "{weight} <= {c}, {packed_value} = {value}"
                );
                assert!(value <= table_optimum(&p, &w, c));
                gained += 1;
            }
        }
        assert!(gained > 100, "an exchange gained on {gained} of 200");
    }

    #[test]
    fn bundles_make_every_count_of_copies_and_drop_only_what_cannot_fit() {
        for copies in 1..70usize {
            let kept: Vec<usize> = (0..copies).collect();
            let (profits, weights) = (vec![3u64; copies], vec![2u64; copies]);
            for capacity in [2 * copies as u64, 9] {
                let made = bundles(&kept, &profits, &weights, capacity);
                let sizes: Vec<usize> = made.iter().map(|b| b.items.len()).collect();
                assert!(made.iter().all(|b| b.weight <= capacity && b.profit == 3 * b.items.len() as u64));
                // Every count that fits is a sum of distinct bundles.
                let mut reach = vec![false; copies + 1];
                reach[0] = true;
                for &size in &sizes {
                    for k in (size..=copies).rev() {
                        reach[k] |= reach[k - size];
                    }
                }
                let fits = copies.min((capacity / 2) as usize);
                assert!(reach[..=fits].iter().all(|&r| r), "{copies} copies, capacity {capacity}: {sizes:?}");
                let mut items: Vec<usize> = made.iter().flat_map(|b| b.items.clone()).collect();
                items.sort_unstable();
                items.dedup();
                assert_eq!(items.len(), sizes.iter().sum::<usize>(), "an item in two bundles");
            }
        }
    }

    #[test]
    fn many_copies_of_few_item_types_reach_the_table_optimum() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(13);
        let far = Instant::now() + Duration::from_secs(60);
        for trial in 0..100 {
            // Spanner-like: a few types, each item a copy of one of them.
            let types: Vec<(u64, u64)> =
                (0..rng.gen_range(1..5)).map(|_| (rng.gen_range(1..60), rng.gen_range(1..40))).collect();
            let n = rng.gen_range(1..120);
            let (p, w): (Vec<u64>, Vec<u64>) = (0..n).map(|_| types[rng.gen_range(0..types.len())]).unzip();
            let c = rng.gen_range(0..=w.iter().sum::<u64>());
            let out = solve(&p, &w, c, far, &|| false, &mut |_| {});
            let (weight, value) = packed(&p, &w, &out.x);
            assert!(weight <= c, "trial {trial}: overweight");
            assert_eq!(value, out.value, "trial {trial}: value");
            assert_eq!(value, table_optimum(&p, &w, c), "trial {trial}");
            assert!(out.optimal && out.bound == value, "trial {trial}: proven");
        }
    }

    #[test]
    fn a_compacted_trail_rebuilds_the_same_optima() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(17);
        let far = Instant::now() + Duration::from_secs(60);
        let (mut proven, mut stopped) = (0, 0);
        for trial in 0..150 {
            let n = rng.gen_range(20..60);
            let w: Vec<u64> = (0..n).map(|_| rng.gen_range(1..=1000)).collect();
            // Strongly correlated, for long state lists.
            let p: Vec<u64> = w.iter().map(|&w| w + 100).collect();
            let c = w.iter().sum::<u64>() / 2;
            let limits = Limits { max_states: 256, hard_states: HARD_STATES, pairing_steps: PAIRING_STEPS };
            let out = solve_within(&p, &w, c, far, &|| false, &mut |_| {}, limits);
            let (weight, value) = packed(&p, &w, &out.x);
            let optimum = table_optimum(&p, &w, c);
            assert!(weight <= c && value == out.value, "trial {trial}: selection");
            assert!(
                out.value <= optimum && optimum <= out.bound,
                "trial {trial}: {} <= {optimum} <= {}",
                out.value,
                out.bound
            );
            // The deadline is far: a run that did not prove its optimum stopped on the cap.
            assert_eq!(out.capped, !out.optimal, "trial {trial}: capped");
            if out.optimal {
                assert_eq!(out.value, optimum, "trial {trial}");
                proven += 1;
            } else {
                stopped += 1;
            }
        }
        assert!(proven > 0 && stopped > 0, "proven {proven}, stopped {stopped}: the cap should bind on some");
    }

    #[test]
    fn a_past_deadline_keeps_a_valid_bound() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
        let w: Vec<u64> = (0..200).map(|_| rng.gen_range(1..=1000)).collect();
        let p: Vec<u64> = w.iter().map(|&w| w + 100).collect();
        let c = w.iter().sum::<u64>() / 2;
        let out = solve(&p, &w, c, Instant::now(), &|| false, &mut |_| {});
        let optimum = table_optimum(&p, &w, c);
        assert!(out.value <= optimum && optimum <= out.bound, "{} <= {optimum} <= {}", out.value, out.bound);
        assert!(!out.capped, "the deadline stopped it, not the state cap");
    }
}
