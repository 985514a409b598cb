//! The references a bin-packing policy is judged against: the sum-of-squares heuristic (Csirik,
//! Johnson, Kenyon, Orlin, Shor and Weber 2006, "On the sum-of-squares algorithm for bin
//! packing"), best fit, and the offline lower bound on waste (the items' total rounded up to
//! whole bins). All read the same observation row a policy reads.

use super::env::{BinPackingConfig, BinPackingVecEnv};
use crate::drl::env::VecEnv;

/// The bin counts per level and the item's size in an observation row.
fn levels_and_item<'a>(config: &BinPackingConfig, row: &'a [f32]) -> (&'a [f32], usize) {
    let cap = config.bin_capacity as usize;
    let state = if config.mask { &row[2 * cap..] } else { row };
    (&state[..cap], state[cap] as usize)
}

/// 1 for each level the item can go to (0: a new bin), else 0, from either observation kind.
pub fn allowed_levels(config: &BinPackingConfig, row: &[f32]) -> Vec<f32> {
    let cap = config.bin_capacity as usize;
    let (levels, size) = levels_and_item(config, row);
    (0..cap).map(|h| f32::from(u8::from(h + size <= cap && (h == 0 || levels[h] > 0.5)))).collect()
}

/// Sum of squares: the placement that least increases sum_h N(h)^2 over the partly filled
/// levels 1..capacity-1 (full bins leave the sum); ties go to the fuller bin.
pub fn sum_of_squares_action(config: &BinPackingConfig, row: &[f32]) -> f32 {
    let cap = config.bin_capacity as usize;
    let (levels, size) = levels_and_item(config, row);
    let count = |h: usize| if h < cap { f64::from(levels[h]) } else { 0.0 };
    // Moving one bin from level h (0: a new bin) to h + size.
    let delta = |h: usize| {
        let leave = if h == 0 { 0.0 } else { 1.0 - 2.0 * count(h) };
        let arrive = if h + size < cap { 2.0 * count(h + size) + 1.0 } else { 0.0 };
        leave + arrive
    };
    let mut best = (delta(0), 0usize);
    for h in 1..=cap.saturating_sub(size) {
        if levels[h] > 0.5 && delta(h) <= best.0 {
            best = (delta(h), h);
        }
    }
    best.1 as f32
}

/// Best fit: the fullest bin the item fits in, else a new bin.
pub fn best_fit_action(config: &BinPackingConfig, row: &[f32]) -> f32 {
    let cap = config.bin_capacity as usize;
    let (levels, size) = levels_and_item(config, row);
    (1..=cap.saturating_sub(size)).rev().find(|&h| levels[h] > 0.5).unwrap_or(0) as f32
}

/// One finished episode.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Packing {
    pub episode_return: f64,
    /// Free space in the bins opened.
    pub waste: u64,
    /// The offline lower bound: total size rounded up to whole bins, less the total.
    pub lower_bound: u64,
    /// The episode ended on an impossible action.
    pub failed: bool,
}

/// Per-episode outcomes of `act` on `episodes` episodes (env i of a batch reset with `seed`).
pub fn rollout(
    config: &BinPackingConfig,
    episodes: usize,
    seed: u64,
    act: &mut dyn FnMut(&[f32], usize) -> Vec<f32>,
) -> Vec<Packing> {
    let mut env = BinPackingVecEnv::new(config.clone(), episodes);
    let mut obs = env.reset(seed);
    let cap = u64::from(config.bin_capacity);
    let dim = env.observation_dim();
    let mut out = vec![Packing { episode_return: 0.0, waste: 0, lower_bound: 0, failed: false }; episodes];
    let mut finished = vec![false; episodes];
    while finished.iter().any(|f| !f) {
        let actions = act(&obs, dim);
        let before: Vec<(u64, u64)> = (0..episodes).map(|i| (env.episode(i).placed, env.episode(i).bins)).collect();
        let sizes: Vec<u64> = (0..episodes).map(|i| u64::from(env.episode(i).item)).collect();
        let step = env.step(&actions);
        for i in 0..episodes {
            if finished[i] {
                continue;
            }
            out[i].episode_return += f64::from(step.rewards[i]);
            if step.terminated[i] || step.truncated[i] {
                finished[i] = true;
                // The env restarted this one: its totals are the last step's plus that step.
                let failed = step.terminated[i];
                let (placed, bins) = before[i];
                let (placed, bins) = if failed {
                    (placed, bins)
                } else {
                    let opened = u64::from(actions[i] < 0.5);
                    (placed + sizes[i], bins + opened)
                };
                out[i].waste = bins * cap - placed;
                out[i].lower_bound = placed.div_ceil(cap) * cap - placed;
                out[i].failed = failed;
            }
        }
        obs = step.observations;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row of the masked observation for `levels` and an item of `size`.
    fn row(config: &BinPackingConfig, levels: &[u32], size: u32) -> Vec<f32> {
        let cap = config.bin_capacity as usize;
        let mut row = vec![0.0; config.observation_dim()];
        for (h, &n) in levels.iter().enumerate() {
            row[2 * cap + h] = n as f32;
        }
        row[3 * cap] = size as f32;
        row
    }

    #[test]
    fn sum_of_squares_and_best_fit_choose_as_defined() {
        let config = BinPackingConfig {
            bin_capacity: 10,
            item_sizes: vec![1, 2, 3],
            item_probs: vec![0.2, 0.3, 0.5],
            ..Default::default()
        };
        // Two bins at level 3, one at 5; an item of 2.
        let levels = [0, 0, 0, 2, 0, 1, 0, 0, 0, 0];
        let r = row(&config, &levels, 2);
        // Best fit: the fullest that fits is level 5.
        assert_eq!(best_fit_action(&config, &r), 5.0);
        // SS deltas: new bin +1 (N(2) 0 -> 1); 3 -> 5: (1 - 4) + (2 + 1) = 0; 5 -> 7: (1 - 2) + 1 = 0.
        // Ties go to the fuller bin.
        assert_eq!(sum_of_squares_action(&config, &r), 5.0);
        // An item of 5: 3 -> 8 is (1 - 4) + 1 = -2, completing the bin at 5 only -1.
        assert_eq!(sum_of_squares_action(&config, &row(&config, &levels, 5)), 3.0);
        // With one bin at 5 alone, completing it (-1) beats a new bin (+3: N(5) 1 -> 2).
        assert_eq!(sum_of_squares_action(&config, &row(&config, &[0, 0, 0, 0, 0, 1, 0, 0, 0, 0], 5)), 5.0);
        // Nothing fits an item of 8 but a new bin.
        assert_eq!(best_fit_action(&config, &row(&config, &levels, 8)), 0.0);
        assert_eq!(sum_of_squares_action(&config, &row(&config, &levels, 8)), 0.0);
    }

    #[test]
    fn rollout_waste_is_minus_the_return_and_above_the_bound() {
        for id in super::super::env::IDS {
            let config = BinPackingConfig::by_id(id).unwrap();
            let packings = rollout(&config, 8, 3, &mut |obs, dim| {
                obs.chunks(dim).map(|row| sum_of_squares_action(&config, row)).collect()
            });
            for p in packings {
                assert!(!p.failed, "{id}: sum of squares took an impossible action");
                assert_eq!(p.episode_return, -(p.waste as f64), "{id}: return is minus the waste");
                assert!(p.waste >= p.lower_bound, "{id}: waste {} below the bound {}", p.waste, p.lower_bound);
            }
        }
    }
}
