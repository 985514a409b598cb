//! The references a knapsack policy is judged against: the exact optimum by dynamic programming
//! (v0-v2; for v3 the offline optimum over the items the episode shows), the value/weight greedy,
//! and for v3 the best fixed threshold on value/weight.

use super::env::{KnapsackConfig, KnapsackItems, KnapsackVecEnv, Variant};
use crate::drl::env::VecEnv;

/// The exact optimum of an instance and the copies of each item it takes.
pub fn optimum(items: &KnapsackItems, variant: Variant, capacity: u32) -> (u64, Vec<u32>) {
    let n = items.weights.len();
    let cap = capacity as usize;
    if variant == Variant::Unbounded {
        // best[c] = max_i best[c - w_i] + v_i; last[c] remembers the item for the reconstruction.
        let mut best = vec![0u64; cap + 1];
        let mut last = vec![usize::MAX; cap + 1];
        for c in 1..=cap {
            for i in 0..n {
                let w = items.weights[i] as usize;
                if w <= c && best[c - w] + u64::from(items.values[i]) > best[c] {
                    best[c] = best[c - w] + u64::from(items.values[i]);
                    last[c] = i;
                }
            }
        }
        let mut counts = vec![0u32; n];
        let mut c = cap;
        while last[c] != usize::MAX {
            counts[last[c]] += 1;
            c -= items.weights[last[c]] as usize;
        }
        return (best[cap], counts);
    }
    let copies = |i: usize| match variant {
        Variant::Bounded => items.limits.as_ref().map_or(1, |l| l[i]),
        _ => 1,
    };
    // Bounded copies split into powers of two (1, 2, 4, ..., rest) make a 0/1 problem whose
    // choices reach every count 0..=copies.
    let mut pieces = Vec::new();
    for i in 0..n {
        let (mut left, mut size) = (copies(i), 1u32);
        while left > 0 {
            let take = size.min(left);
            pieces.push((i, take));
            left -= take;
            size *= 2;
        }
    }
    let mut best = vec![0u64; cap + 1];
    let mut taken = vec![false; pieces.len() * (cap + 1)];
    for (p, &(i, k)) in pieces.iter().enumerate() {
        let w = (items.weights[i] * k) as usize;
        let v = u64::from(items.values[i] * k);
        for c in (w..=cap).rev() {
            if best[c - w] + v > best[c] {
                best[c] = best[c - w] + v;
                taken[p * (cap + 1) + c] = true;
            }
        }
    }
    let mut counts = vec![0u32; n];
    let mut c = cap;
    for (p, &(i, k)) in pieces.iter().enumerate().rev() {
        if taken[p * (cap + 1) + c] {
            counts[i] += k;
            c -= (items.weights[i] * k) as usize;
        }
    }
    (best[cap], counts)
}

/// The offline optimum of an online episode: a 0/1 knapsack over the items shown, in any order.
pub fn offline_optimum(items: &KnapsackItems, shown: &[usize], capacity: u32) -> u64 {
    let seen = KnapsackItems {
        weights: shown.iter().map(|&i| items.weights[i]).collect(),
        values: shown.iter().map(|&i| items.values[i]).collect(),
        limits: None,
    };
    optimum(&seen, Variant::Binary, capacity).0
}

/// The expected return of the best online policy that knows the instance's item distribution
/// and the clock (Bellman over steps left and load: V_t(l) = sum_i p_i max(V_{t+1}(l),
/// v_i + V_{t+1}(l + w_i) if item i fits)). No online policy does better in expectation; ours see
/// the load but not the clock, as or-gym's observation has no time.
pub fn online_bellman_value(items: &KnapsackItems, capacity: u32, steps: usize) -> f64 {
    let cap = capacity as usize;
    let limits = items.limits.as_deref().unwrap_or(&[]);
    let total: f64 = limits.iter().map(|&l| f64::from(l)).sum();
    let shown: Vec<(usize, f64, f64)> = limits
        .iter()
        .enumerate()
        .filter(|(_, &l)| l > 0)
        .map(|(i, &l)| (items.weights[i] as usize, f64::from(items.values[i]), f64::from(l) / total))
        .collect();
    let mut next = vec![0.0f64; cap + 1];
    for _ in 0..steps {
        let current: Vec<f64> = (0..=cap)
            .map(|load| {
                shown
                    .iter()
                    .map(|&(w, v, p)| {
                        let keep = next[load];
                        let take = if load + w <= cap { v + next[load + w] } else { keep };
                        p * keep.max(take)
                    })
                    .sum()
            })
            .collect();
        next = current;
    }
    next[0]
}

/// The action a policy of the class takes in env i's row: for v0-v2 the allowed item of highest
/// value/weight (ties to the lower index); for v3, accept when the item fits and its value/weight
/// is at least `threshold`.
pub fn greedy_action(config: &KnapsackConfig, row: &[f32], threshold: f64) -> f32 {
    let n = config.items;
    match config.variant {
        Variant::Online => {
            let (fits, weight, value) = (row[1] > 0.5, f64::from(row[6]), f64::from(row[7]));
            f32::from(u8::from(fits && value >= threshold * weight))
        }
        variant => {
            let weights = 2 * n;
            let values = if variant == Variant::Unbounded { 3 * n } else { 3 * n + 1 };
            let mut best = (f64::NEG_INFINITY, 0usize);
            for i in 0..n {
                if row[i] > 0.5 {
                    let ratio = f64::from(row[values + i]) / f64::from(row[weights + i]);
                    if ratio > best.0 {
                        best = (ratio, i);
                    }
                }
            }
            best.1 as f32
        }
    }
}

/// Per-episode returns of `act` on `episodes` episodes (env i of a batch reset with `seed`),
/// with each episode's reference: the DP optimum (v0-v2) or the offline optimum (v3).
pub fn rollout(
    config: &KnapsackConfig,
    episodes: usize,
    seed: u64,
    act: &mut dyn FnMut(&[f32], usize) -> Vec<f32>,
) -> (Vec<f64>, Vec<f64>) {
    let mut env = KnapsackVecEnv::new(config.clone(), episodes);
    env.reset(seed);
    let references: Vec<f64> = (0..episodes)
        .map(|i| {
            let items = env.instance(i);
            match config.variant {
                Variant::Online => offline_optimum(items, &env.shown_sequence(i), config.capacity) as f64,
                variant => optimum(items, variant, config.capacity).0 as f64,
            }
        })
        .collect();
    let dim = env.observation_dim();
    // The same seed resets the same episodes the references were computed on.
    let returns = crate::drl::env::first_episode_returns(&mut env, seed, &mut |_, obs| act(obs, dim));
    (returns, references)
}

/// The threshold on value/weight of the best fixed-threshold online policy on the tuning
/// episodes (`seed`) and its mean return: 0, then a geometric grid (ratio 1.05) from 0.05 up to
/// the class's largest value/weight.
pub fn best_threshold(config: &KnapsackConfig, episodes: usize, seed: u64) -> (f64, f64) {
    let top = f64::from(config.max_item_value.max(1));
    let grid =
        std::iter::once(0.0).chain(std::iter::successors(Some(0.05), |t| Some(t * 1.05)).take_while(|t| *t <= top));
    let mut best = (0.0, f64::NEG_INFINITY);
    for threshold in grid {
        let (returns, _) = rollout(config, episodes, seed, &mut |obs, dim| {
            obs.chunks(dim).map(|row| greedy_action(config, row, threshold)).collect()
        });
        let mean = returns.iter().sum::<f64>() / episodes as f64;
        if mean > best.1 {
            best = (threshold, mean);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute_force(items: &KnapsackItems, limits: &[u32], capacity: u32) -> u64 {
        let n = items.weights.len();
        let mut counts = vec![0u32; n];
        let mut best = 0;
        loop {
            let weight: u32 = counts.iter().zip(&items.weights).map(|(c, w)| c * w).sum();
            if weight <= capacity {
                best = best.max(counts.iter().zip(&items.values).map(|(c, v)| u64::from(c * v)).sum());
            }
            let Some(i) = (0..n).find(|&i| counts[i] < limits[i]) else { break };
            counts[i] += 1;
            counts[..i].fill(0);
        }
        best
    }

    #[test]
    fn the_dp_matches_enumeration_and_its_counts_add_up() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for trial in 0..60 {
            let n = rng.gen_range(1..6);
            let capacity = rng.gen_range(1..40);
            let items = KnapsackItems {
                weights: (0..n).map(|_| rng.gen_range(1..15)).collect(),
                values: (0..n).map(|_| rng.gen_range(0..20)).collect(),
                limits: Some((0..n).map(|_| rng.gen_range(1..4)).collect()),
            };
            for variant in [Variant::Unbounded, Variant::Binary, Variant::Bounded] {
                let limits: Vec<u32> = match variant {
                    Variant::Unbounded => items.weights.iter().map(|w| capacity / w).collect(),
                    Variant::Binary => vec![1; n],
                    _ => items.limits.clone().unwrap(),
                };
                let (value, counts) = optimum(&items, variant, capacity);
                assert_eq!(value, brute_force(&items, &limits, capacity), "trial {trial} {variant:?}");
                let weight: u32 = counts.iter().zip(&items.weights).map(|(c, w)| c * w).sum();
                let total: u64 = counts.iter().zip(&items.values).map(|(c, v)| u64::from(c * v)).sum();
                assert!(
                    weight <= capacity && total == value,
                    "trial {trial} {variant:?}: counts do not give the value"
                );
                assert!(counts.iter().zip(&limits).all(|(c, l)| c <= l), "trial {trial} {variant:?}: over a limit");
            }
        }
    }
}
