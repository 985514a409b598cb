//! The reference an inventory policy is judged against: the echelon base-stock policy (order
//! up to z_i on the echelon inventory position, as or-gym's `base_stock_action` describes it)
//! with levels optimized on tuning episodes by a pattern search over integer z (Hooke-Jeeves:
//! steps 64, 32, ..., 1 along each stage while the mean return improves).

use super::inventory::{Chain, InventoryConfig, InventoryVecEnv};
use crate::drl::env::VecEnv;

/// The base-stock order of each stage: z_i minus the echelon position sum_{j <= i} (on hand +
/// in transit - last backlog), at least 0, at most the capacity and the supplier's stock.
pub fn base_stock_action(config: &InventoryConfig, chain: &Chain, levels: &[f64]) -> Vec<f32> {
    let m = config.stages();
    let mut position = 0.0;
    (0..m)
        .map(|i| {
            position += chain.on_hand[i] + chain.pipeline[i] - chain.backlog[i];
            let supplier = if i + 1 < m { chain.on_hand[i + 1] } else { f64::INFINITY };
            (levels[i] - position).max(0.0).min(f64::from(config.capacity[i])).min(supplier) as f32
        })
        .collect()
}

/// Orders from the batch, its observations and their width: one action row per env, flat.
pub type InventoryActor<'a> = dyn FnMut(&InventoryVecEnv, &[f32], usize) -> Vec<f32> + 'a;

/// Per-episode returns of `act` on `episodes` episodes (env i of a batch reset with `seed`).
pub fn rollout(config: &InventoryConfig, episodes: usize, seed: u64, act: &mut InventoryActor<'_>) -> Vec<f64> {
    let mut env = InventoryVecEnv::new(config.clone(), episodes);
    let mut obs = env.reset(seed);
    let dim = env.observation_dim();
    let mut returns = vec![0.0f64; episodes];
    for _ in 0..config.periods {
        let actions = act(&env, &obs, dim);
        let step = env.step(&actions);
        for (r, &x) in returns.iter_mut().zip(&step.rewards) {
            *r += f64::from(x);
        }
        obs = step.observations;
    }
    returns
}

/// The mean return of base-stock levels on the tuning episodes.
pub fn base_stock_mean(config: &InventoryConfig, levels: &[f64], episodes: usize, seed: u64) -> f64 {
    let returns = rollout(config, episodes, seed, &mut |env, _, _| {
        (0..env.num_envs()).flat_map(|i| base_stock_action(config, env.episode(i), levels)).collect()
    });
    returns.iter().sum::<f64>() / episodes as f64
}

/// The best base-stock levels found on `episodes` tuning episodes from `seed` and their mean
/// return. Starts from the mean demand over each echelon's cumulative lead time plus one.
pub fn best_base_stock(config: &InventoryConfig, episodes: usize, seed: u64) -> (Vec<f64>, f64) {
    let m = config.stages();
    let mut levels: Vec<f64> = (0..m)
        .map(|i| (config.mean_demand * config.lead_time[..=i].iter().map(|&l| (l + 1) as f64).sum::<f64>()).round())
        .collect();
    let mut best = base_stock_mean(config, &levels, episodes, seed);
    let mut step = 64.0;
    while step >= 1.0 {
        let mut improved = true;
        while improved {
            improved = false;
            for i in 0..m {
                for direction in [1.0, -1.0] {
                    let mut trial = levels.clone();
                    trial[i] = (trial[i] + direction * step).max(0.0);
                    let value = base_stock_mean(config, &trial, episodes, seed);
                    if value > best + 1e-9 {
                        (levels, best, improved) = (trial, value, true);
                    }
                }
            }
        }
        step /= 2.0;
    }
    (levels, best)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The base-stock order fills the echelon gap within capacity and the supplier's stock, and
    /// the pattern search never returns levels worse than its start.
    #[test]
    fn base_stock_orders_and_search() {
        let config = InventoryConfig { periods: 10, ..Default::default() };
        let env = InventoryVecEnv::new(config.clone(), 1);
        let chain = env.episode(0);
        // Positions 100, 200, 400; levels 150, 200, 900: orders 50, 0, min(500, 80 capacity).
        assert_eq!(base_stock_action(&config, chain, &[150.0, 200.0, 900.0]), vec![50.0, 0.0, 80.0]);
        // Order of stage 0 is capped by stage 1's stock (100) and capacity (100).
        assert_eq!(base_stock_action(&config, chain, &[500.0, 0.0, 0.0])[0], 100.0);
        let start: Vec<f64> = vec![20.0 * 4.0, 20.0 * 10.0, 20.0 * 21.0];
        let (levels, best) = best_base_stock(&config, 16, 3);
        assert!(best >= base_stock_mean(&config, &start, 16, 3) - 1e-9, "{levels:?}");
        assert!((best - base_stock_mean(&config, &levels, 16, 3)).abs() < 1e-9, "the reported mean is the levels'");
    }
}
